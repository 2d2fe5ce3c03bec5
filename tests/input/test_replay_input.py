"""`smart-table rules replay` on hostile and odd bytes: an `error` line naming the problem and the line,
never a traceback, and the lines after it ruled as usual; a file and standard input read alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.rules.tablekit import SPEC_INPUT, SPEC_OUTPUT

SPEC_BYTES = "".join(json.dumps(line) + "\n" for line in SPEC_INPUT).encode()


def replay(data: bytes, *args: str, tmp_path: Path | None = None) -> subprocess.CompletedProcess:
    """The CLI on `data`: from a file when tmp_path is given, else from standard input."""
    if tmp_path is not None:
        f = tmp_path / "in.jsonl"
        f.write_bytes(data)
        cmd = [sys.executable, "-m", "controller.cli", "rules", "replay", *args, str(f)]
        r = subprocess.run(cmd, capture_output=True, timeout=60)
    else:
        cmd = [sys.executable, "-m", "controller.cli", "rules", "replay", *args, "-"]
        r = subprocess.run(cmd, input=data, capture_output=True, timeout=60)
    assert b"Traceback" not in r.stderr, r.stderr.decode(errors="replace")
    assert r.returncode == 0
    return r


def out_lines(r: subprocess.CompletedProcess) -> list[dict]:
    return [json.loads(x) for x in r.stdout.decode("utf-8").splitlines()]


SEATED_TWO = b'{"type":"seat","seat":2,"player":"B","stack":500}\n{"type":"seat","seat":3,"player":"C"}\n'


def test_lone_surrogate_in_a_player_name_is_an_error_line_and_the_table_goes_on():
    data = (
        b'{"type":"seat","seat":1,"player":"\\ud800"}\n'
        b'{"type":"leave","seat":1,"reason":"left"}\n'
        b'{"type":"seat","seat":1,"player":"\\ud83d\\ude00"}\n'  # a surrogate *pair* is a character
        b'{"type":"seat","seat":1,"player":"X"}\n'
    )
    lines = out_lines(replay(data))
    assert lines[0]["type"] == "error" and lines[0]["line"] == 1
    assert "field 'player'" in lines[0]["message"] and "surrogate" in lines[0]["message"]
    assert lines[1] == {"type": "error", "line": 2, "message": "seat 1 is empty"}  # nobody was seated
    assert lines[2]["line"] == 4 and "taken by player \U0001f600" in lines[2]["message"]


def test_a_stack_of_4300_digits_or_beyond_any_chip_count_is_refused_and_later_lines_are_ruled():
    huge = b"9" * 4300
    data = (
        b'{"type":"seat","seat":1,"player":"A","stack":' + huge + b"}\n"
        b'{"type":"seat","seat":1,"player":"A","stack":' + b"9" * 5000 + b"}\n"
        b'{"type":"seat","seat":1,"player":"A","stack":1000000000001}\n'
        b'{"type":"level","sb":1,"bb":' + huge + b"}\n"
        b'{"type":"action","seat":1,"action":"bet","to":' + huge + b"}\n"
        b'{"type":"seat","seat":1,"player":"A","stack":1000000000000}\n'
        + SEATED_TWO
        + b'{"type":"seat","seat":3,"player":"D"}\n'
    )
    lines = out_lines(replay(data))
    assert [x["line"] for x in lines] == [1, 2, 3, 4, 5, 9]
    for x in lines[:5]:
        assert x["type"] == "error" and "larger than any chip count" in x["message"]
    assert "field 'stack'" in lines[0]["message"] and "field 'bb'" in lines[3]["message"]
    assert "field 'to'" in lines[4]["message"]
    assert len(lines[0]["message"]) < 200  # the number is quoted clipped, not in full
    assert lines[5]["message"] == "seat 3 is taken by player C"  # the line after the refusals was ruled


def test_deep_nesting_is_a_clear_error_not_an_internal_one():
    data = (
        b"[" * 100_000
        + b"\n"
        + b'{"type":"seat","seat":1,"player":"A","x":'
        + b"[" * 900
        + b"]" * 900
        + b"}\n"
    )
    lines = out_lines(replay(data))
    assert lines[0]["line"] == 1 and "nested too deeply" in lines[0]["message"]
    assert all("internal error" not in x["message"] for x in lines)


def test_nan_and_infinity_are_not_json_numbers():
    lines = out_lines(
        replay(b'{"type":"seat","seat":1,"player":"A","stack":NaN}\n{"type":"level","sb":1,"bb":Infinity}\n')
    )
    assert ["NaN" in lines[0]["message"], "Infinity" in lines[1]["message"]] == [True, True]


def test_bytes_that_are_not_utf8_are_an_error_line_naming_the_column():
    bad = b'{"type":"seat","seat":1,"player":"A\xff"}\n'
    lines = out_lines(replay(bad + b'{"type":"seat","seat":1,"player":"A"}\n'))
    column = bad.index(b"\xff") + 1
    assert lines == [{"type": "error", "line": 1, "message": f"not UTF-8 text: byte 0xff at column {column}"}]


def test_a_line_over_a_mebibyte_is_refused_without_reading_it_whole():
    data = (
        b'{"type":"seat","seat":1,"player":"'
        + b"A" * (2 << 20)
        + b'"}\n{"type":"seat","seat":1,"player":"A"}\n'
    )
    lines = out_lines(replay(data))
    assert lines == [{"type": "error", "line": 1, "message": "line longer than 1048576 bytes, not read"}]


def variants() -> dict[str, bytes]:
    lf = SPEC_BYTES
    return {
        "crlf": lf.replace(b"\n", b"\r\n"),
        "bom": b"\xef\xbb\xbf" + lf,
        "bom+crlf": b"\xef\xbb\xbf" + lf.replace(b"\n", b"\r\n"),
        # a bare CR between the fields of a line is JSON white space, not a line end
        "bare-cr": lf.replace(b'", "', b'",\r"'),
    }


def test_file_and_standard_input_give_the_same_rulings_for_crlf_bom_and_bare_cr(tmp_path):
    expected = [json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in SPEC_OUTPUT]
    for name, data in variants().items():
        from_file = replay(data, tmp_path=tmp_path).stdout
        from_stdin = replay(data).stdout
        assert from_file == from_stdin, name
        assert [json.loads(x) for x in from_file.decode().splitlines()] == SPEC_OUTPUT, name
        assert len(from_file.decode().splitlines()) == len(expected)


def test_a_long_player_id_or_a_huge_value_is_named_and_quoted_clipped():
    data = (
        b'{"type":"seat","seat":1,"player":"' + b"x" * 65 + b'"}\n'
        b'{"type":"seat","seat":1,"player":"A","moved":"' + b"y" * 100_000 + b'"}\n'
        b'{"type":"' + b"z" * 100_000 + b'"}\n'
    )
    lines = out_lines(replay(data))
    assert lines[0]["message"] == "field 'player': a player id is at most 64 characters, got 65"
    assert lines[1]["message"].startswith("field 'moved' must be true or false, got 'yyy")
    assert lines[2]["message"].startswith("unknown type 'zzz")
    assert all(len(x["message"]) < 120 for x in lines)
