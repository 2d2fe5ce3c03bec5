"""Issue 17's last rules: Bar League's clock measured in tenths of the level (the `level` line's
optional `minutes`), and dodging the big blind when moving from a broken table (cool_mule:6.f,
dragons_den:25). Each test quotes the book it holds."""

from __future__ import annotations

import json

import pytest

from controller.rules.engine import TableEngine
from tests.rules.test_rulebook_fidelity import DODGE_AT_A_BROKEN_TABLE, quoted


class Feed:
    def __init__(self, profile: str, seats: int = 6) -> None:
        self.engine = TableEngine(profile, seats)
        self.n = 0

    def __call__(self, line: dict) -> list[dict]:
        self.n += 1
        return self.engine.feed(json.dumps(line), self.n)

    def hand(self) -> dict:
        return next(o for o in self({"type": "hand_start"}) if o["type"] == "hand")


def table(profile: str, seats=(1, 2, 3, 5), **level) -> Feed:
    f = Feed(profile)
    for s in seats:
        f({"type": "seat", "seat": s, "player": f"P{s}", "stack": 1000})
    f({"type": "level", "sb": 50, "bb": 100, **level})
    f({"type": "button", "seat": 1})
    return f


# ---------------------------------------------------------------- the clock: a tenth of the level


def test_bar_leagues_clock_may_be_called_after_a_tenth_of_the_level():
    quoted(
        "bar_league",
        "A “reasonable” amount of time is defined as 1/10th of the total duration of the current blind level.",
    )
    f = table("bar_league", minutes=20)
    f.hand()
    (clock,) = f({"type": "clock", "seat": 2})
    assert clock["reasonable_seconds"] == 120 and clock["seconds"] == 40
    assert clock["rule"] == "bar_league:Calling a Clock"


def test_without_the_levels_length_the_clock_line_gives_no_measure():
    f = table("bar_league")
    f.hand()
    (clock,) = f({"type": "clock", "seat": 2})
    assert "reasonable_seconds" not in clock and clock["seconds"] == 40


@pytest.mark.parametrize(
    ("profile", "text"),
    [
        ("cool_mule", "a player who is taking an unreasonable amount of time to make a decision"),
        ("dragons_den", "Once a reasonable amount of time has passed and a clock is called for"),
    ],
)
def test_where_the_book_gives_no_measure_the_floor_judges(profile, text):
    quoted(profile, text)
    f = table(profile, minutes=20)
    f.hand()
    (clock,) = f({"type": "clock", "seat": 2})
    assert "reasonable_seconds" not in clock


def test_a_levels_length_is_checked_by_name():
    f = Feed("bar_league")
    assert f({"type": "level", "sb": 5, "bb": 10, "minutes": 0})[0]["message"] == (
        "field 'minutes' must be at least 1, got 0"
    )
    assert "longer than a day" in f({"type": "level", "sb": 5, "bb": 10, "minutes": 2000})[0]["message"]
    assert (
        "'number' must be an integer" in f({"type": "level", "sb": 5, "bb": 10, "number": "8"})[0]["message"]
    )
    assert f({"type": "level", "sb": 5, "bb": 10, "minutes": 15, "number": 3}) == []


# ---------------------------------------------------------------- dodging blinds at a broken table


def _bb_skips_seat_4(profile: str) -> Feed:
    """Seats 1, 2, 3 and 5 play; seat 4 is kept for a player coming from a broken table. Hand 2 has
    the big blind at seat 5: it jumped over the empty seat 4."""
    f = table(profile)
    assert (f.hand()["bb"]) == 3
    f({"type": "hand_end"})
    assert f.hand()["bb"] == 5
    return f


@pytest.mark.parametrize(("profile", "text"), DODGE_AT_A_BROKEN_TABLE)
def test_a_moved_player_who_sits_down_after_the_big_blind_passed_his_seat_is_flagged(profile, text):
    quoted(profile, text)
    f = _bb_skips_seat_4(profile)
    (flag,) = f({"type": "seat", "seat": 4, "player": "M", "stack": 1000, "moved": True})
    assert flag == {
        "type": "blind_dodge",
        "seat": 4,
        "from": None,
        "player": "M",
        "broken_table": True,
        "skipped_bb_in_hand": 2,
        "rule": f"{profile}:{'6.f' if profile == 'cool_mule' else '25'}",
    }
    f({"type": "hand_end"})
    # dealt in only where his book lets a moved player play: never between the small blind and the
    # button (cool_mule:12.k, dragons_den:5), so he waits for the button to pass
    h3 = f.hand()
    assert 4 not in h3["dealt_in"] and {"seat": 4, "reason": "between_sb_and_button"} in h3["sitting_out"]


@pytest.mark.parametrize("profile", ["cool_mule", "dragons_den"])
def test_a_moved_player_who_arrives_before_the_big_blind_reaches_him_posts_it(profile):
    quoted(
        profile, "They can get the big blind" if profile == "dragons_den" else "They may receive any position"
    )
    f = table(profile)
    assert f.hand()["bb"] == 3
    f({"type": "hand_end"})
    assert f({"type": "seat", "seat": 4, "player": "M", "stack": 1000, "moved": True}) == []
    h2 = f.hand()
    assert h2["bb"] == 4 and 4 in h2["dealt_in"]


def test_a_book_without_a_dodging_rule_flags_nothing():
    quoted("bar_league", "rights and responsibilities")
    f = _bb_skips_seat_4("bar_league")
    assert f({"type": "seat", "seat": 4, "player": "M", "stack": 1000, "moved": True}) == []


def test_a_new_player_is_no_dodger():
    """cool_mule:6.e "New players to a table are dealt in immediately": only a player moved from
    another table is flagged."""
    quoted("cool_mule", "New players to a table are dealt in immediately.")
    f = _bb_skips_seat_4("cool_mule")
    assert f({"type": "seat", "seat": 4, "player": "N", "stack": 1000}) == []
