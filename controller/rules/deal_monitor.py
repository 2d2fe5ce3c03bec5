"""The deal monitor: what the table engine rules on while the hole cards go out and until substantial
action (../shared/spec/table-events.md: `misdeal`, `replace_exposed`, `extra_card`, `boxed_card`,
`button_misplaced`, `substantial_action`, `dead_hand`).

`DealMonitor` is the part of `controller.rules.engine.TableEngine` that rules on `deal`, `expose`,
`boxed` and `button_seen` lines and counts substantial action, both from entered actions and, at an
observed table (`actions: observed`), from what the camera saw (`fold_seen`, `chips_seen`, a `board`
line closing a betting round). Each `rule_*` method checks, then changes the state: a rejected line
leaves it exactly as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from controller.rules.cards import ALL_CARDS
from controller.rules.errors import Rejected
from controller.rules.events import (
    Boxed,
    BoxedCard,
    ButtonMisplaced,
    ButtonSeen,
    ChipsSeen,
    DeadHand,
    Deal,
    Expose,
    ExtraCard,
    FoldSeen,
    FouledDeck,
    Misdeal,
    OutputLine,
    ReplaceExposed,
    SubstantialAction,
)  # fmt: skip

if TYPE_CHECKING:
    from controller.rules.engine import Hand
    from controller.rules.profile import Profile
    from controller.rules.seating import Player

PASSIVE = frozenset(("check", "fold"))
CHIPS_IN = frozenset(("call", "bet", "raise", "allin"))


class DealState(msgspec.Struct):
    """Everything the deal monitor knows about the current hand's hole cards."""

    cards: dict[int, int] = msgspec.field(
        default_factory=dict
    )  # seat -> hole cards held (exposed ones taken back)
    received: dict[int, list[int]] = msgspec.field(
        default_factory=dict
    )  # seat -> positions off the deck it was dealt
    unobserved: bool = False  # betting began before the camera saw any card dealt
    off_deck: int = 0  # hole cards dealt off the deck so far, in order
    exposed: int = 0  # cards exposed by dealer error during the deal
    extra: int = 0  # surplus cards to the first player after the deal was complete
    boxed: int = 0
    complete: bool = False  # every seat dealt in has its two cards
    full: int = 0  # seats dealt in that hold two cards
    reached: int = 0  # seats dealt in that were dealt a first card (keys of `received` among them)
    action_started: bool = False
    absent_done: bool = False
    # Hole cards seen face up in this hand: code -> (seat, True when it was replaced and became the burn).
    exposed_cards: dict[str, tuple[int, bool]] = msgspec.field(default_factory=dict)
    acted_seats: set[int] = msgspec.field(default_factory=set)
    # Observed tables: seats seen acting in the betting round now running (a board line closes it), the
    # streets whose round a board line has closed, and seats whose forced bet the camera saw go in.
    round_acted: set[int] = msgspec.field(default_factory=set)
    rounds_closed: set[str] = msgspec.field(default_factory=set)
    posted: set[int] = msgspec.field(default_factory=set)
    in_turn_actions: int = 0
    in_turn_with_chips: int = 0
    aggressive: int = 0
    passive: int = 0
    substantial: bool = False


class DealMonitor:
    """The deal-monitor half of the table engine (mixed into `TableEngine`, whose state it reads)."""

    profile: Profile
    deal_rules: dict[str, Any]
    observed: bool
    players: dict[int, Player]
    alerts: list[OutputLine]
    leaving: list[int]
    hand: Hand | None

    def _current(self, what: str) -> Hand:  # (TableEngine's)
        raise NotImplementedError

    def _vacate_leaving(self) -> None:  # (TableEngine's)
        raise NotImplementedError

    # ---- misdeals and dead hands ------------------------------------------------------------------

    def _misdeal(self, h: Hand, reason: str, setting: str) -> list[OutputLine]:
        h.void = True
        h.misdeal_reason = reason
        if self.leaving:  # tapped out during the hand: gone before the re-deal
            self._vacate_leaving()
        h.play = None  # chips posted go back: stacks are only written at the end of a hand
        line = Misdeal(reason=reason, rule=self.profile.rule("deal", setting))
        self.alerts = [line]
        return [line]

    def _dead(self, h: Hand, seat: int, reason: str, setting: str) -> list[OutputLine]:
        if seat not in h.play.live:
            return []
        line = DeadHand(seat=seat, reason=reason, rule=self.profile.rule("deal", setting))
        return [line, *h.play.kill(seat, reason)]

    # ---- hole cards -------------------------------------------------------------------------------

    def rule_deal(self, ev: Deal, n: int) -> list[OutputLine]:
        """A hole card reached a seat: in order and face down it needs no ruling; otherwise the misdeal
        rules (cool_mule:5, bar_league:Misdeals, bluff_street:33.a), a surplus card (cool_mule:5.i), a card
        exposed in the deal, a wrong card count after betting began."""
        h = self._current("deal")
        d, p, prof, rules = h.deal, h.positions, self.profile, self.deal_rules
        seat, card, exposed = ev.seat, ev.card, ev.exposed
        if card is not None:
            fouled = self._fouled_deck(h, (card,))  # a new card whose code is out already
            if fouled:
                return fouled
        held = d.cards.get(seat, 0)
        before_sa = not d.substantial

        if before_sa:
            if d.off_deck == 0 and seat != p.first_card and rules["first_card_wrong_seat_misdeal"]:
                return self._misdeal(h, "first_card_wrong_seat", "first_card_wrong_seat_misdeal")
            if seat not in p.dealt_in and rules["ineligible_seat_misdeal"]:
                return self._misdeal(h, "dealt_to_ineligible_seat", "ineligible_seat_misdeal")
        elif seat not in p.dealt_in:
            raise Rejected(f"seat {seat} is not in hand {h.number}")

        if d.action_started and d.unobserved:
            raise Rejected(
                "a hole card seen after betting began on a deal the camera did not see: not ruled on"
            )
        if d.action_started:
            late = self._button_final_card(h, seat, held, exposed)
            if late is not None:
                return late
            # A card after betting began: the hand had a wrong card count when the action started.
            if before_sa:
                if held == 0 and rules["eligible_dealt_out_misdeal"]:
                    return self._misdeal(h, "eligible_seat_dealt_out", "eligible_dealt_out_misdeal")
                if rules["wrong_card_count_misdeal"]:
                    return self._misdeal(h, "wrong_card_count", "wrong_card_count_misdeal")
                return []
            return self._dead(h, seat, "wrong_card_count", "wrong_card_count_after_substantial")

        if d.complete:
            # A surplus card after every hand was complete (cool_mule:5.i).
            if seat == p.first_card and d.extra == 0:
                if rules["extra_card_to_first_player"] == "misdeal":
                    # "any player has the incorrect quantity of hole cards" (bar_league:Misdeals(f)).
                    return self._misdeal(h, "wrong_card_count", "extra_card_to_first_player")
                d.extra += 1
                return [ExtraCard(seat=seat, rule=prof.rule("deal", "extra_card_to_first_player"))]
            if d.extra >= 1 and rules["too_many_extra_cards_misdeal"]:
                return self._misdeal(h, "too_many_extra_cards", "too_many_extra_cards_misdeal")
            if rules["wrong_card_count_misdeal"]:
                return self._misdeal(h, "wrong_card_count", "wrong_card_count_misdeal")
            return []

        if held >= 2 and rules["wrong_card_count_misdeal"]:
            return self._misdeal(h, "wrong_card_count", "wrong_card_count_misdeal")
        received = d.received.get(seat)
        if (
            received is not None
            and len(received) == 1
            and d.reached < len(p.dealt_in)  # (every seat dealt in has a first card: none was skipped)
            and rules["eligible_dealt_out_misdeal"]
        ):
            # The second round reached this seat while a seat before it never got a first card. The
            # button, last in the order, may take two consecutive cards (bluff_street:33.a.6.i).
            order = p.dealt_in
            idx = order.index(seat)
            button_may_wait = rules["button_two_consecutive_cards"]
            for other in order if idx == 0 else order[:idx]:
                if (
                    other != seat
                    and not d.received.get(other)
                    and not (button_may_wait and other == order[-1])
                ):
                    return self._misdeal(h, "eligible_seat_dealt_out", "eligible_dealt_out_misdeal")

        position = d.off_deck + 1
        if exposed:
            out = self._exposed_in_deal(h, seat, card, position)
            if out and isinstance(out[0], Misdeal):
                return out
            # The exposed card is taken back: the seat gets another after the deal.
            if card is not None:
                d.exposed_cards[card] = (seat, True)
        else:
            out = []
            d.cards[seat] = held + 1
            if held == 1 and seat in p.dealt_in:
                d.full += 1
        d.off_deck = position
        if received is None:
            d.received[seat] = [position]
            if seat in p.dealt_in:
                d.reached += 1
        else:
            received.append(position)
        out.extend(self._check_deal_complete(h))
        return out

    def _button_final_card(self, h: Hand, seat: int, held: int, exposed: bool) -> list[OutputLine] | None:
        """bluff_street:53 "In button games, the button may receive his or her final card, even if
        substantial action has occurred, unless he or she acts on the hand prior to receiving the final
        card. In the event that he or she acts before receiving the final card, the hand is dead." None
        when the card is not the button's late final card (or the profile has no such rule)."""
        if (
            not self.deal_rules["button_final_card_late"]
            or seat != h.positions.button
            or seat not in h.positions.dealt_in
            or held != 1
            or exposed
        ):
            return None
        if any(done[0] == seat for done in h.play.acted):
            return self._dead(h, seat, "wrong_card_count", "button_final_card_late")
        d = h.deal
        d.cards[seat] = 2
        d.full += 1
        d.off_deck += 1
        d.received.setdefault(seat, []).append(d.off_deck)
        return self._check_deal_complete(h)

    def _exposed_in_deal(self, h: Hand, seat: int, card: str | None, position: int) -> list[OutputLine]:
        """A card flashed by the dealer during the deal (cool_mule:5.g/h/j, bar_league:Misdeals); which
        card it was (`card`, None when it was not read) decides nothing."""
        prof, p = self.profile, h.positions
        if position <= self.deal_rules["exposed_misdeal_cards"]:
            return self._misdeal(h, "first_cards_exposed", "exposed_misdeal_cards")
        if self.deal_rules["button_card_exposed_misdeal"] and seat == p.button and seat in p.dealt_in:
            return self._misdeal(h, "button_card_exposed", "button_card_exposed_misdeal")
        if h.deal.exposed >= 1 and self.deal_rules["multiple_exposed_misdeal"]:
            return self._misdeal(h, "multiple_exposed", "multiple_exposed_misdeal")
        h.deal.exposed += 1
        line = ReplaceExposed(seat=seat, card=card, rule=prof.rule("deal", "single_exposed_procedure"))
        self.alerts.append(line)
        return [line]

    def _check_deal_complete(self, h: Hand) -> list[OutputLine]:
        d = h.deal
        if d.complete or d.full < len(h.positions.dealt_in):
            return []
        d.complete = True
        return self._absent_hands(h)

    def _absent_hands(self, h: Hand) -> list[OutputLine]:
        """An absent player is dealt in; the hand is dead once the last card is dealt (cool_mule:5.n)."""
        d = h.deal
        if d.absent_done or not self.deal_rules["absent_hand_dead"]:
            return []
        d.absent_done = True
        out: list[OutputLine] = []
        for seat in h.positions.dealt_in:
            player = self.players.get(seat)
            if player is not None and player.away and seat in h.play.live:
                out.extend(self._dead(h, seat, "absent", "absent_hand_dead"))
        return out

    def rule_expose(self, ev: Expose, n: int) -> list[OutputLine]:
        """A hole card already dealt became exposed: by the player (Corner Pocket kills the hand), or by
        the dealer while the deal goes on (ruled as a card exposed in the deal)."""
        h = self._current("expose")
        seat, card, by = ev.seat, ev.card, ev.by
        d = h.deal
        if seat not in h.positions.dealt_in:
            raise Rejected(f"seat {seat} was dealt no cards in hand {h.number}")
        if d.cards.get(seat, 0) == 0:
            raise Rejected(f"seat {seat} holds no card to expose yet")
        if card is not None:
            fouled = self._fouled_deck(h, (card,), holder=seat)  # another seat's card, or one out
            if fouled:
                return fouled
        if by == "player" or d.complete or d.action_started:
            if card is not None:
                d.exposed_cards[card] = (seat, False)  # it stays in the seat's hand and plays
            # A player's own exposure: Corner Pocket kills the hand, the others do not.
            if by == "player" and self.deal_rules["player_exposure"] == "kill":
                return self._dead(h, seat, "exposed_cards", "player_exposure")
            return []  # after the deal a dealer's exposure is no misdeal either: the card plays
        # The card most recently dealt to the seat was flashed while the deal goes on.
        ruling = self._exposed_in_deal(h, seat, card, d.received[seat][-1])
        if ruling and isinstance(ruling[0], ReplaceExposed):
            if d.cards[seat] == 2:
                d.full -= 1
            d.cards[seat] -= 1
            if card is not None:
                d.exposed_cards[card] = (seat, True)
        return ruling

    def rule_boxed(self, ev: Boxed, n: int) -> list[OutputLine]:
        """A card found face up in the deck: replaced, or after substantial action shown and discarded;
        two before substantial action are a misdeal where the book says so."""
        h = self._current("boxed")
        d, prof = h.deal, self.profile
        if not d.substantial:
            if d.boxed >= 1 and self.deal_rules["multiple_boxed_misdeal"]:
                return self._misdeal(h, "multiple_boxed", "multiple_boxed_misdeal")
            d.boxed += 1
            setting = "boxed_before_substantial"
        else:
            setting = "boxed_after_substantial"
        return [BoxedCard(card=ev.card, procedure=self.deal_rules[setting], rule=prof.rule("deal", setting))]

    def rule_button_seen(self, ev: ButtonSeen, n: int) -> list[OutputLine]:
        """The physical button where the camera saw it: before the deal it must be moved to the hand's
        button (or the hand is a misdeal where the book says so)."""
        h = self.hand
        if h is None or h.void or h.play is None:
            return []  # between hands the button is on its way; it is checked once a hand starts
        seat, expected = ev.seat, h.positions.button
        previously = h.button_seen
        h.button_seen = seat
        if seat == expected:
            if previously is not None and previously != expected:
                self.alerts = [a for a in self.alerts if not isinstance(a, ButtonMisplaced)]
            return []
        if h.deal.off_deck == 0 and not h.deal.action_started:
            line = ButtonMisplaced(expected=expected, seen=seat, rule=h.positions.rules["button"])
            self.alerts.append(line)
            return [line]
        if not h.deal.substantial and self.deal_rules["button_misplaced_misdeal"]:
            return self._misdeal(h, "button_misplaced", "button_misplaced_misdeal")
        return []

    # ---- substantial action ------------------------------------------------------------------------

    def _action_begins(self, h: Hand) -> list[OutputLine]:
        """The first action of a hand: a card from now on is ruled on as dealt after betting began."""
        d = h.deal
        if d.action_started:
            return []
        d.action_started = True
        d.unobserved = d.off_deck == 0
        return self._absent_hands(h)

    def _count_substantial(self, h: Hand, seat: int, kind: str, in_turn: bool) -> list[OutputLine]:
        """Substantial action as each rulebook defines it; after it no misdeal can be declared."""
        d = h.deal
        if d.substantial:
            return []
        definition = self.deal_rules["substantial_action"]
        d.acted_seats.add(seat)
        if in_turn:
            d.in_turn_actions += 1
            if kind in CHIPS_IN:
                d.in_turn_with_chips += 1
        if kind in PASSIVE:
            d.passive += 1
        else:
            d.aggressive += 1
        if definition == "one_aggressive_or_three_passive":  # bar_league:Substantial Action
            reached = d.aggressive >= 1 or d.passive >= 3
        elif definition == "two_with_chips_or_three":  # bluff_street:33.c
            reached = (d.in_turn_actions >= 2 and d.in_turn_with_chips >= 1) or d.in_turn_actions >= 3
        else:  # two players acted: cool_mule:5.o, corner_pocket:Dealing.H
            reached = len(d.acted_seats) >= 2
        if not reached:
            return []
        d.substantial = True
        return [SubstantialAction(rule=self.profile.rule("deal", "substantial_action"))]

    # ---- what the camera saw (observed tables) ------------------------------------------------------

    def _observed_action(self, h: Hand, seat: int, word: str) -> list[OutputLine]:
        """An `action` line at an observed table: counted toward substantial action as entered, a fold taken
        out of the hand. Nothing else is ruled from it: with the other actions unseen, its turn and size
        cannot be judged without ruling on actions nobody entered."""
        play = h.play
        if play.finished:
            raise Rejected("the hand is over")
        if seat not in play.stacks:
            raise Rejected(f"seat {seat} was not dealt in this hand")
        if seat in play.folded:
            raise Rejected(f"seat {seat} has folded")
        if word == "fold":
            play.seen_fold(seat)
        return self._seen_action(h, seat, word)

    def rule_fold_seen(self, ev: FoldSeen, n: int) -> list[OutputLine]:
        """The camera saw a seat's cards go into the muck: one passive action (a fold)."""
        h = self.hand
        if h is None or h.void or h.play is None:
            return []  # cards pushed in between hands or after a misdeal: nothing to rule on
        seat = ev.seat
        if seat not in h.play.stacks:
            raise Rejected(f"seat {seat} was not dealt in hand {h.number}")
        if not self.observed or not h.play.seen_fold(seat):
            return []  # entered: the `action` line tells it; a fold seen twice is one fold
        return self._seen_action(h, seat, "fold")

    def rule_chips_seen(self, ev: ChipsSeen, n: int) -> list[OutputLine]:
        """The camera saw chips go forward from a seat: one action that puts chips in (call, bet or raise,
        which is not known). A blind or ante seen going in while the cards are dealt is no action."""
        h = self.hand
        if h is None or h.void or h.play is None:
            return []
        seat, play, d = ev.seat, h.play, h.deal
        if seat not in play.stacks:
            raise Rejected(f"seat {seat} was not dealt in hand {h.number}")
        if not self.observed or seat in play.folded or play.finished:
            return []
        if (
            not d.complete
            and not d.rounds_closed
            and seat not in d.posted
            and seat in self._forced_bet_seats(h)
        ):
            # Nobody acts before the deal is over: these chips are the seat's blind or ante (bar_league:
            # Substantial Action counts bets, calls, raises and completions, never a forced bet).
            d.posted.add(seat)
            return []
        return self._seen_action(h, seat, "call")

    @staticmethod
    def _forced_bet_seats(h: Hand) -> set[int]:
        p, level = h.positions, h.level
        seats = {s for s in (p.sb, p.bb) if s is not None}
        if level.ante:
            seats.update((p.bb,) if level.big_blind_ante else p.dealt_in)
        return seats

    def _seen_action(self, h: Hand, seat: int, kind: str) -> list[OutputLine]:
        """One action seen (or entered) at an observed table. Its place in the turn order is not known: it
        counts as in turn (bluff_street:33.c counts actions in turn)."""
        out = self._action_begins(h)
        h.deal.round_acted.add(seat)
        out.extend(self._count_substantial(h, seat, kind, True))
        return out

    def _observed_board(self, h: Hand, cards: tuple[str, ...], count: int | None) -> list[OutputLine]:
        """Board cards at an observed table. The betting round before them is over: every player still in
        acted in it at least once (each such unseen action counts as passive: whether chips went in is not
        known). The board itself is ruled only where no betting knowledge is needed (a four-card flop,
        more cards than a street holds); HandPlay skips the rest."""
        street = h.play.street
        board = h.play.deal_board(cards, count)  # checks first: a rejected line changes nothing
        d = h.deal
        if street in d.rounds_closed:
            return board  # the same street again (a flop re-dealt): its round was counted already
        d.rounds_closed.add(street)
        out = self._action_begins(h)
        for seat in h.play.live:
            if seat not in d.round_acted:
                out.extend(self._count_substantial(h, seat, "check", True))
        d.round_acted = set()
        return out + board

    def _fouled_deck(self, h: Hand, cards: tuple[str, ...], holder: int | None = None) -> list[OutputLine]:
        """A card already out in this hand turns up again: the deck is fouled (bluff_street:33.d.2 "If two
        cards of the same rank and suit are found, all action is void, and all chips in the pot are returned
        to the participants who wagered them"). The hand is void like a misdealt one (stacks are written
        only at its end, so every chip goes back) and is dealt again with a clean deck.

        Out already: on the board, in a tabled hand, or a hole card seen face up in the deal (issue 17);
        `holder`: the seat whose own hand `cards` are (tabled or exposed), for whom its own exposed card
        (still in its hand) is no second card, unlike one replaced in the deal, which became the burn.

        Not at an observed table: there every card code is the camera's reading, and a misread card
        (a 6 read as a 5) would look like a duplicate and void a sound hand; the table says nothing
        rather than something false (issue 14)."""
        if self.observed or self.deal_rules["fouled_deck"] != "void_return_chips":
            return []
        seen, play = h.deal.exposed_cards, h.play
        for card in cards:  # the first card out already, if any
            if card not in ALL_CARDS:
                continue
            if play.card_is_out(card):
                break
            exposure = seen.get(card)
            if exposure is not None and (holder is None or exposure[1] or exposure[0] != holder):
                break
        else:
            return []
        h.void = True
        h.misdeal_reason = "fouled_deck"
        h.play = None
        line = FouledDeck(card=card, rule=self.profile.rule("deal", "fouled_deck"))
        self.alerts = [line]
        return [line]
