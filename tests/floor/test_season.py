"""Season standings across the events stored in the registry database, exported as CSV."""

from __future__ import annotations

import csv
import io

from controller.floor.clock import ClockState
from controller.floor.config import parse_floor_config
from controller.floor.results import Finish
from controller.floor.service import FloorService
from controller.floor.store import FloorStore


def test_season_csv_sums_corner_pocket_points_over_stored_events(db_url):
    """corner_pocket:Point System.A: 20 points for 1st, 19 for 2nd ...; D: 10 points for perfect attendance
    (ann and bo played both stored events, cy one)."""
    url = db_url  # SQLite, and PostgreSQL where one is reachable
    cfg = parse_floor_config(
        {"floor": {"profile": "corner_pocket", "event": "week-3"}, "registry": {"url": url}}
    )
    service = FloorService(cfg)
    try:
        for event, order in (("week-1", ["ann", "bo", "cy"]), ("week-2", ["bo", "ann"])):
            FloorStore(service.registry.db, event).save_finishes(
                [Finish(p, i) for i, p in enumerate(order, start=1)]
            )
        rows = list(csv.DictReader(io.StringIO(service.season_csv())))
        assert [(r["player"], r["points"], r["events"]) for r in rows] == [
            ("ann", "49", "2"),
            ("bo", "49", "2"),
            ("cy", "18", "1"),
        ]
        # the clock survives in the same database
        store = FloorStore(service.registry.db, "week-3")
        assert store.load_clock().started_at is None
        store.save_clock(ClockState(100.0, 5.0, None, ((0, 60.0),)))
        store.save_clock(ClockState(100.0, 7.5, 200.0, ((0, 60.0),)))
        assert FloorStore(service.registry.db, "week-3").load_clock() == ClockState(
            100.0, 7.5, 200.0, ((0, 60.0),)
        )
    finally:
        service.registry.close()
