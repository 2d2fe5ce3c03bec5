"""Hostile protocol bytes into `rules replay`'s reader and the engine: every line is ruled or gets an
`error` line with its number and a message, never an internal error; a refused line leaves the table
as it was; every output line can be written as UTF-8 JSON."""

from __future__ import annotations

import io
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.rules.cli import input_lines
from controller.rules.engine import TableEngine, dumps
from tests.rules.tablekit import SPEC_INPUT

FIELDS = ["type", "seat", "player", "stack", "sb", "bb", "ante", "to", "action", "cards", "card", "chips"]
TYPES = ["seat", "level", "button", "hand_start", "deal", "action", "board", "show", "leave", "table"]

hostile_value = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.just("9" * 4300),  # raw digits, spliced in as a number below
    st.sampled_from(["\\ud800", "\\udfff", "\\ud83d\\ude00", "NaN", "Infinity", "-Infinity", "1e400", "-0"]),
    st.text(max_size=12),
    st.just("[" * 3000),
)


def hostile_line(data: st.DataObject) -> bytes:
    """A JSON-ish line: a valid protocol line with one field replaced by something hostile, raw."""
    base = dict(data.draw(st.sampled_from(SPEC_INPUT)))
    key = data.draw(st.sampled_from(FIELDS))
    value = data.draw(hostile_value)
    text = json.dumps(base)[:-1]
    if isinstance(value, int) or value in ("NaN", "Infinity", "-Infinity", "1e400", "-0") or value.isdigit():
        raw = str(value)
    elif value.startswith("\\u") or value.startswith("["):
        raw = f'"{value}"' if value.startswith("\\u") else value
    else:
        raw = json.dumps(value)
    return (text + f', "{key}": {raw}}}').encode("utf-8", "surrogatepass")


def seated_engine() -> TableEngine:
    engine = TableEngine("cool_mule", 9)
    for line in SPEC_INPUT[:6]:
        engine.feed(json.dumps(line))
    return engine


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_lines_are_ruled_or_refused_with_their_number(data):
    engine = seated_engine()
    lines = []
    for _ in range(data.draw(st.integers(1, 6))):
        kind = data.draw(st.sampled_from(["hostile", "bytes", "valid"]))
        if kind == "hostile":
            lines.append(hostile_line(data))
        elif kind == "bytes":
            lines.append(data.draw(st.binary(max_size=40)).replace(b"\n", b" "))
        else:
            lines.append(json.dumps(data.draw(st.sampled_from(SPEC_INPUT))).encode())
    ending = data.draw(st.sampled_from([b"\n", b"\r\n"]))
    stream = io.BytesIO(data.draw(st.sampled_from([b"", b"\xef\xbb\xbf"])) + ending.join(lines) + ending)
    numbers = []
    for number, text in input_lines(stream):
        numbers.append(number)
        before = engine.snapshot()
        out = engine.feed(text, number) if isinstance(text, str) else [text]
        for line in out:
            dumps(line).encode("utf-8")  # writable: no lone surrogate, no 4,300-digit number
            assert "internal error" not in line.get("message", ""), (text, line)
            if line["type"] == "error":
                assert line["line"] == number and line["message"]
                assert len(line["message"]) < 400  # a hostile value is quoted clipped
        if out and all(line["type"] == "error" for line in out):
            assert engine.snapshot() == before, text
    assert numbers == list(range(1, len(lines) + 1))  # one result per input line, none lost or split


@settings(max_examples=40, deadline=None)
@given(payload=st.lists(st.sampled_from(SPEC_INPUT), min_size=1, max_size=8), data=st.data())
def test_file_bytes_and_line_endings_do_not_change_the_rulings(payload, data):
    text = "".join(json.dumps(x) + "\n" for x in payload).encode()
    variant = data.draw(st.sampled_from(["crlf", "bom", "bare-cr"]))
    if variant == "crlf":
        other = text.replace(b"\n", b"\r\n")
    elif variant == "bom":
        other = b"\xef\xbb\xbf" + text
    else:
        other = text.replace(b", ", b",\r")

    def rulings(data_bytes: bytes) -> list[dict]:
        engine = TableEngine("cool_mule", 9)
        return [
            line
            for n, t in input_lines(io.BytesIO(data_bytes))
            for line in (engine.feed(t, n) if isinstance(t, str) else [t])
        ]

    assert rulings(other) == rulings(text)
