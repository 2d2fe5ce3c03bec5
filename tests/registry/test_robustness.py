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
