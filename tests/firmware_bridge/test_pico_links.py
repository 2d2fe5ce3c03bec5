"""The Pico's own hardware layer (hal_pico.py, with panelfw.py and panelproto.py: the files copied to
the Pico) against the host bridge on a real pseudo-terminal, on both links: the Pico's USB serial
(CDC, the default: /dev/ttyACM0 on the Pi) and UART0 on GP0/GP1.

Only what MicroPython provides and CPython lacks is stood in for: `machine` (UART over the pty,
pins, watchdog), `neopixel` (records the pixels), `micropython.kbd_intr` and the `time.ticks_*`
functions. On the USB link the firmware reads its standard input and writes its standard output,
exactly as on the Pico, and they are the pty.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from firmware_bridge.bridge import PanelBridge
from firmware_bridge.signals import SignalState
from tests.firmware_bridge.conftest import HAND, SEATS, raw_pty

FIRMWARE = Path(__file__).resolve().parents[2] / "firmware_bridge" / "firmware"
STANDINS = {
    "machine.py": """
        import os, time
        class Pin:
            IN, PULL_UP = 0, 1
            def __init__(self, n, *a): self.n = n
            def value(self): return 1  # buttons not pressed
        class UART:
            def __init__(self, n, baudrate, tx, rx, rxbuf, txbuf):
                self.fd = int(os.environ["FAKE_UART_FD"]); os.set_blocking(self.fd, False)
                open("uart-opened", "w").write("%d %d %d %d" % (n, baudrate, tx.n, rx.n))
            def any(self):
                import select
                return bool(select.select([self.fd], [], [], 0)[0])
            def read(self):
                try: return os.read(self.fd, 1024) or None
                except BlockingIOError: return None
            def write(self, data): os.write(self.fd, data)
        class WDT:
            def __init__(self, timeout): pass
            def feed(self): pass
        class I2C:
            def __init__(self, *a, **k): raise OSError("no display wired")
    """,
    "neopixel.py": """
        import json
        class NeoPixel:
            def __init__(self, pin, n): self.n = n; self.px = [(0, 0, 0)] * n
            def __setitem__(self, i, v): self.px[i] = tuple(v)
            def write(self): open("leds.json.tmp", "w").write(json.dumps(self.px)); __import__("os").replace("leds.json.tmp", "leds.json")
    """,
    "micropython.py": """
        def kbd_intr(c): open("kbd_intr", "w").write(str(c))
    """,
    "run_pico.py": """
        import io, sys, time
        time.ticks_ms = lambda: int(time.monotonic() * 1000)
        time.ticks_diff = lambda a, b: a - b
        time.ticks_add = lambda t, ms: t + ms
        time.sleep_ms = lambda ms: time.sleep(ms / 1000)
        class Stdin:  # MicroPython's sys.stdin.buffer is unbuffered
            buffer = io.FileIO(0, "rb", closefd=False)
            def fileno(self): return 0
        sys.stdin = Stdin()
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "wb", closefd=False), write_through=True)
        import main  # the Pico's own entry point
    """,
}


def start_pico(tmp_path: Path, link: str) -> tuple[subprocess.Popen, str]:
    """The firmware in a process whose USB serial (stdin/stdout) or UART is one end of a pty; the
    other end's path is returned for the bridge, as /dev/ttyACM0 or /dev/serial0 would be."""
    flash = tmp_path / "flash"
    flash.mkdir()
    for name in ("main.py", "hal_pico.py", "panelfw.py", "panelproto.py"):
        (flash / name).write_text((FIRMWARE / name).read_text())
    for name, text in STANDINS.items():
        (flash / name).write_text(textwrap.dedent(text))
    (flash / "panel_config.json").write_text(
        json.dumps({"link": link, "seats": SEATS, "leds_per_seat": 4, "brightness": 255})
    )
    pico_end, host_end, path = raw_pty()
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(flash), "FAKE_UART_FD": str(pico_end)}
    if link == "usb":
        io = {"stdin": pico_end, "stdout": pico_end, "pass_fds": ()}
    else:
        io = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "pass_fds": (pico_end,)}
    proc = subprocess.Popen(
        [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, '.'); import run_pico"],
        cwd=flash,
        env=env,
        stderr=subprocess.PIPE,
        **io,
    )
    os.close(pico_end)
    proc.host_fd = host_end  # type: ignore[attr-defined]  # kept open so the pty stays alive
    return proc, path


def stop(proc: subprocess.Popen) -> tuple[str, str]:
    """Stop the firmware; what it printed (on the UART link: the USB REPL) and its tracebacks."""
    proc.kill()
    out, err = proc.communicate(timeout=10)
    os.close(proc.host_fd)  # type: ignore[attr-defined]
    return (out or b"").decode(errors="replace"), (err or b"").decode(errors="replace")


@pytest.mark.parametrize("link", ["usb", "uart"])
async def test_the_pico_firmware_answers_the_bridge_on_both_links(tmp_path, link):
    import asyncio

    proc, port = start_pico(tmp_path, link)
    flash = tmp_path / "flash"
    try:
        scene = SignalState(SEATS).apply(HAND)
        async with PanelBridge(port, SEATS) as bridge:
            assert await bridge.show(scene, timeout=8.0), "the panel never acknowledged the scene"
            health = bridge.health
            for _ in range(100):  # the LEDs are written at the next render tick
                leds = json.loads((flash / "leds.json").read_text()) if (flash / "leds.json").exists() else []
                if leds and leds[2 * 4] == [0, 90, 255]:
                    break
                await asyncio.sleep(0.05)
    finally:
        repl, err = stop(proc)
    assert health["panel_seats"] == SEATS and health["led_count"] == SEATS * 4, err
    assert health["frames_acked"] >= 1
    assert leds[2 * 4 : 3 * 4] == [[0, 90, 255]] * 4, "seat 3, small blind: solid blue"
    assert leds[4 * 4 : 5 * 4] == [[255, 200, 0]] * 4, "seat 5, big blind: solid yellow"
    if link == "usb":
        assert (flash / "kbd_intr").read_text() == "-1"  # Ctrl-C bytes are frame bytes, not interrupts
        assert not (flash / "uart-opened").exists()
        assert bridge.health.get("frames_dropped", 0) == 0  # no log text mixed into the stream
    else:
        assert (flash / "uart-opened").read_text() == "0 115200 0 1"  # UART0 on GP0/GP1
        assert not (flash / "kbd_intr").exists()  # the USB serial stays the REPL's
        assert "no status display" in repl  # and the log lines go there, for a person to read


def test_firmware_udev_unit_config_and_docs_agree_on_the_usb_link():
    """The installer's path: a Pico on the Pi's USB. Every file on that path must say the same."""
    repo = FIRMWARE.parents[1]
    hal = (FIRMWARE / "hal_pico.py").read_text()
    assert 'cfg.get("link", "usb")' in hal  # USB is the firmware's default link
    rule = next(
        line
        for line in (repo / "systemd" / "99-smart-table.rules").read_text().splitlines()
        if "2e8a" in line and not line.startswith("#")
    )
    assert 'SUBSYSTEM=="tty"' in rule and '"0005"' in rule and 'SYMLINK+="smart-table/panel"' in rule
    unit = (repo / "systemd" / "smart-table.service").read_text()
    assert "DeviceAllow=char-ttyACM rw" in unit and "example.invalid" not in unit
    table = (repo / "systemd" / "table.toml").read_text()
    assert 'panel = "/dev/smart-table/panel"' in table
    panel_doc = (repo / "docs" / "panel.md").read_text()
    assert "/dev/ttyACM0" in panel_doc and '"link": "uart"' in panel_doc and "hold NEW HAND" in panel_doc
