"""Durable MQTT outbox: publications wait here (SQLite) until the broker has acknowledged them.

Rows are written in the same transaction as the event-log lines that caused them, and deleted only
after the broker's PUBACK, so a broker outage or a crash of the service delays rulings but never
loses or reorders them (delivery is at least once: a row sent just before a crash is sent again;
each payload carries the log's `seq` so a subscriber can drop the duplicate). A row with a `key`
(the retained `state` document) replaces the unsent row with the same key: only the newest state
matters.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass

SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    t       REAL    NOT NULL,
    topic   TEXT    NOT NULL,
    payload BLOB    NOT NULL,
    qos     INTEGER NOT NULL,
    retain  INTEGER NOT NULL,
    key     TEXT
);
CREATE INDEX IF NOT EXISTS outbox_key ON outbox (key);
"""


@dataclass(frozen=True, slots=True)
class Pending:
    id: int
    topic: str
    payload: bytes
    qos: int
    retain: bool


class Outbox:
    """FIFO of publications on a SQLite connection (shared with the event log for one transaction)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.conn.executescript(SCHEMA)

    def put(
        self, topic: str, payload: bytes, qos: int = 1, retain: bool = False, key: str | None = None
    ) -> None:
        if key is not None:
            self.conn.execute("DELETE FROM outbox WHERE key = ?", (key,))
        self.conn.execute(
            "INSERT INTO outbox (t, topic, payload, qos, retain, key) VALUES (?, ?, ?, ?, ?, ?)",
            (time.time(), topic, payload, qos, int(retain), key),
        )

    def peek(self, limit: int = 64) -> list[Pending]:
        rows = self.conn.execute(
            "SELECT id, topic, payload, qos, retain FROM outbox ORDER BY id LIMIT ?", (limit,)
        ).fetchall()
        return [Pending(i, t, bytes(p), q, bool(r)) for i, t, p, q, r in rows]

    def ack(self, ids: list[int]) -> None:
        if ids:
            self.conn.execute(f"DELETE FROM outbox WHERE id IN ({','.join('?' * len(ids))})", ids)

    def __len__(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM outbox").fetchone()[0])
