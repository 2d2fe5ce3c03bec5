"""The clock and the structure: levels, breaks, colour-ups, pause/resume/add time, transition rules."""

from __future__ import annotations

import pytest

from controller.floor import clock
from controller.floor.structure import StructureError, default_structure, parse_structure

LEVELS = [
    {"sb": 25, "bb": 50, "minutes": 20},
    {"sb": 50, "bb": 100, "minutes": 20, "colour_up": "25s out"},
    {"break": True, "minutes": 10},
    {"sb": 100, "bb": 200, "ante": 25, "minutes": 20},
]


def test_levels_follow_their_durations_and_breaks():
    s = parse_structure(LEVELS)
    st = clock.start(clock.ClockState(), now=1000.0)
    assert clock.view(s, st, 1000.0).level.bb == 50
    v = clock.view(s, st, 1000.0 + 20 * 60 + 1)
    assert (v.level.bb, v.level.colour_up) == (100, "25s out")
    assert clock.view(s, st, 1000.0 + 40 * 60 + 5).level.is_break
    # during a break, the level in force at the tables is still the one before it
    assert s.play_level(2).bb == 100 and s.next_play_level(2).ante == 25
    assert clock.view(s, st, 1000.0 + 50 * 60 + 1).level.ante == 25
    last = clock.view(s, st, 1000.0 + 99 * 60)
    assert last.finished and last.level.bb == 200


def test_pause_stops_the_clock_and_resume_goes_on_from_there():
    s = parse_structure(LEVELS)
    st = clock.start(clock.ClockState(), 0.0)
    st = clock.pause(st, 300.0)
    assert clock.view(s, st, 5000.0).seconds_left == pytest.approx(20 * 60 - 300)
    assert not clock.view(s, st, 5000.0).running
    st = clock.resume(st, 5000.0)
    assert clock.view(s, st, 5060.0).seconds_left == pytest.approx(20 * 60 - 360)


def test_add_time_lengthens_the_current_level_only():
    s = parse_structure(LEVELS)
    st = clock.start(clock.ClockState(), 0.0)
    st = clock.add_time(s, st, 600.0, 120)
    assert clock.view(s, st, 600.0).seconds_left == pytest.approx(720)
    # the next level is as long as ever
    assert clock.view(s, st, 20 * 60 + 121.0).level.bb == 100
    assert clock.view(s, st, 20 * 60 + 121.0).seconds_left == pytest.approx(20 * 60 - 1)
    # taking time never ends the level before it has a second left
    st2 = clock.add_time(s, st, 600.0, -10_000)
    assert clock.view(s, st2, 600.0).level.bb == 50


def test_corner_pocket_structure_is_the_rulebooks_table():
    """corner_pocket:Going up in Levels: 13 levels of 15 minutes, 'Red Out' at level 2, ante from level 8."""
    s = default_structure("corner_pocket")
    assert len(s.levels) == 13 and all(lvl.seconds == 900 for lvl in s.levels)
    assert (s.levels[1].colour_up, s.levels[7].ante, s.levels[12].bb) == ("Red Out", 500, 60000)
    assert s.source == "corner_pocket:Going up in Levels"


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "non-empty"),
        ([{"sb": 50, "bb": 25, "minutes": 10}], "0 < sb <= bb"),
        ([{"sb": 25, "bb": 50}], "structure.levels[1]: 'minutes'"),
        (
            [{"sb": 25, "bb": 50, "minutes": 5}, {"sb": 50, "bb": 100, "minutes": 5, "blinds": 3}],
            "levels[2]: unknown field(s) blinds",
        ),
        ([{"break": True, "minutes": 5}], "only breaks"),
    ],
)
def test_bad_structure_names_the_level_and_field(raw, message):
    with pytest.raises(
        StructureError,
        match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(").replace(")", r"\)"),
    ):
        parse_structure(raw)


def test_new_level_applies_to_next_hand_dragons_den_18():
    """dragons_den:18: 'the new level applies to the next hand': sent at once, in a hand or between hands
    (the table's engine takes a `level` line at its next hand_start)."""
    assert clock.transition_rule("dragons_den").rule == "dragons_den:18"
    assert clock.send_level_now("dragons_den", table_between_hands=True)
    assert clock.send_level_now("dragons_den", table_between_hands=False)
    assert clock.transition_rule("corner_pocket").rule == "corner_pocket:Going up in Levels.A"
    assert clock.transition_rule("bluff_street").rule == "bluff_street:24"


def test_bar_league_one_more_hand_at_previous_level_after_pot_pushed():
    """bar_league:Hand Start: 'If a blind level concludes after the previous pot has been pushed, one more
    hand will be played at the previous blind level before the new blind level takes effect.'"""
    assert not clock.send_level_now("bar_league", table_between_hands=True)
    assert clock.send_level_now("bar_league", table_between_hands=False)


def test_cool_mule_borrows_the_tda_rule():
    assert clock.transition_rule("cool_mule").rule == "dragons_den:18"


@pytest.mark.parametrize(
    ("profile", "rule", "words"),
    [
        ("bar_league", "bar_league:Chip Race", "left of the button"),
        ("corner_pocket", "corner_pocket:Going up in Levels.C-D", "small blind of the next hand"),
        ("dragons_den", "dragons_den:16", "does not race"),
        ("bluff_street", "bluff_street:22.a", "seat 1"),
    ],
)
def test_colour_up_steps_per_rulebook(profile, rule, words):
    got_rule, steps = clock.colour_up_steps(profile, "Red Out")
    assert got_rule == rule and steps[0] == "Colour-up: Red Out."
    assert any(words in s for s in steps) and any("raced out" in s or "Chip up" in s for s in steps)
