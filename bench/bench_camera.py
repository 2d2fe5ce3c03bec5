"""Camera-to-tracker benchmark: decoding the next frame on another core while this one is tracked.

    .venv/bin/python bench/bench_camera.py [--deals 1] [--deck drawn] [--quality 90]

A self-dealt hand (bench_track's deal: button, deal, a flashed card, bets, folds, board, showdown)
is rendered at 1920x1080 with sensor noise on every frame and written as an MJPEG video, the
stream a USB camera sends. The frames are then played to the vision tracker as fast as they decode
(`video:FILE?fast`), the way the service reads a camera (controller.service.sources.CameraSource):

- decode alone: the video read, no tracking;
- track alone: the tracker on frames decoded beforehand;
- one after the other: read a frame, track it, read the next (the service before ReadAhead);
- read ahead: vision.sources.ReadAhead, the next frame decoded in its thread while this one is
  tracked in another (the service now).

Prints milliseconds per frame and frames per second of each, and a live camera's frame age: the
same video paced at its frame rate through ReadAhead(live=True), how old the frame the tracker
takes is (a tracker slower than the camera works on the newest frame, never on a backlog).

Rendered frames only: this measures the pipeline's use of two cores, not what the camera sees.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import cv2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.bench_track import render_deal  # noqa: E402
from bench.bench_vision import deck_to_render  # noqa: E402
from vision.detect import Detector  # noqa: E402
from vision.layout import default_layout  # noqa: E402
from vision.sources import ReadAhead, open_frames  # noqa: E402
from vision.tracker import Tracker  # noqa: E402

SEATS = 6
FPS = 15  # the service's default camera rate


def write_video(frames: list[Path], path: Path, quality: int) -> None:
    first = cv2.imread(str(frames[0]))
    h, w = first.shape[:2]
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, (w, h))
    out.set(cv2.VIDEOWRITER_PROP_QUALITY, quality)
    for f in frames:
        out.write(cv2.imread(str(f)))
    out.release()


def new_tracker(width: int, height: int) -> Tracker:
    layout = default_layout(SEATS, width, height)
    detector = Detector(track=True)
    detector.layout = layout
    return Tracker(layout, detector=detector)


def _tracked(tracker: Tracker, frame, t: float) -> list[dict]:
    return list(tracker.update(frame, t))


def decode_alone(video: Path) -> tuple[int, float]:
    cap = cv2.VideoCapture(str(video))
    n, t0 = 0, time.perf_counter()
    while True:
        ok, _frame = cap.read()
        if not ok:
            break
        n += 1
    cap.release()
    return n, time.perf_counter() - t0


def track_alone(video: Path) -> tuple[int, float]:
    cap = cv2.VideoCapture(str(video))
    frames = []
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        frames.append(frame)
    cap.release()
    tracker = new_tracker(frames[0].shape[1], frames[0].shape[0])
    t0 = time.perf_counter()
    for k, frame in enumerate(frames):
        list(tracker.update(frame, k / FPS))
    return len(frames), time.perf_counter() - t0


async def played(video: Path, ahead: bool) -> tuple[int, float, list[dict]]:
    """The service's loop: each frame tracked in a worker thread, the next read meanwhile or after."""
    tracker = None
    lines: list[dict] = []
    n = 0

    async def track(frames) -> None:
        nonlocal tracker, n
        async for t, frame in frames:
            if tracker is None:
                tracker = new_tracker(frame.shape[1], frame.shape[0])
            lines.extend(await asyncio.to_thread(_tracked, tracker, frame, t))
            n += 1

    t0 = time.perf_counter()
    frames = open_frames(f"video:{video}?fast")
    if ahead:
        async with ReadAhead(frames, live=False) as reading:
            await track(reading)
    else:
        await track(frames)
    return n, time.perf_counter() - t0, lines


async def live_age(video: Path) -> tuple[list[float], int, int]:
    """The video paced at its frame rate as a live camera: the age of each frame the tracker takes."""
    tracker = None
    ages: list[float] = []
    start = time.monotonic()
    async with ReadAhead(open_frames(f"video:{video}"), live=True) as frames:
        async for t, frame in frames:
            ages.append(time.monotonic() - start - t)
            if tracker is None:
                tracker = new_tracker(frame.shape[1], frame.shape[0])
            await asyncio.to_thread(_tracked, tracker, frame, t)
        return ages, len(ages), frames.skipped


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=1)
    ap.add_argument("--deck", default="drawn")
    ap.add_argument("--quality", type=int, default=90, help="MJPEG quality of the recorded stream")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        deck = deck_to_render(args.deck)
        for d in range(args.deals):
            sub = folder / f"deal{d}"
            sub.mkdir()
            render_deal(sub, deck, SEATS, args.seed + d)
        pngs = sorted(folder.glob("deal*/frame_*.png"))
        video = folder / "table.avi"
        write_video(pngs, video, args.quality)
        print(
            f"{len(pngs)} frames of {args.deals} self-dealt hand(s), 1920x1080, MJPEG q{args.quality}, "
            f"deck {args.deck}; OpenCV threads {cv2.getNumThreads()}, {len(os.sched_getaffinity(0))} cores"
        )

        n, s = decode_alone(video)
        print(f"  decode alone          {1000 * s / n:6.1f} ms/frame")
        n, s = track_alone(video)
        print(f"  track alone           {1000 * s / n:6.1f} ms/frame")
        results = {}
        for name, ahead in (("one after the other", False), ("read ahead", True)):
            n, s, lines = asyncio.run(played(video, ahead))
            results[name] = (s / n, lines)
            print(f"  {name:21s} {1000 * s / n:6.1f} ms/frame  {n / s:5.1f} frames/s  ({len(lines)} lines)")
        (seq, seq_lines), (ra, ra_lines) = results["one after the other"], results["read ahead"]
        print(f"  read ahead: {seq / ra:.2f}x the frames per second; same lines: {seq_lines == ra_lines}")

        ages, taken, skipped = asyncio.run(live_age(video))
        ages_ms = sorted(1000 * a for a in ages)
        print(
            f"  live camera at {FPS} fps, ReadAhead(live=True): {taken} frames tracked, {skipped} skipped; "
            f"frame age when taken median {statistics.median(ages_ms):.0f} ms, worst {ages_ms[-1]:.0f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
