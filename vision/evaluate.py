"""Compare detections with a rendered frame's truth: the numbers the benchmark and tests report."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np


@dataclass
class Score:
    true_cards: int = 0
    found: int = 0  # true cards matched by a detection
    detections: int = 0
    false_cards: int = 0  # detections matching no true card
    face_right: int = 0
    up_cards: int = 0  # matched face-up cards
    read_right: int = 0
    read_none: int = 0
    # face-up cards with at least one corner index not covered by another card (readable at all)
    up_index_seen: int = 0
    read_right_index_seen: int = 0
    # misreads of cards whose detected outline is off by more than a quarter card width (a wrong
    # split of an overlapping blob or a board row): the detection's fault, not the reader's
    misread_outline_off: int = 0
    # found cards (read or not) whose outline is off by more than a quarter card width, and the sum
    # of every found card's worst corner error in card widths (outline precision, reader aside)
    outline_off: int = 0
    outline_error_cw: float = 0.0
    frames_with_button: int = 0
    button_found: int = 0
    button_false: int = 0  # a button reported where there is none (a chip, mostly)
    chips_as_button: int = 0
    chips_as_card: int = 0
    mistakes: list = field(default_factory=list)

    def add(self, other: Score) -> None:
        for k, v in other.__dict__.items():
            if isinstance(v, int | float):
                setattr(self, k, getattr(self, k) + v)
            else:
                getattr(self, k).extend(v)

    @property
    def recall(self) -> float:
        return self.found / max(self.true_cards, 1)

    @property
    def precision(self) -> float:
        return (self.detections - self.false_cards) / max(self.detections, 1)

    @property
    def face_accuracy(self) -> float:
        return self.face_right / max(self.found, 1)

    @property
    def reading_accuracy(self) -> float:
        return self.read_right / max(self.up_cards, 1)

    @property
    def reading_accuracy_index_seen(self) -> float:
        """Reading accuracy over the cards whose rank and suit can be seen in at least one corner."""
        return self.read_right_index_seen / max(self.up_index_seen, 1)

    @property
    def mean_outline_error(self) -> float:
        """Mean worst-corner error of the found cards' outlines, in card widths."""
        return self.outline_error_cw / max(self.found, 1)

    @property
    def button_rate(self) -> float:
        return self.button_found / max(self.frames_with_button, 1)


# where a corner index is printed, as fractions of the card (x across the short side, y down),
# sampled on a grid; the opposite corner's index is the same box turned half round
_INDEX_SAMPLES = np.array(
    [(x, y) for x in np.linspace(0.05, 0.2, 4) for y in np.linspace(0.04, 0.28, 6)], dtype=np.float64
)


def index_corners_seen(cards: list[dict], share: float = 0.75) -> list[bool]:
    """For each truth card: is at least one of its two corner indices uncovered by the cards drawn
    after it (the truth lists cards bottom first)? A card whose both indices lie under other cards
    cannot be read by anyone; the benchmark reports reading accuracy with and without them."""
    polys = [np.asarray(c["corners"], dtype=np.float32).reshape(4, 2) for c in cards]
    out = []
    for i, q in enumerate(polys):
        o, u, v = q[0], q[1] - q[0], q[3] - q[0]  # corners clockwise from the card's top-left
        seen = False
        for pts in (_INDEX_SAMPLES, 1.0 - _INDEX_SAMPLES):
            px = o + pts[:, :1] * u + pts[:, 1:] * v
            covered = np.zeros(len(px), bool)
            for other in polys[i + 1 :]:
                covered |= np.array(
                    [cv2.pointPolygonTest(other, (float(x), float(y)), False) >= 0 for x, y in px]
                )
            if 1.0 - covered.mean() >= share:
                seen = True
                break
        out.append(seen)
    return out


def _outline_error(found, true) -> float:
    """Largest corner distance between a detected and a true card outline (best corner pairing)."""
    a, b = np.asarray(found, dtype=np.float64).reshape(4, 2), np.asarray(true, dtype=np.float64).reshape(4, 2)
    return min(
        float(np.linalg.norm(np.roll(a, k, axis=0)[order] - b, axis=1).max())
        for k in range(4)
        for order in (slice(None), slice(None, None, -1))
    )


def score_frame(result, truth: dict, min_visible: float = 0.1) -> Score:
    """Match detections (a DetectionResult or its dict) to truth cards by centre distance."""
    d = result.to_dict() if hasattr(result, "to_dict") else result
    cw = truth["card_width_px"]
    s = Score()
    index_seen = index_corners_seen(truth["cards"])
    truths = [
        dict(t, index_seen=seen)
        for t, seen in zip(truth["cards"], index_seen, strict=True)
        if t["visible"] >= min_visible
    ]
    s.true_cards = len(truths)
    s.detections = len(d["cards"])
    used = set()
    for t in truths:
        tc = np.array(t["center"])
        best, bd = None, 0.35 * cw
        for i, c in enumerate(d["cards"]):
            if i in used:
                continue
            dist = float(np.linalg.norm(np.array(c["center"]) - tc))
            if dist < bd:
                best, bd = i, dist
        if best is None:
            s.mistakes.append(("missed", t["code"], t["face"], t["visible"]))
            continue
        used.add(best)
        s.found += 1
        c = d["cards"][best]
        err = _outline_error(c["corners"], t["corners"]) / cw
        s.outline_error_cw += err
        s.outline_off += err > 0.25
        if c["face"] == t["face"]:
            s.face_right += 1
        else:
            s.mistakes.append(("face", t["code"], t["face"], c["face"]))
        if t["face"] == "up" and c["face"] == "up":
            s.up_cards += 1
            seen = t.get("index_seen", True)
            s.up_index_seen += seen
            if c["code"] == t["code"]:
                s.read_right += 1
                s.read_right_index_seen += seen
            else:
                s.read_none += c["code"] is None
                s.misread_outline_off += err > 0.25
                s.mistakes.append(("read", t["code"], c["code"], t["visible"]))
    for i, c in enumerate(d["cards"]):
        if i not in used:
            s.false_cards += 1
            near_chip = any(
                np.linalg.norm(np.array(ch["center"]) - c["center"]) < ch["radius"] * 1.5
                for ch in truth["chips"]
            )
            s.chips_as_card += near_chip
            s.mistakes.append(("false card", c["center"], "chip" if near_chip else ""))
    b, tb = d["button"], truth["button"]
    if tb is not None:
        s.frames_with_button += 1
        if b is not None and np.linalg.norm(np.array(b["center"]) - tb["center"]) < tb["radius"]:
            s.button_found += 1
        elif b is not None:
            s.button_false += 1
            s.mistakes.append(("button wrong place", b["center"], tb["center"]))
        else:
            s.mistakes.append(("button missed", tb["center"]))
    elif b is not None:
        s.button_false += 1
        s.mistakes.append(("button where none", b["center"]))
    if b is not None:
        for ch in truth["chips"]:
            if np.linalg.norm(np.array(b["center"]) - ch["center"]) < ch["radius"]:
                s.chips_as_button += 1
    return s


def view_cut_through_a_card(frame: np.ndarray, truth: dict, seed: int, least_shown: float = 0.5):
    """A camera whose picture ends across one of the table's face-up cards (one picked at random
    by `seed`, and a side: the edge runs through its middle give or take 30 %), as (picture, cut):
    the part of `frame` in view and the truth's face-up cards the edge cuts with `least_shown` or
    more of them in view, their corners in the picture's pixels. None where no card lies face up."""
    from vision.polygons import intersection_area

    fh, fw = frame.shape[:2]
    rng = np.random.default_rng(seed)
    ups = [t for t in truth["cards"] if t["visible"] >= 0.95 and t["face"] == "up"]
    if not ups:
        return None
    q = np.float64(ups[rng.integers(len(ups))]["corners"])
    side, f = int(rng.integers(4)), rng.uniform(-0.3, 0.3)
    c, ext = q.mean(axis=0), q.max(axis=0) - q.min(axis=0)
    x0, y0, x1, y1 = [
        (0, 0, int(c[0] + f * ext[0]), fh),
        (int(c[0] + f * ext[0]), 0, fw, fh),
        (0, 0, fw, int(c[1] + f * ext[1])),
        (0, int(c[1] + f * ext[1]), fw, fh),
    ][side]
    picture = np.float64([[0, 0], [x1 - x0, 0], [x1 - x0, y1 - y0], [0, y1 - y0]])
    cut = []
    for t in truth["cards"]:
        corners = np.float64(t["corners"]) - [x0, y0]
        shown = intersection_area(corners, picture) / abs(cv2.contourArea(np.float32(corners)))
        if t["face"] == "up" and t["visible"] >= 0.5 and least_shown <= shown < 0.99:
            cut.append(dict(t, corners=corners, shown=shown))
    return np.ascontiguousarray(frame[y0:y1, x0:x1]), cut


def score_cut_cards(result, cut: list[dict], card_width: float) -> tuple[int, int, int, int]:
    """(cards, found, read right, read right at 0.9 or more: what a ruling may use) of the cut cards
    of `view_cut_through_a_card` in a detection `result` of its picture (matched by centre)."""
    found = right = sure = 0
    for t in cut:
        centre = t["corners"].mean(axis=0)
        near = [c for c in result.cards if np.hypot(*(np.asarray(c.center) - centre)) < 0.35 * card_width]
        if not near:
            continue
        found += 1
        right += near[0].code == t["code"]
        sure += near[0].code == t["code"] and near[0].confidence >= 0.9
    return len(cut), found, right, sure
