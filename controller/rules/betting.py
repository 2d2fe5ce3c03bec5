"""What an action really was under the venue's rules: one pure function from (what was entered, what the
seat faced, the profile) to a ruling with the setting that decided it.

The input is the protocol's `action` line as its checked event (controller.rules.events.Action):
`action` (what the dealer or camera recorded), `to` (the seat's total for the round after it), `chips`
(the chip values pushed out, when the camera saw them) and `declared` (the verbal word and/or amount).
Verbal declarations: `"raise"`, `"call"`, `"check"`, `"bet"`, `"fold"`, `"allin"`; an amount alone
(`1000` or `"1000"`) is the same as silently pushing that many chips (bluff_street:35.c); `"raise 500"`
raises by 500 over the bet faced (`events.declared_parts`).
"""

from __future__ import annotations

import msgspec

from controller.rules.errors import Rejected
from controller.rules.events import Action, declared_parts
from controller.rules.profile import Profile


class Facing(msgspec.Struct, gc=False):
    """What one seat faces when it acts."""

    committed: int  # chips it already has in this round
    stack: int | None  # chips behind; None = not tracked (never all in)
    current: int  # the highest total of the round (pre-flop at least the big blind)
    min_raise: int  # the smallest legal raise increment now
    min_bet: int  # the smallest opening bet
    can_raise: bool  # False: betting not re-opened for it, or it may only call or fold
    restriction: str | None = None  # why it may not raise (setting key), when can_raise is False

    @property
    def to_call(self) -> int:
        return max(self.current - self.committed, 0)

    @property
    def most(self) -> int | None:
        """The largest total it can reach (all in), None when untracked."""
        return None if self.stack is None else self.committed + self.stack


class Ruling(msgspec.Struct, gc=False):
    kind: str  # fold | check | call | bet | raise, or "restricted" (check facing a bet: call or fold only)
    to: int  # the seat's total for the round after the action
    all_in: bool = False
    reason: str | None = None  # set when the ruling differs from what was entered
    setting: str | None = None  # the [betting] key whose rule decided it


def interpret(ev: Action, f: Facing, profile: Profile) -> Ruling:
    """Rule on one action. Raises Rejected for an action that cannot be taken (more than the stack)."""
    entered, chips, to_field = ev.action, ev.chips, ev.to
    word, said = (None, None) if ev.declared is None else declared_parts(ev.declared)
    # Verbal declarations take precedence over chips and over what was keyed in (cool_mule:7.c).
    kind = word or entered

    if kind == "fold":
        return Ruling("fold", f.committed)

    if kind == "check":
        if f.to_call == 0:
            return Ruling("check", f.committed)
        return Ruling("restricted", f.committed, reason="check_facing_bet", setting="check_facing_bet")

    if kind == "call":
        return _call(f, "call", to_field)

    # bet, raise, allin: find the total the chips or words amount to.
    most, to_call = f.most, f.to_call
    declared_raise = word in ("raise", "bet")
    setting: str | None = None
    reason: str | None = None
    if kind == "allin":
        if most is None:
            if to_field is None:
                raise Rejected("all in from a seat whose stack is not tracked needs 'to'")
            to = to_field
        else:
            if to_field is not None and to_field != most:
                raise Rejected(f"all in is to {most} (stack {f.stack} + {f.committed} in), not to {to_field}")
            to = most
    elif chips is not None and said is None:
        pushed = sum(chips)
        if to_call > 0 and not declared_raise:
            if len(chips) == 1:
                if chips[0] > to_call and (most is None or f.committed + chips[0] <= most):
                    return _call(f, entered, None, reason="oversized_chip", setting="oversized_chip")
            elif pushed > to_call and _multi_chip_is_call(
                chips, to_call, profile.value("betting", "multi_chip")
            ):
                return _call(f, entered, None, reason="multi_chip", setting="multi_chip")
        to = f.committed + pushed
        if len(chips) == 1 and f.current == 0:
            setting = "oversized_chip_opening"
        elif len(chips) == 1 and declared_raise:
            setting = "oversized_chip_declared_raise"
        elif len(chips) > 1 and to_call > 0:
            setting = "multi_chip"
    elif said is not None:
        to = f.current + said if word == "raise" and f.current > 0 else f.committed + said
    elif to_field is not None:
        to = to_field
    else:
        # "raise" or "bet" with no amount: the least it can be.
        to = f.current + f.min_raise if f.current > 0 else f.min_bet
        if most is not None:
            to = min(to, most)
        reason, setting = (
            ("raise_facing_no_bet", "raise_facing_no_bet") if f.current == 0 else ("min_raise", "min_raise")
        )

    if most is not None and to > most:
        raise Rejected(f"to {to} needs {to - f.committed} more chips but the stack is {f.stack}")
    if to <= f.committed:
        if to_call == 0:
            return Ruling(
                "check", f.committed, reason=f"{entered}_of_nothing_is_check", setting="call_facing_no_bet"
            )
        raise Rejected(f"to {to} is not more than the {f.committed} already in this round")
    all_in = most is not None and to == most

    if to <= f.current:  # not a raise: a call, an all-in call for less, or an undercall
        if to == f.current or all_in:
            return Ruling(
                "call",
                to,
                all_in,
                reason or (None if entered in ("call", "allin") else "amount_is_a_call"),
                setting or "min_raise",
            )
        return _call(f, entered, None, reason="undercall", setting="undercall")

    if f.current == 0:  # an opening bet
        if to < f.min_bet and not all_in:
            to = f.min_bet if most is None else min(f.min_bet, most)
            all_in = most is not None and to == most
            return Ruling("bet", to, all_in, "under_min_bet", "under_min_bet")
        if kind == "raise" and reason is None:
            reason, setting = "raise_facing_no_bet", "raise_facing_no_bet"
        return Ruling("bet", to, all_in, reason, setting)

    if not f.can_raise:
        capped = f.current if most is None else min(f.current, most)
        return Ruling(
            "call",
            capped,
            most is not None and capped == most,
            f.restriction or "betting_not_reopened",
            f.restriction or "reopen",
        )
    increment = to - f.current
    if increment < f.min_raise and not all_in:
        half = 2 * increment >= f.min_raise
        if profile.value("betting", "under_raise") == "more_than_half":
            half = 2 * increment > f.min_raise
        if half:
            full = f.current + f.min_raise
            if most is not None:
                full = min(full, most)
            return Ruling(
                "raise", full, most is not None and full == most, "under_raise_completed", "under_raise"
            )
        return _call(f, entered, None, reason="under_raise_called", setting="under_raise")
    if kind == "bet" and reason is None:
        reason, setting = "bet_facing_bet_is_raise", "min_raise"
    return Ruling("raise", to, all_in, reason, setting)


def _multi_chip_is_call(chips: tuple[int, ...], to_call: int, rule: str) -> bool:
    """bluff_street:37: a call when every chip is needed (removing one of the smallest leaves less than
    the call). dragons_den:33 also needs the chips to add to less than double the bet faced."""
    every_chip_needed = sum(chips) - min(chips) < to_call
    if rule == "less_than_double":
        return every_chip_needed and sum(chips) < 2 * to_call
    return every_chip_needed


def _call(
    f: Facing, entered: str, to_field: int | None, reason: str | None = None, setting: str | None = None
) -> Ruling:
    """The call (or check, facing no bet) the seat's chips allow: all in for less when short."""
    committed, stack, current = f.committed, f.stack, f.current
    if current <= committed:
        return Ruling("check", committed, reason="call_facing_no_bet", setting="call_facing_no_bet")
    most = None if stack is None else committed + stack
    to = current if most is None else min(current, most)
    all_in = most is not None and to == most
    if reason is None and to_field is not None and to_field < to and to_field > committed:
        reason, setting = "undercall", "undercall"
    if reason is None and entered not in ("call", "allin"):
        reason, setting = f"{entered}_is_call", "min_raise"
    return Ruling("call", to, all_in, reason, setting)


def reopened_for(
    rule: str, acted_level: int | None, last_full_level: int, current: int, min_raise: int
) -> bool:
    """May a seat that last acted when the bet stood at `acted_level` raise now?

    A seat that has not acted may always raise. Otherwise a full raise since then re-opens the betting
    (bar_league:Re-Opening Betting Action, cool_mule:7.q, dragons_den:31); Bluff Street also re-opens it
    when consecutive short all-ins together reach a full raise over what the seat faced (41.a). Corner
    Pocket counts an all-in of half a bet or more as a full bet when it is made (Betting.M).
    """
    if acted_level is None:
        return True
    if last_full_level > acted_level:
        return True
    return rule == "consecutive_short_allins" and current - acted_level >= min_raise
