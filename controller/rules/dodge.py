"""Dodging the big blind when moving from a broken table (cool_mule:6.f, dragons_den:25).

"Any player who intentionally dodges any blind when moving from a broken table will incur a penalty"
(cool_mule:6.f; dragons_den:25 the same, "Refer to Rule #40"). At the new table the dodge looks like
this: the seat kept for the moved player was empty when a hand was dealt, so the big blind jumped
over it, and he sits down after that deal. Had he come at once he would have posted that big blind.
The table cannot see intent: it flags the seat for the director (a `blind_dodge` line with
`broken_table: true`), and deals him in only where his book says a moved player may play
(cool_mule:12.k, dragons_den:5: never between the small blind and the button, so he waits for the
button to pass). Pure: reads the engine's seats and the hand the big blind skipped him in.
"""

from __future__ import annotations

from typing import Any

from controller.rules.events import BlindDodge, OutputLine
from controller.rules.seating import strictly_between


def broken_table_dodge(engine: Any, seat: int, player_id: str) -> list[OutputLine]:
    """A moved player (`seat` with `moved: true`) just sat at `seat`: the `blind_dodge` line when the
    big blind skipped this seat in the hand dealt last (or being played), where the profile says so
    (`seating.blind_dodge = "flag_broken_table"`); else nothing."""
    if engine.profile.value("seating", "blind_dodge") != "flag_broken_table":
        return []
    hand = engine.hand
    last = hand.positions if hand is not None else engine.previous
    if last is None or last.heads_up:
        return []
    if seat not in strictly_between(last.sb_position, last.bb, engine.seats):
        return []  # the big blind has not passed this seat yet: he will post it
    line = BlindDodge(
        seat=seat,
        from_=None,
        player=player_id,
        broken_table=True,
        skipped_bb_in_hand=engine.hand_number,
        rule=engine.profile.rule("seating", "blind_dodge"),
    )
    engine.alerts.append(line)
    return [line]
