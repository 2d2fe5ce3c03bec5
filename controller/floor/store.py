"""The floor's state in the registry database: the clock and the event-wide places (the edge that
writes; the floor's logic never touches the database)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from controller.floor.clock import ClockState
from controller.floor.results import Finish
from controller.registry.db import Database


class FloorStore:
    def __init__(self, db: Database, event: str) -> None:
        self.db = db
        self.event = event
        db.migrate()

    def load_clock(self) -> ClockState:
        row = self.db.read().one(
            "SELECT value FROM floor_state WHERE event_id = ? AND name = 'clock'", (self.event,)
        )
        if row is None:
            return ClockState()
        d = json.loads(row[0])
        return ClockState(
            d.get("started_at"),
            float(d.get("run_before", 0.0)),
            d.get("running_since"),
            tuple((int(i), float(s)) for i, s in d.get("extensions", [])),
        )

    def save_clock(self, state: ClockState) -> None:
        value = json.dumps(
            {
                "started_at": state.started_at,
                "run_before": state.run_before,
                "running_since": state.running_since,
                "extensions": [list(e) for e in state.extensions],
            }
        )
        with self.db.transaction() as tx:
            tx.execute("DELETE FROM floor_state WHERE event_id = ? AND name = 'clock'", (self.event,))
            tx.execute(
                "INSERT INTO floor_state (event_id, name, value) VALUES (?, 'clock', ?)", (self.event, value)
            )

    def load_finishes(self) -> list[Finish]:
        rows = self.db.read().all(
            "SELECT player_id, place, table_id, start_stack, eliminated_by FROM floor_finishes "
            "WHERE event_id = ? ORDER BY place",
            (self.event,),
        )
        return [Finish(r[0], r[1], r[2], r[3], r[4]) for r in rows]

    def save_finishes(self, finishes: list[Finish]) -> None:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        with self.db.transaction() as tx:
            for f in finishes:
                tx.execute(
                    "DELETE FROM floor_finishes WHERE event_id = ? AND player_id = ?", (self.event, f.player)
                )
                tx.execute(
                    "INSERT INTO floor_finishes (event_id, player_id, place, table_id, start_stack, eliminated_by, at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (self.event, f.player, f.place, f.table, f.start_stack, f.eliminated_by, now),
                )

    def finishes_by_event(self) -> dict[str, list[Finish]]:
        """Every event's places in this database (a season, or a league on one PostgreSQL)."""
        out: dict[str, list[Finish]] = {}
        for r in self.db.read().all(
            "SELECT event_id, player_id, place, table_id, start_stack, eliminated_by FROM floor_finishes "
            "ORDER BY event_id, place"
        ):
            out.setdefault(r[0], []).append(Finish(r[1], r[2], r[3], r[4], r[5]))
        return out
