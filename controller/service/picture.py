"""The camera picture at an alert: the latest frame, every seat's zone blacked out, as a small JPEG
published retained on `<prefix>/picture` (docs/mqtt.md "Camera picture").

Privacy first (docs/mqtt.md "Privacy": nothing leaves the table that is not face up for everyone):
a seat's hole cards lie in its zone, and a player peeking at them lifts them there, so each seat
zone is blacked out, grown by half a card so a lifted corner or a cupping hand at its edge goes
too; so is everything outside the table (players' laps, hands, faces). The muck and the burn spot
(face-down cards) are blacked out as well. What is left is the felt in the middle: the board, the
bets, the button if it lies there.

The encoding runs in a worker thread after the ruling is logged and published, so it never delays
one; only the newest alert's picture matters, so alerts that come while one is being encoded are
coalesced to the last. A failure is logged once per cause and counted in health (`picture` part),
never raised into the service.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from controller.mqtt.picture import with_header
from controller.service.health import SourceHealth

log = logging.getLogger("smart_table.picture")
WIDTH = 640
QUALITY = 70


def redaction_mask(layout: Any, width: int, height: int) -> Any:
    """uint8 mask (255: black out) of a `width` x `height` picture of the layout's frame."""
    import cv2
    import numpy as np

    sx = width / float(layout.image_size[0])
    sy = height / float(layout.image_size[1])

    def px(poly: Any) -> Any:
        pts = np.asarray(layout.to_image(poly), dtype=np.float64) * [sx, sy]
        return np.round(pts).astype(np.int32)

    hidden = np.zeros((height, width), np.uint8)
    for poly in layout.seat_zones.values():
        cv2.fillPoly(hidden, [px(poly)], 255)
    grow = max(3, round(layout.card_width_px() * sx / 2))
    hidden = cv2.dilate(hidden, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1)))
    for poly in (layout.muck, layout.burn):
        if poly is not None:
            cv2.fillPoly(hidden, [px(poly)], 255)
    # outside the table: the hull of every zone; what lies beyond it is the players, not the game
    zones = [layout.board, layout.muck, *layout.seat_zones.values(), *layout.bets.values()]
    hull = cv2.convexHull(np.concatenate([px(p) for p in zones]))
    inside = np.zeros_like(hidden)
    cv2.fillConvexPoly(inside, hull, 255)
    hidden[inside == 0] = 255
    return hidden


def render_picture(
    frame: Any, layout: Any, header: dict[str, Any], width: int = WIDTH, quality: int = QUALITY
) -> bytes:
    """The frame as a redacted JPEG about `width` pixels wide, `header` in its comment segment."""
    import cv2

    h, w = frame.shape[:2]
    if (w, h) != tuple(int(v) for v in layout.image_size):
        raise ValueError(
            f"frame is {w}x{h} but the layout is for {layout.image_size[0]}x{layout.image_size[1]}"
        )
    out_w = min(width, w)
    out_h = max(1, round(h * out_w / w))
    small = cv2.resize(frame, (out_w, out_h), interpolation=cv2.INTER_AREA) if out_w != w else frame.copy()
    small[redaction_mask(layout, out_w, out_h) > 0] = 0
    ok, buf = cv2.imencode(".jpg", small, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("OpenCV could not encode the picture")
    return with_header(buf.tobytes(), {**header, "width": out_w, "height": out_h})


class PicturePublisher:
    """Alert rulings -> redacted JPEG (worker thread) -> `publish(payload)` (retained, by the caller)."""

    def __init__(
        self,
        frame: Callable[[], tuple[Any, Any, float] | None],
        publish: Callable[[bytes], bool],
        health: SourceHealth,
        *,
        max_age: float,
        width: int = WIDTH,
        quality: int = QUALITY,
    ) -> None:
        self.frame = frame  # () -> (frame, layout, wall time it arrived) or None before the first
        self.publish = publish
        self.health = health
        self.max_age = max_age
        self.width, self.quality = width, quality
        self._pending: dict[str, Any] | None = None
        self._task: asyncio.Task[None] | None = None
        self._last_failure = ""
        self.published = 0

    def on_alert(self, header: dict[str, Any]) -> None:
        """An alert ruling was committed (called on the event loop; returns at once)."""
        self._pending = header
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._drain(), name="picture")

    async def _drain(self) -> None:
        while self._pending is not None:
            header, self._pending = self._pending, None
            try:
                await self._one(header)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._failed(f"{type(exc).__name__}: {exc}")

    async def _one(self, header: dict[str, Any]) -> None:
        got = self.frame()
        if got is None:
            self._skip("no camera frame yet")
            return
        frame, layout, at = got
        age = time.time() - at
        if layout is None:
            self._skip("the camera's layout is not known yet")
            return
        if age > self.max_age:  # a stalled camera: an old frame would show the wrong moment
            self._skip(f"the newest camera frame is {age:.0f} s old")
            return
        doc = {**header, "taken": round(at, 3)}
        payload = await asyncio.to_thread(render_picture, frame, layout, doc, self.width, self.quality)
        if not self.publish(payload):
            self._failed("the MQTT link did not take the picture (its queue is full)")
            return
        self.published += 1
        self.health.count("published")
        self.health.set(
            "ok", f"last picture: {header.get('type')} (seq {header.get('seq')}), {len(payload)} bytes"
        )
        self._last_failure = ""

    def _skip(self, why: str) -> None:
        self.health.count("skipped")
        self.health.set("ok", f"no picture for the last alert: {why}")
        log.info("event=picture_skipped reason=%r", why)

    def _failed(self, cause: str) -> None:
        self.health.count("failures")
        self.health.set("degraded", f"picture not published: {cause}"[:200])
        if cause != self._last_failure:  # logged once per cause, not once per alert
            log.warning("event=picture_failed cause=%r", cause[:200])
            self._last_failure = cause

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
