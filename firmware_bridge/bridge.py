"""Host side of the panel's serial line: handshake, scenes with ack/retry, recovery, buttons.

`PanelBridge` owns one serial port (a device, a pty, or a pyserial URL). It keeps the desired
scene and makes the panel show it: on every (re)connection, after a firmware reset (new boot
counter) and after a silence, it shakes hands again and re-sends the scene. Scenes are whole
states, so a resend is always safe. Opening a missing port is not an error: the bridge retries
until the port appears and reports itself disconnected meanwhile.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import serial
import serial_asyncio_fast

from firmware_bridge.firmware import panelproto as proto
from firmware_bridge.scene import Scene, SeatLight

log = logging.getLogger("firmware_bridge.bridge")

# Panel buttons and the table-event lines they become.
DEFAULT_BUTTON_EVENTS: dict[int, dict[str, Any]] = {proto.BUTTON_NEW_HAND: {"type": "hand_start"}}


def _kv(**fields: Any) -> str:
    return " ".join(f"{k}={v}" for k, v in fields.items())


class _Link(asyncio.Protocol):
    """asyncio protocol for one opened port; hands bytes and loss to the bridge."""

    def __init__(self, bridge: PanelBridge) -> None:
        self.bridge = bridge
        self.lost = asyncio.Event()
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.bridge._on_bytes(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self.bridge._error(f"serial line lost: {exc}")
        self.lost.set()
        self.bridge._wake.set()


class PanelBridge:
    """Drives the LED panel. Use as `async with PanelBridge(port, seats) as bridge:`."""

    def __init__(
        self,
        port: str,
        seats: int,
        *,
        baudrate: int = 115200,
        ack_timeout: float = 0.15,
        max_tries: int = 5,
        heartbeat_interval: float = 0.5,
        panel_offline_after: float = 3.0,
        silence_timeout: float = 2.5,
        reconnect_interval: float = 0.1,
        show_timeout: float = 2.0,
        idle_text: str = "READY",
        button_events: dict[int, dict[str, Any]] | None = None,
    ) -> None:
        self.port = port
        self.seats = seats
        self.baudrate = baudrate
        self.ack_timeout = ack_timeout
        self.max_tries = max_tries
        self.heartbeat_interval = heartbeat_interval
        self.panel_offline_after = panel_offline_after
        self.silence_timeout = silence_timeout
        self.reconnect_interval = reconnect_interval
        self.show_timeout = show_timeout
        self.button_events = DEFAULT_BUTTON_EVENTS if button_events is None else button_events

        self._desired = Scene.blank(seats, idle_text)
        self._desired_version = 0
        self._panel_version = -1  # version of the scene the panel acknowledged; -1: unknown
        self._failed_version = -1  # highest version the panel refused (NAK bad_payload)
        self._countdowns: dict[int, tuple[SeatLight, float]] = {}
        self._decoder = proto.FrameDecoder()
        self._seq = 0
        self._inflight: int | None = None
        self._acked_seq: int | None = None
        self._nak: tuple[int, int] | None = None
        self._wake = asyncio.Event()
        self._version_changed = asyncio.Condition()
        self._link: _Link | None = None
        self._ready = False  # the panel answered our hello on the current link
        self._hello_seen = False
        self._last_rx = 0.0
        self._seen_buttons: set[tuple[int, int]] = set()
        self._subscribers: set[asyncio.Queue[dict[str, Any]]] = set()
        self._task: asyncio.Task[None] | None = None
        self._closing = False
        self.panel_info: dict[str, Any] = {}
        self._stats = {
            "frames_sent": 0,
            "frames_acked": 0,
            "frames_retried": 0,
            "frames_dropped": 0,
            "frames_nak": 0,
            "rx_frames_ok": 0,
            "rx_frames_dropped": 0,
            "panel_resets": 0,
            "reconnects": 0,
            "buttons": 0,
        }
        self._last_error: str | None = None
        self._boot_counter: int | None = None

    # --- public --------------------------------------------------------------------------------

    async def __aenter__(self) -> PanelBridge:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        if self._task is None:
            self._closing = False
            self._task = asyncio.create_task(self._run(), name=f"panel-bridge {self.port}")

    async def close(self) -> None:
        self._closing = True
        self._wake.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._drop_link()

    @property
    def scene(self) -> Scene:
        """The desired scene (what the panel shows, or will show once it is back)."""
        return self._desired

    @property
    def connected(self) -> bool:
        return self._link is not None and self._ready

    @property
    def health(self) -> dict[str, Any]:
        return {
            "port": self.port,
            "connected": self.connected,
            "boot_counter": self._boot_counter,
            "fw_version": ".".join(str(v) for v in self.panel_info.get("fw_version", ())) or None,
            "panel_seats": self.panel_info.get("seats"),
            "led_count": self.panel_info.get("led_count"),
            "scene_version": self._desired_version,
            "scene_acked": self._panel_version == self._desired_version,
            **self._stats,
            "last_error": self._last_error,
        }

    async def show(self, scene: Scene, timeout: float | None = None) -> bool:
        """Make `scene` the desired state; True once the panel acknowledged it (or a newer one).

        False if the panel did not acknowledge within `timeout` (default show_timeout) or refused
        it; the scene stays desired either way and is sent again whenever the panel comes back.
        """
        if len(scene.seats) != self.seats:
            raise ValueError(f"scene has {len(scene.seats)} seats, the bridge drives {self.seats}")
        self._set_desired(scene)
        version = self._desired_version
        deadline = self.show_timeout if timeout is None else timeout
        try:
            async with asyncio.timeout(deadline):
                async with self._version_changed:
                    await self._version_changed.wait_for(
                        lambda: self._panel_version >= version or self._failed_version >= version
                    )
        except TimeoutError:
            return False
        return self._panel_version >= version

    async def wait_connected(self, timeout: float = 5.0) -> bool:
        """True once the panel has answered the handshake (for callers that want to wait)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.connected:
                return True
            await asyncio.sleep(0.02)
        return self.connected

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """Table-event lines from the panel's buttons, e.g. {"type": "hand_start"} for NEW HAND."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._subscribers.add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._subscribers.discard(queue)

    # --- desired state -------------------------------------------------------------------------

    def _set_desired(self, scene: Scene) -> None:
        now = time.monotonic()
        countdowns = {}
        for i, light in enumerate(scene.seats):
            if light.effect == "countdown":
                old = self._countdowns.get(i)
                countdowns[i] = old if old is not None and old[0] == light else (light, now)
        self._countdowns = countdowns
        if scene != self._desired or self._panel_version != self._desired_version:
            self._desired = scene
            self._desired_version += 1
        self._wake.set()

    def _payload(self) -> bytes:
        now = time.monotonic()
        remaining = {i: light.seconds - (now - start) for i, (light, start) in self._countdowns.items()}
        return self._desired.to_payload(remaining)

    async def _set_panel_version(self, version: int, failed: bool = False) -> None:
        async with self._version_changed:
            if failed:
                self._failed_version = max(self._failed_version, version)
            else:
                self._panel_version = version
            self._version_changed.notify_all()

    # --- incoming ------------------------------------------------------------------------------

    def _error(self, message: str) -> None:
        self._last_error = message
        log.warning("panel %s", _kv(port=self.port, error=repr(message)))

    def _on_bytes(self, data: bytes) -> None:
        before = self._decoder.dropped()
        frames = self._decoder.feed(data)
        dropped = self._decoder.dropped() - before
        if dropped:
            self._stats["rx_frames_dropped"] += dropped
            self._error(f"dropped {dropped} bad frame(s) from the panel: {self._decoder.last_error}")
        for frame in frames:
            self._stats["rx_frames_ok"] += 1
            self._last_rx = time.monotonic()
            try:
                self._on_frame(frame)
            except proto.ProtocolError as exc:
                self._stats["rx_frames_dropped"] += 1
                self._error(f"bad {proto.TYPE_NAMES.get(frame.msg_type, frame.msg_type)} from panel: {exc}")

    def _on_frame(self, frame: proto.Frame) -> None:
        if frame.version != proto.VERSION:
            self._stats["rx_frames_dropped"] += 1
            self._error(f"panel speaks protocol version {frame.version}, the bridge {proto.VERSION}")
            return
        kind = frame.msg_type
        if kind == proto.HELLO:
            self._on_hello(proto.parse_hello(frame.payload))
        elif kind == proto.ACK:
            self._acked_seq = proto.parse_ack(frame.payload)
            self._wake.set()
        elif kind == proto.NAK:
            nak = proto.parse_nak(frame.payload)
            self._nak = (nak["seq"], nak["reason"])
            self._stats["frames_nak"] += 1
            self._error(
                f"panel refused frame seq={nak['seq']}: {proto.NAK_NAMES.get(nak['reason'], nak['reason'])}"
            )
            self._wake.set()
        elif kind == proto.HEARTBEAT:
            beat = proto.parse_heartbeat(frame.payload)
            if beat and self._boot_counter is not None and beat["boot_counter"] != self._boot_counter:
                # We missed the hello of a rebooted panel: shake hands again.
                self._panel_reset(beat["boot_counter"])
            elif beat and not beat["online"] and self._ready and self._panel_version >= 0:
                self._ready = False  # the panel went offline and dropped our scene
                self._panel_version = -1
                self._wake.set()
        elif kind == proto.BUTTON:
            self._on_button(frame.seq, proto.parse_button(frame.payload))
        elif kind == proto.ERROR:
            err = proto.parse_error(frame.payload)
            self._error(f"panel error {err['code']}: {err['detail']}")
        else:
            self._stats["rx_frames_dropped"] += 1
            self._error(f"unknown message type 0x{kind:02x} from panel")

    def _panel_reset(self, boot_counter: int) -> None:
        self._stats["panel_resets"] += 1
        log.info("panel reset %s", _kv(port=self.port, boot_counter=boot_counter))
        self._boot_counter = boot_counter
        self._ready = False
        self._panel_version = -1
        self._wake.set()

    def _on_hello(self, hello: dict[str, Any]) -> None:
        self.panel_info = hello
        if self._boot_counter is not None and hello["boot_counter"] != self._boot_counter:
            self._stats["panel_resets"] += 1
            log.info("panel reset %s", _kv(port=self.port, boot_counter=hello["boot_counter"]))
        if hello["seats"] != self.seats:
            self._error(f"panel has {hello['seats']} seats, the bridge drives {self.seats}")
        self._boot_counter = hello["boot_counter"]
        # Any hello means the panel holds no scene of ours (boot, or back from offline): resend.
        self._ready = True
        self._hello_seen = True
        self._panel_version = -1
        log.info(
            "panel hello %s",
            _kv(
                port=self.port,
                boot_counter=hello["boot_counter"],
                seats=hello["seats"],
                leds=hello["led_count"],
            ),
        )
        self._wake.set()

    def _on_button(self, seq: int, button: dict[str, Any]) -> None:
        self._write(proto.ACK, proto.ack_payload(seq), seq=seq)
        key = (button["boot_counter"], seq)
        if key in self._seen_buttons:
            return  # a resend of a press we already turned into an event
        self._seen_buttons.add(key)
        if len(self._seen_buttons) > 256:
            self._seen_buttons = {key}
        self._stats["buttons"] += 1
        name = proto.BUTTON_NAMES.get(button["button"], str(button["button"]))
        log.info("panel button %s", _kv(port=self.port, button=name))
        event = self.button_events.get(button["button"])
        if event is not None:
            for queue in list(self._subscribers):
                queue.put_nowait(dict(event))

    # --- outgoing ------------------------------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq = (self._seq + 1) & 0xFFFF
        return self._seq

    def _write(self, msg_type: int, payload: bytes = b"", seq: int | None = None) -> int:
        if seq is None:
            seq = self._next_seq()
        link = self._link
        if link is not None and link.transport is not None and not link.lost.is_set():
            link.transport.write(proto.encode_frame(msg_type, seq, payload))
        return seq

    async def _wait_wake(self, timeout: float) -> None:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(max(timeout, 0)):
                await self._wake.wait()
        self._wake.clear()

    # --- the connection loop -------------------------------------------------------------------

    def _drop_link(self) -> None:
        link, self._link = self._link, None
        self._ready = False
        self._panel_version = -1
        if link is not None and link.transport is not None:
            link.transport.close()

    async def _open(self) -> _Link | None:
        loop = asyncio.get_running_loop()
        try:
            _, link = await serial_asyncio_fast.create_serial_connection(
                loop, lambda: _Link(self), self.port, baudrate=self.baudrate, timeout=0
            )
        except (serial.SerialException, OSError, ValueError) as exc:
            message = f"cannot open {self.port}: {exc}"
            if message != self._last_error:
                self._error(message)
            return None
        return link  # type: ignore[return-value]

    async def _run(self) -> None:
        first = True
        while not self._closing:
            link = await self._open()
            if link is None:
                await asyncio.sleep(self.reconnect_interval)
                continue
            if not first:
                self._stats["reconnects"] += 1
            first = False
            self._link = link
            self._decoder.reset()
            log.info("panel port open %s", _kv(port=self.port, baudrate=self.baudrate))
            try:
                await self._session(link)
            except Exception as exc:  # never let one bad session kill the bridge
                self._error(f"session error: {exc!r}")
                log.exception("panel session error")
            finally:
                self._drop_link()
            if not self._closing:
                await asyncio.sleep(self.reconnect_interval)

    async def _session(self, link: _Link) -> None:
        self._ready = False
        self._panel_version = -1
        self._last_rx = time.monotonic()
        last_hello = 0.0
        last_beat = time.monotonic()  # the hello below counts as the first sign of life
        while not link.lost.is_set() and not self._closing:
            now = time.monotonic()
            if self._ready and now - self._last_rx > self.silence_timeout:
                self._error(f"panel silent for {now - self._last_rx:.1f} s")
                self._ready = False
                self._panel_version = -1
            if not self._ready:
                if now - last_hello >= 0.25:
                    last_hello = now
                    self._write(
                        proto.HOST_HELLO,
                        proto.host_hello_payload(
                            int(self.heartbeat_interval * 1000), int(self.panel_offline_after * 1000)
                        ),
                    )
                await self._wait_wake(0.05)
                continue
            if now - last_beat >= self.heartbeat_interval:
                last_beat = now
                self._write(proto.HEARTBEAT)
            if self._desired_version not in (self._panel_version, self._failed_version):
                await self._send_scene(link)
                continue
            await self._wait_wake(min(self.heartbeat_interval, 0.25))

    async def _send_scene(self, link: _Link) -> None:
        version = self._desired_version
        boot = self._boot_counter
        seq = self._next_seq()
        self._acked_seq = None
        self._nak = None
        for attempt in range(self.max_tries):
            if attempt:
                self._stats["frames_retried"] += 1
            self._write(proto.SCENE, self._payload(), seq=seq)
            self._stats["frames_sent"] += 1
            deadline = time.monotonic() + self.ack_timeout
            while True:
                if self._acked_seq == seq:
                    self._stats["frames_acked"] += 1
                    await self._set_panel_version(version)
                    return
                if self._nak is not None and self._nak[0] == seq:
                    reason = self._nak[1]
                    if reason == proto.NAK_BAD_PAYLOAD:
                        # Nothing to gain from resending it: show() returns False, the loop waits
                        # for the next scene.
                        await self._set_panel_version(version, failed=True)
                    else:
                        self._ready = False  # stale/version trouble: shake hands again
                    return
                if (
                    link.lost.is_set()
                    or not self._ready
                    or self._desired_version != version
                    or self._boot_counter != boot
                ):
                    return  # lost, panel rebooted (this frame may be gone with it), or superseded
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                await self._wait_wake(left)
        self._stats["frames_dropped"] += 1
        self._error(f"scene seq={seq} not acknowledged after {self.max_tries} tries")
        self._ready = False  # the panel may have rebooted silently: shake hands again
