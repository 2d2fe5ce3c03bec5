"""The end of a hand's betting rounds, its board and its showdown (part of `HandPlay`).

`BoardAndShowdown` is mixed into controller.rules.hand_play.HandPlay, whose state it reads and writes:
the uncalled bet and the pots after each betting round (`pots`, `uncalled_returned`, `show_order`), the
board cards street by street with the venue's rulings on cards too early or too many (`board_redeal`,
`burn_missing`; bar_league:Board, bluff_street:33, ...), the tabled hands and the award of every pot
(`award`, `pot_unresolved`). Like HandPlay, every method checks before it changes anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.rules import events
from controller.rules.errors import Rejected
from controller.rules.events import (
    Action,
    BoardRedeal,
    BurnMissing,
    OutputLine,
    PotLine,
    Pots,
    ShowOrder,
    UncalledReturned,
    to_line,
)  # fmt: skip
from controller.rules.pots import uncalled
from controller.rules.showdown import Award, award_pots, check_cards, first_to_show

if TYPE_CHECKING:
    from controller.rules.hand_play import HandSetup
    from controller.rules.pots import Pot
    from controller.rules.profile import Profile

STREETS = ("preflop", "flop", "turn", "river", "showdown")
_NEXT = {"preflop": "flop", "flop": "turn", "turn": "river", "river": "showdown"}


class BoardAndShowdown:
    """HandPlay's end of rounds, board and showdown. Reads and writes HandPlay's slots."""

    __slots__ = ()

    # HandPlay's state and methods used here (declared for readers and type checkers).
    profile: Profile
    setup: HandSetup
    observed: bool
    n: int
    button: int
    order: list[int]
    _live: list[int]
    _cards_out: dict[str, str]
    stacks: dict[int, int | None]
    total: dict[int, int]
    antes: dict[int, int]
    round_in: dict[int, int]
    all_in: set[int]
    folded: set[int]
    shown: dict[int, list[str]]
    board_cards: list[str]
    history: list[tuple]
    street: str
    to_act: int | None
    round_running: bool
    finished: bool
    burns: int
    no_burn_next: set[str]
    unawarded: int
    dead: int
    last_aggressor: int | None
    last_caller: int | None
    first_to_act: int | None

    def _rule(self, section: str, key: str) -> str:
        raise NotImplementedError

    def pots(self) -> list[Pot]:
        raise NotImplementedError

    def _fold(self, seat: int) -> None:
        raise NotImplementedError

    def _reset_round(self) -> None:
        raise NotImplementedError

    def _begin_round(self, after: int) -> None:
        raise NotImplementedError

    def rule_action(self, ev: Action) -> list[OutputLine]:
        raise NotImplementedError

    # ---- end of a betting round ------------------------------------------------------------------

    def _return_uncalled(self) -> list[OutputLine]:
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
        return [UncalledReturned(seat=seat, amount=chips, rule=self._rule("betting", "uncalled_bet"))]

    def _pots_line(self) -> Pots:
        """The pots after a betting round: main pot first, then side pots (the venue's side-pot rule)."""
        return Pots(
            street=self.street,
            pots=[PotLine(p.amount, list(p.eligible)) for p in self.pots()],
            rule=self._rule("showdown", "side_pots"),
        )

    def _close_round(self) -> list[OutputLine]:
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

    def _show_order_line(self) -> ShowOrder:
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
        return ShowOrder(first=first, rule=self._rule("showdown", key))

    # ---- the board -------------------------------------------------------------------------------

    def card_is_out(self, card: str) -> bool:
        """Is `card` already on the board or in a tabled hand of this hand?"""
        return card in self._cards_out

    def burn(self, line: int = 0) -> list[dict]:
        """A burn card taken: the next board card needs it (`_burn_check`)."""
        if self.finished:
            raise Rejected("the hand is over")
        self.burns += 1
        return []

    def board(self, ev: dict, line: int = 0) -> list[dict]:
        """A `board` line as a dict (checked by `events`): `deal_board`, its lines as dicts."""
        checked = events.parse_as("board", ev, self.n)
        return [to_line(o) for o in self.deal_board(checked.cards, checked.count)]

    def deal_board(self, cards: tuple[str, ...], count: int | None = None) -> list[OutputLine]:
        """Board cards turned up as one group (checked card codes, none twice): the next street, or the
        venue's ruling on a card too early or too many (`board_redeal`, `burn_missing`). `count`: the
        cards of the group, when more were seen than read (`cards` then holds the ones read); the street
        is ruled on the count alone, and a pot that needs the unread cards to be judged is not awarded."""
        if self.finished:
            raise Rejected("the hand is over")
        check_cards(list(cards), len(cards), "field 'cards'", self._cards_out)  # none out yet
        if len(self._live) < 2:
            holder = f"only seat {self._live[0]} holds a hand" if self._live else "no seat holds a live hand"
            raise Rejected(f"no board is dealt: {holder}")
        if self.street in ("river", "showdown"):
            raise Rejected("all five board cards are already out")
        target = _NEXT[self.street]
        if self.to_act is not None:
            return self._premature(target)
        read = len(cards)
        count = read if count is None else count
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
            turn = cards[:1] if read == 2 else ()  # one of two read: which street it is on is unknown
            out += self._deal_street("turn", turn)
            if self.to_act is not None or self.observed:
                return out + self._premature("river")
            out += self._burn_check("river")
            return out + self._deal_street("river", cards[len(turn) :])
        self._deal_street(target, cards)  # rules on nothing: returns no lines
        return out

    def _burn_check(self, street: str) -> list[OutputLine]:
        out = []
        if self.burns == 0 and street not in self.no_burn_next and not self.observed:
            out.append(BurnMissing(street=street, rule=self._rule("board", "missing_burn")))
        self.no_burn_next.discard(street)
        self.burns = 0
        return out

    def _deal_street(self, street: str, cards: tuple[str, ...] | list[str]) -> list[OutputLine]:
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

    def _premature(self, street: str) -> list[OutputLine]:
        key = {"flop": "premature_flop", "turn": "premature_turn", "river": "premature_river"}[street]
        return self._redeal(street, self.profile.value("board", key), ("board", key))

    def _redeal(self, street: str, procedure: str, setting: tuple[str, str]) -> list[OutputLine]:
        if procedure == "next_card_then_reshuffle":
            self.no_burn_next.add("river")  # the turn is burned and dealt as usual, the river is not burned
        else:
            self.no_burn_next.add(street)
        self.burns = 0
        return [BoardRedeal(street=street, procedure=procedure, rule=self._rule(*setting))]

    # ---- showdown --------------------------------------------------------------------------------

    def show(self, ev: dict, line: int = 0) -> list[dict]:
        """A `show` line as a dict (checked by `events`): `show_cards`."""
        checked = events.parse_as("show", ev, self.n)
        return [to_line(o) for o in self.show_cards(checked.seat, checked.cards)]

    def show_cards(self, seat: int, cards: tuple[str, ...]) -> list[OutputLine]:
        """A player tabled his hole cards at the showdown; they play for every pot he is in."""
        if self.finished:
            raise Rejected("the hand is over")
        if seat not in self.stacks:
            raise Rejected(f"seat {seat!r} was not dealt in this hand")
        if seat in self.folded:
            raise Rejected(f"seat {seat} has folded or mucked; its cards cannot win")
        if seat in self.shown:
            raise Rejected(f"seat {seat} has already tabled {' '.join(self.shown[seat])}")
        if self.to_act is not None:
            raise Rejected(
                f"betting is still in progress (seat {self.to_act} to act): cards are tabled at showdown"
            )
        shown = self.shown[seat] = check_cards(list(cards), 2, f"seat {seat}'s hole cards", self._cards_out)
        where = f"seat {seat}'s hand"
        cards_out = self._cards_out
        for card in shown:
            cards_out[card] = where
        self.history.append(("show", seat, list(shown)))
        return []

    def muck(self, ev: dict, line: int = 0) -> list[dict]:
        """A `muck` line as a dict (checked by `events`): `muck_hand`."""
        return [to_line(o) for o in self.muck_hand(events.parse_as("muck", ev, self.n).seat)]

    def muck_hand(self, seat: int) -> list[OutputLine]:
        """A player threw his hand away: a fold while the betting goes on, else out of the showdown."""
        if self.to_act is not None:
            return self.rule_action(Action(seat, "fold"))
        if self.finished:
            raise Rejected("the hand is over")
        if seat not in self.stacks:
            raise Rejected(f"seat {seat!r} was not dealt in this hand")
        if seat in self.folded:
            raise Rejected(f"seat {seat} has already folded or mucked")
        if seat in self.shown:
            raise Rejected(f"seat {seat} has tabled its hand; a tabled hand is read, not mucked")
        self._fold(seat)
        self.history.append(("muck", seat))
        return []

    def finish(self, line: int = 0) -> list[dict]:
        """`end_hand`, its lines as dicts."""
        return [to_line(o) for o in self.end_hand()]

    def end_hand(self) -> list[OutputLine]:
        """`hand_end`: return any uncalled bet and award every pot, each on its own."""
        if self.finished:
            raise Rejected("the hand is already over")
        if self.observed:  # no chips were seen going in: no pot to award (spec: `actions: observed`)
            self.finished = True
            self.street = "showdown"
            self.to_act = None
            return []
        out: list[OutputLine] = []
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
