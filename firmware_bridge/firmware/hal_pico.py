"""Hardware layer for the Raspberry Pi Pico (RP2040) under MicroPython.

The panel protocol runs on one of two links (`"link"` in panel_config.json):
    "usb" (default): the Pico's own USB serial (CDC), plugged into the Pi: it appears there as
        /dev/ttyACM0 (udev names it /dev/smart-table/panel). The firmware takes the USB serial for
        the protocol: Ctrl-C no longer breaks into the REPL (`micropython.kbd_intr(-1)`, a frame may
        hold a 0x03 byte) and log lines are kept in memory instead of printed. To reach the REPL
        again (mpremote, Thonny), hold NEW HAND while plugging the Pico in: main.py then stops.
    "uart": UART0 TX=GP0 RX=GP1 at 115200 baud to the Pi's GPIO UART (or a USB-serial adapter);
        the USB serial stays MicroPython's REPL and the log lines go there.
Other wiring (defaults, override in panel_config.json on the Pico's flash):
    WS2812 data on GP2, one segment of `leds_per_seat` LEDs per seat, seat 1 first, clockwise
    buttons to ground on GP14 (NEW HAND) and GP15 (CALL DIRECTOR), internal pull-ups
    SSD1306 128x32 OLED on I2C0 SDA=GP4 SCL=GP5 (optional: without it the panel runs LEDs only)
A hardware watchdog resets the board if the main loop ever stops for 8 s.
"""

import json
import sys
import time

import machine
import neopixel

CONFIG_FILE = "panel_config.json"
LINKS = ("usb", "uart")
LOG_LINES = 20  # log lines kept in memory on the USB link (`import hal_pico; hal_pico.LOG` in the REPL)
LOG = []


class UsbSerial:
    """The Pico's USB serial (CDC) as the protocol link: stdin/stdout in binary, never blocking."""

    def __init__(self):
        import select

        import micropython

        micropython.kbd_intr(-1)  # a frame byte 0x03 must not raise KeyboardInterrupt
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)

    def any(self):
        return bool(self._poll.poll(0))

    def read(self):
        data = b""
        while len(data) < 512 and self._poll.poll(0):
            chunk = self._in.read(1)
            if not chunk:
                break
            data += chunk
        return data or None

    def write(self, data):
        self._out.write(data)


class PicoHal:
    def __init__(self):
        self._cfg = {}
        try:
            with open(CONFIG_FILE) as f:
                self._cfg = json.load(f)
        except OSError:
            self._cfg = {}
        cfg = self._cfg
        seats = cfg.get("seats", 10)
        per_seat = cfg.get("leds_per_seat", 8)
        self.link = cfg.get("link", "usb")
        if self.link not in LINKS:
            self.link = "usb"  # a typo must not leave the panel deaf; the host sees which in HELLO logs
        if self.link == "usb":
            self.uart = UsbSerial()
        else:
            self.uart = machine.UART(
                cfg.get("uart", 0),
                baudrate=cfg.get("baudrate", 115200),
                tx=machine.Pin(cfg.get("uart_tx", 0)),
                rx=machine.Pin(cfg.get("uart_rx", 1)),
                rxbuf=1024,
                txbuf=1024,
            )
        self.np = neopixel.NeoPixel(machine.Pin(cfg.get("led_pin", 2)), seats * per_seat)
        self.pins = [
            (1, machine.Pin(cfg.get("new_hand_pin", 14), machine.Pin.IN, machine.Pin.PULL_UP)),
            (2, machine.Pin(cfg.get("director_pin", 15), machine.Pin.IN, machine.Pin.PULL_UP)),
        ]
        self.oled = None
        try:
            import ssd1306

            i2c = machine.I2C(
                0, sda=machine.Pin(cfg.get("oled_sda", 4)), scl=machine.Pin(cfg.get("oled_scl", 5))
            )
            self.oled = ssd1306.SSD1306_I2C(128, 32, i2c)
        except Exception as exc:
            self.log("no status display: " + repr(exc))
        self.wdt = machine.WDT(timeout=8000)

    def config(self):
        return self._cfg

    def ticks_ms(self):
        return time.ticks_ms()

    def ticks_diff(self, a, b):
        return time.ticks_diff(a, b)

    def ticks_add(self, t, ms):
        return time.ticks_add(t, ms)

    def wait(self, ms):
        self.wdt.feed()
        end = time.ticks_add(time.ticks_ms(), ms)
        while time.ticks_diff(end, time.ticks_ms()) > 0:
            if self.uart.any():
                return
            time.sleep_ms(1)

    def uart_read(self):
        if self.uart.any():
            return self.uart.read()
        return None

    def uart_write(self, data):
        self.uart.write(data)

    def show(self, pixels):
        np = self.np
        for i in range(min(len(pixels), np.n)):
            np[i] = pixels[i]
        np.write()

    def display(self, text):
        if self.oled is None:
            return
        self.oled.fill(0)
        row = 0
        for line in text.split("\n"):
            while line and row < 4:
                self.oled.text(line[:16], 0, row * 8)
                line = line[16:]
                row += 1
        self.oled.show()

    def buttons(self):
        return [(button, pin.value() == 0) for button, pin in self.pins]

    def load(self, name):
        try:
            with open(name) as f:
                return f.read()
        except OSError:
            return None

    def save(self, name, text):
        with open(name, "w") as f:
            f.write(text)

    def log(self, text):
        if self.link == "uart":
            print(text)  # the USB serial is the REPL's: a person may be watching
            return
        LOG.append(text)  # printing would put text into the protocol stream
        if len(LOG) > LOG_LINES:
            LOG.pop(0)

    def state_changed(self, snapshot):
        pass
