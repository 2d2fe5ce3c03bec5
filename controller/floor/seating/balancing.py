"""Balancing and breaking tables, per rulebook (pure: table views in, proposed moves out).

Position is counted in hands until a seat posts the big blind: the seat after the current big blind
posts it next hand (0), then clockwise. An empty seat takes its place in that order, so a seat right
after the big blind "takes a single big blind" (dragons_den:6). Seats between the small blind and the
button for the next hand (strictly between the current small and big blinds) get no hand
(dragons_den:5, bluff_street:11, cool_mule:12.k, corner_pocket:Multi-table rules.B); a move there is
proposed only when no other seat is open, and says the player waits a hand.

Which player moves:
- `big_blind_to_worst` (dragons_den:6, bluff_street:12.a; borrowed by Bar League, whose rulebook
  leaves it to "the applicable procedure"): the player who is big blind next moves to the worst
  position, including taking a single big blind; worst position is never the small blind.
- `keep_position` (cool_mule:12.l, corner_pocket:Multi-table rules.C): the player who will not lose
  position as a result of the move; where several seats are open the worst positioned seat is taken.

Which table gives the player: the fullest, the first of those in the breaking order
(bluff_street:12, dragons_den:6 "a predetermined procedure"). Tables are kept within one player
(bluff_street:12.c); play halts at a table three or more short (dragons_den:6, bluff_street:12).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

METHODS = {
    "dragons_den": ("big_blind_to_worst", "dragons_den:6"),
    "bluff_street": ("big_blind_to_worst", "bluff_street:12.a"),
    "bar_league": ("big_blind_to_worst", "dragons_den:6"),  # bar_league:Player Movement is silent on who
    "cool_mule": ("keep_position", "cool_mule:12.l"),
    "corner_pocket": ("keep_position", "corner_pocket:Multi-table rules.C"),
}
BREAK_RULES = {
    "dragons_den": "dragons_den:5",
    "bluff_street": "bluff_street:11",
    "bar_league": "bar_league:Player Movement",
    "cool_mule": "cool_mule:12.j",
    "corner_pocket": "corner_pocket:Multi-table rules.A",
}
HALT_RULES = {"dragons_den": "dragons_den:6", "bluff_street": "bluff_street:12"}


@dataclass(frozen=True)
class TableSeats:
    """What the floor knows of one table: seats, who sits where, and the last hand's positions."""

    table_id: str
    seats: int
    players: dict[int, str]  # seat -> player id
    button: int | None = None
    sb_seat: int | None = None
    bb_seat: int | None = None
    stacks: dict[int, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.players)

    def open_seats(self) -> list[int]:
        return [s for s in range(1, self.seats + 1) if s not in self.players]


@dataclass(frozen=True)
class Move:
    player: str
    from_table: str
    from_seat: int
    to_table: str
    to_seat: int
    rule: str
    reason: str  # a plain sentence for the director
    kind: str = "balance"  # or "break"
    waits_one_hand: bool = False
    stack: int | None = None

    @property
    def id(self) -> str:
        return f"{self.player}:{self.from_table}.{self.from_seat}-{self.to_table}.{self.to_seat}"


def _after(seats: int, start: int) -> list[int]:
    """Seats clockwise after `start` (not including it), once round the table."""
    return [((start - 1 + k) % seats) + 1 for k in range(1, seats + 1)]


def _anchor(t: TableSeats) -> int:
    """The seat after which the next big blind is counted."""
    if t.bb_seat is not None:
        return t.bb_seat
    if t.button is not None:
        return ((t.button - 1 + 2) % t.seats) + 1  # the big blind is two to the button's left
    return t.seats  # no hand yet: count from seat 1


def hands_until_big_blind(t: TableSeats, extra: int | None = None) -> dict[int, int]:
    """Seat -> hands until it posts the big blind, for the occupied seats (and `extra`, if given)."""
    filled = set(t.players) | ({extra} if extra is not None else set())
    order = [s for s in _after(t.seats, _anchor(t)) if s in filled]
    return {s: i for i, s in enumerate(order)}


def between_sb_and_button(t: TableSeats, seat: int) -> bool:
    """True when `seat` lies between the next hand's button and small blind (no hand there)."""
    if t.sb_seat is None or t.bb_seat is None:
        return False
    inside = []
    for s in _after(t.seats, t.sb_seat):
        if s == t.bb_seat:
            break
        inside.append(s)
    return seat in inside


def seat_choices(t: TableSeats) -> list[tuple[int, int, bool]]:
    """Open seats as (hands until big blind, seat, waits a hand), worst position first; seats that
    wait a hand come last."""
    out = []
    for s in t.open_seats():
        out.append((hands_until_big_blind(t, s)[s], s, between_sb_and_button(t, s)))
    return sorted(out, key=lambda c: (c[2], c[0], c[1]))


def imbalance(tables: Sequence[TableSeats]) -> int:
    live = [t for t in tables if t.count]
    return max(t.count for t in live) - min(t.count for t in live) if len(live) > 1 else 0


def _order(tables: Sequence[TableSeats], breaking_order: Sequence[str]) -> list[TableSeats]:
    rank = {tid: i for i, tid in enumerate(breaking_order)}
    return sorted(tables, key=lambda t: rank.get(t.table_id, len(rank)))


def halted_tables(profile: str, tables: Sequence[TableSeats]) -> list[tuple[str, int, str]]:
    """(table, players short, rule) for tables three or more short of the fullest."""
    live = [t for t in tables if t.count]
    if len(live) < 2:
        return []
    most = max(t.count for t in live)
    rule = HALT_RULES.get(profile, "dragons_den:6")
    return [(t.table_id, most - t.count, rule) for t in live if most - t.count >= 3]


def balance_move(profile: str, tables: Sequence[TableSeats], breaking_order: Sequence[str]) -> Move | None:
    """One move that brings the tables closer to within one player, or None when they are."""
    live = [t for t in tables if t.count]
    if len(live) < 2 or imbalance(live) < 2:
        return None
    most = max(t.count for t in live)
    least = min(t.count for t in live)
    source = next(t for t in _order(live, breaking_order) if t.count == most)
    dest = next(t for t in live if t.count == least and t.open_seats())
    choices = seat_choices(dest)
    d_dst, to_seat, waits = choices[0]
    method, rule = METHODS.get(profile, METHODS["dragons_den"])
    src_pos = hands_until_big_blind(source)
    if method == "big_blind_to_worst":
        from_seat = min(src_pos, key=lambda s: src_pos[s])  # the big blind next hand
        why = (
            f"The big blind of the next hand at {source.table_id} (seat {from_seat}) moves to the worst position "
            f"at {dest.table_id}, seat {to_seat}"
        )
    else:
        keep = [s for s in src_pos if src_pos[s] <= d_dst]
        from_seat = max(keep, key=lambda s: (src_pos[s], -s))
        why = (
            f"Seat {from_seat} at {source.table_id} is {src_pos[from_seat]} hand(s) from the big blind; seat "
            f"{to_seat} at {dest.table_id} is {d_dst}: the player does not lose position"
        )
    if waits:
        why += "; the seat is between the small blind and the button, so the player waits one hand"
    return Move(
        source.players[from_seat],
        source.table_id,
        from_seat,
        dest.table_id,
        to_seat,
        rule,
        f"Balance: {source.table_id} has {most} players, {dest.table_id} {least}. " + why + f" ({rule}).",
        "balance",
        waits,
        source.stacks.get(from_seat),
    )


def table_to_break(tables: Sequence[TableSeats], breaking_order: Sequence[str]) -> TableSeats | None:
    """The next table in the breaking order whose players fit in the open seats of the others."""
    live = [t for t in tables if t.count]
    if len(live) < 2:
        return None
    for t in _order(live, breaking_order):
        room = sum(len(o.open_seats()) for o in live if o.table_id != t.table_id)
        if room >= t.count:
            return t
        break  # only the next table in the order is broken
    return None


def break_moves(profile: str, tables: Sequence[TableSeats], breaking_order: Sequence[str]) -> list[Move]:
    """Moves that break the next table in the order, or [] when it cannot be broken yet. Its players,
    from seat 1 up, each go to the table with the fewest players, into its worst open position."""
    broken = table_to_break(tables, breaking_order)
    if broken is None:
        return []
    rule = BREAK_RULES.get(profile, "bluff_street:11")
    others = {t.table_id: t for t in tables if t.count and t.table_id != broken.table_id}
    moves = []
    for from_seat in sorted(broken.players):
        player = broken.players[from_seat]
        dest = min(
            (t for t in others.values() if t.open_seats()),
            key=lambda t: (t.count, list(others).index(t.table_id)),
        )
        _d, to_seat, waits = seat_choices(dest)[0]
        text = (
            f"Break {broken.table_id}: seat {from_seat} goes to {dest.table_id}, seat {to_seat}; players from a "
            f"broken table take the rights of the position, blinds or button ({rule})."
        )
        if waits:
            text += " The seat is between the small blind and the button: the player waits one hand."
        moves.append(
            Move(
                player,
                broken.table_id,
                from_seat,
                dest.table_id,
                to_seat,
                rule,
                text,
                "break",
                waits,
                broken.stacks.get(from_seat),
            )
        )
        others[dest.table_id] = TableSeats(
            dest.table_id,
            dest.seats,
            {**dest.players, to_seat: player},
            dest.button,
            dest.sb_seat,
            dest.bb_seat,
            dest.stacks,
        )
    return moves


def proposals(profile: str, tables: Sequence[TableSeats], breaking_order: Sequence[str]) -> list[Move]:
    """Breaking first (it removes a table), else one balancing move."""
    moves = break_moves(profile, tables, breaking_order)
    if moves:
        return moves
    move = balance_move(profile, tables, breaking_order)
    return [move] if move else []
