"""Simulated hardware layer: lets the real firmware files run under CPython on a pseudo-terminal.

Run as a script (its folder is then the import root, exactly like the Pico's flash):
    python firmware_bridge/firmware/hal_sim.py --uart-fd 3 --storage DIR --seats 10
The UART is the master side of a pty (fd passed in), paced at the configured baud rate so that
timings look like a real 115200 baud line. Panel buttons are driven by commands on stdin
("press 1"), bouncing like real contacts. What the LEDs and the display show is reported on
stdout as JSON lines ({"kind": "state", ...} on every change, {"kind": "leds", ...} at most
every `leds_every_ms`).
CPython only: this file never goes onto the Pico.
"""

import errno
import json
import os
import select
import sys
import time

BITS_PER_BYTE = 10  # start + 8 data + stop
BOUNCE_MS = 8


class SimHal:
    def __init__(
        self, uart_fd, control_fd, report_fd, storage_dir, config, baudrate=115200, leds_every_ms=50
    ):
        self.uart_fd = uart_fd
        self.control_fd = control_fd
        self.report_fd = report_fd
        self.storage_dir = storage_dir
        self._config = config
        self.byte_ms = BITS_PER_BYTE * 1000.0 / baudrate if baudrate else 0.0
        self.leds_every_ms = leds_every_ms
        os.set_blocking(uart_fd, False)
        self._rx = []  # [ready_at_ms, bytes]: bytes on their way in at line speed
        self._rx_free = 0.0
        self._tx = []  # [due_ms, bytes]: bytes on their way out at line speed
        self._tx_free = 0.0
        self._uart_dead_until = 0.0  # nobody on the other end: poll slowly instead of spinning
        self._presses = {}  # button -> (start_ms, hold_ms)
        self._control_buf = b""
        self._pixels = None
        self._leds_dirty = False
        self._last_leds = -1e9
        self.text = ""

    # --- clock ---------------------------------------------------------------------------------

    def _now(self):
        return time.monotonic() * 1000.0

    def ticks_ms(self):
        return int(self._now())

    def ticks_diff(self, a, b):
        return a - b

    def ticks_add(self, t, ms):
        return t + ms

    # --- UART ----------------------------------------------------------------------------------

    def _flush_tx(self, now):
        while self._tx and self._tx[0][0] <= now:
            _, data = self._tx.pop(0)
            try:
                os.write(self.uart_fd, data)
            except BlockingIOError:
                pass  # the host is not reading: a real UART loses the bytes too
            except OSError:
                pass

    def _read_uart(self, now):
        try:
            data = os.read(self.uart_fd, 4096)
        except BlockingIOError:
            return
        except OSError as exc:
            if exc.errno == errno.EIO:  # no process has the other end open
                self._uart_dead_until = now + 20
                return
            raise
        if not data:
            self._uart_dead_until = now + 20
            return
        start = max(now, self._rx_free)
        self._rx_free = start + len(data) * self.byte_ms
        self._rx.append([self._rx_free, data])

    def uart_read(self):
        now = self._now()
        self._flush_tx(now)
        out = b""
        while self._rx and self._rx[0][0] <= now:
            out += self._rx.pop(0)[1]
        return out or None

    def uart_write(self, data):
        now = self._now()
        start = max(now, self._tx_free)
        self._tx_free = start + len(data) * self.byte_ms
        self._tx.append([self._tx_free, bytes(data)])
        self._flush_tx(now)

    def wait(self, ms):
        deadline = self._now() + ms
        while True:
            now = self._now()
            self._flush_tx(now)
            self._maybe_report_leds(now)
            if self._rx and self._rx[0][0] <= now:
                return
            until = deadline
            if self._rx:
                until = min(until, self._rx[0][0])
            if self._tx:
                until = min(until, self._tx[0][0])
            if self._leds_dirty:
                until = min(until, self._last_leds + self.leds_every_ms)
            timeout = max(0.0, (until - now) / 1000.0)
            fds = [self.control_fd]
            if now >= self._uart_dead_until:
                fds.append(self.uart_fd)
            else:
                timeout = min(timeout, max(0.0, (self._uart_dead_until - now) / 1000.0))
            readable, _, _ = select.select(fds, [], [], timeout)
            now = self._now()
            if self.uart_fd in readable:
                self._read_uart(now)
            if self.control_fd in readable:
                self._read_control(now)
            if now >= deadline and not (self._rx and self._rx[0][0] <= now):
                self._flush_tx(now)
                return

    # --- buttons -------------------------------------------------------------------------------

    def _read_control(self, now):
        data = os.read(self.control_fd, 4096)
        if not data:  # the simulator went away: so do we
            sys.exit(0)
        self._control_buf += data
        while b"\n" in self._control_buf:
            line, self._control_buf = self._control_buf.split(b"\n", 1)
            parts = line.decode("ascii", "replace").split()
            if len(parts) >= 2 and parts[0] == "press":
                hold = int(parts[2]) if len(parts) > 2 else 120
                self._presses[int(parts[1])] = (now, hold)

    def buttons(self):
        now = self._now()
        out = []
        for button in (1, 2):
            pressed = False
            press = self._presses.get(button)
            if press is not None:
                t = now - press[0]
                hold = press[1]
                if t < BOUNCE_MS:
                    pressed = int(t) % 2 == 0  # contact bounce on the way down
                elif t < hold:
                    pressed = True
                elif t < hold + BOUNCE_MS:
                    pressed = int(t) % 2 == 1  # and on the way up
                else:
                    del self._presses[button]
            out.append((button, pressed))
        return out

    # --- LEDs, display, reports ----------------------------------------------------------------

    def _emit(self, obj):
        data = (json.dumps(obj, separators=(",", ":")) + "\n").encode()
        view = memoryview(data)
        while view:
            try:
                n = os.write(self.report_fd, view)
            except BrokenPipeError:
                sys.exit(0)
            view = view[n:]

    def _maybe_report_leds(self, now):
        if self._leds_dirty and now - self._last_leds >= self.leds_every_ms:
            self._last_leds = now
            self._leds_dirty = False
            self._emit({"kind": "leds", "pixels": [list(p) for p in self._pixels]})

    def show(self, pixels):
        self._pixels = pixels
        self._leds_dirty = True
        self._maybe_report_leds(self._now())

    def display(self, text):
        self.text = text

    def state_changed(self, snapshot):
        snapshot = dict(snapshot)
        snapshot["kind"] = "state"
        if self._pixels is not None:
            snapshot["pixels"] = [list(p) for p in self._pixels]
        self._emit(snapshot)

    # --- storage, config, log ------------------------------------------------------------------

    def config(self):
        return self._config

    def load(self, name):
        try:
            with open(os.path.join(self.storage_dir, name)) as f:
                return f.read()
        except OSError:
            return None

    def save(self, name, text):
        path = os.path.join(self.storage_dir, name)
        with open(path + ".tmp", "w") as f:
            f.write(text)
        os.replace(path + ".tmp", path)

    def log(self, text):
        sys.stderr.write("panel-fw: " + text + "\n")
        sys.stderr.flush()


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description="run the panel firmware on simulated hardware")
    parser.add_argument("--uart-fd", type=int, required=True, help="pty master fd (the serial line)")
    parser.add_argument("--storage", required=True, help="folder standing in for the Pico's flash")
    parser.add_argument("--seats", type=int, default=10)
    parser.add_argument("--leds-per-seat", type=int, default=8)
    parser.add_argument("--baudrate", type=int, default=115200, help="line speed to simulate (0: instant)")
    parser.add_argument("--offline-after-ms", type=int, default=3000)
    args = parser.parse_args(argv)
    import panelfw  # the real firmware, from this folder

    config = {
        "seats": args.seats,
        "leds_per_seat": args.leds_per_seat,
        "offline_after_ms": args.offline_after_ms,
        "brightness": 255,
    }
    hal = SimHal(args.uart_fd, sys.stdin.fileno(), sys.stdout.fileno(), args.storage, config, args.baudrate)
    panelfw.run(hal)


if __name__ == "__main__":
    main()
