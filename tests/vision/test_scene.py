"""The scene renderer: deterministic frames with truth that says what is where."""

from __future__ import annotations

import numpy as np
import pytest

from hil.camera import SimulatedCamera
from hil.scene import (
    CardPlacement,
    Chip,
    TableScene,
    load_deck,
    packed_deck,
    random_scene,
    render,
    seat_card_pose,
)

from .conftest import H, W


def test_same_seed_same_frame_and_truth():
    a, ta = render(random_scene(7), W, H, seed=7)
    b, tb = render(random_scene(7), W, H, seed=7)
    assert np.array_equal(a, b)
    assert ta == tb
    c, _ = render(random_scene(7), W, H, seed=8)
    assert not np.array_equal(a, c)  # noise follows the seed


def test_truth_of_an_overlapping_pair():
    scene = TableScene(seats=6)
    for i, code in enumerate(["As", "Kd"]):
        c, a = seat_card_pose(6, 1, i)
        scene.cards.append(CardPlacement(c, a, code, face_up=False, seat=1, zone="seat"))
    _frame, truth = render(scene, W, H, seed=1)
    lower, upper = truth["cards"]
    assert upper["visible"] == pytest.approx(1.0, abs=0.02)
    assert 0.2 < lower["visible"] < 0.9  # partly covered, still a card of its own
    for card in truth["cards"]:
        xs, ys = zip(*card["corners"], strict=True)
        assert min(xs) >= 0 and max(xs) < W and min(ys) >= 0 and max(ys) < H
    assert truth["card_width_px"] == pytest.approx(63 / 1600 * W, rel=0.02)


def test_chips_and_button_in_truth():
    scene = TableScene(chips=[Chip((100.0, 100.0), "white")])
    _, truth = render(scene, W, H, seed=0)
    assert truth["button"] is None
    assert truth["chips"][0]["colour"] == "white"


def test_deck_folder_from_environment(monkeypatch, tmp_path):
    load_deck.cache_clear()
    monkeypatch.setenv("SMART_TABLE_DECKS", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        load_deck("tango")
    load_deck.cache_clear()


@pytest.mark.parametrize("deck", ["anglo_poker", "drawn"])
def test_the_simulated_tables_packed_deck_draws_the_same_frame_in_a_fraction_of_the_memory(deck):
    """The service's simulated camera draws from a packed deck (issue 12: service RSS at most 150 MB)."""
    scene = random_scene(3, deck=deck)
    decoded, truth = render(scene, W, H, seed=3)
    scene.packed = True
    packed, packed_truth = render(scene, W, H, seed=3)
    assert np.array_equal(decoded, packed) and truth == packed_truth
    held = sum(len(data) for data, _ in packed_deck(deck)._files.values())
    assert held < sum(img.nbytes for img in load_deck(deck).values()) / 4
    assert sorted(packed_deck(deck)) == sorted(load_deck(deck))
    assert SimulatedCamera(deck=deck).scene.packed  # what the service's simulated table draws from
