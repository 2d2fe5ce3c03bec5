"""Frame sources: folders, videos, the simulator, and cameras that are absent or stop."""

from __future__ import annotations

import asyncio
import threading

import cv2
import numpy as np
import pytest

from hil.camera import SimulatedCamera
from vision.sources import FrameSourceError, ReadAhead, is_live, open_frames, read_ahead, read_frames


async def _take(it, n):
    out = []
    async for t, frame in it:
        out.append((t, frame))
        if len(out) >= n:
            break
    return out


async def test_folder_in_name_order_skipping_bad_files(tmp_path):
    for i, v in enumerate([10, 20, 30]):
        cv2.imwrite(str(tmp_path / f"f{i}.png"), np.full((20, 30, 3), v, np.uint8))
    (tmp_path / "f1b.png").write_bytes(b"broken")
    frames = await _take(open_frames(f"dir:{tmp_path}"), 10)
    assert [int(f[0, 0, 0]) for _, f in frames] == [10, 20, 30]
    assert [t for t, _ in frames] == sorted(t for t, _ in frames)


async def test_video_file_plays_to_the_end(tmp_path):
    path = tmp_path / "clip.avi"
    vw = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25, (64, 48))
    for i in range(5):
        vw.write(np.full((48, 64, 3), i * 40, np.uint8))
    vw.release()
    frames = await _take(open_frames(f"video:{path}?fast"), 100)
    assert len(frames) == 5 and frames[0][1].shape == (48, 64, 3)


def test_missing_sources_are_named(tmp_path):
    with pytest.raises(FrameSourceError, match="nope"):
        open_frames(f"dir:{tmp_path / 'nope'}")
    with pytest.raises(FrameSourceError, match=r"clip\.mp4"):
        open_frames(f"video:{tmp_path / 'clip.mp4'}")
    with pytest.raises(FrameSourceError, match="unknown kind"):
        open_frames("webcam:0")


async def test_absent_camera_is_named():
    with pytest.raises(FrameSourceError, match="/dev/video99"):
        await _take(open_frames("v4l2:/dev/video99"), 1)


async def test_picamera2_absent_here():
    with pytest.raises(FrameSourceError, match="picamera2"):
        await _take(open_frames("picamera2:0"), 1)


async def test_sim_source_and_a_camera_that_stops():
    frames = await _take(open_frames("sim:5", fps=200), 3)
    assert len(frames) == 3 and frames[0][1].ndim == 3
    cam = SimulatedCamera(width=320, height=180, fps=200)
    it = open_frames(cam)
    got = 0
    with pytest.raises(FrameSourceError, match="stopped delivering"):
        async for _t, _f in it:
            got += 1
            if got == 2:
                cam.stopped = True
    assert got == 2


async def test_callable_source():
    calls = iter([np.zeros((10, 10, 3), np.uint8)] * 2 + [None])
    frames = await _take(open_frames(lambda: next(calls), fps=500), 10)
    assert len(frames) == 2


# -- reading the next frame while the tracker works on this one ---------------------------------


async def _numbered(n, asked=None, released=None, fail_after=None):
    """Frames 0..n-1 as fast as they are asked for; `asked[i]` is set when frame i is asked for."""
    try:
        for i in range(n):
            if asked is not None:
                asked[i].set()
            if fail_after is not None and i == fail_after:
                raise FrameSourceError("v4l2:/dev/video0: camera stopped delivering frames")
            await asyncio.sleep(0)
            yield float(i), np.full((4, 4, 3), i, np.uint8)
    finally:
        if released is not None:
            released.set()


async def test_the_next_frame_is_read_while_this_one_is_worked_on():
    """The decode of frame 1 does not wait for the tracker to finish frame 0: were it read only
    when asked for, the tracker below would wait on it forever."""
    asked = [asyncio.Event() for _ in range(3)]
    async with ReadAhead(_numbered(3, asked), live=False) as frames:
        t, _frame = await anext(frames)
        assert t == 0.0
        await asyncio.wait_for(asked[1].wait(), 2.0)  # the tracker still "works" on frame 0


async def _slowly_tracked(n: int, live: bool, seconds: float) -> tuple[list[float], int]:
    """The times of the frames a tracker taking `seconds` a frame was given, and how many were skipped."""
    got = []
    async with ReadAhead(_numbered(n), live=live) as frames:
        async for t, _frame in frames:
            got.append(t)
            await asyncio.sleep(seconds)
    return got, frames.skipped


async def test_files_and_pushed_frames_lose_none_to_a_slow_tracker():
    got, skipped = await _slowly_tracked(12, live=False, seconds=0.005)
    assert got == [float(i) for i in range(12)] and skipped == 0


async def test_a_live_camera_gives_a_busy_tracker_its_newest_frame():
    got, skipped = await _slowly_tracked(30, live=True, seconds=0.01)
    assert got == sorted(got) and got[-1] == 29.0  # in order, ending on the newest
    assert skipped > 0 and skipped + len(got) == 30


async def test_a_camera_that_stops_is_reported_after_the_frames_it_gave():
    got = []
    with pytest.raises(FrameSourceError, match="stopped delivering"):
        async with ReadAhead(_numbered(5, fail_after=2), live=True) as frames:
            async for t, _frame in frames:
                got.append(t)
    assert got == [0.0, 1.0]


async def test_leaving_early_releases_the_camera():
    released = asyncio.Event()
    async with ReadAhead(_numbered(1000, released=released), live=True) as frames:
        await anext(frames)
    assert released.is_set()


def test_only_cameras_that_film_on_are_live():
    assert is_live("v4l2:/dev/video0") and is_live("/dev/video2") and is_live("picamera2:0")
    assert not is_live("video:session.mp4") and not is_live("dir:frames") and not is_live("sim")


async def test_a_stopping_caller_is_not_kept_from_stopping():
    """Cancelling the task that reads (the service stopping) ends it: the read-ahead's own
    clean-up must not swallow the cancellation, or the camera would be restarted forever."""
    started = asyncio.Event()

    async def track():
        async with ReadAhead(_numbered(10**6), live=True) as frames:
            async for _t, _frame in frames:
                started.set()
                await asyncio.sleep(0.001)

    task = asyncio.create_task(track())
    await asyncio.wait_for(started.wait(), 2.0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2.0)


# -- `vision track`: the next frames decoded in a thread -----------------------------------------


def _made(n, asked=None, closed=None, fail_at=None):
    try:
        for i in range(n):
            if asked is not None:
                asked[i].set()
            if i == fail_at:
                raise FrameSourceError("video:session.mp4: cannot open")
            yield i
    finally:
        if closed is not None:
            closed.set()


def test_read_ahead_makes_the_next_item_while_the_caller_holds_this_one():
    asked = [threading.Event() for _ in range(4)]
    items = read_ahead(_made(4, asked))
    assert next(items) == 0
    assert asked[1].wait(2.0)  # made in the thread, not when asked for
    assert list(items) == [1, 2, 3]


def test_read_ahead_raises_after_the_items_made_before():
    got = []
    with pytest.raises(FrameSourceError, match="cannot open"):
        for i in read_ahead(_made(5, fail_at=3)):
            got.append(i)
    assert got == [0, 1, 2]


def test_a_caller_that_stops_early_closes_the_source():
    closed = threading.Event()
    items = read_ahead(_made(10**6, closed=closed))
    assert next(items) == 0
    items.close()
    assert closed.wait(2.0)


def test_vision_track_reads_a_folder_in_order_through_the_read_ahead(tmp_path):
    for i in range(5):
        cv2.imwrite(str(tmp_path / f"f{i:02d}.png"), np.full((40, 60, 3), 20 * i, np.uint8))
    (tmp_path / "f02b.png").write_bytes(b"not a png")
    got = [(i, name.rsplit("/", 1)[-1], why) for i, name, _f, why in read_ahead(read_frames([str(tmp_path)]))]
    assert [g[1] for g in got] == ["f00.png", "f01.png", "f02.png", "f02b.png", "f03.png", "f04.png"]
    assert [g[0] for g in got] == list(range(6)) and got[3][2] == "not a readable image"


def test_grab_frame_lets_the_camera_settle_and_takes_the_next_frame(tmp_path):
    """A still for a one-off job (a deck's enrolment): the first frames, taken while the exposure
    settles, are let go; a source that ends sooner gives its last; one that cannot open is named."""
    from vision.sources import grab_frame

    video = tmp_path / "grey.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
    for level in range(0, 200, 20):  # ten frames, each lighter
        writer.write(np.full((48, 64, 3), level, np.uint8))
    writer.release()
    assert abs(float(grab_frame(f"video:{video}?fast", settle=3).mean()) - 60) < 6
    assert abs(float(grab_frame(f"video:{video}?fast", settle=30).mean()) - 180) < 6
    with pytest.raises(FrameSourceError, match=r"nope\.avi"):
        grab_frame(f"video:{tmp_path / 'nope.avi'}")
