"""What the panel shows: one light per seat (colour + effect) and the status text.

A Scene is the whole desired state of the panel, never a delta, so sending it again (after a
lost acknowledgement, a firmware reset or a pulled cable) always restores the panel exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from firmware_bridge.firmware import panelproto as proto

Color = tuple[int, int, int]

# The palette of the signal language; names appear in Scene.to_dict() and in docs/panel.md.
COLORS: dict[str, Color] = {
    "off": (0, 0, 0),
    "white": (255, 255, 255),
    "green": (0, 220, 60),
    "blue": (0, 90, 255),
    "dim_blue": (0, 30, 100),
    "yellow": (255, 200, 0),
    "purple": (150, 0, 220),
    "red": (255, 0, 0),
    "dark_red": (140, 0, 0),
    "orange": (255, 90, 0),
    "cyan": (0, 200, 255),
    "magenta": (255, 0, 140),
    "gold": (255, 150, 20),
}
_NAME_OF = {rgb: name for name, rgb in COLORS.items()}
EFFECTS = proto.EFFECT_NAMES  # off, solid, blink, pulse, chase, countdown


class SceneError(ValueError):
    """A scene description that cannot be shown; the message names the field."""


def parse_color(value: Any, where: str) -> Color:
    if isinstance(value, str):
        if value in COLORS:
            return COLORS[value]
        text = value.lstrip("#")
        if len(text) == 6:
            try:
                return (int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16))
            except ValueError:
                pass
        raise SceneError(f"{where}: colour {value!r} is neither a palette name nor #rrggbb")
    if (
        isinstance(value, (list, tuple))
        and len(value) == 3
        and all(isinstance(c, int) and not isinstance(c, bool) and 0 <= c <= 255 for c in value)
    ):
        return (value[0], value[1], value[2])
    raise SceneError(f"{where}: colour {value!r} must be a name, #rrggbb or [r, g, b] with 0..255")


def color_name(color: Color) -> str:
    return _NAME_OF.get(color, "#{:02x}{:02x}{:02x}".format(*color))


@dataclass(frozen=True)
class SeatLight:
    """One seat's segment. `period_ms` 0 means the effect's default; `seconds` is a countdown's
    length and `clock_id` tells two clock calls of the same length apart (a new call restarts)."""

    color: Color = (0, 0, 0)
    effect: str = "off"
    period_ms: int = 0
    seconds: int = 0
    clock_id: int = 0

    def __post_init__(self) -> None:
        if self.effect not in EFFECTS:
            raise SceneError(f"effect {self.effect!r} is not one of {', '.join(EFFECTS)}")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"color": color_name(self.color), "effect": self.effect}
        if self.period_ms:
            out["period_ms"] = self.period_ms
        if self.effect == "countdown":
            out["seconds"] = self.seconds
            if self.clock_id:
                out["clock_id"] = self.clock_id
        return out


OFF = SeatLight()


@dataclass(frozen=True)
class Scene:
    seats: tuple[SeatLight, ...]
    text: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def blank(cls, seats: int, text: str = "") -> Scene:
        return cls(tuple(OFF for _ in range(seats)), text)

    def seat(self, number: int) -> SeatLight:
        """The light of seat `number` (1-based, as players count)."""
        return self.seats[number - 1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": [{"seat": i + 1, **light.to_dict()} for i, light in enumerate(self.seats)],
            "text": self.text,
        }

    @classmethod
    def from_dict(cls, data: Any) -> Scene:
        if not isinstance(data, dict):
            raise SceneError("scene must be a JSON object with 'seats' and 'text'")
        seats = data.get("seats")
        if not isinstance(seats, list) or not 1 <= len(seats) <= proto.MAX_SEATS:
            raise SceneError(f"scene.seats must be a list of 1..{proto.MAX_SEATS} seats")
        lights = []
        for i, item in enumerate(seats):
            where = f"scene.seats[{i}]"
            if not isinstance(item, dict):
                raise SceneError(f"{where} must be an object")
            effect = item.get("effect", "solid")
            if effect not in EFFECTS:
                raise SceneError(f"{where}.effect {effect!r} is not one of {', '.join(EFFECTS)}")
            period = item.get("period_ms", 0)
            seconds = item.get("seconds", 0)
            for name, value, top in (("period_ms", period, 65535), ("seconds", seconds, 6553)):
                if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= top:
                    raise SceneError(f"{where}.{name} must be an integer 0..{top}, got {value!r}")
            clock_id = item.get("clock_id", 0)
            if not isinstance(clock_id, int) or isinstance(clock_id, bool) or clock_id < 0:
                raise SceneError(f"{where}.clock_id must be an integer >= 0, got {clock_id!r}")
            lights.append(
                SeatLight(
                    parse_color(item.get("color", "off"), f"{where}.color"), effect, period, seconds, clock_id
                )
            )
        text = data.get("text", "")
        if not isinstance(text, str):
            raise SceneError("scene.text must be a string")
        return cls(tuple(lights), clip_text(text))

    def to_payload(self, remaining_s: dict[int, float] | None = None) -> bytes:
        """The SCENE message payload. `remaining_s` maps a 0-based seat index to the seconds its
        countdown has left (default: the full length), so a resend does not restart a clock."""
        records = []
        for i, light in enumerate(self.seats):
            code = EFFECTS.index(light.effect)
            if light.effect == "countdown":
                total = light.seconds * 10
                left = total if remaining_s is None or i not in remaining_s else round(remaining_s[i] * 10)
                records.append((*light.color, code, max(0, min(left, total)), total))
            else:
                records.append((*light.color, code, light.period_ms, 0))
        return proto.scene_payload(records, clip_text(self.text))


def clip_text(text: str) -> str:
    """Status text as the display can take it: at most MAX_TEXT UTF-8 bytes, cut on a character."""
    data = text.encode("utf-8")
    if len(data) <= proto.MAX_TEXT:
        return text
    return data[: proto.MAX_TEXT].decode("utf-8", "ignore")
