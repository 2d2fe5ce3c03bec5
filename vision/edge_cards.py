"""A card cut by the picture's edge: its whole outline, from the part in view and the deck's size.

Why: a photo, or a camera framed short of the table's rim, cuts the cards lying at its edge. Their
outline in view is not card-shaped (a card 0.4 of its length long), so no proposal of
`vision.detect_quads` is one and the verifier, taught whole cards, never sees them; on roboflow's
photos they were about half of the cards missed. What is in view still fixes the card: the
sides that do not run along the picture's edge give its direction, the ends of the outline away
from the edge give where it starts, and the cards the detector is sure of elsewhere in the picture
give how far it reaches. The outline is only a candidate: `vision.detect` keeps it where the reader
reads a corner index in the part in view, surely (a readable index is a card's own mark; a patch of
wood or a sleeve reaching into the picture has none).

Geometry only, in the caller's pixels: no picture is looked at here.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.polygons import area as polygon_area
from vision.polygons import intersection_area

ON_EDGE = 1.5  # px: a point this close to the picture's border lies on it
ALONG_EDGE = 4.0  # px: a side of the outline with both ends this close to one border runs along it
SIZE_SPAN = (0.5, 2.0)  # a side wholly in view over the deck's: perspective never halves nor doubles a card
LONGER_BY = 0.15  # the part in view of a side may be this much longer than the card's (a rough outline)
MIN_IN_VIEW = 0.2  # of the card's area: a corner index (rank and suit) takes the first fifth of its length
MIN_FILL = 0.85  # the outline covers this share of the candidate's part in view (it is card-shaped)


def touches_border(contour: np.ndarray, size: tuple[int, int]) -> bool:
    """Whether an outline (N x 1 x 2 or N x 2 points) reaches the border of a (width, height) picture."""
    x, y, w, h = cv2.boundingRect(np.asarray(contour, np.int32).reshape(-1, 1, 2))
    return x <= 0 or y <= 0 or x + w >= size[0] or y + h >= size[1]


def _on_border(p: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    w, h = size
    return (
        (p[:, 0] <= ON_EDGE)
        | (p[:, 1] <= ON_EDGE)
        | (p[:, 0] >= w - 1 - ON_EDGE)
        | (p[:, 1] >= h - 1 - ON_EDGE)
    )


def _direction(hull: np.ndarray, size: tuple[int, int]) -> np.ndarray | None:
    """Unit direction of the longest side of the outline that does not run along the border."""
    h32 = hull.astype(np.float32).reshape(-1, 1, 2)
    peri = cv2.arcLength(h32, True)
    poly = cv2.approxPolyDP(h32, max(1.0, 0.02 * peri), True).reshape(-1, 2).astype(np.float64)
    w, h = size
    # distance of each corner to the left, top, right and bottom borders
    gap = np.stack([poly[:, 0], poly[:, 1], w - 1 - poly[:, 0], h - 1 - poly[:, 1]], axis=1)
    best, best_len = None, 0.0
    for i in range(len(poly)):
        j = (i + 1) % len(poly)
        if bool(((gap[i] <= ALONG_EDGE) & (gap[j] <= ALONG_EDGE)).any()):
            continue  # the cut: the picture's edge, not the card's (a corner of the card a pixel
            # or two inside the picture still ends it)
        d = poly[j] - poly[i]
        n = math.hypot(float(d[0]), float(d[1]))
        if n > best_len:
            best, best_len = d / n, n
    return best


def _ends(t: np.ndarray, border: np.ndarray, tol: float) -> tuple[float, float, bool, bool]:
    """The outline's extent along one of the card's axes (its hull's projections `t`) and whether
    each end is the picture's edge: no hull point off the border lies at that end. (A card's own
    side in view puts a point off the border there, even where the side runs into the edge; a cut
    end is the border alone.)"""
    lo, hi = float(t.min()), float(t.max())
    own = ~border
    return lo, hi, not bool(own[t <= lo + tol].any()), not bool(own[t >= hi - tol].any())


def _fits(seen: float, full: float, cut: bool) -> bool:
    """Whether an extent in view fits a card's side `full` long: no longer (give or take a rough
    outline), and where not cut, about as long."""
    if seen > full * (1.0 + LONGER_BY):
        return False
    return cut or seen * (1.0 + LONGER_BY) >= full


def _reach(lo: float, hi: float, lo_cut: bool, hi_cut: bool, full: float) -> tuple[float, float]:
    """The card's extent along an axis cut at one end: `full` from the end that is its own."""
    full = max(full, hi - lo)
    return (hi - full, hi) if lo_cut else (lo, lo + full) if hi_cut else (lo, hi)


def card_beyond_edge(
    contour: np.ndarray, size: tuple[int, int], width: float, length: float
) -> list[np.ndarray]:
    """Candidate whole outlines (4 x 2) of a card whose part in view is `contour`, in a (width,
    height) picture `size`, for a deck `width` x `length` px here: none, one, or one for each way
    the card may lie (a square-ish part in view fits either). The corners go round the card, in no
    set order (`vision.detect_quads.order_corners` gives one).

    A side wholly in view is this card's own size (perspective makes cards near the camera bigger
    than the deck's median), and the deck's shape gives the other; a card cut across a corner
    (both its directions reach the edge) takes the deck's size. A card with one corner beyond the
    edge and its ends all in view is fixed by what is seen (its outline in view has five sides, so
    no proposal of the card stage was one)."""
    pts = np.asarray(contour, np.float64).reshape(-1, 2)
    if len(pts) < 3:
        return []
    hull = cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2).astype(np.float64)
    border = _on_border(hull, size)
    if not border.any() or not (~border).any():
        return []
    d = _direction(hull, size)
    if d is None:
        return []
    n = np.array([-d[1], d[0]])
    tol = 1.0 + 0.01 * max(width, length)
    u0, u1, u0_cut, u1_cut = _ends(hull @ d, border, tol)
    v0, v1, v0_cut, v1_cut = _ends(hull @ n, border, tol)
    cut_u, cut_v = u0_cut or u1_cut, v0_cut or v1_cut
    if (u0_cut and u1_cut) or (v0_cut and v1_cut):
        return []  # cut at both ends: nothing fixes where the card lies
    w, h = size
    picture = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    seen_area = abs(polygon_area(hull))
    out: list[tuple[float, np.ndarray]] = []
    for along, across in ((width, length), (length, width)):  # the deck's size along d and along n
        if not cut_u:
            k = (u1 - u0) / along  # this card's scale, from its side in view
        elif not cut_v:
            k = (v1 - v0) / across
        else:
            k = 1.0
        if not SIZE_SPAN[0] <= k <= SIZE_SPAN[1]:
            continue
        full_u, full_v = k * along, k * across
        if not (_fits(u1 - u0, full_u, cut_u) and _fits(v1 - v0, full_v, cut_v)):
            continue  # the other way round, or no card
        su = _reach(u0, u1, u0_cut, u1_cut, full_u)
        sv = _reach(v0, v1, v0_cut, v1_cut, full_v)
        q = np.array(
            [su[0] * d + sv[0] * n, su[1] * d + sv[0] * n, su[1] * d + sv[1] * n, su[0] * d + sv[1] * n]
        )
        in_view = intersection_area(q, picture)
        if in_view < MIN_IN_VIEW * abs(polygon_area(q)):
            continue
        if intersection_area(q, hull) < MIN_FILL * in_view or seen_area > in_view / MIN_FILL:
            continue  # the outline is not the card's part in view (more, or another shape)
        out.append((abs(math.log(k)), q))
    # both ways fit: the one nearer the deck's size first (the caller reads them in this order and
    # keeps the first read surely; read the other way first, a drawn 8h cut by the edge, 1.4 times
    # its neighbours' size lying sideways, was a Th at 0.93)
    return [q for _off, q in sorted(out, key=lambda e: e[0])]
