"""systemd/mosquitto/league-bridge.conf on two real Mosquittos: a venue's table topics reach the league
broker (retained state included), and a league director's command reaches the venue's table."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import aiomqtt
import pytest

from controller.mqtt.mosquitto import Mosquitto
from controller.mqtt.mosquitto import installed as mosquitto_installed

BRIDGE = Path(__file__).resolve().parents[2] / "systemd" / "mosquitto" / "league-bridge.conf"
AUTH_AND_TLS = re.compile(r"^(remote_username|remote_password|bridge_cafile|bridge_tls_version)\b")


def bridge_for(venue: str, league_port: int) -> str:
    """The shipped file for one venue, pointed at a local league broker (no TLS, no login in a test)."""
    lines = []
    for line in BRIDGE.read_text().splitlines():
        if AUTH_AND_TLS.match(line):
            continue
        line = line.replace("VENUE", venue).replace("league.example.org:8883", f"127.0.0.1:{league_port}")
        lines.append(line)
    return "\n".join(lines) + "\n"


async def next_message(client: aiomqtt.Client, timeout: float = 10.0) -> aiomqtt.Message:
    async def first():
        async for m in client.messages:
            return m

    return await asyncio.wait_for(first(), timeout)


async def test_venue_topics_reach_the_league_and_commands_come_back(tmp_path):
    if not mosquitto_installed():
        pytest.skip("mosquitto is not installed")
    (tmp_path / "league").mkdir()
    (tmp_path / "venue").mkdir()
    league = Mosquitto(tmp_path / "league")
    league.start()
    venue = Mosquitto(tmp_path / "venue", extra=bridge_for("den", league.port))
    try:
        venue.start()
        v = aiomqtt.Client("127.0.0.1", venue.port, identifier="table", protocol=aiomqtt.ProtocolVersion.V311)
        lg = aiomqtt.Client(
            "127.0.0.1", league.port, identifier="league-screen", protocol=aiomqtt.ProtocolVersion.V311
        )
        async with v, lg:
            await lg.subscribe("smarttable/v1/den/$bridge/league", qos=1)
            assert (await next_message(lg)).payload in (b"1", b"online")  # the bridge is up
            await v.publish("smarttable/v1/den/T1/state", '{"seq": 4}', qos=1, retain=True)
            await asyncio.sleep(0.5)
            await lg.subscribe("smarttable/v1/+/+/state", qos=1)
            got = await next_message(lg)
            assert (str(got.topic), got.payload, got.retain) == (
                "smarttable/v1/den/T1/state",
                b'{"seq": 4}',
                True,
            )
            await v.subscribe("smarttable/v1/den/T1/cmd/+", qos=1)
            await asyncio.sleep(0.3)
            await lg.publish("smarttable/v1/den/T1/cmd/level", '{"sb": 100, "bb": 200}', qos=1)
            cmd = await next_message(v)
            assert (str(cmd.topic), cmd.payload) == (
                "smarttable/v1/den/T1/cmd/level",
                b'{"sb": 100, "bb": 200}',
            )
    finally:
        venue.kill()
        league.kill()
