"""A card pulled off the reader at ANY point of a write is left fully old or fully new."""

from __future__ import annotations

import ndef
import pytest

from controller.registry.card import CardVerifier, encode_card
from controller.registry.cardio import CardWriteError, write_card
from controller.registry.tt2_atomic import commit_header, find_ndef, plan
from hil.nfc import SimulatedNtag, SimulatedReader
from tests.registry.conftest import NOW, add_member

OLD_TEXT = b"".join(ndef.message_encoder([ndef.TextRecord("an old membership card from 2019")]))


@pytest.fixture
def member(registry):
    add_member(registry, "P1", "Ann")
    return registry


@pytest.mark.parametrize("model", ["ntag215", "ntag216"])
def test_torn_at_every_page_write_old_or_new(member, keys, model):
    registry = member
    reader = SimulatedReader(f"atomic-{model}")
    probe = SimulatedNtag(model)
    probe.load_message(OLD_TEXT)
    reader.present(probe)
    write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=0.3)
    total = probe.writes
    assert total >= 30  # every page of the new record, then the commit page
    outcomes = set()
    for k in range(1, total + 1):
        tag = SimulatedNtag(model)
        tag.load_message(OLD_TEXT)
        tag.tear_after_writes = k
        reader.present(tag)
        try:
            write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=0.05)
            registered = True
        except CardWriteError as exc:
            assert exc.reason == "write_interrupted"
            registered = False
        stored = tag.stored_message()
        new = encode_card(tag.uid, "P1", keys)
        assert stored in (OLD_TEXT, new), f"torn after {k} writes: card holds neither old nor new"
        outcomes.add(stored == new)
        # the registry records the card only when it was read back and verified
        assert (registry.card(tag.uid) is not None) == (registered and stored == new)
        reader.remove()
    assert outcomes == {False, True}  # early tears leave the old card, the commit makes it new


def test_alternating_rewrites_stay_readable(member, keys):
    registry = member
    reader = SimulatedReader("alternate")
    tag = SimulatedNtag("ntag215")
    reader.present(tag)
    for _ in range(4):  # each re-issue lands beside the previous record, then switches over
        write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=0.3)
        assert CardVerifier(keys).verify(tag.uid, tag.stored_message()).player_id == "P1"


def test_ntag213_has_room_for_one_card_only_falls_back(member, keys):
    registry = member
    reader = SimulatedReader("small")
    tag = SimulatedNtag("ntag213")
    tag.load_message(OLD_TEXT)
    reader.present(tag)
    write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=0.3)
    assert tag.stored_message() == encode_card(tag.uid, "P1", keys)
    assert tag.memory[16] == 0x03  # written in place by nfcpy, no switch header


def test_layout_planning():
    area = bytearray(496)
    area[0:3] = b"\x03\x00\xfe"  # factory-blank NTAG215
    assert find_ndef(bytes(area)) == (16, 18)
    assert plan(bytes(area), b"x" * 100) == 20
    assert commit_header(20) == b"\x00\x00\x00\x00"
    assert commit_header(140) == bytes([0xFD, 122, 0, 0])  # readers skip bytes 18..139
    assert commit_header(300) == b"\xfd\xff" + (280).to_bytes(2, "big")
    area[0:4] = commit_header(140)
    area[124:127] = b"\x03\x02\xaa"
    assert find_ndef(bytes(area)) == (140, 144)
    assert plan(bytes(area), b"y" * 400) is None  # no room beside the current record
