"""One No-Limit Hold'em hand after the deal: turn order, betting rounds, the board, pots and the award.

The table engine (controller/rules/engine.py) creates a `HandPlay` at `hand_start` and hands it the
`action`, `burn`, `board`, `show`, `muck` and `hand_end` lines of that hand. Everything here is pure and
synchronous: no I/O, no clock, no randomness, so replaying the same lines gives the same rulings.

Every method either returns the output lines it causes (dicts as ../shared/spec/table-events.md defines
them, each ruling with `rule`, the profile's citation) or raises `Rejected` and leaves the hand exactly
as it was: all checks run before the first change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.rules.betting import Facing, Ruling, bare_ruling, interpret, reopened_for, sized_ruling
from controller.rules.cards import ALL_CARDS
from controller.rules.errors import Rejected
from controller.rules.pots import Pot, build_pots, clockwise_from_button, uncalled
from controller.rules.profile import Profile
from controller.rules.showdown import Award, award_pots, check_cards, first_to_show

STREETS = ("preflop", "flop", "turn", "river", "showdown")
# (dealt-in seats, button, table size) -> (turn order, {seat: dealt-in seats clockwise after it}): pure
# functions of the key, kept for the hands that share it (see `HandPlay.__init__`). Read-only lists.
_TURN_ORDERS: dict[tuple, tuple[list[int], dict[int, list[int]]]] = {}
_NEXT = {"preflop": "flop", "flop": "turn", "turn": "river", "river": "showdown"}
_BOARD_SIZE = {"flop": 3, "turn": 4, "river": 5}


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


def _fresh_cards(cards: list, taken: dict[str, str]) -> bool:
    """True when `cards` are card codes, none twice and none already out: what `check_cards` passes
    without a word (it is called only otherwise, to say what is wrong)."""
    for card in cards:
        if type(card) is not str or card not in ALL_CARDS or card in taken:
            return False
    return len(cards) == 1 or len(set(cards)) == len(cards)


class HandPlay:
    """The state of one hand from the blinds to the award. Read-only attributes for the engine:
    `stacks`, `acted`, `street`, `to_act`, `live`, `board_cards`, `pots()`."""

    # Fixed attributes: a hand has about forty, more than CPython shares the keys of in an instance
    # dict, so with a dict every read of one would be a hashed lookup; slots are read at a fixed offset.
    __slots__ = (
        "_cards_out", "_clockwise_after", "_live", "_min_raise_rule", "_out_of_turn_mode", "_reopen", "acted",
        "acted_level", "all_in", "antes", "board_cards", "burns", "button", "current", "dead", "finished",
        "first_to_act", "folded", "history", "last_aggressor", "last_caller", "last_full_level", "min_raise",
        "n", "no_burn_next", "observed", "offences", "order", "pending", "profile", "quick", "restricted", "round_in",
        "round_running", "setup", "shown", "stacks", "street", "to_act", "total", "unawarded",
    )  # fmt: skip

    # Take the shortcuts written out for the usual action in turn (a bare fold, check or call; a bet, raise
    # or all-in with its total alone): `quick`, set from this. False (on the class or on one hand): every
    # action goes the general way; the tests play hands both ways and compare.
    QUICK = True

    def __init__(self, profile: Profile, setup: HandSetup):
        self.profile = profile
        self.quick = self.QUICK
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
        self.pending: dict[int, tuple[dict, int]] = {}  # out-of-turn actions waiting for their turn
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

    def _check_actor(self, seat: object) -> int:
        if self.finished:
            raise Rejected("the hand is over")
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise Rejected(f"field 'seat' must be a seat number, got {seat!r}")
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

    def action(self, ev: dict, line: int) -> list[dict]:
        """An `action` line: ruled, applied, and the turn passed (or Rejected, nothing changed)."""
        return self.act(ev.get("seat"), ev.get("action"), ev.get("to"), ev, line)

    def act(self, seat: Any, word: Any, to: Any, ev: dict, line: int) -> list[dict]:
        """`action` with the line's seat, action word and `to` already read (the engine has read them to
        check the line): ev["seat"], ev["action"] and ev["to"] as `ev.get` gives them."""
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
        if not (
            seat == self.to_act
            and type(seat) is int
            and self.quick
            and seat not in self.folded
            and seat not in self.all_in
        ):
            # `_check_actor` passes the seat to act (dealt in, not folded, not all in, a round running)
            # unless it folded or is all in: the shortcut above asks just that.
            seat = self._check_actor(seat)
            if seat != self.to_act:
                return self._out_of_turn(seat, ev)
        ruling = None
        # Most actions are a bare fold, check or call: ruled without building what the seat faces.
        if to is None and ev.get("chips") is None and ev.get("declared") is None:
            if self.quick:
                # `bare_ruling` written out for the three words it takes as entered (a test checks the
                # two agree): nothing to announce, the chips move and the turn passes.
                committed = self.round_in[seat]
                current = self.current
                if word == "fold" or (word == "check" and current <= committed):
                    stack = self.stacks[seat]
                    if word == "check" and stack is not None and stack <= 0:
                        self._apply(seat, word, committed, False)  # `_put` rules on the empty stack
                        return self._advance(seat)
                    # `_apply(seat, word, committed, False)` written out for a fold or a check: no chips move.
                    if word == "fold":
                        self.folded.add(seat)
                        self._live.remove(seat)  # not folded: it is in the list
                    self.acted.append((seat, word, 0))
                    self.history.append(("action", seat, word, committed))
                    self.acted_level[seat] = current
                    if self.restricted:
                        self.restricted.pop(seat, None)
                    if self.pending:
                        return self._advance(seat)
                    nxt = self.to_act = self._next_after(seat)  # `_advance` with nothing pending
                    return [] if nxt is not None else self._close_round()
                if word == "call" and current > committed:
                    stack = self.stacks[seat]
                    if stack is None or committed + stack > current:
                        self._apply(seat, "call", current, False)
                    else:  # all in to call
                        self._apply(seat, "call", committed + stack, True)
                    return self._advance(seat)
            ruling = bare_ruling(word, self.round_in[seat], self.stacks[seat], self.current)
        elif (
            self.quick
            and ev.get("chips") is None
            and ev.get("declared") is None
            and seat not in self.restricted
        ):
            # A bet, raise or all-in with its total alone: taken as entered when `sized_ruling` says so.
            current = self.current
            ruling = sized_ruling(
                word,
                to,
                self.round_in[seat],
                self.stacks[seat],
                current,
                self.min_raise,
                self.setup.bb,
                current == 0
                or reopened_for(
                    self._reopen, self.acted_level.get(seat), self.last_full_level, current, self.min_raise
                ),
            )
        if ruling is None:
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

    def _ruling_lines(self, seat: int, ev: dict, ruling: Ruling) -> list[dict]:
        if ruling.reason is None:
            return []
        section_key = ("betting", ruling.setting or "min_raise")
        if ruling.kind == "restricted":
            return [
                {
                    "type": "action_limited",
                    "seat": seat,
                    "options": ["call", "fold"],
                    "reason": ruling.reason,
                    "rule": self._rule(*section_key),
                }
            ]
        return [
            {
                "type": "action_ruled",
                "seat": seat,
                "as": ruling.kind,
                "to": ruling.to,
                "all_in": ruling.all_in,
                "entered": ev.get("action"),
                "reason": ruling.reason,
                "rule": self._rule(*section_key),
            }
        ]

    def _apply(self, seat: int, kind: str, to: int, all_in: bool) -> None:
        """Record a ruled action (`kind` to `to`, `all_in` as the ruling says) and move its chips."""
        chips = 0
        if kind == "fold":
            self.folded.add(seat)
            self._live.remove(seat)  # `_check_actor` or the shortcut saw it unfolded
        else:
            # `_put(seat, to - round_in, bet=True)` written out: the chips move into this round's bets.
            round_in = self.round_in
            chips = to - round_in[seat]
            stack = self.stacks[seat]
            if stack is not None:
                if chips >= stack:
                    chips = stack
                    self.all_in.add(seat)
                self.stacks[seat] = stack - chips
            self.total[seat] += chips
            round_in[seat] += chips
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

    def _advance(self, seat: int) -> list[dict]:
        """Find who acts next; apply waiting out-of-turn actions that came due; close a finished round."""
        if not self.pending:  # the usual case: no out-of-turn action waits for its turn
            nxt = self.to_act = self._next_after(seat)
            return [] if nxt is not None else self._close_round()
        out: list[dict] = []
        while True:
            self.to_act = self._next_after(seat)
            if self.to_act is None:
                return out + self._close_round()
            nxt = self.to_act
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
                {
                    "type": "action_ruled",
                    "seat": nxt,
                    "as": ruling.kind,
                    "to": ruling.to,
                    "all_in": ruling.all_in,
                    "entered": ev.get("action"),
                    "reason": "out_of_turn_binding",
                    "rule": rule,
                }
            )
            self._apply(nxt, ruling.kind, ruling.to, ruling.all_in)
            seat = nxt

    def _out_of_turn(self, seat: int, ev: dict) -> list[dict]:
        if seat in self.pending:
            raise Rejected(f"seat {seat} already has an out-of-turn action waiting for its turn")
        ruling = interpret(ev, self._facing(seat), self.profile)  # rejects what could never be done
        mode = self._out_of_turn_mode
        out: list[dict] = [
            {
                "type": "out_of_turn",
                "seat": seat,
                "expected": self.to_act,
                "rule": self._rule("betting", "out_of_turn"),
            }
        ]
        if ruling.kind == "fold":
            out[0]["binding"] = True
            out[0]["rule"] = self._rule("betting", "out_of_turn_fold")
            self._fold(seat)
            self.offences.add(seat)
            return out + self._recheck()
        if mode == "first_offence_free" and seat not in self.offences and ruling.kind != "check":
            # cool_mule:7.d; a check out of turn still binds when nobody acts in between (7.e).
            self.offences.add(seat)
            out[0]["binding"] = False  # cool_mule:7.d: not binding on the first offence
            return out
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
            out[0]["binding"] = False
            out[0]["chips_lost"] = lost
            return out + (self._recheck() if lost else [])
        self.pending[seat] = (dict(ev), self.current)
        out[0]["binding"] = True
        return out

    def _recheck(self) -> list[dict]:
        """After a change outside the turn order (an out-of-turn fold, a killed hand): is the round over?"""
        if self.to_act is None or self._needs_action(self.to_act):
            return []
        return self._advance(self.to_act)

    def seen_fold(self, seat: Any) -> bool:
        """A fold the camera saw or an observed table's `action` fold: the seat's hand is out. False (nothing
        changed) for a seat already folded; Rejected for a seat not dealt in or a hand over."""
        if self.finished:
            raise Rejected("the hand is over")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in self.stacks:
            raise Rejected(f"seat {seat!r} was not dealt in this hand")
        if seat in self.folded:
            return False
        self._fold(seat)
        self.history.append(("action", seat, "fold", self.round_in[seat]))
        return True

    def kill(self, seat: int, reason: str) -> list[dict]:
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

    # ---- end of a betting round ------------------------------------------------------------------

    def _return_uncalled(self) -> list[dict]:
        # Only bets can go uncalled: a big-blind ante is not a bet that others must match.
        back = uncalled(
            {s: chips - self.antes[s] for s, chips in self.total.items()} if self.setup.ante else self.total
        )
        if back is None:
            return []
        seat, chips = back
        self.total[seat] -= chips
        self.round_in[seat] = max(self.round_in[seat] - chips, 0)
        stack = self.stacks[seat]
        if stack is not None:
            self.stacks[seat] = stack + chips
            if stack + chips > 0:
                self.all_in.discard(seat)
        return [
            {
                "type": "uncalled_returned",
                "seat": seat,
                "amount": chips,
                "rule": self._rule("betting", "uncalled_bet"),
            }
        ]

    def _pots_line(self) -> dict:
        live = self._live
        if not self.setup.ante and not self.dead and live:
            # The usual round end: every live seat put in the same and nobody more, no dead money. One pot,
            # as `build_pots` makes it (its own shortcut), without the `Pot` in between.
            total = self.total
            level = total.get(live[0], 0)
            for s in live:  # (a loop, not `all()`: no generator to build on every round's end)
                if total.get(s, 0) != level:
                    break
            else:
                if max(total.values(), default=0) <= level:
                    amount = sum(total.values())
                    return {
                        "type": "pots",
                        "street": self.street,
                        "pots": [{"amount": amount, "eligible": list(live)}] if amount > 0 else [],
                        "rule": self._rule("showdown", "side_pots"),
                    }
        return {
            "type": "pots",
            "street": self.street,
            "pots": [p.as_dict() for p in self.pots()],
            "rule": self._rule("showdown", "side_pots"),
        }

    def _close_round(self) -> list[dict]:
        ran = self.round_running
        self.round_running = False
        self.to_act = None
        out = self._return_uncalled()
        if ran or out:
            out.append(self._pots_line())
        if len(self._live) < 2:
            return out
        if self.street == "river":
            self.street = "showdown"
            if ran:  # the river was bet or checked: an order of show (none after an all-in run-out)
                out.append(self._show_order_line())
        return out

    def _show_order_line(self) -> dict:
        first = first_to_show(
            self.profile.value("showdown", "order"),
            self.profile.value("showdown", "order_no_bet"),
            self._live,
            self.button,
            self.setup.sb_seat,
            self.n,
            self.last_aggressor,
            self.last_caller,
            self.first_to_act,
        )
        key = "order" if self.last_aggressor is not None else "order_no_bet"
        return {"type": "show_order", "first": first, "rule": self._rule("showdown", key)}

    # ---- the board -------------------------------------------------------------------------------

    def _taken(self) -> dict[str, str]:
        return self._cards_out

    def burn(self, line: int) -> list[dict]:
        if self.finished:
            raise Rejected("the hand is over")
        self.burns += 1
        return []

    def board(self, ev: dict, line: int) -> list[dict]:
        if self.finished:
            raise Rejected("the hand is over")
        cards = ev.get("cards")
        if not isinstance(cards, list) or not cards:
            raise Rejected("field 'cards' must be a non-empty list of card codes")
        if not _fresh_cards(cards, self._cards_out):
            check_cards(cards, len(cards), "field 'cards'", self._taken())  # says what is wrong
        return self.board_checked(cards)

    def fresh_cards(self, cards: list) -> bool:
        """True when `cards` are card codes, none twice and none out yet in this hand."""
        return _fresh_cards(cards, self._cards_out)

    def board_checked(self, cards: list[str]) -> list[dict]:
        """`board` for a hand not over and cards already checked (a non-empty list, `fresh_cards`)."""
        if len(self._live) < 2:
            holder = f"only seat {self._live[0]} holds a hand" if self._live else "no seat holds a live hand"
            raise Rejected(f"no board is dealt: {holder}")
        if self.street in ("river", "showdown"):
            raise Rejected("all five board cards are already out")
        target = _NEXT[self.street]
        if self.to_act is not None:
            return self._premature(target)
        count = len(cards)
        if target == "flop":
            if count >= 4:
                return self._redeal(
                    "flop", self.profile.value("board", "four_card_flop"), ("board", "four_card_flop")
                )
            if count != 3:
                raise Rejected(f"a flop is 3 cards, got {count}")
        elif target == "turn":
            if count > 2:
                raise Rejected(f"a turn is 1 card, got {count}")
        elif count != 1:
            raise Rejected(f"a river is 1 card, got {count}")
        out = self._burn_check(target)
        if target == "turn" and count == 2:
            # The turn and the river together: the turn stands; the river came early. Observed, no betting
            # on the turn can have come between two cards turned up as one group.
            out += self._deal_street("turn", cards[:1])
            if self.to_act is not None or self.observed:
                return out + self._premature("river")
            out += self._burn_check("river")
            return out + self._deal_street("river", cards[1:])
        self._deal_street(target, cards)  # rules on nothing: returns no lines
        return out

    def _burn_check(self, street: str) -> list[dict]:
        out = []
        if self.burns == 0 and street not in self.no_burn_next and not self.observed:
            out.append(
                {"type": "burn_missing", "street": street, "rule": self._rule("board", "missing_burn")}
            )
        self.no_burn_next.discard(street)
        self.burns = 0
        return out

    def _deal_street(self, street: str, cards: list[str]) -> list[dict]:
        self.board_cards.extend(cards)
        cards_out = self._cards_out
        for card in cards:
            cards_out[card] = "the board"
        self.history.append(("board", list(cards)))
        self.street = street
        self._reset_round()
        if len(self.order) - len(self.folded | self.all_in) >= 2:  # `_able()`
            self._begin_round(after=self.button)
        if self.to_act is None and street == "river":
            self.street = "showdown"  # nobody can bet: cards are tabled, no showdown order
        return []

    def _premature(self, street: str) -> list[dict]:
        key = {"flop": "premature_flop", "turn": "premature_turn", "river": "premature_river"}[street]
        return self._redeal(street, self.profile.value("board", key), ("board", key))

    def _redeal(self, street: str, procedure: str, setting: tuple[str, str]) -> list[dict]:
        if procedure == "next_card_then_reshuffle":
            self.no_burn_next.add("river")  # the turn is burned and dealt as usual, the river is not burned
        else:
            self.no_burn_next.add(street)
        self.burns = 0
        return [
            {"type": "board_redeal", "street": street, "procedure": procedure, "rule": self._rule(*setting)}
        ]

    # ---- showdown --------------------------------------------------------------------------------

    def _betting_over(self) -> bool:
        return self.to_act is None

    def show(self, ev: dict, line: int) -> list[dict]:
        if self.finished:
            raise Rejected("the hand is over")
        seat = ev.get("seat")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in self.stacks:
            raise Rejected(f"seat {seat!r} was not dealt in this hand")
        if seat in self.folded:
            raise Rejected(f"seat {seat} has folded or mucked; its cards cannot win")
        if seat in self.shown:
            raise Rejected(f"seat {seat} has already tabled {' '.join(self.shown[seat])}")
        if self.to_act is not None:  # not `_betting_over()`
            raise Rejected(
                f"betting is still in progress (seat {self.to_act} to act): cards are tabled at showdown"
            )
        cards = ev.get("cards")
        if type(cards) is list and len(cards) == 2 and _fresh_cards(cards, self._cards_out):
            shown = self.shown[seat] = list(cards)
        else:
            shown = self.shown[seat] = check_cards(cards, 2, f"seat {seat}'s hole cards", self._taken())
        where = f"seat {seat}'s hand"
        cards_out = self._cards_out
        for card in shown:
            cards_out[card] = where
        self.history.append(("show", seat, list(shown)))
        return []

    def muck(self, ev: dict, line: int) -> list[dict]:
        seat = ev.get("seat")
        if not self._betting_over():
            return self.action({"seat": seat, "action": "fold"}, line)
        if self.finished:
            raise Rejected("the hand is over")
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in self.stacks:
            raise Rejected(f"seat {seat!r} was not dealt in this hand")
        if seat in self.folded:
            raise Rejected(f"seat {seat} has already folded or mucked")
        if seat in self.shown:
            raise Rejected(f"seat {seat} has tabled its hand; a tabled hand is read, not mucked")
        self._fold(seat)
        self.history.append(("muck", seat))
        return []

    def finish(self, line: int) -> list[dict]:
        """`hand_end`: return any uncalled bet and award every pot, each on its own."""
        if self.finished:
            raise Rejected("the hand is already over")
        if self.observed:  # no chips were seen going in: no pot to award (spec: `actions: observed`)
            self.finished = True
            self.street = "showdown"
            self.to_act = None
            return []
        out: list[dict] = []
        if self.round_running:
            self.round_running = False
            self.to_act = None
        out += self._return_uncalled()
        pots = self.pots()
        results = award_pots(
            pots,
            self.shown,
            self.board_cards,
            self.button,
            self.n,
            self.profile.value("showdown", "odd_chips"),
        )
        for result in results:
            if isinstance(result, Award):
                for seat, chips in result.shares.items():
                    stack = self.stacks[seat]
                    if stack is not None:
                        self.stacks[seat] = stack + chips
                out.append(result.line(self._award_rule(result, len(pots))))
            else:
                self.unawarded += result.amount
                out.append(result.line(self._rule("showdown", "show_both_to_win")))
        self.total = dict.fromkeys(self.order, 0)
        self.antes = dict.fromkeys(self.order, 0)
        self.dead = 0
        self.finished = True
        self.street = "showdown"
        self.to_act = None
        return out

    def _award_rule(self, award: Award, pots: int) -> str:
        if award.odd_chips:
            return self._rule("showdown", "odd_chips")
        if award.hand is None:
            return self._rule("showdown", "show_both_to_win")  # uncontested: nothing needs showing
        if pots > 1:
            return self._rule("showdown", "side_pots")
        return self._rule("showdown", "cards_speak")
