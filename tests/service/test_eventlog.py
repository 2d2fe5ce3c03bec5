"""Event log and outbox: one transaction, ordered, durable; the state row coalesces."""

from __future__ import annotations

import pytest

from controller.mqtt.outbox import Outbox
from controller.service.eventlog import EventLog


def test_lines_come_back_in_order_with_source_and_time(tmp_path):
    log = EventLog(tmp_path / "e.db")
    with log.transaction():
        log.append("in", "camera", {"type": "hand_start"}, 1, t=10.0)
        log.append("out", "engine", {"type": "hand", "number": 1}, 1, t=10.0)
    log.close()
    again = EventLog(tmp_path / "e.db")
    rows = list(again.lines())
    assert [(r.kind, r.source, r.line["type"], r.t) for r in rows] == [
        ("in", "camera", "hand_start", 10.0),
        ("out", "engine", "hand", 10.0),
    ]
    assert again.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_failed_batch_leaves_neither_lines_nor_outbox_rows(tmp_path):
    log = EventLog(tmp_path / "e.db")
    box = Outbox(log.conn)
    with pytest.raises(RuntimeError), log.transaction():
        log.append("in", "sim", {"type": "hand_start"}, 1)
        box.put("t/events", b"x")
        raise RuntimeError("disk full")
    assert log.count("in") == 0 and len(box) == 0


def test_outbox_is_fifo_and_state_keeps_only_the_newest(tmp_path):
    log = EventLog(tmp_path / "e.db")
    box = Outbox(log.conn)
    box.put("t/rulings", b"1")
    box.put("t/state", b"s1", retain=True, key="state")
    box.put("t/rulings", b"2")
    box.put("t/state", b"s2", retain=True, key="state")
    rows = box.peek(10)
    assert [r.payload for r in rows] == [b"1", b"2", b"s2"]
    box.ack([rows[0].id])
    assert [r.payload for r in box.peek(10)] == [b"2", b"s2"]
