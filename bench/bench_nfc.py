"""Benchmark: from a card tap to the `seat` line and the accepted signal at the table.

Each tap goes the whole way a real one does: the card enters the simulated reader's field,
nfcpy (in the reader thread of `watch_reader`) polls, activates the NTAG215 and reads its NDEF
message, the tap reaches asyncio, `TableCheckIn.on_tap` verifies the signature and asks the
registry (SQLite, WAL, full fsync) and returns the lines. Printed: median and p99 of the whole
path, and how much of it is the NFC part (field -> Tap) versus the check-in (Tap -> lines).

Runs: simulated NTAG215 cards written by the desk's own `write_card`, with no air-interface delay;
the same with a PN532-on-UART delay model (--cmd-ms per tag command, default 6 ms: a 16-byte READ
at 115200 baud plus PN532 framing); cards re-issued once (the record then sits behind a skipped
TLV, so the table reads more pages); NTAG 424 DNA cards personalised by the desk (SUN); and a Type 3
tag emulated over nfcpy's UDP link.

    .venv/bin/python bench/bench_nfc.py [--taps 100] [--udp-taps 15] [--cmd-ms 6]
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import sys
import tempfile
import time
from datetime import UTC, date, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.registry.card import CardVerifier, encode_card
from controller.registry.cardio import write_card
from controller.registry.checkin import TableCheckIn
from controller.registry.draw import TableSpec
from controller.registry.keys import create_key_file, load_keys
from controller.registry.reader import watch_reader
from controller.registry.registry import Registry
from hil.nfc import SimulatedNtag, SimulatedNtag424, SimulatedReader, Type3Emulator

GOAL_MS = 300.0
NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def setup(tmp: Path, players: int) -> tuple[Registry, object]:
    key_path = tmp / "keys.toml"
    create_key_file(key_path, "cool_mule")
    keys = load_keys(key_path)
    registry = Registry.open(str(tmp / "registry.sqlite3"))
    registry.open_event(
        "E1",
        "bench",
        venue="cool_mule",
        profile="cool_mule",
        starts_at=NOW,
        tables=[TableSpec("T1", 10)] * 1 + [TableSpec(f"T{i}", 10) for i in range(2, 2 + players // 10)],
        now=NOW,
    )
    for i in range(players):
        pid = f"P{i:04d}"
        registry.add_member(pid, f"Player {i}", date(1990, 1, 1), now=NOW, photo_id_checked=True)
        registry.register("E1", pid, now=NOW)
    return registry, keys


def desk_written_card(registry: Registry, keys, pid: str, writes: int, model: str = "ntag215"):
    """A card as the desk writes it (`write_card`, all-or-nothing layout). writes=2: re-issued once,
    so the record sits behind a proprietary TLV and the table reads more pages. model="ntag424": a
    blank NTAG 424 DNA the desk personalises (SUN: the table checks the tag's CMAC and counter)."""
    desk = SimulatedReader(f"desk-{pid}")
    tag = SimulatedNtag424() if model == "ntag424" else SimulatedNtag(model)
    desk.present(tag)
    for _ in range(writes):
        write_card(desk.frontend(), registry, keys, pid, now=NOW, wait=1)
    desk.remove()
    return tag


async def run_ntag(
    registry: Registry,
    keys,
    players: list[str],
    cmd_s: float,
    name: str,
    writes: int = 1,
    model: str = "ntag215",
) -> dict[str, list[float]]:
    reader = SimulatedReader.named(name)
    cards = {}
    for pid in players:
        tag = desk_written_card(registry, keys, pid, writes, model)
        tag.latency = cmd_s
        cards[pid] = tag
    tables = {}
    total, nfc_part, logic = [], [], []
    taps = watch_reader(f"sim:{name}")
    await asyncio.sleep(0.1)
    for pid in players:
        seat = registry.assignment("E1", pid)
        table = table_for(tables, registry, keys, seat.table_id)
        t0 = time.perf_counter()
        reader.present(cards[pid])
        tap = await anext(taps)
        t1 = time.perf_counter()
        result = table.on_tap(tap.uid, tap.ndef, NOW)
        t2 = time.perf_counter()
        assert result.accepted and result.lines[0]["type"] == "seat", result
        total.append((t2 - t0) * 1000)
        nfc_part.append((t1 - t0) * 1000)
        logic.append((t2 - t1) * 1000)
        reader.remove()
        await asyncio.sleep(0.12)  # card taken away; the reader notices before the next player
    await taps.aclose()
    return {"total": total, "nfc": nfc_part, "checkin": logic}


def table_for(tables: dict, registry: Registry, keys, table_id: str) -> TableCheckIn:
    """One check-in desk per table of the event, made on the first tap there."""
    if table_id not in tables:
        tables[table_id] = TableCheckIn(
            registry, venue="cool_mule", table_id=table_id, event_id="E1", verifier=CardVerifier(keys)
        )
    return tables[table_id]


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def run_udp(registry: Registry, keys, players: list[str]) -> dict[str, list[float]]:
    port = free_udp_port()
    total, nfc_part, logic = [], [], []
    taps = watch_reader(f"udp:localhost:{port}", retry_interval=0.2)
    tables = {}
    for pid in players:
        emulator = Type3Emulator(b"", port=port)
        emulator.load_message(encode_card(emulator.uid, pid, keys))
        registry.issue_card(emulator.uid, pid, "cool_mule", keys.current, now=NOW)
        seat = registry.assignment("E1", pid)
        table = table_for(tables, registry, keys, seat.table_id)
        t0 = time.perf_counter()
        emulator.start()
        tap = await anext(taps)
        t1 = time.perf_counter()
        result = table.on_tap(tap.uid, tap.ndef, NOW)
        t2 = time.perf_counter()
        emulator.stop()
        assert result.accepted, result
        total.append((t2 - t0) * 1000)
        nfc_part.append((t1 - t0) * 1000)
        logic.append((t2 - t1) * 1000)
    await taps.aclose()
    return {"total": total, "nfc": nfc_part, "checkin": logic}


def report(label: str, data: dict[str, list[float]]) -> None:
    t, n, c = data["total"], data["nfc"], data["checkin"]
    share = statistics.median(n) / statistics.median(t) * 100
    verdict = "OK" if pct(t, 99) < GOAL_MS else "OVER GOAL"
    print(
        f"{label:<38} n={len(t):>3}  tap->lines median {statistics.median(t):7.1f} ms  p99 {pct(t, 99):7.1f} ms"
        f"  | nfc median {statistics.median(n):6.1f} ms ({share:4.1f}%)  check-in median {statistics.median(c):5.1f} ms"
        f" p99 {pct(c, 99):5.1f} ms  [{verdict}, goal p99 < {GOAL_MS:.0f} ms]"
    )


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--taps", type=int, default=100)
    ap.add_argument("--udp-taps", type=int, default=15)
    ap.add_argument("--cmd-ms", type=float, default=6.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        total_players = 4 * args.taps + args.udp_taps
        registry, keys = setup(Path(tmp), total_players)
        registry.draw("E1", seed=1, now=NOW)
        players = [f"P{i:04d}" for i in range(total_players)]
        print(f"bench_nfc: {total_players} players, SQLite registry (WAL, synchronous=FULL) in {tmp}")
        n = args.taps
        if n:
            report("NTAG215, no air delay", await run_ntag(registry, keys, players[:n], 0.0, "b0"))
            report(
                f"NTAG215, {args.cmd_ms:g} ms/command (PN532)",
                await run_ntag(registry, keys, players[n : 2 * n], args.cmd_ms / 1000, "b1"),
            )
            report(
                f"NTAG215 re-issued, {args.cmd_ms:g} ms/command",
                await run_ntag(registry, keys, players[2 * n : 3 * n], args.cmd_ms / 1000, "b2", writes=2),
            )
            report(
                f"NTAG 424 DNA (SUN), {args.cmd_ms:g} ms/command",
                await run_ntag(
                    registry, keys, players[3 * n : 4 * n], args.cmd_ms / 1000, "b3", model="ntag424"
                ),
            )
        if args.udp_taps:
            report("Type 3 tag over nfcpy UDP link", await run_udp(registry, keys, players[4 * n :]))
        registry.close()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
