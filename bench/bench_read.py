"""The built-in reader alone on real photographs: each labelled face-up card read from its label.

    .venv/bin/python bench/bench_read.py [--sources ...] [--loso vision/loso] [--dump /tmp/read-fails]

Why: `bench_vision.py` reports reading over the cards the detector found, so a misread there may be
the detector's outline. Here the card's outline comes from the labels (../shared/data/real_photos):
the source's outline polygon where it has one (roboflow), else the card's paper found inside the
labelled box (edje), else (foltys: no boxes) the one large paper region of the photo. The card is
warped upright to the reader's canonical size and read by `BuiltinReader`, with nothing marked
covered. Prints per source: accuracy, unread share, the confusion of ranks and of suits, and the
reliability of the confidence (with `--loso`, each source's confidence map fitted without it; else
the shipped map, which saw every source).

With `--dump DIR` the canonical cards the reader got wrong (and a few it got right) are written as
PNG files named <source>_<image>_<k>_<truth>_<read>.png, to look at.

With `--loso DIR` each source is read by the glyph classifiers and the index network trained
without it (DIR/read_glyphs_without_<source>.npz, DIR/index_net_without_<source>.onnx, where there)
as well as scored by its confidence map: the reading figures of a source no model saw.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.rules.cards import RANKS, SUITS
from vision import confidence
from vision.detect_quads import canonical_order
from vision.index_net import use_weights as use_index_weights
from vision.read import CANON_H, CANON_W, BuiltinReader
from vision.read_glyph import use_weights as use_glyph_weights
from vision.real_photos import CONF_BINS, SOURCES, load_labels, real_photos_dir, sample


def _quad_of_points(pts: np.ndarray) -> np.ndarray:
    """Four corners of a card outline given as points: the convex hull simplified to four
    vertices where it can be, else the smallest rotated rectangle around it."""
    hull = cv2.convexHull(pts.reshape(-1, 1, 2).astype(np.float32))
    peri = cv2.arcLength(hull, True)
    for eps in (0.01, 0.02, 0.03, 0.05, 0.08):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            return approx.reshape(4, 2).astype(np.float32)
        if len(approx) < 4:
            break
    return cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)


def _paper_quad(img: np.ndarray, box: list[float] | None) -> np.ndarray:
    """The card's outline inside its labelled box (or the whole photo when there is none): the
    biggest region of bright unsaturated paper, closed over the printing, as a quadrilateral. Falls
    back to the box itself when no such region covers a fair part of it."""
    h, w = img.shape[:2]
    if box is None:
        x0, y0, x1, y1 = 0, 0, w, h
    else:
        x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
        x1, y1 = min(w, int(np.ceil(box[2]))), min(h, int(np.ceil(box[3])))
    roi = img[y0:y1, x0:x1]
    rect = np.float32([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    if roi.size == 0:
        return rect
    hsv = cv2.cvtColor(roi, cv2.COLOR_BGR2HSV)
    v, s = hsv[:, :, 2].astype(np.float32), hsv[:, :, 1]
    p = float(np.percentile(v, 97 if box is None else 90))
    paper = ((v > 0.75 * p) & (s < 80)).astype(np.uint8)
    k = max(3, int(0.04 * min(roi.shape[:2])) | 1)
    paper = cv2.morphologyEx(paper, cv2.MORPH_CLOSE, np.ones((k, k), np.uint8))
    paper = cv2.morphologyEx(paper, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(paper, connectivity=8)
    if n < 2:
        return rect
    big = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    if stats[big, cv2.CC_STAT_AREA] < (0.02 if box is None else 0.35) * roi.shape[0] * roi.shape[1]:
        return rect
    ys, xs = np.nonzero(labels == big)
    return _quad_of_points(np.stack([xs + x0, ys + y0], axis=1))


def label_quad(img: np.ndarray, card: dict) -> np.ndarray:
    if card.get("polygon"):
        return _quad_of_points(np.asarray(card["polygon"], np.float32))
    return _paper_quad(img, card.get("box"))


def warp(img: np.ndarray, quad: np.ndarray) -> np.ndarray:
    q = canonical_order(np.asarray(quad, np.float32))
    dst = np.float32([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]])
    m = cv2.getPerspectiveTransform(q.astype(np.float32), dst)
    return cv2.warpPerspective(
        img, m, (CANON_W, CANON_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )


@dataclass
class ReadScore:
    cards: int = 0
    right: int = 0
    unread: int = 0
    down: int = 0  # face-up cards the reader called face down
    backs: int = 0  # face-down cards labelled (with an outline)
    backs_up: int = 0  # ... that the reader called face up
    ranks: Counter = field(default_factory=Counter)  # (truth rank, read rank)
    suits: Counter = field(default_factory=Counter)
    reads: list = field(default_factory=list)  # (calibrated confidence, right)
    raw: list = field(default_factory=list)  # (raw confidence, right)

    @property
    def accuracy(self) -> float:
        return self.right / max(self.cards, 1)


def read_source(source: str, limit: int | None, calib, dump: Path | None, reader=None) -> ReadScore | None:
    root = real_photos_dir()
    if root is None or not (root / source / "labels.json").is_file():
        return None
    labels = load_labels(root / source)
    reader = reader or BuiltinReader()
    s = ReadScore()
    full = np.full((CANON_H, CANON_W), 255, np.uint8)
    for name in sample(list(labels), limit):
        cards = [c for c in labels[name].get("cards", []) if c.get("code")]
        backs = [c for c in labels[name].get("cards", []) if c.get("face_down") and "box" in c]
        if not cards and not backs:
            continue
        img = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if img is None:
            continue
        for card in backs:
            s.backs += 1
            s.backs_up += reader.read(warp(img, label_quad(img, card)), full).face == "up"
        if len(labels[name].get("cards", [])) > 1 and any("box" not in c for c in cards):
            continue  # several cards and no box: which is which is unknown
        for k, card in enumerate(cards):
            canon = warp(img, label_quad(img, card))
            res = reader.read(canon, full)
            want = card["code"]
            s.cards += 1
            s.down += res.face != "up"
            got = res.code if res.face == "up" else None
            if got is None:
                s.unread += 1
                s.ranks[(want[0], "-")] += 1
                s.suits[(want[1], "-")] += 1
            else:
                ok = got == want
                s.right += ok
                s.ranks[(want[0], got[0])] += 1
                s.suits[(want[1], got[1])] += 1
                s.raw.append((float(res.confidence), ok))
                s.reads.append((calib(res.confidence) if calib else float(res.confidence), ok))
            if dump is not None and (got != want or s.cards % 10 == 0):
                stem = Path(name).stem
                out = dump / f"{source[:6]}_{stem}_{k}_{want}_{got or 'none'}.png"
                cv2.imwrite(
                    str(out), cv2.resize(canon, (3 * CANON_W, 3 * CANON_H), interpolation=cv2.INTER_NEAREST)
                )
    return s


def _confusion(counts: Counter, classes: str) -> list[str]:
    cols = [*classes, "-"]
    rows = ["      read " + " ".join(f"{c:>3s}" for c in cols)]
    for t in classes:
        if not any(counts[(t, c)] for c in cols):
            continue
        rows.append(f"  true {t:>3s} " + " ".join(f"{counts[(t, c)] or '.':>3}" for c in cols))
    return rows


def print_source(source: str, s: ReadScore) -> None:
    print(f"\n== {source}: {s.cards} labelled face-up cards read from their labelled outline")
    print(
        f"  accuracy {s.accuracy:.3f} ({s.right} right)   unread {s.unread / max(s.cards, 1):.3f} ({s.unread})   called face down {s.down}"
    )
    if s.backs:
        print(f"  face-down cards called face up: {s.backs_up} of {s.backs}")
    rank_right = sum(v for (t, g), v in s.ranks.items() if t == g)
    suit_right = sum(v for (t, g), v in s.suits.items() if t == g)
    print(f"  rank right {rank_right / max(s.cards, 1):.3f}   suit right {suit_right / max(s.cards, 1):.3f}")
    print("  ranks:")
    for row in _confusion(s.ranks, RANKS):
        print("   " + row)
    print("  suits:")
    for row in _confusion(s.suits, SUITS):
        print("   " + row)
    print("  reliability (confidence of a code read -> observed accuracy):")
    for lo, hi in itertools.pairwise(CONF_BINS):
        sel = [ok for c, ok in s.reads if lo <= c < hi]
        if sel:
            print(f"    [{lo:.2f}, {min(hi, 1.0):.2f})  n={len(sel):4d}  right {np.mean(sel):.3f}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sources", nargs="+", default=list(SOURCES))
    ap.add_argument("--limit", type=int, default=None, help="at most this many photos per source")
    ap.add_argument(
        "--loso",
        type=Path,
        default=None,
        help="folder of leave-one-source-out models (vision/loso): each source read by the glyph "
        "classifiers and index network trained without it, its reliability by the map fitted without "
        "it; default the shipped ones",
    )
    ap.add_argument("--dump", type=Path, default=None, help="write misread canonical cards here")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
    total = ReadScore()
    for source in args.sources:
        path = args.loso / f"read_confidence_without_{source}.json" if args.loso else None
        calib = confidence.load(str(path) if path else None)
        if args.loso:
            glyphs = args.loso / f"read_glyphs_without_{source}.npz"
            index = args.loso / f"index_net_without_{source}.onnx"
            use_glyph_weights(glyphs if glyphs.is_file() else None)
            use_index_weights(index if index.is_file() else None)
        s = read_source(source, args.limit, calib, args.dump)
        if s is None:
            print(f"\n== {source}: not found (../shared/data/real_photos), skipped")
            continue
        print_source(source, s)
        for k, v in s.__dict__.items():
            if isinstance(v, list | Counter):
                getattr(total, k).update(v) if isinstance(v, Counter) else getattr(total, k).extend(v)
            else:
                setattr(total, k, getattr(total, k) + v)
    print(
        f"\nall sources: accuracy {total.accuracy:.3f} ({total.right} of {total.cards}), unread {total.unread}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
