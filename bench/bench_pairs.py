"""The lower card of an overlapping pair: how often the detector finds and reads it, on synthetic pairs.

    .venv/bin/python bench/bench_pairs.py [--pairs 60] [--plain] [--slant]

Why: on the real photos most missed cards lie under a found one (edje: 41 of 55 misses; roboflow 24
of 114, stop 52), the lower card of a pair tossed down by a player. This is a development set to work
on that class without tuning on the reported photos: two face-up cards (tango and anglo_poker faces,
decks the rendered benchmark does not report) tossed one on the other at any angle, the lower one
20-65 % in view, on the CC0 textures of ../shared/data/textures (`--plain`: a plain green felt;
`--slant`: half the views slanted as a phone held at an angle), through `vision.train`'s camera
(light, blur, noise, JPEG). Seeds 90000 on. A pair counts as found when a card's outline overlaps the
lower card's whole outline with IoU >= 0.5. Nothing here is tuned: it measures.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vision.cardnet_scenes import _card, _paste, _seen, _view
from vision.decks import read_deck
from vision.detect import Detector
from vision.polygons import iou
from vision.train import _flatten, background, camera, load_textures

DECKS = ("tango", "anglo_poker")  # (data/decks: the two GPL decks every clone carries)
SEED0 = 90000


def pair(seed: int, textures, faces: dict, plain: bool, slant: bool):
    """(picture, lower card's outline and code, top card's outline) of one tossed pair."""
    rng = np.random.default_rng(seed)
    w = int(rng.integers(480, 900))
    h = int(w * rng.uniform(0.75, 1.35))
    canvas = background(rng, textures, w, h)
    if plain:
        canvas[:] = (40, 110, 30)
    cover = np.zeros((h, w), np.int32)
    codes = list(rng.permutation(sorted(faces)))
    cw = min(w, h) * rng.uniform(0.12, 0.3)
    c = np.array([w / 2, h / 2]) + rng.uniform(-0.15, 0.15, 2) * [w, h]
    a1 = rng.uniform(-0.5, 0.5)
    while True:  # the top card tossed on: the lower one 20-65 % in view
        a2 = a1 + rng.uniform(-0.5, 0.5)
        d = a1 + rng.uniform(-0.6, 0.6)
        off = rng.uniform(0.25, 0.7) * cw * np.array([math.cos(d), math.sin(d)])
        under, top = _card(c, a1, cw, rng), _card(c + off, a2, cw, rng)
        layers = np.zeros((h, w), np.int32)
        cv2.fillConvexPoly(layers, np.round(under).astype(np.int32), 1)
        cv2.fillConvexPoly(layers, np.round(top).astype(np.int32), 2)
        if 0.2 <= _seen(layers, [under, top])[0] <= 0.65:
            break
    _paste(canvas, cover, faces[codes[0]], under, 1, rng)
    _paste(canvas, cover, faces[codes[1]], top, 2, rng)
    if slant:
        canvas, cover, (under, top) = _view(np.random.default_rng([seed, 7]), canvas, cover, [under, top])
    return camera(rng, canvas), under, str(codes[0]), top


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--plain", action="store_true", help="a plain green felt instead of the textures")
    ap.add_argument("--slant", action="store_true", help="half the views slanted (a phone at an angle)")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    textures = load_textures()
    if not textures and not args.plain:
        print("no textures (../shared/data/textures): run with --plain")
        return 1
    root = Path(__file__).resolve().parents[1] / "data" / "decks"
    decks = [{c: _flatten(img) for c, img in read_deck(str(root / d)).items() if c != "back"} for d in DECKS]
    detector = Detector(budget_ms=None)
    found = read = top_found = 0
    for k in range(args.pairs):
        seed = SEED0 + k
        picture, under, code, top = pair(seed, textures, decks[seed % 2], args.plain, args.slant)
        detector.card_width_hint = None  # every pair another camera
        res = detector.detect(picture)
        hits = [c for c in res.cards if iou(np.asarray(c.corners, float), under) >= 0.5]
        found += bool(hits)
        read += bool(hits) and hits[0].code == code
        top_found += any(iou(np.asarray(c.corners, float), top) >= 0.5 for c in res.cards)
    n = max(args.pairs, 1)
    where = "plain felt" if args.plain else "textures"
    print(f"{args.pairs} tossed pairs on {where}{', half slanted' if args.slant else ''} (seeds {SEED0}+):")
    print(f"  top card found        {top_found / n:.3f}   ({top_found})")
    print(f"  lower card found      {found / n:.3f}   ({found})")
    print(f"  lower card read right {read / n:.3f}   ({read}; its index may lie under the top card)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
