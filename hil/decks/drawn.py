"""A deck drawn by code: the held-out deck of the vision benchmark.

Nobody tuned the detector or the built-in reader on it: its index uses an italic font (the
built-in reader only knows upright glyphs), its suit symbols are drawn differently from the
reader's own shapes, its back is a green lattice, and court cards carry a framed coloured panel.
Deterministic; made in memory (no files), 250 x 350 px per card like the GPL decks.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

W, H = 250, 350
RANK_TEXT = {"T": "10", "J": "J", "Q": "Q", "K": "K", "A": "A"}
RED, BLACK = (30, 30, 200), (25, 25, 25)
# pip positions (x, y as fractions of the card) for 2..10, the usual layouts
PIPS = {
    2: [(0.5, 0.22), (0.5, 0.78)],
    3: [(0.5, 0.22), (0.5, 0.5), (0.5, 0.78)],
    4: [(0.32, 0.22), (0.68, 0.22), (0.32, 0.78), (0.68, 0.78)],
    5: [(0.32, 0.22), (0.68, 0.22), (0.5, 0.5), (0.32, 0.78), (0.68, 0.78)],
    6: [(0.32, 0.22), (0.68, 0.22), (0.32, 0.5), (0.68, 0.5), (0.32, 0.78), (0.68, 0.78)],
    7: [(0.32, 0.22), (0.68, 0.22), (0.5, 0.36), (0.32, 0.5), (0.68, 0.5), (0.32, 0.78), (0.68, 0.78)],
    8: [
        (0.32, 0.22),
        (0.68, 0.22),
        (0.5, 0.36),
        (0.32, 0.5),
        (0.68, 0.5),
        (0.5, 0.64),
        (0.32, 0.78),
        (0.68, 0.78),
    ],
    9: [
        (0.32, 0.2),
        (0.68, 0.2),
        (0.32, 0.4),
        (0.68, 0.4),
        (0.5, 0.5),
        (0.32, 0.6),
        (0.68, 0.6),
        (0.32, 0.8),
        (0.68, 0.8),
    ],
    10: [
        (0.32, 0.2),
        (0.68, 0.2),
        (0.5, 0.3),
        (0.32, 0.4),
        (0.68, 0.4),
        (0.32, 0.6),
        (0.68, 0.6),
        (0.5, 0.7),
        (0.32, 0.8),
        (0.68, 0.8),
    ],
}


def _suit_polygon(suit: str, cx: float, cy: float, size: float, flip: bool = False) -> list[np.ndarray]:
    """Outline(s) of a suit symbol centred at (cx, cy), about `size` px tall."""
    s = size / 2
    parts = []
    t = np.linspace(0, 2 * math.pi, 60)
    if suit == "d":  # slightly curved-sided lozenge
        a = np.linspace(0, 2 * math.pi, 80)
        x = 0.72 * np.sign(np.cos(a)) * np.abs(np.cos(a)) ** 1.25
        y = np.sign(np.sin(a)) * np.abs(np.sin(a)) ** 1.25
        parts.append(np.stack([x, y], 1))
    elif suit == "h":  # classic parametric heart, point down
        x = 16 * np.sin(t) ** 3
        y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
        parts.append(np.stack([x / 17, y / 17 + 0.1], 1))
    elif suit == "s":  # heart upside down plus a flared stem
        x = 16 * np.sin(t) ** 3
        y = 13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t)
        parts.append(np.stack([x / 18, y / 18 - 0.12], 1))
        parts.append(np.array([[0.0, 0.2], [0.22, 0.95], [-0.22, 0.95]]))
    elif suit == "c":  # three round lobes and a stem
        for ox, oy in ((0.0, -0.52), (-0.5, 0.1), (0.5, 0.1)):
            parts.append(np.stack([ox + 0.36 * np.cos(t), oy + 0.36 * np.sin(t)], 1))
        parts.append(np.array([[-0.15, 0.0], [0.15, 0.0], [0.15, 0.2], [-0.15, 0.2]]))
        parts.append(np.array([[0.0, 0.1], [0.24, 0.95], [-0.24, 0.95]]))
    out = []
    for p in parts:
        p = p.copy()
        if flip:
            p[:, 1] = -p[:, 1]
        out.append(np.round((p * s + [cx, cy]) * 8).astype(np.int32))
    return out


def _draw_suit(img, suit, cx, cy, size, flip=False) -> None:
    colour = RED if suit in "hd" else BLACK
    for poly in _suit_polygon(suit, cx, cy, size, flip):
        cv2.fillPoly(img, [poly], colour, cv2.LINE_AA, shift=3)


def _blank() -> tuple[np.ndarray, np.ndarray]:
    img = np.full((H, W, 3), 250, np.uint8)
    alpha = np.zeros((H, W), np.uint8)
    r = 16
    cv2.rectangle(alpha, (r, 0), (W - 1 - r, H - 1), 255, -1)
    cv2.rectangle(alpha, (0, r), (W - 1, H - 1 - r), 255, -1)
    for cx, cy in ((r, r), (W - 1 - r, r), (r, H - 1 - r), (W - 1 - r, H - 1 - r)):
        cv2.circle(alpha, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return img, alpha


def _index(img, rank: str, suit: str) -> None:
    """Rank (italic) and a small suit in the top-left corner, the same turned round bottom-right."""
    colour = RED if suit in "hd" else BLACK
    text = RANK_TEXT.get(rank, rank)
    corner = np.full((110, 60, 3), 250, np.uint8)
    font = cv2.FONT_HERSHEY_TRIPLEX | cv2.FONT_ITALIC
    scale = 1.25 if len(text) == 1 else 0.95
    (tw, th), _ = cv2.getTextSize(text, font, scale, 2)
    cv2.putText(corner, text, (max(2, (56 - tw) // 2), 8 + th), font, scale, colour, 2, cv2.LINE_AA)
    _draw_suit(corner, suit, 30, 70, 30)
    img[8:118, 6:66] = np.minimum(img[8:118, 6:66], corner)
    rot = corner[::-1, ::-1]
    img[H - 118 : H - 8, W - 66 : W - 6] = np.minimum(img[H - 118 : H - 8, W - 66 : W - 6], rot)


def make_card(code: str) -> np.ndarray:
    """One card face as BGRA."""
    rank, suit = code[0], code[1]
    img, alpha = _blank()
    cv2.rectangle(img, (3, 3), (W - 4, H - 4), (200, 200, 200), 1, cv2.LINE_AA)
    _index(img, rank, suit)
    n = {"A": 1, "T": 10}.get(rank, int(rank) if rank.isdigit() else 0)
    if rank == "A":
        _draw_suit(img, suit, W / 2, H / 2, 120)
    elif n:
        for x, y in PIPS[n]:
            _draw_suit(img, suit, x * W, y * H, 46, flip=y > 0.5)
    else:  # court card: a framed panel in three colours with the letter and suits
        x0, y0, x1, y1 = 62, 50, W - 62, H - 50
        palette = {"J": (40, 150, 40), "Q": (150, 60, 150), "K": (170, 110, 30)}[rank]
        cv2.rectangle(img, (x0, y0), (x1, y1), (60, 200, 230), -1)
        cv2.rectangle(img, (x0 + 10, y0 + 10), (x1 - 10, (y0 + y1) // 2), palette, -1)
        cv2.rectangle(
            img, (x0 + 10, (y0 + y1) // 2), (x1 - 10, y1 - 10), (palette[2], palette[0], palette[1]), -1
        )
        cv2.rectangle(img, (x0, y0), (x1, y1), (40, 40, 40), 2, cv2.LINE_AA)
        _draw_suit(img, suit, x0 + 30, y0 + 35, 32)
        _draw_suit(img, suit, x1 - 30, y1 - 35, 32, flip=True)
        cv2.putText(
            img,
            rank,
            (W // 2 - 22, H // 2 + 20),
            cv2.FONT_HERSHEY_SIMPLEX,
            1.8,
            (250, 250, 250),
            4,
            cv2.LINE_AA,
        )
    return np.dstack([img, alpha])


def make_back() -> np.ndarray:
    img, alpha = _blank()
    img[:] = (250, 250, 250)
    cv2.rectangle(img, (14, 14), (W - 15, H - 15), (60, 120, 30), -1)
    for k in range(-H, W + H, 18):  # lattice of light lines
        cv2.line(img, (k, 14), (k + H, H + 14), (150, 200, 120), 2, cv2.LINE_AA)
        cv2.line(img, (k, 14), (k - H, H + 14), (150, 200, 120), 2, cv2.LINE_AA)
    img[:14], img[-14:], img[:, :14], img[:, -14:] = 250, 250, 250, 250
    return np.dstack([img, alpha])


def make_deck() -> dict[str, np.ndarray]:
    """code -> BGRA for the 52 cards and 'back'."""
    deck = {r + s: make_card(r + s) for r in "23456789TJQKA" for s in "cdhs"}
    deck["back"] = make_back()
    return deck


def write_deck(folder) -> None:
    """Write the deck as PNG files (As.png ... back.png), e.g. to try `smart-table vision enroll`."""
    from pathlib import Path

    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for code, img in make_deck().items():
        cv2.imwrite(str(out / f"{code}.png"), img)
