"""Showdown: who tables first, which tabled hand wins each pot (cards speak, via treys), and the award.

treys happily evaluates duplicate cards or a wrong number of them, so every card is checked here
before it is handed to treys.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import lru_cache
from itertools import combinations
from math import prod

import msgspec

from controller.rules.cards import ALL_CARDS, card_problem, is_card
from controller.rules.errors import Rejected
from controller.rules.events import AwardLine, PotUnresolved
from controller.rules.pots import Pot, clockwise_from_button, split


@lru_cache(maxsize=1)
def _evaluator():
    from treys import Evaluator  # imported on first showdown: building its tables takes a moment

    return Evaluator()


@lru_cache(maxsize=64)
def _treys_card(code: str) -> int:
    from treys import Card

    return Card.new(code)


_PRIMES: dict[str, int] = {}  # card code -> the prime treys gives its rank (filled on first use)


def _primes() -> dict[str, int]:
    if not _PRIMES:
        from treys import Card

        _PRIMES.update((code, Card.new(code) & 0xFF) for code in sorted(ALL_CARDS))
    return _PRIMES


def check_cards(cards: object, count: int, what: str, taken: dict[str, str]) -> list[str]:
    """The card codes in `cards`, or Rejected: not a list of `count` distinct codes, or a code already
    used elsewhere in this hand (`taken` maps card -> where it is, e.g. "the board", "seat 3")."""
    if not isinstance(cards, list) or len(cards) != count:
        raise Rejected(f"{what} must be a list of {count} cards, got {cards!r}")
    for card in cards:
        if not (type(card) is str and card in ALL_CARDS) and not is_card(card):
            raise Rejected(f"{what}: {card_problem(card)}")
    if count > 1 and len(set(cards)) != len(cards):
        raise Rejected(f"{what} lists the same card twice: {cards}")
    for card in cards:
        if card in taken:
            raise Rejected(f"{what}: {card} is already in {taken[card]}")
    return list(cards)


_RANKING: list = []  # treys' unsuited and flush tables, its hand classes' top ranks and names (first use)


def _ranking() -> list:
    if not _RANKING:
        from treys.lookup import LookupTable

        ev = _evaluator()
        tops = sorted(LookupTable.MAX_TO_RANK_CLASS)  # the worst rank of each class, best class first
        names = [ev.class_to_string(LookupTable.MAX_TO_RANK_CLASS[top]) for top in tops]
        _RANKING[:] = (ev.table.unsuited_lookup, ev.table.flush_lookup, tops, names)
    return _RANKING


def hand_value(hole: list[str], board: list[str]) -> tuple[int, str]:
    """(rank, name): lower rank is better (treys' scale, 1 = royal flush); name like "Full House".

    Seven cards go through treys' own lookup tables, which key a five-card hand by the product of its
    cards' primes. The best of the 21 five-card hands is found here with each prime taken once (treys'
    `evaluate` recomputes them per combination, several times slower), and the name is found by bisecting
    treys' class bounds (its `get_rank_class` compares them one by one); a test checks the two agree.
    """
    if len(hole) + len(board) != 7:
        ev = _evaluator()
        rank = ev.evaluate([_treys_card(c) for c in board], [_treys_card(c) for c in hole])
        return rank, ev.class_to_string(ev.get_rank_class(rank))
    unsuited, flush, tops, names = _RANKING or _ranking()
    prime_of = _PRIMES or _primes()
    cards = hole + board
    primes = [prime_of[c] for c in cards]
    # Every five-card hand as if unsuited: its product is that of all seven without the two left out.
    seven = prod(primes)
    rank = min([unsuited[seven // (a * b)] for a, b in combinations(primes, 2)])
    # Five cards of one suit are a flush (or straight flush), ranked in the flush table; a flush always
    # ranks better than the same five cards read unsuited, so the minimum above loses nothing.
    suits = "".join([c[1] for c in cards])
    for suit in "cdhs":
        if suits.count(suit) >= 5:
            same_suit = [p for p, s in zip(primes, suits, strict=True) if s == suit]
            rank = min(rank, min(flush[prod(five)] for five in combinations(same_suit, 5)))
            break
    return rank, names[bisect_left(tops, rank)]


def first_to_show(
    order_rule: str,
    no_bet_rule: str,
    live: list[int],
    button: int,
    sb_seat: int | None,
    table_size: int,
    last_aggressor: int | None,
    last_caller: int | None,
    first_to_act: int | None,
) -> int:
    """The seat that must table first after the final betting round.

    With a bet on the final round: the last aggressor (`last_aggressor`), or for Cool Mule the first live
    seat left of the last caller. Checked through: the first live seat left of the button, the first live
    seat from the small-blind position clockwise, or the seat that was first to act on that round.
    """
    if last_aggressor is not None and last_aggressor in live:
        if order_rule == "left_of_last_caller" and last_caller is not None:
            return _first_clockwise_after(live, last_caller, table_size)
        return last_aggressor
    if no_bet_rule == "small_blind":
        start = sb_seat if sb_seat is not None else (button % table_size) + 1
        return min(live, key=lambda s: (s - start) % table_size)
    if no_bet_rule == "earliest_position" and first_to_act in live:
        return first_to_act  # type: ignore[return-value]
    return clockwise_from_button(live, button, table_size)[0]


def _first_clockwise_after(live: list[int], seat: int, table_size: int) -> int:
    return min(live, key=lambda s: (s - seat - 1) % table_size)


class Award(msgspec.Struct):
    """One pot awarded: read-only once made."""

    pot: int
    amount: int
    winners: list[int]
    shares: dict[int, int]
    odd_chips: dict[int, int]
    hand: str | None  # name of the winning hand, None when uncontested

    def line(self, rule: str) -> AwardLine:
        return AwardLine(
            pot=self.pot,
            amount=self.amount,
            winners=self.winners,
            shares=dict(zip(map(str, self.shares), self.shares.values(), strict=True)),  # seats as JSON keys
            odd_chips_to=next(iter(self.odd_chips), None),
            odd_chips=dict(zip(map(str, self.odd_chips), self.odd_chips.values(), strict=True)),
            hand=self.hand,
            rule=rule,
        )


class Unresolved(msgspec.Struct, frozen=True):
    pot: int
    amount: int
    eligible: list[int]
    reason: str

    def line(self, rule: str) -> PotUnresolved:
        return PotUnresolved(
            pot=self.pot, amount=self.amount, eligible=self.eligible, reason=self.reason, rule=rule
        )


def award_pots(
    pots: list[Pot],
    shown: dict[int, list[str]],
    board: list[str],
    button: int,
    table_size: int,
    odd_rule: str,
) -> list[Award | Unresolved]:
    """Each pot on its own: an only claimant takes it unshown; otherwise the best tabled hand among the
    eligible seats wins (both hole cards tabled), ties split with odd chips by `odd_rule`."""
    values: dict[int, tuple[int, str]] = {}
    results: list[Award | Unresolved] = []
    for index, pot in enumerate(pots):
        if len(pot.eligible) == 1:
            seat = pot.eligible[0]
            results.append(Award(index, pot.amount, [seat], {seat: pot.amount}, {}, None))
            continue
        contenders = [s for s in pot.eligible if s in shown]
        if not contenders:
            results.append(Unresolved(index, pot.amount, list(pot.eligible), "no eligible hand was tabled"))
            continue
        if len(board) != 5:
            if len(contenders) == 1:
                seat = contenders[0]
                results.append(Award(index, pot.amount, [seat], {seat: pot.amount}, {}, None))
            else:
                results.append(
                    Unresolved(
                        index, pot.amount, list(pot.eligible), f"the board has {len(board)} cards, not 5"
                    )
                )
            continue
        # The best tabled hand and every seat that holds one as good (one loop: no generator per pot).
        best, winners = None, []
        for s in contenders:
            value = values.get(s)
            if value is None:
                value = values[s] = hand_value(shown[s], board)
            if best is None or value[0] < best:
                best, winners = value[0], [s]
            elif value[0] == best:
                winners.append(s)
        winners = clockwise_from_button(winners, button, table_size)
        shares, odd = split(pot.amount, winners, button, table_size, odd_rule)
        results.append(Award(index, pot.amount, winners, shares, odd, values[winners[0]][1]))
    return results
