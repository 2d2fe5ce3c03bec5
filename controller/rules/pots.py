"""Main and side pots from what each seat put in, and how a pot splits between winners.

Pure arithmetic on whole chips: every chip put in is in exactly one pot, every chip of a pot goes to
exactly one winner, so chips are conserved by construction (the property tests check it).
"""

from __future__ import annotations

import msgspec


class Pot(msgspec.Struct, frozen=True, gc=False):
    amount: int
    eligible: tuple[int, ...]  # seats that can win it, in clockwise order from the button's left

    def as_dict(self) -> dict:
        return {"amount": self.amount, "eligible": list(self.eligible)}


def uncalled(contributed: dict[int, int]) -> tuple[int, int] | None:
    """(seat, chips) of the part of the largest contribution that nobody matched, or None.

    Whoever put in more than every other seat cannot win those extra chips from anyone: they go back.
    """
    if len(contributed) < 2:
        return None
    # The largest and second largest in one pass (read at the end of every betting round).
    top_seat, top, second = 0, None, None
    for seat, chips in contributed.items():
        if top is None or chips > top:
            second, top, top_seat = top, chips, seat
        elif second is None or chips > second:
            second = chips
    if top < 0 or top <= second:
        return None
    return top_seat, top - max(second, 0)


def build_pots(contributed: dict[int, int], live: list[int], dead: int = 0) -> list[Pot]:
    """Main pot first, then side pots. `contributed` covers every seat that put chips in (folded ones too);
    `live` lists the seats still holding a hand, in clockwise order; `dead` chips (antes, forfeited chips:
    owned by no bet) make the main pot, which every live seat can win. A layer above the smallest live contribution is a side pot among the live
    seats that reached it; chips of folded seats fill the layers they reach.
    """
    get = contributed.get
    live_in = [get(s, 0) for s in live]
    levels = sorted(set(live_in))
    chips_in = [chips for chips in contributed.values() if chips > 0]  # no layer holds chips at or below 0
    # [amount, eligible] per pot, made into `Pot`s once complete.
    pots: list[list] = [[dead, tuple(live)]] if dead else []
    previous = 0
    for level in levels:
        if level <= previous:
            continue
        amount = 0
        for chips in chips_in:
            if chips > previous:
                amount += (chips if chips < level else level) - previous
        # Every live seat reached the smallest live level; above it, those that put in as much.
        if level == levels[0]:
            eligible = tuple(live)
        else:
            eligible = tuple([s for s, chips in zip(live, live_in, strict=True) if chips >= level])
        if pots and pots[-1][1] == eligible:
            pots[-1][0] += amount
        else:
            pots.append([amount, eligible])
        previous = level
    # Chips of folded seats above every live level (a folded seat out-bet the live ones and the excess was
    # matched by another folded seat) belong to the last pot.
    extra = 0
    for chips in chips_in:
        if chips > previous:
            extra += chips - previous
    if extra:
        if pots:
            pots[-1][0] += extra
        else:
            pots.append([extra, tuple(live)])
    return [Pot(amount, eligible) for amount, eligible in pots if amount > 0]


def clockwise_from_button(seats: list[int] | tuple[int, ...], button: int, table_size: int) -> list[int]:
    """`seats` ordered clockwise starting with the first seat left of the button."""
    if len(seats) == 1:  # one winner, one pot: nothing to order (and no key function to call)
        return list(seats)
    return sorted(seats, key=lambda s: (s - button - 1) % table_size)


def split(
    amount: int, winners: list[int], button: int, table_size: int, odd_rule: str
) -> tuple[dict[int, int], dict[int, int]]:
    """Shares of one pot and the odd chips inside them.

    Every winner gets `amount // len(winners)`; the chips left over go to the first winner left of the
    button (`first_left_of_button`) or one each clockwise from the button's left
    (`one_each_from_left_of_button`). Returns (shares, odd chips per seat).
    """
    order = clockwise_from_button(winners, button, table_size)
    base, odd = divmod(amount, len(order))
    shares = dict.fromkeys(order, base)
    odd_chips: dict[int, int] = {}
    if odd:
        if odd_rule == "one_each_from_left_of_button":
            for s in order[:odd]:
                odd_chips[s] = 1
        else:
            odd_chips[order[0]] = odd
        for s, n in odd_chips.items():
            shares[s] += n
    return shares, odd_chips
