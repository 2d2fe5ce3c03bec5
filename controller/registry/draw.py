"""The seat draw: players spread evenly over the event's tables, seats at random.

Pure: the random source is passed in (seeded `random.Random` for a reproducible, auditable draw).
Evenly means table head counts differ by at most one (Cool Mule 4.b) as far as table sizes allow.
When the rulebook makes seat 1 the first button (Cool Mule 4.a), seat 1 is always among the seats
drawn at every table that gets players, so the first button has a player behind it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


class DrawError(ValueError):
    pass


@dataclass(frozen=True)
class TableSpec:
    table_id: str
    seats: int


@dataclass(frozen=True)
class Assignment:
    player_id: str
    table_id: str
    seat: int


def head_counts(players: int, tables: list[TableSpec], rng: random.Random) -> dict[str, int]:
    """How many players each table gets: as equal as capacities allow; extra players at random tables."""
    capacity = sum(t.seats for t in tables)
    if players > capacity:
        raise DrawError(
            f"{players} players but only {capacity} seats at {len(tables)} table(s); "
            f"add a table or seat the extra players when others bust (cool_mule:1.c)"
        )
    counts = {t.table_id: 0 for t in tables}
    remaining = players
    while remaining:
        open_tables = [t for t in tables if counts[t.table_id] < t.seats]
        low = min(counts[t.table_id] for t in open_tables)
        candidates = [t for t in open_tables if counts[t.table_id] == low]
        rng.shuffle(candidates)
        for t in candidates[:remaining]:
            counts[t.table_id] += 1
            remaining -= 1
    return counts


def draw_seats(
    players: list[str], tables: list[TableSpec], rng: random.Random, *, seat1_button: bool
) -> list[Assignment]:
    """Assign every player one seat. Raises DrawError for no tables, duplicates or too many players."""
    if not tables:
        raise DrawError("the event has no tables; add one before the draw")
    if len(set(players)) != len(players):
        raise DrawError("a player is listed twice in the draw")
    counts = head_counts(len(players), tables, rng)
    order = list(players)
    rng.shuffle(order)
    assignments: list[Assignment] = []
    index = 0
    for table in tables:
        n = counts[table.table_id]
        if n == 0:
            continue
        if seat1_button:
            seats = [1, *rng.sample(range(2, table.seats + 1), n - 1)]
        else:
            seats = rng.sample(range(1, table.seats + 1), n)
        rng.shuffle(seats)
        for seat in seats:
            assignments.append(Assignment(order[index], table.table_id, seat))
            index += 1
    return sorted(assignments, key=lambda a: ([t.table_id for t in tables].index(a.table_id), a.seat))


def draw_late_seat(
    taken: dict[str, set[int]], tables: list[TableSpec], rng: random.Random
) -> tuple[str, int]:
    """A seat for a player registering after the draw: a random empty seat at the emptiest table."""
    open_tables = [t for t in tables if len(taken.get(t.table_id, set())) < t.seats]
    if not open_tables:
        raise DrawError(f"all {sum(t.seats for t in tables)} seats are taken")
    low = min(len(taken.get(t.table_id, set())) for t in open_tables)
    table = rng.choice([t for t in open_tables if len(taken.get(t.table_id, set())) == low])
    free = [s for s in range(1, table.seats + 1) if s not in taken.get(table.table_id, set())]
    return table.table_id, rng.choice(free)
