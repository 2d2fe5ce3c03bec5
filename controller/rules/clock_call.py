"""When a clock may be called on a player, where the book gives a measure (bar_league:Calling a Clock:
"A 'reasonable' amount of time is defined as 1/10th of the total duration of the current blind
level"). The length of the level comes from the `level` line's optional `minutes` (an addition to
the spec's vocabulary, filled by the floor's level push); without it the table cannot say, and the
`clock` line carries no measure. The table cannot time a player's turn (a camera sees no decision
begin), so it says the measure and the floor applies it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from controller.rules.errors import Rejected
from controller.rules.events import Clock, ClockLine, DeadHand, OutputLine, TimeExpired

if TYPE_CHECKING:
    from controller.rules.engine import Hand
    from controller.rules.profile import Profile


def reasonable_seconds(profile: Any, level_minutes: int | None) -> dict[str, int]:
    """`{"reasonable_seconds": n}` for a `clock` line: the time a player in turn is given before a
    clock may be called, where the profile measures it (`conduct.clock_call_after`); else `{}`."""
    if profile.value("conduct", "clock_call_after") != "tenth_of_level" or not level_minutes:
        return {}
    return {"reasonable_seconds": level_minutes * 60 // 10}


class ClockCalls:
    """The clock on a player and its expiry (mixed into `TableEngine`, whose state it keeps): the
    venue's length and countdown, the measure of a reasonable time where the book gives one, and the
    dead hand when it runs out."""

    profile: Profile

    def _current(self, what: str) -> Hand:  # (TableEngine's)
        raise NotImplementedError

    def rule_clock(self, ev: Clock, n: int) -> list[OutputLine]:
        """A clock called on a seat holding a live hand."""
        h = self._current("clock")
        if ev.seat not in h.play.live:
            raise Rejected(f"seat {ev.seat} holds no live hand to put on the clock")
        line = self._clock_line(ev.seat, ev.seconds)
        measure = reasonable_seconds(self.profile, h.level.minutes)
        return [msgspec.structs.replace(line, **measure) if measure else line]

    def _clock_line(self, seat: int, seconds: int | None) -> ClockLine:
        """A clock on `seat`: the venue's length unless the director gave one, and its countdown
        (bar_league:Calling a Clock 40 s, cool_mule:12.i 60 s, bluff_street:25 30 s, ...)."""
        conduct = self.profile.settings["conduct"]
        length = conduct["clock_seconds"]
        countdown = conduct["clock_countdown_seconds"].value
        seconds = seconds or length.value
        return ClockLine(seat=seat, seconds=seconds, countdown=min(countdown, seconds), rule=length.rule)

    def rule_time_expired(self, ev: TimeExpired, n: int) -> list[OutputLine]:
        """The clock ran out: the hand is dead (the venue's clock rule)."""
        h = self._current("time_expired")
        if ev.seat not in h.play.live:
            raise Rejected(f"seat {ev.seat} holds no live hand")
        line = DeadHand(seat=ev.seat, reason="clock", rule=self.profile.rule("conduct", "clock_expired"))
        return [line, *h.play.kill(ev.seat, "clock")]
