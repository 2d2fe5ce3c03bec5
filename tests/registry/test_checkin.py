"""Tap-in at the table (pure logic over the registry), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest

from controller.registry.card import CardVerifier, encode_card
from controller.registry.checkin import TableCheckIn
from controller.registry.policy import late_deadline
from tests.registry.conftest import NOW, add_member, open_event


def uid_for(n: int) -> bytes:
    return bytes([4, 0, 0, 0, 0, 0, n])


@pytest.fixture
def world(registry, keys):
    """Event E1 (cool_mule, T1 and T2 with 6 seats), four members with cards, seats drawn."""
    open_event(registry, tables=(("T1", 6), ("T2", 6)))
    for n, (pid, name) in enumerate([("P1", "Ann"), ("P2", "Bo"), ("P3", "Cy"), ("P4", "Di")], start=1):
        add_member(registry, pid, name)
        registry.issue_card(uid_for(n), pid, "cool_mule", keys.current, now=NOW)
        registry.register("E1", pid, now=NOW)
    registry.draw("E1", seed=11, now=NOW)
    return registry, keys


def table_for(world, table_id, **kw):
    registry, keys = world
    return TableCheckIn(
        registry, venue="cool_mule", table_id=table_id, event_id="E1", verifier=CardVerifier(keys), **kw
    )


def tap(world, table_id, n, pid, when=NOW, **kw):
    _registry, keys = world
    return table_for(world, table_id, **kw).on_tap(uid_for(n), encode_card(uid_for(n), pid, keys), when)


def test_accepted_at_drawn_table_gives_seat_then_checkin(world):
    registry, _ = world
    a = registry.assignment("E1", "P1")
    result = tap(world, a.table_id, 1, "P1")
    assert result.accepted
    assert result.lines == [
        {"type": "seat", "seat": a.seat, "player": "P1", "moved": False},
        {"type": "checkin", "seat": a.seat, "player": "P1", "name": "Ann", "accepted": True},
    ]
    assert registry.checkin("E1", "P1").seat == a.seat
    assert "1990" not in result.jsonl()  # display name only: no date of birth


def test_second_tap_is_acknowledged_without_a_second_seat_line(world):
    registry, _ = world
    a = registry.assignment("E1", "P2")
    tap(world, a.table_id, 2, "P2")
    again = tap(world, a.table_id, 2, "P2", when=NOW + timedelta(minutes=5))
    assert again.accepted and [line["type"] for line in again.lines] == ["checkin"]
    assert again.lines[0]["repeat"] is True


def test_wrong_table_is_told_where_to_go(world):
    registry, _ = world
    a = registry.assignment("E1", "P3")
    other = "T2" if a.table_id == "T1" else "T1"
    result = tap(world, other, 3, "P3")
    assert result.lines == [
        {
            "type": "checkin",
            "seat": None,
            "player": "P3",
            "accepted": False,
            "reason": "wrong_table",
            "assigned": {"table": a.table_id, "seat": a.seat},
        }
    ]
    assert registry.checkin("E1", "P3") is None


def test_forged_copied_card_refused(world):
    registry, keys = world
    a = registry.assignment("E1", "P1")
    copied = encode_card(uid_for(1), "P1", keys)
    result = table_for(world, a.table_id).on_tap(uid_for(9), copied, NOW)  # record copied onto another tag
    assert result.lines == [{"type": "checkin", "seat": None, "accepted": False, "reason": "forged_card"}]


def test_revoked_card_refused(world):
    registry, _ = world
    registry.revoke_card(uid_for(4), now=NOW, reason="lost")
    a = registry.assignment("E1", "P4")
    result = tap(world, a.table_id, 4, "P4")
    assert (result.accepted, result.reason, result.lines[0]["seat"]) == (False, "revoked_card", None)


def test_suspended_member_refused(world):
    registry, _ = world
    registry.set_status("P2", "suspended", "abuse")
    a = registry.assignment("E1", "P2")
    assert tap(world, a.table_id, 2, "P2").reason == "member_suspended"


def test_unknown_player_and_unknown_card(world):
    _, _keys = world
    # genuinely signed (same venue keys) but for an ID nobody registered
    assert tap(world, "T1", 7, "P99").reason == "unknown_player"
    registry, _ = world
    add_member(registry, "P5", "Ed")  # member, but this tag was never issued to him
    assert tap(world, "T1", 8, "P5").reason == "unknown_card"


def test_not_registered_and_not_drawn(world):
    registry, keys = world
    add_member(registry, "P6", "Flo")
    registry.issue_card(uid_for(6), "P6", "cool_mule", keys.current, now=NOW)
    assert tap(world, "T1", 6, "P6").reason == "not_registered"
    open_event(registry, event_id="E2")
    registry.register("E2", "P6", now=NOW)
    result = TableCheckIn(
        registry, venue="cool_mule", table_id="T1", event_id="E2", verifier=CardVerifier(keys)
    ).on_tap(uid_for(6), encode_card(uid_for(6), "P6", keys), NOW)
    assert result.reason == "not_drawn"


def test_late_tap_past_deadline_refused_dragons_den(world):
    registry, _ = world
    first_deal = NOW
    deadline = late_deadline("dragons_den", first_deal)
    assert deadline == first_deal + timedelta(minutes=30)
    a1, a2 = registry.assignment("E1", "P1"), registry.assignment("E1", "P2")
    on_time = tap(world, a1.table_id, 1, "P1", when=NOW + timedelta(minutes=29), late_deadline=deadline)
    late = tap(world, a2.table_id, 2, "P2", when=NOW + timedelta(minutes=31), late_deadline=deadline)
    assert on_time.accepted
    assert (late.accepted, late.reason) == (False, "late")
    assert registry.checkin("E1", "P2") is None
    assert late_deadline("cool_mule", first_deal) is None  # no time limit in Cool Mule's rulebook


def test_starting_stack_in_seat_line(registry, keys):
    open_event(registry, event_id="CP", profile="corner_pocket", tables=(("T1", 9),))
    add_member(registry, "P1", "Ann")
    registry.issue_card(uid_for(1), "P1", "cool_mule", keys.current, now=NOW)
    registry.register("CP", "P1", now=NOW)
    registry.draw("CP", seed=1, now=NOW)
    result = TableCheckIn(
        registry, venue="cool_mule", table_id="T1", event_id="CP", verifier=CardVerifier(keys)
    ).on_tap(uid_for(1), encode_card(uid_for(1), "P1", keys), NOW)
    assert result.lines[0] == {"type": "seat", "seat": 1, "player": "P1", "stack": 20000, "moved": False}


def test_unreadable_tap_refused_and_audited(world):
    registry, _ = world
    result = table_for(world, "T1").on_tap(uid_for(1), b"\xd1\x01", NOW)
    assert result.reason == "unreadable_card"
    taps = registry.taps("E1")
    assert taps[-1][3] == uid_for(1).hex() and taps[-1][5] == 0 and taps[-1][6] == "unreadable_card"
