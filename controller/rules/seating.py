"""Seats, players, and where the button and blinds go: the dead-button rule as a pure function.

The dead button (cool_mule:10, bar_league:Dead Button, dragons_den:24, corner_pocket:Blinds.D-G,
bluff_street:30) in three lines:

* the big blind always advances to the next player due (the next live seat after last hand's BB);
* the small-blind position is last hand's big-blind seat (no small blind is posted if it is empty);
* the button position is last hand's small-blind position (a dead button if that seat is empty).

So no player ever misses a blind through eliminations. Heads-up the button posts the small blind and
the other player the big blind, which is simply "the big blind goes to the player who did not have
it", so nobody posts the big blind twice in a row at the switch (bluff_street:32, dragons_den:26).
"""

from __future__ import annotations

import msgspec

from controller.rules.profile import Profile


class Player(msgspec.Struct):
    id: str
    stack: int | None
    moved: bool = False  # came from another table of the event (has been dealt hands before)
    dealt: bool = False  # has been dealt a hand in this event (moved players count as dealt)
    away: bool = False
    seated_hand: int = 0  # the number of the last hand started before the player sat down
    penalty_hands: int = 0  # hands still to sit away under a director's penalty

    @property
    def busted(self) -> bool:
        return self.stack is not None and self.stack <= 0

    def hand_dealt(self) -> None:
        """A hand this player was dealt in has ended: they count as dealt, and a penalty has one hand
        fewer to run; served, they are back (dragons_den:40)."""
        self.dealt = True
        if self.penalty_hands > 0:
            self.penalty_hands -= 1
            if self.penalty_hands == 0:
                self.away = False


class Positions(msgspec.Struct):
    """Where everything is for one hand: the `hand` output line, less the hand number. Read-only once
    built (a msgspec Struct, built in C: one per hand)."""

    button: int
    sb: int | None
    bb: int
    dead_button: bool
    dead_sb_seat: int | None
    dealer: int
    first_card: int
    dealt_in: tuple[int, ...]
    sitting_out: tuple[tuple[int, str], ...] = ()
    heads_up: bool = False
    rules: dict[str, str] = msgspec.field(default_factory=dict)  # which citation decided what

    @property
    def sb_position(self) -> int:
        """The seat holding the small-blind position, posted or dead."""
        return self.sb if self.sb is not None else (self.dead_sb_seat or self.button)


def clockwise(start: int, seats: int) -> list[int]:
    """Seats after `start`, clockwise, ending with `start` itself."""
    if 0 < start <= seats:
        return [*range(start + 1, seats + 1), *range(1, start + 1)]
    return [(start + i - 1) % seats + 1 for i in range(1, seats + 1)]


def strictly_between(a: int, b: int, seats: int) -> list[int]:
    """Seats strictly after `a` and before `b`, going clockwise."""
    out = []
    s = a % seats + 1
    while s != b:
        out.append(s)
        s = s % seats + 1
    return out


class PositionError(Exception):
    pass


def first_button_seat(profile: Profile, occupied: list[int], seats: int) -> int:
    """The first hand's button without a `button` line: seat 1 (cool_mule:4.a, corner_pocket) or the
    first stack to the dealer's right, i.e. the highest occupied seat (bluff_street:30)."""
    if profile.value("seating", "first_button") == "seat_1":
        return min(occupied)
    return max(occupied)


def _dealing_order(button: int, dealt: set[int], seats: int, heads_up: bool, bb: int) -> tuple[int, ...]:
    if heads_up:
        # The last card goes to the button (bluff_street:32): the big blind gets the first.
        start = bb
        order = [s for s in clockwise(start - 1 if start > 1 else seats, seats) if s in dealt]
        return tuple(order)
    return tuple([s for s in clockwise(button, seats) if s in dealt])


def _dealer_seat(button: int, dealt: set[int], seats: int) -> int:
    """The button deals a self-dealt game; with a dead button, the nearest player to its right
    (cool_mule:10.b)."""
    s = button
    for _ in range(seats):
        if s in dealt:
            return s
        s = s - 1 if s > 1 else seats
    return button


def _positions(
    button: int,
    sb_position: int,
    bb: int,
    dealt: set[int],
    seats: int,
    rules: dict[str, str],
    sitting: dict[int, str] | None = None,
    heads_up: bool = False,
    order: tuple[int, ...] | None = None,
) -> Positions:
    """The one place a hand's positions are assembled: the small blind is posted only when its seat is
    dealt in, the button is dead when its seat is not, and the dealer and dealing order follow (`order`:
    the dealing order when the caller has it already)."""
    sb = sb_position if sb_position in dealt else None
    if order is None:
        order = _dealing_order(button, dealt, seats, heads_up, bb)
    return Positions(
        button,  # button
        sb,  # sb
        bb,  # bb
        button not in dealt,  # dead_button
        None if sb is not None else sb_position,  # dead_sb_seat
        button if button in dealt else _dealer_seat(button, dealt, seats),  # dealer
        order[0],  # first_card
        order,  # dealt_in
        tuple(sorted(sitting.items())) if sitting else (),  # sitting_out
        heads_up,
        rules,
    )


def compute_positions(
    profile: Profile,
    seats: int,
    players: dict[int, Player],
    previous: Positions | None,
    forced_button: int | None,
    hand_number: int,
) -> Positions:
    """Positions for the next hand. `previous` is the last hand dealt (None at the start of the
    event); `forced_button` comes from a `button` line (event start or redraw)."""
    live = {s for s, p in players.items() if p.stack is None or p.stack > 0}  # not busted
    if len(live) < 2:
        raise PositionError(f"a hand needs at least two players with chips; seated: {sorted(live) or 'none'}")
    rules: dict[str, str] = {"button": profile.rule("seating", "dead_button")}

    if previous is None or forced_button is not None:
        return _fresh_positions(profile, seats, live, forced_button, rules)

    if len(live) == 2:
        return _heads_up(profile, seats, live, previous, rules)

    sitting: dict[int, str] = {}
    sb_pos = previous.bb
    button_pos = previous.sb_position
    # Seats strictly between the button and the small blind: a player arriving there would skip
    # both blinds, so waits for the button to pass (cool_mule:12.k, bluff_street:11, dragons_den:5).
    for s in strictly_between(button_pos, sb_pos, seats):
        if s in live:
            p = players[s]
            if not p.dealt and not p.moved:
                setting = "new_player_between_sb_and_button"
            else:
                setting = "moved_player_between_sb_and_button"
            if profile.value("seating", setting) == "sit_out":
                sitting[s] = "between_sb_and_button"
                rules[f"sit_out:{s}"] = profile.rule("seating", setting)
    # A player never dealt a hand may not be dealt into a dead button or dead small-blind position
    # (bar_league:New Player Placement): those seats were empty when the position reached them.
    if profile.value("seating", "new_player_dead_position") == "sit_out":
        for s in (button_pos, sb_pos):
            p = players.get(s)
            if s in live and p is not None and not p.dealt and not p.moved and s not in sitting:
                sitting[s] = "new_player_dead_position"
                rules[f"sit_out:{s}"] = profile.rule("seating", "new_player_dead_position")

    eligible = live - set(sitting)
    if len(eligible) < 2:
        # Only waiting players are left to play with: they come in now rather than stop the game.
        sitting, eligible = {}, set(live)
    # The big blind advances to the next player due.
    bb = next((s for s in clockwise(previous.bb, seats) if s in eligible and s != previous.bb), None)
    if bb is None or len(eligible) < 2:
        raise PositionError("fewer than two players can be dealt in this hand")
    if len(eligible) == 2:
        # Everyone else sits out: play it heads-up between the two who can be dealt in.
        return _heads_up(profile, seats, eligible, previous, rules, sitting)
    if bb in (button_pos, sb_pos):
        # The positions collapsed (coming out of heads-up, or new players filled the gap between
        # the blinds): keep the big blind where it is due and seat the small blind and button behind it.
        sb_pos = _previous_seat(bb, eligible, seats)
        button_pos = _previous_seat(sb_pos, eligible, seats)
        sitting = {s: r for s, r in sitting.items() if s not in (sb_pos, button_pos)}
        eligible = live - set(sitting)
    return _positions(button_pos, sb_pos, bb, set(eligible), seats, rules, sitting)


def _previous_seat(seat: int, among: set[int], seats: int) -> int:
    s = seat
    for _ in range(seats):
        s = s - 1 if s > 1 else seats
        if s in among:
            return s
    return seat


def _fresh_positions(
    profile: Profile, seats: int, live: set[int], forced: int | None, rules: dict[str, str]
) -> Positions:
    if forced is None:
        button = first_button_seat(profile, sorted(live), seats)
        rules["button"] = profile.rule("seating", "first_button")
    else:
        button = forced
    if len(live) == 2:
        if button not in live:
            button = next(s for s in clockwise(button, seats) if s in live)
        bb = next(s for s in live if s != button)
        rules["button"] = profile.rule("seating", "heads_up_button_posts_sb")
        return _positions(button, button, bb, live, seats, rules, heads_up=True)
    after = [s for s in clockwise(button, seats) if s in live and s != button]
    # The dealing order is the same walk from the button's left, ending with the button if it is dealt in.
    order = (*after, button) if button in live else tuple(after)
    return _positions(button, after[0], after[1], live, seats, rules, order=order)


def _heads_up(
    profile: Profile,
    seats: int,
    live: set[int],
    previous: Positions,
    rules: dict[str, str],
    sitting: dict[int, str] | None = None,
) -> Positions:
    """Heads-up: the big blind goes to the player due (the one after last hand's big blind), the other
    player has the button and posts the small blind (bluff_street:32, cool_mule:6.g)."""
    bb = (
        next(s for s in clockwise(previous.bb, seats) if s in live and s != previous.bb)
        if len(live) > 1
        else None
    )
    if bb is None:
        raise PositionError("fewer than two players can be dealt in this hand")
    button = next(s for s in live if s != bb)
    rules["button"] = profile.rule("seating", "heads_up_no_double_bb")
    return _positions(button, button, bb, live, seats, rules, sitting, heads_up=True)
