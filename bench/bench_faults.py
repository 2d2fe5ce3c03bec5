"""Faults injected over and over into a table under load, with real parts; prints, per kind of
fault: how many were injected, rulings lost (after cmd/replay; goal 0), rulings passed on twice
(goal 0), rulings the director had to fetch with cmd/replay (what the broker or a restart lost
before replay), commands lost or applied twice (goal 0), and the time to recover (median, worst).

    .venv/bin/python bench/bench_faults.py --faults 100            # every kind
    .venv/bin/python bench/bench_faults.py --faults 20 --kinds broker,link

Recovery: from the fault being over (broker back, process started again, room on the disk) until
the director has passed on every ruling the table had logged, and (full disk) every waiting line is
logged. Kinds: broker (Mosquitto kill -9), link (the MQTT task dies), disk (SQLite page limit),
kill (the service process kill -9), restart (SIGTERM and start again), panel (the LED panel's USB
pulled: its serial device disappears; recovered when health is `ok` again and the panel shows the
table's newest scene), camera (the camera's device goes away; recovered when health is `ok` and
frames are read again). The process kinds cost about
two seconds each (Python start-up), so `--process-faults` bounds them separately.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from controller.mqtt.mosquitto import Mosquitto  # noqa: E402
from controller.service.app import TableService  # noqa: E402
from controller.service.config import parse_config  # noqa: E402
from tests.faults.harness import (  # noqa: E402
    FLOOD_BROKER,
    SEATED,
    Director,
    check_commands,
    check_rulings,
    flood_command,
    flood_line,
)
from tests.service.conftest import service_process, write_toml  # noqa: E402

PER_FAULT = 30  # flood lines around each fault


DEVICES = {
    "panel": {"panel": "sim"},
    "camera": {"camera": "sim", "camera_fps": 10, "sim_width": 640, "sim_height": 360},
}


def config(work: Path, port: int, kind: str = "") -> Any:
    return parse_config(
        {
            "table": {"seats": 6, "profile": "cool_mule", "venue": "v", "id": "t9"},
            "devices": {"camera": "none", "panel": "none", "nfc": "none", **DEVICES.get(kind, {})},
            "broker": {"host": "127.0.0.1", "port": port},
            "event_log": {"path": str(work / "events.db"), "synchronous": "normal"},
        },
        "bench",
    )


async def caught_up(director: Director, last: int, timeout: float = 30) -> None:
    """Until the director has passed on ruling `last`: waiting first, then asking for a replay."""
    end = time.monotonic() + timeout
    while director.follower.next <= last:
        if time.monotonic() > end:
            raise TimeoutError(f"director at {director.follower.next - 1} of {last}")
        try:
            await director.wait_for(lambda d: d.follower.next > last, timeout=1.0)
        except TimeoutError:
            await director.catch_up(timeout=max(1.0, end - time.monotonic()))


async def in_process(kind: str, faults: int, work: Path) -> dict[str, Any]:
    (work / "broker").mkdir()
    broker = Mosquitto(work / "broker", extra=FLOOD_BROKER)
    broker.start()
    cfg = config(work, broker.port, kind)
    recover: list[float] = []
    k = 0
    try:
        async with TableService(cfg) as service, Director(broker.port, cfg.prefix) as director:
            for line in SEATED:
                await service.inject(line)
            for _ in range(faults):
                chunk = range(k, k + PER_FAULT)
                k += PER_FAULT
                half = PER_FAULT // 2
                await asyncio.gather(*(service.inject(flood_line(n)) for n in chunk[:half]))
                if kind == "broker":
                    broker.kill()
                    rest = asyncio.gather(*(service.inject(flood_line(n)) for n in chunk[half:]))
                    await asyncio.sleep(0.05)
                    broker.start()
                    t0 = time.monotonic()
                    await rest
                elif kind == "link":
                    while not service.link.connected:
                        await asyncio.sleep(0.01)
                    service.link._replies.put_nowait((f"{cfg.prefix}/reply/#", b"x", None, False))
                    t0 = time.monotonic()
                    await asyncio.gather(*(service.inject(flood_line(n)) for n in chunk[half:]))
                elif kind in ("panel", "camera"):
                    t0 = await _device_vanishes(service, kind, chunk[half:])
                else:  # disk
                    conn = service.log.conn
                    conn.execute("VACUUM")  # no free pages left inside the file: the next line needs room
                    pages = conn.execute("PRAGMA page_count").fetchone()[0]
                    conn.execute(f"PRAGMA max_page_count = {pages}")
                    emit = service._emitter("panel")
                    rest = asyncio.ensure_future(_emit(emit, chunk[half:]))
                    async with asyncio.timeout(10):
                        while service.health.part("event_log").status != "degraded":
                            await asyncio.sleep(0.01)
                    conn.execute("PRAGMA max_page_count = 1073741823")
                    t0 = time.monotonic()
                    await rest
                    while service.inbox.pending() or service._held:
                        await asyncio.sleep(0.01)
                await caught_up(director, service.ruling_no)
                recover.append(time.monotonic() - t0)
            await director.catch_up()
            replays = director.fetched
    finally:
        broker.kill()
    return summary(kind, faults, work / "events.db", director, range(k), recover, replays)


async def _until(predicate: Any, timeout: float = 20) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def _device_vanishes(service: TableService, kind: str, rest: range) -> float:
    """Pull the device, rule the rest of the chunk while it is away, bring it back; returns when it
    came back, having waited until the table has recovered it by itself."""
    part = service.health.part(kind)
    if kind == "panel":
        sim = service.panel.sim
        await sim.unplug()
    else:
        service.camera.sim.unplugged = True
    await _until(lambda: part.status == "failed")
    await asyncio.gather(*(service.inject(flood_line(n)) for n in rest))  # ruled without it
    if kind == "panel":
        t0 = time.monotonic()
        await sim.replug()
        await _until(lambda: part.status == "ok" and sim.state().get("text") == service.panel.scene.text)
    else:
        frames = service.camera.frames
        t0 = time.monotonic()
        service.camera.sim.unplugged = False
        await _until(lambda: part.status == "ok" and service.camera.frames > frames)
    return t0


async def _emit(emit: Any, numbers: range) -> None:
    for n in numbers:
        await emit(flood_line(n), "in")


async def process(kind: str, faults: int, work: Path) -> dict[str, Any]:
    """The service as a process, killed (or stopped) and started again under a command stream."""
    (work / "broker").mkdir()
    broker = Mosquitto(work / "broker", extra=FLOOD_BROKER)
    broker.start()
    toml = write_toml(
        work / "table.toml",
        {
            "table": {"seats": 6, "profile": "cool_mule", "venue": "v", "id": "t9"},
            "devices": {"camera": "none", "panel": "none", "nfc": "none"},
            "broker": {"host": "127.0.0.1", "port": broker.port},
            "event_log": {"path": str(work / "events.db"), "synchronous": "normal"},
        },
    )
    how = signal.SIGKILL if kind == "kill" else signal.SIGTERM
    proc = service_process(toml, work / "service.log")
    recover: list[float] = []
    k = 0
    prefix = "smarttable/v1/v/t9"
    try:
        async with Director(broker.port, prefix) as director:
            await director.wait_for(lambda d: b"online" in d.status, timeout=20)
            for line in SEATED:
                await director.ask("seat", {a: b for a, b in line.items() if a != "type"})
            for _ in range(faults):
                chunk = range(k, k + PER_FAULT)
                k += PER_FAULT
                for n in chunk:
                    await director.publish("seat", flood_command(n))
                    if n == chunk.start + PER_FAULT // 2:
                        proc.send_signal(how)
                        proc.wait(10)
                        onlines = director.status.count(b"online")
                        proc = service_process(toml, work / "service.log")
                        t0 = time.monotonic()
                await director.wait_for(lambda d, o=onlines: d.status.count(b"online") > o, timeout=20)
                await answered(director, chunk)
                reply = await director.ask("status", {})
                await caught_up(director, reply["state"]["ruling_seq"])
                recover.append(time.monotonic() - t0)
            await director.catch_up()
            replays = director.fetched
    finally:
        proc.kill()
        proc.wait()
        broker.kill()
    return summary(kind, faults, work / "events.db", director, range(k), recover, replays)


async def answered(director: Director, chunk: range) -> None:
    """Every command of the chunk answered; the unanswered ones (their reply died with the
    process) are sent again with the same id, as a director does: applied at most once anyway."""
    for _ in range(40):
        try:
            await director.wait_for(lambda d: all(f"cmd-{n}" in d.replies for n in chunk), timeout=0.5)
            return
        except TimeoutError:
            for n in chunk:
                if f"cmd-{n}" not in director.replies:
                    await director.publish("seat", flood_command(n))
    raise TimeoutError(f"commands {chunk.start}..{chunk.stop - 1} not all answered")


def summary(
    kind: str, faults: int, log: Path, director: Director, sent: range, recover: list[float], fetched: int
) -> dict[str, Any]:
    verdict = check_rulings(log, director.delivered, director.received)
    lost_cmds, twice = check_commands(log, sent)
    return {
        "kind": kind,
        "faults": faults,
        "rulings": verdict.logged,
        "lost": len(verdict.lost),
        "passed_on_twice": verdict.duplicates,
        "wrong_or_out_of_order": len(verdict.wrong) + verdict.out_of_order,
        "fetched_by_replay": fetched,
        "received_twice_dropped": director.follower.duplicates,
        "received": verdict.received,
        "lines_lost": len(lost_cmds),
        "lines_applied_twice": len(twice),
        "recover_median_s": statistics.median(recover) if recover else float("nan"),
        "recover_worst_s": max(recover) if recover else float("nan"),
    }


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--faults", type=int, default=100, help="faults of each in-process kind")
    ap.add_argument("--process-faults", type=int, default=20, help="faults of each process kind")
    ap.add_argument("--kinds", default="broker,link,disk,panel,camera,kill,restart")
    args = ap.parse_args()
    logging.disable(logging.CRITICAL)  # the faults log what they should; the figures are the output
    rows = []
    for kind in args.kinds.split(","):
        with tempfile.TemporaryDirectory(prefix=f"bench-faults-{kind}-") as tmp:
            t0 = time.monotonic()
            if kind in ("broker", "link", "disk", "panel", "camera"):
                row = await in_process(kind, args.faults, Path(tmp))
            elif kind in ("kill", "restart"):
                row = await process(kind, args.process_faults, Path(tmp))
            else:
                raise SystemExit(f"--kinds: unknown kind {kind!r}")
            row["seconds"] = time.monotonic() - t0
            rows.append(row)
            print(
                f"{kind:8} faults={row['faults']:4} rulings={row['rulings']:5} lost={row['lost']} "
                f"passed_on_twice={row['passed_on_twice']} wrong={row['wrong_or_out_of_order']} "
                f"fetched_by_replay={row['fetched_by_replay']} dups_dropped={row['received_twice_dropped']} lines_lost={row['lines_lost']} "
                f"applied_twice={row['lines_applied_twice']} "
                f"recover median={row['recover_median_s'] * 1000:.0f} ms worst={row['recover_worst_s'] * 1000:.0f} ms "
                f"({row['seconds']:.0f} s)",
                flush=True,
            )


if __name__ == "__main__":
    asyncio.run(main())
