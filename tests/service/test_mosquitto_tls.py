"""TLS to a real Mosquitto: the table verifies the broker against the venue's CA and publishes;
a broker whose certificate that CA did not sign is refused (the table stays offline, and says so)."""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess
from pathlib import Path

import aiomqtt
import pytest

from controller.mqtt.mosquitto import Mosquitto
from controller.mqtt.mosquitto import installed as mosquitto_installed
from controller.service.app import TableService
from tests.service.conftest import table_config

pytestmark = [
    pytest.mark.skipif(not mosquitto_installed(), reason="mosquitto is not installed"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed"),
]


def make_ca_and_server(folder: Path, name: str) -> tuple[Path, Path, Path]:
    """A CA and a broker certificate for 127.0.0.1 signed by it: (ca.crt, server.crt, server.key)."""
    folder.mkdir()

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name} CA",
            "-keyout", "ca.key", "-out", "ca.crt")  # fmt: skip
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
            "-keyout", "server.key", "-out", "server.csr")  # fmt: skip
    (folder / "san.ext").write_text("subjectAltName = IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
            "-days", "2", "-extfile", "san.ext", "-out", "server.crt")  # fmt: skip
    return folder / "ca.crt", folder / "server.crt", folder / "server.key"


@pytest.fixture
def tls_broker(tmp_path: Path):
    ca, crt, key = make_ca_and_server(tmp_path / "pki", "venue")
    (tmp_path / "broker").mkdir()
    broker = Mosquitto(
        tmp_path / "broker", extra=f"cafile {ca}\ncertfile {crt}\nkeyfile {key}\n", persistence=False
    )
    broker.start()
    yield broker, ca
    broker.kill()


async def test_the_table_publishes_over_tls_verified_by_the_venue_ca(tmp_path, tls_broker):
    broker, ca = tls_broker
    cfg = table_config(
        tmp_path,
        broker={
            "host": "127.0.0.1",
            "port": broker.port,
            "tls": True,
            "ca_file": str(ca),
            "protocol": "3.1.1",
        },
    )
    context = ssl.create_default_context(cafile=str(ca))
    async with (
        TableService(cfg) as service,
        aiomqtt.Client("127.0.0.1", broker.port, tls_context=context, timeout=5) as screen,
    ):
        await screen.subscribe(f"{cfg.prefix}/#", qos=1)
        await service.inject({"type": "seat", "seat": 1, "player": "P1", "stack": 1000})
        seen = {}
        async with asyncio.timeout(10):
            async for m in screen.messages:
                seen[str(m.topic).rsplit("/", 1)[-1]] = m.payload.decode()
                if seen.get("status") == "online" and '"P1"' in seen.get("state", ""):
                    break
        seats = json.loads(seen["state"])["seats"]
        assert [(e["seat"], e["player"]) for e in seats] == [(1, "P1")]
        assert service.health.part("mqtt").status == "ok"


async def test_a_broker_the_venue_ca_did_not_sign_is_refused(tmp_path, tls_broker):
    broker, _ = tls_broker
    other_ca, _, _ = make_ca_and_server(tmp_path / "other", "impostor")
    cfg = table_config(
        tmp_path,
        broker={"host": "127.0.0.1", "port": broker.port, "tls": True, "ca_file": str(other_ca)},
    )
    async with TableService(cfg) as service:
        await service.inject({"type": "seat", "seat": 1, "player": "P1", "stack": 1000})
        await asyncio.sleep(1.5)
        mqtt = service.health.part("mqtt")
        assert mqtt.status != "ok"
        assert "certificate" in mqtt.detail.lower() or "ssl" in mqtt.detail.lower(), mqtt.detail
        assert len(service.outbox) > 0  # the publications wait in the outbox, nothing was sent


async def test_doctor_reaches_a_tls_broker_through_the_tables_own_login(tmp_path, tls_broker):
    """`smart-table doctor` logs in as the table does (BrokerConfig.login): with the venue's CA the
    broker check passes and says TLS; with a CA that did not sign the broker it fails and says why."""
    from controller.doctor import FAIL, OK, Environment, check_broker

    broker, ca = tls_broker
    other_ca, _, _ = make_ca_and_server(tmp_path / "other", "impostor")
    results = {}
    for name, authority in (("venue", ca), ("impostor", other_ca)):
        cfg = table_config(
            tmp_path / name,
            broker={"host": "127.0.0.1", "port": broker.port, "tls": True, "ca_file": str(authority)},
        )
        results[name] = await check_broker(cfg, Environment(timeout=3))
    assert results["venue"].status == OK and "(TLS)" in results["venue"].detail, results["venue"]
    assert results["impostor"].status == FAIL, results["impostor"]
    assert "certificate" in results["impostor"].detail.lower(), results["impostor"]
