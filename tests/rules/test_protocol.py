"""Bad input: every malformed or impossible line is an `error` line naming the line and the problem, the
state stays as it was, and the engine goes on."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.engine import TableEngine
from controller.rules.events import ACTIONS as WORDS
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


def test_a_dict_fed_to_the_engine_is_neither_changed_nor_kept():
    """A dict line is read, never changed or kept: the caller's dict comes back unchanged, changing it
    afterwards changes nothing in the table, and the rulings are those of the same line as JSON text."""
    import copy
    import json

    from bench.gen_session import generate

    # A hand with an out-of-turn call that waits for its turn (bluff_street: binding), chips and a
    # declaration, then a generated session.
    lines = [{"type": "table", "seats": 6, "profile": "bluff_street"}]
    lines += [{"type": "seat", "seat": s, "player": f"P{s}", "stack": 5000} for s in range(1, 7)]
    lines += [{"type": "level", "sb": 50, "bb": 100}, {"type": "button", "seat": 6}, {"type": "hand_start"}]
    lines += [{"type": "deal", "seat": s} for _ in range(2) for s in range(1, 7)]
    lines += [
        {"type": "action", "seat": 5, "action": "call"},  # out of turn: seat 3 is to act
        {"type": "action", "seat": 3, "action": "fold"},
        {"type": "action", "seat": 4, "action": "fold"},  # seat 5's call comes due
        {"type": "action", "seat": 6, "action": "raise", "chips": [100, 100, 100]},
        {"type": "action", "seat": 1, "action": "bet", "declared": "raise"},
        {"type": "hand_end"},
    ]
    lines += [json.loads(t) for t in generate(30, seats=6, profile="bluff_street", seed=3)[8:]]
    kept = copy.deepcopy(lines)
    as_text, as_dicts = TableEngine("bluff_street", 6), TableEngine("bluff_street", 6)
    for n, (line, same) in enumerate(zip(lines, kept, strict=True), 1):
        expected = as_text.feed(json.dumps(same), n)
        assert as_dicts.feed(line, n) == expected
        assert line == same
        line.clear()  # the caller reuses its dict: the table must not notice
        line["type"] = "garbage"
    assert as_dicts.snapshot() == as_text.snapshot()


# ---- a line as a dict and as JSON text ------------------------------------------------------------------

_seat_no = st.one_of(st.integers(-1, 11), st.sampled_from([True, 2.0, "3", None]))
_card = st.sampled_from(["Ah", "Kd", "7c", "Td", "2s", "ah", "1x", 7, None])
_line = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("deal"), "seat": _seat_no},
        optional={"card": _card},
    ),
    st.fixed_dictionaries(
        {"type": st.just("action"), "seat": _seat_no, "action": st.sampled_from([*WORDS, "x", 3, None])},
        optional={
            "to": st.one_of(st.integers(-2, 500), st.sampled_from([True, 1.5, "9", None])),
            "chips": st.sampled_from([None, [100], [], [0], "x"]),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["board", "show"]), "seat": _seat_no},
        optional={"cards": st.one_of(st.lists(_card, max_size=6), st.sampled_from(["Ah", None, [["Ah"]]]))},
    ),
    st.fixed_dictionaries(
        {"type": st.just("seat"), "seat": _seat_no},
        optional={
            "player": st.sampled_from(["A", "", 7, True, None, ["A"]]),
            "stack": st.one_of(st.integers(-1, 3), st.sampled_from([None, 2.5, True])),
            "moved": st.sampled_from([True, False, None, 0, 1, "yes"]),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["burn", "hand_start", "hand_end", "muck", "button", "away", "back"])},
        optional={"seat": _seat_no},
    ),
    st.fixed_dictionaries(
        {"type": st.just("table")},
        optional={
            "seats": st.one_of(st.integers(0, 25), st.sampled_from([None, True, 6.0])),
            "profile": st.sampled_from(["cool_mule", 3, None]),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("level")},
        optional={
            "sb": st.one_of(st.integers(-1, 120), st.sampled_from([None, True, 50.0])),
            "bb": st.one_of(st.integers(-1, 120), st.sampled_from([None, False, "100"])),
            "ante": st.one_of(st.integers(-1, 20), st.sampled_from([None, True, 1.5])),
            "big_blind_ante": st.sampled_from([True, False, None, 0, 1]),
        },
    ),
)


def _engine_at(stage: int) -> TableEngine:
    """A 6-seat table: 0 before any hand, 1 at hand start, 2 half-way through the deal, 3 after the first
    action, 4 past substantial action."""
    engine = TableEngine("bluff_street", 6)
    lines = [{"type": "seat", "seat": s, "player": f"P{s}", "stack": 5000} for s in (1, 2, 3, 5)]
    if stage >= 1:
        lines += [
            {"type": "level", "sb": 50, "bb": 100},
            {"type": "button", "seat": 5},
            {"type": "hand_start"},
        ]
    if stage >= 2:
        lines += [{"type": "deal", "seat": s} for s in (1, 2, 3, 5)][: 6 if stage == 2 else 8]
        lines += [{"type": "deal", "seat": s} for s in (1, 2, 3, 5)][: 2 if stage == 2 else 4]
    if stage >= 3:
        lines.append({"type": "action", "seat": 5, "action": "call"})
    if stage >= 4:
        lines += [
            {"type": "action", "seat": 1, "action": "call"},
            {"type": "action", "seat": 2, "action": "check"},
        ]
    for n, line in enumerate(lines, 1):
        assert not any(o["type"] == "error" for o in engine.feed(line, n)), line
    return engine


@settings(max_examples=400, deadline=None)
@given(_line, st.integers(0, 4))
def test_a_line_as_a_dict_is_ruled_as_the_same_line_as_json_text(ev, stage):
    """A line fed as a dict (the service's way in) and as JSON text (`rules replay`'s): both are checked by
    `events.parse` alone. Same outputs, same table afterwards, and the dict untouched."""
    import copy
    import json

    try:
        text = json.dumps(ev)
    except (TypeError, ValueError):
        return
    if json.loads(text) != ev:  # JSON would change the line (e.g. 2.0 and 2 read alike): nothing to compare
        return
    by_dict, by_text = _engine_at(stage), _engine_at(stage)
    kept = copy.deepcopy(ev)
    assert by_dict.feed(ev, 99) == by_text.feed(text, 99)
    assert ev == kept
    assert by_dict.snapshot() == by_text.snapshot()
    assert by_dict.stacks() == by_text.stacks()
    h1, h2 = by_dict.hand, by_text.hand
    if h1 is not None:
        assert h1.deal == h2.deal
