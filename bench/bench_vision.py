"""Vision benchmark: accuracy and speed of card/button detection on rendered tables.

    .venv/bin/python bench/bench_vision.py [--frames 40] [--frames-4k 6] [--decks tango anglo_poker]

Decks: 'drawn' (hil/decks/drawn.py, the held-out deck nothing was tuned on) and the two GPL decks.
For each deck: random mid-hand tables (2-10 seats, hole-card pairs, exposed cards, board, chips of
every colour including white, the button sometimes coloured), felt of every colour, uneven light,
blur, noise and perspective, rendered at 1920x1080. Prints detection recall and precision, face
up/down accuracy, reading accuracy with the deck enrolled (from that deck's own card images) and
with the built-in reader (no deck) -- headline over the face-up cards with at least one corner index
not covered by another card (from the renderer's truth: nobody can read a card whose both indices are
hidden), and over all face-up cards found -- button detection rate, chips taken for the button; then the
median milliseconds per frame on one core (cv2.setNumThreads(1)) at 1080p and 4K, cold (every card
read) and tracked (cards that did not move are not read again), and the peak memory.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hil.scene import deck_dir, random_scene, render
from vision.detect import Detector
from vision.evaluate import Score, score_frame
from vision.read import enroll_deck

GOALS = {
    "recall": 0.99,
    "precision": 0.99,
    "face": 0.99,
    "read_enrolled": 0.99,
    "read_builtin": 0.95,
    "button": 0.99,
    "ms_1080p": 15.0,
    "ms_4k": 60.0,
}


def _ok(value: float, goal: float, lower_is_better: bool = False) -> str:
    good = value <= goal if lower_is_better else value >= goal
    return "ok" if good else "BELOW GOAL" if not lower_is_better else "OVER GOAL"


def accuracy(deck: str, frames: int, seed0: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        folder = deck_dir(deck)
        if deck == "drawn":  # the code-drawn deck: written out, then enrolled like a venue would
            from hil.decks.drawn import write_deck

            folder = Path(tmp) / "drawn"
            write_deck(folder)
        model, _ = enroll_deck(folder)
        path = Path(tmp) / f"{deck}.deck"
        model.save(path)
        enrolled = Detector(str(path))
    builtin = Detector()
    s_en, s_bi = Score(), Score()
    ms = []
    for k in range(frames):
        seed = seed0 + k
        frame, truth = render(random_scene(seed, deck=deck), 1920, 1080, seed)
        r = enrolled.detect(frame)
        ms.append(r.ms)
        s_en.add(score_frame(r, truth))
        s_bi.add(score_frame(builtin.detect(frame), truth))
    return {"enrolled": s_en, "builtin": s_bi, "ms": ms}


def speed(deck: str, width: int, height: int, frames: int, seed0: int) -> tuple[float, float]:
    """Median ms cold (a fresh detector per frame: every card read) and tracked (same table next frame)."""
    cold, warm = [], []
    for k in range(frames):
        seed = seed0 + k
        frame, _ = render(random_scene(seed, deck=deck), width, height, seed)
        det = Detector(track=True)
        t0 = time.perf_counter()
        det.detect(frame)
        cold.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        det.detect(frame)
        warm.append((time.perf_counter() - t0) * 1000)
    return statistics.median(cold), statistics.median(warm)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--frames", type=int, default=40, help="1080p frames per deck for accuracy")
    ap.add_argument("--frames-4k", type=int, default=6)
    ap.add_argument(
        "--decks",
        nargs="+",
        default=["drawn", "tango", "anglo_poker"],
        help="drawn = hil/decks/drawn.py, the held-out deck nothing was tuned on",
    )
    ap.add_argument("--seed", type=int, default=5000, help="first scene seed (the tests use seeds below 100)")
    args = ap.parse_args()
    cv2.setNumThreads(1)

    print("vision benchmark: rendered 1920x1080 tables, one core (cv2.setNumThreads(1))")
    print("held-out deck: 'drawn' (hil/decks/drawn.py), never used while building the detector or the")
    print("built-in reader; the two GPL decks were looked at during development. Enrolment uses each deck's")
    print("own card images (written to a folder and enrolled like a venue would). The built-in reader's")
    print("classifiers (vision/read_glyphs.npz) were trained partly on the two GPL decks: its figures for them")
    print("are not for unseen decks; 'drawn' is (leave-one-deck-out: python -m vision.read_train --decks ...).")
    for deck in args.decks:
        res = accuracy(deck, args.frames, args.seed)
        en, bi = res["enrolled"], res["builtin"]
        print(
            f"\n== deck {deck}: {args.frames} frames, {en.true_cards} cards ({en.up_cards} face up and found), "
            f"{en.frames_with_button} frames with a button"
        )
        rows = [
            ("detection recall", en.recall, GOALS["recall"]),
            ("detection precision", en.precision, GOALS["precision"]),
            ("face up/down accuracy", en.face_accuracy, GOALS["face"]),
            ("reading, enrolled, index in view", en.reading_accuracy_index_seen, GOALS["read_enrolled"]),
            ("reading, enrolled, all cards", en.reading_accuracy, GOALS["read_enrolled"]),
            ("reading, built-in, index in view", bi.reading_accuracy_index_seen, GOALS["read_builtin"]),
            ("reading, built-in, all cards", bi.reading_accuracy, GOALS["read_builtin"]),
            ("button found", en.button_rate, GOALS["button"]),
        ]
        for name, value, goal in rows:
            print(f"  {name:32s} {value:6.3f}   goal >= {goal:.2f}  {_ok(value, goal)}")
        print(
            f"  {'chips taken for the button':32s} {en.chips_as_button:6d}   goal 0  "
            f"{'ok' if en.chips_as_button == 0 else 'OVER GOAL'}"
        )
        print(f"  {'button reported where none/wrong':32s} {en.button_false:6d}")
        print(
            f"  outlines of found cards: off by > 1/4 card {en.outline_off} of {en.found}; "
            f"mean worst-corner error {en.mean_outline_error:.3f} card widths"
        )
        print(f"  {'unread face-up cards (built-in)':32s} {bi.read_none:6d}")
        print(
            f"  face-up cards with both corner indices under other cards: {en.up_cards - en.up_index_seen}; "
            f"misreads whose outline was off by > 1/4 card: enrolled {en.misread_outline_off} of "
            f"{en.up_cards - en.read_right}, built-in {bi.misread_outline_off} of {bi.up_cards - bi.read_right}"
        )
    deck = args.decks[0]
    c1080, w1080 = speed(deck, 1920, 1080, min(args.frames, 20), args.seed + 1000)
    c4k, w4k = speed(deck, 3840, 2160, args.frames_4k, args.seed + 2000)
    print(f"\n== speed (deck {deck}, median per frame, detection + reading)")
    print(
        f"  1920x1080 cold {c1080:7.1f} ms   tracked {w1080:7.1f} ms   goal <= {GOALS['ms_1080p']:.0f} ms  "
        f"{_ok(w1080, GOALS['ms_1080p'], True)}"
    )
    print(
        f"  3840x2160 cold {c4k:7.1f} ms   tracked {w4k:7.1f} ms   goal <= {GOALS['ms_4k']:.0f} ms  "
        f"{_ok(w4k, GOALS['ms_4k'], True)}"
    )
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak memory (whole process, renderer included) {peak_mb:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
