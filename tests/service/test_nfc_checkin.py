"""A player's card tapped on the table's (simulated) reader seats the player, through nfcpy's code path,
the registry's check-in logic and the rules engine; MQTT gets the check-in with ID and name only."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest

from controller.service.app import TableService
from tests.service.conftest import table_config
from tests.service.mqtt_helpers import Recorder

registry_mod = pytest.importorskip("controller.registry.registry")
hil_nfc = pytest.importorskip("hil.nfc")


async def test_tap_seats_the_player_and_publishes_the_checkin(tmp_path):
    from controller.registry.card import encode_card
    from controller.registry.keys import create_key_file, load_keys
    from tests.registry.conftest import NOW, add_member, open_event

    keys_path = tmp_path / "venue-keys.toml"
    create_key_file(keys_path, "cool_mule", "k1")
    keys = load_keys(keys_path)
    url = f"sqlite:///{tmp_path / 'registry.sqlite3'}"
    registry = registry_mod.Registry.open(url)
    uid = bytes([4, 1, 2, 3, 4, 5, 6])
    open_event(registry, tables=(("t1", 6),))
    add_member(registry, "P1", "Ann")
    registry.issue_card(uid, "P1", "cool_mule", keys.current, now=NOW)
    registry.register("E1", "P1", now=NOW)
    registry.draw("E1", seed=3, now=NOW)
    seat = registry.assignment("E1", "P1").seat
    registry.close()

    reader_name = f"svc-{uuid.uuid4().hex[:8]}"
    cfg = table_config(
        tmp_path,
        devices={"nfc": f"sim:{reader_name}"},
        checkin={"registry": url, "keys_file": str(keys_path), "event": "E1"},
    )
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        assert service.health.part("nfc").status == "ok"
        tag = hil_nfc.SimulatedNtag.with_message(encode_card(uid, "P1", keys), uid=uid)
        hil_nfc.SimulatedReader.named(reader_name).present(tag, dwell=1.0)
        await rec.wait_for(lambda r: any(d["type"] == "checkin" for d in r.docs("events")), timeout=10)
        checkin = next(d for d in rec.docs("events") if d["type"] == "checkin")
        assert checkin["player"] == "P1" and checkin["name"] == "Ann" and checkin["seat"] == seat
        assert checkin["accepted"] is True and checkin["source"] == "nfc"
        for _ in range(50):
            if service.engine.snapshot()["players"].get(str(seat)):
                break
            await asyncio.sleep(0.05)
        assert service.engine.snapshot()["players"][str(seat)]["player"] == "P1"
        wire = b"".join(p for _, p, _ in rec.messages)
        assert uid.hex().encode() not in wire and b"1990" not in wire  # no UID, no birth date
        await rec.wait_for(
            lambda r: (
                r.payloads("state")
                and json.loads(r.payloads("state")[-1])["health"]["nfc"].get("taps", 0) >= 1
            )
        )
