"""One No-Limit Hold'em hand after the deal: turn order, betting rounds, the board, pots and the award.

The table engine (controller/rules/engine.py) creates a `HandPlay` at `hand_start` and hands it the
`action`, `burn`, `board`, `show`, `muck` and `hand_end` lines of that hand. Everything here is pure and
synchronous: no I/O, no clock, no randomness, so replaying the same lines gives the same rulings.

Every method either returns the output lines it causes (dicts as ../shared/spec/table-events.md defines
them, each ruling with `rule`, the profile's citation) or raises `Rejected` and leaves the hand exactly
as it was: all checks run before the first change.

Here: the forced bets, the turn order and the betting actions (`rule_action`, in and out of turn). The end
of each betting round, the board and the showdown are `controller.rules.hand_end.BoardAndShowdown`'s,
mixed in. The engine calls the typed methods (`rule_action(Action)`, `deal_board(cards)`, ...); `action`,
`board`, `show`, `muck`, `burn` and `finish` take a line as a dict, checked by `controller.rules.events`,
and give dicts, for the PHH replay and the tests that play a hand alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.rules import events
from controller.rules.betting import Facing, Ruling, interpret, reopened_for
from controller.rules.errors import Rejected
from controller.rules.events import Action, ActionLimited, ActionRuled, OutOfTurn, OutputLine, to_line
from controller.rules.hand_end import BoardAndShowdown
from controller.rules.pots import Pot, build_pots, clockwise_from_button
from controller.rules.profile import Profile

# (dealt-in seats, button, table size) -> (turn order, {seat: dealt-in seats clockwise after it}): pure
# functions of the key, kept for the hands that share it (see `HandPlay.__init__`). Read-only lists.
_TURN_ORDERS: dict[tuple, tuple[list[int], dict[int, list[int]]]] = {}
_NEXT = {"preflop": "flop", "flop": "turn", "turn": "river", "river": "showdown"}


@dataclass(slots=True)
class HandSetup:
    """How a hand starts. Read-only once built (not a frozen dataclass only because those are slower to
    build, and one is built per hand)."""

    number: int
    button: int  # seat of the button (may be an empty seat: dead button)
    sb_seat: int | None  # None when no small blind is posted (dead small blind)
    bb_seat: int
    dealt_in: list[int]  # seats receiving cards, in dealing order
    stacks: dict[int, int | None]  # chips at hand start; None = not tracked (never all in)
    sb: int
    bb: int
    ante: int
    seats: int  # table size N (seats 1..N clockwise)
    heads_up: bool
    big_blind_ante: bool = False  # the big blind pays one ante for the table (`level` field `big_blind_ante`)
    prior_offences: frozenset[int] = field(
        default_factory=frozenset
    )  # seats already warned for acting out of turn
    # Nobody enters the actions (spec: `actions: observed`): no betting round is modelled, so nothing is
    # ruled for want of action or burn lines, and no pot is built from chips never seen.
    observed: bool = False


class HandPlay(BoardAndShowdown):
    """The state of one hand from the blinds to the award. Read-only attributes for the engine:
    `stacks`, `acted`, `street`, `to_act`, `live`, `board_cards`, `pots()`."""

    # Fixed attributes: a hand has about forty, more than CPython shares the keys of in an instance
    # dict, so with a dict every read of one would be a hashed lookup; slots are read at a fixed offset.
    __slots__ = (
        "_cards_out", "_clockwise_after", "_live", "_min_raise_rule", "_out_of_turn_mode", "_reopen", "acted",
        "acted_level", "all_in", "antes", "board_cards", "burns", "button", "current", "dead", "finished",
        "first_to_act", "folded", "history", "last_aggressor", "last_caller", "last_full_level", "min_raise",
        "n", "no_burn_next", "observed", "offences", "order", "pending", "profile", "restricted", "round_in",
        "round_running", "setup", "shown", "stacks", "street", "to_act", "total", "unawarded",
    )  # fmt: skip

    def __init__(self, profile: Profile, setup: HandSetup):
        self.profile = profile
        self.setup = setup
        self.observed = setup.observed
        # Settings read while the hand is played, looked up once per profile rather than on every action.
        settings = profile.memo.get("hand_play")
        if settings is None:
            settings = profile.memo["hand_play"] = (
                profile.value("betting", "reopen"),
                profile.value("betting", "min_raise"),
                profile.value("betting", "out_of_turn"),
            )
        self._reopen, self._min_raise_rule, self._out_of_turn_mode = settings
        self.n = setup.seats
        self.button = setup.button
        # The turn order and, per seat, every dealt-in seat clockwise after it (itself last; read on every
        # action, worked out once per seat asked about) depend only on who is dealt in, the button and the
        # table size: shared by the hands that have those alike (at a table, hand after hand).
        key = (tuple(setup.dealt_in), setup.button, setup.seats)
        turns = _TURN_ORDERS.get(key)
        if turns is None:
            if len(_TURN_ORDERS) >= 4096:
                _TURN_ORDERS.clear()
            turns = _TURN_ORDERS[key] = (clockwise_from_button(setup.dealt_in, setup.button, setup.seats), {})
        self.order: list[int] = list(turns[0])
        self._clockwise_after: dict[int, list[int]] = turns[1]
        self.stacks: dict[int, int | None] = dict(
            zip(self.order, map(setup.stacks.get, self.order), strict=True)
        )
        self.total: dict[int, int] = dict.fromkeys(self.order, 0)  # chips put in this hand, antes included
        self.antes: dict[int, int] = dict.fromkeys(
            self.order, 0
        )  # of which antes: dead money, never "uncalled"
        self.round_in: dict[int, int] = {}  # chips put in this betting round (set by `_reset_round`)
        self.folded: set[int] = set()
        # The seats not folded, clockwise: read on most lines, so kept here and rebuilt by `_fold`.
        self._live: list[int] = list(self.order)
        self.all_in: set[int] = set()
        self.acted: list[tuple[int, str, int]] = []
        self.street = "preflop"
        self.to_act: int | None = None
        self.board_cards: list[str] = []
        self.shown: dict[int, list[str]] = {}
        # Every card out (board and tabled hands) -> where it is, kept as cards come out: each new card
        # is checked against it.
        self._cards_out: dict[str, str] = {}
        self.dead = 0  # forfeited chips (Corner Pocket's out-of-turn loss), owned by no bet
        self.finished = False
        self.offences: set[int] = set(setup.prior_offences)
        self.pending: dict[int, tuple[Action, int]] = {}  # out-of-turn actions waiting for their turn
        self.restricted: dict[int, str] = {}  # seat -> setting that limits it to call or fold
        self.burns = 0  # burn cards since the last board card
        self.no_burn_next: set[str] = set()  # streets whose next card comes without a burn
        self.unawarded = 0  # chips of pots nobody could be given (no eligible hand tabled)
        # What happened, as ruled, for PHH export: ("action", seat, kind, to), ("board", cards),
        # ("show", seat, cards), ("muck", seat).
        self.history: list[tuple] = []
        self._reset_round()
        self._post_forced_bets()
        self._begin_round(after=setup.bb_seat if setup.bb_seat in self.stacks else self.button)

    # ---- read-only views -------------------------------------------------------------------------

    @property
    def live(self) -> list[int]:
        """The seats still holding a hand, clockwise from the button's left (a fresh list)."""
        return list(self._live)

    def can_act(self, seat: int) -> bool:
        return seat not in self.folded and seat not in self.all_in

    def pots(self) -> list[Pot]:
        # Antes are dead money in the main pot; the layers of the side pots are the bets.
        if not self.setup.ante:
            return build_pots(self.total, self._live, self.dead)
        bets = {s: chips - self.antes[s] for s, chips in self.total.items()}
        return build_pots(bets, self._live, self.dead + sum(self.antes.values()))

    def chips_in_play(self) -> int:
        """Chips in stacks of this hand's seats plus chips in the middle (conservation checks)."""
        return (
            sum(v or 0 for v in self.stacks.values()) + sum(self.total.values()) + self.dead + self.unawarded
        )

    # ---- setup -----------------------------------------------------------------------------------

    def _rule(self, section: str, key: str) -> str:
        return self.profile.rule(section, key)

    def _fold(self, seat: int) -> None:
        self.folded.add(seat)
        if seat in self._live:
            self._live.remove(seat)  # changed in place: every reader copies what it keeps

    def _put(self, seat: int, chips: int, *, bet: bool) -> int:
        """Move up to `chips` from the seat's stack into the middle; returns what actually moved."""
        stack = self.stacks[seat]
        if stack is not None:
            if chips >= stack:
                chips = stack
                self.all_in.add(seat)
            self.stacks[seat] = stack - chips
        self.total[seat] += chips
        if bet:
            self.round_in[seat] += chips
        else:
            self.antes[seat] += chips
        return chips

    def _post_forced_bets(self) -> None:
        """Antes first (bar_league:Ante First), then blinds; a short stack posts what it has, all in."""
        setup = self.setup
        if setup.ante:
            payers = [setup.bb_seat] if setup.big_blind_ante else self.order
            for seat in payers:
                if seat in self.stacks:
                    self._put(seat, setup.ante, bet=False)
        if setup.sb_seat is not None and setup.sb_seat in self.stacks:
            self._put(setup.sb_seat, setup.sb, bet=True)
        if setup.bb_seat in self.stacks:
            self._put(setup.bb_seat, setup.bb, bet=True)
        # The bet to call pre-flop is the full big blind even when the big blind is short.
        self.current = max(setup.bb, max(self.round_in.values(), default=0))

    def _reset_round(self) -> None:
        self.round_in = dict.fromkeys(self.order, 0)
        self.current = 0
        self.min_raise = self.setup.bb
        self.last_full_level = 0
        self.acted_level: dict[int, int] = {}
        self.last_aggressor: int | None = None
        self.last_caller: int | None = None
        self.first_to_act: int | None = None
        self.round_running = False
        self.pending.clear()
        self.restricted.clear()

    # ---- turn order ------------------------------------------------------------------------------

    def _needs_action(self, seat: int, able: int | None = None) -> bool:
        """Must `seat` act before the round is complete? `able`: how many seats can still bet."""
        if seat in self.folded or seat in self.all_in:
            return False
        if len(self.order) - len(self.folded) < 2:
            return False
        if (self._able() if able is None else able) < 2:
            # Nobody else can bet: it only has to match what the others actually put in (a big blind all
            # in for less than the small blind leaves the small blind nothing to do).
            return self.round_in[seat] < max(
                (self.round_in[s] for s in self.order if s != seat and s not in self.folded), default=0
            )
        if self.round_in[seat] < self.current:
            return True
        return seat not in self.acted_level

    def _next_after(self, seat: int) -> int | None:
        """The first seat clockwise after `seat` (which may be an empty seat) that must act."""
        if len(self._live) < 2:
            return None
        clockwise = self._clockwise_after.get(seat)
        if clockwise is None:
            ordered = self.order
            if seat in ordered:
                index = ordered.index(seat)
            else:  # the button's seat or another seat not dealt in
                pos = (seat - self.button - 1) % self.n
                index = -1
                for i, s in enumerate(ordered):
                    if (s - self.button - 1) % self.n <= pos:
                        index = i
            clockwise = self._clockwise_after[seat] = ordered[index + 1 :] + ordered[: index + 1]
        folded, all_in = self.folded, self.all_in
        if all_in:
            out = folded | all_in  # the seats that cannot act
            able = len(self.order) - len(out)
            if able < 2:
                for s in clockwise:
                    if s not in out and self._needs_action(s, able):
                        return s
                return None
        else:  # the usual case: the two or more live seats can all bet
            out = folded
        round_in, current, acted = self.round_in, self.current, self.acted_level
        for s in clockwise:
            if s in out:
                continue
            if round_in[s] < current or s not in acted:
                return s
        return None

    def _begin_round(self, after: int) -> None:
        if self.observed:  # no betting is modelled: nobody is "to act", a board card is never early
            self.to_act = self.first_to_act = None
            self.round_running = False
            return
        self.to_act = self._next_after(after)
        self.first_to_act = self.to_act
        self.round_running = self.to_act is not None

    def _able(self) -> int:
        return len(self.order) - len(self.folded | self.all_in)

    # ---- actions ---------------------------------------------------------------------------------

    def _check_actor(self, seat: int) -> int:
        if self.finished:
            raise Rejected("the hand is over")
        if seat not in self.stacks:
            raise Rejected(f"seat {seat} was not dealt in this hand")
        if seat in self.folded:
            raise Rejected(f"seat {seat} has folded")
        if seat in self.all_in:
            raise Rejected(f"seat {seat} is all in and has no action")
        if self.to_act is None:
            waiting = _NEXT.get(self.street, "showdown")
            raise Rejected(f"no betting round is in progress (waiting for the {waiting})")
        return seat

    def _facing(self, seat: int) -> Facing:
        restriction = self.restricted.get(seat)
        can_raise = restriction is None and reopened_for(
            self._reopen, self.acted_level.get(seat), self.last_full_level, self.current, self.min_raise
        )
        # committed, stack, current, min_raise, min_bet, can_raise, restriction
        return Facing(
            self.round_in[seat],
            self.stacks[seat],
            self.current,
            self.min_raise,
            self.setup.bb,
            can_raise,
            restriction,
        )

    def action(self, ev: dict | Action, line: int = 0) -> list[dict]:
        """An `action` line as a dict (checked by `events`), or an `Action`: `rule_action`, its output lines
        as dicts."""
        if not isinstance(ev, Action):
            ev = events.parse_as("action", ev, self.n)
        return [to_line(o) for o in self.rule_action(ev)]

    def rule_action(self, ev: Action) -> list[OutputLine]:
        """A betting action: ruled under the venue's book (controller/rules/betting.py), applied, and the
        turn passed; out of turn it is ruled as the book says (`_out_of_turn`). Rejected, nothing changed,
        for an action that cannot be taken now."""
        seat, word = ev.seat, ev.action
        if (
            self.to_act is None
            and word in ("check", "call")
            and not self.finished
            and seat in self.stacks
            and self.can_act(seat)
            and len(self._live) >= 2
            and all(self.round_in[seat] >= self.round_in[s] for s in self._live)
        ):
            return []  # a check when the betting is closed changes nothing
        self._check_actor(seat)
        if seat != self.to_act:
            return self._out_of_turn(seat, ev)
        ruling = interpret(ev, self._facing(seat), self.profile)
        if ruling.reason is None:  # taken as entered: nothing to announce
            self._apply(seat, ruling.kind, ruling.to, ruling.all_in)
            return self._advance(seat)
        out = self._ruling_lines(seat, ev, ruling)
        if ruling.kind == "restricted":
            self.restricted[seat] = "check_facing_bet"
            return out
        self._apply(seat, ruling.kind, ruling.to, ruling.all_in)
        return out + self._advance(seat)

    def _ruling_lines(self, seat: int, ev: Action, ruling: Ruling) -> list[OutputLine]:
        if ruling.reason is None:
            return []
        section_key = ("betting", ruling.setting or "min_raise")
        if ruling.kind == "restricted":
            return [
                ActionLimited(
                    seat=seat, options=["call", "fold"], reason=ruling.reason, rule=self._rule(*section_key)
                )
            ]
        return [
            ActionRuled(
                seat=seat,
                as_=ruling.kind,
                to=ruling.to,
                all_in=ruling.all_in,
                entered=ev.action,
                reason=ruling.reason,
                rule=self._rule(*section_key),
            )
        ]

    def _apply(self, seat: int, kind: str, to: int, all_in: bool) -> None:
        """Record a ruled action (`kind` to `to`, `all_in` as the ruling says) and move its chips."""
        chips = 0
        if kind == "fold":
            self.folded.add(seat)
            self._live.remove(seat)  # `_check_actor` saw it unfolded
        else:
            chips = self._put(seat, to - self.round_in[seat], bet=True)
        self.acted.append((seat, kind, chips))
        self.history.append(("action", seat, kind, to))
        if (kind == "bet" or kind == "raise") and to > self.current:
            increment = to - self.current
            full = increment >= self.min_raise
            if not full and all_in and self._reopen == "half_bet_is_full":
                full = 2 * increment >= self.min_raise  # corner_pocket:Betting.M
            if full:
                if self._min_raise_rule == "last_full":
                    self.min_raise = increment
                else:
                    self.min_raise = max(self.min_raise, increment)
                self.last_full_level = to
            self.current = to
            self.last_aggressor = seat
        elif kind == "call":
            self.last_caller = seat
        self.acted_level[seat] = self.current
        if self.restricted:
            self.restricted.pop(seat, None)

    def _advance(self, seat: int) -> list[OutputLine]:
        """Find who acts next; apply waiting out-of-turn actions that came due; close a finished round."""
        out: list[OutputLine] = []
        while True:
            nxt = self.to_act = self._next_after(seat)
            if nxt is None:
                return out + self._close_round()
            if nxt not in self.pending:
                return out
            ev, level = self.pending.pop(nxt)
            rule = self._rule("betting", "out_of_turn")
            if self.current != level:
                # The action changed (a bet or raise came in between): not binding. Cool Mule lets the
                # player only call or fold (7.f); the others give back every option.
                if self._out_of_turn_mode == "first_offence_free":
                    self.restricted[nxt] = "out_of_turn"
                return out
            try:
                ruling = interpret(ev, self._facing(nxt), self.profile)
            except Rejected:
                return out  # no longer possible: the player acts afresh
            if ruling.kind == "restricted":
                self.restricted[nxt] = "check_facing_bet"
                return out
            out.append(
                ActionRuled(
                    seat=nxt,
                    as_=ruling.kind,
                    to=ruling.to,
                    all_in=ruling.all_in,
                    entered=ev.action,
                    reason="out_of_turn_binding",
                    rule=rule,
                )
            )
            self._apply(nxt, ruling.kind, ruling.to, ruling.all_in)
            seat = nxt

    def _out_of_turn(self, seat: int, ev: Action) -> list[OutputLine]:
        if seat in self.pending:
            raise Rejected(f"seat {seat} already has an out-of-turn action waiting for its turn")
        ruling = interpret(ev, self._facing(seat), self.profile)  # rejects what could never be done
        mode = self._out_of_turn_mode
        expected, rule = self.to_act, self._rule("betting", "out_of_turn")
        if ruling.kind == "fold":
            line = OutOfTurn(
                seat=seat, expected=expected, rule=self._rule("betting", "out_of_turn_fold"), binding=True
            )
            self._fold(seat)
            self.offences.add(seat)
            return [line, *self._recheck()]
        if mode == "first_offence_free" and seat not in self.offences and ruling.kind != "check":
            # cool_mule:7.d; a check out of turn still binds when nobody acts in between (7.e).
            self.offences.add(seat)
            return [OutOfTurn(seat=seat, expected=expected, rule=rule, binding=False)]  # not binding: 7.d
        self.offences.add(seat)
        if mode == "lose_chips":
            # corner_pocket:General Rules.D: the chips put out of turn are lost to the pot; the player
            # still acts in turn.
            lost = 0 if ruling.kind in ("check", "restricted") else ruling.to - self.round_in[seat]
            if lost:
                stack = self.stacks[seat]
                if stack is not None:
                    self.stacks[seat] = stack - lost
                    if stack - lost == 0:
                        self.all_in.add(seat)
                self.dead += lost
            line = OutOfTurn(seat=seat, expected=expected, rule=rule, binding=False, chips_lost=lost)
            return [line, *(self._recheck() if lost else [])]
        self.pending[seat] = (ev, self.current)
        return [OutOfTurn(seat=seat, expected=expected, rule=rule, binding=True)]

    def _recheck(self) -> list[OutputLine]:
        """After a change outside the turn order (an out-of-turn fold, a killed hand): is the round over?"""
        if self.to_act is None or self._needs_action(self.to_act):
            return []
        return self._advance(self.to_act)

    def seen_fold(self, seat: int) -> bool:
        """A fold the camera saw or an observed table's `action` fold: the seat's hand is out. False (nothing
        changed) for a seat already folded; Rejected for a seat not dealt in or a hand over."""
        if self.finished:
            raise Rejected("the hand is over")
        if seat not in self.stacks:
            raise Rejected(f"seat {seat!r} was not dealt in this hand")
        if seat in self.folded:
            return False
        self._fold(seat)
        self.history.append(("action", seat, "fold", self.round_in[seat]))
        return True

    def kill(self, seat: int, reason: str) -> list[OutputLine]:
        """The engine declared this seat's hand dead: fold it wherever the action is."""
        if self.finished or seat not in self.stacks or seat in self.folded:
            return []
        if seat == self.to_act:
            self._fold(seat)
            self.acted_level[seat] = self.current
            return self._advance(seat)
        self._fold(seat)
        self.pending.pop(seat, None)
        if self.round_running:
            return self._recheck()
        return []
