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


def test_corner_pockets_late_player_keeps_a_seat_until_level_eight(world):  # noqa: F811
    """corner_pocket:General Rules.C: players who are not present "will have hands dealt (and folded) and
    blinds posted (as dead money) in turn until they arrive, are blinded out or the tournament reaches
    level eight": a first tap-in at level 8 is refused; at level 7 it seats the player. The table knows
    the level from the `level` line's `number` (the floor's push), as its view shows it."""
    from tests.rules.test_rulebook_fidelity import quoted

    quoted("corner_pocket", "until they arrrive,are blinded out or the tournament reaches level eight")  # sic
    registry, keys = world
    nfc = _source("corner_pocket")
    nfc.checkin = table_for(world, registry.assignment("E1", "P2").table_id)
    nfc.apply_late_level()
    card = encode_card(uid_for(2), "P2", keys)
    at_eight = nfc.checkin.on_tap(uid_for(2), card, NOW, {"phase": "preflop", "level_number": 8, "seats": []})
    assert (at_eight.accepted, at_eight.reason) == (False, "late")
    assert "level 8" in at_eight.message and "corner_pocket:General Rules.C" in at_eight.message
    at_seven = nfc.checkin.on_tap(uid_for(2), card, NOW, {"phase": "preflop", "level_number": 7, "seats": []})
    assert at_seven.accepted and at_seven.lines[0]["type"] == "seat"


def test_a_book_without_a_late_level_seats_a_late_player_at_any_level(world):  # noqa: F811
    registry, keys = world
    nfc = _source("cool_mule")
    nfc.checkin = table_for(world, registry.assignment("E1", "P2").table_id)
    nfc.apply_late_level()
    late = nfc.checkin.on_tap(
        uid_for(2),
        encode_card(uid_for(2), "P2", keys),
        NOW,
        {"phase": "preflop", "level_number": 30, "seats": []},
    )
    assert late.accepted


def test_the_tables_view_knows_the_level_number_from_the_level_line():
    """The published state (the engine's snapshot) carries the floor's level number, which the
    check-in reads for Corner Pocket's level-eight limit (corner_pocket:General Rules.C)."""
    from controller.rules.engine import TableEngine
    from controller.service.snapshot import TableState

    engine = TableEngine("corner_pocket", 6)
    view = TableState(engine.snapshot)
    engine.feed('{"type": "table", "seats": 6, "profile": "corner_pocket"}')
    assert "level_number" not in view.snapshot()
    assert engine.feed('{"type": "level", "sb": 100, "bb": 200, "number": 8, "minutes": 15}') == []
    assert view.snapshot()["level_number"] == 8 and view.seat_view()["level_number"] == 8
    assert view.snapshot()["level"] == {"sb": 100, "bb": 200, "ante": 0}
