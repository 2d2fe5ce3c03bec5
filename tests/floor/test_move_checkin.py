"""A player the floor moved taps in at the new table: accepted as `seat` with `moved: true` and the chips
brought along, instead of refused as wrong_table (on SQLite, and on PostgreSQL where one is reachable)."""

from __future__ import annotations

import pytest

from controller.registry.card import CardVerifier, encode_card
from controller.registry.checkin import TableCheckIn
from controller.registry.errors import RegistryError
from controller.registry.keys import create_key_file, load_keys
from controller.registry.registry import Registry
from tests.registry.conftest import NOW, add_member, open_event


def uid_for(n: int) -> bytes:
    return bytes([4, 0, 0, 0, 0, 1, n])


@pytest.fixture
def world(tmp_path, db_url):
    reg = Registry.open(db_url)
    create_key_file(tmp_path / "keys.toml", "cool_mule", "k1")
    keys = load_keys(tmp_path / "keys.toml")
    open_event(reg, tables=(("T1", 6), ("T2", 6)))
    for n in range(1, 5):
        add_member(reg, f"P{n}", f"Player {n}")
        reg.issue_card(uid_for(n), f"P{n}", "cool_mule", keys.current, now=NOW)
        reg.register("E1", f"P{n}", now=NOW)
    reg.draw("E1", seed=3, now=NOW)
    yield reg, keys
    reg.close()


def tap(world, table_id, n):
    reg, keys = world
    pid = f"P{n}"
    checkin = TableCheckIn(
        reg, venue="cool_mule", table_id=table_id, event_id="E1", verifier=CardVerifier(keys)
    )
    return checkin.on_tap(uid_for(n), encode_card(uid_for(n), pid, keys), NOW)


def test_moved_player_is_seated_at_the_new_table_with_moved_true(world):
    reg, _ = world
    a = reg.assignment("E1", "P1")
    assert tap(world, a.table_id, 1).accepted
    other = "T2" if a.table_id == "T1" else "T1"
    # before the move, a tap at the other table is refused and says where to go
    assert tap(world, other, 1).reason == "wrong_table"
    taken = {x.seat for x in reg.seat_draw("E1") if x.table_id == other}
    free = next(s for s in range(1, 7) if s not in taken)
    reg.move_player("E1", "P1", other, free, now=NOW, stack=12345, rule="cool_mule:12.l")
    result = tap(world, other, 1)
    assert result.accepted and result.seat == free
    assert result.lines[0] == {"type": "seat", "seat": free, "player": "P1", "stack": 12345, "moved": True}
    assert reg.checkin("E1", "P1").table_id == other
    # a second tap there is a repeat; the old table now says wrong_table
    assert tap(world, other, 1).extra.get("repeat")
    assert tap(world, a.table_id, 1).reason == "wrong_table"
    assert reg.pending_move("E1", "P1") is None


def test_a_move_to_a_seat_that_does_not_exist_is_refused_and_changes_nothing(world):
    reg, _ = world
    before = reg.assignment("E1", "P2")
    with pytest.raises(RegistryError, match=r"seat 9 is not 1\.\.6"):
        reg.move_player("E1", "P2", "T2", 9, now=NOW)
    with pytest.raises(RegistryError, match="no table T9"):
        reg.move_player("E1", "P2", "T9", 1, now=NOW)
    assert reg.assignment("E1", "P2") == before and reg.pending_move("E1", "P2") is None
