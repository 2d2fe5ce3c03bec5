"""The benchmark's scoring: which face-up cards could be read at all (a corner index in view)."""

from __future__ import annotations

from hil.scene import CardPlacement, TableScene, render, seat_card_pose
from vision.evaluate import index_corners_seen, score_frame

from .conftest import H, W


def _truth(placements):
    scene = TableScene(seats=6)
    scene.cards.extend(placements)
    return render(scene, W, H, seed=3)[1]


def test_hole_card_pair_lower_card_keeps_an_index_in_view():
    pair = []
    for i, code in enumerate(["As", "Kd"]):
        c, a = seat_card_pose(6, 1, i)
        pair.append(CardPlacement(c, a, code, face_up=True, seat=1, zone="seat"))
    truth = _truth(pair)
    assert truth["cards"][0]["visible"] < 0.9  # the lower card is partly covered...
    assert index_corners_seen(truth["cards"]) == [True, True]  # ...but one of its indices shows


def test_card_crossed_over_both_indices_cannot_be_read():
    # a card laid across another at right angles covers the middle band, both corner indices with it
    lower = CardPlacement((0.0, 0.0), 0.0, "7c", face_up=True, zone="board")
    upper = CardPlacement((0.0, 0.0), 90.0, "8h", face_up=True, zone="board")
    truth = _truth([lower, upper])
    assert 0.1 < truth["cards"][0]["visible"] < 0.5
    assert index_corners_seen(truth["cards"]) == [False, True]
    # a detector that got both cards but misread the hidden one: the all-cards figure counts it,
    # the index-in-view figure does not
    found = {
        "cards": [
            {"face": "up", "code": "2c", "center": t["center"], "corners": t["corners"]}
            for t in truth["cards"]
        ],
        "button": None,
    }
    found["cards"][1]["code"] = "8h"
    s = score_frame(found, truth)
    assert (s.up_cards, s.read_right) == (2, 1)
    assert (s.up_index_seen, s.read_right_index_seen) == (1, 1)
    assert s.reading_accuracy == 0.5 and s.reading_accuracy_index_seen == 1.0
    assert s.misread_outline_off == 0  # the outline was right; the index was not in view


def test_an_outline_shifted_by_a_third_of_a_card_is_counted_off_even_when_read_right():
    card = CardPlacement((0.0, 0.0), 0.0, "Qd", face_up=True, zone="board")
    truth = _truth([card])
    t = truth["cards"][0]
    shift = truth["card_width_px"] / 3
    corners = [[x + shift, y] for x, y in t["corners"]]
    found = {
        "cards": [{"face": "up", "code": "Qd", "center": t["center"], "corners": corners}],
        "button": None,
    }
    s = score_frame(found, truth)
    assert s.read_right == 1 and s.misread_outline_off == 0  # read right: not a misread
    assert s.outline_off == 1
    assert abs(s.mean_outline_error - 1 / 3) < 0.01
