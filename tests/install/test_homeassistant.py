"""Home Assistant MQTT discovery against a real Mosquitto with the venue's ACL (add-table.sh's block):
the table's own login may announce it, and the announced templates, rendered with Jinja2 as Home
Assistant renders them, read the table's real retained state."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import aiomqtt
import jinja2
import pytest

from controller.homeassistant import discovery_messages
from controller.mqtt.mosquitto import Mosquitto
from controller.mqtt.mosquitto import installed as mosquitto_installed
from controller.service.app import TableService
from tests.service.conftest import FLASH, HAND, table_config, write_toml

REPO = Path(__file__).resolve().parents[2]
PASSWD = shutil.which("mosquitto_passwd")
pytestmark = pytest.mark.skipif(
    not (mosquitto_installed() and PASSWD), reason="mosquitto and mosquitto_passwd are not installed"
)


@pytest.fixture
def venue_broker(tmp_path):
    """Mosquitto as docs/install.md sets it up: the repository's ACL, add-table.sh's login."""
    work = tmp_path / "broker"
    work.mkdir()
    acl, passwd = work / "acl", work / "passwd"
    shutil.copy(REPO / "systemd" / "mosquitto" / "smart-table.acl", acl)
    subprocess.run([PASSWD, "-c", "-b", str(passwd), "director", "dpw"], check=True, capture_output=True)
    added = subprocess.run(
        ["sh", str(REPO / "systemd" / "mosquitto" / "add-table.sh"), "bar-7", "t3", str(acl), str(passwd)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    password = added.split("password ", 1)[1].split()[0]
    secret = tmp_path / "mqtt-password"
    secret.write_text(password + "\n")
    secret.chmod(0o600)
    broker = Mosquitto(work, extra=f"allow_anonymous false\npassword_file {passwd}\nacl_file {acl}\n")
    broker.start()
    yield broker, secret
    broker.kill()


async def retained(port: int, topic: str, seconds: float = 1.5) -> dict[str, bytes]:
    got: dict[str, bytes] = {}
    async with aiomqtt.Client("127.0.0.1", port, username="director", password="dpw", timeout=5) as c:
        await c.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(seconds):
                async for m in c.messages:
                    got[str(m.topic)] = m.payload if isinstance(m.payload, bytes) else str(m.payload).encode()
        except TimeoutError:
            pass
    return got


def render(template: str, state: dict) -> str:
    return jinja2.Environment().from_string(template).render(value_json=state).strip()


async def test_the_table_announces_itself_and_the_sensors_read_its_state(tmp_path, venue_broker):
    broker, secret = venue_broker
    sections = {
        "table": {"venue": "bar-7", "id": "t3"},
        "broker": {
            "host": "127.0.0.1",
            "port": broker.port,
            "username": "t3@bar-7",
            "password_file": str(secret),
            "protocol": "3.1.1",
        },
    }
    cfg = table_config(tmp_path, **sections)
    toml = write_toml(tmp_path / "table.toml", sections)
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "homeassistant", "--config", str(toml)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    found = await retained(broker.port, "homeassistant/#")
    assert sorted(found) == sorted(t for t, _ in discovery_messages("bar-7", "t3"))
    configs = {t.split("/")[-2]: json.loads(p) for t, p in found.items()}
    assert configs["status"]["state_topic"] == "smarttable/v1/bar-7/t3/status"
    assert configs["hand"]["device"]["identifiers"] == ["smart_table_bar_7_t3"]

    async with TableService(cfg) as service:
        for line in [*HAND, FLASH]:
            await service.inject(line)
        await asyncio.sleep(1.0)
        state_msgs = await retained(broker.port, "smarttable/v1/bar-7/t3/state")
    state = json.loads(state_msgs["smarttable/v1/bar-7/t3/state"])
    assert render(configs["hand"]["value_template"], state) == "1"
    assert render(configs["phase"]["value_template"], state) == str(state["phase"])
    assert (
        render(configs["last_alert"]["value_template"], state)
        == "misdeal: first_cards_exposed (cool_mule:5.g)"
    )
    assert render(configs["last_alert"]["value_template"], {"alerts": []}) == "none"

    removed = subprocess.run(
        [sys.executable, "-m", "controller.cli", "homeassistant", "--config", str(toml), "--remove"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert removed.returncode == 0, removed.stderr
    assert await retained(broker.port, "homeassistant/#") == {}


async def test_another_tables_login_may_not_announce_this_one(tmp_path, venue_broker):
    """The ACL block lets a table write only its own discovery topics."""
    broker, secret = venue_broker
    async with aiomqtt.Client(
        "127.0.0.1", broker.port, username="t3@bar-7", password=secret.read_text().strip(), timeout=5
    ) as c:
        await c.publish("homeassistant/sensor/smart_table_bar_7_t9/hand/config", b"{}", qos=1, retain=True)
    assert await retained(broker.port, "homeassistant/#") == {}
