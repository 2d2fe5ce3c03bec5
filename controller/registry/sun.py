"""NTAG 424 DNA Secure Unique NFC (SUN) messages: the tag signs every read (pure).

An NTAG 424 DNA with Secure Dynamic Messaging (SDM) enabled rewrites part of its NDEF file each
time it is read, with a key that never leaves the chip (NXP AN12196 "NTAG 424 DNA and NTAG 424 DNA
TagTamper features and hints", sections 3 and 4; datasheet NT4H2421Gx section 9.3):

* PICCData = AES-128-CBC(SDMMetaReadKey, IV 0) of PICCDataTag (0xC7: UID and counter mirrored,
  a 7-byte UID) || UID || SDMReadCtr (3 bytes, LSB first) || padding: 16 bytes, mirrored as 32
  upper-case hex digits;
* SDMMAC = MACt(KSesSDMFileReadMAC, the file bytes from SDMMACInputOffset up to the MAC), where
  KSesSDMFileReadMAC = CMAC(SDMFileReadKey, SV2), SV2 = 3C C3 00 01 00 80 || UID || SDMReadCtr,
  and MACt keeps the odd-numbered bytes of the 16-byte CMAC (8 bytes, mirrored as 16 hex digits).

The read counter goes up by one with every read, and only the tag can make a MAC for a new value:
a copied or recorded read repeats an old counter, which the registry refuses.

Keys per venue: both keys come from the venue key file's secret for the card's key id, and the
file key is diversified per card with the card's UID (as NXP AN10922 does), so one card's key,
extracted at great cost, opens no other card. The meta key is shared by the venue's cards: the
UID that selects the file key is inside the encrypted PICCData.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.cmac import CMAC

PICC_DATA_TAG = 0xC7  # UID mirrored, SDMReadCtr mirrored, UID length 7
SV2_PREFIX = bytes.fromhex("3CC300010080")
COUNTER_LIMIT = 0xFFFFFF  # a 3-byte counter; at the limit the tag stops answering SDM reads


class SunError(ValueError):
    """A SUN message that does not verify: `reason` says why in one word."""

    def __init__(self, message: str, reason: str):
        self.reason = reason
        super().__init__(message)


def aes_cmac(key: bytes, data: bytes) -> bytes:
    mac = CMAC(algorithms.AES(key))
    mac.update(data)
    return mac.finalize()


def mac_truncated(key: bytes, data: bytes) -> bytes:
    """MACt: the 8 odd-numbered bytes (1, 3, ..., 15) of the AES-CMAC."""
    return aes_cmac(key, data)[1::2]


def _aes_cbc(key: bytes, data: bytes, *, encrypt: bool) -> bytes:
    cipher = Cipher(algorithms.AES(key), modes.CBC(bytes(16)))
    op = cipher.encryptor() if encrypt else cipher.decryptor()
    return op.update(data) + op.finalize()


def session_mac_key(file_key: bytes, uid: bytes, counter: int) -> bytes:
    """KSesSDMFileReadMAC for this UID and read counter (SV2 is exactly one block for a 7-byte UID)."""
    sv2 = SV2_PREFIX + bytes(uid) + counter.to_bytes(3, "little")
    sv2 += bytes(-len(sv2) % 16)
    return aes_cmac(file_key, sv2)


def encrypt_picc_data(meta_key: bytes, uid: bytes, counter: int, padding: bytes = bytes(5)) -> bytes:
    """What the tag mirrors as PICCData (16 bytes; the tag pads with random bytes)."""
    plain = bytes([PICC_DATA_TAG]) + bytes(uid) + counter.to_bytes(3, "little") + bytes(padding)
    return _aes_cbc(meta_key, plain, encrypt=True)


def decrypt_picc_data(meta_key: bytes, picc_data: bytes) -> tuple[bytes, int]:
    """(UID, read counter) from PICCData; SunError when it is not ours."""
    if len(picc_data) != 16:
        raise SunError(f"PICCData is {len(picc_data)} bytes, not 16", "unreadable_card")
    plain = _aes_cbc(meta_key, bytes(picc_data), encrypt=False)
    if plain[0] != PICC_DATA_TAG:
        raise SunError("PICCData does not decrypt with this venue's key", "forged_card")
    return plain[1:8], int.from_bytes(plain[8:11], "little")


def sdm_mac(file_key: bytes, uid: bytes, counter: int, mac_input: bytes) -> bytes:
    """SDMMAC over the file bytes between SDMMACInputOffset and SDMMACOffset."""
    return mac_truncated(session_mac_key(file_key, uid, counter), mac_input)


@dataclass(frozen=True)
class SunKeys:
    """A venue's NTAG 424 DNA keys for one key id: the shared meta key, and the master from which
    each card's file key is diversified."""

    meta_key: bytes
    file_master: bytes

    @classmethod
    def from_secret(cls, secret: bytes, venue: str, key_id: str) -> SunKeys:
        """Both keys from the venue key file's secret (HMAC-SHA256 with a label each: independent keys)."""

        def derive(label: str) -> bytes:
            info = b"\0".join((b"smarttable-ntag424-v1", label.encode(), venue.encode(), key_id.encode()))
            return hmac.new(secret, info, hashlib.sha256).digest()[:16]

        return cls(meta_key=derive("sdm-meta-read"), file_master=derive("sdm-file-read"))

    def file_key(self, uid: bytes) -> bytes:
        """This card's SDMFileReadKey: AES-CMAC diversification of the master with the UID (AN10922)."""
        return aes_cmac(self.file_master, b"\x01" + bytes(uid) + b"smarttable")


@dataclass(frozen=True)
class SunRead:
    uid: bytes
    counter: int


def verify_sun(keys: SunKeys, picc_data: bytes, mac: bytes, mac_input: bytes) -> SunRead:
    """The tag's UID and read counter from a genuine SUN message; SunError otherwise."""
    uid, counter = decrypt_picc_data(keys.meta_key, picc_data)
    expected = sdm_mac(keys.file_key(uid), uid, counter, mac_input)
    if not hmac.compare_digest(expected, bytes(mac)):
        raise SunError("SUN MAC does not match: not the tag this venue issued, or altered", "forged_card")
    return SunRead(uid=uid, counter=counter)
