"""The floor misses nothing a table ruled: a gap in a table's numbered streams is asked for with
`cmd/replay` and filled, so a bust the broker lost is still placed (issue 15)."""

from __future__ import annotations

import json

from controller.floor.config import parse_floor_config
from controller.floor.model import Floor
from controller.mqtt.mosquitto import free_port
from tests.floor.conftest import running_floor, wait_for
from tests.floor.test_model import floor_for, send


def test_a_lost_bust_is_asked_for_and_placed_when_the_replay_answers():
    f = floor_for("cool_mule", entrants=9)
    seats = [{"seat": s, "player": p, "stack": 100} for s, p in ((1, "A"), (2, "B"), (3, "C"))]
    send(
        f,
        "T1",
        "state",
        {"table": {"seats": 6}, "seats": seats, "seq": 10, "event_seq": 6, "ruling_seq": 4},
        1.0,
    )
    bust = {"type": "eliminated", "seat": 2, "rule": "cool_mule:11.c", "seq": 12, "ruling_seq": 5}
    award = {"type": "hand_end_award", "seq": 13, "ruling_seq": 6}
    outs = send(f, "T1", "rulings", award, 2.0)  # ruling 5, the bust, never arrived
    asks = [o for o in outs if o.topic == "smarttable/v1/v/T1/cmd/replay"]
    assert [(o.body["stream"], o.body["since"]) for o in asks] == [("rulings", 4)]
    assert asks[0].body["reply_to"] == "smarttable/v1/v/T1/reply/floor"
    assert not f.standings.finishes  # nothing placed from a stream with a hole in it
    answer = {"ok": True, "command": "replay", "id": asks[0].body["id"], "stream": "rulings", "since": 4}
    send(f, "T1", "reply/floor", {**answer, "lines": [bust, award], "last": 6, "more": False}, 2.5)
    f.tick(3.0)
    assert [(x.player, x.place) for x in f.standings.finishes.values()] == [("B", 9)]
    assert "B is out in 9th place (busted at T1)." in [a["text"] for a in f.alerts]
    assert f.tables["T1"].view.replays == 1 and not f.tables["T1"].view.gap()


def test_a_table_that_never_answers_is_given_up_on_and_the_page_says_so():
    f = floor_for("cool_mule")
    send(
        f, "T1", "state", {"table": {"seats": 6}, "seats": [], "seq": 3, "event_seq": 2, "ruling_seq": 1}, 1.0
    )
    send(
        f, "T1", "rulings", {"type": "misdeal", "reason": "multiple_exposed", "seq": 9, "ruling_seq": 3}, 1.0
    )
    asked = 0
    for second in range(2, 20):
        asked += sum(o.topic.endswith("/cmd/replay") for o in f.tick(float(second)))
    assert asked == 2  # 3 asks in all (the first came with the message), then the gap is skipped
    texts = [a["text"] for a in f.alerts]
    assert "T1: 1 message(s) were lost and the table could not replay them." in texts
    assert any(t.startswith("T1: MISDEAL") for t in texts)  # the held ruling is shown after all


async def test_floor_fills_what_it_was_not_delivered_from_a_real_table(tmp_path, mosquitto):
    from bench.gen_session import generate
    from controller.service.app import TableService
    from tests.service.conftest import table_config

    table = table_config(
        tmp_path,
        table={"venue": "den", "id": "T1"},
        broker={"host": "127.0.0.1", "port": mosquitto.port, "protocol": "3.1.1"},
    )
    cfg = parse_floor_config(
        {
            "floor": {"venue": "den", "event": "E9", "profile": "cool_mule", "tables": ["T1"], "entrants": 6},
            "registry": {"url": f"sqlite:///{tmp_path / 'registry.sqlite3'}"},
            "broker": {"host": "127.0.0.1", "port": mosquitto.port, "client_id": "floor-replay"},
            "web": {"port": free_port()},
            "structure": {"levels": [{"sb": 50, "bb": 100, "minutes": 20}]},
        }
    )
    lines = [json.loads(x) for x in generate(hands=4, seats=6, profile="cool_mule", seed=9)][1:]
    async with TableService(table) as service, running_floor(cfg) as floor:
        f: Floor = floor.floor
        seen: list[int] = []
        ruling, handle = f._ruling, f.handle
        delivered = 0

        def counted(t, line, now):
            seen.append(line["ruling_seq"])
            return ruling(t, line, now)

        def lossy(topic: str, payload: bytes, now: float):
            nonlocal delivered
            if topic.endswith(("/events", "/rulings")):
                delivered += 1
                if delivered % 3 == 0:
                    return []  # the broker lost it
            return handle(topic, payload, now)

        f._ruling, f.handle = counted, lossy  # type: ignore[method-assign]
        await wait_for(lambda: f.tables["T1"].status == "online", what="the table online")
        for line in lines:
            await service.inject(line)
        view = f.tables["T1"].view
        await wait_for(
            lambda: view.held("rulings") == service.ruling_no and view.held("events") == service.event_no,
            timeout=20,
            what="the floor's view of T1 complete",
        )
    assert service.ruling_no > 5 and view.replays >= 1 and view.lost == 0
    assert seen == list(range(seen[0], service.ruling_no + 1)) and seen[0] <= 1
