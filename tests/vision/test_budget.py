"""Detection is bounded: a cluttered frame stops at the time budget and says so; a huge picture is
thinned before any heavy work and its cards still come back in its own pixels."""

from __future__ import annotations

import socket

import cv2
import numpy as np
import pytest

from hil.scene import load_deck
from vision.detect import BUDGET_MS, MAX_PIXELS, Detector
from vision.detect_quads import WEIGHTS, QuadVerifier, features


def _clutter(seed: int = 5, w: int = 1920, h: int = 1080) -> np.ndarray:
    """Hundreds of card-shaped scraps of every colour on a noisy, streaked surface."""
    rng = np.random.default_rng(seed)
    img = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), 2)
    for _ in range(600):
        c = (float(rng.uniform(0, w)), float(rng.uniform(0, h)))
        s = float(rng.uniform(10, 60))
        box = cv2.boxPoints((c, (s, s * 1.4), float(rng.uniform(0, 180))))
        cv2.fillConvexPoly(img, np.round(box).astype(np.int32), rng.integers(0, 255, 3).tolist())
    return img


def test_cluttered_frame_stops_at_the_budget_and_reports_it():
    frame = _clutter()
    res = Detector(budget_ms=40).detect(frame)
    assert res.truncated
    assert res.to_dict("x.png")["truncated"] is True
    # without a bound the same frame is worked through to the end
    assert not Detector(budget_ms=None).detect(frame[:360, :640]).truncated


def test_a_plain_frame_is_not_cut_short():
    frame = np.full((720, 1280, 3), (40, 110, 30), np.uint8)
    res = Detector(budget_ms=BUDGET_MS).detect(frame)
    assert not res.truncated and res.cards == [] and "truncated" not in res.to_dict()


def test_huge_picture_is_thinned_first_and_cards_come_back_in_its_pixels():
    h, w = 4000, 4000
    assert h * w > MAX_PIXELS
    frame = np.full((h, w, 3), (35, 90, 30), np.uint8)
    card = load_deck("tango")["Qh"]  # a real card picture, 600 x 840 px on the frame
    card = cv2.resize(card[:, :, :3], (600, 840), interpolation=cv2.INTER_AREA)
    frame[1080:1920, 1700:2300] = card
    res = Detector().detect(frame)
    assert (res.width, res.height) == (w, h)
    assert res.cards, "the card on the huge picture was not found"
    cx, cy = min((c.center for c in res.cards), key=lambda p: abs(p[0] - 2000) + abs(p[1] - 1500))
    assert abs(cx - 2000) < 60 and abs(cy - 1500) < 60  # a tenth of the card


def test_shipped_verifier_weights_load_without_network(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("the verifier tried to reach the network")

    monkeypatch.setattr(socket, "socket", no_network)
    assert WEIGHTS.is_file() and WEIGHTS.stat().st_size < 5_000_000
    v = QuadVerifier(WEIGHTS)
    q = np.float32([[100, 100], [163, 100], [163, 188], [100, 188]])
    img = np.full((300, 300, 3), 60, np.uint8)
    cv2.fillConvexPoly(img, q.astype(np.int32), (240, 240, 240))
    p = v.prob(features(img, q)[None])
    assert p.shape == (1,) and 0.0 <= p[0] <= 1.0


def test_verifier_weights_that_do_not_fit_are_refused(tmp_path):
    bad = tmp_path / "bad.npz"
    z = np.zeros(3, np.float32)
    np.savez(bad, mean=z, std=z + 1, w1=np.zeros((5, 2), np.float32), b1=z[:2], w2=z[:2, None], b2=z[:1])
    with pytest.raises(ValueError, match=r"bad\.npz"):
        QuadVerifier(bad)


def test_proposals_that_spend_the_stage_s_time_still_give_their_most_card_like_verified_cards():
    # on a core 2-3 times slower (a Pi 5's), finding the outlines of a cluttered real photo alone
    # spent the proposal stage's share of the budget, and every proposal was dropped unverified:
    # roboflow's photos at a 200 ms budget (the Pi's 500) kept 0.225 of their cards. The most
    # card-like ones are still verified, LATE_CHUNK at a time while the frame can spare it: 0.823.
    # Here the time is gone before the first outlines are looked at: the cards of that first look
    # are kept (4 of 11; before, none)
    import time

    from hil.scene import random_scene, render
    from vision.detect_quads import find_cards, load_verifier

    frame, truth = render(random_scene(12, deck="tango"), 1280, 720, 12)
    spent = time.thread_time() - 1.0  # the stage's time ran out before it began
    cards, truncated = find_cards(frame, load_verifier(), deadline=spent)
    assert truncated
    whole = [t for t in truth["cards"] if t["visible"] >= 0.99]
    found = sum(
        any(np.hypot(*(np.mean(c.corners, axis=0) - np.mean(t["corners"], axis=0))) < 10 for c in cards)
        for t in whole
    )
    assert len(whole) >= 8
    assert found >= 3, (found, len(whole))
    assert all(c.score >= 0.5 for c in cards)  # verified, not merely proposed
