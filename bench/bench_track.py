"""`vision track` benchmark: speed and correctness of the camera-to-events command on rendered deals.

    .venv/bin/python bench/bench_track.py [--deals 2] [--decks drawn tango] [--seats 6]

`--decks` takes what bench_vision.py's does: data/decks names, `drawn`, a folder, or a held-out
Aisleriot theme (bellot, neoclassical), rendered into build/decks.

Each deal is a self-dealt hand rendered at 1920x1080 by the simulator (hil.camera.self_dealt_hand_script:
button, two rounds face down, one card flashed, bets pushed into betting areas, folds onto the muck,
burns, flop, turn, river, showdown), sensor noise on every frame, a random felt and camera (light
gradient, vignette, tint, blur, noise), frames written as PNG. The command then runs on the folder
as an outside test would, pinned to one core (`taskset -c 0`, OpenCV single-threaded; `--cores 2`:
two cores, where the next frames are decoded by vision.sources.read_ahead beside the tracker), with
the built-in reader, and, when the deck can be enrolled, with the enrolled deck.

Prints, per deck and reader: frames per second of the command (the start-up, measured on a
one-frame run, taken out), and the share of lines right against the rendered truth: lines that
match the truth in order (longest common subsequence, `frame` left out) over the truth's lines
(recall) and over the lines printed (precision), plus the worst deal.

Only rendered frames: the renderer is the project's own, so these figures say the pipeline holds
together, not how it does on a real camera (no recorded real deal is available here).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_vision import deck_to_render  # noqa: E402
from hil.camera import SimulatedCamera, run_script, self_dealt_hand_script  # noqa: E402
from hil.scene import FELTS, deck_dir, random_camera  # noqa: E402
from vision.layout import default_layout, save_layout  # noqa: E402
from vision.read import enroll_deck  # noqa: E402

W, H = 1920, 1080


def render_deal(folder: Path, deck: str, seats: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    felt = str(rng.choice(list(FELTS)))
    cam = SimulatedCamera(
        seats=seats,
        deck=deck,
        width=W,
        height=H,
        seed=seed,
        felt=felt,
        camera=random_camera(rng, hard=False),
        noise_every_frame=True,
    )
    button = int(rng.integers(1, seats + 1))
    order = [(button + k - 1) % seats + 1 for k in range(1, seats + 1)]
    steps = self_dealt_hand_script(
        seats,
        button,
        rng,
        bets=(order[2], order[3]),
        folds=(order[0],),
        flop_bets=(order[2],),
        flop_folds=(order[3],),
        exposed_seat=order[1],
    )
    expected: list[dict] = []
    for k, frame, _truth, so_far in run_script(cam, steps):
        cv2.imwrite(str(folder / f"frame_{k:04d}.png"), frame)
        expected = so_far
    return expected


def lcs(a: list[str], b: list[str]) -> int:
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a)):
        for j in range(len(b)):
            t[i + 1][j + 1] = t[i][j] + 1 if a[i] == b[j] else max(t[i][j + 1], t[i + 1][j])
    return t[-1][-1]


def differences(exp: list[str], got: list[str]) -> list[str]:
    """The truth's lines missed and the lines printed that the truth has not, in order."""
    import difflib

    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=exp, b=got, autojunk=False).get_opcodes():
        if tag in ("delete", "replace"):
            out += [f"missed {line}" for line in exp[i1:i2]]
        if tag in ("insert", "replace"):
            out += [f"extra  {line}" for line in got[j1:j2]]
    return out


def run_track(
    frames: list[str], layout: Path, deck_model: str | None, cores: int = 1
) -> tuple[list[dict], float]:
    exe = REPO / ".venv" / "bin" / "smart-table"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "controller.cli"]
    cmd += ["vision", "track", *frames, "--layout", str(layout)]
    if deck_model:
        cmd += ["--deck", deck_model]
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", ",".join(str(c) for c in range(cores)), *cmd]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENCV_FOR_THREADS_NUM": "1"}
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, check=False)
    seconds = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"vision track failed ({r.returncode}): {r.stderr[-2000:]}")
    return [json.loads(s) for s in r.stdout.splitlines()], seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=2)
    ap.add_argument("--decks", nargs="+", default=["drawn", "tango"])
    ap.add_argument("--seats", type=int, default=6)
    ap.add_argument("--seed", type=int, default=7000)
    ap.add_argument("--cores", type=int, default=1, help="cores the command may use (OpenCV single-threaded)")
    args = ap.parse_args()
    print(f"vision track on rendered {W}x{H} self-dealt deals, {args.seats} seats, {args.cores} core(s)")
    print(
        f"  load average at the start {os.getloadavg()[0]:.1f} (frames/s are only as good as a quiet machine)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        layout = root / "layout.json"
        save_layout(default_layout(args.seats, W, H), layout)
        for deck in map(deck_to_render, args.decks):
            model = None
            if deck == "drawn":
                from hil.decks.drawn import write_deck

                write_deck(root / "drawn_cards")
                enroll_from = root / "drawn_cards"
            else:
                enroll_from = deck_dir(deck)
            m, _ = enroll_deck(enroll_from)
            model = str(root / f"{Path(deck).name}.deck")
            m.save(model)
            deals = []
            for d in range(args.deals):
                folder = root / f"{Path(deck).name}_{d}"
                folder.mkdir()
                expected = render_deal(folder, deck, args.seats, args.seed + d)
                deals.append((sorted(str(p) for p in folder.iterdir()), expected))
            for reader, deck_model in (("built-in", None), ("enrolled", model)):
                right = truth = printed = frames = 0
                seconds = 0.0
                worst = 1.0
                misses: list[str] = []
                for paths, expected in deals:
                    _, startup = run_track(paths[:1], layout, deck_model, args.cores)
                    lines, secs = run_track(paths, layout, deck_model, args.cores)
                    got = [
                        json.dumps({k: v for k, v in ln.items() if k != "frame"}, sort_keys=True)
                        for ln in lines
                    ]
                    exp = [json.dumps(ln, sort_keys=True) for ln in expected]
                    n = lcs(exp, got)
                    misses += differences(exp, got)
                    right, truth, printed = right + n, truth + len(exp), printed + len(got)
                    worst = min(worst, n / max(len(exp), len(got), 1))
                    frames += len(paths) - 1
                    seconds += max(secs - startup, 1e-6)
                print(
                    f"  {Path(deck).name:12s} {reader:9s} {frames / seconds:5.1f} frames/s  "
                    f"lines right: {right}/{truth} of the truth ({right / truth:.3f}), "
                    f"{right}/{printed} of those printed ({right / max(printed, 1):.3f}), "
                    f"worst deal {worst:.3f}  (load {os.getloadavg()[0]:.1f})"
                )
                for m in misses:
                    print(f"      {m}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
