"""Engine throughput: replay a long generated session (10,000 hands with deals and actions) as JSON text
lines, every output line written as JSON (what `rules replay` does), and print events per second on one
core. Goal (issue 13): at least 100,000 events per second.

Two figures: per wall-clock second (what a table sees) and per CPU second of this process (the same on a
machine shared with other work, where the wall-clock figure drops with the load).

    .venv/bin/python bench/bench_engine.py [HANDS]
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen_session import generate
from controller.rules.engine import TableEngine, dumps

GOAL = 100_000


def replay(lines: list[str]) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, output lines, error lines) of one replay."""
    engine = TableEngine("bluff_street", 9)
    outputs = errors = 0
    start, cpu = time.perf_counter(), time.process_time()
    for n, text in enumerate(lines, 1):
        for out in engine.feed(text, n):
            dumps(out)  # the CLI writes every output line: count its cost too
            outputs += 1
            errors += out["type"] == "error"
    return time.perf_counter() - start, time.process_time() - cpu, outputs, errors


def main() -> int:
    hands = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    t0 = time.perf_counter()
    lines = generate(hands)
    print(f"generated {hands} hands, {len(lines)} input lines in {time.perf_counter() - t0:.1f} s")
    runs = [replay(lines) for _ in range(3)]
    secs = [r[0] for r in runs]
    cpu = [r[1] for r in runs]
    _, _, outputs, errors = runs[0]
    rate = len(lines) / statistics.median(secs)
    cpu_rate = len(lines) / statistics.median(cpu)
    print(f"replay: {len(lines)} events -> {outputs} output lines ({errors} errors)")
    print(
        f"seconds per replay: min {min(secs):.3f}  median {statistics.median(secs):.3f}  max {max(secs):.3f}"
        f"  (CPU: median {statistics.median(cpu):.3f})"
    )
    print(
        f"events per second (median, one core): {rate:,.0f}   goal >= {GOAL:,}: {'met' if rate >= GOAL else 'NOT met'}"
    )
    print(
        f"events per CPU second (median): {cpu_rate:,.0f}   goal >= {GOAL:,}: {'met' if cpu_rate >= GOAL else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
