"""Director command payloads into the command parser: any bytes give a Command or a CommandError with
a code and a message naming the command or the field; never another exception (no reply otherwise)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.service.commands import FIELDS, CommandError, parse_command, peek_envelope

CODES = {"malformed", "invalid", "unknown", "unauthorised", "busy"}
value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
body = st.dictionaries(
    st.sampled_from(["id", "reply_to", "token", "seat", "player", "stack", "sb", "bb", "reason", "x"]),
    value,
    max_size=5,
)


def check(name: str, payload: bytes, token: str) -> None:
    try:
        command = parse_command(name, payload, seats=9, allowed=tuple(FIELDS), token=token)
    except CommandError as exc:
        assert exc.code in CODES and str(exc)
    else:  # what goes on to the engine, the log and MQTT can be written as UTF-8
        json.dumps(command.line, ensure_ascii=False).encode("utf-8")
    peek_envelope(payload)  # the refusal's reply address: never raises either


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from([*FIELDS, "nope"]), doc=body, token=st.sampled_from(["", "s3cret", "clé"]))
def test_any_json_command(name, doc, token):
    check(name, json.dumps(doc).encode("utf-8", "surrogatepass"), token)


@settings(max_examples=200, deadline=None)
@given(name=st.sampled_from(list(FIELDS)), payload=st.binary(max_size=300), token=st.sampled_from(["", "t"]))
def test_any_bytes(name, payload, token):
    check(name, payload, token)
