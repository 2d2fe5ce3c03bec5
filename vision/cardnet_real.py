"""Real photographs as training crops for the card network (`vision.cardnet_train --real`).

The synthetic scenes teach cards on every surface, but not a real camera's paper, glare, blur and
print; the labelled real photos of ../shared/data/real_photos do. Each source's labels say different
things, and the crops teach only what they say:

- roboflow_blackjack_cc_by: each card's outline (a polygon): centre, both axes and the card's area;
- edje_pinochle_train: an upright box round each card: its centre only (the box of a turned card is
  not its outline), and no area;
- foltys_single_cards: no boxes at all: not used.

Where a photo's labels are not checked complete (unlabelled cards in piles, at the border, face
down), only the places near labelled cards are taught as "no centre here"; elsewhere the network is
told nothing. Figures on a source must come from a network that never saw it: `train_folds` makes
one per source left out (vision/loso/cardnet_without_<source>.onnx), like the verifier's folds.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.cardnet import SIZE_RANGE, card_short_side
from vision.real_photos import load_labels, real_photos_dir

COPIES = 3  # each photo at this many sizes
GROW = 1.6  # around a labelled card of an unchecked photo, this much of its size is known to hold no other centre


def _quad_of(card: dict) -> tuple[np.ndarray, bool] | None:
    """(corners, outline known) of a labelled card: the polygon's min-area rectangle, or its box."""
    if card.get("polygon") and len(card["polygon"]) >= 4:
        pts = np.asarray(card["polygon"], np.float32)
        return cv2.boxPoints(cv2.minAreaRect(pts)).astype(np.float64), True
    if card.get("box"):
        x0, y0, x1, y1 = card["box"]
        return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], float), False
    return None


def items(source: str, rng: np.random.Generator, copies: int = COPIES) -> list[dict]:
    """Training items (like `cardnet_train`'s scenes) from one source's labelled photos."""
    root = real_photos_dir()
    if root is None or not (root / source / "labels.json").is_file():
        return []
    labels = load_labels(root / source)
    out = []
    for name, label in sorted(labels.items()):
        img = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if img is None:
            continue
        cards = [q for q in (_quad_of(c) for c in label.get("cards", [])) if q is not None]
        complete = bool(label.get("labels_complete"))
        if not cards and not complete:
            continue
        shorts = [card_short_side(q) if known else 0.7 * card_short_side(q) for q, known in cards]
        for _ in range(copies):
            want = math.exp(rng.uniform(math.log(SIZE_RANGE[0] * 1.5), math.log(SIZE_RANGE[1] * 0.9)))
            f = min(1.5, want / float(np.median(shorts))) if shorts else rng.uniform(0.2, 0.6)
            out.append(_item(img, cards, complete, f, label))
    return out


def _item(img, cards, complete: bool, f: float, label: dict) -> dict:
    h, w = img.shape[:2]
    size = (max(32, round(w * f)), max(32, round(h * f)))
    fx, fy = size[0] / w, size[1] / h
    small = cv2.resize(img, size, interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
    quads = np.array([q * [fx, fy] for q, _k in cards], np.float32).reshape(-1, 4, 2)
    cover = np.zeros((size[1], size[0]), np.uint8)
    mask_known = all(k for _q, k in cards)
    for i, (card, (q, _k)) in enumerate(zip(label["cards"], cards, strict=False)):
        poly = np.asarray(card.get("polygon") or q, np.float64) * [fx, fy]
        cv2.fillPoly(cover, [np.round(poly).astype(np.int32)], min(254, i + 1))
    known = np.full(cover.shape, 255 if complete else 0, np.uint8)
    if not complete:
        for q in quads:
            c = q.mean(axis=0)
            grown = (q - c) * GROW + c
            cv2.fillConvexPoly(known, np.round(grown).astype(np.int32), 255)
    ok1, jpg = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, 94])
    ok2, png = cv2.imencode(".png", cover)
    ok3, kn = cv2.imencode(".png", known)
    assert ok1 and ok2 and ok3
    return {
        "jpg": jpg.tobytes(),
        "cover": png.tobytes(),
        "known": kn.tobytes(),
        "quads": quads,
        "seen": np.ones(len(quads), np.float32),
        "regress": np.array([k for _q, k in cards], bool),
        "mask_known": mask_known,
    }
