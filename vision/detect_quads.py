"""Cards on any background: quadrilateral proposals from a few classical cues, kept or dropped by a
small learned verifier.

Why: the felt model of `vision.detect` needs a table that is one colour; a photo of a card on wood,
carpet, a bed or a white counter has none. Here nothing is assumed about the background or the card
size. Outlines come from three cues, each cheap on a picture at most 960 px wide: brighter than the
neighbourhood (white paper on anything darker), Otsu's split (a card against a plain surface, light
or dark) and closed Canny outlines (a white card on a pale table still has an edge). Every outline
that is nearly a rectangle of a card's shape (either way round; a stretched photo changes the
ratio) proposes a quadrilateral. The verifier (`QuadVerifier`, weights `quad_verifier.npz`, made
by `python -m vision.train --real` from synthetic composites and the real photos, see
`vision.train_real` for the leave-one-source-out folds) sees each proposal warped upright with
a margin around it (HOG of the grey picture plus paper/contrast statistics) and says how likely it
is a whole card. Nested and overlapping proposals keep the most likely one.

Bounded: the picture is shrunk to a pixel budget before anything else, the number of proposals
verified is capped, and a deadline (in this thread's CPU seconds, `time.thread_time`) is checked
between the stages; when it passes, what was found so far is returned with `truncated` set.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.edge_cards import touches_border
from vision.line_quads import line_quads
from vision.polygons import area as polygon_area
from vision.polygons import share_of_smaller

WEIGHTS = Path(__file__).with_name("quad_verifier.npz")
WORK_LONG = 960  # proposals are looked for on a picture at most this long
MAX_PROPOSALS = 160  # verified per frame at most (the most card-like first)
LATE_CHUNK = 16  # ... verified this many at a time where the proposals alone spent the stage's time
MIN_SHORT = 9.0  # work px: a card narrower than this cannot be told from a scrap of paper
# short/long side: 0.71 for a card seen square on. A photo squeezed to a square (4:3 -> 1:1, as
# dataset exports do) turns that into 0.71/0.75 = 0.95 or 0.71*0.75 = 0.53, and a camera 45 degrees
# off square shortens one side to 0.71 of it: 0.53*0.71 = 0.38, so 0.36 .. 1.0 (any rectangle) is
# geometry, not a fit (0.4, "a further quarter", missed the far row of roboflow IMG_3321's squeezed
# photo, 0.39). The verifier sees every proposal warped to a card's shape and decides.
ASPECT = (0.36, 1.0)
# ... for a quadrilateral between straight lines where no outline closed (line_quads), weaker
# evidence: a strip of counter beside a card, 0.35, was vouched for at 0.82 (roboflow IMG_5918)
LINE_ASPECT = (0.4, 1.0)
EDGE_MIN_AREA = (
    0.3 * MIN_SHORT * MIN_SHORT / 0.71
)  # work px: an outline at the border this big may be part of a card
MIN_FILL = 0.72  # contour area over its min-area rectangle
MIN_HULL_FILL = 0.9  # convex hull's area over it: a card's is ~0.98, two touching discs' 0.89
PATCH_W, PATCH_H = 32, 48  # verifier's view of a proposal (portrait), margin included
MARGIN = 0.12  # of the card size, seen around the proposal
ACCEPT = 0.5
CORNER_ACCEPT = 0.95  # ... and for a card proposed by two sides meeting at a corner alone (line_quads)
FRAME_AREA = (0.3, 0.8)  # a rectangle printed on a card's face: this share of the card's area ...
FRAME_MARGIN = 0.04  # ... clear of each side by this share of the card's width (see printed_frame_of)
PAPER_DROP = (20.0, 0.12)  # grey levels (or this share of the paper's) below the paper: still paper
PAPER_RING = 0.5  # ... and most of the margin along each side of a printed frame is paper
PRINT_SHARE = 0.05  # of a card's area: a pip or index inside it is smaller (a card on a sheet of A4 is 0.09)
LIGHTER_BY = 40.0  # grey levels: a card lying inside a card-shaped outline is this much lighter than round it
MIN_SOLID = 0.93  # contour area over its hull's, for a slanted card
MIN_SLANT_COVER = 0.95  # a slanted card's four corners cover its hull: area ratio
MAX_SLANT_COS = 0.5  # corners of a slanted card stay within 60-120 degrees
ROUND = 0.72  # contour area over its enclosing circle's: above this it is a disc (chip, button)
# a tracked table looks again only where the picture changed: averaged over CHANGE_CELL-px cells of the
# work picture, a cell whose mean moved by more than CHANGE_LEVEL grey levels in a channel has
# changed (sensor noise averages away over a cell; a card dealt changes its cells by its contrast)
CHANGE_CELL = 10
CHANGE_LEVEL = 12.0
WINDOW_SHARE = 0.6  # a search window this share of the picture or more: the whole picture is looked at


@dataclass
class Quad:
    corners: np.ndarray  # 4x2 float, full-frame px
    score: float  # verifier's probability it is a whole card
    cue: str


def work_picture(frame: np.ndarray, long_side: int = WORK_LONG) -> tuple[np.ndarray, float]:
    """The frame shrunk so its long side is at most `long_side` (a stride first for huge frames, so
    the cost stays bounded whatever the input size), and the scale work/full."""
    h, w = frame.shape[:2]
    scale = 1.0
    step = max(1, int(max(h, w) // (2 * long_side)))
    if step > 1:  # a cheap stride first: a 12 Mpx photo never gets an expensive resize
        frame = frame[::step, ::step]
        scale = 1.0 / step
    h2, w2 = frame.shape[:2]
    if max(h2, w2) > long_side:
        f = long_side / max(h2, w2)
        frame = cv2.resize(
            frame, (max(1, round(w2 * f)), max(1, round(h2 * f))), interpolation=cv2.INTER_AREA
        )
        scale *= frame.shape[1] / w2
    return np.ascontiguousarray(frame), scale


def _median_u8(img: np.ndarray) -> float:
    """np.median of an 8-bit picture from its histogram (a sort of half a million pixels is 4 ms)."""
    c = np.cumsum(cv2.calcHist([img], [0], None, [256], [0, 256]).ravel().astype(np.int64))
    n = img.size
    lo = int(np.searchsorted(c, (n - 1) // 2 + 1))  # the value at sorted position (n - 1) // 2
    hi = int(np.searchsorted(c, n // 2 + 1))  # ... and at n // 2: their mean, as np.median
    return (lo + hi) / 2


def _cue_masks(work: np.ndarray, window: tuple[int, int, int, int] | None = None):
    """(cue, mask, contour mode) of each way a card's outline can stand out. With `window` (x0, y0,
    x1, y1, work px), the masks of that part only, with the picture's own thresholds (its Otsu
    levels, its median, the surface round the window): what a tracked table looks at where it changed."""
    gray = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
    h, w = gray.shape
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    k3 = np.ones((3, 3), np.uint8)
    block = max(15, (min(h, w) // 4) | 1)
    x0, y0, x1, y1 = window if window is not None else (0, 0, w, h)
    _, otsu = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    med = _median_u8(blur)
    # unlike the surface round it (brighter, darker or another colour): a coarse median is the surface
    cells = cv2.resize(work, (max(8, w // 24), max(8, h // 24)), interpolation=cv2.INTER_AREA)
    surface = cv2.resize(cv2.medianBlur(cells, 5), (w, h), interpolation=cv2.INTER_LINEAR)
    if window is not None:
        blur, otsu, surface = blur[y0:y1, x0:x1], otsu[y0:y1, x0:x1], surface[y0:y1, x0:x1]
        work = work[y0:y1, x0:x1]
    bright = cv2.adaptiveThreshold(blur, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, block, -12)
    yield "bright", cv2.morphologyEx(bright, cv2.MORPH_OPEN, k3), cv2.RETR_EXTERNAL
    yield "otsu", cv2.morphologyEx(otsu, cv2.MORPH_OPEN, k3), cv2.RETR_EXTERNAL
    yield "otsu_dark", cv2.morphologyEx(cv2.bitwise_not(otsu), cv2.MORPH_OPEN, k3), cv2.RETR_EXTERNAL
    b, g, r = cv2.split(cv2.absdiff(cv2.GaussianBlur(work, (5, 5), 0), surface))
    diff = cv2.max(cv2.max(b, g), r)
    _, unlike = cv2.threshold(diff, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    unlike = cv2.morphologyEx(unlike, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    yield "unlike", unlike, cv2.RETR_EXTERNAL
    for lo, hi, grow in ((max(10.0, 0.5 * med), max(30.0, 1.2 * med), 1), (8.0, 24.0, 2)):
        edges = cv2.dilate(cv2.Canny(blur, lo, hi), k3, iterations=grow)
        yield "edges", edges, cv2.RETR_LIST


def search_window(
    shape: tuple[int, ...], region: tuple[int, int, int, int] | None, also=()
) -> tuple[int, int, int, int] | None:
    """The part of the work picture a tracked frame's proposals are looked for in: the changed
    `region` and the boxes `also` (the cards found a frame ago that reach into it, so each is seen
    whole again), grown by half the adaptive threshold's block (so its masks there are those of the
    whole picture). None (the whole picture) where that is most of it anyway."""
    if region is None:
        return None
    h, w = shape[:2]
    boxes = [region, *also]
    margin = max(15, (min(h, w) // 4) | 1) // 2 + 4
    x0 = max(min(b[0] for b in boxes) - margin, 0)
    y0 = max(min(b[1] for b in boxes) - margin, 0)
    x1 = min(max(b[2] for b in boxes) + margin, w)
    y1 = min(max(b[3] for b in boxes) + margin, h)
    if x1 <= x0 or y1 <= y0 or (x1 - x0) * (y1 - y0) > WINDOW_SHARE * w * h:
        return None
    return int(x0), int(y0), int(x1), int(y1)


def _quad_of(contour: np.ndarray, img_area: float):
    """The card-shaped quadrilateral an outline is, or None."""
    area = cv2.contourArea(contour)
    if area < MIN_SHORT * MIN_SHORT / ASPECT[1] or area > 0.92 * img_area:
        return None
    (cx, cy), (rw, rh), ang = cv2.minAreaRect(contour)
    short, long_ = min(rw, rh), max(rw, rh)
    if short < MIN_SHORT or not (ASPECT[0] <= short / long_ <= ASPECT[1]):
        return None
    _, radius = cv2.minEnclosingCircle(contour)
    if area / (np.pi * radius * radius) > ROUND:
        return None  # a chip or the button: a card fills 0.6 of its enclosing circle
    hull = cv2.convexHull(contour)
    if area / (rw * rh) < MIN_FILL or cv2.contourArea(hull) < MIN_HULL_FILL * rw * rh:
        # not a rectangle; a card photographed at a slant is a trapezoid, which fills its min-area
        # rectangle only ~0.85: judged against its own four corners instead
        q = _slanted_quad(hull, area)
        return None if q is None else (order_corners(q), area / cv2.contourArea(q))
    approx = cv2.approxPolyDP(hull, 0.04 * cv2.arcLength(hull, True), True).reshape(-1, 2)
    if len(approx) == 4 and cv2.isContourConvex(approx.reshape(-1, 1, 2)):
        q = approx.astype(np.float32)
        if cv2.contourArea(q) < 0.85 * rw * rh:
            q = cv2.boxPoints(((cx, cy), (rw, rh), ang))
    else:
        q = cv2.boxPoints(((cx, cy), (rw, rh), ang))
    return order_corners(np.asarray(q, np.float32)), area / (rw * rh)


def _slanted_quad(hull: np.ndarray, area: float) -> np.ndarray | None:
    """The four corners of a convex outline that is a card seen at a slant, or None: the hull must
    reduce to four corners that cover it (rounded ends of touching chips do not), the outline must
    fill them, and no corner may be sharper than a tilted camera makes a right angle."""
    hull_area = cv2.contourArea(hull)
    if hull_area <= 0 or area < MIN_SOLID * hull_area:
        return None  # ragged or hollow: a card's outline is its own hull but for a pip at the rim
    perimeter = cv2.arcLength(hull, True)
    for eps in (0.02, 0.03, 0.045, 0.065):
        q = cv2.approxPolyDP(hull, eps * perimeter, True).reshape(-1, 2).astype(np.float32)
        if len(q) <= 4:
            break
    if len(q) != 4 or cv2.contourArea(q) < 0.85 * hull_area:
        return None  # more than four sides, or rounded: the corners a card's rounding cuts are small
    q = _straight_sides(_densified(hull.reshape(-1, 2).astype(np.float32)), q, max(2.0, 0.01 * perimeter))
    if q is None or not cv2.isContourConvex(q.reshape(-1, 1, 2)):
        return None
    q_area = cv2.contourArea(q)
    if q_area <= 0 or q_area < MIN_SLANT_COVER * hull_area or area < MIN_FILL * q_area:
        return None
    sides = np.roll(q, -1, axis=0) - q
    for i in range(4):
        a, b = -sides[i - 1], sides[i]
        cos = float(a @ b) / max(float(np.linalg.norm(a) * np.linalg.norm(b)), 1e-6)
        if abs(cos) > MAX_SLANT_COS:
            return None
    lengths = np.linalg.norm(sides, axis=1)
    short, long_ = (lengths[0] + lengths[2]) / 2, (lengths[1] + lengths[3]) / 2
    short, long_ = min(short, long_), max(short, long_)
    if short < MIN_SHORT or not (ASPECT[0] <= short / long_ <= ASPECT[1]):
        return None
    if min(lengths[0], lengths[2]) < 0.6 * max(lengths[0], lengths[2]) or min(
        lengths[1], lengths[3]
    ) < 0.6 * max(lengths[1], lengths[3]):
        return None  # opposite sides this unequal: a wedge, not a card under a tilted camera
    return q


def _densified(poly: np.ndarray, step: float = 2.0) -> np.ndarray:
    """Points every `step` px along a closed polygon (a hull's long straight runs have only their
    two ends as points, which sit where the rounded corners begin)."""
    out = []
    for a, b in zip(poly, np.roll(poly, -1, axis=0), strict=True):
        k = max(1, int(np.linalg.norm(b - a) / step))
        out.append(a + (b - a) * (np.arange(k, dtype=np.float32)[:, None] / k))
    return np.concatenate(out).astype(np.float32)


def _straight_sides(points: np.ndarray, q: np.ndarray, tol: float) -> np.ndarray | None:
    """Corners where a card's straight sides meet: approxPolyDP keeps points of the hull, which on
    rounded corners lie inside the card; a line fitted to the hull points along each side of `q`
    (away from its ends) and the lines intersected give the corners a card outline has."""
    lines = []
    for i in range(4):
        a, b = q[i], q[(i + 1) % 4]
        d = b - a
        n = float(np.linalg.norm(d))
        if n < 1e-6:
            return None
        d = d / n
        rel = points - a
        t = rel @ d
        off = np.abs(rel[:, 0] * d[1] - rel[:, 1] * d[0])
        near = points[(off < tol) & (t > 0.12 * n) & (t < 0.88 * n)]
        if len(near) < 2:
            near = np.stack([a, b])
        vx, vy, x0, y0 = cv2.fitLine(near, cv2.DIST_L2, 0, 0.01, 0.01).ravel()
        lines.append((np.array([vx, vy]), np.array([x0, y0])))
    corners = []
    for i in range(4):
        (d1, p1), (d2, p2) = lines[i - 1], lines[i]
        m = np.array([[d1[0], -d2[0]], [d1[1], -d2[1]]])
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        s, _ = np.linalg.solve(m, p2 - p1)
        corners.append(p1 + s * d1)
    return np.asarray(corners, np.float32)


def order_corners(q: np.ndarray) -> np.ndarray:
    """Clockwise (in image coordinates) from the corner that starts a long side... simply: clockwise
    from the top-most-left corner."""
    c = q.mean(axis=0)
    a = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    q = q[np.argsort(a)]  # clockwise on screen (y down)
    start = int(np.argmin(q[:, 0] + q[:, 1]))
    return np.roll(q, -start, axis=0)


def clockwise(q: np.ndarray) -> np.ndarray:
    """Order 4 corners clockwise (image coordinates, y down), starting at the top-most-left one.
    (Plain floats: it runs thousands of times a frame, and numpy's per-call cost is most of it.)"""
    q = np.asarray(q, dtype=np.float64).reshape(4, 2)
    pts = q.tolist()
    cx = (pts[0][0] + pts[1][0] + pts[2][0] + pts[3][0]) / 4
    cy = (pts[0][1] + pts[1][1] + pts[2][1] + pts[3][1]) / 4
    ang = [math.atan2(y - cy, x - cx) for x, y in pts]
    order = sorted(range(4), key=ang.__getitem__)  # increasing angle = clockwise on screen
    s = [pts[i][0] + pts[i][1] for i in order]
    start = s.index(min(s))
    return q[order[start:] + order[:start]]


def canonical_order(q: np.ndarray) -> np.ndarray:
    """Clockwise corners with the first edge a short side, so the warp gives an upright portrait card
    (here, not in vision.detect, so the reader can use it without importing the detector)."""
    q = clockwise(q)
    if np.linalg.norm(q[1] - q[0]) > np.linalg.norm(q[3] - q[0]):
        q = np.roll(q, -1, axis=0)
    return q


def propose(
    work: np.ndarray,
    deadline: float | None = None,
    region: tuple[int, int, int, int] | None = None,
    also: list[tuple[float, float, float, float]] = (),
    at_edge: list[np.ndarray] | None = None,
) -> tuple[list[tuple[np.ndarray, float, str]], bool]:
    """Card-shaped quadrilaterals (work px), the most rectangular first, without near-duplicates.
    With `region` (x0, y0, x1, y1, work px), only those reaching into it: the rest of the picture
    has not changed since it was last looked at, so only the `search_window` round the region and
    the boxes `also` (cards seen there a frame ago) is looked at (a dealt card: 40 -> ~10 ms at 720p).
    `at_edge`, where given, gets the outlines (N x 2, work px) that reach the picture's border and
    are big enough to be part of a card: `vision.edge_cards` makes cut cards of them."""
    img_area = float(work.shape[0] * work.shape[1])
    size = (work.shape[1], work.shape[0])
    out: list[tuple[np.ndarray, float, str]] = []
    truncated = False
    window = search_window(work.shape, region, also)
    at = (0, 0) if window is None else window[:2]
    for cue, mask, mode in _cue_masks(work, window):
        contours, _ = cv2.findContours(mask, mode, cv2.CHAIN_APPROX_SIMPLE, offset=at)
        for c in contours:
            if len(c) < 4 or (region is not None and not _box_meets(cv2.boundingRect(c), region)):
                continue
            if window is not None and _cut_by(cv2.boundingRect(c), window, work.shape):
                continue  # cut off by the window's edge (the felt round the change): not an outline
            if at_edge is not None and touches_border(c, size) and cv2.contourArea(c) >= EDGE_MIN_AREA:
                at_edge.append(c.reshape(-1, 2))
            got = _quad_of(c, img_area)
            if got is not None:
                out.append((got[0], got[1], cue))
        if deadline is not None and time.thread_time() > deadline:
            truncated = True
            break
    else:
        # straight sides where no outline closed (a shadow across the card, white on pale paper)
        for q, support, cue in line_quads(work, LINE_ASPECT, MIN_SHORT, window):
            if region is None or _quad_meets(q, region):
                out.append((order_corners(q), support, cue))
    out.sort(key=lambda e: -e[1])
    if not out:
        return [], truncated
    boxes = np.array([(q[:, 0].min(), q[:, 1].min(), q[:, 0].max(), q[:, 1].max()) for q, _f, _c in out])
    areas = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    alive = np.ones(len(out), bool)
    kept: list[tuple[np.ndarray, float, str]] = []
    for i in range(len(out)):
        if not alive[i]:
            continue
        kept.append(out[i])
        if len(kept) >= MAX_PROPOSALS:
            truncated = truncated or bool(alive[i + 1 :].any())
            break
        ix = np.clip(np.minimum(boxes[i, 2], boxes[:, 2]) - np.maximum(boxes[i, 0], boxes[:, 0]), 0, None)
        iy = np.clip(np.minimum(boxes[i, 3], boxes[:, 3]) - np.maximum(boxes[i, 1], boxes[:, 1]), 0, None)
        inter = ix * iy
        alive &= inter / np.maximum(areas[i] + areas - inter, 1e-6) <= 0.85
    return kept, truncated


def _cut_by(rect: tuple[int, int, int, int], window: tuple[int, int, int, int], shape) -> bool:
    """Whether an OpenCV bounding rect (x, y, w, h) reaches a side of the window that is not a
    side of the picture."""
    x, y, w, h = rect
    x0, y0, x1, y1 = window
    return (
        (x <= x0 and x0 > 0)
        or (y <= y0 and y0 > 0)
        or (x + w >= x1 and x1 < shape[1])
        or (y + h >= y1 and y1 < shape[0])
    )


def _box_meets(rect: tuple[int, int, int, int], region: tuple[int, int, int, int]) -> bool:
    """Whether an OpenCV bounding rect (x, y, w, h) reaches into a region (x0, y0, x1, y1)."""
    x, y, w, h = rect
    return x < region[2] and x + w > region[0] and y < region[3] and y + h > region[1]


def _quad_meets(q: np.ndarray, region: tuple[int, int, int, int]) -> bool:
    """Whether a quadrilateral's bounding box reaches into a region (x0, y0, x1, y1)."""
    x0, y0 = q.min(axis=0)
    x1, y1 = q.max(axis=0)
    return bool(x0 < region[2] and x1 > region[0] and y0 < region[3] and y1 > region[1])


def changed_region(
    before: np.ndarray, after: np.ndarray, cell: int, level: float = CHANGE_LEVEL
) -> tuple[int, int, int, int] | None:
    """The box (work px) round everything that changed between two `change_map`s of the same work
    picture, grown by a cell; None where nothing did."""
    changed = np.abs(after.astype(np.int16) - before.astype(np.int16)).max(axis=2) > level
    ys, xs = np.nonzero(changed)
    if not len(xs):
        return None
    return (
        int(max(xs.min() - 1, 0) * cell),
        int(max(ys.min() - 1, 0) * cell),
        int((xs.max() + 2) * cell),
        int((ys.max() + 2) * cell),
    )


def change_map(work: np.ndarray, cell: int = CHANGE_CELL) -> np.ndarray:
    """The work picture averaged over cells, what `changed_region` compares."""
    h, w = work.shape[:2]
    return cv2.resize(work, (max(1, w // cell), max(1, h // cell)), interpolation=cv2.INTER_AREA)


def _box_iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def portrait(q: np.ndarray) -> np.ndarray:
    """Corners reordered so the first side (0->1) is a short one: the patch is then upright."""
    if np.linalg.norm(q[1] - q[0]) > np.linalg.norm(q[2] - q[1]):
        q = np.roll(q, -1, axis=0)
    return q


def patch(img: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The quad and a margin round it, warped to an upright PATCH_W x PATCH_H picture."""
    q = portrait(q.astype(np.float32))
    mx, my = MARGIN * PATCH_W / (1 + 2 * MARGIN), MARGIN * PATCH_H / (1 + 2 * MARGIN)
    dst = np.float32([[mx, my], [PATCH_W - mx, my], [PATCH_W - mx, PATCH_H - my], [mx, PATCH_H - my]])
    m = cv2.getPerspectiveTransform(q, dst)
    return cv2.warpPerspective(
        img, m, (PATCH_W, PATCH_H), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REFLECT
    )


def hog(gray: np.ndarray) -> np.ndarray:
    """Histograms of oriented gradients of N grey patches (N x H x W float): 8 px cells, 9 unsigned
    orientations, 2x2-cell blocks L2-normalised (Dalal-Triggs), as one vector per patch."""
    gx = np.zeros_like(gray)
    gy = np.zeros_like(gray)
    gx[:, :, 1:-1] = gray[:, :, 2:] - gray[:, :, :-2]
    gy[:, 1:-1, :] = gray[:, 2:, :] - gray[:, :-2, :]
    mag = np.hypot(gx, gy)
    ang = np.mod(np.arctan2(gy, gx), np.pi) * (9 / np.pi)
    lo = np.floor(ang).astype(np.int64) % 9
    frac = ang - np.floor(ang)
    n, h, w = gray.shape
    cy, cx = h // 8, w // 8
    cell_y = (np.arange(h) // 8).clip(0, cy - 1)
    cell_x = (np.arange(w) // 8).clip(0, cx - 1)
    base = ((cell_y[:, None] * cx + cell_x[None, :]) * 9).ravel()[None, :] + (np.arange(n) * cy * cx * 9)[
        :, None
    ]
    lo = lo.reshape(n, -1)
    frac = frac.reshape(n, -1)
    mag = mag.reshape(n, -1)
    size = n * cy * cx * 9
    cells = np.bincount((base + lo).ravel(), (mag * (1 - frac)).ravel(), size)
    cells += np.bincount((base + (lo + 1) % 9).ravel(), (mag * frac).ravel(), size)
    cells = cells.astype(np.float32).reshape(n, cy, cx, 9)
    blocks = np.concatenate(
        [cells[:, :-1, :-1], cells[:, 1:, :-1], cells[:, :-1, 1:], cells[:, 1:, 1:]], axis=3
    ).reshape(n, -1, 36)
    blocks /= np.sqrt((blocks**2).sum(axis=2, keepdims=True) + 1e-2)
    blocks = np.minimum(blocks, 0.2)
    blocks /= np.sqrt((blocks**2).sum(axis=2, keepdims=True) + 1e-2)
    return blocks.reshape(n, -1)


def _masks():
    mx, my = MARGIN * PATCH_W / (1 + 2 * MARGIN), MARGIN * PATCH_H / (1 + 2 * MARGIN)
    ix, iy = round(mx) + 2, round(my) + 2
    inner = np.zeros((PATCH_H, PATCH_W), bool)
    inner[iy : PATCH_H - iy, ix : PATCH_W - ix] = True
    ring = np.ones((PATCH_H, PATCH_W), bool)
    ring[int(my) - 1 : PATCH_H - int(my) + 1, int(mx) - 1 : PATCH_W - int(mx) + 1] = False
    rim = inner.copy()
    rim[iy + 3 : PATCH_H - iy - 3, ix + 3 : PATCH_W - ix - 3] = False
    return inner, ring, rim


_INNER, _RING, _RIM = _masks()


def features_batch(img: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
    """What the verifier sees of each proposal: HOG of its upright grey patch (margin included), and
    paper statistics inside against the margin (brightness, spread, saturation, contrast)."""
    patches = np.stack([patch(img, q) for q in quads])
    gray = (patches.astype(np.float32) @ np.float32([0.114, 0.587, 0.299])).astype(np.float32)
    sat = patches.max(axis=3).astype(np.float32) - patches.min(axis=3).astype(np.float32)
    gi, go, gr = gray[:, _INNER], gray[:, _RING], gray[:, _RIM]
    si, so = sat[:, _INNER], sat[:, _RING]
    p10, p90 = np.percentile(gi, [10, 90], axis=1)  # one partition for both
    stats = np.stack(
        [
            gi.mean(1) / 255,
            gi.std(1) / 128,
            go.mean(1) / 255,
            go.std(1) / 128,
            (gi.mean(1) - go.mean(1)) / 128,
            (gr.mean(1) - go.mean(1)) / 128,
            si.mean(1) / 255,
            so.mean(1) / 255,
            (gi > 0.8 * gi.max(1, keepdims=True)).mean(1),
            (p90 - p10) / 255,
        ],
        axis=1,
    )
    return np.concatenate([hog(gray), stats], axis=1).astype(np.float32)


def features(img: np.ndarray, q: np.ndarray) -> np.ndarray:
    return features_batch(img, [q])[0]


class QuadVerifier:
    """A one-hidden-layer network over `features`: probability that a proposal is a whole card."""

    def __init__(self, path: str | Path = WEIGHTS) -> None:
        with np.load(path) as z:
            self.mean, self.std = z["mean"], z["std"]
            self.w1, self.b1, self.w2, self.b2 = z["w1"], z["b1"], z["w2"], z["b2"]
        if self.w1.shape[0] != self.mean.shape[0]:
            raise ValueError(f"{path}: verifier weights do not fit the features ({self.w1.shape[0]} inputs)")

    def prob(self, x: np.ndarray) -> np.ndarray:
        z = (x - self.mean) / self.std
        h = np.maximum(z @ self.w1 + self.b1, 0)
        logit = h @ self.w2 + self.b2
        return 1.0 / (1.0 + np.exp(-np.clip(logit.ravel(), -30, 30)))


@lru_cache(maxsize=2)
def load_verifier(path: str | None = None) -> QuadVerifier | None:
    p = Path(path) if path else WEIGHTS
    return QuadVerifier(p) if p.is_file() else None


def find_cards(
    frame: np.ndarray,
    verifier: QuadVerifier,
    deadline: float | None = None,
    accept: float = ACCEPT,
    work: tuple[np.ndarray, float] | None = None,
    region: tuple[int, int, int, int] | None = None,
    previous: list[Quad] = (),
    late: float | None = None,
    at_edge: list[np.ndarray] | None = None,
) -> tuple[list[Quad], bool]:
    """Whole cards in a BGR frame: verified proposals, in full-frame px, no two overlapping much.
    `work` is the frame's `work_picture` when the caller has it already. With `region` (work px),
    only the outlines reaching into it are looked at; `previous` (the cards found a frame ago) are
    kept wherever they lie wholly outside it. Proposing stops at `deadline`; the proposals made are
    then verified, the most card-like first, LATE_CHUNK at a time until `late` (at least one chunk)."""
    work_img, scale = work if work is not None else work_picture(frame)
    kept_before: list[Quad] = []  # wholly outside the change: kept as they were
    seen_there = []  # boxes (work px) of those reaching into it: looked at again, whole
    for k in previous if region is not None else ():
        q = k.corners * scale
        if _quad_meets(q, region):
            seen_there.append((*q.min(axis=0), *q.max(axis=0)))
        else:
            kept_before.append(k)
    props, truncated = propose(work_img, deadline, region, seen_there, at_edge)
    p = np.zeros(0)
    if props:
        # out of time, the most card-like proposals are still verified, a chunk at a time while the
        # frame can spare it, not all dropped -- on a slower core (a Pi 5's) every cluttered photo
        # ran out here and kept no card; in time, all of them at once
        end = (
            max(late or deadline, deadline)
            if deadline is not None and time.thread_time() > deadline
            else None
        )
        step = LATE_CHUNK if end is not None else len(props)
        done: list[np.ndarray] = []
        for start in range(0, len(props), step):
            if done and time.thread_time() >= end:
                break
            chunk = props[start : start + step]
            done.append(verifier.prob(features_batch(work_img, [q for q, _f, _c in chunk])))
        p = np.concatenate(done)
        truncated = truncated or len(p) < len(props)
        props = props[: len(p)]
    chosen = sorted(
        [(float(p[i]), props[i]) for i in range(len(props)) if p[i] >= _accept_for(props[i][2], accept)]
        + [(k.score, (k.corners * scale, 1.0, k.cue)) for k in kept_before],
        key=lambda e: -e[0],
    )
    kept: list[Quad] = []
    for score, (q, _fill, cue) in chosen:
        under = [k for k in kept if share_of_smaller(q, k.corners * scale) > 0.3]
        if under and all(_print_on(work_img, k.corners * scale, q) for k in under):
            # the card round the rectangle printed on its face, or round a pip printed on it, which
            # the verifier was surer of (a card on a pale counter whose own edge is faint; a diamond
            # pip is card-shaped enough, and a shadow across the card made its outline doubtful):
            # the card stands, not its print
            kept = [k for k in kept if not any(k is u for u in under)]
        elif under:
            continue
        kept.append(Quad(q / scale, score, cue))
    return kept, truncated


def _filled(poly: np.ndarray, origin: tuple[int, int], shape: tuple[int, int]) -> np.ndarray:
    """A `shape` mask (1 inside) of the convex polygon `poly` (work px), on a crop at `origin`."""
    m = np.zeros(shape, np.uint8)
    pts = np.asarray(poly, np.float64).reshape(-1, 2) - origin
    cv2.fillConvexPoly(m, np.round(pts).astype(np.int32), 1)
    return m


def _accept_for(cue: str, accept: float) -> float:
    """The verifier's bar for a proposal of `cue`: two sides meeting at a corner are the weakest
    evidence of a card (the print of a foil card's face, a court's frame and the card's edge make
    corners too), so the verifier must be sure of them (CORNER_ACCEPT)."""
    return max(accept, CORNER_ACCEPT) if cue == "corner" else accept


def paper_between(work: np.ndarray, inner: np.ndarray, outer: np.ndarray) -> bool:
    """Whether what lies between a rectangle and the card-shaped outline round it is paper as
    bright as the paper inside the rectangle (a card's margin, its indices aside), and the outline
    lies in the picture: not a table, wood or cloth round a card, nor the picture's edge."""
    h, w = work.shape[:2]
    o = np.asarray(outer, np.float64).reshape(-1, 2)
    slack = 0.02 * float(np.ptp(o, axis=0).max())
    if o.min() < -slack or o[:, 0].max() > w - 1 + slack or o[:, 1].max() > h - 1 + slack:
        return False
    x0, y0 = np.floor(np.maximum(o.min(axis=0), 0)).astype(int)
    x1, y1 = np.ceil(np.minimum(o.max(axis=0) + 1, [w, h])).astype(int)
    gray = cv2.cvtColor(work[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    m_out, m_in = _filled(o, (x0, y0), gray.shape), _filled(inner, (x0, y0), gray.shape)
    k3 = np.ones((3, 3), np.uint8)
    ring = (m_out > 0) & (cv2.dilate(m_in, k3) == 0)
    inside = cv2.erode(m_in, k3) > 0
    # side by side (the four triangles from the middle to each side), each against the paper next
    # to it inside: a light falling off across the card is no reason to call its margin something else
    centre = o.mean(axis=0) - [x0, y0]
    shares = []
    for k in range(4):
        part = _filled(np.array([centre, o[k] - [x0, y0], o[(k + 1) % 4] - [x0, y0]]), (0, 0), gray.shape)
        ring_k, inside_k = gray[ring & (part > 0)], gray[inside & (part > 0)]
        if len(ring_k) < 5 or len(inside_k) < 5:
            return False
        paper = float(np.percentile(inside_k, 75))
        shares.append(float(np.mean(ring_k >= paper - max(PAPER_DROP[0], PAPER_DROP[1] * paper))))
    return min(shares) >= PAPER_RING


def printed_frame_of(inner: np.ndarray, outer: np.ndarray) -> bool:
    """Whether `inner` is a rectangle printed on the face of the card `outer`: wholly inside it,
    FRAME_AREA of its area, and clear of each of its four sides by FRAME_MARGIN of its width (many
    decks frame their pips or figures so). Two overlapping cards' joint outline never holds one of
    them so: the card on top lies along at least one of its sides."""
    a_in, a_out = polygon_area(inner), polygon_area(outer)
    if a_out <= 0 or not FRAME_AREA[0] <= a_in / a_out <= FRAME_AREA[1]:
        return False
    if share_of_smaller(inner, outer) < 0.97:
        return False
    o = np.asarray(outer, np.float64).reshape(4, 2)
    pts = np.asarray(inner, np.float64).reshape(-1, 2)
    sides = np.linalg.norm(np.roll(o, -1, axis=0) - o, axis=1)
    need = FRAME_MARGIN * float(sides.min())
    centre = o.mean(axis=0)
    for k in range(4):
        a, b = o[k], o[(k + 1) % 4]
        normal = np.array([b[1] - a[1], a[0] - b[0]]) / max(sides[k], 1e-9)
        if np.dot(centre - a, normal) < 0:
            normal = -normal  # pointing inwards
        if float(((pts - a) @ normal).min()) < need:
            return False
    return True


def _print_on(work: np.ndarray, inner: np.ndarray, outer: np.ndarray) -> bool:
    """Whether the kept outline `inner` is print on the card `outer`: a frame round its pips or
    figure with the card's paper round it, or a mark on it (a pip, an index, a patch of its paper
    between a shadow's edge and the pips) no lighter than the paper round it."""
    if printed_frame_of(inner, outer):
        return paper_between(work, inner, outer)
    return printed_mark_of(inner, outer) and not lighter_than_round(work, inner, outer)


def lighter_than_round(work: np.ndarray, inner: np.ndarray, outer: np.ndarray) -> bool:
    """Whether `inner` is paper lying on something darker: its median grey LIGHTER_BY above that of
    the band round it (half its width wide, inside `outer`). A card on a table, a tray or a printed
    box is; a pip or an index printed on a card is darker than the paper round it, and a patch of
    the card's own paper cut off by a shadow's edge and the pips is as light as the rest."""
    h, w = work.shape[:2]
    i = np.asarray(inner, np.float64).reshape(-1, 2)
    reach = max(2, round(0.5 * float(np.ptp(i, axis=0).min())))
    x0, y0 = np.floor(np.maximum(i.min(axis=0) - reach - 1, 0)).astype(int)
    x1, y1 = np.ceil(np.minimum(i.max(axis=0) + reach + 2, [w, h])).astype(int)
    if x1 - x0 < 3 or y1 - y0 < 3:
        return True
    gray = cv2.cvtColor(work[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
    m_in, m_out = _filled(i, (x0, y0), gray.shape), _filled(outer, (x0, y0), gray.shape)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * reach + 1, 2 * reach + 1))
    k3 = np.ones((3, 3), np.uint8)
    band = (cv2.dilate(m_in, disc) > 0) & (cv2.dilate(m_in, k3) == 0) & (m_out > 0)
    own = cv2.erode(m_in, k3) > 0
    if band.sum() < 5 or own.sum() < 5:
        return True  # too small to tell: not taken for print
    return float(np.median(gray[own])) >= float(np.median(gray[band])) + LIGHTER_BY


def printed_mark_of(inner: np.ndarray, outer: np.ndarray) -> bool:
    """Whether `inner` is a mark printed on the card `outer` (a pip, an index, a detail of a court's
    picture): wholly inside it and under PRINT_SHARE of its area (no card lies wholly on another of
    its deck). By shape alone: `_print_on` also asks that it be no lighter than round it, so a small
    card on a table, a tray or in a printed box is not taken for print (`lighter_than_round`)."""
    a_in, a_out = polygon_area(inner), polygon_area(outer)
    return a_out > 0 and a_in / a_out < PRINT_SHARE and share_of_smaller(inner, outer) >= 0.97


def card_probability(
    verifier: QuadVerifier, work: tuple[np.ndarray, float], quads: list[np.ndarray]
) -> np.ndarray:
    """The verifier's probability for outlines found another way (full-frame px)."""
    if not quads:
        return np.zeros(0)
    img, scale = work
    return verifier.prob(features_batch(img, [np.asarray(q, np.float32) * scale for q in quads]))
