"""The shipped Mosquitto configuration (systemd/mosquitto) on a real broker: one login per
(venue, table) pair, the director's commands (they carry the token) readable only by the table they
are for, and no login able to take over a table's session by using its client id."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import aiomqtt
import pytest

from controller.mqtt.mosquitto import Mosquitto
from controller.mqtt.mosquitto import installed as mosquitto_installed

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "systemd" / "mosquitto"
PASSWD = shutil.which("mosquitto_passwd")
T1 = "smarttable/v1/cool-mule/table-1"


def add_table(work: Path, venue: str, table: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["sh", str(SHIPPED / "add-table.sh"), venue, table, str(work / "acl"), str(work / "passwd")],
        capture_output=True,
        text=True,
        timeout=30,
    )


def password_of(r: subprocess.CompletedProcess) -> tuple[str, str]:
    _, user, _, password = r.stdout.splitlines()[0].split()
    return user, password


def shipped_settings(work: Path) -> str:
    """smart-table.conf's access settings, with the password and ACL files of `work` (the listeners,
    TLS and persistence lines are the venue's; the test broker has its own)."""
    keep = []
    for line in (SHIPPED / "smart-table.conf").read_text().splitlines():
        key = line.split(" ", 1)[0]
        if key in ("per_listener_settings", "allow_anonymous", "use_username_as_clientid"):
            keep.append(line)
    return "\n".join([*keep, f"password_file {work / 'passwd'}", f"acl_file {work / 'acl'}", ""])


@pytest.fixture
def venue(tmp_path):
    if PASSWD is None or not mosquitto_installed():
        pytest.skip("mosquitto and mosquitto_passwd are not installed")
    work = tmp_path / "broker"
    work.mkdir()
    shutil.copy(SHIPPED / "smart-table.acl", work / "acl")
    # the shipped ACL's example table block is replaced by what add-table.sh writes
    logins = {}
    for venue_id, table_id in (("cool-mule", "table-1"), ("cool", "mule-table-1"), ("cool-mule", "table-2")):
        r = add_table(work, venue_id, table_id)
        assert r.returncode == 0, r.stderr
        user, password = password_of(r)
        logins[user] = password
    for user in ("director", "screen"):
        subprocess.run([PASSWD, "-b", str(work / "passwd"), user, "pw-" + user], check=True)
        logins[user] = "pw-" + user
    broker = Mosquitto(work, extra=shipped_settings(work), persistence=False)
    broker.start()
    yield broker, logins, work
    broker.kill()


def test_table_logins_are_one_to_one_with_venue_and_table(venue):
    _, logins, work = venue
    assert {"table-1@cool-mule", "mule-table-1@cool", "table-2@cool-mule"} <= set(logins)
    assert (work / "passwd").stat().st_mode & 0o077 == 0
    # a name that is no topic level is refused, before anything is written
    before = ((work / "acl").read_text(), (work / "passwd").read_text())
    for venue_id, table_id in (
        ("cool mule", "table-1"),
        ("cool", "mule@x"),
        ("a\nb", "t"),
        ("-x", "t"),
        ("v", ""),
    ):
        r = add_table(work, venue_id, table_id)
        assert r.returncode == 2 and "a letter or digit" in r.stderr, (venue_id, table_id)
    assert ((work / "acl").read_text(), (work / "passwd").read_text()) == before
    # adding a table again replaces its password; its ACL block is not written twice
    again = add_table(work, "cool-mule", "table-1")
    assert again.returncode == 0 and "already has an ACL block" in again.stderr
    assert (work / "acl").read_text().count("user table-1@cool-mule\n") == 1


def client(port: int, logins: dict[str, str], user: str, identifier: str | None = None) -> aiomqtt.Client:
    return aiomqtt.Client(
        "127.0.0.1", port, username=user, password=logins[user], identifier=identifier, timeout=5
    )


async def collect(c: aiomqtt.Client, into: list[str]) -> None:
    async for m in c.messages:
        into.append(f"{m.topic} {m.payload.decode()}")


async def test_commands_reach_only_their_table_and_the_director(venue):
    broker, logins, _ = venue
    seen: dict[str, list[str]] = {u: [] for u in logins}
    clients = {u: client(broker.port, logins, u) for u in logins}
    tasks = []
    for user, c in clients.items():
        await c.__aenter__()
        await c.subscribe("smarttable/v1/#", qos=1)
        tasks.append(asyncio.create_task(collect(c, seen[user])))
    try:
        await clients["director"].publish(f"{T1}/cmd/seat", json.dumps({"token": "s3cret"}), qos=1)
        await clients["table-1@cool-mule"].publish(f"{T1}/status", "online", qos=1)
        async with asyncio.timeout(5):
            while not (seen["table-1@cool-mule"] and all(f"{T1}/status online" in s for s in seen.values())):
                await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)  # anything else in flight arrives
    finally:
        for t in tasks:
            t.cancel()
        for c in clients.values():
            await c.__aexit__(None, None, None)
    command = f'{T1}/cmd/seat {{"token": "s3cret"}}'
    assert command in seen["table-1@cool-mule"] and command in seen["director"]
    for user in ("screen", "table-2@cool-mule", "mule-table-1@cool"):
        assert not any("/cmd/" in m for m in seen[user]), user  # nor the token in it
        assert f"{T1}/status online" in seen[user]  # watching is still allowed


async def test_no_login_takes_over_a_tables_session_by_its_client_id(venue):
    broker, logins, _ = venue
    got: list[str] = []
    table = client(broker.port, logins, "table-1@cool-mule", identifier="table-1-session")
    await table.__aenter__()
    await table.subscribe(f"{T1}/cmd/+", qos=1)
    task = asyncio.create_task(collect(table, got))
    try:
        # another login connects with the table's client id (the one it chose, and its login)
        for ident in ("table-1-session", "table-1@cool-mule"):
            async with client(broker.port, logins, "screen", identifier=ident) as intruder:
                await intruder.subscribe(f"{T1}/cmd/+", qos=1)
                async with client(broker.port, logins, "director") as director:
                    await director.publish(f"{T1}/cmd/hand_start", ident, qos=1)
                async with asyncio.timeout(5):
                    while not any(g.endswith(ident) for g in got):
                        await asyncio.sleep(0.05)
        assert not task.done()  # the table's connection was never taken away
    finally:
        task.cancel()
        await table.__aexit__(None, None, None)
    assert got == [f"{T1}/cmd/hand_start table-1-session", f"{T1}/cmd/hand_start table-1@cool-mule"]
