"""Enrolled reading on real photographs: a deck enrolled from the table's camera, read on other photos of it.

    .venv/bin/python bench/bench_enroll_real.py [--source edje_pinochle_train] [--per-code 1]

Every photo of `edje_pinochle_train` shows cards of one pinochle deck (9 to ace, 24 codes) on
wood, carpet, concrete, under several lights: the only real source with one deck throughout. The
deck is enrolled as `vision enroll-table` does it (vision.enroll_table: the card found by the
detector, its outline fitted to its own pixels, its code given -- here by the photo's label, as
--rows gives it by place) from the first photos (in name order) that show each code lying apart
from other cards; then every other photo of the source is read with that enrolled model and with
the built-in reader, both through the detector and verifier that never saw this source (vision/loso),
over the labelled face-up cards both find. Nothing here is tuned: it measures.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.detect import Detector, warp_card
from vision.enroll_table import tight_outline
from vision.index_net import use_weights as use_index_weights
from vision.read import DeckModel, builtin_misreads, suit_pairs_told_apart
from vision.read_glyph import use_weights as use_glyph_weights
from vision.real_photos import load_labels, match, real_photos_dir, reliability

LOSO = Path(__file__).resolve().parents[1] / "vision" / "loso"


def detector(source: str, **kw) -> Detector:
    return Detector(
        verifier_path=str(LOSO / f"quad_verifier_without_{source}.npz"),
        calibration=str(LOSO / f"read_confidence_without_{source}.json"),
        **kw,
    )


def alone(i: int, cards) -> bool:
    """No other detection overlaps detection i (a card lying apart, as for enrolment)."""
    from vision.polygons import intersection_area

    q = np.asarray(cards[i].corners, float)
    return all(
        j == i or intersection_area(q, np.asarray(c.corners, float)) < 1.0 for j, c in enumerate(cards)
    )


def enrol_from_labels(root: Path, source: str, labels: dict, per_code: int = 1):
    """(model, photos used, codes with no picture): the source's deck enrolled from the first photos
    (name order) showing each labelled code lying apart from other cards (see the docstring)."""
    finder = detector(source, budget_ms=None)
    codes = sorted({c["code"] for lab in labels.values() for c in lab["cards"] if c.get("code")})
    pictures: dict[str, list[np.ndarray]] = {c: [] for c in codes}
    used: set[str] = set()
    for name in sorted(labels):
        if all(len(v) >= per_code for v in pictures.values()):
            break
        frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        finder.card_width_hint = None
        res = finder.detect(frame)
        lab = labels[name]
        for i, j in match(res.cards, lab["cards"], image_size=lab.get("size")):
            code = lab["cards"][j].get("code")
            if not code or res.cards[i].face != "up" or len(pictures[code]) >= per_code:
                continue
            if not alone(i, res.cards):
                continue
            q = np.asarray(res.cards[i].corners, np.float64)
            canon, _v, _o = warp_card(frame, tight_outline(frame, q), [], [])
            pictures[code].append(canon)
            used.add(name)
    missing = [c for c, v in pictures.items() if not v]
    kept = [c for c in codes if pictures[c]]
    # several pictures of a card (--per-code): their mean, a template less tied to one light
    canons = {c: np.mean(pictures[c], axis=0).round().astype(np.uint8) for c in kept}
    full, index = zip(*(DeckModel.features(canons[c]) for c in kept), strict=True)
    fine = np.stack([DeckModel.fine_features(canons[c]) for c in kept])
    fold_map = str(LOSO / f"read_confidence_without_{source}.json")
    pairs, misreads = suit_pairs_told_apart(canons), builtin_misreads(canons, fold_map)
    model = DeckModel(kept, np.stack(full), np.stack(index), None, source, fine, pairs, misreads)
    return model, used, missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", default="edje_pinochle_train")
    ap.add_argument(
        "--per-code",
        type=int,
        default=1,
        help="pictures of each code to enrol from, averaged (1: the first photo showing it apart)",
    )
    args = ap.parse_args()
    cv2.setNumThreads(1)
    root = real_photos_dir()
    if root is None or not (root / args.source / "labels.json").is_file():
        print(f"no real photos of {args.source} (../shared/data/real_photos)")
        return 1
    source = args.source
    labels = load_labels(root / source)
    use_glyph_weights(LOSO / f"read_glyphs_without_{source}.npz")
    use_index_weights(LOSO / f"index_net_without_{source}.onnx")
    names = sorted(labels)
    model, used, missing = enrol_from_labels(root, source, labels, args.per_code)
    print(
        f"{source}: {len(model.codes)} codes; enrolled from {len(used)} photos; no picture apart for: {missing or 'none'}"
    )
    enrolled, builtin = detector(source), detector(source)
    enrolled.model = model
    tally = {"enrolled": [0, 0, 0], "built-in": [0, 0, 0]}  # right, unread, of
    reads: dict[str, list[tuple[float, bool]]] = {"enrolled": [], "built-in": []}  # (confidence, right)
    for name in names:
        if name in used:
            continue
        frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        lab = labels[name]
        for key, det in (("enrolled", enrolled), ("built-in", builtin)):
            det.card_width_hint = None
            res = det.detect(frame)
            for i, j in match(res.cards, lab["cards"], image_size=lab.get("size")):
                code = lab["cards"][j].get("code")
                if not code or res.cards[i].face != "up":
                    continue
                got = res.cards[i].code
                tally[key][0] += got == code
                tally[key][1] += got is None
                tally[key][2] += 1
                if got is not None:
                    reads[key].append((float(res.cards[i].confidence), got == code))
    for key, (right, unread, of) in tally.items():
        print(
            f"  reading, {key:9s} {right / max(of, 1):.3f}   ({right} right, {unread} unread of {of} face-up cards found)"
        )
    for key, got in reads.items():
        print(f"  {key} reliability (confidence of a code read -> observed accuracy):")
        for lo, hi, n, acc in reliability(got):
            print(f"    [{lo:.2f}, {min(hi, 1.0):.2f})  n={n:4d}  right {acc:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
