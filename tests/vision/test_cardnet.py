"""The card detector network (vision/cardnet.py): what it is taught decodes back to the cards, the
shipped network finds the cards of a rendered table and of real photos without any network access,
each thread gets its own OpenCV net, a bad weights file is refused by name, and corners a few
pixels off are put back on the card's rim. Training end to end needs torch (the `train` extra)."""

from __future__ import annotations

import socket
import threading

import cv2
import numpy as np
import pytest

from hil.scene import random_scene, render
from vision.cardnet import (
    HEAT,
    WEIGHTS,
    CardNet,
    card_short_side,
    decode,
    merge,
    refine,
)
from vision.cardnet_train import _make_scenes, sample, targets
from vision.polygons import iou as quad_iou


def _truth_quads(truth: dict, min_visible: float = 0.5) -> list[np.ndarray]:
    return [np.array(c["corners"], float) for c in truth["cards"] if c["visible"] >= min_visible]


def _recall(found, truth_quads, iou: float = 0.5) -> float:
    hit = sum(any(quad_iou(f.corners, t) >= iou for f in found) for t in truth_quads)
    return hit / max(1, len(truth_quads))


def _card_quad(centre, long_axis, short_axis, angle_deg, squeeze=1.0):
    """A card's outline: centre +- the long half-axis +- the short one, turned, then the picture's
    rows squeezed (a photo exported to a square)."""
    a = np.radians(angle_deg)
    lv = long_axis * np.array([-np.sin(a), np.cos(a)])
    sv = short_axis * np.array([np.cos(a), np.sin(a)])
    c = np.asarray(centre, float)
    q = np.array([c - sv - lv, c + sv - lv, c + sv + lv, c - sv + lv])
    q[:, 1] = c[1] + (q[:, 1] - c[1]) * squeeze
    return q


def test_the_taught_maps_decode_back_to_the_cards_in_view():
    """What training teaches for a crop, decoded the way the detector decodes the network's output,
    gives back the cards: upright, turned, squeezed, small and big, one partly under another."""
    cards = [
        _card_quad((60, 60), 28, 20, 0),
        _card_quad((180, 70), 35, 25, 30),
        _card_quad((70, 180), 14, 10, 75),  # small
        _card_quad((185, 185), 42, 30, -20, squeeze=0.7),  # a squeezed photo's card
        _card_quad((200, 110), 14, 10, 0),  # partly on top of the turned card
    ]
    cover = np.zeros((256, 256), np.int32)
    for k, q in enumerate(cards):  # later cards lie on top
        cv2.fillConvexPoly(cover, np.round(q).astype(np.int32), k + 1)
    t, w = targets(cards, [1.0] * len(cards), cover, 256)
    assert t.shape == (10, 64, 64) and w.shape == (4, 64, 64)
    maps = t.copy()
    h = np.clip(t[HEAT], 1e-6, 1 - 1e-6)
    maps[HEAT] = np.log(h / (1 - h))  # the decoder applies the sigmoid
    got = merge(decode(maps, 256, 256, peak=0.99))
    assert len(got) == len(cards)
    for q in cards:
        best = max(quad_iou(g.corners, q) for g in got)
        assert best >= 0.85, (q.round(), [g.corners.round() for g in got])
    # and a training crop of a rendered scene has the shapes training expects
    (scene,) = _make_scenes((11, 1, 1))
    x, t, w = sample(scene, np.random.default_rng(3))
    assert x.shape == (3, 256, 256) and t.shape == (10, 64, 64) and w.shape == (4, 64, 64)
    assert t[HEAT].min() >= 0.0 and t[HEAT].max() <= 1.0


def test_shipped_network_finds_the_cards_of_a_rendered_table():
    net = CardNet()
    found_all, total = 0.0, 0
    for seed in (21, 22, 23):  # the project's own renderer, a deck-and-seed mix the network never saw
        frame, truth = render(random_scene(seed, deck="drawn"), 1280, 720, seed)
        quads = _truth_quads(truth)
        found = [c for c in net.find(frame) if c.score >= 0.3]
        found_all += _recall(found, quads) * len(quads)
        total += len(quads)
    assert total > 20
    assert found_all / total >= 0.85, f"{found_all:.0f} of {total}"


def test_one_card_filling_a_photo_is_found_whole():
    """A close-up: the second, coarser level sees the whole card."""
    from hil.scene import load_deck

    card = cv2.resize(load_deck("anglo_poker")["7h"][:, :, :3], (560, 784), interpolation=cv2.INTER_AREA)
    frame = np.full((1000, 800, 3), (60, 90, 140), np.uint8)  # a wooden brown
    frame[108:892, 120:680] = card
    found = [c for c in CardNet().find(frame) if c.score >= 0.3]
    want = np.array([[120, 108], [680, 108], [680, 892], [120, 892]], float)
    assert any(quad_iou(f.corners, want) >= 0.7 for f in found), [f.corners.round() for f in found]


def test_shipped_network_loads_without_network(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("the card network tried to reach the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    assert WEIGHTS.stat().st_size < 2_000_000  # small enough to ship in the package
    net = CardNet()
    maps = net.outputs(np.zeros((96, 128, 3), np.uint8))
    assert maps.shape == (10, 24, 32)


def test_a_bad_weights_file_is_refused_naming_it(tmp_path):
    bad = tmp_path / "cardnet.onnx"
    bad.write_bytes(b"not a network")
    with pytest.raises(ValueError, match=r"cardnet\.onnx"):
        CardNet(bad)


def test_threads_each_get_their_own_net_and_agree():
    frame, _truth = render(random_scene(31, deck="tango"), 960, 540, 31)
    net = CardNet()
    want = sorted(round(c.score, 4) for c in net.find(frame))
    got: list = []

    def run():
        for _ in range(3):
            got.append(sorted(round(c.score, 4) for c in net.find(frame)))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 12 and all(g == want for g in got)


def test_corners_a_few_pixels_off_are_put_back_on_the_rim():
    frame = np.full((400, 400, 3), (40, 110, 35), np.uint8)
    true = np.array([[150.0, 100.0], [250.0, 100.0], [250.0, 240.0], [150.0, 240.0]])
    cv2.fillConvexPoly(frame, (true * 16).astype(np.int32), (235, 235, 235), cv2.LINE_AA, shift=4)
    gray = cv2.cvtColor(cv2.GaussianBlur(frame, (0, 0), 1.0), cv2.COLOR_BGR2GRAY)
    off = true + np.array([[4, -3], [3, 4], [-4, 3], [-3, -4]], float)
    got = refine(gray, off)
    assert np.abs(got - true).max() < 1.5, got
    # a picture with nothing to snap to leaves the corners where they were
    flat = np.full((400, 400), 90, np.uint8)
    assert np.allclose(refine(flat, off), off)
    assert card_short_side(true) == pytest.approx(100.0)


def test_quick_training_writes_a_network_the_detector_loads(tmp_path):
    pytest.importorskip("torch", reason="training the card network needs torch: pip install -e '.[train]'")
    from vision.cardnet_train import train

    out = tmp_path / "cardnet.onnx"
    figures = train(out, scenes=40, steps=40, seed=3, batch=4, quick=True, log=lambda *_: None)
    assert out.is_file() and figures["cards"] > 0
    net = CardNet(out)
    assert net.outputs(np.zeros((64, 64, 3), np.uint8)).shape == (10, 16, 16)
