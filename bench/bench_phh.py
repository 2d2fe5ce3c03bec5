"""Replay the PHH sample through this engine and through pokerkit in one run; print hands per second.

    .venv/bin/python bench/bench_phh.py [--repeat 3] [FILE.phh ...]

Defaults to the 160 hands of data/phh/pluribus/*/*.phh. Two figures per replayer: end to end (read and parse
the file, then replay the hand) and replay only (files parsed beforehand). Ours goes through the full
table engine (`controller.rules.engine.TableEngine`: validation, deal monitor, every output line). Each
figure is the best of --repeat runs, the replayers taking turns so that load from other processes hits them
alike. Times are this process's CPU time by default (`--clock cpu`: on a shared machine the wall clock also
counts the time other processes held the CPU); `--clock wall` for elapsed time. pokerkit is the optional extra `bench` (pip install -e .[bench]); without it only our
figures are printed. Goal: >= 10x pokerkit. Last, the time to read a file's TOML with tomllib and with
`phh_read._flat_toml`, which reads PHH files first.
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller import datapaths  # noqa: E402
from controller.rules.phh import load, replay  # noqa: E402
from controller.rules.phh_read import _flat_toml  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args()
    files = args.files or [str(p) for p in datapaths.phh_files()]
    if not files:
        print("no PHH files found", file=sys.stderr)
        return 0
    n = len(files)
    hands = [load(f) for f in files]
    # name -> (end-to-end run, replay-only run); runs are interleaved so that load from other processes on
    # the machine hits every replayer alike, and each figure is the best of --repeat runs.
    runs: dict[str, tuple] = {}
    mismatches = sum(not replay(h).match for h in hands)
    print(f"smart-table: {n - mismatches}/{n} hands agree with finishing_stacks")
    runs["smart-table"] = (
        lambda: [replay(load(f)) for f in files],
        lambda: [replay(h) for h in hands],
    )
    try:
        from pokerkit import HandHistory
    except ImportError:
        print("pokerkit is not installed (pip install -e .[bench]): no comparison")
    else:

        def pk_load(f: str):
            with open(f, "rb") as fh:
                return HandHistory.load(fh)

        def pk_replay(history) -> list[int]:
            state = None
            for state in history:  # noqa: B007 - the last state is the end of the hand
                pass
            return list(state.stacks) if state is not None else []

        histories = [pk_load(f) for f in files]
        agree = sum(pk_replay(h) == list(h.finishing_stacks) for h in histories)
        print(f"pokerkit: {agree}/{n} hands agree with finishing_stacks")
        runs["pokerkit"] = (
            lambda: [pk_replay(pk_load(f)) for f in files],
            lambda: [pk_replay(h) for h in histories],
        )
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    best_times = {name: [float("inf"), float("inf")] for name in runs}
    for _ in range(args.repeat):
        for name, fns in runs.items():
            for k, fn in enumerate(fns):
                t = clock()
                fn()
                best_times[name][k] = min(best_times[name][k], clock() - t)
    reading = _reading_figures(files, args.repeat, clock)
    rows = [(name, n / e2e, n / only) for name, (e2e, only) in best_times.items()]
    pokerkit_rows = next(((e, o) for name, e, o in rows if name == "pokerkit"), None)

    print(f"\n{n} hands, best of {args.repeat} runs, {'CPU' if args.clock == 'cpu' else 'wall-clock'} time")
    print(f"{'replayer':<26}{'end to end (hands/s)':>22}{'replay only (hands/s)':>24}")
    for name, e2e_rate, only_rate in rows:
        print(f"{name:<26}{e2e_rate:>22,.0f}{only_rate:>24,.0f}")
    if pokerkit_rows:
        for name, e2e_rate, only_rate in rows:
            if name == "pokerkit":
                continue
            print(
                f"ratio {name} / pokerkit: end to end {e2e_rate / pokerkit_rows[0]:.1f}x, "
                f"replay only {only_rate / pokerkit_rows[1]:.1f}x (goal >= 10x)"
            )
    print(
        f"reading the TOML of a file (text read beforehand): tomllib {reading['tomllib']:.1f} us, "
        f"_flat_toml {reading['flat']:.1f} us ({reading['taken']}/{n} files taken by _flat_toml)"
    )
    return 0


def _reading_figures(files: list[str], repeat: int, clock) -> dict:
    """Microseconds per file to turn a PHH file's text into a dict: tomllib against `phh_read._flat_toml`, the
    figure behind reading PHH files with `_flat_toml` first (controller/rules/phh_read.py)."""
    texts = [Path(f).read_text(encoding="utf-8") for f in files]
    readers = {"tomllib": tomllib.loads, "flat": _flat_toml}
    best = dict.fromkeys(readers, float("inf"))
    for _ in range(repeat):
        for name, read in readers.items():
            t = clock()
            for text in texts:
                read(text)
            best[name] = min(best[name], clock() - t)
    figures: dict = {name: seconds / len(texts) * 1e6 for name, seconds in best.items()}
    figures["taken"] = sum(_flat_toml(t) is not None for t in texts)
    return figures


if __name__ == "__main__":
    sys.exit(main())
