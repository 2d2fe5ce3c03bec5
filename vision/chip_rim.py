"""A "card" that is a chip's rim insert: a small pale rectangle set into the edge of a round disc.

A casino chip's edge carries inserts (white or coloured blocks) that are card-shaped and card-pale
at a small scale: on real photos of chips alone the detector took them for face-down cards (roboflow's
chip photos, PXL_2023103x). Physically a card is always bigger than a chip (63 x 88 mm against 39-40
mm across), so a "card" set into the rim of a closed, round blob of one colour many times its own
area is not one.

The test, on the picture around the card (shrunk so the card's long side is SCALED_LONG px): flood
fill the colour just outside the card from seeds all round it (the card a wall; Lab with a loose
lightness tolerance for shading and glare, a tight one on colour). A component that reaches the
window's edge is the felt or the table (open); a closed one whose convex hull (with the card) is an
ellipse (hull over fitted ellipse area within ELLIPSE_FIT), filled at least DENSE, at least
DISC_OVER_CARD times the card's area, and with at least RIM_OUTSIDE of the card's surroundings
outside it (the card sits in the disc's rim, not inside a printed circle) is a chip.
"""

from __future__ import annotations

import cv2
import numpy as np

SCALED_LONG = 16.0  # px: the card's long side once the window is shrunk (the test needs no detail)
WINDOW = 4.0  # of the card's long side, each way: a chip around an insert fits (about 3.5 x across)
COLOUR_TOL = (50, 10, 10)  # Lab lightness and colour: one chip's body under shading, not the table
DISC_OVER_CARD = 8.0  # a chip is a quarter of a card's area: a disc this much larger holds no card
ELLIPSE_FIT = (0.9, 1.1)  # the disc's hull area over its fitted ellipse's: a round thing in perspective
DENSE = 0.5  # of the hull: the disc's own colour (its other inserts and marks are the rest)
RIM_OUTSIDE = 0.1  # of the card's close surroundings outside the disc: set in its rim
SEEDS = 12  # directions round the card the colour is sampled in


def in_a_chip_rim(frame: np.ndarray, corners) -> bool:
    """Is the card outlined by `corners` (picture pixels) a chip's rim insert (see the module)?"""
    q = np.asarray(corners, np.float64)
    sides = np.linalg.norm(q - np.roll(q, -1, axis=0), axis=1)
    long_side = float(sides.max())
    if long_side < 2:
        return False
    k = min(1.0, SCALED_LONG / long_side)
    centre = q.mean(axis=0)
    h, w = frame.shape[:2]
    reach = WINDOW * long_side
    x0, y0 = int(max(centre[0] - reach, 0)), int(max(centre[1] - reach, 0))
    x1, y1 = int(min(centre[0] + reach, w)), int(min(centre[1] + reach, h))
    if x1 - x0 < 4 or y1 - y0 < 4:
        return False
    win = frame[y0:y1, x0:x1]
    size = (max(round((x1 - x0) * k), 4), max(round((y1 - y0) * k), 4))
    # (thinned to about twice the size first: a window round a big card is a megapixel)
    thin = max(1, int(0.5 / k))
    small = cv2.resize(win[::thin, ::thin], size, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    sq = (q - [x0, y0]) * [size[0] / (x1 - x0), size[1] / (y1 - y0)]
    card = np.zeros(lab.shape[:2], np.uint8)
    cv2.fillConvexPoly(card, np.round(sq).astype(np.int32), 1)
    card_area = max(int(card.sum()), 1)
    near = cv2.dilate(card, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))) - card
    near_n = max(int(near.sum()), 1)
    seen = np.zeros(lab.shape[:2], bool)
    c = sq.mean(axis=0)
    for a in np.arange(SEEDS) * (2 * np.pi / SEEDS):
        step = np.array([np.cos(a), np.sin(a)])
        x, y = _first_outside(card, c, step)
        if x is None or seen[y, x]:
            continue
        fill = np.zeros((lab.shape[0] + 2, lab.shape[1] + 2), np.uint8)
        fill[1:-1, 1:-1] = card  # the card is a wall
        flags = cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (255 << 8) | 4
        cv2.floodFill(lab, fill, (x, y), 0, COLOUR_TOL, COLOUR_TOL, flags)
        comp = fill[1:-1, 1:-1] == 255
        seen |= comp
        if comp[0].any() or comp[-1].any() or comp[:, 0].any() or comp[:, -1].any():
            continue  # open: the felt or the table
        if _a_disc_with_the_card_in_its_rim(comp, card, card_area, near, near_n):
            return True
    return False


def _first_outside(card: np.ndarray, c: np.ndarray, step: np.ndarray):
    """The pixel one step past the card's edge from its centre along `step`, or (None, None)."""
    h, w = card.shape
    ts = np.arange(0.5, max(h, w), 0.5)
    xs = np.round(c[0] + ts * step[0]).astype(int)
    ys = np.round(c[1] + ts * step[1]).astype(int)
    inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
    xs, ys = xs[inside], ys[inside]
    off = np.flatnonzero(card[ys, xs] == 0)
    k = off[0] + 2 if off.size else len(xs)  # a pixel past the edge
    if k >= len(xs) or card[ys[k], xs[k]]:
        return None, None
    return int(xs[k]), int(ys[k])


def _a_disc_with_the_card_in_its_rim(comp, card, card_area, near, near_n) -> bool:
    pts = np.column_stack(np.nonzero(comp | (card > 0)))[:, ::-1].astype(np.int32)
    hull = cv2.convexHull(pts)
    hull_area = cv2.contourArea(hull)
    if hull_area < DISC_OVER_CARD * card_area or len(hull) < 5:
        return False
    (_ex, _ey), (ea, eb), _angle = cv2.fitEllipse(hull)
    fit = hull_area / max(np.pi * ea * eb / 4, 1e-9)
    if not ELLIPSE_FIT[0] <= fit <= ELLIPSE_FIT[1] or comp.sum() < DENSE * hull_area:
        return False
    disc = np.zeros(comp.shape, np.uint8)
    cv2.fillConvexPoly(disc, cv2.convexHull(np.column_stack(np.nonzero(comp))[:, ::-1].astype(np.int32)), 1)
    return float((near & (1 - disc)).sum()) / near_n >= RIM_OUTSIDE
