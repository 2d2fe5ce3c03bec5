"""LED panel firmware logic: scenes, effects, buttons, heartbeat watchdog, boot counter.

Runs unchanged on the Pico (MicroPython) and on the host (CPython) for the simulated panel.
All hardware goes through a `hal` object (hal_pico.PicoHal or hal_sim.SimHal) with:
    ticks_ms(), ticks_diff(a, b), ticks_add(t, ms), wait(ms), uart_read() -> bytes|None, uart_write(data),
    show(pixels), display(text), buttons() -> list of (button_id, pressed), config() -> dict,
    load(name) -> str|None, save(name, text), log(text), state_changed(snapshot)
"""

try:  # the Pico (and the simulated panel) run the firmware files as top-level modules
    import panelproto as proto
except ImportError:  # imported from the host package, e.g. by tests
    from firmware_bridge.firmware import panelproto as proto

FW_VERSION = (1, 0, 0)

DEFAULTS = {
    "seats": 10,
    "leds_per_seat": 8,
    "brightness": 160,  # 0..255, scales every colour to keep the supply current sane
    "offline_after_ms": 3000,  # no frame from the host for this long: offline pattern
    "heartbeat_ms": 1000,  # panel heartbeat interval
    "frame_ms": 20,  # effect animation step (50 Hz)
    "debounce_ms": 30,  # a button must read the same for this long to count
    "button_retry_ms": 250,  # resend an unacknowledged button press after this
    "button_tries": 8,
}

MODE_BOOT = "boot"
MODE_OFFLINE = "offline"
MODE_SCENE = "scene"

OFFLINE_TEXT = "OFFLINE\ntable computer\nnot talking"
BOOT_TEXT = "WAITING FOR\ntable computer"


def _scale(color, level):
    """color (r, g, b) times level/255."""
    return ((color[0] * level) >> 8, (color[1] * level) >> 8, (color[2] * level) >> 8)


def _triangle(phase_ms, period_ms):
    """0..255..0 over one period."""
    x = (phase_ms % period_ms) * 510 // period_ms
    return x if x <= 255 else 510 - x


def render_segment(seat, n, elapsed_ms, remaining_ms):
    """Pixels of one seat segment.

    seat = (r, g, b, effect, a, b); elapsed_ms = time since the scene arrived;
    remaining_ms = countdown time left (only for countdown).
    """
    r, g, b, effect, pa, pb = seat
    color = (r, g, b)
    off = (0, 0, 0)
    if effect == proto.EFFECT_OFF:
        return [off] * n
    if effect == proto.EFFECT_SOLID:
        return [color] * n
    if effect == proto.EFFECT_BLINK:
        period = pa or 500
        on = (elapsed_ms % period) < period // 2
        return [color if on else off] * n
    if effect == proto.EFFECT_PULSE:
        period = pa or 1500
        level = 40 + (_triangle(elapsed_ms, period) * 215 >> 8)
        return [_scale(color, level)] * n
    if effect == proto.EFFECT_CHASE:
        period = pa or 1000
        # A bright head with a fading tail runs over a dimly lit segment, so the seat stays
        # recognisable between two passes of the head.
        head = (elapsed_ms % period) * n // period
        out = []
        for i in range(n):
            dist = (head - i) % n
            if dist == 0:
                out.append(color)
            elif dist < 3:
                out.append(_scale(color, 150 if dist == 1 else 80))
            else:
                out.append(_scale(color, 45))
        return out
    if effect == proto.EFFECT_COUNTDOWN:
        total_ms = max(pb, pa, 1) * 100
        if remaining_ms <= 0:
            # Time is up: the whole segment flashes red, fast.
            on = (elapsed_ms % 300) < 150
            return [(255, 0, 0) if on else off] * n
        lit = (remaining_ms * n + total_ms - 1) // total_ms
        if remaining_ms <= 10000 and (elapsed_ms % 500) >= 250:
            lit = 0  # last ten seconds: blink
        return [color if i < lit else off for i in range(n)]
    return [off] * n


class Debouncer:
    """A raw pin level must hold for `hold_ms` before it counts; returns True on each new press."""

    def __init__(self, hold_ms):
        self.hold_ms = hold_ms
        self.stable = False
        self.candidate = False
        self.since = None

    def sample(self, pressed, now, diff):
        if pressed != self.candidate:
            self.candidate = pressed
            self.since = now
            return False
        if pressed != self.stable and self.since is not None and diff(now, self.since) >= self.hold_ms:
            self.stable = pressed
            return pressed
        return False


class Panel:
    """The panel's whole state machine; `poll()` does one round of work and says how long to wait."""

    def __init__(self, hal):
        self.hal = hal
        config = dict(DEFAULTS)
        try:
            config.update(hal.config() or {})
        except Exception as exc:  # a broken config file must not brick the panel
            hal.log("config error: " + repr(exc))
            self.config_error = repr(exc)
        else:
            self.config_error = None
        self.cfg = config
        self.seats = int(config["seats"])
        self.per_seat = int(config["leds_per_seat"])
        self.led_count = self.seats * self.per_seat
        self.offline_after_ms = int(config["offline_after_ms"])
        self.decoder = proto.FrameDecoder()
        self.seq = 0
        self.boot_counter = self._bump_boot_counter()
        now = hal.ticks_ms()
        self.started = now
        self.mode = MODE_BOOT
        self.scene = None  # list of seat tuples
        self.text = BOOT_TEXT
        self.scene_at = now
        self.countdown_deadline = {}  # seat index -> ticks when it reaches zero
        self.last_scene_seq = None
        self.last_host = None
        self.last_heartbeat = now
        self.last_render = None
        self.last_pixels = None
        self.shown_text = None
        self.buttons = {}
        self.pending_buttons = []  # [seq, frame, last_sent, tries]
        self.reported_dropped = 0
        self.last_error_report = now
        self.frames_rx = 0

    # --- persistence --------------------------------------------------------------------------

    def _bump_boot_counter(self):
        count = 0
        try:
            stored = self.hal.load("boot_count")
            if stored:
                count = int(stored.strip())
        except Exception as exc:
            self.hal.log("boot counter unreadable, starting at 0: " + repr(exc))
        count = (count + 1) & 0xFFFFFFFF
        try:
            self.hal.save("boot_count", str(count))
        except Exception as exc:
            self.hal.log("boot counter not saved: " + repr(exc))
        return count

    # --- sending ------------------------------------------------------------------------------

    def _next_seq(self):
        self.seq = (self.seq + 1) & 0xFFFF
        return self.seq

    def send(self, msg_type, payload=b"", seq=None):
        if seq is None:
            seq = self._next_seq()
        frame = proto.encode_frame(msg_type, seq, payload)
        self.hal.uart_write(frame)
        return seq, frame

    def send_hello(self):
        self.send(proto.HELLO, proto.hello_payload(FW_VERSION, self.boot_counter, self.led_count, self.seats))

    def report_error(self, code, detail):
        self.send(proto.ERROR, proto.error_payload(code, detail))

    # --- lifecycle ----------------------------------------------------------------------------

    def boot(self):
        self.hal.log("boot counter=" + str(self.boot_counter) + " seats=" + str(self.seats))
        if self.config_error:
            self.report_error(proto.ERR_CONFIG, self.config_error)
        self.send_hello()
        self.render(self.hal.ticks_ms(), force=True)
        self._state_changed()

    def snapshot(self):
        seats = []
        if self.scene is not None:
            for i, seat in enumerate(self.scene):
                entry = {
                    "seat": i + 1,
                    "color": [seat[0], seat[1], seat[2]],
                    "effect": proto.EFFECT_NAMES[seat[3]],
                }
                if seat[3] == proto.EFFECT_COUNTDOWN:
                    entry["deadline_ticks"] = self.countdown_deadline.get(i)
                seats.append(entry)
        return {
            "mode": self.mode,
            "boot_counter": self.boot_counter,
            "seats": seats,
            "text": self.text,
            "scene_seq": self.last_scene_seq,
            "frames_ok": self.decoder.frames_ok,
            "frames_dropped": self.decoder.dropped(),
            "errors": dict(self.decoder.errors),
        }

    def _state_changed(self):
        self.hal.state_changed(self.snapshot())

    def go_offline(self):
        self.mode = MODE_OFFLINE
        self.scene = None
        self.text = OFFLINE_TEXT
        self.countdown_deadline = {}
        self.last_scene_seq = None
        self.hal.log("offline: no frame from the host for " + str(self.offline_after_ms) + " ms")
        self._state_changed()

    # --- receiving ----------------------------------------------------------------------------

    def on_bytes(self, data, now):
        for frame in self.decoder.feed(data):
            self.on_frame(frame, now)

    def on_frame(self, frame, now):
        diff = self.hal.ticks_diff
        was_offline = self.mode != MODE_SCENE and (
            self.last_host is None or diff(now, self.last_host) >= self.offline_after_ms
        )
        self.last_host = now
        if frame.version != proto.VERSION:
            self.send(proto.NAK, proto.nak_payload(frame.seq, proto.NAK_BAD_VERSION))
            return
        kind = frame.msg_type
        if was_offline and kind != proto.HOST_HELLO:
            # The host is back after a silence: tell it who we are so it re-sends its scene.
            self.send_hello()
        if kind == proto.HOST_HELLO:
            try:
                params = proto.parse_host_hello(frame.payload)
            except proto.ProtocolError:
                self.send(proto.NAK, proto.nak_payload(frame.seq, proto.NAK_BAD_PAYLOAD))
                return
            self.offline_after_ms = params["offline_after_ms"]
            self.last_scene_seq = None  # a new host session numbers its frames afresh
            self.send_hello()
        elif kind == proto.SCENE:
            self.on_scene(frame, now)
        elif kind == proto.HEARTBEAT:
            pass
        elif kind == proto.ACK:
            try:
                seq = proto.parse_ack(frame.payload)
            except proto.ProtocolError:
                return
            self.pending_buttons = [p for p in self.pending_buttons if p[0] != seq]
        elif kind == proto.NAK:
            pass  # the host refused something we sent; nothing to retry but buttons (acked only)
        else:
            self.send(proto.NAK, proto.nak_payload(frame.seq, proto.NAK_UNKNOWN_TYPE))

    def on_scene(self, frame, now):
        seq = frame.seq
        if self.last_scene_seq is not None and seq == self.last_scene_seq and self.mode == MODE_SCENE:
            self.send(proto.ACK, proto.ack_payload(seq))  # a resend: same scene, just ack again
            return
        if self.last_scene_seq is not None and not proto.seq_newer(seq, self.last_scene_seq):
            self.send(proto.NAK, proto.nak_payload(seq, proto.NAK_STALE_SEQ))
            return
        try:
            seats, text = proto.parse_scene(frame.payload)
        except proto.ProtocolError as exc:
            self.send(proto.NAK, proto.nak_payload(seq, proto.NAK_BAD_PAYLOAD))
            self.report_error(proto.ERR_BAD_FRAMES, exc.message)
            return
        if len(seats) != self.seats:
            self.send(proto.NAK, proto.nak_payload(seq, proto.NAK_BAD_PAYLOAD))
            self.report_error(
                proto.ERR_CONFIG, "scene has " + str(len(seats)) + " seats, panel has " + str(self.seats)
            )
            return
        self.apply_scene(seats, text, now)
        self.last_scene_seq = seq
        self.send(proto.ACK, proto.ack_payload(seq))

    def apply_scene(self, seats, text, now):
        previous = self.scene
        deadlines = {}
        for i, seat in enumerate(seats):
            if seat[3] == proto.EFFECT_COUNTDOWN:
                deadlines[i] = self.hal.ticks_add(now, seat[4] * 100)
        if previous is not None and self.mode == MODE_SCENE:
            # Effects that did not change keep their phase, so a resend does not restart a blink.
            same = [i for i in range(len(seats)) if i < len(previous) and previous[i][:4] == seats[i][:4]]
            if len(same) != len(seats):
                self.scene_at = now
        else:
            self.scene_at = now
        self.mode = MODE_SCENE
        self.scene = seats
        self.text = text
        self.countdown_deadline = deadlines
        self.render(now, force=True)
        self._state_changed()

    # --- outputs ------------------------------------------------------------------------------

    def render(self, now, force=False):
        diff = self.hal.ticks_diff
        n = self.per_seat
        pixels = []
        if self.mode == MODE_SCENE and self.scene is not None:
            elapsed = diff(now, self.scene_at)
            for i, seat in enumerate(self.scene):
                remaining = 0
                if i in self.countdown_deadline:
                    remaining = diff(self.countdown_deadline[i], now)
                pixels.extend(render_segment(seat, n, elapsed, remaining))
        else:
            # Offline/boot: a slow amber comet round the whole ring, so the panel visibly is not
            # frozen on the last ruling.
            elapsed = diff(now, self.started)
            total = self.led_count
            head = (elapsed // 60) % total
            for i in range(total):
                dist = (head - i) % total
                level = 255 - dist * 40 if dist < 6 else 12
                pixels.append(_scale((255, 110, 0), level))
        level = int(self.cfg["brightness"])
        if level < 255:
            pixels = [_scale(p, level + 1) for p in pixels]
        if force or pixels != self.last_pixels:
            self.hal.show(pixels)
            self.last_pixels = pixels
        if self.text != self.shown_text:
            self.hal.display(self.text)
            self.shown_text = self.text
        self.last_render = now

    def poll_buttons(self, now):
        diff = self.hal.ticks_diff
        for button, pressed in self.hal.buttons():
            deb = self.buttons.get(button)
            if deb is None:
                deb = self.buttons[button] = Debouncer(int(self.cfg["debounce_ms"]))
            if deb.sample(pressed, now, diff):
                seq, frame = self.send(proto.BUTTON, proto.button_payload(button, self.boot_counter))
                self.pending_buttons.append([seq, frame, now, 1])
                self.hal.log("button " + proto.BUTTON_NAMES.get(button, str(button)) + " pressed")
        keep = []
        for item in self.pending_buttons:
            if diff(now, item[2]) >= int(self.cfg["button_retry_ms"]):
                if item[3] >= int(self.cfg["button_tries"]):
                    continue
                self.hal.uart_write(item[1])
                item[2] = now
                item[3] += 1
            keep.append(item)
        self.pending_buttons = keep

    def poll(self):
        """One round: read, react, animate. Returns how many ms the caller may sleep."""
        hal = self.hal
        diff = hal.ticks_diff
        now = hal.ticks_ms()
        data = hal.uart_read()
        if data:
            self.on_bytes(data, now)
            now = hal.ticks_ms()
        if (
            self.mode == MODE_SCENE
            and self.last_host is not None
            and diff(now, self.last_host) >= self.offline_after_ms
        ):
            self.go_offline()
        self.poll_buttons(now)
        if diff(now, self.last_heartbeat) >= int(self.cfg["heartbeat_ms"]):
            self.last_heartbeat = now
            self.send(
                proto.HEARTBEAT,
                proto.panel_heartbeat_payload(
                    self.boot_counter,
                    diff(now, self.started),
                    self.decoder.frames_ok,
                    self.decoder.dropped(),
                    self.mode == MODE_SCENE,
                ),
            )
        dropped = self.decoder.dropped()
        if dropped != self.reported_dropped and diff(now, self.last_error_report) >= 1000:
            self.last_error_report = now
            self.report_error(
                proto.ERR_BAD_FRAMES,
                "dropped "
                + str(dropped - self.reported_dropped)
                + " frames, last "
                + str(self.decoder.last_error),
            )
            self.reported_dropped = dropped
            self._state_changed()
        frame_ms = int(self.cfg["frame_ms"])
        if self.last_render is None or diff(now, self.last_render) >= frame_ms:
            self.render(now)
        wait = frame_ms - diff(hal.ticks_ms(), self.last_render)
        for deb in self.buttons.values():
            if deb.candidate or deb.stable:
                wait = min(wait, 5)  # a contact is moving: sample often enough to debounce
                break
        return max(wait, 0)


def run(hal):
    """The firmware's main loop; never returns. An exception in one round is reported, not fatal."""
    panel = Panel(hal)
    panel.boot()
    while True:
        try:
            wait = panel.poll()
        except Exception as exc:  # keep the panel alive; the watchdog covers real hangs
            hal.log("main loop error: " + repr(exc))
            try:
                panel.report_error(proto.ERR_INTERNAL, repr(exc))
            except Exception:
                pass
            wait = 10
        hal.wait(wait)
