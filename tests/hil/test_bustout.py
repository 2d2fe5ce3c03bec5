"""Bust-outs from the cards: a seated player's NFC tap at a self-dealt table (controller.registry.checkin.
SeatTaps), and what the rules engine makes of the lines it sends."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from controller.registry.checkin import SeatTaps, seat_of
from controller.rules.engine import TableEngine

T0 = datetime(2026, 12, 1, 20, 0, tzinfo=UTC)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def types(lines: list[dict]) -> list[str]:
    return [line["type"] for line in lines]


def test_a_tap_during_a_hand_asks_and_a_second_tap_sends_leave_eliminated():
    taps = SeatTaps(confirm_seconds=30)
    asked = taps.tap(3, "P3", at(0), in_hand=True, away=False)
    assert types(asked) == ["bustout"] and asked[0]["confirmed"] is False and "NEW HAND" in asked[0]["ask"]
    done = taps.tap(3, "P3", at(5), in_hand=True, away=False)
    assert done[-1] == {"type": "leave", "seat": 3, "reason": "eliminated", "player": "P3"}
    assert done[0]["confirmed"] is True
    assert taps.finishing_order == ["P3"]


def test_new_hand_confirms_the_hands_bust_outs_in_tap_order_and_leaves_between_hand_taps():
    taps = SeatTaps(confirm_seconds=30)
    taps.tap(5, "P5", at(0), in_hand=True, away=False)
    taps.tap(2, "P2", at(1), in_hand=True, away=False)
    taps.tap(7, "P7", at(2), in_hand=False, away=False)  # between hands: only a second tap says "out"
    lines = taps.new_hand(at(10))
    leaves = [line for line in lines if line["type"] == "leave"]
    assert [line["seat"] for line in leaves] == [5, 2]
    assert taps.finishing_order == ["P5", "P2"]
    assert 7 in taps.questions


def test_an_unanswered_tap_between_hands_is_away_and_the_next_tap_is_back():
    taps = SeatTaps(confirm_seconds=30)
    taps.tap(4, "P4", at(0), in_hand=False, away=False)
    assert taps.expire(at(20)) == []  # still waiting for an answer
    gone = taps.expire(at(31))
    assert types(gone) == ["bustout", "away"] and gone[1] == {"type": "away", "seat": 4}
    assert taps.tap(4, "P4", at(60), in_hand=False, away=True) == [{"type": "back", "seat": 4}]
    assert taps.finishing_order == []


def test_an_unanswered_tap_during_a_hand_changes_nothing():
    taps = SeatTaps(confirm_seconds=30)
    taps.tap(4, "P4", at(0), in_hand=True, away=False)
    assert types(taps.expire(at(31))) == ["bustout"]  # the question goes off the ring; no away, no leave
    assert taps.new_hand(at(40)) == []
    late = taps.tap(4, "P4", at(45), in_hand=True, away=False)  # a fresh question, not an answer
    assert types(late) == ["bustout"] and late[0]["confirmed"] is False


def test_seat_of_reads_the_services_table_view():
    view = {"seats": [{"seat": 2, "player": "P2", "away": False}, {"seat": 6, "player": "P6", "away": True}]}
    assert seat_of(view, "P6") == (6, True)
    assert seat_of(view, "P9") is None
    assert seat_of(None, "P2") is None


def test_the_tapped_out_lines_move_the_dead_button_at_an_observed_table():
    """The lines SeatTaps sends, fed to the engine of an observed bar_league table (bar_league:Dead Button:
    "Neither the elimination of players nor the arrival of new players will affect the movement of the
    button")."""
    engine = TableEngine("bar_league", 6, actions="observed")
    n = 0

    def feed(line: dict) -> list[dict]:
        nonlocal n
        n += 1
        return engine.feed(json.dumps(line), n)

    for s in (1, 2, 3, 4, 5):
        feed({"type": "seat", "seat": s, "player": f"P{s}", "stack": 1000})
    feed({"type": "level", "sb": 25, "bb": 50})
    feed({"type": "button", "seat": 1})
    hand = feed({"type": "hand_start"})[0]
    assert (hand["button"], hand["sb"], hand["bb"]) == (1, 2, 3)
    taps = SeatTaps()
    taps.tap(2, "P2", at(0), in_hand=True, away=False)  # the small blind busts at the showdown
    lines = taps.new_hand(at(8))
    out = [o for line in lines if line["type"] == "leave" for o in feed(line)]
    assert out == [{"type": "eliminated", "seat": 2, "place": 5, "player": "P2"}]
    hand = feed({"type": "hand_start"})[0]
    # The button moves into last hand's small blind, now an empty seat: a dead button; seat 1 deals.
    assert (hand["button"], hand["dead_button"], hand["sb"], hand["bb"], hand["dealer"]) == (2, True, 3, 4, 1)


def test_a_checked_in_players_tap_confirms_the_seat_before_play_and_asks_out_once_play_began(tmp_path):
    """Through the registry: the first tap seats the player; before the first hand a tap again only says so
    (repeat); once a hand is on, a tap asks "out?" and a second tap sends `leave` with reason eliminated."""
    from controller.registry.card import CardVerifier, encode_card
    from controller.registry.checkin import TableCheckIn
    from controller.registry.keys import load_keys
    from controller.registry.registry import Registry
    from hil.scenario import Player
    from hil.sim import EVENT_ID, set_up_desk

    desk = set_up_desk(
        tmp_path, "bar_league", "bar_league", 6, (Player("P1", "Ann", 1), Player("P2", "Bo", 4))
    )
    keys = load_keys(desk.keys_file)
    registry = Registry.open(desk.registry_url)
    try:
        table = TableCheckIn(
            registry, venue="bar_league", table_id="T1", event_id=EVENT_ID, verifier=CardVerifier(keys)
        )

        def tap(when: datetime, view: dict):
            return table.on_tap(desk.uids["P2"], encode_card(desk.uids["P2"], "P2", keys), when, view)

        first = tap(at(0), {"phase": "waiting", "seats": []})
        assert types(first.lines) == ["seat", "checkin"] and first.seat == 4
        view = {"phase": "waiting", "seats": [{"seat": 4, "player": "P2", "away": False}]}
        assert tap(at(5), view).lines[0].get("repeat") is True
        view["phase"] = "river"
        asked = tap(at(60), view)
        assert types(asked.lines) == ["bustout"] and asked.seat == 4
        done = tap(at(63), view)
        assert done.lines[-1] == {"type": "leave", "seat": 4, "reason": "eliminated", "player": "P2"}
    finally:
        registry.close()
