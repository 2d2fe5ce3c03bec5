"""A tournament's structure: levels (blinds, ante, duration), breaks and colour-ups, from TOML.

Pure: parsing and defaults only. Each rulebook's own structure where it prints one (Corner Pocket's
level table, `corner_pocket:Going up in Levels`), else the venue gives one in its floor config. Every
problem names the level and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class StructureError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Level:
    """One step of the clock: a level of play (`number` >= 1) or a break (`number` 0)."""

    number: int
    sb: int
    bb: int
    ante: int
    seconds: float
    is_break: bool = False
    colour_up: str | None = None  # chips taken out of play when this step begins

    @property
    def label(self) -> str:
        if self.is_break:
            return "Break"
        return f"Level {self.number}"

    @property
    def blinds_text(self) -> str:
        if self.is_break:
            return "break"
        return f"{self.sb}/{self.bb}" + (f" ante {self.ante}" if self.ante else "")


@dataclass(frozen=True, slots=True)
class Structure:
    levels: tuple[Level, ...]
    source: str  # where the structure comes from: a rule citation or the venue's config file

    def play_level(self, index: int) -> Level | None:
        """The level of play in force at step `index` (during a break: the one before it)."""
        for i in range(min(index, len(self.levels) - 1), -1, -1):
            if not self.levels[i].is_break:
                return self.levels[i]
        return None

    def next_play_level(self, index: int) -> Level | None:
        for lvl in self.levels[index + 1 :]:
            if not lvl.is_break:
                return lvl
        return None


# corner_pocket:Going up in Levels (the level table): the Time column counts the clock from the
# start (15min, 30min, ... 3hr 15min), so every level lasts 15 minutes. The Color Up column names the
# chips taken out when that level begins.
CORNER_POCKET_LEVELS = (
    (50, 100, 0, None),
    (100, 200, 0, "Red Out"),
    (250, 500, 0, None),
    (500, 1000, 0, None),
    (750, 1500, 0, "White Out"),
    (1000, 2000, 0, None),
    (1500, 3000, 0, None),
    (2000, 4000, 500, "Green Out"),
    (2500, 5000, 1000, None),
    (5000, 10000, 2000, None),
    (10000, 20000, 3000, "Black"),
    (15000, 30000, 5000, None),
    (30000, 60000, 10000, None),
)

# For venues whose rulebook prints no structure (the floor config should give one): 20-minute levels.
GENERIC_LEVELS = (
    (25, 50, 0),
    (50, 100, 0),
    (75, 150, 0),
    (100, 200, 0),
    (150, 300, 0),
    (200, 400, 50),
    (300, 600, 75),
    (400, 800, 100),
    (500, 1000, 100),
    (600, 1200, 200),
    (800, 1600, 200),
    (1000, 2000, 300),
)


def default_structure(profile: str) -> Structure:
    if profile == "corner_pocket":
        levels = tuple(
            Level(i, sb, bb, ante, 15 * 60, colour_up=up)
            for i, (sb, bb, ante, up) in enumerate(CORNER_POCKET_LEVELS, start=1)
        )
        return Structure(levels, "corner_pocket:Going up in Levels")
    levels = tuple(
        Level(i, sb, bb, ante, 20 * 60) for i, (sb, bb, ante) in enumerate(GENERIC_LEVELS, start=1)
    )
    return Structure(levels, f"{profile}: the rulebook prints no structure; the floor's generic one")


def _int(entry: dict[str, Any], key: str, where: str, default: int | None = None) -> int:
    value = entry.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise StructureError(f"{where}: '{key}' must be a whole number >= 0, got {value!r}")
    return value


def parse_structure(raw: Any, source: str = "floor config") -> Structure:
    """`[[structure.levels]]` entries: `sb`, `bb`, `ante`?, `minutes` (or `seconds`), `colour_up`?;
    a break is `{ break = true, minutes = 10, colour_up = "..." }`."""
    if not isinstance(raw, list) or not raw:
        raise StructureError("structure.levels: expected a non-empty list of levels")
    levels: list[Level] = []
    number = 0
    for i, entry in enumerate(raw, start=1):
        where = f"structure.levels[{i}]"
        if not isinstance(entry, dict):
            raise StructureError(f"{where}: expected a table, got {type(entry).__name__}")
        unknown = sorted(set(entry) - {"sb", "bb", "ante", "minutes", "seconds", "break", "colour_up"})
        if unknown:
            raise StructureError(f"{where}: unknown field(s) {', '.join(unknown)}")
        if "minutes" in entry and "seconds" in entry:
            raise StructureError(f"{where}: give 'minutes' or 'seconds', not both")
        length = entry.get("seconds", entry.get("minutes"))
        if not isinstance(length, int | float) or isinstance(length, bool) or length <= 0:
            raise StructureError(
                f"{where}: 'minutes' (or 'seconds') must be a positive number, got {length!r}"
            )
        seconds = float(length) if "seconds" in entry else float(length) * 60
        colour_up = entry.get("colour_up")
        if colour_up is not None and not isinstance(colour_up, str):
            raise StructureError(f"{where}: 'colour_up' must be text, got {colour_up!r}")
        is_break = entry.get("break", False)
        if not isinstance(is_break, bool):
            raise StructureError(f"{where}: 'break' must be true or false")
        if is_break:
            if "sb" in entry or "bb" in entry:
                raise StructureError(f"{where}: a break has no blinds")
            levels.append(Level(0, 0, 0, 0, seconds, True, colour_up))
            continue
        sb, bb = _int(entry, "sb", where), _int(entry, "bb", where)
        ante = _int(entry, "ante", where, 0)
        if not 0 < sb <= bb:
            raise StructureError(f"{where}: blinds {sb}/{bb}: need 0 < sb <= bb")
        number += 1
        levels.append(Level(number, sb, bb, ante, seconds, False, colour_up))
    if number == 0:
        raise StructureError("structure.levels: only breaks, no level of play")
    if levels[0].is_break:
        raise StructureError("structure.levels[1]: the clock cannot start on a break")
    return Structure(tuple(levels), source)
