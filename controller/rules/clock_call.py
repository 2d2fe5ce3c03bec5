"""When a clock may be called on a player, where the book gives a measure (bar_league:Calling a Clock:
"A 'reasonable' amount of time is defined as 1/10th of the total duration of the current blind
level"). The length of the level comes from the `level` line's optional `minutes` (an addition to
the spec's vocabulary, filled by the floor's level push); without it the table cannot say, and the
`clock` line carries no measure. The table cannot time a player's turn (a camera sees no decision
begin), so it says the measure and the floor applies it."""

from __future__ import annotations

from typing import Any


def reasonable_seconds(profile: Any, level_minutes: int | None) -> dict[str, int]:
    """`{"reasonable_seconds": n}` for a `clock` line: the time a player in turn is given before a
    clock may be called, where the profile measures it (`conduct.clock_call_after`); else `{}`."""
    if profile.value("conduct", "clock_call_after") != "tenth_of_level" or not level_minutes:
        return {}
    return {"reasonable_seconds": level_minutes * 60 // 10}
