"""Enrolling a deck from the table's camera (vision.enroll_table) against enrolling it from its card images.

    .venv/bin/python bench/bench_enroll_table.py [--decks drawn bellot aguilar neoclassical] [--frames 30]

For each deck: the 52 cards laid face up in four rows (one suit a row, a few millimetres of hand
jitter) on felt, rendered at 1920x1080 by the simulator's camera (noise, uneven light); enrolled
from that one picture by the built-in reader's reading alone and by --rows; then the deck's
enrolled reading on the benchmark's random mid-hand tables (bench_vision's scenes, seeds from 5000,
not the picture it was enrolled from), with the model enrolled from the table and the one
enrolled from the deck's own card images, over the face-up cards found whose index is in view.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_vision import deck_to_render
from hil.scene import FELTS, deck_dir, laid_out_deck, random_scene, render
from vision.detect import Detector
from vision.enroll_table import enrol_from_photos, rows_order, write_cards
from vision.evaluate import Score, score_frame
from vision.read import enroll_deck

LAYOUT_SIZE = (1920, 1080)


def image_folder(deck: str, tmp: Path) -> Path:
    if deck == "drawn":
        from hil.decks.drawn import write_deck

        write_deck(tmp / "drawn")
        return tmp / "drawn"
    return deck_dir(deck)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--decks", nargs="+", default=["drawn", "bellot", "aguilar", "neoclassical"])
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--seed", type=int, default=5000)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    felts = list(FELTS)
    for n, name in enumerate(args.decks):
        deck = deck_to_render(name)
        felt = felts[n % len(felts)]
        frame, _ = render(laid_out_deck(deck, rows_order("shdc"), felt, n), *LAYOUT_SIZE, seed=n)
        read = enrol_from_photos([frame])
        rows = enrol_from_photos([frame], rows_order("shdc"))
        print(f"\n== {name} laid out on {felt} felt: {len(rows.found)} cards found")
        print(f"  by the built-in reader: {len([c for c in read.cards if c != 'back'])} of 52 codes sure")
        for p in read.problems[:6]:
            print(f"    {p}")
        print(f"  by --rows: {'complete' if rows.complete else '; '.join(rows.problems)}")
        for w in rows.warnings:
            print(f"    note: {w}")
        if not rows.complete:
            continue
        with tempfile.TemporaryDirectory() as t:
            tmp = Path(t)
            write_cards(rows, tmp / "table")
            model, _ = enroll_deck(tmp / "table")
            model.save(tmp / "table.deck")
            from_images, _ = enroll_deck(image_folder(deck, tmp))
            from_images.save(tmp / "images.deck")
            scores = {"table": Score(), "images": Score()}
            dets = {k: Detector(str(tmp / f"{k}.deck")) for k in scores}
            for k in range(args.frames):
                seed = args.seed + k
                scene_frame, truth = render(random_scene(seed, deck=deck), 1920, 1080, seed)
                for key, det in dets.items():
                    scores[key].add(score_frame(det.detect(scene_frame), truth))
        for key, s in scores.items():
            print(
                f"  enrolled from the {key:6s}: reading {s.reading_accuracy_index_seen:.3f} "
                f"({s.read_right_index_seen}/{s.up_index_seen} face-up cards with an index in view), "
                f"all found face up {s.reading_accuracy:.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
