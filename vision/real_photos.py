"""Score the detector on the real photographs of ../shared/data/real_photos (labels.json per source).

The learnt parts (the verifier, the reader's confidence map) learn from them leave-one-source-out
(`vision.train_real`): a source's figures come from the models trained on the two others. A detected card matches a labelled one when the bounding box of its
outline overlaps the label's box with IoU >= 0.5 (greedy, best IoU first). `foltys_single_cards`
has no boxes: each photo is a close-up of one card, so the card is found when the detector reports
a card at least SUBJECT_SHARE of the photo (a smaller "card" is a pip or a mark on it), and every
further card is a false one.

Precision counts only images whose labels a person checked complete (`labels_complete`): on the
others unlabelled cards (cut by the border, face down, in a pile) would count as false.
"""

from __future__ import annotations

import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

SOURCES = ("edje_pinochle_train", "roboflow_blackjack_cc_by", "foltys_single_cards")
IOU_MATCH = 0.5
SUBJECT_SHARE = 0.02  # of a box-less close-up's area: less is not the photo's one card (a pip on it)
CONF_BINS = (0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 1.01)


def real_photos_dir() -> Path | None:
    """Where the real photographs are: $SMART_TABLE_REAL_PHOTOS, ../shared/data/real_photos beside
    the repository, tests/data/real_photos, or the sample the repository carries in data/real_photos
    (with its licence files: the tests' sample photos are among them, so a clone alone runs them)."""
    root = Path(__file__).resolve().parents[1]
    candidates = [os.environ.get("SMART_TABLE_REAL_PHOTOS")]
    candidates += [root.parent / "shared" / "data" / "real_photos", root / "tests" / "data" / "real_photos"]
    candidates += [root / "data" / "real_photos"]
    for c in candidates:
        if c and (Path(c) / SOURCES[0] / "labels.json").is_file():
            return Path(c)
    for c in candidates:
        if c and any((Path(c) / s / "labels.json").is_file() for s in SOURCES):
            return Path(c)
    return None


# Labels the photographs plainly contradict, found while looking at every sure misread card by card
# (stop 47; docs/vision.md "Label errata"): (photo, index of the card in its labels) -> (the code
# as published, the card the photo shows). Six of roboflow's 645 codes; the others were right.
LABEL_ERRATA: dict[str, dict[tuple[str, int], tuple[str, str]]] = {
    "roboflow_blackjack_cc_by": {
        ("IMG_3022.jpg", 0): ("8c", "8s"),  # eight black spades, no club on it
        ("IMG_3105.jpg", 0): ("3d", "Kd"),  # a king of diamonds alone on a desk
        ("IMG_3363.jpg", 25): ("Ah", "2h"),  # two hearts; the photo's ace of hearts is card 13
        ("IMG_3373.jpg", 15): ("4c", "Th"),  # ten hearts; the photo's four of clubs is card 14
        ("IMG_5839-Small.jpg", 0): ("2d", "2h"),  # two hearts, both corners a heart
        ("IMG_5957-Small.jpg", 0): ("6d", "5s"),  # five black spades
    },
}


def load_labels(source_dir: Path, errata: bool = True) -> dict:
    """A source's labels.json, with its LABEL_ERRATA corrected (unless `errata` is False): a
    published code that names another card than the photo shows, checked and listed one by one."""
    with open(source_dir / "labels.json", encoding="utf-8") as f:
        labels = json.load(f)
    if errata:
        for (name, k), (published, shown) in LABEL_ERRATA.get(source_dir.name, {}).items():
            card = labels.get(name, {}).get("cards", [])[k : k + 1]
            if card and card[0].get("code") == published:  # another copy of the labels: left alone
                card[0]["code"] = shown
    return labels


def sample(names: list[str], limit: int | None) -> list[str]:
    """`limit` names spread evenly over the sorted list (the same ones every run)."""
    names = sorted(names)
    if not limit or limit >= len(names):
        return names
    idx = np.linspace(0, len(names) - 1, limit).round().astype(int)
    return [names[i] for i in sorted(set(idx.tolist()))]


@dataclass
class RealScore:
    images: int = 0
    labelled: int = 0  # labelled cards (face up, face down, jokers)
    found: int = 0
    found_visible: int = 0  # matched by the box of the part in view (match(visible=True))
    detections_checked: int = 0  # detections on images whose labels are complete
    false_checked: int = 0
    false_checked_visible: int = 0
    face_right: int = 0
    down_found: int = 0  # found cards labelled face down
    down_right: int = 0  # ... and called face down
    up_called_down: int = 0  # found cards labelled face up (a code or a joker) called face down
    up_found: int = 0  # found cards labelled with a code
    read_right: int = 0
    read_none: int = 0
    up_labelled: int = 0
    chips_as_button: int = 0
    chips: int = 0
    ms: list = field(default_factory=list)
    truncated: int = 0
    reads: list = field(default_factory=list)  # (confidence, right) of every code the reader gave

    @property
    def recall(self) -> float:
        return self.found / max(self.labelled, 1)

    @property
    def precision(self) -> float:
        return (self.detections_checked - self.false_checked) / max(self.detections_checked, 1)

    @property
    def recall_visible(self) -> float:
        return self.found_visible / max(self.labelled, 1)

    @property
    def precision_visible(self) -> float:
        return (self.detections_checked - self.false_checked_visible) / max(self.detections_checked, 1)

    @property
    def face_accuracy(self) -> float:
        return self.face_right / max(self.found, 1)

    @property
    def reading_accuracy(self) -> float:
        """Right codes over the face-up cards found."""
        return self.read_right / max(self.up_found, 1)

    def reliability(self) -> list[tuple[float, float, int, float]]:
        """(low, high, count, observed accuracy) per confidence bin of the codes read."""
        return reliability(self.reads)


def reliability(reads) -> list[tuple[float, float, int, float]]:
    """(low, high, count, observed accuracy) per confidence bin (CONF_BINS) of `reads`, pairs of
    (confidence, right); bins no read fell in are left out."""
    out = []
    for lo, hi in itertools.pairwise(CONF_BINS):
        sel = [ok for c, ok in reads if lo <= c < hi]
        if sel:
            out.append((lo, hi, len(sel), float(np.mean(sel))))
    return out


def _box_of(card) -> tuple[float, float, float, float]:
    pts = np.asarray(card.corners, dtype=float)
    return float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())


def _in_picture(box, picture: tuple[int, int] | None):
    """The part of a box inside a picture of `picture` (width, height); the box where None."""
    if picture is None:
        return box
    w, h = picture
    return (
        min(max(box[0], 0.0), w),
        min(max(box[1], 0.0), h),
        min(max(box[2], 0.0), w),
        min(max(box[3], 0.0), h),
    )


def iou(a, b) -> float:
    ix = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def visible_boxes(dets: list) -> list[tuple[float, float, float, float]]:
    """The box of the part of each detected card in view: the labels of these photos box what the
    annotator saw (SOURCES.md: "the visible extent of the card"), so a card half under another is
    labelled by its strip in view, while the detector reports its whole outline. A card the detector
    says lies under others (`occluded`) loses what the overlapping cards not under others cover;
    any other card is its whole outline."""
    out = []
    polys = [np.asarray(d.corners, float).reshape(-1, 2) for d in dets]
    for i, d in enumerate(dets):
        box = _box_of(d)
        if not getattr(d, "occluded", False):
            out.append(box)
            continue
        x0, y0 = np.floor([box[0], box[1]]).astype(int)
        w, h = int(np.ceil(box[2] - x0)) + 1, int(np.ceil(box[3] - y0)) + 1
        mask = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(mask, np.round(polys[i] - [x0, y0]).astype(np.int32), 1)
        for j, other in enumerate(dets):
            if j != i and not getattr(other, "occluded", False):
                cv2.fillConvexPoly(mask, np.round(polys[j] - [x0, y0]).astype(np.int32), 0)
        ys, xs = np.nonzero(mask)
        if len(xs) < 0.1 * mask.size:
            out.append(box)
            continue
        out.append(
            (float(x0 + xs.min()), float(y0 + ys.min()), float(x0 + xs.max() + 1), float(y0 + ys.max() + 1))
        )
    return out


def match(
    dets: list,
    cards: list[dict],
    visible: bool = False,
    image_size: tuple[int, int] | None = None,
    picture: tuple[int, int] | None = None,
) -> list[tuple[int, int]]:
    """(detection index, label index) of the detected cards that are labelled ones: outline box
    IoU >= IOU_MATCH, greedy, best IoU first (with `visible`, the better of the whole outline's box
    and the box of its part in view, see `visible_boxes`). Labels without boxes and one card
    (foltys): the detection most likely to be it (face up, biggest), if it is big enough to be the
    photo's subject (SUBJECT_SHARE of `image_size`, width and height, where given). With `picture`
    (width, height), a card reaching beyond the picture's edge is matched by its part in the
    picture, as the labels box it."""
    pairs: list[tuple[int, int]] = []
    if cards and all("box" in c for c in cards):
        whole = [_in_picture(_box_of(d), picture) for d in dets]
        seen = [_in_picture(b, picture) for b in visible_boxes(dets)] if visible else whole
        cand = sorted(
            (
                (max(iou(whole[i], c["box"]), iou(seen[i], c["box"])), i, j)
                for i, d in enumerate(dets)
                for j, c in enumerate(cards)
            ),
            reverse=True,
        )
        used_d, used_c = set(), set()
        for v, i, j in cand:
            if v < IOU_MATCH:
                break
            if i in used_d or j in used_c:
                continue
            used_d.add(i)
            used_c.add(j)
            pairs.append((i, j))
    elif len(cards) == 1 and dets:
        i = max(range(len(dets)), key=lambda k: (dets[k].face == "up", _area(dets[k])))
        if image_size is None or _area(dets[i]) >= SUBJECT_SHARE * image_size[0] * image_size[1]:
            pairs.append((i, 0))
    return pairs


def score_image(result, label: dict) -> RealScore:
    """One image's figures (`result` a DetectionResult)."""
    s = RealScore(images=1)
    s.ms.append(result.ms)
    s.truncated += int(bool(getattr(result, "truncated", False)))
    cards = label.get("cards", [])
    s.labelled = len(cards)
    s.up_labelled = sum(1 for c in cards if c.get("code"))
    dets = list(result.cards)
    size = label.get("size")
    picture = (result.width, result.height) if hasattr(result, "width") else None
    pairs = match(dets, cards, image_size=size, picture=picture)
    s.found = len(pairs)
    s.found_visible = len(match(dets, cards, visible=True, image_size=size, picture=picture))
    if label.get("labels_complete"):
        s.detections_checked = len(dets)
        s.false_checked = len(dets) - len(pairs)
        s.false_checked_visible = len(dets) - s.found_visible
    for i, j in pairs:
        d, c = dets[i], cards[j]
        want_face = "down" if c.get("face_down") else "up"
        s.face_right += int(d.face == want_face)
        if want_face == "down":
            s.down_found += 1
            s.down_right += int(d.face == "down")
        else:
            s.up_called_down += int(d.face == "down")
        if c.get("code"):
            s.up_found += 1
            if d.code is None:
                s.read_none += 1
            else:
                ok = d.code == c["code"]
                s.read_right += int(ok)
                s.reads.append((float(d.confidence), ok))
    chips = [o for o in label.get("other_objects", []) if "chip" in o.get("label", "")]
    s.chips = len(chips)
    if result.button is not None:
        bx, by = result.button.center
        s.chips_as_button += sum(
            1 for o in chips if o["box"][0] <= bx <= o["box"][2] and o["box"][1] <= by <= o["box"][3]
        )
    return s


def _area(card) -> float:
    x0, y0, x1, y1 = _box_of(card)
    return (x1 - x0) * (y1 - y0)


def add(total: RealScore, one: RealScore) -> None:
    for k, v in one.__dict__.items():
        if isinstance(v, list):
            getattr(total, k).extend(v)
        else:
            setattr(total, k, getattr(total, k) + v)
