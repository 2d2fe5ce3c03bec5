"""Signed card records: every refusal, and the property that a record never verifies on another UID."""

from __future__ import annotations

import json
import logging
import os

import ndef
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.registry.card import MAX_MESSAGE_BYTES, MIME_TYPE, CardVerifier, compute_mac, encode_card
from controller.registry.errors import CardError, SecretFileError
from controller.registry.keys import VenueKeys, create_key_file, load_keys, parse_keys

UID = bytes.fromhex("04a1b2c3d4e5f6")
SECRET_HEX = "11" * 32
KEYS_TOML = f'venue = "cool_mule"\ncurrent = "k2"\nretired = ["k0"]\n[keys]\nk0 = "{"22" * 32}"\nk2 = "{SECRET_HEX}"\n'


@pytest.fixture
def keys() -> VenueKeys:
    return parse_keys(KEYS_TOML, "test")


def refusal(verifier: CardVerifier, uid: bytes, message: bytes) -> str:
    with pytest.raises(CardError) as err:
        verifier.verify(uid, message)
    assert str(err.value)  # every refusal explains itself
    return err.value.reason


def mime(payload: bytes | dict, type_: str = MIME_TYPE) -> bytes:
    if isinstance(payload, dict):
        payload = json.dumps(payload).encode()
    return b"".join(ndef.message_encoder([ndef.Record(type_, "", payload)]))


def test_genuine_card_verifies_and_fits_an_ntag213(keys):
    message = encode_card(UID, "P0001", keys)
    assert len(message) + 2 <= 142  # NTAG213 NDEF capacity as nfcpy reports it, with the TLV header
    card = CardVerifier(keys).verify(UID, message)
    assert (card.player_id, card.key_id, card.uid) == ("P0001", "k2", UID)


def test_copied_to_another_tag_is_forged(keys):
    message = encode_card(UID, "P0001", keys)
    assert refusal(CardVerifier(keys), bytes.fromhex("04a1b2c3d4e5f7"), message) == "forged_card"


def test_altered_player_or_signature_is_forged(keys):
    body = json.loads(ndef.message_decoder(encode_card(UID, "P0001", keys)).__next__().data)
    assert refusal(CardVerifier(keys), UID, mime({**body, "p": "P0002"})) == "forged_card"
    mac = bytearray(body["m"].encode())
    mac[0] = ord("A") if mac[0] != ord("A") else ord("B")
    assert refusal(CardVerifier(keys), UID, mime({**body, "m": mac.decode()})) == "forged_card"


def test_unknown_and_retired_key_ids(keys):
    body = json.loads(next(ndef.message_decoder(encode_card(UID, "P0001", keys))).data)
    assert refusal(CardVerifier(keys), UID, mime({**body, "k": "k9"})) == "unknown_key"
    old = bytes.fromhex("22" * 32)
    mac = compute_mac(old, UID, "P0001", "cool_mule", "k0")
    import base64

    signed_old = {**body, "k": "k0", "m": base64.urlsafe_b64encode(mac).rstrip(b"=").decode()}
    assert refusal(CardVerifier(keys), UID, mime(signed_old)) == "retired_key"


def test_other_venue_refused(keys):
    other = parse_keys(KEYS_TOML.replace("cool_mule", "dragons_den"), "other")
    assert refusal(CardVerifier(other), UID, encode_card(UID, "P0001", keys)) == "wrong_venue"


@pytest.mark.parametrize(
    "message, reason",
    [
        (b"", "blank_card"),
        (b"\xd2\x26", "unreadable_card"),  # truncated header
        (lambda k: encode_card(UID, "P0001", k)[:-10], "unreadable_card"),  # truncated payload
        (b"".join(ndef.message_encoder([ndef.UriRecord("https://example.com")])), "foreign_card"),
        (
            lambda k: mime(next(ndef.message_decoder(encode_card(UID, "P1", k))).data, "text/plain"),
            "foreign_card",
        ),
        (
            lambda k: (
                encode_card(UID, "P1", k)[:0]
                + b"".join(ndef.message_encoder([ndef.Record(MIME_TYPE, "", b"{}"), ndef.TextRecord("x")]))
            ),
            "foreign_card",
        ),
        (mime(b"\xff\xfe not utf8"), "unreadable_card"),
        (mime(b"[1,2]"), "unreadable_card"),
        (mime({"v": 1, "p": "P1", "n": "cool_mule", "k": "k2"}), "unreadable_card"),
        (mime({"v": 2, "p": "P1", "n": "cool_mule", "k": "k2", "m": "A" * 43}), "unreadable_card"),
        (mime({"v": 1, "p": "P1", "n": "cool_mule", "k": "k2", "m": "A" * 43, "x": 1}), "unreadable_card"),
        (mime({"v": 1, "p": "P 1;", "n": "cool_mule", "k": "k2", "m": "A" * 43}), "unreadable_card"),
        (mime({"v": 1, "p": "P1", "n": "cool_mule", "k": "k2", "m": "short"}), "unreadable_card"),
        (mime(b"x" * (MAX_MESSAGE_BYTES + 1)), "unreadable_card"),  # oversized
    ],
)
def test_bad_ndef_refused_with_reason(keys, message, reason):
    if callable(message):
        message = message(keys)
    assert refusal(CardVerifier(keys), UID, message) == reason


@settings(max_examples=300, deadline=None)
@given(
    uid=st.binary(min_size=4, max_size=10),
    other=st.binary(min_size=4, max_size=10),
    player=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,31}", fullmatch=True),
)
def test_property_record_never_verifies_on_another_uid(uid, other, player):
    keys = parse_keys(KEYS_TOML, "test")
    message = encode_card(uid, player, keys)
    verifier = CardVerifier(keys)
    assert verifier.verify(uid, message).player_id == player
    if other != uid:
        with pytest.raises(CardError) as err:
            verifier.verify(other, message)
        assert err.value.reason == "forged_card"


# ---- the venue key file -------------------------------------------------------------------------


def test_key_file_created_private_and_loads(tmp_path):
    path = tmp_path / "keys.toml"
    create_key_file(path, "cool_mule")
    assert os.stat(path).st_mode & 0o777 == 0o600
    keys = load_keys(path)
    assert keys.venue == "cool_mule" and keys.current == "k1"
    secret_hex = keys.keys["k1"].reveal().hex()
    assert secret_hex not in repr(keys) and secret_hex not in str(keys.keys)


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o644])
def test_key_file_readable_by_others_refused(tmp_path, mode):
    path = tmp_path / "keys.toml"
    create_key_file(path, "cool_mule")
    os.chmod(path, mode)
    with pytest.raises(SecretFileError) as err:
        load_keys(path)
    assert "chmod 600" in str(err.value)


@pytest.mark.parametrize(
    "text, where",
    [
        ("venue = ", "not valid TOML"),
        ('current = "k1"\n[keys]\nk1 = "' + "00" * 32 + '"\n', "key 'venue'"),
        ('venue = "v"\ncurrent = "k1"\n[keys]\nk1 = "abcd"\n', "too short"),
        ('venue = "v"\ncurrent = "k1"\n[keys]\nk1 = "zz"\n', "not a hex"),
        ('venue = "v"\ncurrent = "k2"\n[keys]\nk1 = "' + "00" * 32 + '"\n', "key 'current'"),
    ],
)
def test_bad_key_file_messages_never_contain_secrets(tmp_path, text, where):
    path = tmp_path / "keys.toml"
    path.write_text(text)
    os.chmod(path, 0o600)
    with pytest.raises(SecretFileError) as err:
        load_keys(path)
    assert where in str(err.value)
    assert "00" * 32 not in str(err.value)


def test_missing_key_file(tmp_path):
    with pytest.raises(SecretFileError, match="not found"):
        load_keys(tmp_path / "nope.toml")


def test_secret_never_logged(keys, caplog):
    caplog.set_level(logging.DEBUG)
    message = encode_card(UID, "P0001", keys)
    CardVerifier(keys).verify(UID, message)
    with pytest.raises(CardError):
        CardVerifier(keys).verify(b"\x01\x02\x03\x04", message)
    assert SECRET_HEX not in caplog.text
