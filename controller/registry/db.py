"""One small database layer for SQLite (embedded default) and PostgreSQL (venue-wide registry).

SQL is written once with `?` placeholders and portable types; the PostgreSQL connection rewrites
placeholders to `%s`. Every write happens inside `transaction()`: on any error nothing is written.
SQLite runs in WAL mode with full fsync so a power cut loses at most the transaction in flight;
`BEGIN IMMEDIATE` serialises writers. PostgreSQL writers that must serialise (seat counts, the
draw) lock the event row with `lock_event()`.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from controller.registry.errors import RegistryError

Row = tuple[Any, ...]

# Schema migrations, applied in order, each in its own transaction. `{id}` is an auto-increment key
# (arrival order for registrations). Never edit an applied migration: append a new one.
MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (
        1,
        "members, cards, events, registrations, seat draw, check-ins, penalties",
        [
            """CREATE TABLE members (
            player_id TEXT PRIMARY KEY,
            display_name TEXT NOT NULL,
            date_of_birth TEXT NOT NULL,
            photo_id_checked INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended', 'revoked')),
            status_reason TEXT,
            created_at TEXT NOT NULL)""",
            """CREATE TABLE penalties (
            id {id},
            player_id TEXT NOT NULL REFERENCES members(player_id),
            event_id TEXT,
            given_at TEXT NOT NULL,
            kind TEXT NOT NULL,
            rule TEXT,
            note TEXT)""",
            """CREATE TABLE cards (
            uid TEXT PRIMARY KEY,
            player_id TEXT NOT NULL REFERENCES members(player_id),
            venue TEXT NOT NULL,
            key_id TEXT NOT NULL,
            issued_at TEXT NOT NULL,
            revoked_at TEXT,
            revoke_reason TEXT)""",
            "CREATE INDEX cards_player ON cards (player_id)",
            """CREATE TABLE events (
            event_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            venue TEXT NOT NULL,
            profile TEXT NOT NULL,
            starts_at TEXT NOT NULL,
            min_age INTEGER NOT NULL,
            starting_stack INTEGER,
            seat1_button INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'drawn', 'closed')),
            draw_seed TEXT,
            drawn_at TEXT,
            created_at TEXT NOT NULL)""",
            """CREATE TABLE event_tables (
            event_id TEXT NOT NULL REFERENCES events(event_id),
            table_id TEXT NOT NULL,
            seats INTEGER NOT NULL CHECK (seats BETWEEN 2 AND 12),
            position INTEGER NOT NULL,
            PRIMARY KEY (event_id, table_id))""",
            """CREATE TABLE registrations (
            id {id},
            event_id TEXT NOT NULL REFERENCES events(event_id),
            player_id TEXT NOT NULL REFERENCES members(player_id),
            registered_at TEXT NOT NULL,
            UNIQUE (event_id, player_id))""",
            """CREATE TABLE seat_assignments (
            event_id TEXT NOT NULL REFERENCES events(event_id),
            player_id TEXT NOT NULL REFERENCES members(player_id),
            table_id TEXT NOT NULL,
            seat INTEGER NOT NULL,
            PRIMARY KEY (event_id, player_id),
            UNIQUE (event_id, table_id, seat))""",
            """CREATE TABLE checkins (
            event_id TEXT NOT NULL REFERENCES events(event_id),
            player_id TEXT NOT NULL REFERENCES members(player_id),
            table_id TEXT NOT NULL,
            seat INTEGER NOT NULL,
            card_uid TEXT NOT NULL,
            checked_in_at TEXT NOT NULL,
            PRIMARY KEY (event_id, player_id))""",
            """CREATE TABLE taps (
            id {id},
            at TEXT NOT NULL,
            table_id TEXT,
            event_id TEXT,
            card_uid TEXT NOT NULL,
            player_id TEXT,
            accepted INTEGER NOT NULL,
            reason TEXT)""",
        ],
    ),
    (
        2,
        "seat moves between tables (balancing, breaking); the floor's clock and event-wide places",
        [
            """CREATE TABLE seat_moves (
            id {id},
            event_id TEXT NOT NULL REFERENCES events(event_id),
            player_id TEXT NOT NULL REFERENCES members(player_id),
            from_table TEXT NOT NULL,
            from_seat INTEGER NOT NULL,
            to_table TEXT NOT NULL,
            to_seat INTEGER NOT NULL,
            stack INTEGER,
            rule TEXT,
            moved_at TEXT NOT NULL,
            completed_at TEXT)""",
            "CREATE INDEX seat_moves_player ON seat_moves (event_id, player_id)",
            """CREATE TABLE floor_state (
            event_id TEXT NOT NULL,
            name TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (event_id, name))""",
            """CREATE TABLE floor_finishes (
            event_id TEXT NOT NULL,
            player_id TEXT NOT NULL,
            place INTEGER NOT NULL,
            table_id TEXT,
            start_stack INTEGER,
            eliminated_by TEXT,
            at TEXT NOT NULL,
            PRIMARY KEY (event_id, player_id))""",
        ],
    ),
    (
        3,
        "NTAG 424 DNA cards: the last SUN read counter accepted per card (a read must go above it)",
        ["ALTER TABLE cards ADD COLUMN sun_counter INTEGER"],
    ),
]

_ID = {
    "sqlite": "INTEGER PRIMARY KEY AUTOINCREMENT",
    "postgresql": "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
}


class IntegrityError(RegistryError):
    """A uniqueness or reference constraint refused the write."""

    def __init__(self, message: str):
        super().__init__(message, "conflict")


class Transaction:
    """A cursor-like handle valid inside `Database.transaction()`."""

    def __init__(self, db: Database, conn: Any):
        self._db = db
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self._db._execute(self._conn, sql, params)

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        with self._db._lock:  # one statement and its fetch at a time per connection
            row = self.execute(sql, params).fetchone()
        return tuple(row) if row is not None else None

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._db._lock:
            return [tuple(r) for r in self.execute(sql, params).fetchall()]

    def lock_event(self, event_id: str) -> None:
        """Serialise writers of one event (PostgreSQL row lock; SQLite already holds the write lock)."""
        if self._db.dialect == "postgresql":
            self.execute("SELECT event_id FROM events WHERE event_id = ? FOR UPDATE", (event_id,))


class Database:
    """A connection to the registry database with migrations applied."""

    def __init__(self, dialect: str, conn: Any, where: str, url: str | None = None):
        self.dialect = dialect
        self._conn = conn
        self.where = where
        self._url = url
        self._lock = threading.RLock()

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def open(cls, url: str) -> Database:
        """`sqlite:///path.db`, a plain file path, or `postgresql://user@host:port/db[?options=...]`."""
        if url.startswith(("postgresql://", "postgres://")):
            return cls._open_postgres(url)
        path = url.removeprefix("sqlite://")
        if url.startswith("sqlite://"):
            path = path.removeprefix("/") if path.startswith("//") else path
        if not path:
            raise RegistryError(f"registry URL {url!r}: no database path", "bad_url")
        if path != ":memory:":
            parent = Path(path).expanduser().resolve().parent
            if not parent.is_dir():
                raise RegistryError(f"registry {path}: directory {parent} does not exist", "bad_url")
        try:
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise RegistryError(
                f"registry {path}: cannot open SQLite database: {exc}", "db_unavailable"
            ) from None
        db = cls("sqlite", conn, path)
        db.migrate()
        return db

    @classmethod
    def _open_postgres(cls, url: str) -> Database:
        try:
            import psycopg
        except ImportError:  # the driver is an extra (issue 18): SQLite tables need none
            raise RegistryError(
                f"registry {_redact(url)}: PostgreSQL needs its driver: "
                ".venv/bin/pip install 'smart-table[postgres]' (or use a SQLite file)",
                "db_unavailable",
            ) from None

        try:
            conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
        except psycopg.Error as exc:
            raise RegistryError(
                f"registry {_redact(url)}: cannot connect to PostgreSQL: {str(exc).strip().splitlines()[0]}",
                "db_unavailable",
            ) from None
        db = cls("postgresql", conn, _redact(url), url)
        db.migrate()
        return db

    def _reconnect_if_broken(self) -> None:
        """A PostgreSQL server restart breaks the connection: the statement in flight fails (the
        caller refuses that one operation), the next one reconnects."""
        if self.dialect != "postgresql" or not (self._conn.closed or self._conn.broken):
            return
        import psycopg

        try:
            self._conn = psycopg.connect(self._url, autocommit=True, connect_timeout=5)
        except psycopg.Error as exc:
            raise RegistryError(
                f"registry {self.where}: PostgreSQL unavailable: {str(exc).strip().splitlines()[0]}",
                "db_unavailable",
            ) from None

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- statements --------------------------------------------------------------------------
    def _sql(self, sql: str) -> str:
        if self.dialect == "postgresql":
            return sql.replace("?", "%s")
        return sql

    def _execute(self, conn: Any, sql: str, params: Sequence[Any]) -> Any:
        try:
            if self.dialect == "postgresql":
                cur = conn.cursor()
                cur.execute(self._sql(sql), tuple(params))
                return cur
            return conn.execute(sql, tuple(params))
        except sqlite3.IntegrityError as exc:
            raise IntegrityError(str(exc)) from None
        except Exception as exc:
            if type(exc).__module__.startswith("psycopg") and _is_pg_integrity(exc):
                raise IntegrityError(str(exc).strip().splitlines()[0]) from None
            raise

    @contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """All-or-nothing: commits on normal exit, rolls back on any exception."""
        with self._lock:
            self._reconnect_if_broken()
            if self.dialect == "postgresql":
                with self._conn.transaction():
                    yield Transaction(self, self._conn)
                return
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield Transaction(self, self._conn)
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            else:
                self._conn.execute("COMMIT")

    def read(self) -> Transaction:
        """A handle for single read statements outside a transaction."""
        with self._lock:
            self._reconnect_if_broken()
            return Transaction(self, self._conn)

    # -- migrations --------------------------------------------------------------------------
    def schema_version(self) -> int:
        with self.transaction() as tx:
            if not self._has_version_table(tx):
                return 0
            row = tx.one("SELECT MAX(version) FROM schema_version")
            return int(row[0] or 0) if row else 0

    def _has_version_table(self, tx: Transaction) -> bool:
        if self.dialect == "sqlite":
            return (
                tx.one("SELECT name FROM sqlite_master WHERE type='table' AND name='schema_version'")
                is not None
            )
        return tx.one("SELECT to_regclass('schema_version')")[0] is not None  # type: ignore[index]

    def migrate(self) -> list[int]:
        """Apply pending migrations; returns the versions applied."""
        applied: list[int] = []
        with self.transaction() as tx:
            if self.dialect == "postgresql":
                tx.execute("SELECT pg_advisory_xact_lock(7606)")  # one migrator at a time per database
            tx.execute(
                "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
                "description TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            done = {r[0] for r in tx.all("SELECT version FROM schema_version")}
            for version, description, statements in MIGRATIONS:
                if version in done:
                    continue
                for stmt in statements:
                    tx.execute(stmt.replace("{id}", _ID[self.dialect]))
                tx.execute(
                    "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)",
                    (version, description, _now_text()),
                )
                applied.append(version)
        return applied


def _now_text() -> str:
    from datetime import UTC, datetime

    return datetime.now(UTC).isoformat(timespec="seconds")


def _is_pg_integrity(exc: Exception) -> bool:
    import psycopg

    return isinstance(exc, psycopg.errors.IntegrityError)


def _redact(url: str) -> str:
    """Hide a password in a connection URL before it reaches a message or log."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)
