"""The seat draw (pure): every player one seat, tables as even as sizes allow, seat 1 filled where it
is the first button, reproducible from the seed."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.registry.draw import DrawError, TableSpec, draw_late_seat, draw_seats


@st.composite
def draws(draw):
    sizes = draw(st.lists(st.integers(2, 10), min_size=1, max_size=6))
    tables = [TableSpec(f"T{i + 1}", s) for i, s in enumerate(sizes)]
    players = [f"P{i}" for i in range(draw(st.integers(1, sum(sizes))))]
    return tables, players, draw(st.integers(0, 2**32)), draw(st.booleans())


@settings(max_examples=300, deadline=None)
@given(draws())
def test_draw_properties(case):
    tables, players, seed, seat1 = case
    result = draw_seats(players, tables, random.Random(seed), seat1_button=seat1)
    assert sorted(a.player_id for a in result) == sorted(players)
    seats = {(a.table_id, a.seat) for a in result}
    assert len(seats) == len(players)  # nobody shares a seat
    size = {t.table_id: t.seats for t in tables}
    assert all(1 <= a.seat <= size[a.table_id] for a in result)
    counts = {t.table_id: sum(a.table_id == t.table_id for a in result) for t in tables}
    # even: a table with room never has 2+ fewer players than another table
    for t in tables:
        if counts[t.table_id] < t.seats:
            assert all(counts[t.table_id] >= c - 1 for c in counts.values())
    if seat1:
        assert all((tid, 1) in seats for tid, c in counts.items() if c)
    assert draw_seats(players, tables, random.Random(seed), seat1_button=seat1) == result


def test_draw_is_random_across_seeds():
    tables = [TableSpec("T1", 9), TableSpec("T2", 9)]
    players = [f"P{i}" for i in range(12)]
    outcomes = {tuple(draw_seats(players, tables, random.Random(s), seat1_button=True)) for s in range(20)}
    assert len(outcomes) == 20


@pytest.mark.parametrize(
    "players, tables, message",
    [
        (["A", "B", "C"], [TableSpec("T1", 2)], "3 players but only 2 seats"),
        (["A", "A"], [TableSpec("T1", 6)], "listed twice"),
        (["A"], [], "no tables"),
    ],
)
def test_bad_draws_refused(players, tables, message):
    with pytest.raises(DrawError, match=message):
        draw_seats(players, tables, random.Random(1), seat1_button=False)


def test_late_seat_goes_to_emptiest_table():
    tables = [TableSpec("T1", 4), TableSpec("T2", 4)]
    table, seat = draw_late_seat({"T1": {1, 2, 3}, "T2": {1}}, tables, random.Random(5))
    assert table == "T2" and seat in (2, 3, 4)
    with pytest.raises(DrawError, match="all 8 seats are taken"):
        draw_late_seat({"T1": {1, 2, 3, 4}, "T2": {1, 2, 3, 4}}, tables, random.Random(5))
