"""`smart-table top` misses nothing: what a real table published while top was away (a clean session
on a real Mosquitto, so the broker keeps nothing for it) is asked for with `cmd/replay` and filled in,
each line once and in order, exactly as the table published it (issue 15)."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable

from bench.gen_session import generate
from controller.service.app import TableService
from controller.service.top import TopModel, TopOptions, watch
from tests.service.conftest import table_config


async def until(what: str, condition: Callable[[], bool], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)
    assert condition(), what


def session(hands: int) -> list[dict]:
    return [json.loads(x) for x in generate(hands=hands, seats=6, profile="cool_mule", seed=5)][1:]


async def test_top_replays_what_it_missed_while_disconnected(tmp_path, mosquitto):
    cfg = table_config(tmp_path, broker={"host": "127.0.0.1", "port": mosquitto.port, "protocol": "3.1.1"})
    lines = session(6)
    thirds = len(lines) // 3
    async with TableService(cfg) as service:
        model = TopModel(service.topics)
        model.rulings, model.events = deque(maxlen=10_000), deque(maxlen=10_000)  # keep all, to check
        options = TopOptions("127.0.0.1", mosquitto.port, cfg.table.venue, cfg.table.id)

        def start() -> asyncio.Task[None]:
            return asyncio.create_task(watch(options, model, lambda: None, asyncio.Event()))

        def caught_up() -> bool:
            return model.held("rulings") == service.ruling_no and model.held("events") == service.event_no

        top = start()
        await until("top connected", lambda: model.status == "online")
        for line in lines[:thirds]:
            await service.inject(line)
        await until("the first hands on top", caught_up)
        top.cancel()  # top goes away; its clean session keeps nothing
        await asyncio.gather(top, return_exceptions=True)
        for line in lines[thirds : 2 * thirds]:
            await service.inject(line)
        await until(
            "the table published everything", lambda: service.outbox is not None and len(service.outbox) == 0
        )
        missed = service.ruling_no - model.held("rulings")
        assert missed > 0
        top = start()  # back: the retained state says how far the table is; top asks for the rest
        for line in lines[2 * thirds :]:
            await service.inject(line)
        await until("top caught up", caught_up)
        top.cancel()
        await asyncio.gather(top, return_exceptions=True)
        published = {s: service.replay(s, 0, 500)["lines"] for s in ("rulings", "events")}
    assert model.replays >= 1 and model.lost == 0 and not model.gap()
    assert list(model.rulings) == published["rulings"][: len(model.rulings)]
    assert [r["ruling_seq"] for r in model.rulings] == list(range(1, service.ruling_no + 1))
    assert [e["event_seq"] for e in model.events] == list(range(1, service.event_no + 1))


async def test_each_published_state_names_the_lines_published_before_it(tmp_path, mosquitto):
    """A state names the newest `seq`, `event_seq` and `ruling_seq` (docs/mqtt.md), so a screen that
    starts from it asks for nothing it already has; it named the batch before until issue 13's fold."""
    from tests.service.mqtt_helpers import Recorder

    cfg = table_config(tmp_path, broker={"host": "127.0.0.1", "port": mosquitto.port, "protocol": "3.1.1"})
    async with TableService(cfg) as service, Recorder(mosquitto.port, service.topics.prefix) as rec:
        for line in session(2):
            await service.inject(line)
        await until(
            "the last state",
            lambda: any(json.loads(p).get("ruling_seq") == service.ruling_no for p in rec.payloads("state")),
        )
    newest = {"seq": 0, "event_seq": 0, "ruling_seq": 0}
    states = 0
    for topic, payload, _ in rec.messages:
        if topic.endswith(("/events", "/rulings")):
            doc = json.loads(payload)
            for key in newest:
                newest[key] = max(newest[key], doc.get(key, 0))
        elif topic.endswith("/state"):
            doc = json.loads(payload)
            states += 1
            assert {k: doc[k] for k in newest} == newest, f"state {states}"
    assert states >= 2 and newest["ruling_seq"] == service.ruling_no
