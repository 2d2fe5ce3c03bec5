"""Faults with real parts: Mosquitto killed mid-hand, the service SIGKILLed, a burst of commands,
the panel's cable pulled, the camera going silent."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import time

import aiomqtt
import pytest

from controller.service.app import TableService, pid_rss_kib
from controller.service.eventlog import EventLog
from tests.service.conftest import FLASH, HAND, service_process, table_config, write_toml
from tests.service.mqtt_helpers import Recorder


def comparable(state: dict) -> dict:
    return {k: v for k, v in state.items() if k not in ("health", "t", "panel")}


async def test_broker_killed_mid_hand_loses_no_ruling_and_keeps_order(tmp_path, mosquitto):
    cfg = table_config(tmp_path, broker={"host": "127.0.0.1", "port": mosquitto.port, "protocol": "3.1.1"})
    async with (
        TableService(cfg) as service,
        Recorder(mosquitto.port, cfg.prefix, identifier="screen-1", clean_session=False) as rec,
    ):
        for line in HAND:
            await service.inject(line)
        await rec.wait_for(lambda r: any(d["type"] == "hand" for d in r.docs("rulings")))
        await asyncio.sleep(1.3)  # the broker's autosave has the screen's session
        mosquitto.kill()
        # mid-hand, broker gone: the first card is flashed, the hand is redealt
        await service.inject(FLASH)
        await service.inject({"type": "hand_start"})
        await service.inject({"type": "deal", "seat": 2})
        assert len(service.outbox) > 0
        for _ in range(100):
            if service.health.part("mqtt").status == "failed":
                break
            await asyncio.sleep(0.05)
        assert service.health.part("mqtt").status == "failed"
        mosquitto.start()
        logged = [r.seq for r in EventLog(cfg.event_log_path()).lines(("out",))]
        await rec.wait_for(lambda r: {d["seq"] for d in r.docs("rulings")} >= set(logged), timeout=15)
        seqs = []
        for d in rec.docs("rulings"):  # at least once: drop duplicates, then the order must be the log's
            if d["seq"] not in seqs:
                seqs.append(d["seq"])
        assert seqs == logged
        types = [d["type"] for d in rec.docs("rulings")]
        assert types.index("misdeal") < len(types) - 1 and types[-1] == "hand"
        # The outbox empties as the broker acknowledges; no message need arrive after that, so poll.
        for _ in range(200):
            if len(service.outbox) == 0:
                break
            await asyncio.sleep(0.05)
        assert len(service.outbox) == 0


async def _status(rec: Recorder, attempts: int = 1) -> dict:
    """The table's state from a `status` command; under overload a command may be shed: ask again."""
    for attempt in range(attempts):
        try:
            reply = await rec.command("status", {}, timeout=10 if attempts == 1 else 3)
        except TimeoutError:
            if attempt == attempts - 1:
                raise
            continue
        assert reply["ok"]
        return reply["state"]
    raise AssertionError("unreachable")


def _service_toml(tmp_path, port: int, **extra) -> object:
    cfg = {
        "table": {"seats": 6, "profile": "cool_mule", "venue": "v", "id": "t9"},
        "devices": {"camera": "none", "panel": "none", "nfc": "none"},
        "broker": {"host": "127.0.0.1", "port": port},
        "event_log": {"path": str(tmp_path / "events.db"), "synchronous": "full"},
    }
    for k, v in extra.items():
        cfg.setdefault(k, {}).update(v)
    return write_toml(tmp_path / "table.toml", cfg)


async def _wait_online(rec: Recorder, count: int = 1, timeout: float = 15) -> None:
    await rec.wait_for(lambda r: r.payloads("status").count(b"online") >= count, timeout)


async def test_sigkill_mid_hand_restarts_with_the_same_table(tmp_path, mosquitto):
    config = _service_toml(tmp_path, mosquitto.port)
    proc = service_process(config, tmp_path / "service.log")
    try:
        async with Recorder(mosquitto.port, "smarttable/v1/v/t9", protocol="5") as rec:
            await _wait_online(rec)
            for line in HAND:
                body = {k: v for k, v in line.items() if k != "type"}
                assert (await rec.command(line["type"], body))["ok"]
            before = await _status(rec)
            assert before["phase"] != "waiting" and before["hand_number"] == 1
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            await rec.wait_for(lambda r: r.payloads("status")[-1] == b"offline")  # the Last Will
            proc = service_process(config, tmp_path / "service.log")
            await _wait_online(rec, 2)
            after = await _status(rec)
            assert comparable(after) == comparable(before)
            assert after["health"]["engine"]["status"] == "ok"  # replay matched the log line for line
    finally:
        proc.kill()
        proc.wait()


async def test_a_burst_of_10000_commands_keeps_memory_bounded(tmp_path, mosquitto):
    config = _service_toml(tmp_path, mosquitto.port, event_log={"synchronous": "normal"})
    proc = service_process(config, tmp_path / "service.log")
    try:
        async with Recorder(mosquitto.port, "smarttable/v1/v/t9") as rec:
            await _wait_online(rec)
            assert (await rec.command("seat", {"seat": 1, "player": "A"}))["ok"]
            await _status(rec)
            rss_before = pid_rss_kib(proc.pid)
            async with aiomqtt.Client(
                "127.0.0.1", mosquitto.port, protocol=aiomqtt.ProtocolVersion.V311
            ) as c:
                for k in range(10_000):
                    kind = k % 4
                    if kind == 0:
                        topic, body = "away", {"seat": 1}
                    elif kind == 1:
                        topic, body = "back", {"seat": 1}
                    elif kind == 2:
                        topic, body = "seat", b"{broken"
                    else:
                        topic, body = "level", {"sb": 10, "bb": 5}  # invalid: sb > bb
                    payload = body if isinstance(body, bytes) else json.dumps(body).encode()
                    await c.publish(f"smarttable/v1/v/t9/cmd/{topic}", payload, qos=0)
            state = await _status(rec, attempts=10)  # answered after the burst: alive and serving
            await asyncio.sleep(1.0)
            state = await _status(rec, attempts=10)
            rss_after = pid_rss_kib(proc.pid)
            assert rss_after - rss_before < 30_000, (rss_before, rss_after)
            assert state["seats"][0]["player"] == "A"
            assert state["level"]["sb"] != 10  # no invalid level got through
            assert len(rec.payloads("reply/test")) > 0
    finally:
        proc.kill()
        proc.wait()


async def test_notify_ready_and_watchdog_pings(tmp_path, mosquitto):
    sock_path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(sock_path)
    sock.setblocking(False)
    config = _service_toml(tmp_path, mosquitto.port)
    proc = service_process(
        config, tmp_path / "service.log", env={"NOTIFY_SOCKET": sock_path, "WATCHDOG_USEC": "400000"}
    )
    messages: list[str] = []
    try:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(15):
            while not any("WATCHDOG=1" in m for m in messages):
                messages.append((await loop.sock_recv(sock, 4096)).decode())
        assert "READY=1" in messages[0]
        assert "STATUS=" in messages[0] and "mqtt=ok" in messages[0]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        proc.kill()
        proc.wait()
        sock.close()


async def test_panel_cable_pulled_and_plugged_back(tmp_path):
    cfg = table_config(tmp_path, devices={"panel": "sim"})
    async with TableService(cfg) as service:
        sim = service.panel.sim
        assert service.health.part("panel").status == "ok"
        for line in HAND:
            await service.inject(line)
        await sim.wait_for(lambda st: st.get("text", "").startswith("HAND 1"))
        await sim.unplug()
        for _ in range(100):
            if service.health.part("panel").status == "failed":
                break
            await asyncio.sleep(0.1)
        assert service.health.part("panel").status == "failed"
        # the table goes on ruling while the panel is gone
        assert (await service.inject(FLASH))[0]["type"] == "misdeal"
        await sim.replug()
        await sim.wait_for(lambda st: st.get("text", "").startswith("MISDEAL"), timeout=10)
        for _ in range(50):
            if service.health.part("panel").status == "ok":
                break
            await asyncio.sleep(0.1)
        assert service.health.part("panel").status == "ok"


async def test_silent_camera_is_degraded_and_the_rest_keeps_working(tmp_path):
    pytest.importorskip("vision.tracker")
    cfg = table_config(
        tmp_path,
        devices={
            "camera": "sim",
            "camera_stall_seconds": 0.6,
            "camera_fps": 10,
            "sim_width": 640,
            "sim_height": 360,
        },
    )
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        camera = service.health.part("camera")
        assert camera.status == "ok"
        service.camera.sim.stopped = True  # frames stop arriving (no error: just silence)
        t0 = time.monotonic()
        while camera.status != "degraded" and time.monotonic() - t0 < 5:
            await asyncio.sleep(0.05)
        assert camera.status == "degraded" and "no frame" in camera.detail
        await rec.wait_for(
            lambda r: r.docs("state") and r.docs("state")[-1]["health"]["camera"]["status"] == "degraded"
        )
        # everything else works: director commands and injected lines are ruled
        assert (await rec.command("seat", {"seat": 1, "player": "A"}))["ok"]
        assert (await service.inject(HAND[1])) == []
        service.camera.sim.stopped = False
        t0 = time.monotonic()
        while camera.status != "ok" and time.monotonic() - t0 < 5:
            await asyncio.sleep(0.05)
        assert camera.status == "ok"
