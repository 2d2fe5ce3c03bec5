"""The scenario language: files are checked in full, problems named by file and step; matching rules."""

from __future__ import annotations

import pytest

from hil.scenario import (
    ScenarioError,
    describe_panel,
    load,
    matches,
    panel_matches,
    parse,
    shipped,
)

GOOD = {
    "name": "t",
    "profile": "cool_mule",
    "seats": 6,
    "players": [{"id": "P1", "name": "Ann", "seat": 1}, {"id": "P9", "name": "Ivo", "table": "T2"}],
    "steps": [
        {"tap": "P1", "expect": [{"checkin": {"player": "P1", "accepted": True}}]},
        {"move_button": 1},
        "hand_start",
        {"deal": [2, {"seat": 3, "flashed": True}], "expect": {"ruling": {"type": "misdeal"}}},
        {"board": ["Ah", "7c", "2d"]},
        {"action": {"seat": 2, "action": "call", "to": 100}},
        {"eliminate": 3},
        {"wait": 0.1},
    ],
}


def test_a_good_scenario_parses_into_numbered_titled_steps():
    sc = parse(GOOD, "good.yaml")
    assert [s.kind for s in sc.steps] == [
        "tap",
        "move_button",
        "hand_start",
        "deal",
        "board",
        "action",
        "eliminate",
        "wait",
    ]
    assert sc.steps[3].label == "step 4 (deal to seats 2, 3 flashed)"
    assert sc.steps[3].expect[0].kind == "ruling"
    assert sc.player("P9").seat is None and sc.player("P9").table == "T2"


def test_every_problem_is_reported_with_file_and_step():
    bad = dict(
        GOOD,
        profile="moon_rules",
        steps=[
            {"tap": "P7"},
            {"deal": {"seat": 9}},
            {"board": ["Xx"]},
            {"action": {"seat": 1, "action": "dance"}},
            {"hand_start": None, "deal": 1},
            {"deal": 2, "expect": [{"panel": {"seats": {2: "chartreuse"}}}]},
        ],
    )
    with pytest.raises(ScenarioError) as err:
        parse(bad, "bad.yaml")
    text = str(err.value)
    for needle in (
        "bad.yaml: profile: 'moon_rules'",
        "step 1: tap: player 'P7' is not in players",
        "step 2: deal: seat: expected 1..6, got 9",
        "step 3: board: 'Xx' is not a card code",
        "step 4: action: expected",
        "step 5: one step kind needed",
        "step 6: expect[1]: panel: seats: 2: colour 'chartreuse'",
    ):
        assert needle in text


def test_yaml_errors_name_the_line(tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text("name: x\nprofile: cool_mule\nsteps:\n  - deal: 3\n  - deal: {seat: 4, card: Zz}\n")
    with pytest.raises(ScenarioError) as err:
        load(f)
    assert "step 2 (line 5): deal: card: 'Zz'" in str(err.value)


def test_unknown_scenario_name_lists_the_shipped_ones():
    with pytest.raises(ScenarioError) as err:
        load("no_such_scenario")
    assert "demo" in str(err.value)


def test_every_shipped_scenario_is_valid_and_the_five_rulebooks_are_covered():
    scenarios = [load(p) for p in shipped()]
    assert {s.profile for s in scenarios} == {
        "cool_mule",
        "bar_league",
        "dragons_den",
        "corner_pocket",
        "bluff_street",
    }
    for profile in {s.profile for s in scenarios}:
        expected = {
            e.want.get("reason")
            for s in scenarios
            if s.profile == profile
            for st in s.steps
            for e in st.expect
            if e.kind == "ruling" and isinstance(e.want, dict) and e.want.get("type") == "misdeal"
        }
        assert {
            "first_cards_exposed",
            "multiple_exposed",
            "dealt_to_ineligible_seat",
            "first_card_wrong_seat",
            "eligible_seat_dealt_out",
            "button_misplaced",
        } <= expected, profile
        hands = [
            e.want
            for s in scenarios
            if s.profile == profile
            for st in s.steps
            for e in st.expect
            if e.kind == "ruling" and isinstance(e.want, dict) and e.want.get("type") == "hand"
        ]
        assert any(h.get("dead_button") is True for h in hands), profile
        assert any(h.get("dead_sb_seat") for h in hands), profile
        assert any(h.get("dealt_in") and len(h["dealt_in"]) == 2 for h in hands), profile  # heads-up


def test_matches_is_a_subset_match_with_seat_addressing():
    state = {
        "seats": [{"seat": 1, "player": "P1", "stack": None}, {"seat": 5, "player": "P4"}],
        "phase": "deal",
    }
    assert matches({"seats": {"5": {"player": "P4"}}}, state)
    assert matches({"seats": {5: {"player": "P4"}}}, state)
    assert not matches({"seats": {"5": {"player": "P1"}}}, state)
    assert not matches({"seats": {"3": {"player": "P1"}}}, state)
    assert matches({"type": "hand", "dealt_in": [2, 3]}, {"type": "hand", "dealt_in": [2, 3], "button": 1})
    assert not matches({"dealt_in": [2, 3]}, {"dealt_in": [2, 3, 4]})
    assert not matches({"dead_button": False}, {"dead_button": 0})  # booleans are not numbers
    assert not matches({"sb": None}, {"sb": 2})


def test_panel_matching_by_colour_name_and_effect():
    colours = {"white": (255, 255, 255), "red": (255, 0, 0), "off": (0, 0, 0)}
    shown = {
        "text": "MISDEAL\nfirst cards",
        "seats": [
            {"seat": 1, "color": [255, 0, 0], "effect": "blink"},
            {"seat": 2, "color": [0, 0, 0], "effect": "solid"},
        ],
    }
    assert panel_matches({"text_contains": "misdeal", "seats": {1: "red"}}, shown, colours)
    assert panel_matches({"seats": {1: {"color": "red", "effect": "blink"}}}, shown, colours)
    assert not panel_matches({"seats": {1: {"color": "red", "effect": "solid"}}}, shown, colours)
    assert not panel_matches({"seats": {2: "white"}}, shown, colours)
    assert describe_panel(shown, colours) == "text 'MISDEAL | first cards', seats lit 1:red/blink"
