"""Shared fixtures: a fake hardware layer with a hand-driven clock for the firmware logic, and for
the tests on real pseudo-terminals the raw pty and the hand they show."""

from __future__ import annotations

import os
import tty

import pytest

from firmware_bridge.firmware import panelproto as proto

SEATS = 6
# a hand on six seats: button 2, small blind 3, big blind 5 (the scene the pty tests check)
HAND = {
    "type": "hand",
    "number": 4,
    "button": 2,
    "sb": 3,
    "bb": 5,
    "dead_button": False,
    "dead_sb_seat": None,
    "dealer": 2,
    "first_card": 3,
    "dealt_in": [3, 5, 6, 1, 2],
    "sitting_out": [],
    "redeal": False,
}


def raw_pty() -> tuple[int, int, str]:
    """A pseudo-terminal in raw mode (no echo, no line editing), as a serial port is: its
    controlling end, the port end, and the port's path (what the bridge opens)."""
    master, port = os.openpty()
    tty.setraw(master)
    tty.setraw(port)
    return master, port, os.ttyname(port)


class FakeHal:
    """The firmware's hardware layer, in memory: UART buffers, LED list, clock you move by hand."""

    def __init__(self, config=None, storage=None):
        self.now = 1000
        self._config = {"seats": 4, "leds_per_seat": 4, "brightness": 255, **(config or {})}
        self.storage = storage if storage is not None else {}
        self.rx = bytearray()
        self.tx = bytearray()
        self.pixels = None
        self.shown = []  # every pixel frame written
        self.text = None
        self.pressed = {1: False, 2: False}
        self.logs = []
        self.snapshots = []

    # clock
    def ticks_ms(self):
        return self.now

    def ticks_diff(self, a, b):
        return a - b

    def ticks_add(self, t, ms):
        return t + ms

    def wait(self, ms):
        self.now += max(ms, 1)

    # UART
    def uart_read(self):
        data, self.rx = bytes(self.rx), bytearray()
        return data or None

    def uart_write(self, data):
        self.tx.extend(data)

    def take_frames(self):
        decoder = proto.FrameDecoder()
        frames = decoder.feed(bytes(self.tx))
        self.tx.clear()
        return frames

    # the rest
    def show(self, pixels):
        self.pixels = list(pixels)
        self.shown.append(self.pixels)

    def display(self, text):
        self.text = text

    def buttons(self):
        return sorted(self.pressed.items())

    def config(self):
        return self._config

    def load(self, name):
        return self.storage.get(name)

    def save(self, name, text):
        self.storage[name] = text

    def log(self, text):
        self.logs.append(text)

    def state_changed(self, snapshot):
        self.snapshots.append(snapshot)


@pytest.fixture
def hal():
    return FakeHal()
