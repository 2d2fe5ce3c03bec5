"""Registry flows on SQLite and PostgreSQL: members, penalties, cards, events, the draw."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from controller.registry.db import MIGRATIONS, Database
from controller.registry.errors import RegistryError
from controller.registry.registry import Registry
from tests.registry.conftest import NOW, add_member, open_event

UID1 = bytes.fromhex("04a1b2c3d4e5f6")
UID2 = bytes.fromhex("04a1b2c3d4e5f7")


def test_migrations_recorded_and_idempotent(db_url):
    db = Database.open(db_url)
    assert db.schema_version() == MIGRATIONS[-1][0]
    assert db.migrate() == []  # reopening applies nothing twice
    db.close()


def test_sqlite_uses_wal(tmp_path):
    db = Database.open(str(tmp_path / "r.db"))
    assert db.read().one("PRAGMA journal_mode")[0] == "wal"
    db.close()


def test_member_roundtrip_and_duplicate(registry):
    m = add_member(registry, "P1", "  Ann   Lee ")
    assert (m.display_name, m.status, m.photo_id_checked) == ("Ann Lee", "active", True)
    with pytest.raises(RegistryError) as err:
        add_member(registry, "P1", "Someone Else")
    assert err.value.reason == "duplicate_member"
    assert registry.member("P1").display_name == "Ann Lee"  # unchanged


def test_future_birth_date_refused(registry):
    with pytest.raises(RegistryError) as err:
        add_member(registry, "P2", "Bo", born=NOW.date() + timedelta(days=1))
    assert err.value.reason == "bad_birth_date"
    assert "future" in str(err.value)
    assert registry.find_member("P2") is None


def test_under_age_refused_at_signup(registry):
    born = date(NOW.year - 18, 1, 1)
    with pytest.raises(RegistryError) as err:
        add_member(registry, "P3", "Kid", born=born, min_age=19)
    assert err.value.reason == "under_age"
    assert registry.find_member("P3") is None


def test_status_and_penalties_history(registry):
    add_member(registry, "P1", "Ann")
    registry.add_penalty("P1", "warning", now=NOW, rule="cool_mule:11.b", note="phone at table")
    registry.add_penalty("P1", "one_round", now=NOW + timedelta(hours=1), event_id="E1")
    assert [p.kind for p in registry.penalties("P1")] == ["warning", "one_round"]
    assert registry.set_status("P1", "suspended", "abuse").status == "suspended"
    with pytest.raises(RegistryError):
        registry.set_status("P1", "banned")
    with pytest.raises(RegistryError) as err:
        registry.add_penalty("NOPE", "warning", now=NOW)
    assert err.value.reason == "unknown_player"


def test_card_issue_replace_revoke(registry):
    add_member(registry, "P1", "Ann")
    add_member(registry, "P2", "Bo")
    assert registry.issue_card(UID1, "P1", "cool_mule", "k1", now=NOW) == []
    # the same tag cannot become Bo's card while it is Ann's
    with pytest.raises(RegistryError) as err:
        registry.issue_card(UID1, "P2", "cool_mule", "k1", now=NOW)
    assert err.value.reason == "card_in_use"
    # a new card for Ann replaces (revokes) the old one
    assert registry.issue_card(UID2, "P1", "cool_mule", "k1", now=NOW) == [UID1]
    assert registry.card(UID1).revoke_reason == "replaced"
    assert registry.active_card("P1").uid == UID2
    registry.revoke_card(UID2, now=NOW, reason="lost")
    assert registry.active_card("P1") is None
    with pytest.raises(RegistryError) as err:
        registry.revoke_card(UID2, now=NOW)
    assert err.value.reason == "already_revoked"
    with pytest.raises(RegistryError) as err:  # a revoked tag stays revoked
        registry.issue_card(UID2, "P1", "cool_mule", "k1", now=NOW)
    assert err.value.reason == "revoked_card"


def test_registration_first_come_first_served_and_duplicates(registry):
    open_event(registry, tables=(("T1", 2),))
    for pid in ("P3", "P1", "P2"):
        add_member(registry, pid, pid)
    registry.register("E1", "P3", now=NOW)
    registry.register("E1", "P1", now=NOW)
    with pytest.raises(RegistryError) as err:
        registry.register("E1", "P1", now=NOW)
    assert err.value.reason == "duplicate_registration"
    with pytest.raises(RegistryError) as err:
        registry.register("E1", "P2", now=NOW)
    assert err.value.reason == "event_full"
    assert [(r.order, r.player_id) for r in registry.registrations("E1")] == [(1, "P3"), (2, "P1")]


def test_registration_eligibility(registry):
    open_event(registry, min_age=21)
    add_member(registry, "P1", "Young", born=date(NOW.year - 20, 1, 1))
    add_member(registry, "P2", "NoId", photo_id_checked=False)
    add_member(registry, "P3", "Banned")
    registry.set_status("P3", "revoked", "cheating")
    reasons = {}
    for pid in ("P1", "P2", "P3", "P404"):
        with pytest.raises(RegistryError) as err:
            registry.register("E1", pid, now=NOW)
        reasons[pid] = err.value.reason
    assert reasons == {
        "P1": "under_age",
        "P2": "photo_id_not_checked",
        "P3": "member_revoked",
        "P404": "unknown_player",
    }
    assert registry.registrations("E1") == []


def test_draw_even_seeded_seat1_button(registry):
    open_event(registry, tables=(("T1", 9), ("T2", 9)))
    players = [f"P{i}" for i in range(1, 12)]
    for pid in players:
        add_member(registry, pid, pid)
        registry.register("E1", pid, now=NOW)
    draw = registry.draw("E1", seed=42, now=NOW)
    per_table = {t: [a.seat for a in draw if a.table_id == t] for t in ("T1", "T2")}
    assert sorted(len(s) for s in per_table.values()) == [5, 6]
    assert all(1 in seats for seats in per_table.values())  # cool_mule:4.a seat 1 is the first button
    assert sorted(a.player_id for a in draw) == sorted(players)
    assert registry.seat_draw("E1") == draw
    with pytest.raises(RegistryError) as err:
        registry.draw("E1", seed=1, now=NOW)
    assert err.value.reason == "already_drawn"


def test_same_seed_same_draw(db_url, tmp_path):
    results = []
    for n in range(2):
        reg = Registry.open(db_url)
        open_event(reg, event_id=f"E{n}")
        for pid in ("A", "B", "C", "D", "E"):
            if reg.find_member(pid) is None:
                add_member(reg, pid, pid)
            reg.register(f"E{n}", pid, now=NOW)
        results.append([(a.player_id, a.table_id, a.seat) for a in reg.draw(f"E{n}", seed=7, now=NOW)])
        reg.close()
    assert results[0] == results[1]


def test_draw_more_players_than_seats_refused_nothing_written(registry):
    open_event(registry, tables=(("T1", 2),))
    for pid in ("P1", "P2"):
        add_member(registry, pid, pid)
        registry.register("E1", pid, now=NOW)
    # force a third registration past capacity as a second desk might have done before a table was removed
    add_member(registry, "P3", "P3")
    with registry.db.transaction() as tx:
        tx.execute(
            "INSERT INTO registrations (event_id, player_id, registered_at) VALUES ('E1', 'P3', ?)",
            (NOW.isoformat(),),
        )
    with pytest.raises(RegistryError) as err:
        registry.draw("E1", seed=1, now=NOW)
    assert err.value.reason == "too_many_players"
    assert "3 players but only 2 seats" in str(err.value)
    assert registry.seat_draw("E1") == []
    assert registry.event("E1").status == "open"


def test_late_registration_gets_a_seat(registry):
    open_event(registry, tables=(("T1", 4), ("T2", 4)))
    for pid in ("P1", "P2", "P3"):
        add_member(registry, pid, pid)
        registry.register("E1", pid, now=NOW)
    registry.draw("E1", seed=3, now=NOW)
    add_member(registry, "P4", "P4")
    registry.register("E1", "P4", now=NOW, seed=5)
    a = registry.assignment("E1", "P4")
    seats = {(x.table_id, x.seat) for x in registry.seat_draw("E1")}
    assert a is not None and len(seats) == 4
    counts = [sum(1 for x in registry.seat_draw("E1") if x.table_id == t) for t in ("T1", "T2")]
    assert sorted(counts) == [2, 2]


def test_failed_transaction_leaves_nothing(registry):
    add_member(registry, "P1", "Ann")
    with pytest.raises(RuntimeError), registry.db.transaction() as tx:
        tx.execute("UPDATE members SET display_name = 'X' WHERE player_id = 'P1'")
        raise RuntimeError("power cut")
    assert registry.member("P1").display_name == "Ann"
