"""The table's event log: every input and output line with time and source, in SQLite (WAL).

The rules engine is a pure function of its input lines, so the log is the table's memory: at start
the service feeds the logged inputs again and gets the same table back (a power cut mid-hand loses
nothing that was acknowledged). Lines are written in one transaction per batch, before anything is
shown or published, together with the MQTT outbox rows they cause (same database file), so a crash
can never leave a ruling published but not logged, or logged but never published.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    t       REAL    NOT NULL,
    source  TEXT    NOT NULL,
    kind    TEXT    NOT NULL CHECK (kind IN ('in', 'out', 'info')),
    line_no INTEGER,            -- the engine's input line number (inputs), or the input that caused it
    line    TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS events_kind ON events (kind, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- director commands applied, by their `id`: one delivered twice (the broker redelivers a command
-- the table had not acknowledged when it died) is answered again, not applied again
CREATE TABLE IF NOT EXISTS commands (id TEXT PRIMARY KEY, seq INTEGER NOT NULL, outputs TEXT NOT NULL);
"""
# `pub`: the line's number on its MQTT topic, gap-free: `event_seq` for the published inputs and
# check-ins (`events`), `ruling_seq` for the outputs (`rulings`); NULL for a refused input. Added
# after the first tables were installed, so an older log gets the column (and the numbers, at replay).
MIGRATIONS = (("pub", "ALTER TABLE events ADD COLUMN pub INTEGER"),)
PUB_INDEX = "CREATE INDEX IF NOT EXISTS events_pub ON events (kind, pub)"
EVENT_KINDS = ("in", "info")


def dumps(line: dict[str, Any]) -> str:
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class LoggedLine:
    seq: int
    t: float
    source: str
    kind: str
    line_no: int | None
    line: dict[str, Any]
    pub: int | None = None


class EventLog:
    """Append-only log of one table. Use from one thread (the service's event loop)."""

    def __init__(self, path: str | Path, synchronous: str = "full") -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        self.conn.execute("PRAGMA busy_timeout=5000")
        self.conn.executescript(SCHEMA)
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(events)")}
        for column, statement in MIGRATIONS:
            if column not in columns:
                self.conn.execute(statement)
        self.conn.execute(PUB_INDEX)
        self._depth = 0

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One durable commit for everything written inside (nested uses join the outer one)."""
        if self._depth == 0:
            self.conn.execute("BEGIN IMMEDIATE")
        self._depth += 1
        try:
            yield
        except BaseException:
            self._depth -= 1
            # SQLite may have rolled back by itself (SQLITE_FULL): the original error is the news
            if self._depth == 0 and self.conn.in_transaction:
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            raise
        self._depth -= 1
        if self._depth == 0:
            self.conn.execute("COMMIT")

    def append(
        self,
        kind: str,
        source: str,
        line: dict[str, Any],
        line_no: int | None = None,
        t: float | None = None,
        pub: int | None = None,
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO events (t, source, kind, line_no, line, pub) VALUES (?, ?, ?, ?, ?, ?)",
            (time.time() if t is None else t, source, kind, line_no, dumps(line), pub),
        )
        return int(cur.lastrowid or 0)

    def set_pub(self, seq: int, pub: int | None) -> None:
        self.conn.execute("UPDATE events SET pub = ? WHERE seq = ?", (pub, seq))

    def lines(self, kinds: tuple[str, ...] = ("in", "out", "info"), after: int = 0) -> Iterator[LoggedLine]:
        marks = ",".join("?" * len(kinds))
        cur = self.conn.execute(
            f"SELECT seq, t, source, kind, line_no, line, pub FROM events WHERE kind IN ({marks}) "
            "AND seq > ? ORDER BY seq",
            (*kinds, after),
        )
        for seq, t, source, kind, line_no, line, pub in cur:
            yield LoggedLine(seq, t, source, kind, line_no, json.loads(line), pub)

    def published(self, stream: str, since: int, limit: int) -> list[LoggedLine]:
        """The lines numbered after `since` on `events` or `rulings` (what `cmd/replay` answers)."""
        kinds = EVENT_KINDS if stream == "events" else ("out",)
        marks = ",".join("?" * len(kinds))
        rows = self.conn.execute(
            f"SELECT seq, t, source, kind, line_no, line, pub FROM events WHERE kind IN ({marks}) "
            "AND pub > ? ORDER BY pub LIMIT ?",
            (*kinds, since, limit),
        ).fetchall()
        return [LoggedLine(s, t, src, k, n, json.loads(line), p) for s, t, src, k, n, line, p in rows]

    def last_pub(self, stream: str) -> int:
        kinds = EVENT_KINDS if stream == "events" else ("out",)
        marks = ",".join("?" * len(kinds))
        row = self.conn.execute(f"SELECT MAX(pub) FROM events WHERE kind IN ({marks})", kinds).fetchone()
        return int(row[0] or 0)

    def command_outputs(self, ident: str, logged_after: float | None = None) -> list[dict[str, Any]] | None:
        """The outputs of the director command with this id, if it was applied (and, with
        `logged_after`, logged after that time)."""
        if logged_after is None:
            row = self.conn.execute("SELECT outputs FROM commands WHERE id = ?", (ident,)).fetchone()
        else:
            row = self.conn.execute(
                "SELECT c.outputs FROM commands c JOIN events e ON e.seq = c.seq WHERE c.id = ? AND e.t > ?",
                (ident, logged_after),
            ).fetchone()
        return None if row is None else list(json.loads(row[0]))

    def record_command(self, ident: str, seq: int, outputs: list[dict[str, Any]]) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO commands (id, seq, outputs) VALUES (?, ?, ?)",
            (ident, seq, json.dumps(outputs, separators=(",", ":"), ensure_ascii=False)),
        )

    def count(self, kind: str) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM events WHERE kind = ?", (kind,)).fetchone()[0])

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def writable(self, room: int = 16384) -> bool:
        """Does the log take `room` more bytes? (a committed write, removed again: the real path)"""
        try:
            with self.transaction():
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', hex(zeroblob(?)))",
                    (room // 2,),
                )
            with self.transaction():
                self.conn.execute("DELETE FROM meta WHERE key = 'probe'")
        except sqlite3.Error:
            return False
        return True

    def close(self) -> None:
        self.conn.close()
