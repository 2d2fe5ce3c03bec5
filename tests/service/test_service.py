"""The table service in-process: lines in, rulings out to the log, MQTT and the panel; replay; commands."""

from __future__ import annotations

import json

import pytest

from controller.service.app import ServiceError, TableService
from controller.service.eventlog import EventLog
from tests.service.conftest import FLASH, HAND, table_config
from tests.service.mqtt_helpers import Recorder


def comparable(state: dict) -> dict:
    return {k: v for k, v in state.items() if k not in ("health", "t", "panel")}


async def test_lines_are_ruled_logged_and_published_in_order(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        for line in HAND:
            await service.inject(line, source="sim")
        outs = await service.inject(FLASH, source="camera")
        assert outs == [{"type": "misdeal", "reason": "first_cards_exposed", "rule": "cool_mule:5.g"}]
        await rec.wait_for(lambda r: any(d["type"] == "misdeal" for d in r.docs("rulings")))
        rulings = rec.docs("rulings")
        assert [d["type"] for d in rulings] == ["hand", "misdeal"]
        assert rulings[0]["seq"] < rulings[1]["seq"]
        events = rec.docs("events")
        assert [d["type"] for d in events] == [line["type"] for line in [*HAND, FLASH]]
        assert events[-1]["source"] == "camera" and events[-1]["card"] == "Kd"  # flashed: public
        await rec.wait_for(lambda r: r.docs("state") and r.docs("state")[-1]["phase"] == "misdeal")
        state = rec.docs("state")[-1]
        assert state["hand_number"] == 1 and state["button"] == 1
        assert [s["player"] for s in state["seats"]] == ["A", "B", "C", "D"]
        assert state["alerts"][0]["reason"] == "first_cards_exposed"
        assert rec.payloads("status")[-1] == b"online"
    log = EventLog(tmp_path / "events.db")
    rows = list(log.lines())
    assert [(r.kind, r.source) for r in rows[-2:]] == [("in", "camera"), ("out", "engine")]
    assert all(r.t > 0 for r in rows)


async def test_restart_replays_the_log_to_the_same_table(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as first:
        for line in [*HAND, FLASH, {"type": "hand_start"}]:
            await first.inject(line)
        before = comparable(first.state())
        engine_before = first.engine.snapshot()
    async with TableService(cfg) as second:
        assert second.replayed == len(HAND) + 2
        assert second.replay_mismatches == 0
        assert comparable(second.state()) == before
        assert second.engine.snapshot() == engine_before
        # and the table goes on from there: the redealt hand's first card
        outs = await second.inject({"type": "deal", "seat": 2})
        assert outs == []


async def test_a_log_of_another_table_setup_is_refused(tmp_path):
    async with TableService(table_config(tmp_path)) as service:
        await service.inject(HAND[0])
    with pytest.raises(ServiceError, match=r"seats .*--fresh"):
        async with TableService(table_config(tmp_path, table={"seats": 8})):
            pass


async def test_director_commands_are_validated_and_answered(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        ok = await rec.command("seat", {"seat": 1, "player": "P-1", "name": "Ann", "stack": 1000})
        assert ok["ok"] is True and ok["outputs"] == []
        snapshot = service.engine.snapshot()
        # malformed, invalid, unknown, refused by the rules: each answered, nothing changes
        bad = await rec.command(
            "seat", b'{"id": "x1", "reply_to": "' + cfg.prefix.encode() + b'/reply/t", "seat":'
        )
        assert bad["ok"] is False and bad["error"] == "malformed" and "not JSON" in bad["message"]
        invalid = await rec.command("seat", {"seat": 99, "player": "Z"})
        assert invalid["error"] == "invalid" and "seat" in invalid["message"]
        unknown = await rec.command("explode", {})
        assert unknown["error"] == "unknown"
        taken = await rec.command("seat", {"seat": 1, "player": "P-2"})
        assert taken["ok"] is False and taken["error"] == "refused" and "taken" in taken["message"]
        assert service.engine.snapshot() == snapshot
        status = await rec.command("status", {})
        assert status["ok"] and status["state"]["seats"][0]["name"] == "Ann"


async def test_a_reply_topic_outside_the_table_prefix_is_refused(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        assert rec.client is not None
        await rec.client.publish(
            f"{cfg.prefix}/cmd/hand_start", json.dumps({"id": 5, "reply_to": "elsewhere"}), qos=1
        )
        await rec.wait_for(lambda r: r.payloads("reply"))
        reply = json.loads(rec.payloads("reply")[-1])
        assert reply["id"] == 5 and reply["ok"] is False and "not under" in reply["message"]
        assert service.engine.snapshot()["hand"] == 0


async def test_director_token_makes_other_commands_unauthorised(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    token.chmod(0o600)  # a secret others can read is refused (config.secret_file_problem)
    cfg = table_config(tmp_path, commands={"token_file": str(token)})
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        refused = await rec.command("seat", {"seat": 1, "player": "X"})
        assert refused["error"] == "unauthorised"
        accepted = await rec.command("seat", {"seat": 1, "player": "X", "token": "s3cret"})
        assert accepted["ok"] is True


async def test_hidden_cards_never_reach_mqtt(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        for line in HAND:
            await service.inject(line)
        await service.inject({"type": "deal", "seat": 2})
        await service.inject({"type": "muck", "seat": 4, "cards": ["7c", "2d"]})
        await service.inject({"type": "mystery", "seat": 4, "hole": ["Qh", "Qs"]})
        await service.inject({"type": "hand_end"})
        last = service.last_seq
        await rec.wait_for(lambda r: any(d["seq"] >= last for d in r.docs("state")))
        # the muck was published (as an event, or as the engine's refusal of it), without its cards
        assert any(d["type"] == "muck" for d in rec.docs("events")) or any(
            d.get("line") == 8 for d in rec.docs("rulings")
        )
        wire = b"\n".join(p for _, p, _ in rec.messages)
        for card in (b"7c", b"2d", b"Qh", b"Qs"):
            assert card not in wire


async def test_inject_refuses_text_that_is_not_a_json_object(tmp_path):
    async with TableService(table_config(tmp_path)) as service:
        with pytest.raises(ValueError, match="not JSON"):
            await service.inject("{oops")
        outs = await service.inject('{"type": "deal", "seat": 1}')
        assert outs[0]["type"] == "error"  # the engine's answer: no hand running
