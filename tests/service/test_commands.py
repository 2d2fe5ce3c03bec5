"""Director commands are validated before they can touch the table."""

from __future__ import annotations

import json

import pytest

from controller.service.commands import CommandError, parse_command, peek_envelope
from controller.service.config import COMMAND_NAMES


def parse(name, payload, token="", allowed=COMMAND_NAMES):
    return parse_command(name, payload, seats=6, allowed=allowed, token=token)


def test_valid_commands_become_protocol_lines():
    c = parse("seat", b'{"seat": 3, "player": "P-1", "name": "Ann", "stack": 5000, "id": "r1"}')
    assert c.line == {"type": "seat", "seat": 3, "player": "P-1", "name": "Ann", "stack": 5000}
    assert c.id == "r1"
    assert parse("level", b'{"sb": 100, "bb": 200}').line == {
        "type": "level",
        "sb": 100,
        "bb": 200,
        "ante": 0,
    }
    assert parse("hand_start", b"").line == {"type": "hand_start"}
    assert parse("leave", b'{"seat": 2, "reason": "eliminated"}').line["reason"] == "eliminated"
    assert parse("status", b"{}").line is None
    assert parse("penalty", b'{"seat": 2, "reason": "soft play", "hands": 3}').line["hands"] == 3


@pytest.mark.parametrize(
    ("name", "payload", "code", "fragment"),
    [
        ("seat", b"{not json", "malformed", "not JSON"),
        ("seat", b"[1, 2]", "malformed", "expected a JSON object"),
        ("seat", b'{"seat": 9, "player": "x"}', "invalid", "seat: expected a seat number 1..6"),
        ("seat", b'{"seat": 1}', "invalid", "missing field(s) player"),
        ("seat", b'{"seat": 1, "player": "x", "colour": 1}', "invalid", "unknown field(s) colour"),
        ("level", b'{"sb": 200, "bb": 100}', "invalid", "exceeds the big blind"),
        ("leave", b'{"seat": 1, "reason": "bored"}', "invalid", "reason: expected one of"),
        ("explode", b"{}", "unknown", "unknown command"),
        ("seat", b"x" * 5000, "malformed", "exceeds"),
    ],
)
def test_bad_commands_are_refused_by_name(name, payload, code, fragment):
    with pytest.raises(CommandError) as err:
        parse(name, payload)
    assert err.value.code == code
    assert fragment in str(err.value)


def test_token_and_allow_list_make_commands_unauthorised():
    with pytest.raises(CommandError) as err:
        parse("hand_start", b"{}", token="s3cret")
    assert err.value.code == "unauthorised"
    assert parse("hand_start", b'{"token": "s3cret"}', token="s3cret").line == {"type": "hand_start"}
    with pytest.raises(CommandError) as err:
        parse("leave", b'{"seat": 1, "reason": "left"}', allowed=("seat",))
    assert err.value.code == "unauthorised"


def test_envelope_of_a_refused_command_is_recovered():
    assert peek_envelope(b'{"id": 7, "reply_to": "a/b", "seat": "x"}') == (7, "a/b")
    assert peek_envelope(b"garbage") == (None, None)


@pytest.mark.parametrize(
    ("payload", "code", "where"),
    [
        (b'{"reply_to": "a/#", "seat": 1, "player": "A"}', "malformed", "reply_to"),
        (b'{"reply_to": "a/\\ud800", "seat": 1, "player": "A"}', "malformed", "reply_to"),
        (b'{"id": "\\ud800", "seat": 1, "player": "A"}', "malformed", "id"),
        (b'{"seat": 1, "player": "\\udfff"}', "invalid", "player"),
        (b"[" * 2000 + b"]" * 2000, "malformed", "nested"),
    ],
)
def test_strings_that_cannot_travel_are_refused_by_name(payload, code, where):
    with pytest.raises(CommandError) as err:
        parse("seat", payload)
    assert err.value.code == code and where in str(err.value)


def test_reply_to_is_checked_before_the_token_and_a_non_ascii_token_is_just_wrong():
    with pytest.raises(CommandError) as err:
        parse("seat", b'{"reply_to": "x/+", "seat": 1, "player": "A"}', token="s3cret")
    assert err.value.code == "malformed"
    with pytest.raises(CommandError) as err:
        parse("seat", '{"token": "été", "seat": 1, "player": "A"}'.encode(), token="s3cret")
    assert err.value.code == "unauthorised"


def test_replay_arguments():
    assert parse("replay", b'{"since": 4}').args == {"stream": "rulings", "since": 4, "limit": 500}
    with pytest.raises(CommandError, match="since"):
        parse("replay", b'{"since": -1}')


def test_the_floors_notices_for_the_panel_move_and_colour_up():
    """`cmd/move` and `cmd/colour_up` (docs/mqtt.md): lines shown on the panel and published on
    `events`, never fed to the rules engine (controller.service.commands.NOTICES)."""
    cmd = parse(
        "move", json.dumps({"seat": 3, "direction": "out", "table": "T2", "to_seat": 5, "name": "Ann"})
    )
    assert cmd.line == {
        "type": "move",
        "seat": 3,
        "direction": "out",
        "table": "T2",
        "to_seat": 5,
        "name": "Ann",
    }
    with pytest.raises(CommandError, match=r"direction: expected 'out' or 'in'"):
        parse("move", json.dumps({"seat": 3, "direction": "sideways"}))
    with pytest.raises(CommandError, match=r"to_seat: expected an integer 1..16"):
        parse("move", json.dumps({"seat": 3, "direction": "out", "to_seat": 0}))
    assert parse("colour_up", json.dumps({"chips": "25 chips"})).line == {
        "type": "colour_up",
        "chips": "25 chips",
    }
    with pytest.raises(CommandError, match="missing field"):
        parse("colour_up", json.dumps({}))
