"""The card detector network: every card in a picture, on any background, in one pass of a small CNN.

Why: the felt stage (`vision.detect`) needs a table of one colour, and the proposals of
`vision.detect_quads` need a card's whole outline or two whole sides; real photographs (wood grain,
a bed sheet, granite, a white card on a pale counter, fans and piles) defeat both often. A network
trained on thousands of synthetic scenes over real textures (`vision.cardnet_train`,
`vision.cardnet_scenes`) learns what a card looks like instead.

What it predicts, on a grid of stride 4 over the picture: how likely a card's centre lies in each
cell (`HEAT`), the centre's offset inside the cell (`OFFSET`), the card's two half-axes -- centre to
the middle of a short side (long half-axis) and to the middle of a long side (short half-axis) --
each as a log length and its doubled angle (a card turned half round is the same card, so the angle
is learnt as (cos 2a, sin 2a)), and whether a card covers the cell (`MASK`, a help to learning). The
four corners are c +- L +- S: a parallelogram, which covers cards seen at a slant and photos
squeezed to a square.

Run by OpenCV's DNN module on the exported ONNX file (no torch at run time): once on the picture
shrunk to at most LONG_SIDE px and once more at a quarter of that, where a card filling a close-up
photo becomes small enough to see whole; each level keeps the cards of the sizes it was trained
for, then duplicates are merged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.onnx_model import OnnxModel
from vision.polygons import iou as polygon_iou

WEIGHTS = Path(__file__).with_name("cardnet.onnx")
STRIDE = 4
# output channels
HEAT, OFF_X, OFF_Y, L_LOG, L_COS, L_SIN, S_LOG, S_COS, S_SIN, MASK = range(10)
CHANNELS = 10
LONG_SIDE = 640  # px: the finest level's picture
LEVELS = 3  # pictures looked at, each LEVEL_STEP the size of the one before
LEVEL_STEP = 0.5
SIZE_RANGE = (7.0, 140.0)  # card short side, px of the network's input, that training covered
LEVEL_SPAN = (28.0, 80.0)  # short side, px of a level's input, of the cards that level keeps (the finest
# keeps the smaller ones too, the coarsest the bigger)
PEAK = 0.3  # a cell's heat at least this, and the highest of its 3 x 3, is a card's centre
MERGE_IOU = 0.5  # two finds overlapping this much are one card


@dataclass
class NetCard:
    corners: np.ndarray  # 4 x 2 float, image px, in order around
    score: float  # the centre cell's heat (how sure the network is)


class CardNet:
    """The network loaded once (`vision.onnx_model`: a net per thread); `find(frame)` returns the
    cards it sees."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else WEIGHTS
        self.model = OnnxModel(self.path, "card network")

    def outputs(self, image: np.ndarray) -> np.ndarray:
        """The raw maps (CHANNELS x H/4 x W/4) for a BGR picture whose sides are multiples of 32."""
        blob = cv2.dnn.blobFromImage(image, 1 / 255.0, swapRB=False, mean=(127.5, 127.5, 127.5))
        return self.model.forward(blob)[0]

    def find(self, frame: np.ndarray, long_side: int = LONG_SIDE, levels: int = LEVELS) -> list[NetCard]:
        """The cards in a BGR frame, in its px. The picture is looked at on `levels` sizes, each half
        the one before, coarsest first; each level keeps the cards of the sizes it sees best
        (LEVEL_SPAN), so a card is found where it is 28-80 px across whatever the camera. A small find
        lying on a card a coarser level found several times bigger is that card's pip or index (one
        deck's cards are one size), and is dropped."""
        h, w = frame.shape[:2]
        f0 = min(1.0, long_side / max(h, w))
        scales = [f0 * LEVEL_STEP**k for k in range(levels) if max(h, w) * f0 * LEVEL_STEP**k >= 64]
        found: list[NetCard] = []
        big: list[NetCard] = []
        for level in reversed(range(len(scales))):
            f = scales[level]
            small = (
                frame
                if f == 1.0
                else cv2.resize(
                    frame, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA
                )
            )
            cards = decode(self.outputs(pad32(small)), small.shape[1], small.shape[0])
            lo = LEVEL_SPAN[0] if level > 0 else 0.0
            hi = LEVEL_SPAN[1] if level + 1 < len(scales) else math.inf
            for c in cards:
                short = card_short_side(c.corners)
                if not lo <= short <= hi:
                    continue
                card = NetCard(c.corners / f, c.score)
                if any(_lies_on(card, b) for b in big):
                    continue
                big.append(card)
                found.append(card)
        return merge(found)


def load_cardnet(path: str | Path | None = None) -> CardNet | None:
    """The network at `path` (default: the shipped one); None when the default is not there."""
    if path is None and not WEIGHTS.is_file():
        return None
    return CardNet(path)


PIP_SHARE = 0.5  # a find narrower than this share of a card it lies on is that card's print


def _lies_on(small: NetCard, big: NetCard) -> bool:
    c = small.corners.mean(axis=0)
    inside = cv2.pointPolygonTest(big.corners.astype(np.float32), (float(c[0]), float(c[1])), False) >= 0
    return inside and card_short_side(small.corners) < PIP_SHARE * card_short_side(big.corners)


def pad32(image: np.ndarray) -> np.ndarray:
    """The picture with its right and bottom edges repeated to multiples of 32 (the network's
    coarsest stride)."""
    h, w = image.shape[:2]
    ph, pw = (-h) % 32, (-w) % 32
    if ph or pw:
        image = cv2.copyMakeBorder(image, 0, ph, 0, pw, cv2.BORDER_REPLICATE)
    return image


def decode(maps: np.ndarray, width: int, height: int, peak: float = PEAK) -> list[NetCard]:
    """The cards in the raw maps (sigmoid not yet applied to the heat), in px of the input picture;
    centres beyond width x height (the padding) are dropped."""
    heat = 1.0 / (1.0 + np.exp(-maps[HEAT]))
    top = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    ys, xs = np.nonzero((heat >= peak) & (heat >= top))
    out = []
    for y, x in zip(ys.tolist(), xs.tolist(), strict=True):
        cx = (x + 0.5 + maps[OFF_X, y, x]) * STRIDE
        cy = (y + 0.5 + maps[OFF_Y, y, x]) * STRIDE
        if not (0 <= cx < width and 0 <= cy < height):
            continue
        long_v = _axis(maps[L_LOG, y, x], maps[L_COS, y, x], maps[L_SIN, y, x])
        short_v = _axis(maps[S_LOG, y, x], maps[S_COS, y, x], maps[S_SIN, y, x])
        c = np.array([cx, cy])
        corners = np.array(
            [c - long_v - short_v, c - long_v + short_v, c + long_v + short_v, c + long_v - short_v]
        )
        out.append(NetCard(_clockwise(corners), float(heat[y, x])))
    return out


def _axis(log_len: float, c2: float, s2: float) -> np.ndarray:
    a = 0.5 * math.atan2(float(s2), float(c2))
    r = math.exp(float(log_len)) * STRIDE
    return np.array([r * math.cos(a), r * math.sin(a)])


def _clockwise(q: np.ndarray) -> np.ndarray:
    """Corners in order round the centre (clockwise on screen, y down)."""
    c = q.mean(axis=0)
    ang = np.arctan2(q[:, 1] - c[1], q[:, 0] - c[0])
    return q[np.argsort(ang)]


def card_short_side(q: np.ndarray) -> float:
    s = [float(np.linalg.norm(q[(i + 1) % 4] - q[i])) for i in range(4)]
    return min((s[0] + s[2]) / 2, (s[1] + s[3]) / 2)


def axes(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(centre, long half-axis, short half-axis) of a card's four corners in order around: the
    vectors from the centre to the middle of a short side and of a long side."""
    q = np.asarray(q, np.float64)
    c = q.mean(axis=0)
    a = (q[1] + q[2] - q[0] - q[3]) / 4  # centre -> middle of side 1-2
    b = (q[2] + q[3] - q[0] - q[1]) / 4  # centre -> middle of side 2-3
    return (c, a, b) if np.linalg.norm(a) >= np.linalg.norm(b) else (c, b, a)


_TS = np.linspace(0.15, 0.85, 15)  # where along a side its rim is looked for (clear of the round corners)
EDGE_SHARE = 0.6  # the outermost step at least this share of the strongest is the rim (not a print line)
MIN_STEP = 8.0  # grey levels: a weaker step is no rim


def refine(gray: np.ndarray, corners: np.ndarray, reach: float | None = None) -> np.ndarray:
    """The network's corners (a few px off at full resolution: its grid is 4 px of a picture shrunk
    to 640) put on the card's rim: across each side, within `reach` px (default 8 % of the card's
    short side), the outermost strong grey step, followed inwards to its gradient's peak, is the rim; a line fitted through each side's rim
    points, the lines intersected. A side with too few points keeps its place; a result that moved a
    corner further than the reach, or changed a side's length by more than a fifth, is not trusted."""
    q = np.asarray(corners, np.float64)
    short = card_short_side(q)
    reach = max(2.0, 0.08 * short) if reach is None else reach
    c = q.mean(axis=0)
    offs = np.arange(-reach, reach + 0.01, 0.5)
    lines = []
    for k in range(4):
        a, b = q[k], q[(k + 1) % 4]
        t = (b - a) / max(np.linalg.norm(b - a), 1e-9)
        n = np.array([t[1], -t[0]])
        if np.dot(a - c, n) < 0:
            n = -n
        base = a + (b - a) * _TS[:, None]
        pts = base[:, None, :] + offs[None, :, None] * n[None, None, :]
        prof = cv2.remap(
            gray,
            pts[:, :, 0].astype(np.float32),
            pts[:, :, 1].astype(np.float32),
            cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REPLICATE,
        ).astype(np.float32)
        d = np.abs(np.diff(prof, axis=1))
        peak = d.max(axis=1)
        last = d.shape[1] - 1
        j = last - np.argmax((d >= EDGE_SHARE * peak[:, None])[:, ::-1], axis=1)
        rows = np.arange(len(d))
        for _ in range(4):  # from the outermost strong step inwards to its gradient's peak
            up = (j > 0) & (d[rows, np.maximum(j - 1, 0)] > d[rows, j])
            if not up.any():
                break
            j = j - up
        ok = peak >= MIN_STEP
        if ok.sum() < 5:
            lines.append((a, t))
            continue
        at = (offs[j] + offs[np.minimum(j + 1, len(offs) - 1)]) / 2
        edge = (base + at[:, None] * n)[ok]
        vx, vy, x0, y0 = cv2.fitLine(edge.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = q.copy()
    for k in range(4):
        (p1, d1), (p2, d2) = lines[(k - 1) % 4], lines[k]
        den = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(den) < 1e-3:
            return q
        s = ((p2[0] - p1[0]) * d2[1] - (p2[1] - p1[1]) * d2[0]) / den
        out[k] = p1 + s * d1
    if np.abs(out - q).max() > reach + 1.5:
        return q
    for k in range(4):
        was = np.linalg.norm(q[(k + 1) % 4] - q[k])
        if abs(np.linalg.norm(out[(k + 1) % 4] - out[k]) - was) > 0.2 * was + 1.0:
            return q
    return out


def merge(cards: list[NetCard], iou: float = MERGE_IOU) -> list[NetCard]:
    """The surest of each group of finds that overlap more than `iou`."""
    kept: list[NetCard] = []
    for c in sorted(cards, key=lambda c: -c.score):
        if all(polygon_iou(c.corners, k.corners) <= iou for k in kept):
            kept.append(c)
    return kept
