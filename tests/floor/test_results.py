"""Event-wide places, payouts, league points, season standings and CSV, per rulebook."""

from __future__ import annotations

import csv
import io

from controller.floor.results import (
    Bust,
    Finish,
    Standings,
    event_points,
    payouts,
    places_by_chips,
    season_csv,
    season_standings,
    standings_csv,
)


def test_a_bust_at_one_table_is_placed_across_the_event():
    """Nine players at three tables: the first out anywhere is ninth, not third at their table."""
    s = Standings(9)
    assert s.bust([Bust("p1", "T2")]) == [Finish("p1", 9, "T2")]
    assert s.remaining == 8


def test_two_out_in_one_hand_larger_starting_stack_finishes_higher_cool_mule_12d():
    """cool_mule:12.d: 'the player who started the hand with the most chips will be awarded the higher
    finishing position' (corner_pocket:General Rules.B says the same)."""
    s = Standings(9)
    s.bust([Bust("p1", "T2")])
    got = s.bust([Bust("small", "T1", 800), Bust("big", "T1", 2500)])
    assert [(f.player, f.place) for f in got] == [("big", 7), ("small", 8)]


def test_a_bust_delivered_twice_counts_once_and_the_last_player_wins():
    s = Standings(3)
    s.bust([Bust("a")])
    assert s.bust([Bust("a")]) == []
    s.bust([Bust("b")])
    assert s.winner("c") == Finish("c", 1)
    assert [f.place for f in s.by_place()] == [1, 2, 3]


def test_dragons_den_pays_300_200_100():
    """dragons_den:1: 'First Place ... $300. Second place ... $200. Third place ... $100. Chopping is not allowed.'"""
    finishes = [Finish(p, i) for i, p in enumerate(["w", "x", "y", "z"], start=1)]
    assert payouts("dragons_den", finishes) == {"w": 300, "x": 200, "y": 100}
    assert payouts("cool_mule", finishes) == {}
    assert payouts("cool_mule", finishes, [50, 25]) == {"w": 50, "x": 25}


def test_corner_pocket_points_by_finish_plus_one_per_knockout():
    """corner_pocket:Point System.A: 1st 20 points ... 20th 1 point; B: one point for each player eliminated."""
    finishes = [Finish("w", 1), Finish("x", 2, eliminated_by="w"), Finish("y", 21, eliminated_by="x")]
    assert event_points("corner_pocket", finishes) == {"w": 21, "x": 20, "y": 0}


def test_cool_mule_points_by_finish_only_and_only_when_reported():
    """cool_mule:12.b: 'points cannot be allocated other than by finish position'; 12.c: a player who does
    not report to the Tournament Director 'will not receive their points'."""
    finishes = [Finish("w", 1), Finish("x", 2, eliminated_by="w"), Finish("y", 3)]
    got = event_points("cool_mule", finishes, [10, 6, 3], not_reported=["y"])
    assert got == {"w": 10, "x": 6}


def test_bar_league_deal_ranks_by_chips_never_gifts_places():
    """bar_league:Dealmaking(d): 'the finishing rank of each player will always reflect their chip count
    ranking at the time the deal was finalized' (cool_mule:12.a at a time limit)."""
    assert places_by_chips({"a": 5000, "b": 12000, "c": 800}, 1) == [
        Finish("b", 1),
        Finish("a", 2),
        Finish("c", 3),
    ]
    pts = event_points("bar_league", places_by_chips({"a": 5000, "b": 12000}, 1), [15, 10])
    assert pts == {"b": 15, "a": 10}


def test_corner_pocket_season_attendance_bonus_and_qualification():
    """corner_pocket:Point System.C-D: 10 points for perfect attendance; 6 of the 10 events to qualify."""
    events = [{"a": 20, "b": 19}] * 6 + [{"a": 20}] * 4
    rows = season_standings("corner_pocket", events, season_events=10)
    a, b = rows
    assert (a.player, a.points, a.attendance_bonus, a.qualified) == ("a", 210, 10, True)
    assert (b.player, b.points, b.events, b.qualified) == ("b", 114, 6, True)
    short = season_standings("corner_pocket", [{"c": 5}] * 5, season_events=10)[0]
    assert not short.qualified and short.attendance_bonus == 0
    text = season_csv(rows)
    assert text.splitlines()[1] == "1,a,210,10,10,yes"


def test_standings_csv_has_places_prizes_and_points():
    finishes = [Finish("x", 2, "T1"), Finish("w", 1, "T2")]
    text = standings_csv(finishes, {"w": 300, "x": 200}, {"w": 20, "x": 19}, {"w": "Wen", "x": "Xi"})
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [(r["place"], r["name"], r["prize"], r["points"]) for r in rows] == [
        ("1", "Wen", "300", "20"),
        ("2", "Xi", "200", "19"),
    ]


def test_equal_starting_stacks_share_the_better_place_tda():
    """cool_mule:12.d and corner_pocket:General Rules.B order unequal starting stacks only; for equal
    ones the TDA's rule for players eliminated at the same time is borrowed: they finish tied, in
    the better place, and the next player out takes the place above them."""
    s = Standings(8)
    got = s.bust([Bust("a", "T1", 1500), Bust("big", "T1", 4000), Bust("b", "T1", 1500)])
    assert [(f.player, f.place) for f in got] == [("big", 6), ("a", 7), ("b", 7)]
    assert s.remaining == 5
    assert s.bust([Bust("c", "T2")]) == [Finish("c", 5, "T2")]


def test_the_tables_order_stands_when_a_starting_stack_is_unknown():
    s = Standings(5)
    got = s.bust([Bust("x", "T1", 1500), Bust("y", "T1")])
    assert [(f.player, f.place) for f in got] == [("x", 4), ("y", 5)]


def test_a_shared_place_splits_the_prizes_and_points_of_the_places_it_covers():
    """Two tied for 3rd at Dragon's Den share 3rd and 4th place's money (100 + 0); tied for 2nd they
    share 200 + 100. Not a chop (dragons_den:1 forbids chops, a deal among players): a place held by two.
    Corner Pocket: 20th and 21st tied share 1 + 0 point (corner_pocket:Point System.A)."""
    assert payouts("dragons_den", [Finish("w", 1), Finish("x", 2), Finish("y", 2)]) == {
        "w": 300,
        "x": 150,
        "y": 150,
    }
    assert payouts("dragons_den", [Finish("x", 3), Finish("y", 3)]) == {"x": 50, "y": 50}
    pts = event_points("corner_pocket", [Finish("a", 2), Finish("b", 2), Finish("c", 20), Finish("d", 20)])
    assert pts == {"a": 18.5, "b": 18.5, "c": 0.5, "d": 0.5}
