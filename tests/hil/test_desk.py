"""The simulated registration desk seats players where the scenario says, through the registry's own draw."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from controller.registry.card import CardVerifier, encode_card
from controller.registry.checkin import TableCheckIn
from controller.registry.keys import load_keys
from controller.registry.registry import Registry
from hil.scenario import Player
from hil.sim import EVENT_ID, SimError, set_up_desk


@pytest.mark.parametrize("profile", ["cool_mule", "bluff_street"])
def test_players_are_drawn_at_the_scenario_seats_and_check_in_there(tmp_path, profile):
    players = (
        Player("P1", "Ann", 1),
        Player("P2", "Bo", 4),
        Player("P3", "Cy", 6),
        Player("P9", "Ivo", None, "T2"),
    )
    desk = set_up_desk(tmp_path, profile, profile, 6, players)
    assert desk.assignments["P1"] == ("T1", 1)
    assert desk.assignments["P2"] == ("T1", 4)
    assert desk.assignments["P3"] == ("T1", 6)
    assert desk.assignments["P9"][0] == "T2"
    keys = load_keys(desk.keys_file)
    registry = Registry.open(desk.registry_url)
    try:
        table = TableCheckIn(
            registry, venue=profile, table_id="T1", event_id=EVENT_ID, verifier=CardVerifier(keys)
        )
        now = datetime(2026, 11, 29, 19, 0, tzinfo=UTC)
        ok = table.on_tap(desk.uids["P2"], encode_card(desk.uids["P2"], "P2", keys), now)
        assert ok.accepted and ok.seat == 4
        wrong = table.on_tap(desk.uids["P9"], encode_card(desk.uids["P9"], "P9", keys), now)
        assert not wrong.accepted and wrong.reason == "wrong_table"
    finally:
        registry.close()


def test_seat_one_is_required_where_the_rulebook_gives_it_the_first_button(tmp_path):
    with pytest.raises(SimError, match="seat 1"):
        set_up_desk(tmp_path, "cool_mule", "cool_mule", 6, (Player("P1", "Ann", 2), Player("P2", "Bo", 3)))
