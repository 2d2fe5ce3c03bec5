"""Scene renderer for the simulated overhead camera: card images on felt, with ground truth.

A `TableScene` says what lies on the table (cards face up or down, chips, the dealer button,
calibration markers) in table millimetres (origin at the centre, y down, see vision.layout), and
how the camera sees it (felt colour, lighting gradient, blur, noise, perspective). `render()` turns
it into a BGR frame plus the truth: every card's corners in pixels, face, code and how much of it
is visible, the button, the chips. Everything is deterministic given the seed.

Card images come from the GPL decks the repository carries in data/decks (with their licence; found
through controller/datapaths.py, `SMART_TABLE_DECKS` names another folder) and read by vision.decks at
run time.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

# deck_dir and decks_root are re-exported: the simulator's callers find decks here too
from controller.datapaths import deck_dir as deck_dir
from controller.datapaths import deck_files
from controller.datapaths import decks_root as decks_root
from controller.rules.cards import ALL_CODES
from vision.decks import decode_card, read_deck
from vision.layout import (
    BET_RADIUS,
    BURN_RECT,
    CARD_SIZE_MM,
    MUCK_RECT,
    SEAT_CARD_RADIUS,
    SIM_TABLE_MM,
    marker_points,
    seat_angle,
)

DECK_NAMES = ("anglo_poker", "tango")

FELTS = {
    "green": (40, 110, 30),
    "blue": (120, 70, 20),
    "red": (35, 30, 130),
    "burgundy": (45, 25, 85),
    "grey": (95, 95, 90),
    "black": (28, 28, 30),
    "teal": (100, 100, 20),
    "purple": (90, 35, 75),
}
CHIP_COLOURS = {
    "white": ((232, 232, 232), (180, 60, 30)),
    "red": ((40, 40, 190), (235, 235, 235)),
    "blue": ((170, 70, 20), (235, 235, 235)),
    "green": ((50, 140, 40), (235, 235, 235)),
    "black": ((30, 30, 30), (235, 235, 235)),
    "yellow": ((40, 200, 225), (60, 60, 60)),
    "purple": ((120, 40, 110), (220, 220, 220)),
}


# -- deck images -------------------------------------------------------------------------------
# Where decks are is the data's (controller.datapaths); reading them is vision's (vision.decks).
@lru_cache(maxsize=8)
def load_deck(deck: str) -> dict[str, np.ndarray]:
    """code -> BGRA image for the 52 cards plus 'back'. Raises FileNotFoundError naming what is missing.
    `drawn` is the code-drawn held-out deck of the benchmark (hil/decks/drawn.py)."""
    if deck == "drawn":
        from hil.decks.drawn import make_deck

        return make_deck()
    return read_deck(deck)


class PackedDeck(Mapping[str, np.ndarray]):
    """A deck held as its files' bytes (PNG for the code-drawn deck) and decoded card by card as it is drawn.

    Why: the simulated table runs inside the service, whose memory is a goal of its own (issue 12:
    at most 150 MB with the model loaded); 53 decoded cards are ~19 MB, their files ~2 MB. The
    pixels drawn are the same as `load_deck`'s; a frame costs a few decodes more (~2 ms a card)."""

    def __init__(self, deck: str) -> None:
        self._files: dict[str, tuple[bytes, Path]] = {}
        if deck == "drawn":  # drawn in code, no files: packed as lossless PNG
            for code, img in load_deck.__wrapped__(deck).items():  # not kept decoded in load_deck's cache
                _, buf = cv2.imencode(".png", img, [cv2.IMWRITE_PNG_COMPRESSION, 1])
                self._files[code] = (buf.tobytes(), Path(f"drawn/{code}.png"))
        else:
            self._files = {code: (f.read_bytes(), f) for code, f in deck_files(deck).items()}

    def __getitem__(self, code: str) -> np.ndarray:
        return decode_card(*self._files[code])

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


@lru_cache(maxsize=4)
def packed_deck(deck: str) -> PackedDeck:
    """The deck `load_deck` would give, packed (see PackedDeck)."""
    return PackedDeck(deck)


# -- scene description -------------------------------------------------------------------------
@dataclass
class CardPlacement:
    """One card on the table. angle_deg turns the card image (0 = upright) clockwise."""

    center: tuple[float, float]
    angle_deg: float
    code: str
    face_up: bool = False
    seat: int | None = None
    zone: str | None = None  # 'seat', 'board', 'muck'


@dataclass
class Chip:
    center: tuple[float, float]
    colour: str = "red"
    radius_mm: float = 20.0


@dataclass
class DealerButton:
    center: tuple[float, float]
    radius_mm: float = 30.0
    colour: tuple[int, int, int] = (240, 240, 240)
    text_colour: tuple[int, int, int] = (20, 20, 20)
    label: str = "DEALER"
    angle_deg: float = 0.0


@dataclass
class Camera:
    """How the frame is taken: light, optics and sensor."""

    light_gradient: float = 0.25  # +-fraction of brightness across the frame
    light_angle_deg: float = 30.0
    vignette: float = 0.2
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # per-channel gain (B, G, R)
    brightness: float = 1.0
    blur_sigma: float = 0.8  # px at 1920 wide, scaled with the frame
    noise_sigma: float = 3.0  # grey levels
    perspective: float = 0.0  # fraction of the width the top edge is pulled in (keystone)


@dataclass
class TableScene:
    seats: int = 6
    deck: str = "anglo_poker"
    felt: tuple[int, int, int] = FELTS["green"]
    cards: list[CardPlacement] = field(default_factory=list)
    chips: list[Chip] = field(default_factory=list)
    button: DealerButton | None = None
    camera: Camera = field(default_factory=Camera)
    table_size: tuple[float, float] = SIM_TABLE_MM
    card_size: tuple[float, float] = CARD_SIZE_MM
    markers: bool = False  # draw the four ArUco calibration markers
    packed: bool = False  # draw the deck from PNG bytes (packed_deck): less memory, same pixels


# -- positions on the table --------------------------------------------------------------------
def seat_card_pose(scene_seats: int, seat: int, index: int, table_size=SIM_TABLE_MM, jitter=None):
    """Centre and angle of a seat's index-th hole card (index 1 overlaps index 0)."""
    a = seat_angle(seat, scene_seats)
    r = SEAT_CARD_RADIUS
    cx, cy = r * table_size[0] / 2 * math.cos(a), r * table_size[1] / 2 * math.sin(a)
    # tangent (clockwise) and inward radial directions
    t = np.array([-math.sin(a), math.cos(a)])
    inward = -np.array([math.cos(a), math.sin(a)])
    angle = math.degrees(a) - 90.0  # long side radial
    c = np.array([cx, cy]) - 0.22 * CARD_SIZE_MM[0] * t
    if index >= 1:
        c = c + 0.5 * CARD_SIZE_MM[0] * t + 0.12 * CARD_SIZE_MM[1] * inward
        angle += 9.0
    if jitter is not None:
        c = c + jitter.normal(0, 4.0, 2)
        angle += float(jitter.normal(0, 4.0))
    return (float(c[0]), float(c[1])), angle


def board_card_pose(index: int) -> tuple[tuple[float, float], float]:
    pitch = CARD_SIZE_MM[0] + 10.0
    return ((index - 2) * pitch, 0.0), 0.0


def muck_pose() -> tuple[tuple[float, float], float]:
    x0, y0, x1, y1 = MUCK_RECT
    return ((x0 + x1) / 2, (y0 + y1) / 2), 90.0


def button_pose(seats: int, seat: int, table_size=SIM_TABLE_MM) -> tuple[float, float]:
    a = seat_angle(seat, seats) + 0.33 * 2 * math.pi / seats
    r = 0.62
    return (r * table_size[0] / 2 * math.cos(a), r * table_size[1] / 2 * math.sin(a))


def fold_pose(k: int, rng: np.random.Generator | None = None) -> tuple[tuple[float, float], float]:
    """Where the k-th hand folded this deal lands on the muck: a loose pile, each hand a little
    apart from the last (as players toss them), so the camera sees that something new landed."""
    x0, y0, x1, y1 = MUCK_RECT
    xs = (-70.0, 60.0, -20.0, 95.0, -100.0, 25.0, -55.0, 80.0, 0.0)
    ys = (-10.0, 12.0, 20.0, -15.0, 15.0, -20.0, 5.0, 22.0, -5.0)
    cx, cy = (x0 + x1) / 2 + xs[k % len(xs)], (y0 + y1) / 2 + ys[k % len(ys)]
    angle = 90.0 + (float(rng.uniform(-25, 25)) if rng is not None else 12.0 * ((k % 5) - 2))
    return (cx, cy), angle


def burn_pose(k: int) -> tuple[tuple[float, float], float]:
    """The k-th burn card of the hand on the burn spot: sideways, one below the other, so each
    shows as a card of its own (a pile hides how many it holds)."""
    x0, y0, x1, y1 = BURN_RECT
    return ((x0 + x1) / 2, (y0 + y1) / 2 + 68.0 * ((k % 3) - 1)), 90.0 + 4.0 * (k // 3)


def bet_pose(seats: int, seat: int, k: int, table_size=SIM_TABLE_MM) -> tuple[float, float]:
    """The k-th chip pushed into a seat's betting area: rows of three side by side, so each shows."""
    a = seat_angle(seat, seats)
    c = np.array([BET_RADIUS * table_size[0] / 2 * math.cos(a), BET_RADIUS * table_size[1] / 2 * math.sin(a)])
    tangent = np.array([-math.sin(a), math.cos(a)])
    inward = -c / max(float(np.linalg.norm(c)), 1.0)
    p = c + 44.0 * ((k % 3) - 1) * tangent + 22.0 * ((k // 3) % 2) * inward
    return (float(p[0]), float(p[1]))


def pot_pose(k: int) -> tuple[float, float]:
    """The k-th chip of the pot, gathered below the board."""
    return (-150.0 + 44.0 * (k % 8), 112.0 + 30.0 * ((k // 8) % 2))


def chip_pose(seats: int, seat: int, k: int, table_size=SIM_TABLE_MM) -> tuple[float, float]:
    a = seat_angle(seat, seats) - 0.3 * 2 * math.pi / seats + 0.05 * k
    r = 0.6 + 0.05 * (k % 2)
    return (r * table_size[0] / 2 * math.cos(a), r * table_size[1] / 2 * math.sin(a))


def card_corners_mm(card: CardPlacement, size=CARD_SIZE_MM) -> np.ndarray:
    """Corners in table mm, clockwise from the card image's top-left."""
    w, h = size
    base = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]])
    th = math.radians(card.angle_deg)
    rot = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])
    return base @ rot.T + np.asarray(card.center)


# -- rendering ---------------------------------------------------------------------------------
def _table_to_px(table_size, width, height) -> np.ndarray:
    sx, sy = width / table_size[0], height / table_size[1]
    return np.array([[sx, 0, width / 2], [0, sy, height / 2], [0, 0, 1]], dtype=np.float64)


def _perspective(width, height, amount) -> np.ndarray:
    src = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    d = amount * width
    dst = np.float32([[d, d * 0.5], [width - d, d * 0.5], [width, height], [0, height]])
    return cv2.getPerspectiveTransform(src, dst).astype(np.float64)


def _apply(h, pts) -> np.ndarray:
    a = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.hstack([a, np.ones((len(a), 1))]) @ h.T
    return q[:, :2] / q[:, 2:3]


def _paste_rgba(canvas: np.ndarray, img: np.ndarray, dst: np.ndarray) -> None:
    """Warp a BGRA image onto canvas so its corners land on dst (4x2, clockwise from top-left)."""
    h, w = canvas.shape[:2]
    x0, y0 = np.floor(dst.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(dst.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    side = max(np.linalg.norm(dst[1] - dst[0]), np.linalg.norm(dst[3] - dst[0]), 8.0)
    scale = min(1.0, 1.6 * side / max(img.shape[:2]))
    if scale < 1.0:  # pre-shrink so the warp does not alias
        img = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    ih, iw = img.shape[:2]
    src = np.float32([[0, 0], [iw, 0], [iw, ih], [0, ih]])
    m = cv2.getPerspectiveTransform(src, (dst - [x0, y0]).astype(np.float32))
    warped = cv2.warpPerspective(img, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderValue=(0, 0, 0, 0))
    a = warped[:, :, 3:4].astype(np.float32) / 255.0
    roi = canvas[y0:y1, x0:x1]
    roi[:] = (warped[:, :, :3] * a + roi * (1 - a)).astype(canvas.dtype)


def _draw_chip(canvas, center, r, colour: str, rng) -> None:
    base, insert = CHIP_COLOURS[colour]
    c = (round(center[0] * 16), round(center[1] * 16))
    ri = round(r * 16)
    cv2.circle(canvas, c, ri, base, -1, cv2.LINE_AA, shift=4)
    n = 6 if rng.random() < 0.5 else 8
    phase = rng.uniform(0, 360)
    for k in range(n):
        a0 = phase + k * 360 / n
        cv2.ellipse(
            canvas,
            c,
            (int(ri * 0.87), int(ri * 0.87)),
            0,
            a0,
            a0 + 160 / n,
            insert,
            max(2, int(r * 0.22)),
            cv2.LINE_AA,
            shift=4,
        )
    cv2.circle(canvas, c, int(ri * 0.66), insert, max(1, int(r * 0.06)), cv2.LINE_AA, shift=4)
    cv2.circle(canvas, c, ri, tuple(int(v * 0.7) for v in base), max(1, int(r * 0.05)), cv2.LINE_AA, shift=4)


def _button_patch(btn: DealerButton, r_px: float) -> tuple[np.ndarray, np.ndarray]:
    size = math.ceil(r_px * 2 + 4)
    patch = np.zeros((size, size, 3), np.uint8)
    mask = np.zeros((size, size), np.uint8)
    c = (size / 2, size / 2)
    ci = (int(c[0] * 16), int(c[1] * 16))
    cv2.circle(patch, ci, int(r_px * 16), btn.colour, -1, cv2.LINE_AA, shift=4)
    cv2.circle(mask, ci, int(r_px * 16), 255, -1, cv2.LINE_AA, shift=4)
    rim = tuple(int(v * 0.75) for v in btn.colour)
    cv2.circle(patch, ci, int(r_px * 0.93 * 16), rim, max(1, int(r_px * 0.04)), cv2.LINE_AA, shift=4)
    _draw_label(patch, btn, r_px, c)
    m = cv2.getRotationMatrix2D(c, -btn.angle_deg, 1.0)
    patch = cv2.warpAffine(patch, m, (size, size), flags=cv2.INTER_LINEAR)
    mask = cv2.warpAffine(mask, m, (size, size), flags=cv2.INTER_LINEAR)
    return patch, mask


LABEL_FONT_SCALE = 4.0  # the size the lettering is drawn at before it is shrunk onto the button


def _draw_label(patch: np.ndarray, btn: DealerButton, r_px: float, c: tuple[float, float]) -> None:
    """The button's lettering, drawn large and shrunk onto the button. A few pixels wide on a 640x360
    frame, text drawn at its own size is at the mercy of OpenCV's rasteriser (5.1 draws it a third
    lighter than 5.0, and the button stopped looking like one); drawn large, the glyphs agree."""
    font = cv2.FONT_HERSHEY_DUPLEX
    out_w = r_px * (1.3 if len(btn.label) > 1 else 0.8)
    thick = max(1, int(r_px / (14 if len(btn.label) > 1 else 7)))
    small_scale = out_w / cv2.getTextSize(btn.label, font, 1.0, thick)[0][0]
    stroke = max(1, round(thick * min(small_scale, 3) / 1.5))  # in the button's pixels
    big_thick = max(1, round(stroke * LABEL_FONT_SCALE / small_scale))
    (tw, th), base = cv2.getTextSize(btn.label, font, LABEL_FONT_SCALE, big_thick)
    pad = big_thick + 2
    ink = np.zeros((th + base + 2 * pad, tw + 2 * pad), np.uint8)
    cv2.putText(ink, btn.label, (pad, pad + th), font, LABEL_FONT_SCALE, 255, big_thick, cv2.LINE_AA)
    ys, xs = np.nonzero(ink)
    ink = ink[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    w = max(1, round(out_w))
    h = max(1, round(w * ink.shape[0] / ink.shape[1]))
    alpha = cv2.resize(ink, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32)[:, :, None] / 255.0
    x0, y0 = round(c[0] - w / 2), round(c[1] - h / 2)
    roi = patch[y0 : y0 + h, x0 : x0 + w]
    colour = np.array(btn.text_colour, np.float32)
    roi[:] = (roi * (1 - alpha) + colour * alpha).astype(np.uint8)


def _paste_patch(canvas, patch, mask, center) -> None:
    h, w = canvas.shape[:2]
    s = patch.shape[0]
    x0, y0 = round(center[0] - s / 2), round(center[1] - s / 2)
    cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x0 + s, w), min(y0 + s, h)
    if cx1 <= cx0 or cy1 <= cy0:
        return
    p = patch[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0]
    a = mask[cy0 - y0 : cy1 - y0, cx0 - x0 : cx1 - x0, None].astype(np.float32) / 255.0
    roi = canvas[cy0:cy1, cx0:cx1]
    roi[:] = (p * a + roi * (1 - a)).astype(canvas.dtype)


def _draw_markers(canvas, to_px, table_size) -> None:
    dictionary = cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50)
    side_mm = 70.0
    for mid, (x, y) in marker_points(table_size).items():
        q = _apply(to_px, [[x - side_mm / 2, y - side_mm / 2], [x + side_mm / 2, y + side_mm / 2]])
        s = round(q[1, 0] - q[0, 0])
        img = cv2.aruco.generateImageMarker(dictionary, mid, s)
        quiet = int(s * 0.2)
        x0, y0 = round(q[0, 0]), round(q[0, 1])
        cv2.rectangle(canvas, (x0 - quiet, y0 - quiet), (x0 + s + quiet, y0 + s + quiet), (255, 255, 255), -1)
        canvas[y0 : y0 + s, x0 : x0 + s] = img[:, :, None]


def render(scene: TableScene, width: int = 1920, height: int = 1080, seed: int = 0):
    """Render the scene. Returns (frame_bgr uint8, truth dict)."""
    rng = np.random.default_rng(seed)
    deck = packed_deck(scene.deck) if scene.packed else load_deck(scene.deck)
    to_px = _table_to_px(scene.table_size, width, height)
    cam = scene.camera
    kscale = width / 1920.0

    # felt with a faint fibre texture
    canvas = np.empty((height, width, 3), np.float32)
    canvas[:] = scene.felt
    tex = rng.normal(0, 1, (max(height // 8, 2), max(width // 8, 2), 1)).astype(np.float32)
    tex = cv2.resize(tex, (width, height), interpolation=cv2.INTER_LINEAR)
    canvas += (tex * 4.0)[:, :, None] if tex.ndim == 2 else tex * 4.0

    if scene.markers:
        _draw_markers(canvas, to_px, scene.table_size)

    # soft shadows under everything that lies on the felt
    shade = np.zeros((height, width), np.uint8)
    off = np.array([2.5, 3.5])
    cards_px = [_apply(to_px, card_corners_mm(c, scene.card_size)) for c in scene.cards]
    for q in cards_px:
        cv2.fillConvexPoly(
            shade, np.round((q + off * kscale * 1.5) * 4).astype(np.int32), 255, cv2.LINE_AA, shift=2
        )
    chip_px = []
    for chip in scene.chips:
        c = _apply(to_px, [chip.center])[0]
        r = chip.radius_mm * to_px[0, 0]
        chip_px.append((c, r))
        cv2.circle(shade, tuple(int(v) for v in c + off * kscale * 2), int(r), 255, -1, cv2.LINE_AA)
    if scene.button is not None:
        bc = _apply(to_px, [scene.button.center])[0]
        br = scene.button.radius_mm * to_px[0, 0]
        cv2.circle(shade, tuple(int(v) for v in bc + off * kscale * 2), int(br), 255, -1, cv2.LINE_AA)
    sk = int(6 * kscale) * 2 + 1
    shade_f = cv2.GaussianBlur(shade, (sk, sk), 0).astype(np.float32) / 255.0
    canvas *= (1.0 - 0.35 * shade_f)[:, :, None]

    for card, q in zip(scene.cards, cards_px, strict=True):
        _paste_rgba(canvas, deck[card.code] if card.face_up else deck["back"], q)
    for chip, (c, r) in zip(scene.chips, chip_px, strict=True):
        _draw_chip(canvas, c, r, chip.colour, rng)
    if scene.button is not None:
        patch, mask = _button_patch(scene.button, br)
        _paste_patch(canvas, patch, mask, bc)

    frame = np.clip(canvas, 0, 255).astype(np.uint8)
    warp = np.eye(3)
    if cam.perspective:
        warp = _perspective(width, height, cam.perspective)
        frame = cv2.warpPerspective(
            frame, warp, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )

    # lighting: linear gradient, vignette, tint (computed small, scaled up)
    gh, gw = 36, 64
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    xn, yn = (xx / (gw - 1)) * 2 - 1, (yy / (gh - 1)) * 2 - 1
    la = math.radians(cam.light_angle_deg)
    gain = cam.brightness * (1 + cam.light_gradient * (xn * math.cos(la) + yn * math.sin(la)) / 1.4)
    gain *= 1 - cam.vignette * (xn**2 + yn**2) / 2
    gain = cv2.resize(gain, (width, height), interpolation=cv2.INTER_LINEAR)
    out = frame.astype(np.float32) * gain[:, :, None] * np.array(cam.tint, np.float32)
    if cam.blur_sigma > 0:
        out = cv2.GaussianBlur(out, (0, 0), cam.blur_sigma * kscale)
    if cam.noise_sigma > 0:
        out += rng.normal(0, cam.noise_sigma, out.shape).astype(np.float32)
    frame = np.clip(out, 0, 255).astype(np.uint8)

    full = warp @ to_px
    truth = _truth(scene, full, width, height, cards_px, warp)
    return frame, truth


def _truth(scene: TableScene, full: np.ndarray, width: int, height: int, cards_px, warp) -> dict:
    # visibility: paint cards in z-order on a small id map
    f = 0.25
    ids = np.zeros((max(int(height * f), 1), max(int(width * f), 1)), np.int16)
    full_area = []
    for i, q in enumerate(cards_px):
        qq = _apply(warp, q)
        poly = np.round(qq * f * 4).astype(np.int32)
        single = np.zeros_like(ids, dtype=np.uint8)
        cv2.fillConvexPoly(single, poly, 1, shift=2)
        full_area.append(int(single.sum()))
        cv2.fillConvexPoly(ids, poly, i + 1, shift=2)
    counts = np.bincount(ids.ravel(), minlength=len(cards_px) + 1)
    cards = []
    for i, card in enumerate(scene.cards):
        corners = _apply(full, card_corners_mm(card, scene.card_size))
        cards.append(
            {
                "code": card.code,
                "face": "up" if card.face_up else "down",
                "corners": corners.round(2).tolist(),
                "center": corners.mean(axis=0).round(2).tolist(),
                "visible": round(counts[i + 1] / max(full_area[i], 1), 3),
                "seat": card.seat,
                "zone": card.zone,
            }
        )
    button = None
    if scene.button is not None:
        c = _apply(full, [scene.button.center])[0]
        e = _apply(full, [(scene.button.center[0] + scene.button.radius_mm, scene.button.center[1])])[0]
        button = {"center": c.round(2).tolist(), "radius": round(float(np.linalg.norm(e - c)), 2)}
    chips = []
    for chip in scene.chips:
        c = _apply(full, [chip.center])[0]
        e = _apply(full, [(chip.center[0] + chip.radius_mm, chip.center[1])])[0]
        chips.append(
            {
                "center": c.round(2).tolist(),
                "radius": round(float(np.linalg.norm(e - c)), 2),
                "colour": chip.colour,
            }
        )
    ends = _apply(full, [(0, 0), (scene.card_size[0], 0)])
    cw = np.linalg.norm(ends[1] - ends[0])
    return {
        "width": width,
        "height": height,
        "cards": cards,
        "button": button,
        "chips": chips,
        "table_to_image": full.tolist(),
        "card_width_px": round(float(cw), 2),
    }


# -- random scenes -----------------------------------------------------------------------------
def random_camera(rng: np.random.Generator, hard: bool = True) -> Camera:
    return Camera(
        light_gradient=float(rng.uniform(0.0, 0.45 if hard else 0.2)),
        light_angle_deg=float(rng.uniform(0, 360)),
        vignette=float(rng.uniform(0.0, 0.35 if hard else 0.15)),
        tint=tuple(float(v) for v in rng.uniform(0.9, 1.08, 3)),
        brightness=float(rng.uniform(0.8, 1.12)),
        blur_sigma=float(rng.uniform(0.3, 1.3 if hard else 0.8)),
        noise_sigma=float(rng.uniform(1.0, 5.0 if hard else 3.0)),
        perspective=float(rng.uniform(0.0, 0.04 if hard else 0.0)),
    )


def random_button(rng: np.random.Generator, center) -> DealerButton:
    coloured = rng.random() < 0.25
    colour = tuple(int(v) for v in rng.integers(30, 230, 3)) if coloured else (238, 238, 236)
    text = (245, 245, 245) if coloured and sum(colour) < 360 else (20, 20, 20)
    return DealerButton(
        center=center,
        radius_mm=float(rng.uniform(27, 33)),
        colour=colour,
        text_colour=text,
        label="DEALER" if rng.random() < 0.6 else "D",
        angle_deg=float(rng.uniform(0, 360)),
    )


def laid_out_deck(
    deck: str, codes: list[str], felt: str = "green", seed: int = 0, per_row: int = 13
) -> TableScene:
    """A deck laid face up for enrolment (vision.enroll_table): `codes` in rows of `per_row`, read
    top to bottom and left to right, a finger's width apart, each a few millimetres and degrees off
    as a hand lays them."""
    rng = np.random.default_rng(seed)
    scene = TableScene(seats=6, deck=deck, felt=FELTS[felt])
    rows = (len(codes) + per_row - 1) // per_row
    for k, code in enumerate(codes):
        r, c = divmod(k, per_row)
        x = (c - (per_row - 1) / 2) * 82.0 + rng.normal(0, 3)
        y = (r - (rows - 1) / 2) * 110.0 + rng.normal(0, 3)
        scene.cards.append(
            CardPlacement((float(x), float(y)), float(rng.normal(0, 2)), code, True, zone="board")
        )
    return scene


def random_scene(
    seed: int, seats: int | None = None, deck: str = "anglo_poker", hard: bool = True
) -> TableScene:
    """A table mid-hand: hole-card pairs (mostly face down), some exposed, a board, chips, the button."""
    rng = np.random.default_rng(seed)
    seats = seats or int(rng.integers(2, 11))
    codes = list(rng.permutation(ALL_CODES))
    scene = TableScene(
        seats=seats, deck=deck, felt=FELTS[rng.choice(list(FELTS))], camera=random_camera(rng, hard)
    )
    for s in range(1, seats + 1):
        if rng.random() < 0.15:
            continue
        n = 2 if rng.random() < 0.85 else 1
        up = rng.random() < 0.2
        for i in range(n):
            c, a = seat_card_pose(seats, s, i, scene.table_size, rng)
            scene.cards.append(
                CardPlacement(c, a, codes.pop(), face_up=up or rng.random() < 0.08, seat=s, zone="seat")
            )
        for k in range(int(rng.integers(0, 3))):
            scene.chips.append(
                Chip(
                    chip_pose(seats, s, k, scene.table_size),
                    colour=str(rng.choice(list(CHIP_COLOURS))),
                    radius_mm=float(rng.uniform(18.5, 21)),
                )
            )
    nb = int(rng.choice([0, 3, 4, 5]))
    for i in range(nb):
        c, a = board_card_pose(i)
        c = (c[0] + float(rng.normal(0, 3)), c[1] + float(rng.normal(0, 3)))
        scene.cards.append(CardPlacement(c, a + float(rng.normal(0, 3)), codes.pop(), True, zone="board"))
    # the pot: a few chips, white ones included, between the board and the muck
    for _ in range(int(rng.integers(0, 5))):
        c = (float(rng.uniform(-300, 300)), float(rng.uniform(95, 160)) * rng.choice([-1, 1]))
        if abs(c[1]) < 100 or (c[1] < 0 and abs(c[0]) < 180):
            continue
        scene.chips.append(
            Chip(c, colour=str(rng.choice(list(CHIP_COLOURS))), radius_mm=float(rng.uniform(18.5, 21)))
        )
    if rng.random() < 0.9:
        scene.button = random_button(
            rng, button_pose(seats, int(rng.integers(1, seats + 1)), scene.table_size)
        )
    return scene
