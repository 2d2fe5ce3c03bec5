"""Frame sources: folders, videos, the simulator, and cameras that are absent or stop."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from hil.camera import SimulatedCamera
from vision.sources import FrameSourceError, open_frames


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
