"""Bad input: every malformed or impossible line is an `error` line naming the line and the problem, the
state stays as it was, and the engine goes on."""

from __future__ import annotations

import json

import pytest

from controller.rules.engine import TableEngine
from tests.rules.tablekit import HAND_START, LEVEL, Table, deal, seat

BAD_LINES = [
    ("{not json", "malformed JSON"),
    ("[1, 2]", "expected a JSON object"),
    ('{"seat": 1}', "missing field 'type'"),
    ('{"type": "teleport"}', "unknown type 'teleport'"),
    ('{"type": "seat", "seat": 11, "player": "X"}', "does not exist"),
    ('{"type": "seat", "seat": 0, "player": "X"}', "at least 1"),
    ('{"type": "seat", "seat": "3", "player": "X"}', "must be an integer"),
    ('{"type": "seat", "seat": 3}', "'player'"),
    ('{"type": "deal", "seat": 2, "card": "1x"}', "is not a card"),
    ('{"type": "deal", "seat": 2, "card": "kd"}', "must be written Kd"),
    ('{"type": "level", "sb": 200, "bb": 100}', "larger than the big blind"),
    ('{"type": "action", "seat": 2, "action": "shove"}', "not one of"),
    ('{"type": "board", "cards": ["Ah", "Ah", "Kd"]}', "same card twice"),
    ('{"type": "leave", "seat": 2, "reason": "bored"}', "not one of"),
    ('{"type": "deal", "seat": 2}', "no hand in progress"),
    ('{"type": "seat", "seat": 1, "player": "Z"}', "seat 1 is taken"),
    ('{"type": "seat", "seat": 9, "player": "P1"}', "already seated at seat 1"),
    ('{"type": "leave", "seat": 8}', "seat 8 is empty"),
    ('{"type": "hand_end"}', "no hand in progress"),
]


@pytest.mark.parametrize(("text", "message"), BAD_LINES)
def test_bad_line_is_an_error_naming_line_and_problem_and_changes_nothing(text, message):
    t = Table("bluff_street", players=[1, 2, 3])
    before = t.engine.snapshot()
    out = t.feed(text)
    assert out == [{"type": "error", "line": t.n, "message": out[0]["message"]}]
    assert message in out[0]["message"]
    assert t.engine.snapshot() == before
    # ...and the engine goes on: the next hand is exactly what it would have been.
    reference = Table("bluff_street", players=[1, 2, 3])
    assert t.hand() == reference.hand()


def test_rejected_deal_mid_hand_leaves_the_deal_state_alone():
    t = Table("cool_mule", players=[1, 2, 3, 4])
    h = t.hand()
    t.feed(deal(h["dealt_in"][0]))
    assert t.feed('{"type":"deal","seat":99}')[0]["type"] == "error"
    # the second card still goes to the second seat without any ruling
    assert t.feed(deal(h["dealt_in"][1])) == []


def test_blank_and_comment_lines_are_skipped():
    e = TableEngine("cool_mule", 6)
    assert e.feed("") == [] and e.feed("# a comment") == [] and e.feed("   ") == []


def test_table_line_only_first():
    t = Table("cool_mule", players=[1, 2])
    out = t.feed({"type": "table", "seats": 6, "profile": "bar_league"})
    assert out[0]["type"] == "error" and "must come first" in out[0]["message"]


def test_unknown_profile_in_table_line():
    e = TableEngine("cool_mule", 6)
    out = e.feed(json.dumps({"type": "table", "seats": 6, "profile": "casino_royale"}), 1)
    assert out[0]["type"] == "error" and "casino_royale" in out[0]["message"]


def test_seat_with_stack_and_level_reaches_the_hand():
    t = Table("bar_league")
    t.feed(seat(1, stack=1000), seat(2, stack=1000), LEVEL)
    assert t.feed(HAND_START)[0]["type"] == "hand"
