"""Panel serial protocol: COBS-framed, CRC-16/CCITT-checked binary frames.

This one file is shared by both ends of the serial line: the host bridge imports it as
`firmware_bridge.firmware.panelproto` and the Pico runs it as the top-level module `panelproto`.
It therefore uses only what MicroPython has: no dataclasses, no typing, no enum, no struct
(bytes are packed by hand), no f-strings with format specs.

Frame on the wire:  COBS( header | payload | crc16 ) 0x00
    header  = version (1) | seq (2, big endian) | type (1) | length of payload (2, big endian)
    crc16   = CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) over header and payload, big endian
See firmware_bridge/PROTOCOL.md for the messages.
"""

VERSION = 1

# Message types
HELLO = 0x01  # panel -> host: firmware version, boot counter, LED count, seat count
HOST_HELLO = 0x02  # host -> panel: start of a session, heartbeat interval
SCENE = 0x10  # host -> panel: the whole desired scene
ACK = 0x20  # both ways: frame with this seq was accepted
NAK = 0x21  # both ways: frame with this seq was refused, with a reason
HEARTBEAT = 0x30  # both ways: I am alive
BUTTON = 0x40  # panel -> host: a panel button was pressed (debounced)
ERROR = 0x50  # panel -> host: something went wrong on the panel

TYPE_NAMES = {
    HELLO: "hello",
    HOST_HELLO: "host_hello",
    SCENE: "scene",
    ACK: "ack",
    NAK: "nak",
    HEARTBEAT: "heartbeat",
    BUTTON: "button",
    ERROR: "error",
}

# NAK reasons
NAK_BAD_VERSION = 1
NAK_UNKNOWN_TYPE = 2
NAK_BAD_PAYLOAD = 3
NAK_STALE_SEQ = 4
NAK_NAMES = {
    NAK_BAD_VERSION: "bad_version",
    NAK_UNKNOWN_TYPE: "unknown_type",
    NAK_BAD_PAYLOAD: "bad_payload",
    NAK_STALE_SEQ: "stale_seq",
}

# Effects of a seat segment
EFFECT_OFF = 0
EFFECT_SOLID = 1
EFFECT_BLINK = 2
EFFECT_PULSE = 3
EFFECT_CHASE = 4
EFFECT_COUNTDOWN = 5
EFFECT_NAMES = ("off", "solid", "blink", "pulse", "chase", "countdown")

# Buttons
BUTTON_NEW_HAND = 1
BUTTON_CALL_DIRECTOR = 2
BUTTON_NAMES = {BUTTON_NEW_HAND: "new_hand", BUTTON_CALL_DIRECTOR: "call_director"}

# Error codes the panel reports
ERR_DISPLAY = 1  # status display missing or failing
ERR_BAD_FRAMES = 2  # the panel dropped frames (detail says how many and why)
ERR_CONFIG = 3  # bad panel configuration file
ERR_INTERNAL = 4  # an exception in the firmware main loop (caught, loop goes on)

HEADER_LEN = 6
CRC_LEN = 2
MAX_PAYLOAD = 512
MAX_TEXT = 64
MAX_SEATS = 16
PARAMS_FLAG = 0x80  # in a seat's effect byte: effect parameters follow
# Longest COBS-encoded frame (without the delimiter): one overhead byte per 254 data bytes.
MAX_RAW = HEADER_LEN + MAX_PAYLOAD + CRC_LEN
MAX_ENCODED = MAX_RAW + MAX_RAW // 254 + 1


class ProtocolError(ValueError):
    """A frame or payload that cannot be accepted; `kind` is a short machine-readable name."""

    def __init__(self, kind, message):
        super().__init__(kind + ": " + message)
        self.kind = kind
        self.message = message


def _make_crc_table():
    table = []
    for i in range(256):
        crc = i << 8
        for _ in range(8):
            if crc & 0x8000:
                crc = ((crc << 1) ^ 0x1021) & 0xFFFF
            else:
                crc = (crc << 1) & 0xFFFF
        table.append(crc)
    return table


_CRC_TABLE = _make_crc_table()


def crc16_pure(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE, table driven, for MicroPython (which has no binascii.crc_hqx)."""
    table = _CRC_TABLE
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[((crc >> 8) ^ byte) & 0xFF]
    return crc


try:
    from binascii import crc_hqx as _crc_hqx

    def crc16(data, crc=0xFFFF):
        """CRC-16/CCITT-FALSE via the C implementation in binascii (host side)."""
        return _crc_hqx(data, crc)

except ImportError:  # MicroPython
    crc16 = crc16_pure


def cobs_encode(data):
    """Consistent Overhead Byte Stuffing: the result contains no zero byte."""
    out = bytearray()
    code_index = 0
    out.append(0)
    code = 1
    for byte in data:
        if byte == 0:
            out[code_index] = code
            code_index = len(out)
            out.append(0)
            code = 1
        else:
            out.append(byte)
            code += 1
            if code == 0xFF:
                out[code_index] = code
                code_index = len(out)
                out.append(0)
                code = 1
    out[code_index] = code
    return bytes(out)


def cobs_decode(data):
    """Inverse of cobs_encode; raises ProtocolError on a zero byte or a code past the end."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ProtocolError("bad_cobs", "zero byte inside frame at offset " + str(i))
        end = i + code
        if end > n:
            raise ProtocolError("bad_cobs", "code byte at offset " + str(i) + " runs past the frame end")
        j = i + 1
        while j < end:
            byte = data[j]
            if byte == 0:
                raise ProtocolError("bad_cobs", "zero byte inside frame at offset " + str(j))
            out.append(byte)
            j += 1
        i = end
        if code < 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode_frame(msg_type, seq, payload=b"", version=VERSION):
    """One complete frame for the wire, delimiter included."""
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError("oversized", "payload of " + str(len(payload)) + " bytes")
    raw = bytearray(HEADER_LEN + len(payload) + CRC_LEN)
    raw[0] = version & 0xFF
    raw[1] = (seq >> 8) & 0xFF
    raw[2] = seq & 0xFF
    raw[3] = msg_type & 0xFF
    raw[4] = (len(payload) >> 8) & 0xFF
    raw[5] = len(payload) & 0xFF
    raw[HEADER_LEN : HEADER_LEN + len(payload)] = payload
    crc = crc16(memoryview(raw)[: HEADER_LEN + len(payload)])
    raw[-2] = (crc >> 8) & 0xFF
    raw[-1] = crc & 0xFF
    return cobs_encode(raw) + b"\x00"


class Frame:
    """A decoded frame: version, seq, type and payload bytes."""

    __slots__ = ("msg_type", "payload", "seq", "version")

    def __init__(self, version, seq, msg_type, payload):
        self.version = version
        self.seq = seq
        self.msg_type = msg_type
        self.payload = payload

    def __repr__(self):
        return "Frame(v=%d seq=%d type=%s len=%d)" % (
            self.version,
            self.seq,
            TYPE_NAMES.get(self.msg_type, hex(self.msg_type)),
            len(self.payload),
        )


def decode_frame(encoded):
    """Decode one COBS frame (without its zero delimiter). Raises ProtocolError."""
    if len(encoded) > MAX_ENCODED:
        raise ProtocolError("oversized", str(len(encoded)) + " bytes before the delimiter")
    raw = cobs_decode(encoded)
    if len(raw) < HEADER_LEN + CRC_LEN:
        raise ProtocolError("truncated", "frame of " + str(len(raw)) + " bytes is shorter than a header")
    length = (raw[4] << 8) | raw[5]
    if length != len(raw) - HEADER_LEN - CRC_LEN:
        raise ProtocolError(
            "bad_length",
            "header says "
            + str(length)
            + " payload bytes, frame has "
            + str(len(raw) - HEADER_LEN - CRC_LEN),
        )
    crc = crc16(memoryview(raw)[: len(raw) - CRC_LEN])
    if crc != ((raw[-2] << 8) | raw[-1]):
        raise ProtocolError("bad_crc", "CRC mismatch in frame of " + str(len(raw)) + " bytes")
    # The version is checked by the receiver (it answers NAK bad_version), after the CRC, so that
    # line noise is reported as noise and not as a version mismatch.
    return Frame(raw[0], (raw[1] << 8) | raw[2], raw[3], bytes(raw[HEADER_LEN : HEADER_LEN + length]))


class FrameDecoder:
    """Streaming decoder: feed it bytes as they arrive, get whole frames back.

    Every bad frame is counted by kind in `errors` and dropped; the decoder resynchronises on the
    next zero byte, so one corrupt frame never costs more than itself.
    """

    def __init__(self):
        self._buf = bytearray()
        self._overflow = False
        self.frames_ok = 0
        self.errors = {}
        self.last_error = None

    def _count(self, kind, message):
        self.errors[kind] = self.errors.get(kind, 0) + 1
        self.last_error = kind + ": " + message

    def dropped(self):
        total = 0
        for value in self.errors.values():
            total += value
        return total

    def feed(self, data):
        frames = []
        buf = self._buf
        start = 0
        if isinstance(data, memoryview):
            data = bytes(data)
        n = len(data)
        while start < n:
            zero = data.find(b"\x00", start)
            if zero < 0:
                chunk = data[start:]
                start = n
            else:
                chunk = data[start:zero]
                start = zero + 1
            if not self._overflow:
                buf.extend(chunk)
                if len(buf) > MAX_ENCODED:
                    self._overflow = True
                    buf[:] = b""
            if zero < 0:
                break
            # A delimiter: one frame is complete.
            if self._overflow:
                self._overflow = False
                self._count("oversized", "frame longer than " + str(MAX_ENCODED) + " bytes")
            elif len(buf):
                try:
                    frames.append(decode_frame(bytes(buf)))
                    self.frames_ok += 1
                except ProtocolError as exc:
                    self._count(exc.kind, exc.message)
            buf[:] = b""
        return frames

    def reset(self):
        self._buf[:] = b""
        self._overflow = False


# --- integers --------------------------------------------------------------------------------


def _u16(value):
    return bytes(((value >> 8) & 0xFF, value & 0xFF))


def _u32(value):
    return bytes(((value >> 24) & 0xFF, (value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF))


def _get_u16(data, i):
    return (data[i] << 8) | data[i + 1]


def _get_u32(data, i):
    return (data[i] << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3]


def _need(payload, length, what):
    if len(payload) != length:
        raise ProtocolError(
            "bad_payload", what + " payload must be " + str(length) + " bytes, got " + str(len(payload))
        )


def seq_newer(seq, last):
    """True when 16-bit sequence number `seq` comes after `last` (serial number arithmetic)."""
    diff = (seq - last) & 0xFFFF
    return 0 < diff < 0x8000


# --- message payloads ------------------------------------------------------------------------


def hello_payload(fw_version, boot_counter, led_count, seats):
    major, minor, patch = fw_version
    return (
        bytes((major & 0xFF, minor & 0xFF, patch & 0xFF))
        + _u32(boot_counter)
        + _u16(led_count)
        + bytes((seats & 0xFF,))
    )


def parse_hello(payload):
    _need(payload, 10, "hello")
    return {
        "fw_version": (payload[0], payload[1], payload[2]),
        "boot_counter": _get_u32(payload, 3),
        "led_count": _get_u16(payload, 7),
        "seats": payload[9],
    }


def host_hello_payload(heartbeat_ms, offline_after_ms):
    return _u16(heartbeat_ms) + _u16(offline_after_ms)


def parse_host_hello(payload):
    _need(payload, 4, "host_hello")
    heartbeat_ms = _get_u16(payload, 0)
    offline_after_ms = _get_u16(payload, 2)
    if offline_after_ms < 200:
        raise ProtocolError("bad_payload", "offline_after_ms " + str(offline_after_ms) + " is below 200")
    return {"heartbeat_ms": heartbeat_ms, "offline_after_ms": offline_after_ms}


def ack_payload(seq):
    return _u16(seq)


def parse_ack(payload):
    _need(payload, 2, "ack")
    return _get_u16(payload, 0)


def nak_payload(seq, reason):
    return _u16(seq) + bytes((reason & 0xFF,))


def parse_nak(payload):
    _need(payload, 3, "nak")
    return {"seq": _get_u16(payload, 0), "reason": payload[2]}


def panel_heartbeat_payload(boot_counter, uptime_ms, frames_ok, frames_dropped, online):
    return (
        _u32(boot_counter)
        + _u32(uptime_ms & 0xFFFFFFFF)
        + _u16(min(frames_ok, 0xFFFF))
        + _u16(min(frames_dropped, 0xFFFF))
        + bytes((1 if online else 0,))
    )


def parse_heartbeat(payload):
    """Host heartbeats are empty; panel heartbeats carry the boot counter and counters."""
    if len(payload) == 0:
        return {}
    _need(payload, 13, "heartbeat")
    return {
        "boot_counter": _get_u32(payload, 0),
        "uptime_ms": _get_u32(payload, 4),
        "frames_ok": _get_u16(payload, 8),
        "frames_dropped": _get_u16(payload, 10),
        "online": payload[12] == 1,
    }


def button_payload(button, boot_counter):
    return bytes((button & 0xFF,)) + _u32(boot_counter)


def parse_button(payload):
    _need(payload, 5, "button")
    return {"button": payload[0], "boot_counter": _get_u32(payload, 1)}


def error_payload(code, detail):
    data = detail.encode("utf-8")[:MAX_TEXT]
    return bytes((code & 0xFF,)) + data


def parse_error(payload):
    if len(payload) < 1:
        raise ProtocolError("bad_payload", "error payload is empty")
    return {"code": payload[0], "detail": bytes(payload[1:]).decode("utf-8", "replace")}


def scene_payload(seats, text):
    """seats: list of (r, g, b, effect, a, b) per seat, seat 1 first; text: status text (UTF-8).

    a and b are effect parameters: blink/pulse/chase use a as the period in ms (0 = default);
    countdown uses a as the remaining time and b as the full time, both in tenths of a second.
    A seat is 4 bytes (r, g, b, effect); when a or b is not zero, bit 7 of the effect byte is set
    and a and b follow as two big-endian u16, so a plain scene stays short on a slow line.
    """
    if len(seats) < 1 or len(seats) > MAX_SEATS:
        raise ProtocolError("bad_payload", "scene must have 1.." + str(MAX_SEATS) + " seats")
    out = bytearray((len(seats),))
    for seat in seats:
        r, g, b, effect, pa, pb = seat
        if effect < 0 or effect >= len(EFFECT_NAMES):
            raise ProtocolError("bad_payload", "unknown effect " + str(effect))
        pa = min(max(pa, 0), 0xFFFF)
        pb = min(max(pb, 0), 0xFFFF)
        if pa or pb:
            out.extend(bytes((r & 0xFF, g & 0xFF, b & 0xFF, effect | PARAMS_FLAG)))
            out.extend(_u16(pa))
            out.extend(_u16(pb))
        else:
            out.extend(bytes((r & 0xFF, g & 0xFF, b & 0xFF, effect)))
    data = text.encode("utf-8")
    if len(data) > MAX_TEXT:
        raise ProtocolError("bad_payload", "status text longer than " + str(MAX_TEXT) + " bytes")
    out.append(len(data))
    out.extend(data)
    return bytes(out)


def parse_scene(payload):
    """Inverse of scene_payload: returns (seats, text). Raises ProtocolError naming the byte."""
    n = len(payload)
    if n < 2:
        raise ProtocolError("bad_payload", "scene payload of " + str(n) + " bytes")
    count = payload[0]
    if count < 1 or count > MAX_SEATS:
        raise ProtocolError("bad_payload", "seat count " + str(count) + " at offset 0")
    seats = []
    at = 1
    for i in range(count):
        if at + 4 > n:
            raise ProtocolError(
                "bad_payload", "scene truncated at seat " + str(i + 1) + ", offset " + str(at)
            )
        code = payload[at + 3]
        effect = code & 0x7F
        if effect >= len(EFFECT_NAMES):
            raise ProtocolError("bad_payload", "unknown effect " + str(effect) + " at offset " + str(at + 3))
        if code & PARAMS_FLAG:
            if at + 8 > n:
                raise ProtocolError(
                    "bad_payload", "scene truncated at seat " + str(i + 1) + ", offset " + str(at)
                )
            seats.append(
                (
                    payload[at],
                    payload[at + 1],
                    payload[at + 2],
                    effect,
                    _get_u16(payload, at + 4),
                    _get_u16(payload, at + 6),
                )
            )
            at += 8
        else:
            seats.append((payload[at], payload[at + 1], payload[at + 2], effect, 0, 0))
            at += 4
    if at >= n:
        raise ProtocolError("bad_payload", "scene truncated: no status text length at offset " + str(at))
    text_len = payload[at]
    if text_len > MAX_TEXT or n != at + 1 + text_len:
        raise ProtocolError("bad_payload", "status text length " + str(text_len) + " at offset " + str(at))
    try:
        text = bytes(payload[at + 1 :]).decode("utf-8")
    except UnicodeError:
        raise ProtocolError("bad_payload", "status text is not UTF-8") from None
    return seats, text
