"""Nothing that is not face up for the whole table leaves the service; personal data is ID and name."""

from __future__ import annotations

import json

from controller.service.privacy import public_line, public_snapshot


def test_a_card_flashed_in_the_deal_is_public_a_face_down_deal_has_none():
    assert public_line({"type": "deal", "seat": 2, "card": "Kd"})["card"] == "Kd"
    assert public_line({"type": "deal", "seat": 2}) == {"type": "deal", "seat": 2}


def test_shown_board_and_exposed_cards_are_public():
    assert public_line({"type": "show", "seat": 3, "cards": ["Ah", "Ad"]})["cards"] == ["Ah", "Ad"]
    assert public_line({"type": "board", "cards": ["2c", "3d", "4h"]})["cards"] == ["2c", "3d", "4h"]
    assert public_line({"type": "expose", "seat": 3, "card": "Qs", "by": "dealer"})["card"] == "Qs"


def test_mucked_and_hidden_cards_never_leave():
    muck = public_line({"type": "muck", "seat": 4, "cards": ["7c", "2d"], "hole": ["7c", "2d"]})
    assert muck == {"type": "muck", "seat": 4}
    # a tracker that adds the hole card it read to an unknown line type: dropped
    odd = public_line({"type": "card_read", "seat": 4, "code": "Jh", "confidence": 0.9})
    assert "Jh" not in json.dumps(odd) and odd["confidence"] == 0.9
    # an engine rejection that quotes the refused line
    err = public_line({"type": "error", "line": 7, "message": "muck at seat 4 with Ah Kd: no hand running"})
    assert "Ah" not in err["message"] and "Kd" not in err["message"]


def test_personal_data_is_limited_to_id_and_name():
    seat = public_line(
        {
            "type": "seat",
            "seat": 1,
            "player": "P-17",
            "name": "Ann",
            "email": "a@x",
            "birth": "1990-01-01",
            "uid": "04a1b2",
        }
    )
    assert seat == {"type": "seat", "seat": 1, "player": "P-17", "name": "Ann"}
    checkin = public_line(
        {"type": "checkin", "seat": 2, "player": "P-9", "accepted": True, "uid": "04ff", "phone": "1"}
    )
    assert set(checkin) == {"type", "seat", "player", "accepted"}


def test_snapshot_keeps_public_seat_fields_only():
    snap = public_snapshot(
        {
            "seats": [{"seat": 1, "player": "A", "stack": 100, "hole_cards": ["Ah", "Kh"], "email": "x"}],
            "phase": "flop",
            "board": ["2c", "3d", "4h"],
            "secret": 1,
            "last_rulings": [{"type": "muck", "seat": 1, "cards": ["Ah", "Kh"]}],
        }
    )
    assert snap["seats"] == [{"seat": 1, "player": "A", "stack": 100}]
    assert "secret" not in snap and snap["board"] == ["2c", "3d", "4h"]
    assert "Ah" not in json.dumps(snap)
