"""A PHH hand as protocol input events (../shared/spec/table-events.md), from `table` to `hand_end`.

`to_events` builds the typed events (controller/rules/events.py) straight from the hand, as a source that
reads another notation does; the replay hands each to the engine, whose `events.parse` checks it as it
checks a line. `to_lines` writes them as the dicts a table sends. Building the events rather than dicts
that parse then reads again: 28 us a hand against 40 (bench figures, 160 Pluribus hands).

Its own module because it is the one place that knows both notations: PHH's players, forced bets and
`cbr` totals on one side, the protocol's seats, `level` and named actions on the other.

Seat mapping: player pK sits in seat K of a table with as many seats as players. PHH orders players
from the small blind: p1 = small blind, p2 = big blind, ..., last = button; heads-up the blinds are
reversed (p1 = big blind, p2 = button and small blind), so the button is the last seat either way
except heads-up, where it is seat 2.
"""

from __future__ import annotations

import math

from controller.rules.events import (
    MOST_SEATS,
    Action,
    Board,
    Burn,
    Button,
    Deal,
    HandEnd,
    HandStart,
    InputEvent,
    Level,
    Muck,
    Seat,
    Show,
    Table,
)  # fmt: skip
from controller.rules.phh_read import PhhError, PhhHand, whole_chips

# The events with no fields, and each table size's two rounds of hole cards: immutable, so shared.
_HAND_START, _BURN, _HAND_END = HandStart(), Burn(), HandEnd()
_DEALS: dict[int, list[Deal]] = {}


def _deals(n: int) -> list[Deal]:
    deals = _DEALS.get(n)
    if deals is None:
        deals = [Deal(s) for s in range(1, n + 1)] * 2
        if n <= MOST_SEATS:  # (a larger table is refused by the engine: nothing to keep)
            _DEALS[n] = deals
    return deals


# A seat line names `moved` before `stack`, as these lines have always been written (tests/golden holds it).
_WRITTEN_ORDER = {Seat: ("seat", "player", "moved", "stack")}


def _written(event: InputEvent) -> dict:
    """An event as its line: `type` first, then its fields, those left unsaid (None, or False) left out."""
    line: dict = {"type": event.kind}
    for name in _WRITTEN_ORDER.get(type(event), event.__struct_fields__):
        value = getattr(event, name)
        if value is not None and value is not False:
            line[name] = list(value) if type(value) is tuple else value
    return line


def button_seat(n: int) -> int:
    return 2 if n == 2 else n


def _effective(values: list[int]) -> list[int]:
    """Per-player forced bets as paid: PHH reverses them heads-up."""
    return list(reversed(values)) if len(values) == 2 else list(values)


class _Where:
    """Where an action sits in the file, spelled out only when there is something wrong to report."""

    __slots__ = ("k", "path", "text")

    def __init__(self, path: str, k: int, text: str):
        self.path, self.k, self.text = path, k, text

    def __str__(self) -> str:
        return f"{self.path}: actions[{self.k}] {self.text!r}"

    def __format__(self, spec: str) -> str:
        return str(self)


def _split_cards(text: str, where: object) -> list[str]:
    if len(text) % 2:
        raise PhhError(f"{where}: cannot read cards {text!r}")
    return [text[i : i + 2] for i in range(0, len(text), 2)]


_PLAYER_INDEX: dict[int, tuple[dict[str, int], dict[str, tuple[int, str]]]] = {}


def _player_index(n: int) -> tuple[dict[str, int], dict[str, tuple[int, str]]]:
    """For a hand of n players: "p1" -> 0, ...; and the two usual actions written plainly, "p1 f" and
    "p1 cc", -> (0, "f"), ... (read without splitting them). Read-only, kept per n."""
    index = _PLAYER_INDEX.get(n)
    if index is None:
        players = {f"p{i + 1}": i for i in range(n)}
        plain = {f"{name} {verb}": (i, verb) for name, i in players.items() for verb in ("f", "cc")}
        index = _PLAYER_INDEX[n] = (players, plain)
    return index


def _dealt_to(hole_deals: list[list[str]]) -> dict[int, str]:
    """Player index -> the hole cards the "d dh" actions gave it (for "sm -": show what was dealt)."""
    dealt: dict[int, str] = {}
    for words in hole_deals:
        number = words[2][1:]
        if number.isdigit():
            p = int(number) - 1
            dealt[p] = dealt.get(p, "") + words[3]
    return dealt


def to_lines(hand: PhhHand, profile: str = "bluff_street") -> list[dict]:
    """The protocol input lines of one PHH hand, from `table` to `hand_end`, as dicts: `to_events`, each
    written as a line (`_written`)."""
    return [_written(event) for event in to_events(hand, profile)]


def to_events(hand: PhhHand, profile: str = "bluff_street") -> list[InputEvent]:
    """The input events of one PHH hand, from `table` to `hand_end`, built as the hand's lines would be read
    (the replay hands each to `events.parse`, which checks it as it checks a line)."""
    n = len(hand.players)
    sb, bb = hand.blinds[0], hand.blinds[1]
    antes = _effective(hand.antes)
    bb_index = 0 if n == 2 else 1
    ante, big_blind_ante = 0, False
    if any(antes):
        if len(set(antes)) == 1:
            ante = antes[0]
        elif [i for i, a in enumerate(antes) if a] == [bb_index]:
            ante, big_blind_ante = antes[bb_index], True
        else:
            raise PhhError(f"{hand.path}: antes {hand.antes} are neither uniform nor a big-blind ante")
    lines: list[InputEvent] = [Table(n, profile)]
    lines += [
        Seat(i + 1, name, stack, True)
        for i, (name, stack) in enumerate(zip(hand.players, hand.starting, strict=True))
    ]
    lines += [Level(sb, bb, ante, big_blind_ante), Button(button_seat(n)), _HAND_START]
    lines += _deals(n)

    # Follow the bets just enough to name each action as the protocol does (check or call, bet or raise).
    inf = math.inf
    stacks: list = []  # behind each player (inf: unknown)
    street_in: list = []  # put in this betting round
    for start, ante_paid, post in zip(hand.starting, antes, _effective(hand.blinds), strict=True):
        stack = inf if start is None else start
        stack -= min(ante_paid, stack)
        post = min(post, stack)
        stacks.append(stack - post)
        street_in.append(post)
    current = max(bb, max(street_in))
    player_index, plain = _player_index(n)
    hole_deals: list[list[str]] = []  # the "d dh" actions so far, read only for a later "sm -"
    append = lines.append
    for k, text in enumerate(hand.actions):
        known = plain.get(text)
        if known is not None:  # "pK f" or "pK cc" as written plainly: most actions
            p, verb = known
        else:
            words = (text.split("#", 1)[0] if "#" in text else text).split()
            if not words:
                continue
            actor = words[0]
            verb = words[1] if len(words) > 1 else ""
            if actor == "d":
                if verb == "dh" and len(words) >= 4:
                    hole_deals.append(words)  # face down: the deal lines above
                elif verb == "db" and len(words) >= 3:
                    cards = words[2]
                    if len(cards) == 6:  # a flop
                        board = (cards[:2], cards[2:4], cards[4:])
                    elif len(cards) == 2:  # a turn or river
                        board = (cards,)
                    else:
                        board = tuple(_split_cards(cards, _Where(hand.path, k, text)))
                    append(_BURN)
                    append(Board(board))
                    street_in = [0] * n
                    current = 0
                else:
                    raise PhhError(f"{_Where(hand.path, k, text)}: unknown dealer action")
                continue
            p = player_index.get(actor)
            if p is None:
                if not (actor[:1] == "p" and actor[1:].isdigit()):
                    raise PhhError(f"{_Where(hand.path, k, text)}: unknown actor {actor!r}")
                p = int(actor[1:]) - 1  # "p01" names player 1 too
                if not 0 <= p < n:
                    raise PhhError(f"{_Where(hand.path, k, text)}: there is no player {actor}")
        if verb == "f":
            append(Action(p + 1, "fold"))
        elif verb == "cc":
            owed = current - street_in[p]
            if owed > 0:
                pay = owed if owed < stacks[p] else stacks[p]
                stacks[p] -= pay
                street_in[p] += pay
                append(Action(p + 1, "call"))
            else:
                append(Action(p + 1, "check"))
        elif verb == "cbr":
            amount = words[2] if len(words) > 2 else ""
            if amount.isascii() and amount.isdigit():  # the usual whole number of chips
                to = int(amount)
            else:
                where = _Where(hand.path, k, text)
                if not amount:
                    raise PhhError(f"{where}: 'cbr' needs an amount")
                try:
                    to = whole_chips(float(amount) if "." in amount else int(amount), where)
                except ValueError:
                    raise PhhError(f"{where}: amount {amount!r} is not a number") from None
                if to is None:
                    raise PhhError(f"{where}: amount must be finite")
            pay = to - street_in[p]
            if pay > stacks[p]:
                where = _Where(hand.path, k, text)
                raise PhhError(f"{where}: {actor} bets {to} with only {stacks[p] + street_in[p]}")
            kind = "allin" if pay == stacks[p] else ("bet" if current == 0 else "raise")
            append(Action(p + 1, kind, to))
            stacks[p] -= pay
            street_in[p] = to
            if to > current:
                current = to
        elif verb == "sm":
            cards = words[2] if len(words) > 2 else ""
            if cards == "-":
                cards = _dealt_to(hole_deals).get(p, "?")
            if not cards:
                append(Muck(p + 1))
            elif "?" not in cards:
                if len(cards) == 4:  # two hole cards
                    shown = (cards[:2], cards[2:])
                else:
                    shown = tuple(_split_cards(cards, _Where(hand.path, k, text)))
                append(Show(p + 1, shown))
            # Unknown cards neither shown nor mucked: the hand cannot claim a contested pot.
        else:
            raise PhhError(f"{_Where(hand.path, k, text)}: unknown player action {verb!r}")
    append(_HAND_END)
    return lines
