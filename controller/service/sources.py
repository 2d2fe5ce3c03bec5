"""The service's devices: camera (through the vision tracker), LED panel (scenes out, buttons in), NFC.

Each device runs in its own task under `supervise`, which restarts it with backoff after a failure
and records its health, so a pulled cable or a hung camera never stops the others. The modules
that drive the hardware are imported when the device starts (they are heavy: OpenCV, nfcpy); a
device that cannot work here (no registry configured) is `unavailable`, said in its health, and the
table runs on without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from controller import devices
from controller.service.config import Config
from controller.service.health import SourceHealth
from controller.tasks import run_together, stopping

if TYPE_CHECKING:  # the device packages are imported when a device starts (see the module docstring)
    from controller.registry.checkin import TableCheckIn
    from firmware_bridge.bridge import PanelBridge
    from firmware_bridge.scene import Scene
    from firmware_bridge.signals import SignalState
    from vision.detect import Detector
    from vision.sources import ReadAhead
    from vision.tracker import Tracker

log = logging.getLogger("smart_table.sources")
Emit = Callable[[dict[str, Any], str], Awaitable[None]]  # (line, kind "in" | "info")


def open_sim_camera(cfg: Any) -> devices.ScriptedCamera:
    """The simulated camera a table's configuration describes (its seats and picture size), or
    DeviceError: the service and the doctor open the same one."""
    d = cfg.devices
    options = devices.CameraOptions(
        fps=d.camera_fps, seats=cfg.table.seats, width=d.sim_width, height=d.sim_height
    )
    cam = devices.open_camera("sim", options)
    if not isinstance(cam, devices.ScriptedCamera):
        raise devices.DeviceError("camera sim is not a ScriptedCamera")
    return cam


class Unavailable(RuntimeError):
    """This device cannot work in this installation (package missing, not configured)."""


async def supervise(name: str, run: Callable[[], Awaitable[None]], health: SourceHealth) -> None:
    """Run a device forever: restart after failures with backoff; park it when unavailable."""
    delay = 0.5
    while True:
        started = time.monotonic()
        try:
            await run()
            health.set("failed", "stopped unexpectedly; restarting")
        except asyncio.CancelledError:
            raise
        except Unavailable as exc:
            health.set("unavailable", str(exc))
            await asyncio.Event().wait()  # parked: nothing to retry until the installation changes
        except Exception as exc:
            if stopping():  # the service stops it while it fails (a closing port's error replaced the cancel)
                raise asyncio.CancelledError from exc
            health.set("failed", f"{type(exc).__name__}: {exc}"[:200])
            log.warning("event=source_failed source=%s error=%r retry_in=%.1f", name, str(exc)[:200], delay)
        health.count("restarts")
        if time.monotonic() - started > 30:
            delay = 0.5
        await asyncio.sleep(delay)
        delay = min(delay * 2, 10.0)


async def _forever() -> None:
    await asyncio.Event().wait()


# -- camera --------------------------------------------------------------------------------------


class CameraSource:
    """Frames -> vision tracker (in a worker thread) -> deal/expose/board/button_seen lines.

    `sim`: the simulated camera (a devices.ScriptedCamera) rendered at `camera_fps` (script it
    through `sim`; set `sim.stopped` to make it deliver nothing), plus frames pushed with `push`.
    Any other spec is a frame source found by name (vision.sources, controller.devices). A camera that
    delivers no frame for `camera_stall_seconds` is reported `degraded` until frames come back.
    """

    name = "camera"

    def __init__(self, cfg: Config, health: SourceHealth) -> None:
        self.cfg = cfg
        self.health = health
        self.spec = cfg.devices.camera
        self.stall = cfg.devices.camera_stall_seconds
        self.period = 1.0 / cfg.devices.camera_fps
        self.sim: devices.ScriptedCamera | None = None
        self.last_frame = time.monotonic()
        self.frames = 0
        # the newest frame and the wall time it arrived (the picture at an alert is made from it)
        self.latest: tuple[Any, float] | None = None
        self._reset_hand = False
        self._pushed: asyncio.Queue[tuple[float, Any]] = asyncio.Queue(maxsize=2)
        self.tracker: Tracker | None = None
        self.detector: Detector | None = None
        self.deck_problem = ""  # why devices.deck is not used, when it is not
        if self.spec == "sim":
            try:
                self.sim = open_sim_camera(cfg)
            except devices.DeviceError as exc:
                log.warning("event=sim_camera_unavailable error=%r", str(exc))

    def on_output(self, line: dict[str, Any]) -> None:
        """A new hand: the tracker forgets the last hand's cards."""
        if line.get("type") == "hand":
            self._reset_hand = True

    async def push(self, frame: Any, t: float | None = None) -> None:
        """Hand one frame to the tracker (simulated camera only); waits while the tracker is busy.

        A camera that will never take frames (`none`, or its vision package missing) refuses at
        once, saying why, instead of leaving the caller waiting forever.
        """
        if self.spec != "sim" or self.health.status in ("unavailable", "disabled"):
            raise Unavailable(
                f"camera {self.spec!r} takes no pushed frames ({self.health.status}: {self.health.detail})"
            )
        await self._pushed.put((time.monotonic() if t is None else t, frame))

    async def run(self, emit: Emit) -> None:
        if self.spec == "none":
            self.health.set("disabled", "devices.camera = none")
            await _forever()
        if self.detector is None:
            self.detector = await asyncio.to_thread(self._open_detector)
        watch = asyncio.create_task(self._watch_stall())
        try:
            while True:
                await self._until_present()
                try:
                    await self._read_frames(emit)
                except Exception:
                    if self.present():
                        raise  # the device is there and failed: supervise retries with backoff
                    continue  # unplugged mid-stream: wait for it, reopen at once when it is back
                if self.present():
                    return  # the stream ended with the device there: supervise restarts it
        finally:
            watch.cancel()

    # -- the device vanishing (USB pulled, driver gone) and coming back --------------------------

    def device_path(self) -> str | None:
        """The camera's device node (`/dev/video0`, `v4l2:/dev/video0`), or None for other specs."""
        spec = self.spec.removeprefix("v4l2:")
        return spec if spec.startswith("/dev/") else None

    def present(self) -> bool:
        """Whether the camera's device is there: its node exists (the simulated camera: not
        `unplugged`). Specs with nothing to look at (a video file, a folder) count as present."""
        if self.spec == "sim":
            return not getattr(self.sim, "unplugged", False)
        path = self.device_path()
        return path is None or os.path.exists(path)

    async def _until_present(self) -> None:
        """A vanished camera is said once in health (`failed`, so the director sees it on MQTT) and
        polled for, not retried with backoff: the table rules on without it, and the first frame
        after it is back puts it `ok` again (issue 15: recovers by itself)."""
        if self.present():
            return
        self.health.set(
            "failed",
            f"camera {self.device_path() or self.spec} gone (unplugged?); waiting for it to come back",
        )
        self.health.count("vanished")
        log.warning("event=camera_gone camera=%s", self.device_path() or self.spec)
        while not self.present():
            await asyncio.sleep(0.1)
        log.info("event=camera_back camera=%s", self.device_path() or self.spec)

    async def _read_frames(self, emit: Emit) -> None:
        from vision.sources import ReadAhead, is_live

        frames = self._sim_frames() if self.spec == "sim" else self._device_frames()
        self.last_frame = time.monotonic()
        async with ReadAhead(frames, live=is_live(self.spec)) as ahead:
            await self._track(ahead, emit)

    async def _track(self, ahead: ReadAhead, emit: Emit) -> None:
        """Each frame to the tracker in a worker thread, while `ahead` reads the next one."""
        from vision.layout import default_layout, load_layout
        from vision.tracker import Tracker

        counted, next_log = 0, 1
        async for t, frame in ahead:
            self.last_frame = time.monotonic()
            self.frames += 1
            self.latest = (frame, time.time())
            if self.deck_problem:
                self.health.set("degraded", self.deck_problem)
            elif self.health.status != "ok":
                self.health.set("ok", f"{self.spec}: frames arriving")
            if self.tracker is None:
                if self.cfg.devices.layout:
                    layout = load_layout(self.cfg.devices.layout)
                else:
                    height, width = frame.shape[:2]
                    layout = default_layout(self.cfg.table.seats, width, height)
                self.detector.layout = layout
                self.tracker = Tracker(
                    layout,
                    debounce_frames=self.cfg.devices.camera_debounce_frames,
                    detector=self.detector,
                )
            lines = await asyncio.to_thread(self._update, frame, t)
            for line in lines:
                await emit(line, "in")
            if ahead.skipped > counted:  # a live camera's frames replaced while the tracker was busy
                self.health.count("frames_skipped", ahead.skipped - counted)
                counted = ahead.skipped
                skipped = self.health.counters["frames_skipped"]
                if skipped >= next_log:  # 1, 2, 4, 8...: said, not every frame
                    log.info(
                        "event=camera_frames_skipped camera=%s skipped=%d frames=%d "
                        "(the tracker is slower than the camera: it takes the newest frame)",
                        self.spec,
                        skipped,
                        self.frames,
                    )
                    next_log = 2 * skipped

    def latest_picture(self) -> tuple[Any, Any, float] | None:
        """(frame, layout, wall time) of the newest frame the tracker has, or None before one."""
        if self.latest is None or self.tracker is None:
            return None
        frame, at = self.latest
        return frame, self.tracker.layout, at

    def _open_detector(self) -> Detector:
        """Worker thread: the venue's deck (or the built-in reader), warmed up before READY.

        A deck file that cannot be used leaves the camera working on the built-in recogniser and
        says so in its health, naming the file: reading goes on, less surely, until it is fixed.
        """
        from vision.detect import Detector
        from vision.read import DeckModelError, load_model
        from vision.warmup import warm_up

        detector = Detector(track=True)
        if self.cfg.devices.deck:
            try:
                detector.model = load_model(self.cfg.devices.deck)
            except DeckModelError as exc:
                self.deck_problem = f"devices.deck: {exc}; reading with the built-in recogniser"
                log.warning("event=deck_unusable %s", self.deck_problem)
        ms = warm_up(detector)
        log.info("event=vision_ready deck=%r warm_up_ms=%.0f", self.cfg.devices.deck or "built-in", ms)
        return detector

    def _update(self, frame: Any, t: float) -> list[dict[str, Any]]:
        """Worker thread: the event loop never waits for image processing."""
        if self._reset_hand:
            self._reset_hand = False
            self.tracker.reset_hand()
        return list(self.tracker.update(frame, t))

    async def _device_frames(self) -> Any:
        from vision.sources import open_frames

        spec = f"v4l2:{self.spec}" if self.spec.startswith("/dev/") else self.spec
        async for t, frame in open_frames(spec, fps=self.cfg.devices.camera_fps):
            yield t, frame

    async def _sim_frames(self) -> Any:
        t0 = time.monotonic()
        if self.sim is None:
            self.health.set("ok", "sim: frames are pushed in-process")
        while True:
            try:
                yield await asyncio.wait_for(self._pushed.get(), timeout=self.period)
                continue
            except TimeoutError:
                pass
            if not self.present():
                raise RuntimeError("sim camera: device gone")
            if self.sim is None or self.sim.stopped:
                continue  # a hung camera: nothing arrives
            frame, _truth = await asyncio.to_thread(self.sim.frame)
            yield time.monotonic() - t0, frame

    async def _watch_stall(self) -> None:
        while True:
            await asyncio.sleep(min(self.stall / 4, 1.0))
            quiet = time.monotonic() - self.last_frame
            if quiet >= self.stall and self.health.status in ("ok", "starting"):
                self.health.set("degraded", f"no frame for {quiet:.1f} s")
                self.health.count("stalls")


# -- LED panel -----------------------------------------------------------------------------------


class PanelLink:
    """Output lines -> SignalState -> scenes on the panel; the panel's buttons -> input lines.

    Only the newest scene matters, so a slow or disconnected panel never holds the engine back: the
    link shows the latest scene whenever it can, and again after reconnecting.
    """

    name = "panel"

    def __init__(self, cfg: Config, health: SourceHealth) -> None:
        self.cfg = cfg
        self.health = health
        self.spec = cfg.devices.panel
        self.seats = cfg.table.seats
        self.scene: Scene | None = None
        self.shown: Scene | None = None
        self.acked = 0
        self.sim: devices.PanelLink | None = None  # the simulated panel, when devices.panel is one
        self.bridge: PanelBridge | None = None
        self.port: str | None = None
        self._changed = asyncio.Event()
        self.last_ack = 0.0
        # called with each scene the panel acknowledged (benchmarks, the simulated table)
        self.ack_listeners: list[Callable[[Scene], None]] = []
        # Lines to feed just before a NEW HAND press (the NFC bust-outs it confirms): set by the service.
        self.before_new_hand: Callable[[], list[dict[str, Any]]] | None = None
        from firmware_bridge.signals import SignalState

        self.signals: SignalState = SignalState(self.seats)

    def on_line(self, line: dict[str, Any]) -> None:
        """Fold an output (or check-in) line into the panel's scene."""
        try:
            scene = self.signals.apply(line)
        except Exception as exc:  # a signal bug must not stop the table
            log.warning("event=panel_signal_error type=%s error=%r", line.get("type"), str(exc)[:200])
            return
        if scene is not None:
            self.scene = scene
            self._changed.set()

    def describe(self) -> dict[str, Any]:
        scene = self.scene
        text = getattr(scene, "text", None) if scene is not None else None
        shown = getattr(self.shown, "text", None) if self.shown is not None else None
        return {"port": self.port, "scene": text, "shown": shown, "acked": self.acked}

    async def run(self, emit: Emit) -> None:
        if self.spec == "none":
            self.health.set("disabled", "devices.panel = none")
            await _forever()
        from firmware_bridge.bridge import PanelBridge

        try:
            link = devices.open_panel(self.spec, devices.PanelOptions(seats=self.seats))
        except devices.DeviceError as exc:
            raise Unavailable(f"devices.panel: {exc}") from None
        async with link:
            self.sim = link if link.simulated else None
            await self._serve(PanelBridge, link.port, emit)

    async def _serve(self, bridge_cls: type[PanelBridge], port: str, emit: Emit) -> None:
        """The bridge reconnects by itself (port gone, firmware reset); we mirror its state as health."""
        self.port = port
        async with bridge_cls(port, self.seats) as bridge:
            self.bridge = bridge
            await bridge.wait_connected(timeout=3.0)
            try:
                await run_together(
                    self._show(bridge),
                    self._buttons(bridge, emit),
                    self._monitor(bridge, port),
                    what="the panel",
                )
            finally:
                self.bridge = None

    async def _monitor(self, bridge: PanelBridge, port: str) -> None:
        while True:
            h = bridge.health
            if h.get("connected"):
                self.health.set(
                    "ok", f"port {port}, firmware {h.get('fw_version')}, boot {h.get('boot_counter')}"
                )
            elif not os.path.exists(port) and "://" not in port:
                if self.health.status != "failed" or "gone" not in self.health.detail:
                    self.health.count("vanished")  # USB pulled: the serial device itself is gone
                self.health.set("failed", f"port {port} gone (panel unplugged?); waiting for it to come back")
            else:
                self.health.set(
                    "failed", f"port {port}: panel not answering ({h.get('last_error') or 'no reply'})"
                )
            self.health.counters["reconnects"] = int(h.get("reconnects", 0))
            self.health.counters["panel_resets"] = int(h.get("panel_resets", 0))
            await asyncio.sleep(0.2)

    async def _show(self, bridge: PanelBridge) -> None:
        while True:
            self._changed.clear()
            scene = self.scene
            if scene is not None and scene is not self.shown:
                if await bridge.show(scene):
                    self.shown = scene
                    self.acked += 1
                    self.last_ack = time.monotonic()
                    for callback in list(self.ack_listeners):
                        callback(scene)
                    continue
                # not acknowledged: the bridge keeps it desired and resends on reconnect; look again soon
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.5):
                        await self._changed.wait()
                continue
            await self._changed.wait()

    async def _buttons(self, bridge: PanelBridge, emit: Emit) -> None:
        async for line in bridge.events():
            self.health.count("buttons")
            if line.get("type") == "hand_start" and self.before_new_hand is not None:
                for early in self.before_new_hand():  # NEW HAND answers the bust-out questions first
                    await emit(early, "info" if early.get("type") == "bustout" else "in")
            await emit(line, "in")


# -- NFC -----------------------------------------------------------------------------------------


class NfcSource:
    """Card taps -> TableCheckIn -> `seat` lines (engine) and `checkin` lines (panel, MQTT)."""

    name = "nfc"

    def __init__(self, cfg: Config, health: SourceHealth) -> None:
        self.cfg = cfg
        self.health = health
        self.spec = cfg.devices.nfc
        self.checkin: TableCheckIn | None = None
        self.view: Any = None  # the service's TableView: who sits where, and whether a hand is on
        self.first_deal: datetime | None = None  # when this table's first hand began (late registration)

    def _open_checkin(self) -> TableCheckIn:
        ci = self.cfg.checkin
        from controller.registry.card import CardVerifier
        from controller.registry.checkin import TableCheckIn
        from controller.registry.keys import load_keys
        from controller.registry.registry import Registry

        verifier = CardVerifier(load_keys(ci.keys_file))
        return TableCheckIn(
            Registry.open(ci.registry),
            venue=verifier.venue,
            table_id=self.cfg.table.id,
            event_id=ci.event,
            verifier=verifier,
        )

    async def run(self, emit: Emit) -> None:
        if self.spec == "none":
            self.health.set("disabled", "devices.nfc = none")
            await _forever()
        if not self.cfg.checkin.registry:
            raise Unavailable("no player registry configured (checkin.registry)")
        from controller.registry.reader import watch_reader

        if self.checkin is None:
            self.checkin = await asyncio.to_thread(self._open_checkin)
            self.apply_late_level()
        self.health.set("ok", f"reader {self.spec}")

        def reader_error(message: str) -> None:
            self.health.set("failed", f"reader {self.spec}: {message}"[:200])

        expiry = asyncio.create_task(self._expire_questions(emit), name="nfc-bustout-expiry")
        try:
            async for tap in watch_reader(self.spec, on_error=reader_error):
                self.health.count("taps")
                if self.health.status != "ok":
                    self.health.set("ok", f"reader {self.spec}")
                uid = getattr(tap, "uid", b"")
                ndef = getattr(tap, "ndef", None) or getattr(tap, "message", b"") or b""
                table = self.view.snapshot() if self.view is not None else None
                now = datetime.now(UTC)
                self.note_first_deal(table, now)
                result = await asyncio.to_thread(self.checkin.on_tap, uid, ndef, now, table)
                for line in result.lines:
                    await emit(line, "info" if line.get("type") in ("checkin", "bustout") else "in")
        finally:
            expiry.cancel()

    def apply_late_level(self) -> None:
        """The level from which a late player's seat is gone, where the book has one
        (corner_pocket:General Rules.C: "until they arrive, are blinded out or the tournament reaches
        level eight"); the table knows the level from the `level` line's `number` (the floor's push)."""
        from controller.registry.policy import policy_for

        policy = policy_for(self.cfg.table.profile)
        self.checkin.late_level, self.checkin.late_level_rule = policy.late_level, policy.late_level_rule

    def note_first_deal(self, table: dict[str, Any] | None, now: datetime) -> None:
        """The late-registration deadline starts with the first deal (dragons_den: "you must be in your
        seat at the table no later than 30 minutes after the first deal"): the first tap that finds a hand begun or played
        fixes it, and TableCheckIn refuses a new player after it. After a restart the clock starts again
        at the first tap that sees a hand, later than the truth: it errs towards letting a player in."""
        if self.first_deal is not None or self.checkin is None or not table:
            return
        if table.get("phase", "waiting") == "waiting" and not table.get("hand_number"):
            return
        from controller.registry.policy import late_deadline

        self.first_deal = now
        self.checkin.late_deadline = late_deadline(self.cfg.table.profile, now)

    async def _expire_questions(self, emit: Emit) -> None:
        """Bust-out questions nobody answered: between hands the tap meant away (SeatTaps.expire)."""
        while True:
            await asyncio.sleep(1.0)
            for line in self.checkin.seat_taps.expire(datetime.now(UTC)):
                await emit(line, "info" if line.get("type") == "bustout" else "in")

    def new_hand_confirms(self) -> list[dict[str, Any]]:
        """NEW HAND pressed: the bust-outs tapped during the hand are confirmed (their `leave` lines)."""
        if self.checkin is None:
            return []
        return self.checkin.seat_taps.new_hand(datetime.now(UTC))
