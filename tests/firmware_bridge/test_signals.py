"""The signal language: every ruling type maps to the scene players need, purely and repeatably."""

from __future__ import annotations

import copy
import json

import pytest

from firmware_bridge import catalog
from firmware_bridge.scene import COLORS, Scene, SceneError
from firmware_bridge.signals import ELIMINATED as ELIMINATED_LIGHT
from firmware_bridge.signals import SIGNAL_TYPES, SignalState

HAND = catalog._hand()  # button 3 deals, sb 4, bb 5, first card 4, on 10 seats


def fold(*lines, seats=10):
    state = SignalState(seats)
    for line in lines:
        state.apply(line)
    return state


def light(scene, seat):
    s = scene.seat(seat)
    return (next(name for name, rgb in COLORS.items() if rgb == s.color), s.effect)


def test_spec_worked_example_hand_line():
    line = json.loads(
        '{"type":"hand","number":1,"button":1,"sb":2,"bb":4,"dead_button":false,"dead_sb_seat":null,'
        '"dealer":1,"first_card":2,"dealt_in":[2,4,5,1],"sitting_out":[],"redeal":false}'
    )
    scene = SignalState(6).apply(line)
    assert [light(scene, s) for s in range(1, 7)] == [
        ("white", "chase"),  # the button deals
        ("blue", "solid"),
        ("off", "off"),
        ("yellow", "solid"),
        ("off", "off"),
        ("off", "off"),
    ]
    assert scene.text.splitlines() == ["HAND 1", "BUTTON 1", "DEALER 1 FIRST 2"]


def test_dead_button_blinks_until_the_camera_sees_it_there():
    state = fold(catalog.DEAD_BUTTON)
    assert light(state.scene, 4) == ("white", "blink")
    assert light(state.scene, 3) == ("green", "chase"), "the seat to the right of the dead button deals"
    assert "DEAD BUTTON 4" in state.scene.text
    assert state.apply({"type": "button_seen", "seat": 6}) is None, "seen elsewhere: keep blinking"
    assert light(state.scene, 4) == ("white", "blink")
    scene = state.apply({"type": "button_seen", "seat": 4})
    assert light(scene, 4) == ("white", "solid")
    assert state.apply({"type": "button_seen", "seat": 4}) is None


def test_misplaced_button_blinks_where_it_must_go_and_where_it_wrongly_is():
    state = fold(HAND, {"type": "button_misplaced", "expected": 3, "seen": 2})
    assert light(state.scene, 3) == ("white", "blink")
    assert light(state.scene, 2) == ("red", "blink")
    assert state.scene.text.startswith("MOVE BUTTON\nto seat 3")
    scene = state.apply({"type": "button_seen", "seat": 3})
    assert light(scene, 2) == ("off", "off") and light(scene, 3)[1] != "blink"
    assert scene.text.startswith("BUTTON OK")


def test_dead_small_blind_and_sitting_out():
    state = fold(catalog.SIGNALS["dead_small_blind"][1][0])
    assert light(state.scene, 3) == ("dim_blue", "solid")
    state = fold(*catalog.SIGNALS["sitting_out"][1])
    assert light(state.scene, 9) == light(state.scene, 10) == ("purple", "solid")
    assert "SIT OUT 9,10" in state.scene.text


def test_redeal_is_named_on_the_display():
    assert fold(catalog._hand(redeal=True)).scene.text.startswith("REDEAL 7")


def test_misdeal_flashes_every_seat_with_the_reason_until_the_next_hand():
    state = fold(
        HAND,
        {"type": "clock", "seat": 6, "seconds": 60},
        {"type": "misdeal", "reason": "first_cards_exposed"},
    )
    assert {light(state.scene, s) for s in range(1, 11)} == {("red", "blink")}
    assert state.scene.text == "MISDEAL\nfirst cards\nexposed"
    state.apply({"type": "error", "line": 3, "message": "deal before hand_start"})
    assert state.scene.text.startswith("MISDEAL"), "an input error does not hide the misdeal"
    scene = state.apply(catalog._hand(redeal=True))
    assert light(scene, 3) == ("white", "chase") and light(scene, 6) == ("off", "off")


@pytest.mark.parametrize(
    ("line", "seat", "expected", "text"),
    [
        ({"type": "replace_exposed", "seat": 6, "card": "Kd"}, 6, ("orange", "blink"), "EXPOSED Kd"),
        ({"type": "extra_card", "seat": 4}, 4, ("orange", "blink"), "EXTRA CARD"),
        (
            {"type": "dead_hand", "seat": 8, "reason": "absent"},
            8,
            ("dark_red", "solid"),
            "DEAD HAND\nseat 8\nabsent",
        ),
        (
            {"type": "action_ruled", "seat": 6, "as": "call", "to": 200, "reason": "oversized_chip"},
            6,
            ("magenta", "blink"),
            "SEAT 6 RULED\nCALL 200\noversized chip",
        ),
        ({"type": "show_order", "first": 5}, 5, ("cyan", "chase"), "SHOWDOWN"),
        ({"type": "eliminated", "seat": 7, "place": 12}, 7, ("red", "pulse"), "SEAT 7 OUT\nplace 12"),
        ({"type": "clock", "seat": 6, "seconds": 60}, 6, ("cyan", "countdown"), "CLOCK\nseat 6: 60 s"),
    ],
)
def test_seat_rulings(line, seat, expected, text):
    state = fold(HAND)
    scene = state.apply(line)
    assert light(scene, seat) == expected
    assert scene.text.startswith(text)
    assert light(scene, 3) == ("white", "chase"), "other seats keep their roles"


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ({"type": "boxed_card", "card": "7c", "procedure": "discard"}, "BOXED CARD 7c\nshow, discard"),
        ({"type": "substantial_action"}, "SUBSTANTIAL\nACTION\nno misdeal now"),
        (
            {"type": "board_redeal", "street": "turn", "procedure": "next_card_then_reshuffle"},
            "TURN TOO EARLY",
        ),
        (
            {
                "type": "pots",
                "pots": [{"amount": 1200, "eligible": [1, 2]}, {"amount": 400, "eligible": [2]}],
            },
            None,
        ),
        ({"type": "error", "line": 9, "message": "deal before hand_start"}, "CHECK TABLE\ndeal before"),
    ],
)
def test_display_only_rulings_leave_the_seats_alone(line, text):
    before = fold(HAND).scene
    scene = fold(HAND, line).scene
    assert scene.seats == before.seats
    assert scene.text != before.text
    if text:
        assert scene.text.startswith(text)
    else:
        assert scene.text == "POT 1200\nSIDE 1 400"


def test_out_of_turn_marks_offender_and_whose_turn_it_is_and_the_next_ruling_replaces_it():
    state = fold(HAND, {"type": "out_of_turn", "seat": 8, "expected": 6})
    assert light(state.scene, 8) == ("red", "blink") and light(state.scene, 6) == ("cyan", "chase")
    state.apply({"type": "action_ruled", "seat": 9, "as": "fold", "reason": "out_of_turn"})
    assert light(state.scene, 8) == ("off", "off") and light(state.scene, 9) == ("magenta", "blink")


def test_award_lights_winners_and_clears_blinds():
    state = fold(*catalog.SIGNALS["award"][1])
    assert light(state.scene, 5) == light(state.scene, 9) == ("gold", "chase")
    assert light(state.scene, 4) == ("off", "off")
    assert state.scene.text == "POT 1200\nseat 5,9\nStraight"


def test_checkin_accepted_and_refused():
    state = fold(*catalog.SIGNALS["checkin_accepted"][1])
    assert light(state.scene, 6) == ("green", "pulse")
    assert state.scene.text == "WELCOME\nAnn\nseat 6"
    state = fold(*catalog.SIGNALS["checkin_refused"][1])
    assert light(state.scene, 2) == ("red", "blink")
    assert state.scene.text == "NOT HERE\ngo to T2 seat 5"
    scene = fold({"type": "checkin", "seat": None, "accepted": False, "reason": "card_revoked"}).scene
    assert scene.text == "CHECK-IN REFUSED\ncard revoked"
    assert all(s.effect == "off" for s in scene.seats)


def test_clock_zero_cancels_and_dead_hand_by_clock_ends_it():
    state = fold(HAND, {"type": "clock", "seat": 6, "seconds": 60})
    assert state.apply({"type": "clock", "seat": 6, "seconds": 0}).seat(6).effect == "off"
    state.apply({"type": "clock", "seat": 6, "seconds": 30})
    scene = state.apply({"type": "dead_hand", "seat": 6, "reason": "clock"})
    assert light(scene, 6) == ("dark_red", "solid")


def test_hand_end_clears_the_rim():
    scene = fold(HAND, {"type": "dead_hand", "seat": 8, "reason": "absent"}, {"type": "hand_end"}).scene
    assert all(s.effect == "off" for s in scene.seats)
    assert scene.text == "HAND 7 OVER\npress NEW HAND"


def test_every_signal_type_is_handled_and_has_a_picture():
    names = set(catalog.SIGNALS)
    for kind in SIGNAL_TYPES:
        assert kind in names or any(n.startswith(kind) for n in names), f"no catalogue entry for {kind}"
        handler = getattr(SignalState, "_on_" + kind)
        assert callable(handler)


@pytest.mark.parametrize("name", sorted(catalog.SIGNALS))
def test_catalogue_scenes_fit_the_display_and_differ_from_plain_hand(name):
    _, lines = catalog.SIGNALS[name]
    state = fold(*lines)
    if name != "error":
        rows = state.scene.text.split("\n")
        assert len(rows) <= 4 and all(len(r) <= 16 for r in rows), state.scene.text
    if name != "hand":
        assert state.scene != fold(HAND).scene


def test_apply_is_pure_same_lines_same_scenes_and_does_not_touch_the_input():
    lines = [line for _, ls in catalog.SIGNALS.values() for line in ls]
    frozen = copy.deepcopy(lines)
    a, b = SignalState(10), SignalState(10)
    assert [a.apply(line) for line in lines] == [b.apply(line) for line in lines]
    assert lines == frozen


def test_same_line_twice_gives_no_new_scene():
    state = fold(HAND)
    assert state.apply(HAND) is None
    assert state.apply({"type": "misdeal", "reason": "multiple_boxed"}) is not None
    assert state.apply({"type": "misdeal", "reason": "multiple_boxed"}) is None


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"type": "hand", "button": 0}, "hand.button: expected a seat 1..10, got 0"),
        ({"type": "hand", "button": 3, "sb": "4"}, "hand.sb"),
        ({"type": "hand", "button": 3, "sitting_out": [{"seat": 11}]}, "sitting_out[0].seat"),
        ({"type": "clock", "seat": 2, "seconds": -1}, "clock.seconds"),
        ({"type": "checkin", "seat": 2, "accepted": "yes"}, "checkin.accepted"),
        ({"type": "award", "winners": []}, "award.winners"),
        ({"type": "award", "winners": [True]}, "award.winners"),
        ({"type": "pots", "pots": [{"amount": -5}]}, "pots.pots[0].amount"),
        ({"type": "out_of_turn", "seat": 3}, "out_of_turn.expected"),
        ({"type": "replace_exposed", "seat": 3, "card": 7}, "replace_exposed.card"),
        ("not a dict", "line must be a JSON object"),
    ],
)
def test_bad_lines_are_refused_with_a_message_and_change_nothing(line, message):
    state = fold(HAND, {"type": "clock", "seat": 6, "seconds": 60})
    before = state.scene
    snapshot = copy.deepcopy({k: v for k, v in state.__dict__.items() if k != "last_error"})
    assert state.apply(line) is None
    assert message in state.last_error
    assert state.scene == before
    assert {k: v for k, v in state.__dict__.items() if k != "last_error"} == snapshot


def test_unknown_and_input_lines_are_ignored():
    state = fold(HAND)
    assert state.apply({"type": "deal", "seat": 3}) is None
    assert state.apply({"no": "type"}) is None
    assert state.last_error is None


def test_scene_dict_round_trip_and_errors():
    scene = fold(HAND, {"type": "clock", "seat": 6, "seconds": 60}).scene
    data = scene.to_dict()
    assert data["seats"][5] == {
        "seat": 6,
        "color": "cyan",
        "effect": "countdown",
        "seconds": 60,
        "clock_id": 1,
    }
    assert Scene.from_dict(json.loads(json.dumps(data))) == scene
    for bad, needle in [
        ({"seats": []}, "scene.seats"),
        ({"seats": [{"color": "mauve"}]}, "scene.seats[0].color"),
        ({"seats": [{"color": [1, 2, 300]}]}, "scene.seats[0].color"),
        ({"seats": [{"effect": "strobe"}]}, "scene.seats[0].effect"),
        ({"seats": [{"effect": "countdown", "seconds": 99999}]}, "scene.seats[0].seconds"),
        ({"seats": [{}], "text": 5}, "scene.text"),
    ]:
        with pytest.raises(SceneError, match=needle.replace("[", r"\[").replace("]", r"\]")):
            Scene.from_dict(bad)


def test_scene_payload_countdown_remaining_and_long_text_is_clipped():
    scene = fold(HAND, {"type": "clock", "seat": 6, "seconds": 60}).scene
    from firmware_bridge.firmware import panelproto as proto

    seats, _ = proto.parse_scene(scene.to_payload({5: 42.0}))
    assert seats[5][3:] == (proto.EFFECT_COUNTDOWN, 420, 600)
    seats, _ = proto.parse_scene(scene.to_payload())
    assert seats[5][4] == 600
    long = Scene.from_dict({"seats": [{}, {}], "text": "é" * 100})
    assert len(long.text.encode()) <= proto.MAX_TEXT and long.text == "é" * 32


def test_calling_the_clock_again_is_a_new_clock_even_with_the_same_length():
    state = fold(HAND, {"type": "clock", "seat": 6, "seconds": 60})
    first = state.scene.seat(6)
    again = state.apply({"type": "clock", "seat": 6, "seconds": 60})
    assert again is not None and again.seat(6).clock_id != first.clock_id
    assert again.seat(6).seconds == first.seconds


def test_bridge_sends_the_time_left_on_a_resend_and_restarts_a_new_clock():
    from firmware_bridge.bridge import PanelBridge
    from firmware_bridge.firmware import panelproto as proto

    bridge = PanelBridge("/nonexistent", 10)
    state = fold(HAND, {"type": "clock", "seat": 6, "seconds": 60})
    bridge._set_desired(state.scene)
    light, _ = bridge._countdowns[5]
    bridge._countdowns[5] = (light, bridge._countdowns[5][1] - 20.0)  # 20 s have passed
    seats, _ = proto.parse_scene(bridge._payload())
    assert 395 <= seats[5][4] <= 400 and seats[5][5] == 600
    bridge._set_desired(state.scene)  # the same scene again: the clock keeps running
    assert proto.parse_scene(bridge._payload())[0][5][4] <= 400
    bridge._set_desired(state.apply({"type": "clock", "seat": 6, "seconds": 60}))  # a new call
    assert proto.parse_scene(bridge._payload())[0][5][4] == 600


def test_error_text_never_shows_a_card():
    scene = fold(HAND, {"type": "error", "line": 5, "message": "deal: seat 3 already has Ah Kd"}).scene
    assert "Ah" not in scene.text and "Kd" not in scene.text and "seat 3 already has ?? ??" in scene.text


def test_a_bust_out_question_counts_down_red_at_the_seat_until_answered():
    """registry.checkin.SeatTaps asks "out?" after a seated player's tap: the ring counts down the
    confirmation window in red; a second tap or NEW HAND (confirmed) marks the seat out; an
    unanswered question (`ask` null) goes off the ring. It outlives a new hand line."""
    asked = catalog.SIGNALS["bustout_question"][1][1]
    state = fold(HAND, asked)
    light = state.scene.seats[6]
    assert (light.effect, light.color, light.seconds) == ("countdown", (255, 0, 0), 30)
    assert state.scene.text.startswith("OUT? seat 7") and "NEW HAND" in state.scene.text
    state.apply(catalog._hand(number=8))
    assert state.scene.seats[6].effect == "countdown"  # still asked: only its answer ends it
    assert state.apply({**asked, "confirmed": True, "ask": None}) is not None
    assert state.scene.seats[6] == ELIMINATED_LIGHT and state.scene.text.startswith("SEAT 7 OUT")
    again = fold(HAND, asked)
    again.apply({"type": "bustout", "seat": 7, "player": "P17", "confirmed": False, "ask": None})
    assert again.scene.seats[6].effect != "countdown" and "not out" in again.scene.text
    # a between-hands tap asks for "tap again" only; a second question restarts the count
    between = fold(HAND, {**asked, "ask": "OUT? tap again", "seconds": 20})
    assert between.scene.text.endswith("tap again") and between.scene.seats[6].seconds == 20
    first_id = between.scene.seats[6].clock_id
    between.apply({**asked, "ask": "OUT? tap again", "seconds": 20})
    assert between.scene.seats[6].clock_id != first_id


def test_a_bust_out_line_with_bad_fields_is_refused_by_name():
    state = fold(HAND)
    for bad, field in (
        ({"type": "bustout", "seat": 7, "confirmed": "yes"}, "bustout.confirmed"),
        ({"type": "bustout", "seat": 70, "confirmed": False, "ask": "OUT?"}, "bustout.seat"),
        ({"type": "bustout", "seat": 7, "confirmed": False, "ask": "OUT?", "seconds": 0}, "bustout.seconds"),
        ({"type": "bustout", "seat": 7, "confirmed": False, "ask": 5}, "bustout.ask"),
    ):
        assert state.apply(bad) is None and state.last_error.startswith(field)
