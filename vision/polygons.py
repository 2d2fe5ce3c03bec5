"""Overlap of convex polygons (card outlines): intersection area, IoU, share of the smaller one.

Why not `cv2.intersectConvexConvex`: for two outlines whose edges nearly coincide -- the same card
found twice, a decoded outline against the one it was taught from -- it can return half the true
intersection (OpenCV 4.x; two copies of a 3,500 px^2 card that differ by 1e-6 px intersected in
1,750 px^2, tests/vision/test_polygons.py), so near-duplicates were not merged and an exact match scored
0.33. Here the first polygon is clipped by each edge of the second (Sutherland-Hodgman), which has no
such case: an edge lying on another keeps its points.
"""

from __future__ import annotations

import numpy as np


def _points(poly) -> list[list[float]]:
    """The polygon's points, counter-clockwise (y down: as the picture shows it, clockwise)."""
    pts = np.asarray(poly, float).reshape(-1, 2).tolist()
    if _signed_area(pts) < 0:
        pts.reverse()
    return pts


def _signed_area(pts) -> float:
    s = 0.0
    x0, y0 = pts[-1]
    for x1, y1 in pts:
        s += x0 * y1 - x1 * y0
        x0, y0 = x1, y1
    return s / 2


def area(poly) -> float:
    """The polygon's area (either winding)."""
    return abs(_signed_area(np.asarray(poly, float).reshape(-1, 2).tolist()))


def _clipped_area(subject: list, clip: list) -> float:
    """Area of `subject` clipped by every edge of `clip` (both convex, counter-clockwise)."""
    if len(subject) < 3 or len(clip) < 3:
        return 0.0
    # most pairs a frame asks about lie apart: their boxes tell at once
    sx = [p[0] for p in subject]
    sy = [p[1] for p in subject]
    cx = [p[0] for p in clip]
    cy = [p[1] for p in clip]
    if max(sx) <= min(cx) or max(cx) <= min(sx) or max(sy) <= min(cy) or max(cy) <= min(sy):
        return 0.0
    ex0, ey0 = clip[-1]
    for ex1, ey1 in clip:
        dx, dy = ex1 - ex0, ey1 - ey0
        out = []
        px, py = subject[-1]
        sp = dx * (py - ey0) - dy * (px - ex0)  # >= 0: on the inner (left) side of the edge
        for qx, qy in subject:
            sq = dx * (qy - ey0) - dy * (qx - ex0)
            if sq >= 0:
                if sp < 0:
                    t = sp / (sp - sq)
                    out.append((px + t * (qx - px), py + t * (qy - py)))
                out.append((qx, qy))
            elif sp >= 0:
                t = sp / (sp - sq)
                out.append((px + t * (qx - px), py + t * (qy - py)))
            px, py, sp = qx, qy, sq
        if len(out) < 3:
            return 0.0
        subject = out
        ex0, ey0 = ex1, ey1
    return abs(_signed_area(subject))


def intersection_area(a, b) -> float:
    """Area common to two convex polygons (N x 2 points each, either winding)."""
    return _clipped_area(_points(a), _points(b))


def iou(a, b) -> float:
    """Intersection over union of two convex polygons; 0 where both are empty."""
    pa, pb = _points(a), _points(b)
    inter = _clipped_area(pa, pb)
    union = abs(_signed_area(pa)) + abs(_signed_area(pb)) - inter
    return inter / union if union > 0 else 0.0


def share_of_smaller(a, b) -> float:
    """Intersection over the smaller of the two areas."""
    pa, pb = _points(a), _points(b)
    small = min(abs(_signed_area(pa)), abs(_signed_area(pb)))
    return _clipped_area(pa, pb) / small if small > 0 else 0.0
