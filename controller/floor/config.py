"""The floor's configuration (`venue.toml`): venue, event, tables, broker, web page, structure, prizes.

Every setting has a default that works on one machine (SQLite registry in the working folder, a
broker on 127.0.0.1:1883, the page on 127.0.0.1:8080). A wrong setting is refused with its name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.floor.structure import Structure, StructureError, default_structure, parse_structure
from controller.mqtt.link import BrokerConfig
from controller.registry.policy import PROFILES
from controller.tomlfile import TomlFileError, read_toml

NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class FloorConfigError(ValueError):
    pass


def _floor_broker() -> BrokerConfig:
    """The floor has no embedded broker: it reaches the venue's Mosquitto, on this machine by default."""
    return BrokerConfig(host="127.0.0.1")


@dataclass(frozen=True)
class FloorConfig:
    venue: str
    event: str
    profile: str
    tables: tuple[str, ...]
    breaking_order: tuple[str, ...]
    seats: int = 10
    registry: str = "sqlite:///registry.sqlite3"
    broker: BrokerConfig = field(default_factory=_floor_broker)
    web_bind: str = "127.0.0.1"
    web_port: int = 8080
    web_password_file: str = ""  # the director's page login (mode 0600); required off loopback
    structure: Structure | None = None
    payouts: tuple[int, ...] | None = None
    points: tuple[int, ...] | None = None
    clock_start: str = "first_deal"  # or "manual"
    entrants: int | None = None  # default: the event's registrations

    def the_structure(self) -> Structure:
        return self.structure or default_structure(self.profile)


def _str(section: dict[str, Any], key: str, where: str, default: str) -> str:
    value = section.get(key, default)
    if not isinstance(value, str):
        raise FloorConfigError(f"{where}.{key}: expected text, got {value!r}")
    return value


def _int(section: dict[str, Any], key: str, where: str, default: int, lo: int, hi: int) -> int:
    value = section.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise FloorConfigError(f"{where}.{key}: expected a whole number {lo}..{hi}, got {value!r}")
    return value


def _ints(value: Any, where: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value
    ):
        raise FloorConfigError(f"{where}: expected a list of whole numbers >= 0, got {value!r}")
    return tuple(value)


def parse_floor_config(raw: dict[str, Any], source: str = "venue.toml") -> FloorConfig:
    known = {"floor", "broker", "web", "structure", "payouts", "points", "registry"}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise FloorConfigError(f"{source}: unknown section(s) {', '.join(unknown)}")
    floor = raw.get("floor", {})
    venue = _str(floor, "venue", "floor", "demo")
    event = _str(floor, "event", "floor", "event-1")
    for key, value in (("venue", venue), ("event", event)):
        if not NAME_RE.match(value):
            raise FloorConfigError(f"floor.{key}: {value!r}: letters, digits, '_', '.', '-' only")
    profile = _str(floor, "profile", "floor", "cool_mule")
    if profile not in PROFILES:
        raise FloorConfigError(f"floor.profile: {profile!r} is not one of {', '.join(PROFILES)}")
    tables = floor.get("tables", ["table-1"])
    if (
        not isinstance(tables, list)
        or not tables
        or not all(isinstance(t, str) and NAME_RE.match(t) for t in tables)
    ):
        raise FloorConfigError(f"floor.tables: expected a list of table ids, got {tables!r}")
    if len(set(tables)) != len(tables):
        raise FloorConfigError("floor.tables: a table is listed twice")
    order = floor.get("breaking_order", list(reversed(tables)))
    if not isinstance(order, list) or sorted(order) != sorted(tables):
        raise FloorConfigError(
            f"floor.breaking_order: must list the same tables as floor.tables, got {order!r}"
        )
    clock_start = _str(floor, "clock_start", "floor", "first_deal")
    if clock_start not in ("first_deal", "manual"):
        raise FloorConfigError(f"floor.clock_start: 'first_deal' or 'manual', got {clock_start!r}")
    entrants = floor.get("entrants")
    if entrants is not None and (not isinstance(entrants, int) or entrants < 1):
        raise FloorConfigError(f"floor.entrants: expected a positive whole number, got {entrants!r}")
    b = raw.get("broker", {})
    broker = BrokerConfig(
        host=_str(b, "host", "broker", "127.0.0.1"),
        port=_int(b, "port", "broker", 1883, 1, 65535),
        username=_str(b, "username", "broker", ""),
        password_file=_str(b, "password_file", "broker", ""),
        client_id=_str(b, "client_id", "broker", f"floor-{venue}"),
    )
    w = raw.get("web", {})
    structure = None
    if "structure" in raw:
        try:
            structure = parse_structure(raw["structure"].get("levels"), f"{source} [structure]")
        except StructureError as exc:
            raise FloorConfigError(str(exc)) from None
    reg = raw.get("registry", {})
    return FloorConfig(
        venue=venue,
        event=event,
        profile=profile,
        tables=tuple(tables),
        breaking_order=tuple(order),
        seats=_int(floor, "seats", "floor", 10, 2, 12),
        registry=_str(reg, "url", "registry", "sqlite:///registry.sqlite3"),
        broker=broker,
        web_bind=_str(w, "bind", "web", "127.0.0.1"),
        web_port=_int(w, "port", "web", 8080, 0, 65535),
        web_password_file=_str(w, "password_file", "web", ""),
        structure=structure,
        payouts=_ints(raw.get("payouts", {}).get("places"), "payouts.places"),
        points=_ints(raw.get("points", {}).get("table"), "points.table"),
        clock_start=clock_start,
        entrants=entrants,
    )


def load_floor_config(path: str | Path) -> FloorConfig:
    try:
        raw = read_toml(path)
    except TomlFileError as exc:
        raise FloorConfigError(str(exc)) from None
    return parse_floor_config(raw, str(path))
