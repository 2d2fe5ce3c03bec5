"""Synthetic playing cards, as the camera sees them, for training the built-in reader's classifiers.

Nothing here comes from a real deck: the corner index's rank is written in outline fonts (TTF_SHARE
of them, where the `train` extra installs them: sans, serif, mono, condensed) or OpenCV's own
Hershey fonts (upright ones only), at many weights, widths and slants; the suit symbols are shapes drawn
here with randomised proportions (lobe sizes, stem, notch, curvature), the pips follow the usual
layouts with jitter and court cards carry a made-up coloured picture. Each card is then put through
a simulated camera (shrunk to 55-100 px wide, uneven light and tint, blur, noise, an outline known
to a pixel or so) and warped upright to the reader's canonical size, exactly as detection does.
"""

from __future__ import annotations

import importlib.util
import math
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from controller.rules.cards import RANKS, SUITS  # noqa: F401  (re-exported for vision.train)
from vision.read import PIP_LAYOUTS  # the usual pip places the reader fits against

CANON_W, CANON_H = 100, 140
SS = 4  # supersampling of the drawn card
FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_PLAIN,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_COMPLEX_SMALL,
)
RANK_TEXT = {"T": "10"}


def suit_mask(suit: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """A filled suit symbol (uint8 0/255) in a size x size box, proportions randomised."""
    s = size
    img = np.zeros((s, s), np.uint8)
    u = rng.uniform

    def circ(x, y, r):
        cv2.circle(img, (int(x * s * 8), int(y * s * 8)), int(r * s * 8), 255, -1, cv2.LINE_AA, shift=3)

    def poly(pts):
        cv2.fillPoly(img, [np.round(np.array(pts) * s * 8).astype(np.int32)], 255, cv2.LINE_AA, shift=3)

    if suit == "d":
        w = u(0.28, 0.42)
        bend = u(1.6, 2.5)  # 2: straight sides; less bulge out, more curve in
        a = np.linspace(0, 2 * math.pi, 64)
        x = w * np.sign(np.cos(a)) * np.abs(np.cos(a)) ** bend
        y = 0.47 * np.sign(np.sin(a)) * np.abs(np.sin(a)) ** bend
        poly(np.stack([0.5 + x, 0.5 + y], 1))
    elif suit in "hs":
        r = u(0.2, 0.26)
        dx = u(0.15, 0.23)
        ly = u(0.28, 0.36)
        tip = u(0.9, 0.98)
        if suit == "s":  # a heart upside down, a little higher, and a stem
            ly, tip = 1.0 - ly - u(0.08, 0.16), 1.0 - tip
        for side in (-1, 1):  # each lobe: a circle and the tip, joined by tangent lines
            t = np.linspace(0, 2 * math.pi, 48)
            pts = np.stack([0.5 + side * dx + r * np.cos(t), ly + r * np.sin(t)], 1)
            pts = np.vstack([pts, [[0.5 + side * u(-0.01, 0.01), tip]]])
            poly(cv2.convexHull(pts.astype(np.float32)).reshape(-1, 2))
        poly([[0.5 - dx, ly], [0.5 + dx, ly], [0.5, tip]])
        if rng.random() < 0.3:
            # a shoulder where the lobe meets the point (some drawings have one)
            base = ly + (0.06 if suit == "h" else -0.06)
            poly([[0.5 - dx - r, base], [0.5 + dx + r, base], [0.5, tip]])
        if suit == "s":
            sw, top = u(0.06, 0.2), ly + r * u(0.2, 0.8)
            bottom = u(0.9, 0.99)
            poly([[0.5 - 0.04, top], [0.5 + 0.04, top], [0.5 + sw, bottom], [0.5 - sw, bottom]])
    elif suit == "c":
        r = u(0.17, 0.24)
        cy = u(0.22, 0.3)
        side_y = u(0.5, 0.6)
        dx = u(0.2, 0.3)
        circ(0.5, cy, r)
        circ(0.5 - dx, side_y, r * u(0.9, 1.05))
        circ(0.5 + dx, side_y, r * u(0.9, 1.05))
        circ(0.5, (cy + side_y) / 2 + 0.03, u(0.06, 0.14))
        sw, top = u(0.06, 0.2), side_y - 0.05
        bottom = u(0.9, 0.99)
        poly([[0.5 - 0.04, top], [0.5 + 0.04, top], [0.5 + sw, bottom], [0.5 - sw, bottom]])
    return img


TTF_SHARE = 0.9  # of the rank glyphs, written in an outline font when the `train` extra's are installed
_SKIP_FONTS = (
    "Sym",
    "NonUni",
    "LastResort",
    "cmex",
    "cmmi",
    "cmsy",
    "cmti",
    "Display",
    "Thin",
    "ExtraLight",
    "It",
    "Oblique",
)


@lru_cache(maxsize=1)
def ttf_fonts() -> tuple[str, ...]:
    """Outline fonts to write rank glyphs in (sans, serif, mono, condensed; many weights): the ones
    the `train` extra installs (matplotlib's DejaVu, STIX and Computer Modern; the font-* packages'
    Roboto, Source Sans, Lato, Caladea, Fjalla One), found where pip put them. Empty without them
    or without Pillow: the Hershey fonts alone are used."""
    try:
        import PIL.ImageFont  # noqa: F401
    except ImportError:
        return ()
    dirs = []
    for name in (
        "matplotlib",
        "font_roboto",
        "font_source_sans_pro",
        "font_lato",
        "font_caladea",
        "font_fjallaone",
    ):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin:
            dirs.append(Path(spec.origin).parent)
    found = {p.name: p for d in dirs for p in sorted(d.rglob("*.ttf"))}  # (one file per name)
    return tuple(str(p) for n, p in sorted(found.items()) if not any(k in n for k in _SKIP_FONTS))


def _ttf_canvas(text: str, path: str, rng: np.random.Generator) -> np.ndarray:
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(path, 120)
    img = Image.new("L", (420, 220), 0)
    draw = ImageDraw.Draw(img)
    stroke = int(rng.integers(0, 5)) if rng.random() < 0.4 else 0  # faux bold
    draw.text((30, 20), text, font=font, fill=255, stroke_width=stroke, stroke_fill=255)
    return np.asarray(img)


def rank_mask(text: str, height: int, rng: np.random.Generator) -> np.ndarray:
    """The rank written `height` px tall in a Hershey font or (TTF_SHARE, when installed) an
    outline font, random weight, width and slant."""
    fonts = ttf_fonts()
    if fonts and rng.random() < TTF_SHARE:
        canvas = _ttf_canvas(text, fonts[int(rng.integers(len(fonts)))], rng)
    else:
        font = int(rng.choice(FONTS))
        thick = int(rng.integers(1, 5))
        canvas = np.zeros((200, 300), np.uint8)
        cv2.putText(canvas, text, (20, 150), font, 3.0, 255, thick * 3, cv2.LINE_AA)
    ys, xs = np.nonzero(canvas > 100)
    g = canvas[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    shear = rng.uniform(-0.2, 0.2)
    gh, gw = g.shape
    m = np.float32([[1, shear, max(0.0, -shear * gh)], [0, 1, 0]])
    g = cv2.warpAffine(g, m, (gw + int(abs(shear) * gh) + 1, gh))
    width = height * (g.shape[1] / g.shape[0]) * rng.uniform(0.75, 1.25)
    if len(text) == 2:
        width *= rng.uniform(0.8, 1.0)
    return cv2.resize(g, (max(2, round(width)), height), interpolation=cv2.INTER_AREA)


def _paint(card: np.ndarray, mask: np.ndarray, x: int, y: int, colour) -> None:
    h, w = mask.shape
    H, W = card.shape[:2]
    x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, W), min(y + h, H)
    if x1 <= x0 or y1 <= y0:
        return
    a = mask[y0 - y : y1 - y, x0 - x : x1 - x].astype(np.float32)[:, :, None] / 255.0
    region = card[y0:y1, x0:x1]
    card[y0:y1, x0:x1] = region * (1 - a) + np.array(colour, np.float32) * a


def make_card(code: str, rng: np.random.Generator) -> np.ndarray:
    """One synthetic card face, BGR float32, CANON size x SS, upright."""
    rank, suit = code[0], code[1]
    W, H = CANON_W * SS, CANON_H * SS
    paper = rng.uniform(225, 255)
    card = np.full((H, W, 3), paper, np.float32)
    if suit in "hd":
        colour = (rng.uniform(0, 70), rng.uniform(0, 60), rng.uniform(150, 230))
    else:
        g = rng.uniform(0, 60)
        colour = (g, g, g)
    # corner index: rank, the suit symbol under it
    rh = rng.uniform(8.0, 18.0)
    glyph = rank_mask(RANK_TEXT.get(rank, rank), int(rh * SS), rng)
    ss = int(rh * rng.uniform(0.5, 1.05) * SS)
    sym = suit_mask(suit, ss, rng)
    gx = int(rng.uniform(1.5, 7.0) * SS)
    gy = int(rng.uniform(2.0, 8.0) * SS)
    cx = gx + glyph.shape[1] / 2 + rng.uniform(-1.5, 1.5) * SS
    sx = int(max(SS, cx - ss / 2))
    sy = gy + glyph.shape[0] + int(rng.uniform(0.8, 4.0) * SS)
    corner = np.zeros((H, W), np.uint8)
    for m, x, y in ((glyph, gx, gy), (sym, sx, sy)):
        h, w = m.shape
        corner[y : y + h, x : x + w] = np.maximum(corner[y : y + h, x : x + w], m[: H - y, : W - x])
    both = np.maximum(corner, corner[::-1, ::-1])
    _paint(card, both, 0, 0, colour)
    n = {"A": 1, "T": 10}.get(rank, int(rank) if rank.isdigit() else 0)
    if n == 1:
        size = int(rng.uniform(0.22, 0.55) * W)
        _paint(card, suit_mask(suit, size, rng), (W - size) // 2, (H - size) // 2, colour)
    elif n:
        size = int(rng.uniform(0.14, 0.22) * W)
        pip = suit_mask(suit, size, rng)  # one drawing for all the pips of a card
        for px, py in PIP_LAYOUTS[n]:
            px = 0.5 + (px - 0.5) * rng.uniform(0.95, 1.15)
            py = 0.5 + (py - 0.5) * rng.uniform(0.9, 1.05)
            m = pip[::-1, ::-1] if py > 0.5 else pip
            _paint(card, m, int(px * W - size / 2), int(py * H - size / 2), colour)
    else:
        _court_picture(card, rank, suit, colour, rng)
    return card


def _court_picture(card, rank, suit, colour, rng) -> None:
    """A made-up court picture: a framed area of coloured patches and dark lines, suit symbols."""
    H, W = card.shape[:2]
    x0, y0 = int(rng.uniform(0.17, 0.28) * W), int(rng.uniform(0.1, 0.18) * H)
    x1, y1 = W - x0, H - y0
    base = rng.uniform(60, 240, 3)
    card[y0:y1, x0:x1] = base
    for _ in range(int(rng.integers(6, 20))):
        c = tuple(float(v) for v in rng.uniform(20, 240, 3))
        cx, cy = int(rng.uniform(x0, x1)), int(rng.uniform(y0, (y0 + y1) / 2))
        ax, ay = int(rng.uniform(0.03, 0.2) * W), int(rng.uniform(0.02, 0.12) * H)
        cv2.ellipse(card, (cx, cy), (ax, ay), float(rng.uniform(0, 180)), 0, 360, c, -1, cv2.LINE_AA)
        cv2.ellipse(card, (W - cx, H - cy), (ax, ay), 0, 0, 360, c, -1, cv2.LINE_AA)
    for _ in range(int(rng.integers(0, 12))):
        p = (int(rng.uniform(x0, x1)), int(rng.uniform(y0, y1)))
        q = (int(rng.uniform(x0, x1)), int(rng.uniform(y0, y1)))
        cv2.line(card, p, q, (20, 20, 20), int(rng.integers(2, 8)), cv2.LINE_AA)
    cv2.rectangle(
        card, (x0, y0), (x1, y1), tuple(float(v) for v in rng.uniform(0, 120, 3)), int(rng.integers(2, 10))
    )
    if rng.random() < 0.6:
        size = int(rng.uniform(0.1, 0.2) * W)
        m = suit_mask(suit, size, rng)
        _paint(card, m, x0 + int(0.04 * W), y0 + int(0.03 * H), colour)
        _paint(card, m[::-1, ::-1], x1 - int(0.04 * W) - size, y1 - int(0.03 * H) - size, colour)


def rounded_card_mask(w: int, h: int, r: int) -> np.ndarray:
    """255 inside a w x h card with corners rounded to radius r, 0 outside: pasting a card image
    through it leaves the felt showing at the corners, as a real card does."""
    a = np.zeros((h, w), np.uint8)
    cv2.rectangle(a, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(a, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(a, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return a


def camera_view(card: np.ndarray, rng: np.random.Generator, felt=None) -> np.ndarray:
    """The card as a camera sees it (small, blurred, noisy, lit unevenly), warped back upright to
    CANON size with an outline known to about a pixel, as detection does."""
    H, W = card.shape[:2]
    cw = rng.uniform(55, 100)
    ch = cw * H / W
    margin = 8
    fw, fh = int(cw + 2 * margin), int(ch + 2 * margin)
    felt = rng.uniform(20, 140, 3) if felt is None else np.asarray(felt, np.float32)
    # the card with rounded corners pasted on the felt, small
    alpha = rounded_card_mask(W, H, int(rng.uniform(0.04, 0.09) * W))
    ang = rng.uniform(-0.3, 0.3)
    src = np.float32([[0, 0], [W, 0], [W, H], [0, H]])
    c, s = math.cos(ang), math.sin(ang)
    centre = np.array([fw / 2, fh / 2])
    rect = np.array([[-cw / 2, -ch / 2], [cw / 2, -ch / 2], [cw / 2, ch / 2], [-cw / 2, ch / 2]])
    dst = (rect @ np.array([[c, s], [-s, c]]) + centre).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    big = np.dstack([card, alpha.astype(np.float32)])
    # area-average by drawing at 4x then shrinking
    m4 = np.diag([4.0, 4.0, 1.0]) @ m
    warped = cv2.warpPerspective(big, m4, (fw * 4, fh * 4), flags=cv2.INTER_LINEAR)
    warped = cv2.resize(warped, (fw, fh), interpolation=cv2.INTER_AREA)
    a = np.clip(warped[:, :, 3:4] / 255.0, 0, 1)
    frame = warped[:, :, :3] * a + felt * (1 - a)
    # light: brightness, tint, a gradient across the card
    yy, xx = np.mgrid[0:fh, 0:fw].astype(np.float32)
    la = rng.uniform(0, 2 * math.pi)
    grad = 1 + rng.uniform(0, 0.12) * ((xx / fw - 0.5) * math.cos(la) + (yy / fh - 0.5) * math.sin(la))
    gain = rng.uniform(0.7, 1.12) * grad[:, :, None] * rng.uniform(0.9, 1.08, 3)
    frame = frame * gain
    frame = cv2.GaussianBlur(frame, (0, 0), rng.uniform(0.3, 1.4))
    frame += rng.normal(0, rng.uniform(1.0, 5.0), frame.shape)
    frame = np.clip(frame, 0, 255).astype(np.uint8)
    # warp back from a slightly wrong outline
    q = dst + rng.normal(0, 0.6, dst.shape).astype(np.float32)
    back = cv2.getPerspectiveTransform(
        q.astype(np.float32), np.float32([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]])
    )
    canon = cv2.warpPerspective(
        frame, back, (CANON_W, CANON_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    if rng.random() < 0.5:
        canon = np.ascontiguousarray(canon[::-1, ::-1])
    return canon


def synthetic_card(code: str, rng: np.random.Generator) -> np.ndarray:
    return camera_view(make_card(code, rng), rng)


def deck_card(image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A real deck's card image (BGR or BGRA, any size) through the same simulated camera."""
    if image.shape[2] == 4:
        a = image[:, :, 3:4].astype(np.float32) / 255.0
        image = image[:, :, :3] * a + 255.0 * (1 - a)
    card = cv2.resize(image.astype(np.float32), (CANON_W * SS, CANON_H * SS), interpolation=cv2.INTER_LINEAR)
    return camera_view(card, rng)
