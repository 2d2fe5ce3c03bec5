"""The simulated LED panel: the real firmware files running under CPython on a pseudo-terminal.

`SimulatedPanel` opens a pty, runs firmware_bridge/firmware/hal_sim.py (which imports the same
panelfw.py and panelproto.py that run on the Pico) in a child process on the pty's master side,
and publishes the slave side under a stable symlink (`.port`), the way udev publishes
/dev/serial/by-id/... for a real panel. The bridge opens `.port` exactly as it would a real one.

Faults a table sees, on demand:
  restart()          the firmware resets (watchdog, brown-out): the process is killed and started
                     again on the same line; its boot counter goes up.
  unplug() / replug() the USB cable is pulled: the pty goes away (the bridge's reads fail, the
                     port path disappears) and the panel loses power; replug() brings a new pty
                     under the same path and boots the firmware.
  press(button)      a panel button is pressed, with contact bounce.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import tempfile
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIRMWARE_DIR = Path(__file__).resolve().parent.parent / "firmware_bridge" / "firmware"
BUTTONS = {"new_hand": 1, "call_director": 2}

Pixel = tuple[int, int, int]


class SimulatedPanel:
    """Async context manager: `async with SimulatedPanel(10) as panel: ... panel.port ...`.
    Meets controller.devices.PanelLink (the `panel.sim` device)."""

    simulated = True

    def __init__(
        self,
        seats: int = 10,
        *,
        leds_per_seat: int = 8,
        baudrate: int = 115200,
        offline_after_ms: int = 3000,
        workdir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.seats = seats
        self.leds_per_seat = leds_per_seat
        self.baudrate = baudrate
        self.offline_after_ms = offline_after_ms
        self._workdir_arg = workdir
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.workdir: Path | None = None
        self._master: int | None = None
        self._slave: int | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._state: dict[str, Any] = {"mode": "off", "seats": [], "text": "", "boot_counter": None}
        self._pixels: list[Pixel] = []
        self._changed = asyncio.Condition()
        self.boots = 0

    # --- lifecycle -----------------------------------------------------------------------------

    async def __aenter__(self) -> SimulatedPanel:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def start(self) -> None:
        if self._workdir_arg is not None:
            self.workdir = Path(self._workdir_arg)
            self.workdir.mkdir(parents=True, exist_ok=True)
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="panel-sim-")
            self.workdir = Path(self._tmp.name)
        (self.workdir / "flash").mkdir(exist_ok=True)
        self._open_pty()
        await self._boot()

    async def close(self) -> None:
        await self._kill()
        self._close_pty()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    @property
    def port(self) -> str:
        """The serial port path for the bridge (a symlink to the current pty, like /dev/serial/by-id)."""
        assert self.workdir is not None, "start the panel first"
        return str(self.workdir / "ttyPANEL")

    @property
    def log_path(self) -> Path:
        assert self.workdir is not None
        return self.workdir / "firmware.log"

    def _open_pty(self) -> None:
        master, slave = os.openpty()
        # Raw from the start: no echo or newline translation before the bridge configures it.
        tty.setraw(slave)
        self._master, self._slave = master, slave
        link = Path(self.port)
        with contextlib.suppress(FileNotFoundError):
            link.unlink()
        link.symlink_to(os.ttyname(slave))

    def _close_pty(self) -> None:
        with contextlib.suppress(FileNotFoundError, AssertionError):
            Path(self.port).unlink()
        for fd in (self._master, self._slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = None

    async def _boot(self) -> None:
        assert self._master is not None and self.workdir is not None
        log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            self._proc = await asyncio.create_subprocess_exec(
                sys.executable,
                str(FIRMWARE_DIR / "hal_sim.py"),
                "--uart-fd",
                str(self._master),
                "--storage",
                str(self.workdir / "flash"),
                "--seats",
                str(self.seats),
                "--leds-per-seat",
                str(self.leds_per_seat),
                "--baudrate",
                str(self.baudrate),
                "--offline-after-ms",
                str(self.offline_after_ms),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                pass_fds=(self._master,),
                cwd=str(FIRMWARE_DIR),
            )
        finally:
            log.close()
        self.boots += 1
        self._reader = asyncio.create_task(self._read_reports(self._proc))

    async def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGKILL)
            await proc.wait()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        async with self._changed:
            self._state = {**self._state, "mode": "off"}
            self._changed.notify_all()

    async def restart(self) -> None:
        """Reset the firmware: kill the process, boot it again on the same serial line."""
        await self._kill()
        await self._boot()

    async def unplug(self) -> None:
        """Pull the USB cable: the port disappears and the panel loses power."""
        await self._kill()
        self._close_pty()

    async def replug(self) -> None:
        """Plug the cable back in: the port reappears under the same path and the panel boots."""
        if self._master is None:
            self._open_pty()
        await self._boot()

    async def press(self, button: str | int = "new_hand", hold_ms: int = 120) -> None:
        """Press a panel button (it bounces like a real contact; the firmware debounces it)."""
        number = BUTTONS[button] if isinstance(button, str) else int(button)
        assert self._proc is not None and self._proc.stdin is not None, "panel is not running"
        self._proc.stdin.write(f"press {number} {hold_ms}\n".encode())
        await self._proc.stdin.drain()

    # --- what the panel shows ------------------------------------------------------------------

    async def _read_reports(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stdout is not None
        while True:
            line = await proc.stdout.readline()
            if not line:
                return
            try:
                report = json.loads(line)
            except ValueError:
                continue
            async with self._changed:
                if report.get("kind") == "leds":
                    self._pixels = [tuple(p) for p in report["pixels"]]  # type: ignore[misc]
                elif report.get("kind") == "state":
                    pixels = report.pop("pixels", None)
                    if pixels is not None:
                        self._pixels = [tuple(p) for p in pixels]  # type: ignore[misc]
                    report["received_at"] = time.monotonic()
                    self._state = report
                self._changed.notify_all()

    def state(self) -> dict[str, Any]:
        """The firmware's own account of what it shows: mode (boot/scene/offline/off),
        boot_counter, per seat colour and effect, status text, frame counters."""
        return json.loads(json.dumps(self._state))

    def scene_dict(self) -> dict[str, Any]:
        """The shown scene in Scene.to_dict() form (colours as [r, g, b]), for comparisons."""
        state = self._state
        return {
            "seats": [
                {"seat": s["seat"], "color": list(s["color"]), "effect": s["effect"]} for s in state["seats"]
            ],
            "text": state["text"],
        }

    def leds(self) -> list[list[Pixel]]:
        """Current LED colours, one list of pixels per seat (seat 1 first)."""
        n = self.leds_per_seat
        pixels = list(self._pixels)
        return [pixels[i * n : (i + 1) * n] for i in range(self.seats)] if pixels else []

    async def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 5.0
    ) -> dict[str, Any]:
        """Wait until predicate(state()) holds; raises TimeoutError with the last state otherwise."""
        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(lambda: predicate(self._state))
        except TimeoutError:
            raise TimeoutError(f"panel state never matched; last state: {self.state()}") from None
        return self.state()

    def render_png(self, path: str | os.PathLike[str], title: str | None = None) -> Path:
        """Draw the table rim with the LEDs as they are lit right now, and the status display."""
        from firmware_bridge.render import render_rim

        return render_rim(self.leds(), self._state.get("text", ""), path, title=title)
