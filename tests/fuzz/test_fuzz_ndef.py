"""NDEF records into the card parser and verifier: any bytes, any record, any payload give a refusal
with one of the documented reasons (docs/nfc.md) and a message, or a genuine card; nothing else."""

from __future__ import annotations

import json

import ndef
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.registry.card import MIME_TYPE, CardVerifier, encode_card
from controller.registry.errors import CardError
from controller.registry.keys import Secret, VenueKeys
from hil.nfc import SimulatedNtag424

KEYS = VenueKeys(
    "cool_mule", "k2", {"k1": Secret(bytes(range(32))), "k2": Secret(bytes(32))}, frozenset({"k1"})
)
UID = bytes.fromhex("04a1b2c3d4e5f6")
REASONS = {
    "blank_card",
    "unreadable_card",
    "foreign_card",
    "wrong_venue",
    "unknown_key",
    "retired_key",
    "forged_card",
}
GENUINE_V1 = encode_card(UID, "P0001", KEYS)
GENUINE_SUN = SimulatedNtag424.personalised(UID, "P0001", KEYS).stored_message()  # one read of a 424

json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=40)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)
card_body = st.fixed_dictionaries(
    {},
    optional={
        "v": st.one_of(st.sampled_from([1, 2, True, "1"]), json_value),
        "p": st.one_of(st.just("P0001"), json_value),
        "n": st.one_of(st.sampled_from(["cool_mule", "other"]), json_value),
        "k": st.one_of(st.sampled_from(["k1", "k2", "k9"]), json_value),
        "m": st.one_of(st.just("A" * 43), json_value),
        "e": st.one_of(st.just("0" * 32), st.text("0123456789ABCDEF", min_size=32, max_size=32), json_value),
        "c": st.one_of(st.text("0123456789ABCDEF", min_size=16, max_size=16), json_value),
        "x": json_value,
    },
)


def assert_refused_or_genuine(message: bytes) -> None:
    try:
        card = CardVerifier(KEYS).verify(UID, message)
    except CardError as exc:
        assert exc.reason in REASONS, exc.reason
        assert str(exc)
        assert "Secret(" not in str(exc) and bytes(32).hex() not in str(exc)
    else:
        assert card.player_id == "P0001"


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
def test_any_bytes(message):
    assert_refused_or_genuine(message)


@settings(max_examples=150, deadline=None)
@given(body=card_body, record_type=st.sampled_from([MIME_TYPE, MIME_TYPE, "text/plain", "urn:nfc:wkt:U"]))
def test_any_record_of_any_payload(body, record_type):
    payload = json.dumps(body).encode("utf-8", "surrogatepass")
    message = b"".join(ndef.message_encoder([ndef.Record(record_type, "", payload)]))
    assert_refused_or_genuine(message)


@settings(max_examples=150, deadline=None)
@given(position=st.integers(0, 10_000), byte=st.integers(0, 255), which=st.sampled_from(["v1", "sun"]))
def test_a_genuine_card_with_one_byte_changed(position, byte, which):
    assert CardVerifier(KEYS).verify(UID, GENUINE_V1 if which == "v1" else GENUINE_SUN).player_id == "P0001"
    message = bytearray(GENUINE_V1 if which == "v1" else GENUINE_SUN)
    message[position % len(message)] = byte
    assert_refused_or_genuine(bytes(message))
