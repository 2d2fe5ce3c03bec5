"""Simulated NFC: NTAG21x and NTAG 424 DNA cards in a simulated reader's field, and a Type 3 tag over UDP.

Three simulations, all read through nfcpy's own code (tag activation, NDEF TLV parsing, writes):

* `SimulatedNtag` + `SimulatedReader`: an NTAG213/215/216 memory model answering the Type 2 Tag
  commands (READ, WRITE, GET_VERSION, READ_SIG, FAST_READ) behind an `nfc.clf.device.Device`
  plugged into a real `nfc.ContactlessFrontend` - the approach of nfcpy's own test suite (a
  contactless frontend with a patched device), one level lower so `clf.sense()` and
  `nfc.tag.activate()` run unmodified. A card can be taken out of the field after N page writes
  (a tear) to test interrupted writes.
* `SimulatedNtag424`: an NTAG 424 DNA behind the same device driver, as a Type 4A tag (ISO-DEP and
  ISO 7816-4 through nfcpy's Type 4 Tag code), blank or personalised, mirroring a fresh SUN
  message into its NDEF file at every read.
* `Type3Emulator`: a Type 3 tag emulated with `nfc.ContactlessFrontend("udp:host:port")` in card
  mode, in another thread or process; a reader on the same UDP port reads it exactly as it would
  read a FeliCa card through a PN533. When reader and emulator poll in lock-step a read can miss:
  the reader pauses and retries.

`SimulatedReader.named(name)` shares one field inside a process (tests, the simulated table);
`SimulatedReader(spool=dir)` also picks up cards dropped into `dir` by `smart-table hil nfc tap`
from another process (one JSON file per tap, written atomically).
"""

from __future__ import annotations

import json
import logging
import os
import random
import secrets
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import nfc
import nfc.clf
import nfc.clf.device

log = logging.getLogger("smart_table.hil.nfc")


@dataclass(frozen=True)
class NtagModel:
    name: str
    version: bytes  # GET_VERSION response
    pages: int  # total pages, including configuration pages
    user_end: int  # last user page (inclusive)
    cc_size: int  # capability container byte 2 (data area size / 8)


NTAG_MODELS = {
    "ntag213": NtagModel("ntag213", bytes.fromhex("0004040201000F03"), 45, 39, 0x12),
    "ntag215": NtagModel("ntag215", bytes.fromhex("0004040201001103"), 135, 129, 0x3E),
    "ntag216": NtagModel("ntag216", bytes.fromhex("0004040201001303"), 231, 225, 0x6D),
}

ACK = b"\x0a"
NAK_INVALID = b"\x00"


def random_uid() -> bytes:
    """A 7-byte NXP UID (manufacturer byte 0x04)."""
    return b"\x04" + secrets.token_bytes(6)


class SimulatedTag:
    """What every simulated card shares: in the reader's field or not, and the air link, one frame in
    and one answer out (`command`), each counted and delayed by `latency` seconds; a subclass
    answers the frame (`answer`) with its own command set."""

    def __init__(self, latency: float = 0.0) -> None:
        self.latency = latency
        self.in_field = True
        self.tear_after_writes: int | None = None
        self.commands = 0

    def command(self, data: bytes) -> bytes:
        """Answer one frame; raises nfc.clf.TimeoutError when the tag stays silent."""
        if not self.in_field:
            raise nfc.clf.TimeoutError("tag left the field")
        self.commands += 1
        if self.latency:
            time.sleep(self.latency)
        if not data:
            raise nfc.clf.TimeoutError("empty frame")
        return self.answer(data)

    def answer(self, data: bytes) -> bytes:
        raise NotImplementedError


class SimulatedNtag(SimulatedTag):
    """An NTAG21x card: memory pages and the Type 2 Tag command set.

    `tear_after_writes=N` takes the card out of the field right after its N-th page write from now
    (the next command times out), which is how a player pulls a card away mid-write.
    `latency` adds seconds per command to model the air interface and reader link.
    """

    def __init__(self, model: str = "ntag215", uid: bytes | None = None, *, latency: float = 0.0):
        if model not in NTAG_MODELS:
            raise ValueError(f"unknown tag model {model!r} (one of {', '.join(NTAG_MODELS)})")
        self.model = NTAG_MODELS[model]
        self.uid = bytes(uid) if uid is not None else random_uid()
        if len(self.uid) != 7:
            raise ValueError("an NTAG UID has 7 bytes")
        super().__init__(latency)
        self.memory = bytearray(4 * self.model.pages)
        u = self.uid
        self.memory[0:4] = bytes([u[0], u[1], u[2], 0x88 ^ u[0] ^ u[1] ^ u[2]])
        self.memory[4:8] = u[3:7]
        self.memory[8:12] = bytes([u[3] ^ u[4] ^ u[5] ^ u[6], 0x48, 0x00, 0x00])
        self.memory[12:16] = bytes([0xE1, 0x10, self.model.cc_size, 0x00])
        self.memory[16:20] = bytes([0x03, 0x00, 0xFE, 0x00])  # empty NDEF message TLV, terminator
        self.writes = 0

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def with_message(
        cls, message: bytes, model: str = "ntag215", uid: bytes | None = None, **kw: Any
    ) -> SimulatedNtag:
        """A card already holding this NDEF message (as the desk would have written it)."""
        tag = cls(model, uid, **kw)
        tag.load_message(message)
        return tag

    def load_message(self, message: bytes) -> None:
        message = bytes(message)
        tlv = (
            bytes([0x03, len(message)])
            if len(message) < 255
            else b"\x03\xff" + len(message).to_bytes(2, "big")
        )
        data = tlv + message + b"\xfe"
        capacity = (self.model.user_end - 3) * 4
        if len(data) > capacity:
            raise ValueError(
                f"{len(message)}-byte message does not fit a {self.model.name} ({capacity} bytes)"
            )
        start, end = 16, 4 * (self.model.user_end + 1)
        self.memory[start:end] = bytes(end - start)
        self.memory[start : start + len(data)] = data

    def stored_message(self) -> bytes | None:
        """The NDEF message in memory, parsed independently of nfcpy (for checking results)."""
        offset, end = 16, 4 * (self.model.user_end + 1)
        while offset < end:
            t = self.memory[offset]
            if t == 0x00:
                offset += 1
                continue
            if t == 0xFE:
                return None
            length = self.memory[offset + 1]
            head = 2
            if length == 0xFF:
                length = int.from_bytes(self.memory[offset + 2 : offset + 4], "big")
                head = 4
            if t == 0x03:
                return bytes(self.memory[offset + head : offset + head + length])
            offset += head + length
        return None

    # -- serialisation (spool files) ------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {"model": self.model.name, "uid": self.uid.hex(), "memory": self.memory.hex()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SimulatedNtag:
        tag = cls(str(data["model"]), bytes.fromhex(str(data["uid"])))
        memory = bytes.fromhex(str(data["memory"]))
        if len(memory) != len(tag.memory):
            raise ValueError(f"memory image is {len(memory)} bytes, a {tag.model.name} has {len(tag.memory)}")
        tag.memory[:] = memory
        return tag

    # -- the command set ------------------------------------------------------------------------
    def answer(self, data: bytes) -> bytes:
        """One Type 2 Tag command."""
        cmd = data[0]
        last = self.model.pages - 1
        if cmd == 0x30 and len(data) == 2:  # READ: 4 pages, rolling over at the end of memory
            page = data[1]
            if page > last:
                return NAK_INVALID
            pages = [(page + i) % self.model.pages for i in range(4)]
            return b"".join(bytes(self.memory[4 * p : 4 * p + 4]) for p in pages)
        if cmd == 0x3A and len(data) == 3:  # FAST_READ start..end
            start, end = data[1], data[2]
            if start > end or end > last:
                return NAK_INVALID
            return bytes(self.memory[4 * start : 4 * (end + 1)])
        if cmd == 0xA2 and len(data) == 6:  # WRITE one page
            page = data[1]
            if page < 3 or page > self.model.user_end:
                return NAK_INVALID
            if page == 3:  # OTP capability container: bits can only be set
                for i in range(4):
                    self.memory[12 + i] |= data[2 + i]
            else:
                self.memory[4 * page : 4 * page + 4] = data[2:6]
            self.writes += 1
            if self.tear_after_writes is not None:
                self.tear_after_writes -= 1
                if self.tear_after_writes <= 0:
                    self.tear_after_writes = None
                    self.in_field = False  # the ACK never reaches the reader
                    raise nfc.clf.TimeoutError("tag left the field during write")
            return ACK
        if cmd == 0x60 and len(data) == 1:  # GET_VERSION
            return self.model.version
        if cmd == 0x3C and len(data) == 2:  # READ_SIG (originality signature; zeros: not an NXP original)
            return bytes(32)
        if cmd == 0x39 and len(data) == 2:  # READ_CNT
            return b"\x00\x00\x00"
        # Anything else (MIFARE Ultralight C AUTHENTICATE, PWD_AUTH without password, ...): the tag
        # goes mute until it is selected again, as a real NTAG does.
        raise nfc.clf.TimeoutError(f"no response to command {cmd:02x}")


# ---- NTAG 424 DNA: a Type 4 tag that signs every read (SUN) ---------------------------------------

NDEF_AID = bytes.fromhex("D2760000850101")
SW_OK = b"\x90\x00"
SW_NOT_FOUND = b"\x6a\x82"
SW_WRONG_OFFSET = b"\x6b\x00"
SW_SECURITY = b"\x69\x82"  # security status not satisfied (a write without authentication)
SW_NO_INS = b"\x6d\x00"
SW_NO_CLA = b"\x6e\x00"
SW_WRONG_LENGTH = b"\x67\x00"
ATS_424 = bytes.fromhex("067777710280")  # the NTAG 424 DNA's ATS: FSCI 7 (128 bytes), FWI 7
# The capability container file (E103) of an NTAG 424 DNA as personalised for the venue: NDEF file
# E104 of 256 bytes, readable by anyone, written only with a key (NFC Forum write access FF).
CC_424 = bytes.fromhex("001720010000FF0406E1040100 00FF 0506E10500808283".replace(" ", "")) + bytes(9)


class SimulatedNtag424(SimulatedTag):
    """An NTAG 424 DNA, blank from the factory or personalised, answering ISO-DEP (RATS, I-, R- and
    S-blocks), the ISO 7816-4 commands nfcpy's Type 4 Tag code sends (SELECT by name and file id,
    READ BINARY, UPDATE BINARY while the file is open) and the native commands the desk needs
    (AuthenticateEV2First, ChangeKey, ChangeFileSettings in CommMode.FULL; controller.registry.ntag424).

    With SDM on, the first READ BINARY of the NDEF file after it is selected counts SDMReadCtr up
    and mirrors PICCData and the SDMMAC into the file (AN12196 section 3): later reads of the same
    selection see the same bytes, so a read in several pieces is one SUN message. The keys live in
    the object as they live in the chip: no command reads them back.
    """

    model_name = "ntag424"

    def __init__(self, uid: bytes | None = None, *, latency: float = 0.0):
        self.uid = bytes(uid) if uid is not None else random_uid()
        if len(self.uid) != 7:
            raise ValueError("an NTAG 424 DNA UID has 7 bytes")
        self._keys = [bytes(16) for _ in range(5)]  # factory: five all-zero AES keys
        self._ndef = bytearray(256)  # file E104, NLEN 0: no message
        self._sdm: Any = None  # controller.registry.ntag424.SdmSettings once SUN is on
        self._write_free = True  # factory: anyone may write the NDEF file
        self.counter = 0  # SDMReadCtr: the value of the last read (0: never read)
        super().__init__(latency)
        self._reset()

    def _reset(self) -> None:
        self._chain = bytearray()  # ISO-DEP chaining: the pieces of an APDU received so far
        self._selected_app = False
        self._selected: str | None = None  # "cc" or "ndef"
        self._snapshot: bytes | None = None
        self._pending: tuple[int, bytes] | None = None  # AuthenticateEV2First: key number, RndB
        self._session: Any = None

    @classmethod
    def personalised(
        cls, uid: bytes | None, player_id: str, keys: Any, *, counter: int = 0, **kw: Any
    ) -> SimulatedNtag424:
        """A blank tag personalised for `player_id` by the desk's own code (ntag424.personalise),
        as `register write-card` would do it."""
        from controller.registry.card import ntag424_card_keys, sun_card_layout
        from controller.registry.ntag424 import personalise

        tag = cls(uid, **kw)
        tag.command(b"\xe0\x80")  # activation (RATS)
        personalise(tag.apdu, sun_card_layout(player_id, keys), ntag424_card_keys(tag.uid, keys))
        tag.counter = counter  # a card that has been read `counter` times already
        tag._reset()
        return tag

    # -- what a reader sees -----------------------------------------------------------------------
    def _mirrored_file(self) -> bytes:
        from controller.registry.sun import COUNTER_LIMIT, encrypt_picc_data, sdm_mac

        file = bytearray(self._ndef)
        sdm = self._sdm
        if sdm is None:
            return bytes(file)
        if self.counter >= COUNTER_LIMIT:
            raise nfc.clf.TimeoutError("SDMReadCtr at its limit: the tag no longer answers SDM reads")
        self.counter += 1
        meta, key = self._keys[sdm.meta_key_no], self._keys[sdm.file_key_no]
        picc = encrypt_picc_data(meta, self.uid, self.counter, secrets.token_bytes(5))
        file[sdm.picc_offset : sdm.picc_offset + 32] = picc.hex().upper().encode()
        mac = sdm_mac(key, self.uid, self.counter, bytes(file[sdm.mac_input_offset : sdm.mac_offset]))
        file[sdm.mac_offset : sdm.mac_offset + 16] = mac.hex().upper().encode()
        return bytes(file)

    def stored_message(self) -> bytes:
        """The NDEF message as the next read would return it (counts a read, as a real reader would)."""
        file = self._mirrored_file()
        return file[2 : 2 + int.from_bytes(file[:2], "big")]

    # -- serialisation (spool files): a simulation convenience, a real chip never gives its keys ----
    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "uid": self.uid.hex(),
            "counter": self.counter,
            "keys": [k.hex() for k in self._keys],
            "ndef": self._ndef.hex(),
            "sdm": self._sdm.encode().hex() if self._sdm is not None else None,
            "write_free": self._write_free,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SimulatedNtag424:
        from controller.registry.ntag424 import SdmSettings

        tag = cls(bytes.fromhex(str(data["uid"])))
        tag._keys = [bytes.fromhex(str(k)) for k in data["keys"]]
        if len(tag._keys) != 5 or any(len(k) != 16 for k in tag._keys):
            raise ValueError("an NTAG 424 DNA holds five 16-byte keys")
        ndef_file = bytes.fromhex(str(data["ndef"]))
        if len(ndef_file) != 256:
            raise ValueError("an NTAG 424 DNA NDEF file has 256 bytes")
        tag._ndef[:] = ndef_file
        tag._sdm = SdmSettings.decode(bytes.fromhex(data["sdm"])) if data.get("sdm") else None
        tag._write_free = bool(data["write_free"])
        tag.counter = int(data["counter"])
        return tag

    # -- ISO-DEP and ISO 7816-4 ---------------------------------------------------------------------
    def answer(self, data: bytes) -> bytes:
        """One ISO-DEP block."""
        pcb = data[0]
        if pcb == 0xE0 and len(data) == 2:  # RATS: a fresh activation
            self._reset()
            return ATS_424
        if pcb & 0xEE == 0x02:  # I-block; with the chaining bit, a piece of a longer APDU
            self._chain += data[1:]
            if pcb & 0x10:
                return bytes([0xA2 | (pcb & 1)])  # R(ACK): send the next piece
            apdu, self._chain = bytes(self._chain), bytearray()
            return bytes([pcb & 0x03 | 0x02]) + self.apdu(apdu)
        if pcb & 0xF6 == 0xB2:  # R(NAK): presence check; answer R(ACK)
            return bytes([0xA2 | (pcb & 1)])
        if pcb == 0xC2:  # S(DESELECT)
            return b"\xc2"
        raise nfc.clf.TimeoutError(f"no response to block {pcb:02x}")

    def apdu(self, c: bytes) -> bytes:
        if len(c) < 4:
            return SW_WRONG_LENGTH
        cla, ins, p1, p2 = c[:4]
        body = c[5 : 5 + c[4]] if len(c) > 5 else b""
        if cla == 0x90:
            return self._native(ins, body)
        if cla != 0x00:
            return SW_NO_CLA
        if ins == 0xA4:  # SELECT
            self._snapshot = None
            if p1 == 0x04:
                self._selected_app, self._selected, self._session = body == NDEF_AID, None, None
                return SW_OK if self._selected_app else SW_NOT_FOUND
            if p1 in (0x00, 0x02) and self._selected_app and body in (b"\xe1\x03", b"\xe1\x04"):
                self._selected = "ndef" if body == b"\xe1\x04" else "cc"
                return SW_OK
            return SW_NOT_FOUND
        if ins in (0xB0, 0xD6) and (not self._selected_app or self._selected is None or p1 & 0x80):
            return SW_NOT_FOUND if not p1 & 0x80 else SW_WRONG_OFFSET  # (short file ids: not used)
        offset = (p1 << 8) | p2
        if ins == 0xB0:  # READ BINARY
            if self._selected == "ndef":
                if self._snapshot is None:
                    self._snapshot = self._mirrored_file()
                content = self._snapshot
            else:
                content = CC_424
            le = (c[4] if len(c) == 5 else 256) or 256
            if offset > len(content):
                return SW_WRONG_OFFSET
            return content[offset : offset + le] + SW_OK
        if ins == 0xD6:  # UPDATE BINARY: while the file is open (factory); then only with key 0
            if self._selected != "ndef" or not self._write_free:
                return SW_SECURITY
            if offset + len(body) > len(self._ndef):
                return SW_WRONG_OFFSET
            self._ndef[offset : offset + len(body)] = body
            self._snapshot = None
            return SW_OK
        return SW_NO_INS

    def _native(self, ins: int, body: bytes) -> bytes:
        from controller.registry import ntag424 as ev2

        if ins == 0x71:  # AuthenticateEV2First, part 1
            if len(body) < 2 or body[0] > 4:
                return b"\x91\x40"
            rnd_b = secrets.token_bytes(16)
            self._pending, self._session = (body[0], rnd_b), None
            return ev2.cbc_encrypt(self._keys[body[0]], bytes(16), rnd_b) + b"\x91\xaf"
        if ins == 0xAF and self._pending is not None:  # part 2
            key_no, rnd_b = self._pending
            self._pending = None
            key = self._keys[key_no]
            plain = ev2.cbc_decrypt(key, bytes(16), body[:32]) if len(body) == 32 else b""
            if plain[16:] != ev2.rotate_left(rnd_b):
                return b"\x91\xae"  # the reader does not hold this key
            rnd_a, ti = plain[:16], secrets.token_bytes(4)
            enc, mac = ev2.session_keys(key, rnd_a, rnd_b)
            self._session = ev2.Session(enc, mac, ti, 0, key_no)
            return ev2.cbc_encrypt(key, bytes(16), ti + ev2.rotate_left(rnd_a) + bytes(12)) + b"\x91\x00"
        if ins in (0xC4, 0x5F):  # ChangeKey, ChangeFileSettings: CommMode.FULL, key 0 only
            s = self._session
            if s is None:
                return b"\x91\xae"
            if s.key_no != 0:
                return b"\x91\x9d"
            header, enc, mac = body[:1], body[1:-8], body[-8:]
            if len(body) < 9 or len(enc) % 16 or s.command_mac(ins, header, enc) != mac:
                self._session = None
                return b"\x91\x1e"
            try:
                data = ev2.unpad(ev2.cbc_decrypt(s.enc_key, s.iv(b"\xa5\x5a", s.counter), enc))
            except ev2.Ntag424Error:
                self._session = None
                return b"\x91\x1e"
            s.counter += 1
            if ins == 0xC4:
                key_no = header[0] & 0x0F
                if key_no > 4 or len(data) not in (17, 21):
                    return b"\x91\x7e"
                if key_no == s.key_no:  # the session's own key: set, and the session ends
                    self._keys[key_no] = data[:16]
                    self._session = None
                    return b"\x91\x00"
                new = bytes(a ^ b for a, b in zip(data[:16], self._keys[key_no], strict=True))
                if len(data) != 21 or ev2.crc32_nk(new) != data[17:21]:
                    return b"\x91\x1e"
                self._keys[key_no] = new
            else:
                if header != b"\x02":
                    return b"\x91\x9e"
                try:
                    self._sdm = ev2.SdmSettings.decode(data)
                except ev2.Ntag424Error:
                    return b"\x91\x9e"
                self._write_free = False  # AccessRights Write = key 0
            return s.response_mac(0, b"") + b"\x91\x00"
        return b"\x91\x1c"  # a command this simulation does not model


class SimulatedReaderDevice(nfc.clf.device.Device):
    """An nfcpy device driver whose RF field is a `SimulatedReader`."""

    def __init__(self, reader: SimulatedReader):
        self._reader = reader
        self._path = f"sim:{reader.name}"
        self._vendor_name = "smart-table"
        self._device_name = "simulated reader"
        self._chipset_name = "NTAG21x field"

    def close(self) -> None:
        pass

    def mute(self) -> None:
        pass

    def sense_tta(self, target: nfc.clf.RemoteTarget) -> nfc.clf.RemoteTarget | None:
        if target.brty != "106A":
            raise nfc.clf.UnsupportedTargetError(f"unsupported bitrate {target.brty}")
        tag = self._reader.current()
        if tag is None or not tag.in_field:
            return None
        if target.sel_req and bytes(target.sel_req) != tag.uid:
            return None
        if isinstance(tag, SimulatedNtag424):  # SAK 0x20: ISO-DEP, a Type 4A tag
            return nfc.clf.RemoteTarget(
                "106A",
                sens_res=bytearray(b"\x44\x03"),
                sel_res=bytearray(b"\x20"),
                sdd_res=bytearray(tag.uid),
            )
        return nfc.clf.RemoteTarget(
            "106A", sens_res=bytearray(b"\x44\x00"), sel_res=bytearray(b"\x00"), sdd_res=bytearray(tag.uid)
        )

    def sense_ttb(self, target: nfc.clf.RemoteTarget) -> None:
        return None

    def sense_ttf(self, target: nfc.clf.RemoteTarget) -> None:
        return None

    def sense_dep(self, target: nfc.clf.RemoteTarget) -> None:
        raise nfc.clf.UnsupportedTargetError("the simulated reader has no peer-to-peer mode")

    def send_cmd_recv_rsp(self, target: nfc.clf.RemoteTarget, data: bytes, timeout: float) -> bytearray:
        tag = self._reader.current()
        if tag is None or tag.uid != bytes(target.sdd_res):
            raise nfc.clf.TimeoutError("no tag in the field")
        return bytearray(tag.command(bytes(data)))

    def get_max_send_data_size(self, target: nfc.clf.RemoteTarget) -> int:
        return 252

    def get_max_recv_data_size(self, target: nfc.clf.RemoteTarget) -> int:
        return 252


class SimulatedReader:
    """The RF field of a simulated reader: at most one card in it at a time."""

    _named: ClassVar[dict[str, SimulatedReader]] = {}
    _named_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, name: str = "sim", spool: str | os.PathLike[str] | None = None):
        self.name = name
        self.spool = Path(spool) if spool is not None else None
        self._lock = threading.Lock()
        self._tag: SimulatedNtag | SimulatedNtag424 | None = None
        self._leave_at: float | None = None

    @classmethod
    def named(cls, name: str) -> SimulatedReader:
        """The reader called `name` in this process ('sim:<name>'); a name with a '/' is a spool dir."""
        with cls._named_lock:
            if name not in cls._named:
                spool = name if "/" in name else None
                if spool is not None:
                    Path(spool).mkdir(parents=True, exist_ok=True)
                cls._named[name] = cls(name, spool)
            return cls._named[name]

    def present(self, tag: SimulatedNtag | SimulatedNtag424, dwell: float | None = None) -> None:
        """Put a card on the reader; with `dwell`, it is taken away again after that many seconds."""
        with self._lock:
            tag.in_field = True
            self._tag = tag
            self._leave_at = time.monotonic() + dwell if dwell is not None else None

    def remove(self) -> SimulatedNtag | SimulatedNtag424 | None:
        with self._lock:
            tag, self._tag = self._tag, None
            if tag is not None:
                tag.in_field = False
            return tag

    def current(self) -> SimulatedNtag | SimulatedNtag424 | None:
        with self._lock:
            if self._tag is not None and self._leave_at is not None and time.monotonic() >= self._leave_at:
                self._tag.in_field = False
                self._tag = None
            if self._tag is not None and not self._tag.in_field:
                self._tag = None  # torn away mid-write: gone until presented again
            if self.spool is not None:
                self._take_from_spool()  # a newer tap replaces the card on the reader
            return self._tag

    def _take_from_spool(self) -> None:
        try:
            names = sorted(p for p in self.spool.glob("tap-*.json"))  # type: ignore[union-attr]
        except OSError:
            return
        for path in names:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                path.unlink()
                tag = _tag_from_json(data["tag"])
                dwell = float(data.get("dwell", 1.0))
            except FileNotFoundError:
                continue  # another reader took it
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning("event=spool_tap_rejected file=%s error=%s", path.name, exc)
                path.unlink(missing_ok=True)
                continue
            tag.in_field = True
            self._tag = tag
            self._leave_at = time.monotonic() + dwell
            log.info("event=sim_tap reader=%s uid=%s", self.name, tag.uid.hex())
            return

    def frontend(self) -> nfc.ContactlessFrontend:
        """A real nfcpy ContactlessFrontend whose device is this simulated field."""
        clf = nfc.ContactlessFrontend()
        clf.device = SimulatedReaderDevice(self)
        return clf


def _tag_from_json(data: dict[str, Any]) -> SimulatedNtag | SimulatedNtag424:
    if data.get("model") == SimulatedNtag424.model_name:
        return SimulatedNtag424.from_json(data)
    return SimulatedNtag.from_json(data)


def spool_tap(
    spool: str | os.PathLike[str], tag: SimulatedNtag | SimulatedNtag424, dwell: float = 1.0
) -> Path:
    """Drop a card onto the reader watching `spool` (another process). Returns the file written."""
    directory = Path(spool)
    directory.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"tag": tag.to_json(), "dwell": dwell})
    fd, tmp = tempfile.mkstemp(prefix=".tap-", suffix=".tmp", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(body)
    final = directory / f"tap-{time.time_ns():020d}-{secrets.token_hex(3)}.json"
    os.replace(tmp, final)
    return final


# ---- Type 3 tag over nfcpy's UDP driver ----------------------------------------------------------

NDEF_READ_WRITE = 0x0009
NDEF_READ_ONLY = 0x000B


class Type3Emulator:
    """A Type 3 (FeliCa Lite-style NFC Forum) tag emulated over `udp:host:port` by nfcpy in card mode."""

    def __init__(
        self,
        message: bytes,
        *,
        idm: bytes | None = None,
        host: str = "localhost",
        port: int = 54321,
        blocks: int = 32,
    ):
        # IDm 02FE...: an NFC Forum Type 3 tag; 01FE would announce peer-to-peer (NFC-DEP) instead.
        self.idm = bytes(idm) if idm is not None else b"\x02\xfe" + secrets.token_bytes(6)
        if len(self.idm) != 8 or self.idm[:2] == b"\x01\xfe":
            raise ValueError("an emulated Type 3 tag IDm has 8 bytes and must not start 01FE (NFC-DEP)")
        self.host, self.port = host, port
        self.blocks = blocks
        self.data = bytearray(16 * (blocks + 1))
        self.load_message(message)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reads = 0

    @property
    def uid(self) -> bytes:
        return self.idm

    def load_message(self, message: bytes) -> None:
        if len(message) > 16 * self.blocks:
            raise ValueError(f"{len(message)}-byte message does not fit {self.blocks} blocks")
        self.data[16:] = bytes(16 * self.blocks)
        self.data[16 : 16 + len(message)] = message
        self._write_attributes(len(message), writing=False)

    def _write_attributes(self, length: int, writing: bool) -> None:
        attr = bytearray(16)
        attr[0] = 0x10  # mapping version 1.0
        attr[1] = 12  # Nbr: blocks per read
        attr[2] = 8  # Nbw: blocks per write
        attr[3:5] = self.blocks.to_bytes(2, "big")
        attr[9] = 0x0F if writing else 0x00
        attr[10] = 0x01  # read/write
        attr[11:14] = length.to_bytes(3, "big")
        attr[14:16] = sum(attr[0:14]).to_bytes(2, "big")
        self.data[0:16] = attr

    def stored_message(self) -> bytes:
        length = int.from_bytes(self.data[11:14], "big")
        return bytes(self.data[16 : 16 + length])

    def _read_block(self, block: int, rb: int, re: int) -> bytearray | None:
        if block > self.blocks:
            return None
        self.reads += 1
        return bytearray(self.data[16 * block : 16 * block + 16])

    def _write_block(self, block: int, data: bytearray, wb: int, we: int) -> bool:
        if block > self.blocks:
            return False
        self.data[16 * block : 16 * block + 16] = data
        return True

    def _on_startup(self, target: nfc.clf.LocalTarget) -> nfc.clf.LocalTarget:
        target.brty = "212F"
        target.sensf_res = bytearray(b"\x01" + self.idm + bytes.fromhex("FFFFFFFFFFFFFFFF") + b"\x12\xfc")
        return target

    def _on_connect(self, tag: Any) -> bool:
        tag.add_service(NDEF_READ_WRITE, self._read_block, self._write_block)
        tag.add_service(NDEF_READ_ONLY, self._read_block, lambda *a: False)
        return True

    def serve(self, duration: float | None = None) -> None:
        """Answer readers on the UDP port until `stop()` (or `duration` seconds)."""
        deadline = time.monotonic() + duration if duration is not None else None

        def terminate() -> bool:
            return self._stop.is_set() or (deadline is not None and time.monotonic() >= deadline)

        clf = nfc.ContactlessFrontend(f"udp:{self.host}:{self.port}")
        try:
            while not terminate():
                clf.connect(
                    card={
                        "on-startup": self._on_startup,
                        "on-connect": self._on_connect,
                        "on-release": lambda tag: True,
                        "timeout": random.uniform(0.5, 1.5),  # no fixed rhythm: see _poll_pause
                    },
                    terminate=terminate,
                )
        finally:
            clf.close()

    def start(self) -> Type3Emulator:
        self._thread = threading.Thread(target=self.serve, name=f"type3-emulator-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)


def player_card(
    registry: Any, keys: Any, player_id: str, *, uid: bytes | None = None, model: str = "ntag215"
) -> SimulatedNtag:
    """The simulated card the desk issued to `player_id` (its registered UID, signed record).

    With `uid`, the same record on another tag: a copied card, which every table must refuse. For an
    NTAG 424 DNA (`model="ntag424"`) the card's read counter goes on from the registry's last accepted
    one, and a copy (`uid`, which may be the card's own) holds the last read the registry accepted.
    """
    from controller.registry.card import encode_card
    from controller.registry.errors import RegistryError

    registry.member(player_id)  # unknown player: NotFound with a clear message
    cards = registry.cards_of(player_id)
    card = registry.active_card(player_id) or (cards[-1] if cards else None)  # a revoked card still taps
    if card is None:
        raise RegistryError(
            f"{player_id} has no active card; write one with `smart-table register write-card {player_id}`",
            "no_card",
        )
    if len(card.uid) != 7:
        raise RegistryError(f"{player_id}'s card {card.uid.hex()} is not an NTAG (7-byte UID)", "not_ntag")
    if model == SimulatedNtag424.model_name:
        # the card in the player's pocket: its counter is at least what the registry last accepted
        last = registry.sun_counter(card.uid) or 0
        if uid is None:
            return SimulatedNtag424.personalised(card.uid, player_id, keys, counter=last)
        # a copy made from the last read the registry accepted (a read taken at a table)
        seen = SimulatedNtag424.personalised(card.uid, player_id, keys, counter=max(last - 1, 0))
        return recorded_copy(seen, uid)
    tag = SimulatedNtag(model, uid if uid is not None else card.uid)
    tag.load_message(encode_card(card.uid, player_id, keys))
    return tag


def recorded_copy(card: SimulatedNtag424, uid: bytes | None = None, model: str = "ntag215") -> SimulatedNtag:
    """What a forger makes of an NTAG 424 DNA: one read of it (a phone held to the card) written onto
    a "magic" NTAG21x whose UID is set to the card's, or to `uid`. Every read of the copy replays that
    one SUN message; only the real chip can make the next one."""
    return SimulatedNtag.with_message(card.stored_message(), model, card.uid if uid is None else uid)
