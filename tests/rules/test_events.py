"""The typed events of controller/rules/events.py: one event type per input line of the spec, each frozen,
read by `parse` alone (defaults filled, problems named), and written back as the same line."""

from __future__ import annotations

import doctest
import json

import msgspec
import pytest

from controller.rules import events
from controller.rules.errors import Rejected

SPEC_INPUTS = (
    "table", "level", "seat", "leave", "button", "away", "back", "hand_start", "deal", "expose", "boxed",
    "burn", "board", "action", "button_seen", "show", "muck", "hand_end", "fold_seen", "chips_seen",
)  # fmt: skip

LINES = [
    {"type": "table", "seats": 6, "profile": "cool_mule", "actions": "observed"},
    {"type": "level", "sb": 50, "bb": 100, "ante": 10, "big_blind_ante": True},
    {"type": "level", "sb": 50, "bb": 100, "ante": 0, "big_blind_ante": False, "minutes": 20, "number": 3},
    {"type": "seat", "seat": 3, "player": "Ann", "stack": 20000, "moved": True},
    {"type": "leave", "seat": 3, "reason": "eliminated"},
    {"type": "button", "seat": 2},
    {"type": "away", "seat": 2},
    {"type": "back", "seat": 2},
    {"type": "hand_start"},
    {"type": "deal", "seat": 4, "card": "Kd"},
    {"type": "expose", "seat": 4, "card": "Kd", "by": "player"},
    {"type": "boxed", "card": "2c"},
    {"type": "burn"},
    {"type": "board", "cards": ["Ah", "Td", "7c"]},
    {
        "type": "action",
        "seat": 5,
        "action": "raise",
        "to": 300,
        "chips": [100, 100, 100],
        "declared": "raise",
    },
    {"type": "button_seen", "seat": 1},
    {"type": "show", "seat": 5, "cards": ["As", "Ks"]},
    {"type": "muck", "seat": 5},
    {"type": "hand_end"},
    {"type": "clock", "seat": 5, "seconds": 30},
    {"type": "time_expired", "seat": 5},
    {"type": "penalty", "seat": 5, "reason": "language", "hands": 3},
    {"type": "fold_seen", "seat": 5},
    {"type": "chips_seen", "seat": 5},
]


def test_every_input_line_of_the_spec_has_one_event_type():
    assert set(SPEC_INPUTS) <= set(events.INPUT_TYPES)
    assert {line["type"] for line in LINES} == set(events.INPUT_TYPES)
    for cls in events.EVENT_TYPES:
        assert events.BY_KIND[cls.kind] is cls


@pytest.mark.parametrize("line", LINES, ids=[line["type"] for line in LINES])
def test_a_line_is_read_into_its_event_and_written_back_as_the_same_line(line):
    event = events.parse(json.dumps(line), seats=9)
    assert type(event).kind == line["type"]
    assert events.parse(line, seats=9) == event  # a dict and its JSON text read alike
    written = json.loads(events.encode(event))
    assert {k: v for k, v in written.items() if v is not None} == line
    assert events.parse(written, seats=9) == event
    assert msgspec.json.decode(events.encode(event), type=events.InputEvent) == event


def test_events_are_immutable_and_defaults_are_filled():
    event = events.parse('{"type":"seat","seat":2,"player":7}', seats=9)
    assert event == events.Seat(2, "7", None, False)
    with pytest.raises(AttributeError):
        event.seat = 3  # type: ignore[misc]
    assert events.parse('{"type":"leave","seat":2}', 9).reason == "left"
    assert events.parse('{"type":"expose","seat":2,"card":"Ah"}', 9).by == "dealer"
    assert events.parse('{"type":"level","sb":1,"bb":2}', 9).ante == 0


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"type":"action","seat":2,"action":"call","declared":"maybe"}', "field 'declared'"),
        ('{"type":"action","seat":2,"action":"bet","to":0}', "field 'to' must be at least 1"),
        ('{"type":"action","seat":2,"action":"call","chips":[5,0]}', "field 'chips'[1]"),
        ('{"type":"board","cards":["Ah","xx"]}', "field 'cards'[1]"),
        ('{"type":"show","seat":2,"cards":["Ah","Kd","Qs"]}', "two hole cards"),
        ('{"type":"penalty","seat":2}', "a penalty needs"),
        ('{"type":"table","seats":30}', "more than a Hold'em table can deal to"),
        ('{"type":"seat","seat":2,"player":"x","moved":"yes"}', "field 'moved' must be true or false"),
    ],
)
def test_a_bad_line_is_refused_naming_the_field_and_the_problem(line, message):
    with pytest.raises(Rejected, match=message.replace("[", r"\[").replace("]", r"\]")):
        events.parse(line, seats=9)


def test_blank_and_comment_lines_are_no_event():
    assert events.parse("   ", 9) is None and events.parse("# note", 9) is None


def test_the_module_examples_hold():
    failures, tried = doctest.testmod(events)
    assert tried and not failures


SPEC_OUTPUTS = (
    "hand", "misdeal", "replace_exposed", "extra_card", "boxed_card", "button_misplaced",
    "substantial_action", "dead_hand", "board_redeal", "action_ruled", "out_of_turn", "pots", "show_order",
    "award", "eliminated", "error",
)  # fmt: skip


def test_every_output_line_of_the_spec_has_one_event_type():
    assert set(SPEC_OUTPUTS) <= set(events.OUTPUT_TYPES)
    assert len(set(events.OUTPUT_TYPES)) == len(events.OUTPUT_TYPES)


def test_every_output_line_of_a_session_reads_back_into_its_type_and_writes_the_same_bytes():
    """What the engine hands out is exactly its typed output line: read strictly into `OutputLine` and
    written again, each line gives the same JSON (`borrowed_from` aside, which `feed` adds)."""
    from bench.gen_session import generate
    from controller.rules.engine import TableEngine
    from tests.golden.record import mutate

    seen = set()
    for profile in ("cool_mule", "corner_pocket"):
        engine = TableEngine(profile, 9)
        for n, text in enumerate(mutate(generate(40, profile=profile, seed=5), seed=9), 1):
            for line in engine.feed(text, n):
                line.pop("borrowed_from", None)
                typed = msgspec.convert(line, events.OutputLine)
                assert events.dumps(events.to_line(typed)) == events.dumps(line)
                seen.add(line["type"])
    assert {"hand", "pots", "award", "error", "misdeal", "substantial_action"} <= seen


_ODD_VALUES = (
    None, -1, 0, 1, 2, 9, 10, True, False, 1.0, "", "x", "Ah", "Xx", "up", "down", "raise", "call", "allin",
    [], ["Ah"], ["Ah", "Ah"], ["Ah", "Kd", "7c"], ["Ah", 5], [0], [25, 100], 10**12, 10**12 + 1, 2**70,
    "p" * 64, "p" * 65, {"a": 1},
)  # fmt: skip


def _outcome(text: str):
    try:
        return events.parse(text, 9)
    except Rejected as exc:
        return f"Rejected: {exc}"


def test_the_typed_reading_gives_what_the_field_by_field_reading_gives(monkeypatch):
    """`parse` reads JSON text with msgspec into its event first (the fast reading) and leaves every line it
    does not take to the makers: on thousands of odd lines, what it gives is what the makers give (with
    `_FITS` empty, every line goes to them)."""
    texts = []
    for line in LINES:
        fields = [k for k in line if k != "type"] + ["seat", "card", "face", "cards", "to", "chips", "stack"]
        for key in dict.fromkeys(fields):
            for value in _ODD_VALUES:
                for variant in ({**line, key: value}, {k: v for k, v in line.items() if k != key}):
                    texts.append(json.dumps(variant))
    fast = [_outcome(text) for text in texts]
    monkeypatch.setattr(events, "_FITS", {})
    slow = [_outcome(text) for text in texts]
    for text, a, b in zip(texts, fast, slow, strict=True):
        assert a == b, text
    checked = len(texts)
    assert checked > 3000
    assert sum(not isinstance(a, str) for a in fast) > 300  # many lines are events, not only errors


def test_a_line_with_a_field_no_event_has_is_read_all_the_same():
    """The spec allows added fields: the typed reading refuses them, and the makers read the line."""
    extra = json.dumps({"type": "deal", "seat": 3, "note": "x" * 10})
    assert events.parse(extra, 9) == events.Deal(3)


def test_an_output_line_is_written_as_pythons_compact_json_byte_for_byte():
    """`dumps` writes with msgspec; the protocol's bytes are Python's `json` with `separators=(",", ":")`
    and `ensure_ascii=False`: the same on every character, control characters and non-ASCII included."""
    python = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    text = "".join(chr(c) for c in range(0x3000) if not 0xD800 <= c < 0xE000) + "\U0001f0a1 end"
    line = {
        "type": "error",
        "line": 7,
        "message": text,
        "shares": {"3": 10**12},
        "eligible": [1, 2],
        "x": None,
    }
    assert events.dumps(line) == python(line)
    assert events.dumps({"type": "x", "player": "\ud800"}) == python({"type": "x", "player": "\ud800"})
