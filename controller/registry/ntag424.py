"""Personalising an NTAG 424 DNA at the desk: EV2 authentication and secure messaging (NXP AN12196).

A blank NTAG 424 DNA leaves the factory with five all-zero AES keys and an NDEF file anyone may
write. The desk turns it into a venue card in one session (`personalise`):

1. write the record (`card.sun_card_layout`) with ISO UPDATE BINARY while the file is still open;
2. AuthenticateEV2First with the factory application master key (key 0);
3. ChangeKey 1 (SDMMetaReadKey) and 2 (SDMFileReadKey) to the venue's keys for this card;
4. ChangeFileSettings on the NDEF file: SDM on, UID and read counter mirrored encrypted with key 1,
   the SDMMAC with key 2 at the layout's offsets; read free, write and change with key 0 only;
5. ChangeKey 0 to the venue's desk key for this card, which ends the session: from then on only
   the venue can change the card, and nobody can read any key back.

Commands 3-5 travel in CommMode.FULL (AES-CBC with a per-command IV, and a truncated CMAC over the
command counter and transaction identifier), so a reader in between learns no key. The functions
here are pure byte arithmetic; `personalise` talks to the tag through one `transceive(apdu) ->
response` callable (nfcpy's `Type4Tag.transceive`). tests/registry/test_ntag424.py checks them
against AN12196's worked examples (sections 5.4, 6.6, 6.10 and 6.12).
"""

from __future__ import annotations

import secrets
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from controller.registry.sun import aes_cmac, mac_truncated

NDEF_FILE = 0x02
FACTORY_KEY = bytes(16)
OK = b"\x91\x00"
MORE = b"\x91\xaf"
STATUS = {
    0x1E: "integrity error (MAC or padding)",
    0x40: "no such key",
    0x7E: "length error",
    0x9D: "permission denied",
    0x9E: "parameter error",
    0xAE: "authentication error (wrong key)",
    0xEE: "memory error",
}


class Ntag424Error(Exception):
    """The tag refused a command or answered something that does not verify."""


def _ecb(key: bytes, block: bytes) -> bytes:
    enc = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    return enc.update(block) + enc.finalize()


def cbc_encrypt(key: bytes, iv: bytes, data: bytes) -> bytes:
    enc = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return enc.update(data) + enc.finalize()


def cbc_decrypt(key: bytes, iv: bytes, data: bytes) -> bytes:
    dec = Cipher(algorithms.AES(key), modes.CBC(iv)).decryptor()
    return dec.update(data) + dec.finalize()


def pad(data: bytes) -> bytes:
    """ISO/IEC 9797-1 method 2: 80 then zeros to a whole block (always at least one byte)."""
    data = bytes(data) + b"\x80"
    return data + bytes(-len(data) % 16)


def unpad(data: bytes) -> bytes:
    end = data.rstrip(b"\x00")
    if not end.endswith(b"\x80"):
        raise Ntag424Error("bad padding in decrypted data")
    return end[:-1]


def rotate_left(data: bytes) -> bytes:
    return data[1:] + data[:1]


def crc32_nk(data: bytes) -> bytes:
    """The CRC32 of ChangeKey (JAMCRC: ISO 3309 CRC32 without the final inversion), LSB first."""
    return ((zlib.crc32(data) ^ 0xFFFFFFFF) & 0xFFFFFFFF).to_bytes(4, "little")


def session_keys(key: bytes, rnd_a: bytes, rnd_b: bytes) -> tuple[bytes, bytes]:
    """(SesAuthENCKey, SesAuthMACKey) from the two random numbers of AuthenticateEV2First."""
    mix = (
        rnd_a[0:2]
        + bytes(a ^ b for a, b in zip(rnd_a[2:8], rnd_b[0:6], strict=True))
        + rnd_b[6:16]
        + rnd_a[8:16]
    )
    return aes_cmac(key, b"\xa5\x5a\x00\x01\x00\x80" + mix), aes_cmac(key, b"\x5a\xa5\x00\x01\x00\x80" + mix)


@dataclass
class Session:
    """An authenticated EV2 session: keys, transaction identifier and command counter."""

    enc_key: bytes
    mac_key: bytes
    ti: bytes
    counter: int = 0
    key_no: int = 0

    def iv(self, label: bytes, counter: int) -> bytes:
        return _ecb(self.enc_key, label + self.ti + counter.to_bytes(2, "little") + bytes(8))

    def command_mac(self, cmd: int, header: bytes, data: bytes) -> bytes:
        return mac_truncated(
            self.mac_key, bytes([cmd]) + self.counter.to_bytes(2, "little") + self.ti + header + data
        )

    def full_command(self, cmd: int, header: bytes, data: bytes) -> bytes:
        """The APDU of `cmd` in CommMode.FULL: header plain, data encrypted, MACt over both."""
        enc = cbc_encrypt(self.enc_key, self.iv(b"\xa5\x5a", self.counter), pad(data)) if data else b""
        body = header + enc + self.command_mac(cmd, header, enc)
        return bytes([0x90, cmd, 0x00, 0x00, len(body)]) + body + b"\x00"

    def response_mac(self, code: int, data: bytes) -> bytes:
        """MACt of a response (after the command: the counter has gone up)."""
        return mac_truncated(
            self.mac_key, bytes([code]) + self.counter.to_bytes(2, "little") + self.ti + data
        )

    def check_response(self, response: bytes) -> bytes:
        """Verify a CommMode.MAC/FULL response; returns its (still encrypted) data."""
        if response[-2:] != OK:
            raise Ntag424Error(_status(response))
        self.counter += 1
        data, mac = response[:-10], response[-10:-2]
        if mac_truncated(self.mac_key, b"\x00" + self.counter.to_bytes(2, "little") + self.ti + data) != mac:
            raise Ntag424Error("response MAC does not verify")
        return data

    def decrypt_response(self, data: bytes) -> bytes:
        return unpad(cbc_decrypt(self.enc_key, self.iv(b"\x5a\xa5", self.counter), data))


def _status(response: bytes) -> str:
    if len(response) >= 2 and response[-2] == 0x91:
        return f"tag answered 91{response[-1]:02X}: {STATUS.get(response[-1], 'refused')}"
    return f"tag answered {response[-2:].hex().upper() or 'nothing'}"


Transceive = Callable[[bytes], bytes]


def authenticate(transceive: Transceive, key_no: int, key: bytes, rnd_a: bytes | None = None) -> Session:
    """AuthenticateEV2First with key `key_no`; Ntag424Error if the tag does not hold `key`."""
    r = transceive(bytes([0x90, 0x71, 0x00, 0x00, 0x02, key_no, 0x00, 0x00]))
    if r[-2:] != MORE or len(r) != 18:
        raise Ntag424Error(f"AuthenticateEV2First: {_status(r)}")
    rnd_b = cbc_decrypt(key, bytes(16), r[:16])
    rnd_a = rnd_a if rnd_a is not None else secrets.token_bytes(16)
    part2 = cbc_encrypt(key, bytes(16), rnd_a + rotate_left(rnd_b))
    r = transceive(b"\x90\xaf\x00\x00\x20" + part2 + b"\x00")
    if r[-2:] != OK or len(r) != 34:
        raise Ntag424Error(f"AuthenticateEV2First: {_status(r)} (wrong key?)")
    plain = cbc_decrypt(key, bytes(16), r[:32])
    if plain[4:20] != rotate_left(rnd_a):
        raise Ntag424Error("AuthenticateEV2First: the tag does not know the key (RndA' differs)")
    enc, mac = session_keys(key, rnd_a, rnd_b)
    return Session(enc, mac, plain[0:4], 0, key_no)


def change_key_data(key_no: int, session_key_no: int, new: bytes, old: bytes, version: int = 1) -> bytes:
    """ChangeKey's plain data: the new key itself for the authenticated key, else XORed with the old
    one and followed by the new key's CRC32."""
    if key_no == session_key_no:
        return bytes(new) + bytes([version])
    return bytes(a ^ b for a, b in zip(new, old, strict=True)) + bytes([version]) + crc32_nk(new)


@dataclass(frozen=True)
class SdmSettings:
    """ChangeFileSettings data for the NDEF file with SUN on (datasheet 10.7.1, AN12196 4.x)."""

    picc_offset: int
    mac_input_offset: int
    mac_offset: int
    meta_key_no: int = 1
    file_key_no: int = 2

    def encode(self) -> bytes:
        def off(n: int) -> bytes:
            return n.to_bytes(3, "little")

        return (
            b"\x40"  # FileOption: SDM on, CommMode plain
            + b"\x00\xe0"  # AccessRights: RW 0, Change 0 | Read E (free), Write 0
            + b"\xc1"  # SDMOptions: UID mirror, SDMReadCtr mirror, ASCII
            + b"\xff"  # RFU F | SDMCtrRet F (no access)
            + bytes([self.meta_key_no << 4 | self.file_key_no])  # SDMMetaRead | SDMFileRead
            + off(self.picc_offset)
            + off(self.mac_input_offset)
            + off(self.mac_offset)
        )

    @classmethod
    def decode(cls, data: bytes) -> SdmSettings:
        if len(data) != 15 or data[:6] != b"\x40\x00\xe0\xc1\xff" + data[5:6]:
            raise Ntag424Error("file settings this tag model does not take")

        def off(i: int) -> int:
            return int.from_bytes(data[i : i + 3], "little")

        return cls(off(6), off(9), off(12), data[5] >> 4, data[5] & 15)


@dataclass(frozen=True)
class CardKeys:
    """The three keys the desk puts on one card (the other two stay factory zero, unused)."""

    master: bytes  # key 0: changes keys and settings
    meta: bytes  # key 1: SDMMetaReadKey (the venue's)
    file: bytes  # key 2: SDMFileReadKey (this card's)
    extra: dict[int, bytes] = field(default_factory=dict)


def personalise(
    transceive: Transceive, layout: object, keys: CardKeys, *, factory_key: bytes = FACTORY_KEY
) -> None:
    """Make a blank NTAG 424 DNA a venue card (steps in the module docstring). Raises Ntag424Error
    naming the step the tag refused. A personalisation torn at any command (the card pulled away)
    is finished by running this again: every step finds out whether it was done already."""
    file = bytes(layout.file)  # type: ignore[attr-defined]
    _iso(transceive, b"\x00\xa4\x04\x0c\x07\xd2\x76\x00\x00\x85\x01\x01", "select the NDEF application")
    _iso(transceive, b"\x00\xa4\x00\x0c\x02\xe1\x04", "select the NDEF file")
    for offset in range(0, len(file), 128):
        chunk = file[offset : offset + 128]
        r = transceive(b"\x00\xd6" + offset.to_bytes(2, "big") + bytes([len(chunk)]) + chunk)
        if r[-2:] == b"\x69\x82":  # the file is locked: step 4 was done in an earlier, torn run
            break
        if r[-2:] != b"\x90\x00":
            raise Ntag424Error(f"write the record: tag answered {r[-2:].hex().upper()}")
    try:
        key0 = factory_key
        session = authenticate(transceive, 0, key0)
    except Ntag424Error:
        key0 = keys.master  # step 5 was done: the card is ours already (or another venue's: refused)
        try:
            session = authenticate(transceive, 0, key0)
        except Ntag424Error:
            raise Ntag424Error("the tag's master key is neither the factory key nor this card's") from None
    for key_no, new in ((1, keys.meta), (2, keys.file)):
        try:  # a key still at its factory value, or (torn run) already the one we want
            olds = (new,) if key0 is keys.master else (FACTORY_KEY, new)
            session = _change_key(transceive, session, key_no, new, olds, key0)
        except Ntag424Error as exc:
            raise Ntag424Error(f"ChangeKey {key_no}: {exc}") from None
    settings = SdmSettings(layout.picc_offset, layout.mac_input_offset, layout.mac_offset)  # type: ignore[attr-defined]
    session.check_response(transceive(session.full_command(0x5F, bytes([NDEF_FILE]), settings.encode())))
    if key0 is keys.master:
        return
    r = transceive(session.full_command(0xC4, b"\x00", change_key_data(0, 0, keys.master, factory_key)))
    if r[-2:] != OK:  # changing the session's own key ends the session: no MAC comes back
        raise Ntag424Error(f"ChangeKey 0: {_status(r)}")


def _change_key(
    transceive: Transceive, session: Session, key_no: int, new: bytes, olds: tuple[bytes, ...], key0: bytes
) -> Session:
    """ChangeKey with the first of `olds` the tag accepts (a wrong old key fails its CRC check, 91 1E,
    and ends the session: authenticate again and try the next)."""
    for i, old in enumerate(olds):
        r = transceive(session.full_command(0xC4, bytes([key_no]), change_key_data(key_no, 0, new, old)))
        if r[-2:] == b"\x91\x1e" and i + 1 < len(olds):
            session = authenticate(transceive, 0, key0)
            continue
        session.check_response(r)
        return session
    raise Ntag424Error("no old key accepted")  # (not reached: the last try raises or returns)


def _iso(transceive: Transceive, apdu: bytes, step: str) -> None:
    r = transceive(apdu)
    if r[-2:] != b"\x90\x00":
        raise Ntag424Error(f"{step}: tag answered {r[-2:].hex().upper()}")
