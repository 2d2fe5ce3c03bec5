# Runs under MicroPython (see run.mjs): the firmware's protocol and logic on MicroPython itself.
# Prints "VECTOR name hex" lines for the CPython side to compare, then "OK n".
import sys

sys.path.insert(0, "/fw")
import panelfw
import panelproto as p

checks = 0


def check(cond, what):
    global checks
    if not cond:
        raise AssertionError(what)
    checks += 1


def hexs(data):
    return "".join(f"{b:02x}" for b in data)


check(sys.implementation.name == "micropython", "running under MicroPython")
check(p.crc16(b"123456789") == 0x29B1, "crc check value")

seed = 12345


def rnd(n):
    global seed
    seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
    return seed % n


for _ in range(200):
    data = bytes([rnd(3) and rnd(256) for _ in range(rnd(600))])
    enc = p.cobs_encode(data)
    check(enc.find(b"\x00") < 0, "cobs has no zero")
    check(p.cobs_decode(enc) == data, "cobs round trip")

scene = p.scene_payload(
    [(255, 0, 0, 2, 300, 0), (0, 0, 255, 1, 0, 0), (0, 200, 255, 5, 450, 600)], "MISDEAL\nseat 2"
)
vectors = [
    ("scene", p.encode_frame(p.SCENE, 513, scene)),
    ("hello", p.encode_frame(p.HELLO, 1, p.hello_payload((1, 0, 0), 70000, 24, 3))),
    ("heartbeat", p.encode_frame(p.HEARTBEAT, 65535, p.panel_heartbeat_payload(7, 123456, 9, 2, True))),
    ("button", p.encode_frame(p.BUTTON, 9, p.button_payload(1, 7))),
    ("nak", p.encode_frame(p.NAK, 10, p.nak_payload(513, p.NAK_STALE_SEQ))),
]
for name, frame in vectors:
    print("VECTOR " + name + " " + hexs(frame))
    dec = p.FrameDecoder()
    frames = dec.feed(frame[:5]) + dec.feed(frame[5:])
    check(len(frames) == 1 and frames[0].payload is not None, "decode " + name)
check(p.parse_scene(scene)[1] == "MISDEAL\nseat 2", "scene text")

bad = p.FrameDecoder()
bad.feed(b"\x05\x11\x22\x00" + b"\x07" * 600 + b"\x00")
check(bad.errors == {"bad_cobs": 1, "oversized": 1}, "bad frames counted: " + repr(bad.errors))
try:
    p.parse_scene(b"\x01\x01\x02\x03\x01\x02\xff\xfe")
    check(False, "non-UTF-8 text refused")
except p.ProtocolError as exc:
    check(exc.kind == "bad_payload", "bad payload kind")


class Hal:
    def __init__(self):
        self.now = 1000
        self.rx = b""
        self.tx = b""
        self.pixels = None
        self.text = None
        self.pressed = False
        self.store = {}

    def ticks_ms(self):
        return self.now

    def ticks_diff(self, a, b):
        return a - b

    def ticks_add(self, t, ms):
        return t + ms

    def wait(self, ms):
        self.now += ms

    def uart_read(self):
        data = self.rx
        self.rx = b""
        return data or None

    def uart_write(self, data):
        self.tx += data

    def show(self, pixels):
        self.pixels = pixels

    def display(self, text):
        self.text = text

    def buttons(self):
        return [(1, self.pressed)]

    def config(self):
        return {"seats": 3, "leds_per_seat": 4, "brightness": 255}

    def load(self, name):
        return self.store.get(name)

    def save(self, name, text):
        self.store[name] = text

    def log(self, text):
        pass

    def state_changed(self, snapshot):
        pass

    def frames(self):
        out = p.FrameDecoder().feed(self.tx)
        self.tx = b""
        return out


hal = Hal()
panel = panelfw.Panel(hal)
panel.boot()
check([f.msg_type for f in hal.frames()] == [p.HELLO], "hello at boot")
check(hal.store["boot_count"] == "1", "boot counter stored")
hal.rx = p.encode_frame(p.HOST_HELLO, 1, p.host_hello_payload(500, 3000)) + p.encode_frame(p.SCENE, 2, scene)
panel.poll()
answers = [(f.msg_type, f.payload) for f in hal.frames()]
check(answers[-1] == (p.ACK, p.ack_payload(2)), "scene acknowledged: " + repr(answers))
check(hal.pixels[4:8] == [(0, 0, 255)] * 4, "seat 2 solid blue")
check(hal.text == "MISDEAL\nseat 2", "display text")
hal.now += 5
panel.render(hal.now, force=True)
check(hal.pixels[0] == (255, 0, 0), "blink on")
hal.now += 200
panel.render(hal.now, force=True)
check(hal.pixels[0] == (0, 0, 0), "blink off")

hal.pressed = True
for _ in range(20):
    hal.now += 5
    panel.poll()
hal.pressed = False
for _ in range(20):
    hal.now += 5
    panel.poll()
presses = [f for f in hal.frames() if f.msg_type == p.BUTTON]
check(len(presses) == 1, "one debounced press")

hal.now += 4000
panel.poll()
check(panel.mode == "offline", "offline without host")
check(hal.text == panelfw.OFFLINE_TEXT, "offline text")
print(
    "VECTOR fw_hello_after_offline "
    + hexs(p.encode_frame(p.HELLO, 1, p.hello_payload(panelfw.FW_VERSION, 1, 12, 3)))
)
print("OK " + str(checks))
