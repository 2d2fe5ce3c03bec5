"""NTAG 424 DNA cards that prove themselves: SUN messages per NXP AN12196, read through nfcpy from a
simulated tag, and the registry refusing a copied or replayed read (the counter must go up)."""

from __future__ import annotations

import json

import nfc
import nfc.clf
import nfc.tag
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.registry.card import CardVerifier, decode_card, sun_card_layout, sun_tag_keys
from controller.registry.errors import CardError
from controller.registry.identify import identify
from controller.registry.keys import Secret, VenueKeys
from controller.registry.reader import read_tap
from controller.registry.sun import (
    SunError,
    SunKeys,
    decrypt_picc_data,
    encrypt_picc_data,
    sdm_mac,
    verify_sun,
)
from hil.nfc import SimulatedNtag424, SimulatedReader, player_card, recorded_copy
from tests.registry.conftest import NOW, add_member

ZERO = bytes(16)


# ---- the published example vectors (AN12196, the factory keys: all zero) --------------------------


def test_an12196_piccdata_decrypts_to_the_published_uid_and_counter():
    # AN12196 section 3.4.2.1, table 2: PICCData EF963FF7...; plaintext C7 04DE5F1EACC040 3D0000 DA5CF60941
    uid, counter = decrypt_picc_data(ZERO, bytes.fromhex("EF963FF7828658A599F3041510671E88"))
    assert (uid.hex().upper(), counter) == ("04DE5F1EACC040", 61)
    again = encrypt_picc_data(ZERO, uid, counter, bytes.fromhex("DA5CF60941"))
    assert again.hex().upper() == "EF963FF7828658A599F3041510671E88"


def test_an12196_sdmmac_over_empty_input():
    # the same example's SDMMAC, with SDMMACInputOffset = SDMMACOffset (nothing but the key and SV2)
    mac = sdm_mac(ZERO, bytes.fromhex("04DE5F1EACC040"), 61, b"")
    assert mac.hex().upper() == "94EED9EE65337086"


def test_an12196_sdmmac_over_mirrored_file_data():
    # the example with encrypted file data: the MAC covers "<SDMENCFileData hex>&cmac=" of the URL
    uid, counter = decrypt_picc_data(ZERO, bytes.fromhex("FD91EC264309878BE6345CBE53BADF40"))
    assert (uid.hex().upper(), counter) == ("04958CAA5C5E80", 8)
    mac = sdm_mac(ZERO, uid, counter, b"CEE9A53E3E463EF1F459635736738962&cmac=")
    assert mac.hex().upper() == "ECC1E7F6C6C73BF6"


def test_altered_vectors_are_refused():
    keys = SunKeys(meta_key=ZERO, file_master=ZERO)
    picc = bytes.fromhex("EF963FF7828658A599F3041510671E88")
    with pytest.raises(SunError) as exc:
        verify_sun(keys, picc, bytes.fromhex("94EED9EE65337087"), b"")
    assert exc.value.reason == "forged_card"
    with pytest.raises(SunError):
        decrypt_picc_data(bytes([1]) + ZERO[1:], picc)  # another venue's meta key


# ---- the simulated tag, read by nfcpy -----------------------------------------------------------


@pytest.fixture
def venue_keys() -> VenueKeys:
    return VenueKeys("cool_mule", "k1", {"k1": Secret(bytes(range(32)))})


def read_once(tag) -> tuple[bytes, bytes, str]:
    """One tap: nfcpy senses, activates (RATS for the 424) and reads the NDEF file."""
    reader = SimulatedReader("sun-test")
    reader.present(tag)
    try:
        got = read_tap(reader.frontend())
        assert got is not None
        _, tap = got
        return tap.uid, tap.ndef, tap.tag_type
    finally:
        reader.remove()


def test_every_read_is_signed_anew_with_a_counter_that_goes_up(venue_keys):
    tag = SimulatedNtag424.personalised(None, "P0001", venue_keys)
    verifier = CardVerifier(venue_keys)
    seen = []
    for expected in (1, 2, 3):
        uid, message, tag_type = read_once(tag)
        assert tag_type == "Type4Tag" and uid == tag.uid
        card = verifier.verify(uid, message)
        assert (card.player_id, card.counter) == ("P0001", expected)
        seen.append(message)
    assert len(set(seen)) == 3  # no two reads alike
    record = json.loads(decode_card(seen[0]).mac_input + b'0000000000000000"}')
    assert set(record) == {"v", "p", "n", "k", "e", "c"} and record["v"] == 2


def test_the_tag_refuses_writes_without_its_key(venue_keys):
    tag = SimulatedNtag424.personalised(None, "P0001", venue_keys)
    reader = SimulatedReader("sun-write")
    reader.present(tag)
    clf = reader.frontend()
    t = nfc.tag.activate(clf, clf.sense(nfc.clf.RemoteTarget("106A")))
    assert t.ndef is not None and not t.ndef.is_writeable
    assert tag.apdu(bytes.fromhex("00A4000C02E104")) == b"\x90\x00"
    assert tag.apdu(bytes.fromhex("00D6000002AAAA")) == b"\x69\x82"  # security status not satisfied


def test_a_record_altered_in_the_player_field_does_not_verify(venue_keys):
    tag = SimulatedNtag424.personalised(None, "P0001", venue_keys)
    uid, message, _ = read_once(tag)
    forged = message.replace(b'"p":"P0001"', b'"p":"P0002"')
    with pytest.raises(CardError) as exc:
        CardVerifier(venue_keys).verify(uid, forged)
    assert exc.value.reason == "forged_card"


def test_a_read_shown_from_another_tag_is_a_copy(venue_keys):
    tag = SimulatedNtag424.personalised(None, "P0001", venue_keys)
    _, message, _ = read_once(tag)
    with pytest.raises(CardError) as exc:
        CardVerifier(venue_keys).verify(b"\x04" + bytes(6), message)
    assert exc.value.reason == "forged_card" and "copied" in str(exc.value)


def test_another_venue_cannot_verify_or_mint(venue_keys):
    other = VenueKeys("cool_mule", "k1", {"k1": Secret(bytes(32))})
    tag = SimulatedNtag424.personalised(None, "P0001", other)
    uid, message, _ = read_once(tag)
    with pytest.raises(CardError) as exc:
        CardVerifier(venue_keys).verify(uid, message)
    assert exc.value.reason == "forged_card"


def test_card_keys_are_diversified_per_uid(venue_keys):
    meta_a, file_a = sun_tag_keys(b"\x04" + bytes(6), venue_keys)
    meta_b, file_b = sun_tag_keys(b"\x04" + bytes(5) + b"\x01", venue_keys)
    assert meta_a == meta_b and file_a != file_b  # the meta key is the venue's; each file key its card's


# ---- the registry: a copied or replayed read is refused -------------------------------------------


def issue_424(registry, keys, player_id="P0001"):
    add_member(registry, player_id, "Ann Lee")
    tag = SimulatedNtag424.personalised(None, player_id, keys)
    registry.issue_card(tag.uid, player_id, keys.venue, keys.current, now=NOW)
    return tag


def test_replayed_and_copied_reads_are_refused_and_the_real_card_still_works(registry, keys):
    tag = issue_424(registry, keys)
    verifier = CardVerifier(keys)
    uid, first, _ = read_once(tag)
    assert identify(registry, verifier, uid, first).ok
    replay = identify(registry, verifier, uid, first)
    assert replay.reason == "replayed_card" and "counter 1" in replay.message
    # a forger's "magic" NTAG215 with the card's UID and one read of it, made while the card was away
    copy = recorded_copy(tag)  # the card's read number 2, which the table never saw
    uid2, copied, copy_type = read_once(copy)
    assert copy_type == "Type2Tag" and uid2 == tag.uid
    assert identify(registry, verifier, uid2, copied).ok  # once: SUN cannot know of a read it never saw
    assert identify(registry, verifier, uid2, copied).reason == "replayed_card"  # and never again
    assert identify(registry, verifier, *read_once(tag)[:2]).ok  # the real card reads on (counter 3)
    assert registry.sun_counter(tag.uid) == 3
    assert identify(registry, verifier, uid2, copied).reason == "replayed_card"


def test_hil_player_card_taps_on_from_the_registrys_counter(registry, keys):
    issue_424(registry, keys)
    verifier = CardVerifier(keys)
    for _ in range(3):  # each `hil nfc tap` builds the card anew: it must not replay itself
        tag = player_card(registry, keys, "P0001", model="ntag424")
        assert identify(registry, verifier, *read_once(tag)[:2]).ok
    assert registry.sun_counter(tag.uid) == 3


def test_ntag21x_cards_are_still_accepted_beside_424_cards(registry, keys):
    issue_424(registry, keys, "P0001")
    add_member(registry, "P0002", "Bo Chen")
    from controller.registry.card import encode_card
    from hil.nfc import SimulatedNtag

    old = SimulatedNtag("ntag215")
    old.load_message(encode_card(old.uid, "P0002", keys))
    registry.issue_card(old.uid, "P0002", keys.venue, keys.current, now=NOW)
    verifier = CardVerifier(keys)
    for _ in range(2):  # an NTAG21x has no SUN counter: its signed record verifies at every tap
        assert identify(registry, verifier, *read_once(old)[:2]).ok


# ---- properties ---------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    uid=st.binary(min_size=7, max_size=7), counter=st.integers(0, 0xFFFFFF), flip=st.integers(0, 16 * 8 - 1)
)
def test_any_bit_flipped_in_piccdata_or_mac_is_refused(uid, counter, flip):
    keys = SunKeys(meta_key=bytes(range(16)), file_master=bytes(range(16, 32)))
    picc = encrypt_picc_data(keys.meta_key, uid, counter)
    mac = sdm_mac(keys.file_key(uid), uid, counter, b"input")
    assert verify_sun(keys, picc, mac, b"input").counter == counter
    picc_bad = bytearray(picc)
    picc_bad[flip // 8] ^= 1 << (flip % 8)
    mac_bad = bytearray(mac)
    mac_bad[(flip // 8) % 8] ^= 1 << (flip % 8)
    for p, m in ((bytes(picc_bad), mac), (picc, bytes(mac_bad))):
        with pytest.raises(SunError):
            verify_sun(keys, p, m, b"input")


def test_layout_offsets_point_at_the_mirrors(venue_keys):
    lay = sun_card_layout("P0001", venue_keys)
    assert lay.file[lay.picc_offset - 5 : lay.picc_offset] == b'"e":"'
    assert lay.file[lay.mac_offset - 5 : lay.mac_offset] == b'"c":"'
    assert lay.file[lay.mac_input_offset : lay.mac_input_offset + 1] == b"{"
    assert len(lay.file) <= 256  # the NTAG 424 DNA's NDEF file


def test_a_424_card_tapped_from_another_process_keeps_its_counter(tmp_path, venue_keys):
    from hil.nfc import spool_tap

    tag = SimulatedNtag424.personalised(None, "P0001", venue_keys, counter=41)
    spool_tap(tmp_path, tag, dwell=5.0)
    reader = SimulatedReader("spool-424", spool=tmp_path)
    got = read_tap(reader.frontend())
    assert got is not None
    card = CardVerifier(venue_keys).verify(got[1].uid, got[1].ndef)
    assert (card.uid, card.counter) == (tag.uid, 42)
