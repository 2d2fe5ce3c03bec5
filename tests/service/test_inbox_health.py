"""The per-source inbox is fair and bounded; health and the watchdog's judgement; panel buttons."""

from __future__ import annotations

import asyncio

from controller.service.app import TableService
from controller.service.health import HealthBoard
from controller.service.inbox import Inbox, Item
from tests.service.conftest import HAND, table_config


async def test_a_flooding_source_waits_on_its_own_queue_and_cannot_starve_another():
    inbox = Inbox(size=3)
    for k in range(3):
        assert inbox.try_put(Item("director", {"n": k}))
    assert not inbox.try_put(Item("director", {"n": 99}))  # full: refused, nothing grows
    blocked = asyncio.create_task(inbox.put(Item("director", {"n": 3})))
    await asyncio.sleep(0.01)
    assert not blocked.done()  # the flooding source waits...
    await asyncio.wait_for(inbox.put(Item("camera", {"n": "c"})), 0.1)  # ...the camera does not
    batch = await inbox.get_batch(2)
    assert {item.source for item in batch} == {"director", "camera"}  # round-robin, camera not last
    await asyncio.wait_for(blocked, 0.1)
    rest = await inbox.get_batch(10)
    assert [item.line["n"] for item in rest] == [1, 2, 3]  # order within a source is kept


def test_health_changes_are_reported_once():
    changes = []
    board = HealthBoard(on_change=lambda: changes.append(1))
    part = board.part("camera")
    part.set("ok", "frames")
    part.set("ok", "frames")
    part.set("degraded", "no frame for 10.0 s")
    assert len(changes) == 2
    assert board.as_dict()["camera"]["status"] == "degraded"
    assert board.summary() == "camera=degraded"


async def test_watchdog_withholds_pings_when_the_engine_task_is_dead(tmp_path):
    async with TableService(table_config(tmp_path)) as service:
        assert service.healthy()
        engine = next(t for t in service._tasks if t.get_name() == "engine")
        engine.cancel()
        await asyncio.sleep(0)
        assert not service.healthy()


async def test_new_hand_button_on_the_panel_starts_a_hand(tmp_path):
    cfg = table_config(tmp_path, devices={"panel": "sim"})
    async with TableService(cfg) as service:
        for line in HAND[:-1]:
            await service.inject(line)
        await service.panel.sim.press("new_hand")
        for _ in range(100):
            if service.engine.snapshot()["hand"] == 1:
                break
            await asyncio.sleep(0.05)
        assert service.engine.snapshot()["hand"] == 1
        rows = [r for r in service.log.lines(("in",)) if r.line["type"] == "hand_start"]
        assert rows and rows[-1].source == "panel"
        await service.panel.sim.wait_for(lambda st: st.get("text", "").startswith("HAND 1"))
