"""Simulated NFC: NTAG21x cards in a simulated reader's field, and a Type 3 tag over nfcpy's UDP driver.

Two simulations, both read through nfcpy's own code (tag activation, NDEF TLV parsing, writes):

* `SimulatedNtag` + `SimulatedReader`: an NTAG213/215/216 memory model answering the Type 2 Tag
  commands (READ, WRITE, GET_VERSION, READ_SIG, FAST_READ) behind an `nfc.clf.device.Device`
  plugged into a real `nfc.ContactlessFrontend` - the approach of nfcpy's own test suite (a
  contactless frontend with a patched device), one level lower so `clf.sense()` and
  `nfc.tag.activate()` run unmodified. A card can be taken out of the field after N page writes
  (a tear) to test interrupted writes.
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


class SimulatedNtag:
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
        self.latency = latency
        self.memory = bytearray(4 * self.model.pages)
        u = self.uid
        self.memory[0:4] = bytes([u[0], u[1], u[2], 0x88 ^ u[0] ^ u[1] ^ u[2]])
        self.memory[4:8] = u[3:7]
        self.memory[8:12] = bytes([u[3] ^ u[4] ^ u[5] ^ u[6], 0x48, 0x00, 0x00])
        self.memory[12:16] = bytes([0xE1, 0x10, self.model.cc_size, 0x00])
        self.memory[16:20] = bytes([0x03, 0x00, 0xFE, 0x00])  # empty NDEF message TLV, terminator
        self.tear_after_writes: int | None = None
        self.in_field = True
        self.writes = 0
        self.commands = 0

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
    def command(self, data: bytes) -> bytes:
        """Answer one Type 2 Tag command; raises nfc.clf.TimeoutError when the tag stays silent."""
        if not self.in_field:
            raise nfc.clf.TimeoutError("tag left the field")
        self.commands += 1
        if self.latency:
            time.sleep(self.latency)
        if not data:
            raise nfc.clf.TimeoutError("empty frame")
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
        self._tag: SimulatedNtag | None = None
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

    def present(self, tag: SimulatedNtag, dwell: float | None = None) -> None:
        """Put a card on the reader; with `dwell`, it is taken away again after that many seconds."""
        with self._lock:
            tag.in_field = True
            self._tag = tag
            self._leave_at = time.monotonic() + dwell if dwell is not None else None

    def remove(self) -> SimulatedNtag | None:
        with self._lock:
            tag, self._tag = self._tag, None
            if tag is not None:
                tag.in_field = False
            return tag

    def current(self) -> SimulatedNtag | None:
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
                tag = SimulatedNtag.from_json(data["tag"])
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


def spool_tap(spool: str | os.PathLike[str], tag: SimulatedNtag, dwell: float = 1.0) -> Path:
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

    With `uid`, the same record on another tag: a copied card, which every table must refuse.
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
    tag = SimulatedNtag(model, uid if uid is not None else card.uid)
    tag.load_message(encode_card(card.uid, player_id, keys))
    return tag
