"""Issue 15's reproducers: one MQTT message, one unencodable string or one dead task must not
silence a table, and the engine must never hold a change its log does not. Real Mosquitto."""

from __future__ import annotations

import asyncio
import json

import aiomqtt
import pytest

from controller.service.app import LogRefused, TableService
from controller.service.eventlog import EventLog
from controller.service.inbox import Item
from tests.service.conftest import HAND, table_config
from tests.service.mqtt_helpers import Recorder


def mosquitto_table(tmp_path, mosquitto, **sections):
    broker = {"host": "127.0.0.1", "port": mosquitto.port, **sections.pop("broker", {})}
    return table_config(tmp_path, broker=broker, **sections)


def players(state: dict) -> dict[int, str]:
    return {s["seat"]: s["player"] for s in state["seats"] if s.get("player")}


async def raw_command(port: int, topic: str, payload: bytes) -> None:
    async with aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V311) as c:
        await c.publish(topic, payload, qos=1)


async def still_serving(rec: Recorder, service: TableService, seat: int) -> None:
    """The table answers a command and publishes its ruling and state: the link is alive."""
    reply = await rec.command("seat", {"seat": seat, "player": f"P-{seat}", "stack": 1000})
    assert reply["ok"], reply
    await rec.wait_for(lambda r: any(d.get("player") == f"P-{seat}" for d in r.docs("events")), timeout=5)
    assert rec.payloads("status")[-1] == b"online"


@pytest.mark.parametrize(
    "payload",
    [
        # the message: a wildcard reply topic, no token needed to send it
        b'{"reply_to":"smarttable/v1/testvenue/t1/reply/#"}',
        b'{"reply_to":"smarttable/v1/testvenue/t1/reply/+/x","seat":1,"player":"A"}',
        b'{"reply_to":"elsewhere/topic","seat":1,"player":"A"}',
        b'{"reply_to":"smarttable/v1/testvenue/t1/reply/\\ud800","seat":1,"player":"A"}',
        b'{"id":"\\udc00","seat":1,"player":"A"}',
        b'{"seat":1,"player":"\\ud800"}',
        b'{"seat":1,"player":"A","token":"\xc3\xa9t\xc3\xa9"}',
        b"[" * 2000 + b"]" * 2000,
    ],
    ids=[
        "wildcard",
        "plus",
        "outside",
        "surrogate-topic",
        "surrogate-id",
        "surrogate-player",
        "utf8-token",
        "deep",
    ],
)
async def test_a_hostile_command_is_refused_and_the_link_lives_on(tmp_path, mosquitto, payload):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    token.chmod(0o600)
    cfg = mosquitto_table(tmp_path, mosquitto, commands={"token_file": str(token)})
    async with TableService(cfg) as service, Recorder(mosquitto.port, cfg.prefix) as rec:
        await rec.wait_for(lambda r: b"online" in r.payloads("status"))
        await raw_command(mosquitto.port, f"{cfg.prefix}/cmd/seat", payload)
        # the refusal goes to the table's own reply topic, never to the one the sender named
        await rec.wait_for(lambda r: r.docs("reply"), timeout=5)
        refusal = rec.docs("reply")[-1]
        assert refusal["ok"] is False and refusal["error"] in ("malformed", "invalid", "unauthorised")
        reply = await rec.command("seat", {"seat": 2, "player": "P-2", "token": "s3cret"})
        assert reply["ok"], reply
        assert service.link.crashes == 0 and rec.payloads("status")[-1] == b"online"
        assert players(service.state()) == {2: "P-2"}  # the hostile seat 1 was not applied


async def test_a_lone_surrogate_never_reaches_the_log(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service:
        await service.inject({"type": "seat", "seat": 1, "player": "A", "stack": 500})
        with pytest.raises(ValueError, match=r"player: not valid Unicode"):
            await service.inject({"type": "seat", "seat": 2, "player": "\ud800"})
        assert players(service.state()) == {1: "A"}
    log = EventLog(cfg.event_log_path())
    assert [r.line.get("player") for r in log.lines(("in",))] == ["A"]
    log.close()


async def test_a_line_the_log_refuses_leaves_engine_and_log_agreeing(tmp_path):
    """The issue's second finding: a batch that failed to be written rolled the log back but the
    engine kept the change, so a restart changed the table (`replay_mismatches` 1)."""
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service:
        await service.inject({"type": "seat", "seat": 1, "player": "A", "stack": 500})
        # a line past every edge check (a device bug): SQLite cannot store the lone surrogate
        loop = asyncio.get_running_loop()
        poison = Item("sim", {"type": "seat", "seat": 2, "player": "\ud800"}, future=loop.create_future())
        good = Item(
            "sim", {"type": "seat", "seat": 3, "player": "C", "stack": 700}, future=loop.create_future()
        )
        await service.inbox.put(poison)
        await service.inbox.put(good)
        with pytest.raises(LogRefused, match="event log did not take this line"):
            await poison.future
        assert await good.future == []  # the rest of the batch was applied, line by line
        before = service.state()
        assert players(before) == {1: "A", 3: "C"}
        assert before["health"]["engine"]["rebuilds"] >= 1
        # the engine agrees with the log: seat 2 is free for a real player
        assert await service.inject({"type": "seat", "seat": 2, "player": "B", "stack": 600}) == []
    async with TableService(cfg) as again:
        assert again.replay_mismatches == 0
        assert players(again.state()) == {1: "A", 2: "B", 3: "C"}


async def test_a_dead_link_task_says_offline_restarts_and_loses_nothing(tmp_path, mosquitto):
    cfg = mosquitto_table(tmp_path, mosquitto)
    async with TableService(cfg) as service, Recorder(mosquitto.port, cfg.prefix) as rec:
        await rec.wait_for(lambda r: b"online" in r.payloads("status"))
        # a fault inside the link that is not the network's: paho raises on a wildcard topic
        service.link._replies.put_nowait((f"{cfg.prefix}/reply/#", b"x", None, False))
        await rec.wait_for(lambda r: b"offline" in r.payloads("status"), timeout=5)
        for line in HAND:
            await service.inject(line)  # ruled while the link restarts
        # the broker can hand the recorder `online` before the link's publish returns and it
        # marks itself ok: wait for both, as a director's dashboard would see them settle
        mqtt = service.health.part("mqtt")
        await rec.wait_for(
            lambda r: r.payloads("status")[-1] == b"online" and mqtt.status == "ok", timeout=10
        )
        assert service.link.crashes == 1
        logged = [r.pub for r in service.log.lines(("out",))]
        await rec.wait_for(lambda r: [d["ruling_seq"] for d in r.docs("rulings")] == logged, timeout=10)
        await still_serving(rec, service, 6)
        assert service.healthy()


async def test_a_link_that_keeps_failing_withholds_the_watchdog(tmp_path, mosquitto):
    cfg = mosquitto_table(tmp_path, mosquitto)
    async with TableService(cfg) as service:
        for _ in range(50):
            if service.link.connected:
                break
            await asyncio.sleep(0.1)
        assert service.healthy()
        for k in range(5):
            while not service.link.connected:
                await asyncio.sleep(0.05)
            service.link._replies.put_nowait((f"{cfg.prefix}/reply/#", b"x", None, False))
            while service.link.crashes <= k:
                await asyncio.sleep(0.05)
        assert not service.healthy()  # systemd restarts a table that cannot recover by itself


async def test_the_retained_state_follows_the_panel(tmp_path):
    """The state written with a batch named the panel's old scene (`scene: null` while the panel
    showed the hand); it is written again once the panel has moved on."""
    cfg = table_config(tmp_path, devices={"panel": "sim"})
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        for line in HAND:
            await service.inject(line)
        await service.panel.sim.wait_for(lambda st: st.get("text", "").startswith("HAND 1"))
        await rec.wait_for(
            lambda r: r.docs("state") and (r.docs("state")[-1]["panel"]["scene"] or "").startswith("HAND 1"),
            timeout=5,
        )


async def test_replay_answers_every_ruling_from_the_log_gap_free(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        for line in HAND:
            await service.inject(line)
        await service.inject({"type": "seat", "seat": 1, "player": "X"})  # refused: seat taken
        n = service.ruling_no
        await rec.wait_for(lambda r: len(r.docs("rulings")) >= n, timeout=5)
        live = rec.docs("rulings")
        assert [d["ruling_seq"] for d in live] == list(range(1, n + 1))
        events = rec.docs("events")
        assert [d["event_seq"] for d in events] == list(range(1, len(events) + 1))
        whole = await rec.command("replay", {"since": 0})
        assert whole["ok"] and whole["lines"] == live and whole["last"] == n and not whole["more"]
        tail = await rec.command("replay", {"since": n - 2, "limit": 1})
        assert [d["ruling_seq"] for d in tail["lines"]] == [n - 1] and tail["more"]
        ev = await rec.command("replay", {"stream": "events", "since": 0})
        assert ev["lines"] == events
        bad = await rec.command("replay", {"stream": "outbox"})
        assert bad["error"] == "invalid" and "stream" in bad["message"]


async def test_a_command_delivered_twice_is_applied_once(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        body = json.dumps(
            {"id": "once-1", "reply_to": f"{cfg.prefix}/reply/test", "seat": 1, "player": "A", "stack": 900}
        ).encode()
        first = await rec.command("seat", body)
        second = await rec.command("seat", body)
        assert first["ok"] and second["ok"] and second.get("duplicate") is True
        assert "duplicate" not in first
        assert sum(1 for r in service.log.lines(("in",)) if r.line.get("type") == "seat") == 1
