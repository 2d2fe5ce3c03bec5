"""Tracker: rendered deal sequences give the right protocol lines in the right order; flicker gives none."""

from __future__ import annotations

import numpy as np
import pytest

from hil.camera import SimulatedCamera, deal_hand_script, run_script
from vision.detect import Detector
from vision.layout import default_layout
from vision.tracker import Tracker

from .conftest import H, W


def test_rendered_deal_gives_the_right_lines(tango_model):
    cam = SimulatedCamera(seats=6, deck="tango", width=W, height=H, seed=3)
    steps = deal_hand_script(6, 3, np.random.default_rng(1), exposed_seat=5, flash_seat=2)
    steps[-1].frames = 6  # the river stays on the table long enough to settle
    layout = default_layout(6, W, H)
    tracker = Tracker(layout, debounce_frames=3, detector=Detector(tango_model, layout=layout, track=True))
    got: list[dict] = []
    expected: list[dict] = []
    for k, frame, _, so_far in run_script(cam, steps):
        got += tracker.update(frame, k / 10)
        expected = so_far
    assert got == expected
    kinds = [e["type"] for e in got]
    assert kinds[0] == "button_seen" and kinds.count("deal") == 12 and kinds.count("board") == 3
    assert {"type": "expose", "seat": 2, "card": cam._hole[2][0].code, "by": "dealer"} in got


def _card(x, y, face="down", code=None):
    return {"face": face, "code": code, "center": [x, y], "corners": [], "confidence": 0.9}


@pytest.fixture
def layout():
    return default_layout(6, W, H)


def _seat_point(layout, seat):
    return tuple(layout.to_image([layout.seat_anchors[seat]])[0])


def test_one_frame_flicker_makes_no_event(layout):
    tr = Tracker(layout, debounce_frames=3)
    x, y = _seat_point(layout, 2)
    frames = [[], [_card(x, y)], [], [], [_card(x, y)], [_card(x, y)], []]
    out = [tr.update({"cards": cards, "button": None}, t) for t, cards in enumerate(frames)]
    assert all(o == [] for o in out)


def test_card_counts_after_n_frames_in_arrival_order(layout):
    tr = Tracker(layout, debounce_frames=3)
    a, b = _seat_point(layout, 4), _seat_point(layout, 1)
    events = []
    seq = [[_card(*a)], [_card(*a), _card(*b)], [_card(*a), _card(*b)], [_card(*a), _card(*b)], [_card(*b)]]
    for t, cards in enumerate(seq):
        events.append(tr.update({"cards": cards, "button": None}, t))
    assert events == [[], [], [{"type": "deal", "seat": 4}], [{"type": "deal", "seat": 1}], []]


def test_face_up_deal_expose_board_and_button(layout):
    tr = Tracker(layout, debounce_frames=2)
    s3, s5 = _seat_point(layout, 3), _seat_point(layout, 5)
    board = [tuple(layout.to_image([(dx, 0.0)])[0]) for dx in (-73.0, 0.0, 73.0)]
    btn = {"center": list(_seat_point(layout, 6)), "radius": 20, "confidence": 0.9}
    f1 = [_card(*s3, "up", "Kd"), _card(*s5)]
    f2 = [_card(*s3, "up", "Kd"), _card(*s5, "up", "7c")]
    f3 = [*f2, *(_card(*p, "up", c) for p, c in zip(board, ["Ah", "2c", "9s"], strict=True))]
    out = []
    for t, (cards, b) in enumerate(
        [(f1, btn), (f1, btn), (f2, btn), (f2, btn), (f3, None), (f3, None), (f3, None), (f3, None)]
    ):
        out += tr.update({"cards": cards, "button": b}, t)
    assert out == [
        {"type": "deal", "seat": 3, "card": "Kd"},
        {"type": "deal", "seat": 5},
        {"type": "button_seen", "seat": 6},
        {"type": "expose", "seat": 5, "card": "7c", "by": "dealer"},
        {"type": "board", "cards": ["Ah", "2c", "9s"]},
    ]


def test_reset_hand_silences_old_cards_and_reports_button_again(layout):
    tr = Tracker(layout, debounce_frames=2)
    s2 = _seat_point(layout, 2)
    btn = {"center": list(_seat_point(layout, 1)), "radius": 20, "confidence": 0.9}
    for t in range(3):
        tr.update({"cards": [_card(*s2)], "button": btn}, t)
    tr.reset_hand()
    out = []
    for t in range(3, 6):
        out += tr.update({"cards": [_card(*s2)], "button": btn}, t)
    assert out == [{"type": "button_seen", "seat": 1}]


def test_bad_input_is_refused(layout):
    tr = Tracker(layout)
    with pytest.raises(ValueError, match="needs a frame"):
        tr.update({"nothing": 1}, 0.0)
