"""Shared fixtures: a fake hardware layer with a hand-driven clock for the firmware logic."""

from __future__ import annotations

import pytest

from firmware_bridge.firmware import panelproto as proto


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
