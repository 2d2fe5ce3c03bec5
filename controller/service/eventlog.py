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
from contextlib import contextmanager
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
"""


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
            if self._depth == 0:
                self.conn.execute("ROLLBACK")
            raise
        self._depth -= 1
        if self._depth == 0:
            self.conn.execute("COMMIT")

    def append(
        self, kind: str, source: str, line: dict[str, Any], line_no: int | None = None, t: float | None = None
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO events (t, source, kind, line_no, line) VALUES (?, ?, ?, ?, ?)",
            (time.time() if t is None else t, source, kind, line_no, dumps(line)),
        )
        return int(cur.lastrowid or 0)

    def lines(self, kinds: tuple[str, ...] = ("in", "out", "info"), after: int = 0) -> Iterator[LoggedLine]:
        marks = ",".join("?" * len(kinds))
        cur = self.conn.execute(
            f"SELECT seq, t, source, kind, line_no, line FROM events WHERE kind IN ({marks}) AND seq > ? "
            "ORDER BY seq",
            (*kinds, after),
        )
        for seq, t, source, kind, line_no, line in cur:
            yield LoggedLine(seq, t, source, kind, line_no, json.loads(line))

    def last_line_no(self) -> int:
        row = self.conn.execute("SELECT MAX(line_no) FROM events WHERE kind = 'in'").fetchone()
        return int(row[0] or 0)

    def count(self, kind: str) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM events WHERE kind = ?", (kind,)).fetchone()[0])

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def close(self) -> None:
        self.conn.close()
