"""The late-registration deadline reaches the table's check-in: the NFC source fixes it at the first
deal (dragons_den: "you must be in your seat at the table no later than 30 minutes after the first
deal or you will be unable to play"); before, TableCheckIn accepted a deadline nobody passed it."""

from __future__ import annotations

from datetime import timedelta

from controller.registry.card import encode_card
from controller.service.config import load_config
from controller.service.health import SourceHealth
from controller.service.sources import NfcSource
from tests.registry.test_checkin import NOW, table_for, uid_for, world  # noqa: F401 (fixture)


def _source(profile: str) -> NfcSource:
    return NfcSource(load_config(None).replace(table={"profile": profile}), SourceHealth("nfc"))


def test_the_first_deal_starts_dragons_dens_thirty_minutes(world):  # noqa: F811
    registry, keys = world
    nfc = _source("dragons_den")
    nfc.checkin = table_for(world, registry.assignment("E1", "P2").table_id)
    nfc.note_first_deal({"phase": "waiting", "hand_number": None}, NOW)
    assert nfc.checkin.late_deadline is None  # no card dealt yet: nobody is late
    nfc.note_first_deal({"phase": "dealing", "hand_number": 1}, NOW)
    assert nfc.checkin.late_deadline == NOW + timedelta(minutes=30)
    nfc.note_first_deal({"phase": "dealing", "hand_number": 5}, NOW + timedelta(minutes=20))
    assert nfc.checkin.late_deadline == NOW + timedelta(minutes=30)  # the first deal, not the latest
    late = nfc.checkin.on_tap(uid_for(2), encode_card(uid_for(2), "P2", keys), NOW + timedelta(minutes=31))
    assert (late.accepted, late.reason) == (False, "late")


def test_a_rulebook_without_a_deadline_never_refuses_a_late_player(world):  # noqa: F811
    registry, keys = world
    nfc = _source("cool_mule")
    nfc.checkin = table_for(world, registry.assignment("E1", "P2").table_id)
    nfc.note_first_deal({"phase": "dealing", "hand_number": 1}, NOW)
    assert nfc.checkin.late_deadline is None
    late = nfc.checkin.on_tap(uid_for(2), encode_card(uid_for(2), "P2", keys), NOW + timedelta(hours=3))
    assert late.accepted
