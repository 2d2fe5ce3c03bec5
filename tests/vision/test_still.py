"""Tracked frames that show the same table as the last one looked at in full give its finds again
(vision.detect STILL_LEVEL); whatever a player does to a card must still be seen on the next frame."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from hil.scene import random_scene, render
from vision.detect import Detector

W, H = 1280, 720


def _summary(result):
    return sorted((c.face, str(c.code), round(c.center[0]), round(c.center[1])) for c in result.cards)


def _same_cards(tracked, cold, tol: float = 1.0) -> None:
    """The tracked frame's cards are the ones a fresh detector finds on that frame."""
    assert len(tracked.cards) == len(cold.cards)
    assert sorted((c.face, str(c.code)) for c in tracked.cards) == sorted(
        (c.face, str(c.code)) for c in cold.cards
    )
    for c in cold.cards:
        d = min(np.hypot(c.center[0] - t.center[0], c.center[1] - t.center[1]) for t in tracked.cards)
        assert d <= tol, f"a card at {c.center} is {d:.1f} px from where the tracked frame put it"


@pytest.fixture(scope="module")
def table():
    scene = random_scene(11, deck="drawn")
    frame, _ = render(scene, W, H, 11)
    det = Detector(track=True)
    first = det.detect(frame)
    assert len(first.cards) >= 4
    return scene, frame, det, first


def _board_card(scene):
    return next(i for i, c in enumerate(scene.cards) if c.zone == "board")


def test_sensor_noise_alone_gives_the_same_finds_again(table):
    _scene, frame, det, first = table
    rng = np.random.default_rng(5)
    noisy = np.clip(frame.astype(np.int16) + rng.integers(-4, 5, frame.shape), 0, 255).astype(np.uint8)
    again = det.detect(noisy)
    assert _summary(again) == _summary(first)
    assert not again.truncated


@pytest.mark.parametrize("change", ["moved", "turned", "taken"])
def test_a_card_moved_turned_over_or_taken_is_seen_on_the_next_frame(table, change):
    scene, frame, _det, first = table
    det = Detector(track=True)
    det.detect(frame)
    changed = copy.deepcopy(scene)
    i = _board_card(changed)
    card = changed.cards[i]
    if change == "moved":  # a few millimetres: a few pixels here
        card.center = (card.center[0] + 4.0, card.center[1] + 3.0)
    elif change == "turned":
        card.face_up = not card.face_up
    else:
        del changed.cards[i]
    frame2, _ = render(changed, W, H, 11)
    tracked = det.detect(frame2)
    cold = Detector(track=True).detect(frame2)
    _same_cards(tracked, cold)
    assert _summary(tracked) != _summary(first)
