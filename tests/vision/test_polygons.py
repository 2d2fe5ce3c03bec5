"""Card-outline overlap (vision/polygons.py): exact on the cases the detector meets, including the one
OpenCV's intersectConvexConvex gets wrong (edges that nearly coincide)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.polygons import area, intersection_area, iou, share_of_smaller


def _card(cx, cy, long_half, short_half, deg):
    a = np.radians(deg)
    lv = long_half * np.array([-np.sin(a), np.cos(a)])
    sv = short_half * np.array([np.cos(a), np.sin(a)])
    c = np.array([cx, cy], float)
    return np.array([c - sv - lv, c + sv - lv, c + sv + lv, c - sv + lv])


def test_the_same_card_found_twice_a_hair_apart_overlaps_whole():
    q = _card(180, 70, 35, 25, 30)
    twin = q + np.array([[1e-6, -3e-6], [2e-6, 0], [-1e-6, 2e-6], [0, 1e-6]])
    assert area(q) == pytest.approx(3500.0)
    assert intersection_area(q, twin) == pytest.approx(3500.0, abs=1e-3)
    assert iou(q, twin) == pytest.approx(1.0, abs=1e-6)
    # (OpenCV 4.x's intersectConvexConvex gives 1750 for this pair: the reason this module exists)


def test_overlaps_of_known_size():
    a = np.array([[0, 0], [10, 0], [10, 10], [0, 10]], float)
    shifted = a + np.array([5, 0])
    assert intersection_area(a, shifted) == pytest.approx(50.0)
    assert iou(a, shifted) == pytest.approx(50 / 150)
    assert intersection_area(a, a[::-1]) == pytest.approx(100.0)  # either winding
    inside = np.array([[2, 2], [4, 2], [4, 4], [2, 4]], float)
    assert share_of_smaller(a, inside) == pytest.approx(1.0)
    apart = a + np.array([20, 0])
    assert intersection_area(a, apart) == 0.0 and iou(a, apart) == 0.0
    touching = a + np.array([10, 0])  # sharing an edge only
    assert intersection_area(a, touching) == pytest.approx(0.0, abs=1e-9)
    diamond = np.array([[5, -2], [12, 5], [5, 12], [-2, 5]], float)  # a square turned 45 degrees
    assert intersection_area(a, diamond) == pytest.approx(100 - 4 * 0.5 * 3 * 3)


def test_random_convex_pairs_agree_with_a_pixel_count():
    rng = np.random.default_rng(4)
    for _ in range(20):
        p = _card(*rng.uniform(60, 140, 2), *sorted(rng.uniform(10, 40, 2))[::-1], rng.uniform(0, 180))
        q = _card(*rng.uniform(60, 140, 2), *sorted(rng.uniform(10, 40, 2))[::-1], rng.uniform(0, 180))
        scale = 8  # count pixels at 8x for a close estimate
        ma = np.zeros((200 * scale, 200 * scale), np.uint8)
        mb = np.zeros_like(ma)
        cv2.fillConvexPoly(ma, np.round(p * scale).astype(np.int32), 1)
        cv2.fillConvexPoly(mb, np.round(q * scale).astype(np.int32), 1)
        counted = float((ma & mb).sum()) / scale**2
        assert intersection_area(p, q) == pytest.approx(counted, abs=0.02 * area(p) + 2)
