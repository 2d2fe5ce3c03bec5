"""The wire protocol: COBS, CRC, frames, message payloads, and every way a frame can be bad."""

from __future__ import annotations

import binascii

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.firmware import panelproto as proto


def test_crc_matches_the_ccitt_false_check_value_in_both_implementations():
    # The catalogue check value of CRC-16/CCITT-FALSE over "123456789".
    assert proto.crc16(b"123456789") == 0x29B1
    assert proto.crc16_pure(b"123456789") == 0x29B1
    assert binascii.crc_hqx(b"123456789", 0xFFFF) == 0x29B1


@given(st.binary(max_size=600))
@settings(max_examples=300)
def test_pure_crc_equals_binascii(data):
    assert proto.crc16_pure(data) == binascii.crc_hqx(data, 0xFFFF)


@given(st.binary(max_size=1200))
@settings(max_examples=300)
def test_cobs_round_trip_and_no_zero_bytes(data):
    encoded = proto.cobs_encode(data)
    assert 0 not in encoded
    assert len(encoded) <= len(data) + len(data) // 254 + 1
    assert proto.cobs_decode(encoded) == data


@pytest.mark.parametrize(
    ("data", "encoded"),
    [
        (b"", b"\x01"),
        (b"\x00", b"\x01\x01"),
        (b"\x11\x22\x00\x33", b"\x03\x11\x22\x02\x33"),
        (b"\x11\x00\x00\x00", b"\x02\x11\x01\x01\x01"),
        (bytes(range(1, 255)), b"\xff" + bytes(range(1, 255)) + b"\x01"),
    ],
)
def test_cobs_known_vectors(data, encoded):
    # Vectors from the COBS paper / Wikipedia's table.
    assert proto.cobs_encode(data) == encoded
    assert proto.cobs_decode(encoded) == data


@given(
    st.sampled_from(sorted(proto.TYPE_NAMES)), st.integers(0, 0xFFFF), st.binary(max_size=proto.MAX_PAYLOAD)
)
@settings(max_examples=200)
def test_frame_round_trip(msg_type, seq, payload):
    wire = proto.encode_frame(msg_type, seq, payload)
    assert wire.endswith(b"\x00") and wire.count(0) == 1
    decoder = proto.FrameDecoder()
    (frame,) = decoder.feed(wire)
    assert (frame.version, frame.seq, frame.msg_type, frame.payload) == (
        proto.VERSION,
        seq,
        msg_type,
        payload,
    )


def test_stream_split_at_every_byte_boundary_still_decodes():
    wire = b"".join(proto.encode_frame(proto.SCENE, i, bytes([i]) * 30) for i in range(5))
    for cut in range(len(wire)):
        decoder = proto.FrameDecoder()
        frames = decoder.feed(wire[:cut]) + decoder.feed(wire[cut:])
        assert [f.seq for f in frames] == [0, 1, 2, 3, 4]
        assert decoder.dropped() == 0


def _raw_frame(
    msg_type=proto.SCENE, seq=7, payload=b"abc", *, crc_ok=True, length=None, version=proto.VERSION
):
    length = len(payload) if length is None else length
    raw = bytearray([version, seq >> 8, seq & 0xFF, msg_type, length >> 8, length & 0xFF]) + payload
    crc = proto.crc16(bytes(raw)) ^ (0 if crc_ok else 1)
    raw += bytes([crc >> 8, crc & 0xFF])
    return proto.cobs_encode(bytes(raw)) + b"\x00"


@pytest.mark.parametrize(
    ("wire", "kind"),
    [
        (_raw_frame(crc_ok=False), "bad_crc"),
        (_raw_frame(length=5), "bad_length"),
        (proto.cobs_encode(b"\x01\x00\x01") + b"\x00", "truncated"),
        (b"\x05\x11\x22\x00", "bad_cobs"),  # code byte runs past the end
        (b"\x07" * (proto.MAX_ENCODED + 10) + b"\x00", "oversized"),
    ],
)
def test_bad_frames_are_counted_by_kind_and_dropped(wire, kind):
    decoder = proto.FrameDecoder()
    good = proto.encode_frame(proto.ACK, 1, proto.ack_payload(9))
    frames = decoder.feed(good + wire + good)
    assert [f.msg_type for f in frames] == [proto.ACK, proto.ACK], "good frames around a bad one survive"
    assert decoder.errors == {kind: 1}
    assert kind in decoder.last_error


def test_oversized_garbage_fed_in_small_pieces_is_one_error_and_resyncs():
    decoder = proto.FrameDecoder()
    for _ in range(100):
        assert decoder.feed(b"\x42" * 37) == []
    frames = decoder.feed(b"\x00" + proto.encode_frame(proto.HEARTBEAT, 3))
    assert [f.seq for f in frames] == [3]
    assert decoder.errors == {"oversized": 1}


def test_empty_frames_between_delimiters_are_ignored():
    decoder = proto.FrameDecoder()
    frames = decoder.feed(b"\x00\x00" + proto.encode_frame(proto.HEARTBEAT, 1) + b"\x00")
    assert len(frames) == 1 and decoder.dropped() == 0


def test_encode_refuses_oversized_payload():
    with pytest.raises(proto.ProtocolError) as err:
        proto.encode_frame(proto.SCENE, 1, b"x" * (proto.MAX_PAYLOAD + 1))
    assert err.value.kind == "oversized"


def test_other_protocol_version_is_decoded_for_the_receiver_to_refuse():
    frames = proto.FrameDecoder().feed(_raw_frame(version=9))
    assert frames[0].version == 9


def test_message_payload_round_trips():
    assert proto.parse_hello(proto.hello_payload((1, 2, 3), 70000, 80, 10)) == {
        "fw_version": (1, 2, 3),
        "boot_counter": 70000,
        "led_count": 80,
        "seats": 10,
    }
    assert proto.parse_host_hello(proto.host_hello_payload(500, 3000)) == {
        "heartbeat_ms": 500,
        "offline_after_ms": 3000,
    }
    assert proto.parse_ack(proto.ack_payload(65535)) == 65535
    assert proto.parse_nak(proto.nak_payload(12, proto.NAK_STALE_SEQ)) == {
        "seq": 12,
        "reason": proto.NAK_STALE_SEQ,
    }
    beat = proto.parse_heartbeat(proto.panel_heartbeat_payload(5, 123456, 70000, 3, True))
    assert beat == {
        "boot_counter": 5,
        "uptime_ms": 123456,
        "frames_ok": 65535,
        "frames_dropped": 3,
        "online": True,
    }
    assert proto.parse_heartbeat(b"") == {}
    assert proto.parse_button(proto.button_payload(proto.BUTTON_NEW_HAND, 9)) == {
        "button": 1,
        "boot_counter": 9,
    }
    assert proto.parse_error(proto.error_payload(proto.ERR_CONFIG, "seats é")) == {
        "code": proto.ERR_CONFIG,
        "detail": "seats é",
    }


@pytest.mark.parametrize(
    ("parser", "payload"),
    [
        (proto.parse_hello, b"\x01" * 9),
        (proto.parse_host_hello, b"\x00\x01"),
        (proto.parse_host_hello, proto.host_hello_payload(500, 10)),  # offline timeout too short
        (proto.parse_ack, b"\x01"),
        (proto.parse_nak, b"\x00\x01"),
        (proto.parse_heartbeat, b"\x00" * 5),
        (proto.parse_button, b"\x01"),
        (proto.parse_error, b""),
    ],
)
def test_payload_parsers_refuse_wrong_sizes(parser, payload):
    with pytest.raises(proto.ProtocolError) as err:
        parser(payload)
    assert err.value.kind == "bad_payload"


def test_scene_payload_round_trip():
    seats = [
        (255, 0, 0, proto.EFFECT_BLINK, 300, 0),
        (0, 200, 255, proto.EFFECT_COUNTDOWN, 450, 600),
        (1, 2, 3, proto.EFFECT_SOLID, 0, 0),
    ]
    payload = proto.scene_payload(seats, "MISDEAL\nseat 2")
    assert proto.parse_scene(payload) == (seats, "MISDEAL\nseat 2")
    assert len(payload) == 1 + 8 + 8 + 4 + 1 + 14, "seats without parameters take 4 bytes"


@given(
    st.lists(
        st.tuples(
            st.integers(0, 255),
            st.integers(0, 255),
            st.integers(0, 255),
            st.integers(0, 5),
            st.integers(0, 65535),
            st.integers(0, 65535),
        ),
        min_size=1,
        max_size=proto.MAX_SEATS,
    ),
    st.text(max_size=20),
)
def test_scene_payload_round_trip_property(seats, text):
    assert proto.parse_scene(proto.scene_payload(seats, text)) == (seats, text)


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        (b"\x00\x00", "seat count 0"),
        (bytes([proto.MAX_SEATS + 1]) + b"\x00" * 200, "seat count"),
        (b"\x02" + b"\x00" * 8, "no status text length at offset 9"),
        (b"\x02" + b"\x00" * 6, "scene truncated at seat 2, offset 5"),
        (b"\x01" + bytes([1, 2, 3, 0x81, 0, 0]), "scene truncated at seat 1, offset 1"),
        (b"\x01" + bytes([1, 2, 3, 9]) + b"\x00", "unknown effect 9 at offset 4"),
        (b"\x01" + bytes([1, 2, 3, 1]) + b"\x05ab", "status text length 5 at offset 5"),
        (b"\x01" + bytes([1, 2, 3, 1]) + b"\x02\xff\xfe", "not UTF-8"),
        (b"\x01", "scene payload of 1 bytes"),
    ],
)
def test_scene_parser_names_what_is_wrong(payload, needle):
    with pytest.raises(proto.ProtocolError) as err:
        proto.parse_scene(payload)
    assert needle in str(err.value)


def test_scene_encoder_refuses_unusable_scenes():
    with pytest.raises(proto.ProtocolError):
        proto.scene_payload([], "")
    with pytest.raises(proto.ProtocolError):
        proto.scene_payload([(0, 0, 0, 17, 0, 0)], "")
    with pytest.raises(proto.ProtocolError):
        proto.scene_payload([(0, 0, 0, 1, 0, 0)], "x" * (proto.MAX_TEXT + 1))


def test_sequence_numbers_wrap():
    assert proto.seq_newer(1, 0)
    assert proto.seq_newer(0, 0xFFFF)
    assert not proto.seq_newer(5, 5)
    assert not proto.seq_newer(4, 5)
    assert not proto.seq_newer(0x8005, 5)
