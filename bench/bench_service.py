"""Benchmark of the table service, end to end (prints its figures, exits 0).

1. Latency: a simulated camera frame shows the first card of the deal face up -> vision tracker ->
   rules engine (misdeal) -> event log -> the MISDEAL scene acknowledged by the simulated panel
   (real firmware on a pty) AND the `misdeal` ruling received by an MQTT subscriber. Measured from
   the moment the first frame showing the card is handed to the service; the tracker needs
   `debounce_frames` (3) frames in a row, so three frames are pushed back to back (the time of
   the 2nd and 3rd frame is inside the figure). Also printed: from the third frame. Goal: p99 < 100 ms.
   Every frame is new, with its own sensor noise (the renderer's 3 grey levels), as a camera sends
   them: the tracker cannot take a frame for the one before (`--same-frames`: one frame three times).
   The broker is a Mosquitto started here (as a venue runs it) when installed, else the embedded
   demo broker (`--broker`); the subscriber (the director's screen) is a client in this process.
2. Resident memory of `smart-table run` (the simulated table with its defaults) after it served a
   few hands. Goal: < 150 MB.
3. Start to READY: process spawn to the READY=1 datagram on NOTIFY_SOCKET. Goal: < 2 s.

    .venv/bin/python bench/bench_service.py [--hands 100] [--broker mosquitto|embedded] [--width 1280 --height 720]
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiomqtt

from controller.mqtt import mosquitto
from controller.service.app import TableService, pid_rss_kib
from controller.service.config import parse_config

REPO = Path(__file__).resolve().parents[1]
MAX_FRAMES = 12  # noisy frames pushed at most per hand: the debounce (3) and the read wait (6) and some
SEATS = [{"type": "seat", "seat": s, "player": f"P{s}", "stack": 20000} for s in (1, 2, 4, 5)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[k]


async def push(service: TableService, frame) -> None:
    """One frame to the camera; a camera that takes none for 10 s ends the benchmark with its health."""
    try:
        async with asyncio.timeout(10):
            await service.push_frame(frame)
    except TimeoutError:
        camera = service.health.part("camera")
        raise SystemExit(f"the camera takes no frames: {camera.status} ({camera.detail})") from None


async def latency(
    hands: int, width: int, height: int, workdir: Path, broker_port: int | None, noisy: bool = True
) -> dict[str, float]:
    broker = {"host": "127.0.0.1", "port": broker_port} if broker_port else {"embedded_port": 0}
    cfg = parse_config(
        {
            "table": {"seats": 6, "profile": "cool_mule"},
            # a slow idle rate: the frames that matter are pushed by the benchmark
            "devices": {
                "camera": "sim",
                "panel": "sim",
                "nfc": "none",
                # one idle frame per 5 s at most: none falls between the frames a hand pushes (an
                # idle frame showing the card before the clock starts would shorten the figure)
                "camera_fps": 0.2,
                "sim_width": width,
                "sim_height": height,
            },
            "broker": broker,
            "event_log": {"path": str(workdir / "bench.db"), "synchronous": "full"},
        },
        "bench",
    )
    from_first: list[float] = []
    from_last: list[float] = []
    vision_engine: list[float] = []
    fanout_panel: list[float] = []
    fanout_mqtt: list[float] = []
    frames_needed: list[int] = []
    async with TableService(cfg) as service:
        cam = service.camera.sim
        cam.noise_every_frame = noisy
        acked: asyncio.Queue[float] = asyncio.Queue()
        service.panel.ack_listeners.append(
            lambda scene: acked.put_nowait(time.perf_counter()) if scene.text.startswith("MISDEAL") else None
        )
        ruled: asyncio.Queue[float] = asyncio.Queue()
        engine_ruled: list[float] = []
        frames_at_ruling: list[int] = []  # frames the tracker had taken when the ruling came
        on_line = service.panel.on_line

        def hooked(line: dict) -> None:  # the moment the logged misdeal reaches the sinks
            if line.get("type") == "misdeal":
                engine_ruled.append(time.perf_counter())
                frames_at_ruling.append(service.camera.frames)
            on_line(line)

        service.panel.on_line = hooked  # type: ignore[method-assign]
        port = broker_port or service.broker.port
        async with aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V311) as sub:
            await sub.subscribe(f"{cfg.prefix}/rulings", qos=1)

            async def listen() -> None:
                async for m in sub.messages:
                    if json.loads(m.payload).get("type") == "misdeal":
                        ruled.put_nowait(time.perf_counter())

            listener = asyncio.create_task(listen())
            for line in [*SEATS, {"type": "level", "sb": 50, "bb": 100}]:
                await service.inject(line)
            for n in range(hands):
                cam.clear()
                empty, _ = await asyncio.to_thread(cam.frame)
                outs = await service.inject({"type": "hand_start"})
                hand = next((o for o in outs if o.get("type") == "hand"), None)
                if hand is None:
                    raise SystemExit(f"hand_start refused: {outs}")
                first_seat = hand["first_card"]
                for _ in range(8):  # an empty felt long enough for the tracker to forget the last hand
                    await push(service, empty)
                await asyncio.sleep(0.05)
                cam.deal_to(first_seat, face_up=True)
                # rendered before the clock starts: the camera, not the table, makes the frames. A
                # camera keeps sending them: a card read below the confidence is told without its
                # code only after the tracker's read wait (vision/tracker.py), so more frames follow
                frames = [
                    (await asyncio.to_thread(cam.frame))[0] for _ in range(3 if not noisy else MAX_FRAMES)
                ]
                ruled_before = len(engine_ruled)
                frames_before = service.camera.frames
                t0 = time.perf_counter()
                pushed = 0
                for frame in frames:
                    await push(service, frame)
                    pushed += 1
                    if pushed < 3:
                        continue  # the debounce's three frames back to back, as before
                    # then one more frame per camera period (30 frames/s) until the ruling
                    deadline = time.perf_counter() + 1 / 30
                    while len(engine_ruled) == ruled_before and time.perf_counter() < deadline:
                        await asyncio.sleep(0.002)
                    if len(engine_ruled) > ruled_before:
                        break
                t_last = time.perf_counter()
                try:
                    async with asyncio.timeout(5):
                        t_panel = await acked.get()
                        t_mqtt = await ruled.get()
                except TimeoutError:
                    print(f"hand {n + 1}: no misdeal within 5 s (tracker missed the card?)", file=sys.stderr)
                    continue
                done = max(t_panel, t_mqtt)
                frames_needed.append(frames_at_ruling[-1] - frames_before)
                from_first.append((done - t0) * 1000)
                from_last.append((done - t_last) * 1000)
                vision_engine.append((engine_ruled[-1] - t0) * 1000)
                fanout_panel.append((t_panel - engine_ruled[-1]) * 1000)
                fanout_mqtt.append((t_mqtt - engine_ruled[-1]) * 1000)
            listener.cancel()
        rss = pid_rss_kib()
    return {
        "hands": len(from_first),
        "median_ms": statistics.median(from_first),
        "p99_ms": percentile(from_first, 99),
        "median_from_third_frame_ms": statistics.median(from_last),
        "p99_from_third_frame_ms": percentile(from_last, 99),
        "bench_process_rss_mb": rss / 1024,
        "vision_engine_log_ms": statistics.median(vision_engine),
        "panel_ack_ms": statistics.median(fanout_panel),
        "mqtt_ms": statistics.median(fanout_mqtt),
        "frames_median": statistics.median(frames_needed),
        "frames_max": max(frames_needed),
        "frames_over_3": sum(1 for n in frames_needed if n > 3),
        "slowest": sorted(zip(from_first, vision_engine, fanout_panel, fanout_mqtt, strict=True))[-3:][::-1],
    }


def render_frames(folder: Path, count: int = 30) -> None:
    """Frames of a dealt hand as image files, for a camera without the simulator's renderer."""
    import cv2

    from hil.camera import SimulatedCamera

    folder.mkdir(exist_ok=True)
    cam = SimulatedCamera(seats=6)
    for k in range(count):
        if k % 3 == 0:
            cam.deal_to(1 + (k // 3) % 6)
        frame, _ = cam.frame()
        cv2.imwrite(str(folder / f"{k:03d}.png"), frame)


async def start_and_memory(workdir: Path, camera: str = "sim") -> dict[str, float]:
    """`smart-table run` (simulated table; or a camera reading image files): spawn -> READY, then RSS."""
    sock_path = str(workdir / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    Path(sock_path).unlink(missing_ok=True)
    sock.bind(sock_path)
    sock.setblocking(False)
    config = workdir / "table.toml"
    config.write_text(
        f'[broker]\nembedded_port = 0\n[event_log]\npath = "{workdir / "run.db"}"\n[table]\nseats = 6\n'
        f'[devices]\ncamera = "{camera}"\n'
    )
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "NOTIFY_SOCKET": sock_path},
    )
    loop = asyncio.get_running_loop()
    try:
        async with asyncio.timeout(30):
            while True:
                msg = (await loop.sock_recv(sock, 4096)).decode()
                if "READY=1" in msg:
                    ready = time.perf_counter() - t0
                    break
        await asyncio.sleep(5)  # the simulated camera runs, the tracker warms up
        rss = pid_rss_kib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(10)
        sock.close()
    return {
        "start_to_ready_s": ready,
        "service_rss_mb": rss / 1024,
        "ready_status": msg.strip().replace("\n", " "),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--hands", type=int, default=100)
    parser.add_argument(
        "--broker",
        choices=("mosquitto", "embedded"),
        default="mosquitto" if mosquitto.installed() else "embedded",
        help="mosquitto (a venue's broker, started here on a free port; the default when installed) "
        "or the embedded demo broker, which runs inside the service's process",
    )
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=720)
    parser.add_argument(
        "--same-frames", action="store_true", help="push one noiseless frame three times (the old figure)"
    )
    args = parser.parse_args()
    noisy = not args.same_frames
    faulthandler.dump_traceback_later(900, exit=True)  # a hang says where it hung instead of waiting forever
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp:
        work = Path(tmp)
        if args.broker == "mosquitto":
            (work / "broker").mkdir()
            with mosquitto.Mosquitto(work / "broker", persistence=False) as broker:
                lat = asyncio.run(latency(args.hands, args.width, args.height, work, broker.port, noisy))
        else:
            lat = asyncio.run(latency(args.hands, args.width, args.height, work, None, noisy))
        runs = [asyncio.run(start_and_memory(work)) for _ in range(3)]
        run = {
            **runs[-1],
            "start_to_ready_s": statistics.median(r["start_to_ready_s"] for r in runs),
            "ready_runs": [round(r["start_to_ready_s"], 2) for r in runs],
        }
        render_frames(work / "frames")
        files = asyncio.run(start_and_memory(work, f"dir:{work / 'frames'}"))
    print(
        f"frame ({args.width}x{args.height}, {'one frame three times' if args.same_frames else 'every frame new, sensor noise'}) "
        f"-> MISDEAL acked by panel + ruling on MQTT ({args.broker} broker), {lat['hands']} hands:"
    )
    print(
        f"  from first frame showing the card: median {lat['median_ms']:.1f} ms, p99 {lat['p99_ms']:.1f} ms "
        f"(goal p99 < 100 ms)"
    )
    print(
        f"  frames through the tracker until the ruling: median {lat['frames_median']:.0f}, most {lat['frames_max']}; "
        f"{lat['frames_over_3']} hands needed more than the debounce's 3 (a card read below the "
        "confidence waits the read wait; at 30 frames/s each frame is 33 ms of camera time more)"
    )
    print(
        f"  medians of the parts: 3 frames through the tracker + engine + log commit "
        f"{lat['vision_engine_log_ms']:.1f} ms; then panel ack {lat['panel_ack_ms']:.1f} ms, "
        f"MQTT subscriber {lat['mqtt_ms']:.1f} ms (in parallel)"
    )
    print(
        "  the slowest hands (total: tracker + engine + log, then panel ack | MQTT): "
        + "; ".join(f"{t:.1f}: {v:.1f} + {p:.1f} | {m:.1f}" for t, v, p, m in lat["slowest"])
    )
    print(f"  benchmark process RSS: {lat['bench_process_rss_mb']:.1f} MB")
    print(
        f"smart-table run (simulated table): start to READY median {run['start_to_ready_s']:.2f} s "
        f"of {run['ready_runs']} (goal < 2 s), "
        f"RSS {run['service_rss_mb']:.1f} MB (goal < 150 MB)"
    )
    print(f"  READY datagram: {run['ready_status']}")
    print(
        f"smart-table run, camera reading image files (no simulator renderer, as on a table): "
        f"RSS {files['service_rss_mb']:.1f} MB, start to READY {files['start_to_ready_s']:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
