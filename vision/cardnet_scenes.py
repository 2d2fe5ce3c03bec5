"""Synthetic scenes for training the card detector network (`vision/cardnet.py`), with their truth.

Why another generator: the verifier's composites (`vision.train.composite`) hold 0-7 loose cards, which
is what a proposal verifier needs; a detector that must find every card on a real table also has to
see whole tables (a hole-card pair at every seat, the board in a row, a muck pile, chips and the
button), rows of touching cards laid out on a counter, close-ups of one card filling the picture, and
phone photos taken at a slant or squeezed to a square. Each scene picks one deck for its cards (a
venue deals from one deck), from the many the pool holds (`vision.aisleriot_decks`, cards drawn in
code by `vision.read_synth`, backs drawn in `vision.train`); backgrounds, distractors and the camera
are `vision.train`'s (CC0 textures, felt of any colour, chips, paper, hands; light, shadow, glare,
blur, noise, JPEG).

Truth: every card's whole outline (`quads`, corners in order around, the hidden parts included), the
share of it in view (`seen`) and, per pixel, which card lies on top (`cover`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.read_synth import rounded_card_mask
from vision.train import (
    _flatten,
    add_distractors,
    background,
    camera,
    drawn_back,
    synthetic_face,
)

KINDS = {"table": 0.35, "loose": 0.25, "rows": 0.2, "closeup": 0.12, "empty": 0.08}
CARD_ASPECT = 88.0 / 63.0


@dataclass
class Scene:
    image: np.ndarray  # BGR uint8
    quads: list[np.ndarray] = field(default_factory=list)  # 4x2 float, the whole outline
    seen: list[float] = field(default_factory=list)  # share of each card in view
    cover: np.ndarray | None = None  # int16: 1 + card index on top, 0 background, -1 a distractor
    kind: str = ""


@dataclass
class CardPool:
    """The card pictures scenes are made of: per deck its faces and its back (BGR)."""

    decks: list[tuple[list[np.ndarray], np.ndarray | None]]

    @classmethod
    def load(cls, folders: list[Path | str]) -> CardPool:
        from vision.decks import read_deck

        decks = []
        for folder in folders:
            try:
                cards = read_deck(str(folder))
            except (FileNotFoundError, OSError):
                continue
            faces = [_flatten(img) for code, img in sorted(cards.items()) if code != "back"]
            back = _flatten(cards["back"]) if "back" in cards else None
            decks.append((faces, back))
        return cls(decks)

    def deck(self, rng: np.random.Generator):
        """A scene's deck: (face picker, back picture). One in five scenes uses cards drawn in code."""
        if not self.decks or rng.random() < 0.2:
            back = drawn_back(rng)
            return (lambda: synthetic_face(rng)), back
        faces, back = self.decks[int(rng.integers(len(self.decks)))]
        if back is None or rng.random() < 0.15:
            back = drawn_back(rng)
        return (lambda: faces[int(rng.integers(len(faces)))]), back


def scene(
    rng: np.random.Generator, pool: CardPool, textures: list[np.ndarray], kind: str | None = None
) -> Scene:
    """One synthetic picture and its truth."""
    if kind is None:
        kind = str(rng.choice(list(KINDS), p=np.array(list(KINDS.values())) / sum(KINDS.values())))
    w = int(rng.integers(480, 1025))
    h = int(w * rng.uniform(0.55, 1.35))
    canvas = background(rng, textures, w, h)
    cover = np.zeros((h, w), np.int32)
    face, back = pool.deck(rng)
    poses: list[tuple[np.ndarray, bool]] = []  # (quad, face up)
    if kind == "table":
        cw = w / rng.uniform(14, 32)
        poses = _table(rng, w, h, cw)
    elif kind == "rows":
        cw = min(w, h) / rng.uniform(6, 22)
        poses = _rows(rng, w, h, cw)
    elif kind == "closeup":
        cw = min(w, h) * rng.uniform(0.22, 0.55)
        poses = _loose(rng, w, h, cw, int(rng.integers(1, 4)), spread=0.25)
    elif kind == "loose":
        cw = float(np.exp(rng.uniform(np.log(18), np.log(0.3 * min(w, h)))))
        poses = _loose(rng, w, h, cw, int(rng.integers(1, 9)), spread=0.1)
    else:
        cw = min(w, h) / rng.uniform(5, 20)
    quads = []
    for k, (quad, up) in enumerate(poses):
        img = face() if up else back
        _paste(canvas, cover, img, quad, k + 1, rng)
        quads.append(quad)
    if kind == "table" or rng.random() < 0.3:
        _chips_and_button(rng, canvas, cover, w, h, cw)
    add_distractors(rng, canvas, cover, quads, cw)
    if rng.random() < 0.15:
        _phone(rng, canvas, cover, w, h, cw)
    canvas, cover, quads = _view(rng, canvas, cover, quads)
    img = camera(rng, canvas)
    seen = _seen(cover, quads)
    return Scene(img, quads, seen, cover.astype(np.int16), kind)


# -- layouts: (quad, face up) per card, bottom first ---------------------------------------------
def _card(c, angle: float, cw: float, rng: np.random.Generator, persp: float = 0.02) -> np.ndarray:
    ch = cw * rng.uniform(1.36, 1.44)
    rect = np.array([[-cw / 2, -ch / 2], [cw / 2, -ch / 2], [cw / 2, ch / 2], [-cw / 2, ch / 2]])
    rot = np.array([[math.cos(angle), math.sin(angle)], [-math.sin(angle), math.cos(angle)]])
    return rect @ rot + rng.normal(0, persp * cw, (4, 2)) + np.asarray(c, float)


def _table(rng, w, h, cw) -> list[tuple[np.ndarray, bool]]:
    """Hole-card pairs round an oval, the board in a row in the middle, a muck pile."""
    out = []
    cx, cy = w / 2 + rng.normal(0, 0.04 * w), h / 2 + rng.normal(0, 0.04 * h)
    ax, ay = w * rng.uniform(0.3, 0.44), h * rng.uniform(0.28, 0.42)
    seats = int(rng.integers(2, 11))
    a0 = rng.uniform(0, 2 * math.pi)
    for s in range(seats):
        if rng.random() < 0.15:
            continue  # an empty seat
        a = a0 + 2 * math.pi * s / seats + rng.normal(0, 0.08)
        p = np.array([cx + ax * math.cos(a), cy + ay * math.sin(a)])
        towards = math.atan2(cy - p[1], cx - p[0]) - math.pi / 2 + rng.normal(0, 0.3)
        n = 2 if rng.random() < 0.85 else int(rng.integers(1, 5))  # hold'em, or Omaha / a lone card
        side = np.array([math.cos(towards), -math.sin(towards)])
        step = rng.uniform(0.12, 0.9) * cw
        for j in range(n):
            c = p + side * step * (j - (n - 1) / 2) + rng.normal(0, 0.05 * cw, 2)
            out.append((_card(c, towards + rng.normal(0, 0.2), cw, rng), rng.random() < 0.12))
    board = int(rng.choice([0, 3, 4, 5, 5, 1, 2]))
    ra = rng.normal(0, 0.12) + (math.pi / 2 if rng.random() < 0.1 else 0.0)
    gap = cw * rng.uniform(1.03, 1.35)
    for j in range(board):
        off = (j - (board - 1) / 2) * gap
        c = (cx + off * math.cos(ra), cy + off * math.sin(ra) + rng.normal(0, 0.03 * cw))
        out.append((_card(c, -ra + rng.normal(0, 0.04), cw, rng), True))
    if rng.random() < 0.4:  # the muck: cards thrown in a heap
        m = np.array([cx + rng.uniform(-0.5, 0.5) * ax, cy + rng.uniform(-0.5, 0.5) * ay])
        for _ in range(int(rng.integers(2, 9))):
            out.append((_card(m + rng.normal(0, 0.35 * cw, 2), rng.uniform(0, 2 * math.pi), cw, rng), False))
    return out


def _rows(rng, w, h, cw) -> list[tuple[np.ndarray, bool]]:
    """Cards laid out in rows on a counter (a solitaire's columns overlap down the table)."""
    out = []
    ch = cw * CARD_ASPECT
    rows, cols = int(rng.integers(1, 5)), int(rng.integers(2, 9))
    gx = cw * rng.uniform(1.04, 1.6)
    cascade = rng.random() < 0.3
    gy = ch * (rng.uniform(0.18, 0.4) if cascade else rng.uniform(1.04, 1.5))
    turn = rng.uniform(0, 2 * math.pi) if rng.random() < 0.5 else rng.normal(0, 0.1)
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    centre = np.array([w / 2, h / 2]) + rng.normal(0, 0.05, 2) * [w, h]
    for r in range(rows):
        for c in range(cols):
            if rng.random() < 0.1:
                continue
            p = np.array([(c - (cols - 1) / 2) * gx, (r - (rows - 1) / 2) * gy]) + rng.normal(0, 0.04 * cw, 2)
            out.append((_card(rot @ p + centre, -turn + rng.normal(0, 0.06), cw, rng), rng.random() < 0.85))
    return out


def _loose(rng, w, h, cw, n, spread: float) -> list[tuple[np.ndarray, bool]]:
    """Cards anywhere, some in fans and piles."""
    out = []
    prev = None
    for _ in range(n):
        if prev is not None and rng.random() < 0.4:
            c = prev + rng.normal(0, 0.45 * cw, 2)
        else:
            c = rng.uniform([spread * w, spread * h], [(1 - spread) * w, (1 - spread) * h])
        prev = c
        out.append(
            (_card(c, rng.uniform(0, 2 * math.pi), cw * rng.uniform(0.9, 1.1), rng, 0.04), rng.random() < 0.7)
        )
    return out


# -- painting -----------------------------------------------------------------------------------
def _paste(canvas, cover, img, quad, layer: int, rng) -> None:
    """The card picture warped onto the quad, inside the quad's box only (fast for small cards);
    shrunk first by area so a 250 px picture becomes a 20 px card without aliasing."""
    h, w = cover.shape
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int) + 1
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    side = float(np.linalg.norm(quad[1] - quad[0]))
    f = min(1.0, 1.5 * side / img.shape[1])
    if f < 1.0:
        img = cv2.resize(
            img,
            (max(8, round(img.shape[1] * f)), max(8, round(img.shape[0] * f))),
            interpolation=cv2.INTER_AREA,
        )
    ih, iw = img.shape[:2]
    alpha = rounded_card_mask(iw, ih, max(1, int(rng.uniform(0.03, 0.09) * iw)))
    src = np.float32([[0, 0], [iw, 0], [iw, ih], [0, ih]])
    m = cv2.getPerspectiveTransform(src, (quad - [x0, y0]).astype(np.float32))
    size = (x1 - x0, y1 - y0)
    warped = cv2.warpPerspective(img.astype(np.float32), m, size, flags=cv2.INTER_LINEAR)
    a = cv2.warpPerspective(alpha, m, size, flags=cv2.INTER_LINEAR).astype(np.float32)[:, :, None] / 255
    roi = canvas[y0:y1, x0:x1]
    roi *= 1 - a
    roi += warped * a
    cover[y0:y1, x0:x1][a[:, :, 0] > 0.5] = layer


def _chips_and_button(rng, canvas, cover, w, h, cw) -> None:
    """Chip stacks seen from above (rings of edge spots, white ones too) and the dealer button."""
    for _ in range(int(rng.integers(1, 12))):
        c = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        rad = max(3, int(cw * rng.uniform(0.25, 0.42)))
        col = [float(rng.uniform(215, 245))] * 3 if rng.random() < 0.3 else rng.uniform(0, 255, 3).tolist()
        spot = rng.uniform(0, 255, 3).tolist() if rng.random() < 0.5 else [float(rng.uniform(220, 250))] * 3
        inserts = rng.random() < 0.5  # "dice" chips: small white rectangles set into the rim, card-shaped
        for j in range(int(rng.integers(1, 4))):
            cj = (c[0] + j * int(rng.integers(-2, 3)), c[1] - j * int(rng.integers(0, 3)))
            cv2.circle(canvas, cj, rad, col, -1, cv2.LINE_AA)
            step = int(rng.choice([30, 45, 60]))
            for a in range(0, 360, step):
                if inserts:
                    t = math.radians(a)
                    p = (cj[0] + 0.82 * rad * math.cos(t), cj[1] + 0.82 * rad * math.sin(t))
                    box = cv2.boxPoints((p, (0.22 * rad, 0.34 * rad), a))
                    cv2.fillConvexPoly(canvas, np.round(box).astype(np.int32), spot, cv2.LINE_AA)
                else:
                    cv2.ellipse(canvas, cj, (rad, rad), a, 0, 12, spot, max(1, rad // 4))
            if rng.random() < 0.3:  # a printed ring and a value in the middle
                cv2.circle(canvas, cj, int(0.6 * rad), spot, max(1, rad // 12), cv2.LINE_AA)
            cv2.circle(cover, cj, rad, -1, -1)
    if rng.random() < 0.6:
        c = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        rad = max(5, int(cw * rng.uniform(0.35, 0.6)))
        col = [float(rng.uniform(220, 250))] * 3 if rng.random() < 0.7 else rng.uniform(0, 255, 3).tolist()
        cv2.circle(canvas, c, rad, col, -1, cv2.LINE_AA)
        cv2.circle(canvas, c, rad, (40, 40, 40), max(1, rad // 12), cv2.LINE_AA)
        text = "D" if rng.random() < 0.5 else "DEALER"
        scale = rad / (20.0 if text == "D" else 60.0)
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, 1)
        ink = np.zeros(cover.shape, np.uint8)  # putText draws on 8-bit pictures only
        org = (c[0] - tw // 2, c[1] + th // 2)
        cv2.putText(ink, text, org, cv2.FONT_HERSHEY_DUPLEX, scale, 255, max(1, rad // 10), cv2.LINE_AA)
        a = ink.astype(np.float32)[:, :, None] / 255
        canvas *= 1 - a
        canvas += a * 20.0
        cv2.circle(cover, c, rad, -1, -1)


def _phone(rng, canvas, cover, w, h, cw) -> None:
    """A phone lying on the table: a dark rounded slab twice as long as wide (not a card)."""
    pw = cw * rng.uniform(0.9, 1.5)
    box = cv2.boxPoints(
        (
            (float(rng.integers(0, w)), float(rng.integers(0, h))),
            (pw, pw * rng.uniform(1.9, 2.2)),
            float(rng.uniform(0, 180)),
        )
    )
    pts = np.round(box).astype(np.int32)
    cv2.fillConvexPoly(canvas, pts, rng.uniform(5, 45, 3).tolist(), cv2.LINE_AA)
    cv2.fillConvexPoly(cover, pts, -1)


def _view(rng, canvas, cover, quads):
    """The camera's view of the table: a slant (a phone held at an angle) and, for dataset exports,
    the picture squeezed to another shape."""
    h, w = cover.shape
    if rng.random() > 0.5:
        return canvas, cover, quads
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    dst = src + rng.uniform(-0.12, 0.12, (4, 2)) * [w, h]
    if rng.random() < 0.35:
        dst[:, 1] *= rng.uniform(0.6, 1.6)
    dst = (dst - dst.min(axis=0)).astype(np.float32)
    nw, nh = math.ceil(dst[:, 0].max()), math.ceil(dst[:, 1].max())
    if nw < 64 or nh < 64 or nw * nh > 1100 * 1100:
        return canvas, cover, quads
    m = cv2.getPerspectiveTransform(src, dst)
    canvas = cv2.warpPerspective(canvas, m, (nw, nh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    cover = cv2.warpPerspective(cover.astype(np.float32), m, (nw, nh), flags=cv2.INTER_NEAREST).astype(
        np.int32
    )
    quads = [
        cv2.perspectiveTransform(q.reshape(1, -1, 2).astype(np.float64), m).reshape(-1, 2) for q in quads
    ]
    return canvas, cover, quads


def _seen(cover: np.ndarray, quads: list[np.ndarray]) -> list[float]:
    """Each card's share in view: its pixels on top over its whole outline's area (inside the picture
    or not)."""
    if not quads:
        return []
    counts = np.bincount(np.clip(cover.ravel(), 0, None), minlength=len(quads) + 1)
    return [
        float(counts[k + 1]) / max(1.0, abs(cv2.contourArea(q.astype(np.float32))))
        for k, q in enumerate(quads)
    ]
