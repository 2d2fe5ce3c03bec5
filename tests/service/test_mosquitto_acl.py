"""The Mosquitto configuration of systemd/mosquitto: tables publish only under their own prefix,
only the director publishes commands; MQTT 5 replies carry the request's correlation data."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import aiomqtt
import pytest
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.service.app import TableService
from tests.service.conftest import HAND, Mosquitto, table_config

REPO = Path(__file__).resolve().parents[2]
PASSWD = shutil.which("mosquitto_passwd")
PREFIX = "smarttable/v1/cool-mule/table-1"
USERS = {"table-1@cool-mule": "tpw", "director": "dpw", "screen": "spw"}


@pytest.fixture
def secured(tmp_path):
    if PASSWD is None:
        pytest.skip("mosquitto_passwd is not installed")
    work = tmp_path / "broker"
    work.mkdir()
    passwd = work / "passwd"
    passwd.touch()
    passwd.chmod(0o600)
    for user, password in USERS.items():
        subprocess.run([PASSWD, "-b", str(passwd), user, password], check=True, capture_output=True)
    acl = work / "acl"
    shutil.copy(REPO / "systemd" / "mosquitto" / "smart-table.acl", acl)
    broker = Mosquitto(work, extra=f"allow_anonymous false\npassword_file {passwd}\nacl_file {acl}\n")
    broker.start()
    yield broker
    broker.kill()


def client(port: int, user: str, v5: bool = False) -> aiomqtt.Client:
    return aiomqtt.Client(
        "127.0.0.1",
        port,
        username=user,
        password=USERS[user],
        timeout=5,
        protocol=aiomqtt.ProtocolVersion.V5 if v5 else aiomqtt.ProtocolVersion.V311,
    )


async def messages_for(c: aiomqtt.Client, seconds: float) -> list[aiomqtt.Message]:
    got: list[aiomqtt.Message] = []
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(seconds):
            async for m in c.messages:
                got.append(m)
    return got


async def test_acl_and_mqtt5_correlation(tmp_path, secured):
    password = tmp_path / "table-password"
    password.write_text("tpw\n")
    password.chmod(0o600)  # a secret others can read is refused (config.secret_file_problem)
    cfg = table_config(
        tmp_path,
        table={"venue": "cool-mule", "id": "table-1"},
        broker={
            "host": "127.0.0.1",
            "port": secured.port,
            "username": "table-1@cool-mule",
            "password_file": str(password),
            "protocol": "5",
        },
    )
    async with TableService(cfg) as service, client(secured.port, "director", v5=True) as director:
        await director.subscribe("smarttable/v1/#", qos=1)
        # the director's command, MQTT 5 style: response topic + correlation data
        props = Properties(PacketTypes.PUBLISH)
        props.ResponseTopic = f"{PREFIX}/reply/director"
        props.CorrelationData = b"corr-42"
        await director.publish(
            f"{PREFIX}/cmd/seat", json.dumps({"seat": 1, "player": "P-1"}), qos=1, properties=props
        )
        async with asyncio.timeout(5):
            async for m in director.messages:
                if str(m.topic) == f"{PREFIX}/reply/director":
                    reply = json.loads(m.payload)
                    assert reply["ok"] is True
                    assert m.properties.CorrelationData == b"corr-42"
                    break
        assert service.engine.snapshot()["players"]["1"]["player"] == "P-1"

        # a screen may watch but not command: the broker drops its command, nothing changes
        async with client(secured.port, "screen") as screen:
            await screen.publish(f"{PREFIX}/cmd/leave", json.dumps({"seat": 1, "reason": "left"}), qos=1)
        # the table's own login cannot publish under another table's prefix, nor send commands
        async with client(secured.port, "table-1@cool-mule") as table:
            await table.publish("smarttable/v1/cool-mule/table-2/rulings", b'{"type":"misdeal"}', qos=1)
            await table.publish(f"{PREFIX}/cmd/hand_start", b"{}", qos=1)
        seen = await messages_for(director, 1.0)
        topics = [str(m.topic) for m in seen]
        assert "smarttable/v1/cool-mule/table-2/rulings" not in topics
        assert not any("/cmd/" in t for t in topics)
        assert service.engine.snapshot()["players"]["1"]["player"] == "P-1"
        assert service.engine.snapshot()["hand"] == 0
        for line in HAND[1:3]:
            await service.inject(line)
        assert service.health.part("mqtt").status == "ok"


async def test_the_table_publishes_its_picture_and_only_the_director_reads_it(secured):
    """The camera picture (docs/mqtt.md "Camera picture") is in no `pattern read` line: a screen,
    which may watch the state and rulings, never gets it; the director does; another table's login
    cannot publish one for this table."""
    async with client(secured.port, "table-1@cool-mule") as table:
        await table.publish(f"{PREFIX}/picture", b"\xff\xd8picture", qos=1, retain=True)
        await table.publish("smarttable/v1/cool-mule/table-2/picture", b"\xff\xd8forged", qos=1, retain=True)
    async with client(secured.port, "director") as director, client(secured.port, "screen") as screen:
        await director.subscribe("smarttable/v1/+/+/picture", qos=1)
        await screen.subscribe("smarttable/v1/+/+/picture", qos=1)
        await screen.subscribe(f"{PREFIX}/picture", qos=1)
        seen, watched = await asyncio.gather(messages_for(director, 1.0), messages_for(screen, 1.0))
    assert [(str(m.topic), m.payload) for m in seen] == [(f"{PREFIX}/picture", b"\xff\xd8picture")]
    assert watched == []
