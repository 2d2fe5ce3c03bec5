"""Fuzz: 100,000+ random and mutated frames into the firmware's and the host's decoders.

A seeded random loop (fast and reproducible): random noise, valid frames of every message type,
and valid frames with bits flipped, bytes cut, inserted, dropped or duplicated. Neither side may
raise, every delimited unit must be accounted for (decoded or counted as dropped), and both must
still work normally afterwards.
"""

from __future__ import annotations

import random

from firmware_bridge.bridge import PanelBridge
from firmware_bridge.firmware import panelfw
from firmware_bridge.firmware import panelproto as proto

from .conftest import FakeHal

FRAMES_PER_DECODER = 100_000


def to_panel_frames(rng: random.Random) -> list[bytes]:
    seats = [
        (rng.randrange(256), rng.randrange(256), rng.randrange(256), rng.randrange(6), 0, 0) for _ in range(4)
    ]
    return [
        proto.encode_frame(proto.SCENE, rng.randrange(65536), proto.scene_payload(seats, "FUZZ")),
        proto.encode_frame(proto.HOST_HELLO, rng.randrange(65536), proto.host_hello_payload(500, 3000)),
        proto.encode_frame(proto.HEARTBEAT, rng.randrange(65536)),
        proto.encode_frame(proto.ACK, rng.randrange(65536), proto.ack_payload(rng.randrange(65536))),
        proto.encode_frame(proto.NAK, rng.randrange(65536), proto.nak_payload(1, 2)),
    ]


def to_host_frames(rng: random.Random) -> list[bytes]:
    return [
        proto.encode_frame(
            proto.HELLO, rng.randrange(65536), proto.hello_payload((1, 0, 0), rng.randrange(9), 40, 4)
        ),
        proto.encode_frame(proto.ACK, rng.randrange(65536), proto.ack_payload(rng.randrange(65536))),
        proto.encode_frame(
            proto.NAK, rng.randrange(65536), proto.nak_payload(rng.randrange(65536), rng.randrange(6))
        ),
        proto.encode_frame(
            proto.HEARTBEAT,
            rng.randrange(65536),
            proto.panel_heartbeat_payload(rng.randrange(9), 5, 6, 7, True),
        ),
        proto.encode_frame(proto.BUTTON, rng.randrange(65536), proto.button_payload(rng.randrange(4), 1)),
        proto.encode_frame(
            proto.ERROR, rng.randrange(65536), proto.error_payload(2, "x" * rng.randrange(70))
        ),
    ]


def mutate(rng: random.Random, frame: bytes) -> bytes:
    data = bytearray(frame)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(6)
        if not data:
            break
        i = rng.randrange(len(data))
        if op == 0:
            data[i] ^= 1 << rng.randrange(8)
        elif op == 1:
            del data[i:]
        elif op == 2:
            data.insert(i, rng.randrange(256))
        elif op == 3:
            del data[i]
        elif op == 4:
            data[i:i] = data[i : i + rng.randrange(1, 20)]
        else:
            data[i] = rng.randrange(256)
    if not data.endswith(b"\x00"):
        data.append(0)
    return bytes(data)


def fuzz_stream(rng: random.Random, make_frames, count: int) -> list[bytes]:
    """Chunks of bytes holding `count` delimited units in all."""
    chunks = []
    units = 0
    while units < count:
        kind = rng.random()
        if kind < 0.15:
            unit = rng.randbytes(rng.randrange(1, 120)) + b"\x00"
        elif kind < 0.17:
            unit = (
                rng.randbytes(proto.MAX_ENCODED + rng.randrange(1, 300)).replace(b"\x00", b"\x01") + b"\x00"
            )
        elif kind < 0.30:
            unit = rng.choice(make_frames(rng))
        else:
            unit = mutate(rng, rng.choice(make_frames(rng)))
        units += sum(1 for part in unit.split(b"\x00")[:-1] if part)
        chunks.append(unit)
    return chunks


def count_units(chunks: list[bytes]) -> int:
    return sum(1 for part in b"".join(chunks).split(b"\x00")[:-1] if part)


def feed_in_random_pieces(rng: random.Random, chunks: list[bytes], feed) -> None:
    stream = b"".join(chunks)
    i = 0
    while i < len(stream):
        n = rng.randrange(1, 2048)
        feed(stream[i : i + n])
        i += n


def test_firmware_decoder_survives_100k_bad_frames_and_still_works():
    rng = random.Random(20261129)
    hal = FakeHal()
    panel = panelfw.Panel(hal)
    panel.boot()
    chunks = fuzz_stream(rng, to_panel_frames, FRAMES_PER_DECODER)
    units = count_units(chunks)
    assert units >= FRAMES_PER_DECODER

    def feed(data: bytes) -> None:
        hal.now += 1
        panel.on_bytes(data, hal.now)
        hal.tx.clear()

    feed_in_random_pieces(rng, chunks, feed)
    dec = panel.decoder
    assert dec.frames_ok + dec.dropped() == units
    assert dec.dropped() > units // 2 and dec.frames_ok > units // 10
    assert set(dec.errors) <= {"bad_crc", "bad_cobs", "bad_length", "truncated", "oversized"}
    # still a working panel: a hello and a scene are answered and shown
    hal.rx.extend(proto.encode_frame(proto.HOST_HELLO, 1, proto.host_hello_payload(500, 3000)))
    hal.rx.extend(
        proto.encode_frame(proto.SCENE, 2, proto.scene_payload([(9, 8, 7, 1, 0, 0)] * 4, "after fuzz"))
    )
    panel.poll()
    answers = [(f.msg_type, f.payload) for f in hal.take_frames() if f.msg_type in (proto.HELLO, proto.ACK)]
    assert [kind for kind, _ in answers] == [proto.HELLO, proto.ACK] and proto.parse_ack(answers[1][1]) == 2
    assert hal.text == "after fuzz" and hal.pixels[0] == (9, 8, 7)


def test_host_decoder_survives_100k_bad_frames_and_still_works():
    rng = random.Random(4242)
    bridge = PanelBridge("/nonexistent/port", 4)
    chunks = fuzz_stream(rng, to_host_frames, FRAMES_PER_DECODER)
    units = count_units(chunks)
    feed_in_random_pieces(rng, chunks, bridge._on_bytes)
    health = bridge.health
    assert health["rx_frames_ok"] + bridge._decoder.dropped() == units
    assert bridge._decoder.dropped() > units // 2
    assert health["last_error"]
    bridge._on_bytes(proto.encode_frame(proto.HELLO, 1, proto.hello_payload((1, 0, 0), 77, 16, 4)))
    assert bridge.health["boot_counter"] == 77 and bridge.panel_info["seats"] == 4
