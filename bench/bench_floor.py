"""Benchmark of the floor (prints its figures, exits 0).

N simulated tables (default 30, 10 players each: 300 players; the real rules engine per table) and
`smart-table floor` as its own process, all through one Mosquitto started here. Every table plays
misdeal after misdeal as fast as it can (hand_start, the first card flashed face up: the engine's
`misdeal` ruling), and a page client (its own process) reads the floor's server-sent events like the
director's browser does. Run twice: at full speed, and with 0.1 s between a table's misdeals (still
hundreds of times a real table's pace). Printed for each:

1. Ruling at a table (the `t` it publishes the ruling with) to the page's update showing that
   table's alert: p50, p95, p99, max (goal: p99 <= 500 ms), split into table -> floor (Mosquitto and
   the floor's reading) and floor -> page; and how many alerts a table card never showed because
   newer ones of that table replaced them before the next push (a card keeps its last three).
2. The floor process's resident memory and CPU time over the run.

    .venv/bin/python bench/bench_floor.py [--tables 30] [--rounds 20] [--pause SECONDS]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.floor.simtable import SimTable
from controller.mqtt import mosquitto

REPO = Path(__file__).resolve().parents[1]
VENUE = "bench"


def proc_stats(pid: int) -> tuple[float, float]:
    """(RSS MiB, CPU seconds user+system) of a process, from /proc."""
    rss = 0.0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return rss, (int(fields[11]) + int(fields[12])) / ticks


def read_seen(path: Path) -> dict[tuple[str, int], tuple[float, float, float]]:
    """(table, seq) -> (when the page showed it, when the floor received it, when the table published it)."""
    seen: dict[tuple[str, int], tuple[float, float, float]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                table, seq, t, at_floor, ruled_at = json.loads(line)
            except ValueError:
                continue  # a line being written
            seen.setdefault((table, seq), (t, at_floor, ruled_at))
    return seen


def run_page_client(port: int, out: Path) -> int:
    seen: dict[tuple[str, int], float] = {}
    with open(out, "a", buffering=1) as f:

        def note(key: tuple[str, int], t: float, at_floor: float, ruled_at: float) -> None:
            if key not in seen:
                seen[key] = t
                f.write(json.dumps([key[0], key[1], t, at_floor, ruled_at]) + "\n")

        try:
            asyncio.run(page_client(port, note, asyncio.Event()))
        except KeyboardInterrupt:
            pass
    return 0


async def page_client(port: int, note, stop: asyncio.Event) -> None:
    """Reads /events like the browser's EventSource; notes when each (table, seq) alert first shows."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.1)
            continue
        writer.write(b"GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n")
        await writer.drain()
        buf = b""
        try:
            while not stop.is_set():
                chunk = await reader.read(1 << 16)
                if not chunk:
                    break
                buf += chunk
                while b"\n\n" in buf:
                    event, buf = buf.split(b"\n\n", 1)
                    for line in event.split(b"\n"):
                        line = line.strip()
                        if line.startswith(b"data: "):
                            now = time.time()
                            doc = json.loads(line[6:])
                            for t in doc["tables"]:
                                for a in t["alerts"]:
                                    if a.get("seq") is not None:
                                        note((t["id"], a["seq"]), now, a["t"], a["ruled_at"])
        finally:
            writer.close()


async def play(sim: SimTable, rounds: int, pause: float, published: dict[tuple[str, int], float]) -> None:
    for _ in range(rounds):
        out = await sim.feed({"type": "hand_start"})
        hand = next(o for o in out if o["type"] == "hand")
        t0 = time.time()
        await sim.feed({"type": "deal", "seat": hand["first_card"], "card": "Kd"})
        # the misdeal ruling's seq: the last line published
        published[(sim.topics.table, sim.seq)] = t0
        if pause:
            await asyncio.sleep(pause)


async def main_async(args: argparse.Namespace) -> int:
    work = Path(tempfile.mkdtemp(prefix="bench-floor-"))
    (work / "broker").mkdir()
    broker = mosquitto.Mosquitto(work / "broker", extra="max_queued_messages 100000\n")
    broker.start()
    web_port = mosquitto.free_port()
    tables = [f"t{i:02d}" for i in range(1, args.tables + 1)]
    (work / "venue.toml").write_text(
        f'[floor]\nvenue = "{VENUE}"\nevent = "bench"\nprofile = "cool_mule"\nclock_start = "manual"\n'
        f"tables = {json.dumps(tables)}\nentrants = {10 * len(tables)}\n"
        f'[registry]\nurl = "sqlite:///{work}/registry.sqlite3"\n'
        f'[broker]\nhost = "127.0.0.1"\nport = {broker.port}\n[web]\nport = {web_port}\n'
    )
    sims = [SimTable("127.0.0.1", broker.port, VENUE, t, "cool_mule", 10) for t in tables]
    for sim in sims:
        await sim.start()
        for s in range(1, 11):
            await sim.feed({"type": "seat", "seat": s, "player": f"{sim.topics.table}-p{s}", "stack": 20000})
    with open(work / "floor.log", "wb") as log:
        floor = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "floor", "--config", str(work / "venue.toml")],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
    published: dict[tuple[str, int], float] = {}
    seen_file = work / "seen.jsonl"
    try:
        mosquitto.wait_port(web_port, 20.0, floor)
        # the page client is a process of its own, like the director's browser: the 30 tables playing
        # at full speed in this process do not delay its reading
        page = subprocess.Popen(
            [sys.executable, __file__, "--page-client", str(web_port), str(seen_file)], cwd=REPO
        )
        await asyncio.sleep(2.0)  # the floor takes in every table's retained state
        rss0, cpu0 = proc_stats(floor.pid)
        t0 = time.time()
        await asyncio.gather(*(play(sim, args.rounds, args.pause, published) for sim in sims))
        played = time.time() - t0
        seen: dict[tuple[str, int], tuple[float, float, float]] = {}
        end = time.time() + 10.0
        while time.time() < end:
            seen = read_seen(seen_file)
            if all(k in seen for k in published):
                break
            await asyncio.sleep(0.1)
        rss1, cpu1 = proc_stats(floor.pid)
        busy = max((v[0] for v in seen.values()), default=time.time()) - t0
        page.terminate()
        page.wait(5)
    finally:
        for sim in sims:
            await sim.stop()
        floor.terminate()
        floor.wait(10)
        broker.kill()
        shutil.rmtree(work, ignore_errors=True)
    lat = sorted((seen[k][0] - seen[k][2]) * 1000 for k in published if k in seen)
    to_floor = sorted((seen[k][1] - seen[k][2]) * 1000 for k in published if k in seen)
    to_page = sorted((seen[k][0] - seen[k][1]) * 1000 for k in published if k in seen)
    missed = sum(1 for k in published if k not in seen)
    q = statistics.quantiles(lat, n=100) if len(lat) >= 2 else [float("nan")] * 99
    print(
        f"floor bench: {args.tables} tables, {10 * args.tables} players, {len(published)} misdeal rulings in "
        f"{played:.1f} s ({len(published) / played:.0f} rulings/s, each with its hand ruling and two state updates)"
    )
    print(
        f"ruling at a table -> page update: p50 {q[49]:.0f} ms  p95 {q[94]:.0f} ms  p99 {q[98]:.0f} ms  "
        f"max {lat[-1] if lat else float('nan'):.0f} ms  (goal p99 <= 500 ms)  "
        f"replaced by a newer alert of the same table before a push (never shown): {missed}"
    )
    if lat:
        p99 = lambda xs: statistics.quantiles(xs, n=100)[98] if len(xs) >= 2 else xs[0]  # noqa: E731
        print(
            f"  of which table -> floor (through Mosquitto) p99 {p99(to_floor):.0f} ms, floor -> page p99 {p99(to_page):.0f} ms"
        )
    print(
        f"floor process: RSS {rss0:.0f} MiB before, {rss1:.0f} MiB after; CPU {cpu1 - cpu0:.2f} s over the {busy:.1f} s "
        f"from the first ruling to the last shown ({100 * (cpu1 - cpu0) / max(busy, 1e-9):.0f}% of one core)"
    )
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tables", type=int, default=30)
    p.add_argument("--rounds", type=int, default=20)
    p.add_argument(
        "--pause",
        type=float,
        default=None,
        help="seconds between a table's misdeals (default: one run at full speed, one at 0.1 s)",
    )
    p.add_argument("--page-client", nargs=2, metavar=("PORT", "FILE"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.page_client:
        return run_page_client(int(args.page_client[0]), Path(args.page_client[1]))
    if not mosquitto.installed():
        print("floor bench: mosquitto is not installed; skipped")
        return 0
    for pause in [args.pause] if args.pause is not None else [0.0, 0.1]:
        args.pause = pause
        print(f"-- {'full speed' if not pause else f'{pause:g} s between misdeals at each table'}")
        asyncio.run(main_async(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
