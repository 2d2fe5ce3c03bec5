"""Card proposals from straight edges: two long, nearly parallel sides a card's width apart.

Why: the outline cues of `vision.detect_quads` need a card's whole outline to come out as one closed
region. On a real photo it often does not: a shadow across the card splits it in two, a white card
on pale paper or a counter has no region of its own, the print of a face card touches its border.
The card's long sides still show as straight edges. Line segments (OpenCV's LSD) are cheap on a
small picture; collinear pieces of one side are joined, and every pair of nearly parallel sides
whose distance and common extent make a card's shape (either way round, any squeeze a photo
export gives: `detect_quads.ASPECT`) proposes the quadrilateral between them. Nothing is decided
here: the verifier judges these like every other proposal.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

LINE_LONG = 640  # segments are looked for on a picture at most this long (work px are finer)
MIN_SEGMENT = 0.04  # of the picture's long side: shorter segments are print, not a card's side
LSD_SCALE = 0.5
MAX_SEGMENTS = 60  # the longest this many take part in pairs
JOIN_ANGLE = math.radians(4)  # pieces of one side: this parallel,
JOIN_OFFSET = 2.5  # ... this far off each other's line (px),
JOIN_GAP = 0.15  # ... with a gap at most this share of their joined length
PAIR_ANGLE = math.radians(14)  # opposite sides of a card photographed at a slant still meet this
MIN_COVER = 0.6  # each side covers this share of the pair's common extent
MIN_SUPPORT = 0.7  # the two together cover this share of both sides
MAX_LINE_QUADS = 60
CORNER_SHARE = 0.055  # a card's corner radius over its width (3.5 mm of 63)
CORNER_ANGLE = 20  # degrees: two sides meeting at a corner are this near square (a slanted camera)
CORNER_GAP = 0.2  # of a side's segment: how far short of the corner it may end (its rounding, a glare)
CORNER_SUPPORT = 0.9  # a corner's two sides count for this much of a pair of opposite sides


def _detector():
    # LSD looking at half resolution: a fifth of the time, and a card's sides are long anyway. A
    # new one per picture (0.3 us): one shared by the service's detector threads corrupted memory
    return cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD, LSD_SCALE)


def _segments(gray: np.ndarray, long_side: float | None = None) -> np.ndarray:
    """LSD segments as rows (x0, y0, x1, y1), longest first; shorter than MIN_SEGMENT of the
    picture's long side (`long_side`, where `gray` is a part of it) left out."""
    lines = _detector().detect(gray)[0]
    if lines is None:
        return np.zeros((0, 4), np.float32)
    seg = lines.reshape(-1, 4)
    length = np.hypot(seg[:, 2] - seg[:, 0], seg[:, 3] - seg[:, 1])
    keep = length >= MIN_SEGMENT * (long_side or max(gray.shape))
    seg, length = seg[keep], length[keep]
    return seg[np.argsort(-length)]


def _joined(seg: np.ndarray) -> np.ndarray:
    """Collinear pieces of one edge (split by a glare spot or a rounded corner) as one segment.
    Plain floats: a few hundred tiny numpy operations cost more than the segments' detection."""
    out: list[list[float]] = []  # x0, y0, x1, y1, ux, uy, length
    sin_join = math.sin(JOIN_ANGLE)
    for ax, ay, bx, by in seg.tolist():
        for t in out:
            px, py, _qx, _qy, ux, uy, ln = t
            nx, ny = -uy, ux
            sx, sy = bx - ax, by - ay
            if abs(nx * sx + ny * sy) > sin_join * math.hypot(sx, sy):
                continue
            if max(abs(nx * (ax - px) + ny * (ay - py)), abs(nx * (bx - px) + ny * (by - py))) > JOIN_OFFSET:
                continue
            ta, tb = ux * (ax - px) + uy * (ay - py), ux * (bx - px) + uy * (by - py)
            lo, hi = min(ta, tb), max(ta, tb)
            new_lo, new_hi = min(0.0, lo), max(ln, hi)
            if max(0.0, lo - ln, -hi) > JOIN_GAP * (new_hi - new_lo):
                continue
            t[:] = [
                px + ux * new_lo,
                py + uy * new_lo,
                px + ux * new_hi,
                py + uy * new_hi,
                ux,
                uy,
                new_hi - new_lo,
            ]
            break
        else:
            ln = math.hypot(bx - ax, by - ay)
            out.append([ax, ay, bx, by, (bx - ax) / ln, (by - ay) / ln, ln])
    return np.array([t[:4] for t in out], np.float64).reshape(-1, 4)


def _ends_and_directions(seg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Rows (x0, y0, x1, y1) as their start points, end points, lengths and unit directions."""
    p, q = seg[:, :2], seg[:, 2:]
    d = q - p
    length = np.hypot(d[:, 0], d[:, 1])
    return p, q, length, d / length[:, None]


def line_quads(
    work: np.ndarray,
    aspect: tuple[float, float],
    min_short: float,
    window: tuple[int, int, int, int] | None = None,
) -> list[tuple[np.ndarray, float, str]]:
    """(quad in work px, support, cue) for every card-shaped pair of sides (cue "lines"; support is
    the share of the two sides the segments cover, 1: both whole) and every corner two sides no
    pair explains make (cue "corner", `_corner_quads`). With `window` (x0, y0, x1, y1, work px), only
    the sides in that part, judged at the whole picture's scale."""
    h, w = work.shape[:2]
    f = min(1.0, LINE_LONG / max(h, w))
    x0, y0, x1, y1 = window if window is not None else (0, 0, w, h)
    gray = cv2.cvtColor(work[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY) if work.ndim == 3 else work[y0:y1, x0:x1]
    if f < 1.0:
        gray = cv2.resize(
            gray, (max(1, round((x1 - x0) * f)), max(1, round((y1 - y0) * f))), interpolation=cv2.INTER_AREA
        )
    seg = _joined(_segments(gray, max(h, w) * f))[:MAX_SEGMENTS]
    if len(seg):
        seg[:, :4] += np.array([x0, y0, x0, y0], np.float32) * f
    if len(seg) < 2:
        return []
    p, q, _length, u = _ends_and_directions(seg)
    ang = np.arctan2(u[:, 1], u[:, 0]) % math.pi
    mid = (p + q) / 2
    i_idx, j_idx = np.triu_indices(len(seg), 1)
    da = np.abs(ang[i_idx] - ang[j_idx])
    da = np.minimum(da, math.pi - da)
    i_idx, j_idx = i_idx[da < PAIR_ANGLE], j_idx[da < PAIR_ANGLE]
    ui = u[i_idx]
    uj = u[j_idx] * np.sign(np.sum(ui * u[j_idx], axis=1, keepdims=True) + 1e-9)
    axis = ui + uj
    axis /= np.hypot(axis[:, 0], axis[:, 1])[:, None]
    normal = np.stack([-axis[:, 1], axis[:, 0]], axis=1)

    def along(pts):
        return np.sum(axis * pts, axis=1)

    dist = np.abs(np.sum(normal * (mid[j_idx] - mid[i_idx]), axis=1))
    ti = np.sort(np.stack([along(p[i_idx]), along(q[i_idx])], axis=1), axis=1)
    tj = np.sort(np.stack([along(p[j_idx]), along(q[j_idx])], axis=1), axis=1)
    t0, t1 = np.minimum(ti[:, 0], tj[:, 0]), np.maximum(ti[:, 1], tj[:, 1])
    ext = np.maximum(t1 - t0, 1e-6)
    short, long_ = np.minimum(dist, ext), np.maximum(dist, ext)
    cover_i, cover_j = (ti[:, 1] - ti[:, 0]) / ext, (tj[:, 1] - tj[:, 0]) / ext
    support = (cover_i + cover_j) / 2
    ok = (
        (short >= min_short * f)
        & (short / long_ >= aspect[0])
        & (short / long_ <= aspect[1])
        & (np.minimum(cover_i, cover_j) >= MIN_COVER)
        & (support >= MIN_SUPPORT)
    )
    # a card's straight sides end where its rounded corners begin: the outline goes on that far
    reach = CORNER_SHARE * short
    t0, t1 = t0 - reach, t1 + reach
    out: list[tuple[np.ndarray, float, str]] = []
    for k in np.flatnonzero(ok):
        corners = []
        for side, uk, ts in ((i_idx[k], ui[k], (t0[k], t1[k])), (j_idx[k], uj[k], (t1[k], t0[k]))):
            cos = float(np.dot(axis[k], uk))
            c = float(np.dot(axis[k], mid[side]))
            corners += [mid[side] + uk * (t - c) / cos for t in ts]  # side's point over axis position t
        quad = np.array(corners, np.float32) / f
        if cv2.contourArea(quad) >= 1.0 and cv2.isContourConvex(quad.reshape(-1, 1, 2)):
            out.append((quad, float(support[k]), "lines"))
    paired = np.zeros(len(seg), bool)
    paired[i_idx[ok]] = paired[j_idx[ok]] = True
    out += _corner_quads(seg[~paired], aspect, min_short * f, f)
    out.sort(key=lambda e: -e[1])
    return out[:MAX_LINE_QUADS]


def _corner_quads(
    seg: np.ndarray, aspect: tuple[float, float], min_short: float, f: float
) -> list[tuple[np.ndarray, float, str]]:
    """(quad in work px, support, "corner") for every two sides meeting at a corner, nearly square, each as
    long as a card's side and the two in a card's proportion: the card is the parallelogram on
    them. Where a shadow across a card leaves one long side too faint for a pair (foltys test46:
    the left side's lower half in the shadow as grey as the table's), its other long side and an
    end still meet at a corner. `seg`: only the sides no opposite side made a card with (the sides
    of a found card and of the frame printed round a court's picture meet at corners that would
    cut the card into pieces). Support is the share of both sides the segments cover, times
    CORNER_SUPPORT (two sides are weaker evidence than two opposite ones)."""
    if len(seg) < 2:
        return []
    p, q, length, u = _ends_and_directions(seg)
    i_idx, j_idx = np.triu_indices(len(seg), 1)
    cross = u[i_idx, 0] * u[j_idx, 1] - u[i_idx, 1] * u[j_idx, 0]
    near_square = np.abs(cross) >= math.cos(math.radians(90 - CORNER_ANGLE))
    i_idx, j_idx, cross = i_idx[near_square], j_idx[near_square], cross[near_square]
    # where the two lines cross: p_i + s u_i = p_j + t u_j
    w = p[j_idx] - p[i_idx]
    s_i = (w[:, 0] * u[j_idx, 1] - w[:, 1] * u[j_idx, 0]) / cross
    corner = p[i_idx] + s_i[:, None] * u[i_idx]
    out: list[tuple[np.ndarray, float, str]] = []
    for k in range(len(i_idx)):
        sides, ends = [], []
        for side in (i_idx[k], j_idx[k]):
            a, b = p[side], q[side]
            da, db = float(np.hypot(*(a - corner[k]))), float(np.hypot(*(b - corner[k])))
            near, far, gap = (a, b, da) if da <= db else (b, a, db)
            if gap > CORNER_GAP * length[side] + 3.0 or np.dot(far - corner[k], near - corner[k]) < 0:
                break  # the side does not end at the corner (a cross, a T, a far-off line)
            sides.append(far - corner[k])
            ends.append(length[side])
        else:
            la, lb = (float(np.hypot(*v)) for v in sides)
            short, long_ = min(la, lb), max(la, lb)
            if short < min_short or not aspect[0] <= short / long_ <= aspect[1]:
                continue
            # the far corners are rounded too: the sides go on past their segments' ends
            grow = [1.0 + CORNER_SHARE * short / ln for ln in (la, lb)]
            va, vb = sides[0] * grow[0], sides[1] * grow[1]
            quad = np.array([corner[k], corner[k] + va, corner[k] + va + vb, corner[k] + vb], np.float32) / f
            support = CORNER_SUPPORT * (ends[0] / (la * grow[0]) + ends[1] / (lb * grow[1])) / 2
            if support >= MIN_SUPPORT * CORNER_SUPPORT and cv2.isContourConvex(quad.reshape(-1, 1, 2)):
                out.append((quad, float(support), "corner"))
    return out
