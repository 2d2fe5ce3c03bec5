"""Fixtures for the floor: a real Mosquitto on a free port, a registry event with drawn seats and
players with real signed cards, simulated tables on the broker, the floor service in-process."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from controller.floor.config import parse_floor_config
from controller.mqtt.mosquitto import Mosquitto, free_port
from controller.registry.card import CardVerifier, encode_card
from controller.registry.checkin import TableCheckIn
from controller.registry.draw import TableSpec
from controller.registry.keys import create_key_file, load_keys
from controller.registry.registry import Registry
from tests.registry.conftest import NOW, db_url, pg_url  # noqa: F401  (SQLite and PostgreSQL fixtures)
from tests.service.conftest import mosquitto  # noqa: F401  (a Mosquitto of our own on a free port)

VENUE = "den"


def uid_for(n: int) -> bytes:
    return bytes([4, 0, 0, 0, 2, n // 256, n % 256])


class Venue:
    """An event of `players` registered members over `tables` tables of `seats` seats, seats drawn."""

    def __init__(
        self, tmp_path: Path, profile: str, tables: list[str], seats: int, players: int, stack: int = 10000
    ):
        self.url = f"sqlite:///{tmp_path / 'registry.sqlite3'}"
        self.registry = Registry.open(self.url)
        create_key_file(tmp_path / "keys.toml", VENUE, "k1")
        self.keys = load_keys(tmp_path / "keys.toml")
        self.profile, self.tables, self.seats = profile, tables, seats
        self.registry.open_event(
            "E1",
            "Tuesday",
            venue=VENUE,
            profile=profile,
            starts_at=NOW,
            tables=[TableSpec(t, seats) for t in tables],
            now=NOW,
            starting_stack=stack,
            min_age=18,
        )
        self.players = [f"P{n}" for n in range(1, players + 1)]
        for n, pid in enumerate(self.players, start=1):
            self.registry.add_member(
                pid, f"Player {n}", NOW.date().replace(year=1990), now=NOW, photo_id_checked=True
            )
            self.registry.issue_card(uid_for(n), pid, VENUE, self.keys.current, now=NOW)
            self.registry.register("E1", pid, now=NOW)
        self.registry.draw("E1", seed=7, now=NOW)

    def checkin(self, table: str) -> TableCheckIn:
        return TableCheckIn(
            Registry.open(self.url),
            venue=VENUE,
            table_id=table,
            event_id="E1",
            verifier=CardVerifier(self.keys),
        )

    def card(self, pid: str) -> tuple[bytes, bytes]:
        n = self.players.index(pid) + 1
        return uid_for(n), encode_card(uid_for(n), pid, self.keys)

    def floor_config(self, broker: Mosquitto, levels: list[dict[str, Any]], **floor: Any):
        raw = {
            "floor": {
                "venue": VENUE,
                "event": "E1",
                "profile": self.profile,
                "tables": self.tables,
                "seats": self.seats,
                "clock_start": "manual",
                **floor,
            },
            "registry": {"url": self.url},
            "broker": {"host": "127.0.0.1", "port": broker.port, "client_id": "floor-test"},
            "web": {"port": free_port()},
            "structure": {"levels": levels},
        }
        return parse_floor_config(raw, "test")


async def wait_for(predicate, timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll until `predicate()` is truthy (the broker and the floor run in this same loop)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while loop.time() < end:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


@contextlib.asynccontextmanager
async def running_floor(cfg):
    from controller.floor.service import FloorService

    service = FloorService(cfg)
    stop = asyncio.Event()
    task = asyncio.create_task(service.run(stop))
    try:
        await wait_for(lambda: service.connected, what="the floor's broker connection")
        yield service
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
