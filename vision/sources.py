"""Frame sources: `open_frames(spec)` -> async iterator of (t_seconds, frame_bgr).

Specs:
  v4l2:/dev/video0    a camera through OpenCV (V4L2 backend); `v4l2:0` works too
  picamera2:0         the Raspberry Pi camera through Picamera2 (only where it is installed)
  video:path.mp4      a video file, paced at its own frame rate (`?fast` reads as fast as possible)
  dir:path/           the images of a folder in name order (unreadable ones are skipped and logged)
  sim:<seed>          the simulated camera playing scripted deals (registered by the simulated table)
or pass any object with `frames(fps)` (controller.devices.FrameSource) or a callable returning frames.

Each kind is a camera registered by name in controller.devices (the `camera.<kind>` entry points of
pyproject.toml): the real ones are the classes here, a plug-in adds its own the same way.

`ReadAhead(frames, live=...)` reads the next frame while the caller works on this one: decoding (a
camera's MJPEG, a video's H.264) runs in its own thread, on another core than detection. A live
camera keeps only its newest frame for a busy caller; files and pushed frames lose none.

`read_frames(items)` is the plain, unpaced reader for `vision track`: image files, a folder or a
video, each frame with its index, and unreadable ones reported instead of dropped silently;
`read_ahead(read_frames(items))` decodes the next ones in a thread meanwhile.

Blocking reads run in a worker thread so the event loop keeps serving. A camera that stops
delivering frames raises `FrameSourceError` naming the device; the caller (the service) reports
the camera as degraded and carries on with its other sources.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from controller.devices import CameraOptions

log = logging.getLogger("smart_table.vision.sources")
IMAGE_EXTS = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
LIVE_KINDS = ("v4l2:", "picamera2:", "/dev/")  # specs of cameras that do not wait for their reader
VIDEO_EXTS = {".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv", ".h264", ".mjpeg"}


class FrameSourceError(RuntimeError):
    """A frame source that cannot open or stopped delivering; the message names it."""


def open_frames(
    spec, *, timeout_s: float = 5.0, fps: float | None = None
) -> AsyncIterator[tuple[float, np.ndarray]]:
    """Async iterator of (t_seconds since start, BGR frame) for a source spec (see module docstring)."""
    if callable(spec) and not isinstance(spec, str):
        return _callable_frames(spec, fps or 10.0)
    if hasattr(spec, "frames") and not isinstance(spec, str):
        return _guard(type(spec).__name__, spec.frames(fps=fps))
    if not isinstance(spec, str):
        raise FrameSourceError(
            f"frame source {spec!r}: expected v4l2:DEV, picamera2:N, video:FILE, dir:FOLDER or sim:SEED"
        )
    from controller.devices import CameraOptions, DeviceError, open_camera

    try:
        source = open_camera(spec, CameraOptions(fps=fps or 10.0, timeout_s=timeout_s))
    except DeviceError as exc:
        raise FrameSourceError(str(exc)) from None
    return _guard(spec, source.frames(fps=fps))


CAMERA_KINDS = (*LIVE_KINDS, "video:", "sim:")  # specs grab_frame takes a frame of
SETTLE_FRAMES = 10  # grab_frame: frames let go first, while the camera's exposure and white balance settle


def grab_frame(spec: str, settle: int = SETTLE_FRAMES, timeout_s: float = 5.0) -> np.ndarray:
    """One frame of a camera (a spec of open_frames), taken after `settle` frames, as a still for
    what is done once (a deck's enrolment): the picture the service will see, from the same camera at
    the same size. A source that ends sooner gives its last frame; one that gives none, or cannot
    open, raises FrameSourceError naming it."""

    async def grab() -> np.ndarray:
        frames = open_frames(spec, timeout_s=timeout_s)
        last, n = None, 0
        try:
            async for _t, frame in frames:
                last, n = frame, n + 1
                if n > settle:
                    break
        finally:
            await frames.aclose()
        if last is None:
            raise FrameSourceError(f"{spec}: gave no frame")
        return last

    return asyncio.run(grab())


def is_live(spec: str) -> bool:
    """A camera that goes on filming while its frames wait (V4L2, Picamera2): a frame left waiting
    behind a slow one is stale, so only the newest is worth reading. Files, folders, the simulated
    camera and plug-ins (unknown) wait for their reader and lose nothing."""
    return isinstance(spec, str) and spec.startswith(LIVE_KINDS)


class ReadAhead:
    """The next frame read while the caller works on this one; an async context manager.

        async with ReadAhead(open_frames(spec), live=is_live(spec)) as frames:
            async for t, frame in frames:
                ...  # the following frame is being read and decoded meanwhile

    One frame waits at most. `live`: a newer frame replaces a waiting one (counted in `skipped`),
    so the caller always works on the table as it is now, never on a queue of the past (OpenCV's
    V4L2 buffer alone holds four frames: 130 ms at 30 fps added to every ruling). Not live: the
    reader waits for the caller and no frame is lost. The end of the frames, and whatever the
    source raised (a camera that stopped), reach the caller after the frames read before it.
    """

    _END = object()

    def __init__(self, frames: AsyncIterator[tuple[float, np.ndarray]], *, live: bool) -> None:
        self._frames = frames
        self.live = live
        self.skipped = 0
        self._slot: asyncio.Queue = asyncio.Queue(maxsize=1)
        self._reader: asyncio.Task | None = None

    async def __aenter__(self) -> ReadAhead:
        self._reader = asyncio.create_task(self._read(), name="camera-read-ahead")
        return self

    async def __aexit__(self, *exc_info) -> None:
        self._reader.cancel()
        # wait() neither raises the reader's cancellation nor swallows the caller's own (a service
        # stopping cancels the caller here: it must go on stopping, not restart the camera)
        await asyncio.wait([self._reader])
        closing = getattr(self._frames, "aclose", None)
        if closing is not None:
            await closing()  # the device is released now, not whenever the generator is collected

    async def _read(self) -> None:
        try:
            async for item in self._frames:
                if self.live and self._slot.full():
                    self._slot.get_nowait()
                    self.skipped += 1
                await self._slot.put(item)
        except Exception as exc:
            await self._slot.put((self._END, exc))
        else:
            await self._slot.put((self._END, None))

    def __aiter__(self) -> ReadAhead:
        return self

    async def __anext__(self) -> tuple[float, np.ndarray]:
        item = await self._slot.get()
        if item[0] is self._END:
            if item[1] is not None:
                raise item[1]
            raise StopAsyncIteration
        return item


def read_ahead(items: Iterator, depth: int = 2) -> Iterator:
    """`items` made in a thread of their own, up to `depth` ahead of the caller.

    `vision track` on a recording: decoding a 1080p PNG costs 15-20 ms and a tracked frame 2-3 ms,
    so the decode was most of the command's time, on the same core. Whatever `items` raises reaches
    the caller after the items made before it; a caller that stops early stops the thread, which
    closes `items` (a video is released)."""
    hand_over: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                hand_over.put(entry, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def make() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
        except BaseException as exc:  # handed to the caller, raised there
            put((False, exc))
        else:
            put((False, None))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    maker = threading.Thread(target=make, name="read-ahead", daemon=True)
    maker.start()
    try:
        while True:
            made, item = hand_over.get()
            if made:
                yield item
            elif item is None:
                return
            else:
                raise item
    finally:
        stop.set()
        maker.join(timeout=5.0)


class SpecSource:
    """A frame source named by its spec; the device is opened when its frames are first read.
    Meets controller.devices.FrameSource."""

    def __init__(self, spec: str, frames: Callable[[float | None], AsyncIterator[tuple[float, np.ndarray]]]):
        self.spec = spec
        self._frames = frames

    def frames(self, fps: float | None = None) -> AsyncIterator[tuple[float, np.ndarray]]:
        return self._frames(fps)


def v4l2_camera(spec: str, options: CameraOptions) -> SpecSource:
    """`v4l2:/dev/video0` or `v4l2:0`: a camera through OpenCV's V4L2 backend (the `camera.v4l2` device)."""
    arg = spec.partition(":")[2]
    target = int(arg) if arg.isdigit() else arg
    return SpecSource(spec, lambda fps: _capture_frames(spec, target, options.timeout_s, live=True))


def video_file(spec: str, options: CameraOptions) -> SpecSource:
    """`video:FILE[?fast]`: a video file paced at its own rate, or as fast as it decodes (`camera.video`)."""
    arg = spec.partition(":")[2]
    fast = arg.endswith("?fast")
    path = arg.removesuffix("?fast")
    if not Path(path).is_file():
        raise FrameSourceError(f"video source {path}: no such file")
    return SpecSource(
        spec, lambda fps: _capture_frames(spec, path, options.timeout_s, live=False, paced=not fast)
    )


def image_folder(spec: str, options: CameraOptions) -> SpecSource:
    """`dir:FOLDER`: the images of a folder in name order (`camera.dir`)."""
    arg = spec.partition(":")[2]
    if not Path(arg).is_dir():
        raise FrameSourceError(f"image folder {arg}: no such folder")
    return SpecSource(spec, lambda fps: _dir_frames(Path(arg), fps))


def picamera2_camera(spec: str, options: CameraOptions) -> SpecSource:
    """`picamera2:N`: the Raspberry Pi camera through Picamera2, where installed (`camera.picamera2`)."""
    arg = spec.partition(":")[2]
    try:
        index = int(arg or 0)
    except ValueError:
        raise FrameSourceError(f"picamera2 source {spec!r}: the camera number must be an integer") from None
    return SpecSource(spec, lambda fps: _picamera2_frames(spec, index, options.timeout_s))


def read_frames(items: list[str]):
    """Frames in order as (index, name, frame or None, why not): image files; a single folder (its
    images in name order); or a single video file (read frame by frame). A video or folder that
    cannot be opened raises FrameSourceError naming it; an unreadable image is yielded with its
    reason, and keeps its index, so later frames keep theirs."""
    import cv2

    if len(items) == 1 and Path(items[0]).is_dir():
        folder = Path(items[0])
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_EXTS)
        if not files:
            raise FrameSourceError(f"image folder {folder}: no images ({', '.join(sorted(IMAGE_EXTS))})")
        items = [str(f) for f in files]
    elif len(items) == 1 and _is_video(Path(items[0])):
        yield from _video_frames(items[0])
        return
    for i, name in enumerate(items):
        p = Path(name)
        frame, why = None, None
        if p.is_dir():
            why = "a folder (give one folder alone, or image files)"
        elif not p.is_file():
            why = "no such file"
        else:
            try:
                frame = cv2.imread(str(p), cv2.IMREAD_COLOR)
            except cv2.error as exc:
                why = f"cannot read image: {exc}"
            if frame is None and why is None:
                why = "not a readable image"
            elif frame is not None and min(frame.shape[:2]) < 16:
                frame, why = None, f"image too small ({frame.shape[1]}x{frame.shape[0]})"
        yield i, name, frame, why


def _is_video(p: Path) -> bool:
    return p.suffix.lower() in VIDEO_EXTS or (p.is_file() and p.suffix.lower() not in IMAGE_EXTS)


def _video_frames(name: str):
    import cv2

    if not Path(name).is_file():
        raise FrameSourceError(f"video {name}: no such file")
    cap = cv2.VideoCapture(name)
    try:
        if not cap.isOpened():
            raise FrameSourceError(f"video {name}: cannot open (not a video OpenCV can decode)")
        n = 0
        while True:
            ok, frame = cap.read()
            if not ok or frame is None:
                if n == 0:
                    raise FrameSourceError(f"video {name}: no frame could be decoded")
                return
            yield n, f"{name}#{n}", frame, None
            n += 1
    finally:
        cap.release()


async def _capture_frames(spec: str, target, timeout_s: float, live: bool, paced: bool = True):
    import cv2

    cap = await asyncio.to_thread(cv2.VideoCapture, target, cv2.CAP_V4L2 if live else cv2.CAP_ANY)
    if not cap.isOpened():
        cap.release()
        raise FrameSourceError(f"{spec}: cannot open")
    period = 0.0
    if not live and paced:
        fps = cap.get(cv2.CAP_PROP_FPS)
        period = 1.0 / fps if fps and fps > 0 else 0.0
    t0 = time.monotonic()
    n = 0
    try:
        while True:
            try:
                ok, frame = await asyncio.wait_for(asyncio.to_thread(cap.read), timeout_s)
            except TimeoutError as exc:
                raise FrameSourceError(f"{spec}: no frame for {timeout_s:.1f} s (camera stopped?)") from exc
            if not ok or frame is None:
                if live:
                    raise FrameSourceError(f"{spec}: camera stopped delivering frames after {n} frames")
                return  # end of the video
            t = (n * period) if (not live and period) else time.monotonic() - t0
            yield t, frame
            n += 1
            if period:
                await asyncio.sleep(max(0.0, t0 + n * period - time.monotonic()))
    finally:
        cap.release()


async def _dir_frames(folder: Path, fps: float | None):
    import cv2

    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in IMAGE_EXTS)
    if not files:
        raise FrameSourceError(f"image folder {folder}: no images")
    period = 1.0 / fps if fps else 0.0
    n = 0
    for f in files:
        frame = await asyncio.to_thread(cv2.imread, str(f), cv2.IMREAD_COLOR)
        if frame is None:
            log.warning("event=frame_unreadable source=dir file=%s", f)
            continue
        yield n * (period or 0.1), frame
        n += 1
        if period:
            await asyncio.sleep(period)


async def _picamera2_frames(spec: str, index: int, timeout_s: float):
    try:
        from picamera2 import Picamera2  # type: ignore[import-not-found]
    except ImportError as exc:
        raise FrameSourceError(f"{spec}: Picamera2 is not installed on this machine") from exc
    try:
        cam = Picamera2(index)
        cam.configure(cam.create_video_configuration(main={"format": "BGR888", "size": (1920, 1080)}))
        cam.start()
    except Exception as exc:  # the library raises many kinds; all mean "no camera"
        raise FrameSourceError(f"{spec}: cannot open ({exc})") from exc
    t0 = time.monotonic()
    try:
        while True:
            try:
                frame = await asyncio.wait_for(asyncio.to_thread(cam.capture_array), timeout_s)
            except TimeoutError as exc:
                raise FrameSourceError(f"{spec}: no frame for {timeout_s:.1f} s (camera stopped?)") from exc
            yield time.monotonic() - t0, frame
    finally:
        cam.stop()


async def _guard(name: str, frames):
    """Re-raise whatever a source object raises as FrameSourceError naming it."""
    try:
        async for item in frames:
            yield item
    except FrameSourceError:
        raise
    except Exception as exc:
        raise FrameSourceError(f"{name}: {exc}") from exc


async def _callable_frames(fn: Callable[[], np.ndarray | tuple], fps: float):
    period = 1.0 / fps
    t0 = time.monotonic()
    n = 0
    while True:
        try:
            out = await asyncio.to_thread(fn)
        except Exception as exc:
            raise FrameSourceError(f"frame source {getattr(fn, '__name__', fn)!r} failed: {exc}") from exc
        if out is None:
            return
        frame = out[0] if isinstance(out, tuple) else out
        yield time.monotonic() - t0, frame
        n += 1
        await asyncio.sleep(max(0.0, t0 + n * period - time.monotonic()))
