"""The host bridge against the real firmware on a real pseudo-terminal, and against scripted panels.

Timeouts here are generous upper bounds for a loaded machine; the figures that matter (how fast)
are measured by bench/bench_panel.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import tty

import pytest

from firmware_bridge.bridge import PanelBridge
from firmware_bridge.firmware import panelproto as proto
from firmware_bridge.scene import Scene
from firmware_bridge.signals import SignalState
from hil.panel_sim import SimulatedPanel
from tests.firmware_bridge.conftest import HAND, SEATS, raw_pty

GENEROUS = 8.0  # seconds


def shows(scene: Scene):
    """Predicate: the panel's own state is exactly this scene."""
    want = [(list(s.color), s.effect) for s in scene.seats]

    def check(state):
        return (
            state.get("mode") == "scene"
            and [(s["color"], s["effect"]) for s in state["seats"]] == want
            and state["text"] == scene.text
        )

    return check


@pytest.fixture
async def panel():
    async with SimulatedPanel(SEATS, leds_per_seat=4) as sim:
        yield sim


async def test_scene_is_acknowledged_and_shown_on_the_leds(panel):
    scene = SignalState(SEATS).apply(HAND)
    async with PanelBridge(panel.port, SEATS) as bridge:
        assert await bridge.show(scene, timeout=GENEROUS)
        await panel.wait_for(shows(scene), GENEROUS)
        health = bridge.health
    assert health["boot_counter"] == 1 and health["panel_seats"] == SEATS and health["led_count"] == 24
    assert health["frames_acked"] >= 1 and health["frames_dropped"] == 0
    await asyncio.sleep(0.1)  # LED reports are rate limited
    leds = panel.leds()
    assert set(leds[2]) == {(0, 90, 255)}  # small blind, solid blue
    assert set(leds[4]) == {(255, 200, 0)}  # big blind, solid yellow
    assert set(leds[3]) == {(0, 0, 0)}


async def test_firmware_reset_mid_scene_restores_the_scene(panel):
    state = SignalState(SEATS)
    state.apply(HAND)
    scene = state.apply({"type": "clock", "seat": 5, "seconds": 60})
    async with PanelBridge(panel.port, SEATS) as bridge:
        assert await bridge.show(scene, timeout=GENEROUS)
        await panel.restart()
        booted = await panel.wait_for(lambda s: s.get("boot_counter") == 2, GENEROUS)
        restored = await panel.wait_for(shows(scene), GENEROUS)
        print(f"restored {restored['received_at'] - booted['received_at']:.3f} s after the firmware booted")
        assert restored["boot_counter"] == 2
        countdown = restored["seats"][4]
        assert countdown["effect"] == "countdown"
        assert bridge.health["panel_resets"] >= 1 and bridge.health["connected"]


async def test_pulled_cable_then_replug_shows_the_scene_desired_meanwhile(panel):
    state = SignalState(SEATS)
    async with PanelBridge(panel.port, SEATS) as bridge:
        assert await bridge.show(state.apply(HAND), timeout=GENEROUS)
        await panel.unplug()
        assert not os.path.exists(panel.port)
        misdeal = state.apply({"type": "misdeal", "reason": "wrong_card_count"})
        assert await bridge.show(misdeal, timeout=0.5) is False  # nobody there to acknowledge
        for _ in range(100):
            if not bridge.health["connected"]:
                break
            await asyncio.sleep(0.05)
        assert bridge.health["connected"] is False
        assert bridge.health["last_error"]
        await panel.replug()
        booted = await panel.wait_for(lambda s: s.get("boot_counter") == 2, GENEROUS)
        restored = await panel.wait_for(shows(misdeal), GENEROUS)
        print(f"restored {restored['received_at'] - booted['received_at']:.3f} s after the panel came back")
        assert bridge.health["connected"] and bridge.health["reconnects"] >= 1


async def test_missing_port_is_retried_until_the_panel_appears(tmp_path):
    scene = SignalState(SEATS).apply(HAND)
    async with SimulatedPanel(SEATS, leds_per_seat=4, workdir=tmp_path / "sim") as sim:
        port = sim.port
        await sim.unplug()  # the port does not exist yet
        async with PanelBridge(port, SEATS) as bridge:
            assert await bridge.show(scene, timeout=0.3) is False
            assert bridge.health["connected"] is False
            assert "cannot open" in bridge.health["last_error"]
            await sim.replug()
            await sim.wait_for(shows(scene), GENEROUS)
            assert await bridge.wait_connected(GENEROUS)


async def test_new_hand_button_becomes_one_hand_start_line(panel):
    async with PanelBridge(panel.port, SEATS) as bridge:
        assert await bridge.wait_connected(GENEROUS)
        received = []

        async def collect():
            async for event in bridge.events():
                received.append(event)

        task = asyncio.create_task(collect())
        await asyncio.sleep(0.05)
        await panel.press("new_hand")
        for _ in range(int(GENEROUS / 0.05)):
            if received:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.6)  # time for any duplicate (bounce, resend) to show up
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert received == [{"type": "hand_start"}]


async def test_garbage_on_the_line_is_counted_and_does_no_harm(panel):
    scene = SignalState(SEATS).apply(HAND)
    async with PanelBridge(panel.port, SEATS) as bridge:
        assert await bridge.show(scene, timeout=GENEROUS)
        os.write(panel._master, b"\x13\x37garbage\x00\x05\x01\x02\x00" + bytes(range(1, 200)) + b"\x00")
        await asyncio.sleep(0.3)
        assert bridge.health["rx_frames_dropped"] >= 2
        assert bridge.health["connected"]
        misdeal = SignalState(SEATS)
        misdeal.apply(HAND)
        scene2 = misdeal.apply({"type": "misdeal", "reason": "multiple_boxed"})
        assert await bridge.show(scene2, timeout=GENEROUS)
        await panel.wait_for(shows(scene2), GENEROUS)


async def test_panel_falls_back_to_offline_when_the_host_stops_and_recovers():
    scene = SignalState(SEATS).apply(HAND)
    async with SimulatedPanel(SEATS, leds_per_seat=4) as sim:
        async with PanelBridge(sim.port, SEATS, panel_offline_after=0.6) as bridge:
            assert await bridge.show(scene, timeout=GENEROUS)
        offline = await sim.wait_for(lambda s: s.get("mode") == "offline", GENEROUS)
        assert offline["seats"] == [] and offline["text"].startswith("OFFLINE")
        async with PanelBridge(sim.port, SEATS) as bridge:
            assert await bridge.show(scene, timeout=GENEROUS)
            await sim.wait_for(shows(scene), GENEROUS)


async def test_scene_with_the_wrong_seat_count_is_refused_up_front(panel):
    async with PanelBridge(panel.port, SEATS) as bridge:
        with pytest.raises(ValueError, match="5 seats"):
            await bridge.show(Scene.blank(5))


async def test_pyserial_url_port_does_not_crash_the_bridge():
    # loop:// echoes our own frames back: no panel ever answers; the bridge must just say so.
    async with PanelBridge("loop://", SEATS) as bridge:
        assert await bridge.show(Scene.blank(SEATS, "x"), timeout=0.4) is False
        assert bridge.health["connected"] is False


# --- scripted panels: exact control over what the "panel" answers ---------------------------------


class ScriptedPanel:
    """The panel end of a raw pty, speaking the protocol by hand with the host's own codec."""

    def __init__(self, answer_scene):
        self.master, self.slave, self.port = raw_pty()
        self.answer_scene = answer_scene  # (attempt number, seq) -> bytes to send back, or None
        self.scene_frames = []
        self.decoder = proto.FrameDecoder()
        os.set_blocking(self.master, False)
        self.task = None

    def _readable(self):
        try:
            data = os.read(self.master, 4096)
        except OSError:
            return
        for frame in self.decoder.feed(data):
            reply = b""
            if frame.msg_type == proto.HOST_HELLO:
                reply = proto.encode_frame(proto.HELLO, 1, proto.hello_payload((9, 9, 9), 5, 24, SEATS))
            elif frame.msg_type == proto.SCENE:
                self.scene_frames.append(frame)
                reply = self.answer_scene(len(self.scene_frames), frame.seq) or b""
            if reply:
                os.write(self.master, reply)

    def __enter__(self):
        asyncio.get_running_loop().add_reader(self.master, self._readable)
        return self

    def __exit__(self, *exc):
        asyncio.get_running_loop().remove_reader(self.master)
        os.close(self.master)
        os.close(self.slave)


async def test_lost_acknowledgement_is_retried_with_the_same_frame():
    def answer(attempt, seq):
        return None if attempt == 1 else proto.encode_frame(proto.ACK, 1, proto.ack_payload(seq))

    with ScriptedPanel(answer) as fake:
        async with PanelBridge(fake.port, SEATS, ack_timeout=0.1) as bridge:
            assert await bridge.show(SignalState(SEATS).apply(HAND), timeout=GENEROUS)
            assert bridge.health["frames_retried"] >= 1 and bridge.health["fw_version"] == "9.9.9"
        first, second = fake.scene_frames[:2]
        assert first.seq == second.seq and first.payload == second.payload


async def test_refused_scene_returns_false_and_is_not_resent_forever():
    def answer(attempt, seq):
        return proto.encode_frame(proto.NAK, 1, proto.nak_payload(seq, proto.NAK_BAD_PAYLOAD))

    with ScriptedPanel(answer) as fake:
        async with PanelBridge(fake.port, SEATS) as bridge:
            started = time.monotonic()
            assert await bridge.show(SignalState(SEATS).apply(HAND), timeout=GENEROUS) is False
            assert time.monotonic() - started < GENEROUS
            await asyncio.sleep(0.3)
            assert len(fake.scene_frames) == 1
            assert "bad_payload" in bridge.health["last_error"]


async def test_silent_panel_counts_dropped_scenes_and_shakes_hands_again():
    with ScriptedPanel(lambda attempt, seq: None) as fake:
        async with PanelBridge(fake.port, SEATS, ack_timeout=0.05, max_tries=3) as bridge:
            assert await bridge.show(SignalState(SEATS).apply(HAND), timeout=1.0) is False
            assert bridge.health["frames_dropped"] >= 1
            assert bridge.health["frames_retried"] >= 2
            assert "not acknowledged" in bridge.health["last_error"]


class CorruptingLine:
    """A serial line between the bridge and the simulated panel that damages chosen host frames.

    The bridge opens `.port` (a fresh pty); bytes are copied both ways to the panel's port, and
    `damage(frame) -> bytes | None` may rewrite each host->panel frame on the way.
    """

    def __init__(self, panel_port: str, damage):
        self.master, self.slave, self.port = raw_pty()
        self.panel = os.open(panel_port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self.panel)
        os.set_blocking(self.master, False)
        self.damage = damage
        self.buffer = b""

    def _from_host(self):
        try:
            self.buffer += os.read(self.master, 4096)
        except OSError:
            return
        while b"\x00" in self.buffer:
            frame, self.buffer = self.buffer.split(b"\x00", 1)
            out = self.damage(frame + b"\x00")
            if out:
                os.write(self.panel, out)

    def _from_panel(self):
        try:
            os.write(self.master, os.read(self.panel, 4096))
        except OSError:
            pass

    def __enter__(self):
        loop = asyncio.get_running_loop()
        loop.add_reader(self.master, self._from_host)
        loop.add_reader(self.panel, self._from_panel)
        return self

    def __exit__(self, *exc):
        loop = asyncio.get_running_loop()
        loop.remove_reader(self.master)
        loop.remove_reader(self.panel)
        for fd in (self.master, self.slave, self.panel):
            os.close(fd)


@pytest.mark.parametrize("fault", ["bit_flip", "truncated", "dropped"])
async def test_damaged_scene_frame_costs_one_resend_on_the_real_firmware(panel, fault):
    damaged = []

    def damage(frame: bytes) -> bytes | None:
        decoded = proto.FrameDecoder().feed(frame)
        is_scene = decoded and decoded[0].msg_type == proto.SCENE
        if is_scene and b"MISDEAL" in proto.cobs_decode(frame[:-1]) and not damaged:
            damaged.append(frame)
            if fault == "bit_flip":
                return frame[:10] + bytes([frame[10] ^ 0x04 or 1]) + frame[11:]
            if fault == "truncated":
                return frame[: len(frame) // 2] + b"\x00"
            return None
        return frame

    state = SignalState(SEATS)
    hand = state.apply(HAND)
    misdeal = state.apply({"type": "misdeal", "reason": "first_card_wrong_seat"})
    with CorruptingLine(panel.port, damage) as line:
        async with PanelBridge(line.port, SEATS, ack_timeout=0.15) as bridge:
            assert await bridge.show(hand, timeout=GENEROUS)
            assert await bridge.show(misdeal, timeout=GENEROUS)
            await panel.wait_for(shows(misdeal), GENEROUS)
            health = bridge.health
    assert damaged, "the scene frame went through the damaging line"
    assert health["frames_retried"] == 1 and health["frames_dropped"] == 0
    state = panel.state()
    if fault != "dropped":
        assert state["frames_dropped"] >= 1 or sum(state["errors"].values()) >= 1
