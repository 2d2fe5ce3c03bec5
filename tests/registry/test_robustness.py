"""A reader that keeps going: unreadable tags, concurrent desks on one PostgreSQL registry."""

from __future__ import annotations

import asyncio
import threading

import pytest

from controller.registry.card import CardVerifier, encode_card
from controller.registry.errors import RegistryError
from controller.registry.reader import watch_reader
from controller.registry.registry import Registry
from hil.nfc import SimulatedNtag, SimulatedReader
from tests.registry.conftest import NOW, add_member, open_event


class GarbledNtag(SimulatedNtag):
    """A damaged tag: it answers activation but every READ returns 3 bytes of noise."""

    def command(self, data: bytes) -> bytes:
        if data[:1] == b"\x30":
            return b"\x01\x02\x03"
        return super().command(data)


async def test_unreadable_tag_reported_then_next_card_read(keys):
    reader = SimulatedReader.named("robust")
    bad = GarbledNtag()
    good = SimulatedNtag()
    good.load_message(encode_card(good.uid, "P1", keys))
    taps = []

    async def collect():
        async for tap in watch_reader("sim:robust"):
            taps.append(tap)
            if len(taps) == 2:
                return

    task = asyncio.create_task(collect())
    reader.present(bad, dwell=0.4)
    await asyncio.sleep(0.6)
    reader.present(good, dwell=1.0)
    await asyncio.wait_for(task, 10)
    assert taps[0].uid == bad.uid and taps[0].ndef == b"" and "could not be read" in taps[0].error
    assert CardVerifier(keys).verify(taps[1].uid, taps[1].ndef).player_id == "P1"


def test_two_desks_cannot_oversell_seats(pg_url):
    """Two desks register into the last seats of one event at the same moment (PostgreSQL row lock)."""
    setup = Registry.open(pg_url)
    open_event(setup, tables=(("T1", 2),))
    players = [f"P{i}" for i in range(8)]
    for pid in players:
        add_member(setup, pid, pid)
    desks = [Registry.open(pg_url) for _ in range(4)]
    outcomes: list[str] = []
    barrier = threading.Barrier(len(desks))

    def desk_work(reg: Registry, mine: list[str]) -> None:
        barrier.wait()
        for pid in mine:
            try:
                reg.register("E1", pid, now=NOW)
                outcomes.append("ok")
            except RegistryError as exc:
                outcomes.append(exc.reason)

    threads = [threading.Thread(target=desk_work, args=(d, players[i::4])) for i, d in enumerate(desks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 2 and outcomes.count("event_full") == 6
    assert len(setup.registrations("E1")) == 2
    for reg in [setup, *desks]:
        reg.close()


@pytest.mark.parametrize("bad", ["", "x" * 41])
def test_bad_display_name(registry, bad):
    with pytest.raises(RegistryError) as err:
        add_member(registry, "P1", bad)
    assert err.value.reason == "bad_name"


def test_postgres_restart_refuses_one_tap_then_recovers(pg_url, keys):
    """The league server drops the table's connection: that tap is refused, the next one works."""
    import psycopg

    from controller.registry.checkin import TableCheckIn
    from tests.registry.conftest import PG_URL

    reg = Registry.open(pg_url)
    open_event(reg, tables=(("T1", 6),))
    for n, pid in enumerate(("P1", "P2"), start=1):
        add_member(reg, pid, pid)
        reg.issue_card(bytes([4, 0, 0, 0, 0, 0, n]), pid, "cool_mule", keys.current, now=NOW)
        reg.register("E1", pid, now=NOW)
    reg.draw("E1", seed=1, now=NOW)
    table = TableCheckIn(reg, venue="cool_mule", table_id="T1", event_id="E1", verifier=CardVerifier(keys))
    pid_backend = reg.db.read().one("SELECT pg_backend_pid()")[0]
    with psycopg.connect(PG_URL, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid_backend,))
    uid1, uid2 = bytes([4, 0, 0, 0, 0, 0, 1]), bytes([4, 0, 0, 0, 0, 0, 2])
    first = table.on_tap(uid1, encode_card(uid1, "P1", keys), NOW)
    assert (first.accepted, first.reason) == (False, "registry_unavailable")
    second = table.on_tap(uid2, encode_card(uid2, "P2", keys), NOW)
    assert second.accepted and second.lines[0]["player"] == "P2"
    reg.close()
