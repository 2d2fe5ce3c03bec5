"""The player card: one NDEF record of our own MIME type, signed and bound to the tag's UID.

Payload (compact JSON, UTF-8, fits an NTAG213's 144-byte NDEF area)::

    {"v":1,"p":"P0001","n":"cool_mule","k":"k1","m":"<base64url HMAC-SHA256>"}

`m` = HMAC-SHA256(venue secret[k], "smarttable-card-v1" 0 uid 0 player 0 venue 0 key id).
Because the tag UID is inside the MAC, a record copied byte for byte to another tag does not verify.

An NTAG 424 DNA card (`v` 2) carries no MAC of ours: the tag writes a fresh SUN message into the
record at every read (controller.registry.sun), with a key that never leaves the chip::

    {"v":2,"p":"P0001","n":"cool_mule","k":"k1","e":"<PICCData, 32 hex>","c":"<SDMMAC, 16 hex>"}

`e` holds the UID and the read counter, encrypted; `c` is the tag's MAC over the record from its
first byte up to `c`'s value (so the player, venue and key id are signed by the tag too). A copy
replays an old counter, which `identify()` refuses. This module is pure: bytes in, a decoded
record or a `CardError` out.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from dataclasses import dataclass

import ndef

from controller.registry.errors import CardError
from controller.registry.keys import VenueKeys
from controller.registry.ntag424 import CardKeys
from controller.registry.sun import SunError, SunKeys, verify_sun

MIME_TYPE = "application/vnd.smarttable.player+json"
FORMAT_VERSION = 1
SUN_FORMAT_VERSION = 2  # NTAG 424 DNA with SUN messages
MAX_MESSAGE_BYTES = 512  # far above a real card (~120 bytes); anything bigger is refused unread
PLAYER_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
VENUE_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
KEY_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,16}$")
_DOMAIN = b"smarttable-card-v1"
_FIELDS = ("v", "p", "n", "k", "m")
_SUN_FIELDS = ("v", "p", "n", "k", "e", "c")
_SUN_TAIL = re.compile(rb'(.*,"c":")([0-9A-F]{16})"\}', re.S)  # `c` comes last: the MAC covers all before it


@dataclass(frozen=True)
class CardRecord:
    """What a card says. Says nothing about whether it is genuine: see `CardVerifier`."""

    player_id: str
    venue: str
    key_id: str
    mac: bytes  # v1: our HMAC; v2: the tag's SDMMAC
    picc_data: bytes | None = None  # v2 only: the tag's encrypted UID and read counter
    mac_input: bytes | None = None  # v2 only: the record bytes the tag's MAC covers


def compute_mac(secret: bytes, uid: bytes, player_id: str, venue: str, key_id: str) -> bytes:
    msg = b"\0".join((_DOMAIN, bytes(uid), player_id.encode(), venue.encode(), key_id.encode()))
    return hmac.new(secret, msg, hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def check_player_id(player_id: str) -> str:
    if not isinstance(player_id, str) or not PLAYER_ID_RE.match(player_id):
        raise ValueError(
            f"player id {player_id!r}: use 1-32 letters, digits, '-' or '_' (starting alphanumeric)"
        )
    return player_id


def build_payload(uid: bytes, player_id: str, keys: VenueKeys) -> bytes:
    check_player_id(player_id)
    key_id, secret = keys.signing_key()
    mac = compute_mac(secret.reveal(), uid, player_id, keys.venue, key_id)
    body = {"v": FORMAT_VERSION, "p": player_id, "n": keys.venue, "k": key_id, "m": _b64(mac)}
    return json.dumps(body, separators=(",", ":")).encode("utf-8")


def encode_card(uid: bytes, player_id: str, keys: VenueKeys) -> bytes:
    """The NDEF message (bytes) to write on the tag with this UID."""
    record = ndef.Record(MIME_TYPE, "", build_payload(uid, player_id, keys))
    return b"".join(ndef.message_encoder([record]))


def decode_card(message: bytes) -> CardRecord:
    """Parse an NDEF message strictly. Raises CardError(reason='unreadable_card'|'foreign_card')."""
    if not message:
        raise CardError("card is blank: no NDEF message on the tag", "blank_card")
    if len(message) > MAX_MESSAGE_BYTES:
        raise CardError(
            f"NDEF message is {len(message)} bytes, over the {MAX_MESSAGE_BYTES}-byte limit",
            "unreadable_card",
        )
    try:
        records = list(ndef.message_decoder(bytes(message), errors="strict"))
    except ndef.DecodeError as exc:
        raise CardError(f"NDEF message is truncated or malformed: {exc}", "unreadable_card") from None
    except Exception as exc:  # ndeflib raises assorted errors on hostile input
        raise CardError(
            f"NDEF message is malformed: {type(exc).__name__}: {exc}", "unreadable_card"
        ) from None
    if len(records) != 1:
        raise CardError(
            f"NDEF message has {len(records)} records, a player card has exactly 1", "foreign_card"
        )
    record = records[0]
    if record.type != MIME_TYPE:
        raise CardError(f"record type is {record.type!r}, not a player card ({MIME_TYPE})", "foreign_card")
    return decode_payload(record.data)


def decode_payload(payload: bytes) -> CardRecord:
    try:
        body = json.loads(bytes(payload).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CardError(f"card payload is not JSON: {exc}", "unreadable_card") from None
    if not isinstance(body, dict):
        raise CardError("card payload: expected a JSON object", "unreadable_card")
    version = body.get("v")
    sun = version == SUN_FORMAT_VERSION and not isinstance(version, bool)
    fields = _SUN_FIELDS if sun else _FIELDS
    missing = [f for f in fields if f not in body]
    if missing:
        raise CardError(f"card payload: missing field(s) {', '.join(missing)}", "unreadable_card")
    extra = sorted(set(body) - set(fields))
    if extra:
        raise CardError(f"card payload: unknown field(s) {', '.join(extra)[:200]}", "unreadable_card")
    if not sun and (body["v"] != FORMAT_VERSION or isinstance(body["v"], bool)):
        raise CardError(
            f"card payload: field v: unsupported version {str(body['v'])[:20]!r}", "unreadable_card"
        )
    for name, pattern in (("p", PLAYER_ID_RE), ("n", VENUE_RE), ("k", KEY_ID_RE)):
        if not isinstance(body[name], str) or not pattern.match(body[name]):
            raise CardError(
                f"card payload: field {name}: bad value {str(body[name])[:40]!r}", "unreadable_card"
            )
    if sun:
        return _sun_record(bytes(payload), body)
    try:
        mac = _unb64(body["m"]) if isinstance(body["m"], str) else b""
    except (ValueError, TypeError):
        mac = b""
    if len(mac) != 32:
        raise CardError("card payload: field m: not a base64url HMAC-SHA256", "unreadable_card")
    return CardRecord(player_id=body["p"], venue=body["n"], key_id=body["k"], mac=mac)


def _sun_record(payload: bytes, body: dict) -> CardRecord:
    e = body["e"]
    if not isinstance(e, str) or not re.fullmatch(r"[0-9A-F]{32}", e):
        raise CardError("card payload: field e: not a SUN PICCData mirror (32 hex digits)", "unreadable_card")
    tail = _SUN_TAIL.fullmatch(payload)
    if tail is None or tail.group(2).decode() != body["c"]:
        raise CardError(
            "card payload: field c: not a SUN MAC mirror (16 hex digits, last)", "unreadable_card"
        )
    return CardRecord(
        player_id=body["p"],
        venue=body["n"],
        key_id=body["k"],
        mac=bytes.fromhex(body["c"]),
        picc_data=bytes.fromhex(e),
        mac_input=tail.group(1),
    )


@dataclass(frozen=True)
class SdmLayout:
    """What the desk writes on an NTAG 424 DNA and the SDM settings that go with it (offsets are into
    the NDEF file, which starts with the 2-byte NLEN): the tag fills the mirrors at every read."""

    file: bytes  # NLEN || NDEF message, mirrors zeroed
    picc_offset: int  # PICCDataOffset: where the 32 hex digits of PICCData go
    mac_input_offset: int  # SDMMACInputOffset: the tag's MAC covers from here ...
    mac_offset: int  # SDMMACOffset: ... to here, where its 16 hex digits go


def sun_card_layout(player_id: str, keys: VenueKeys) -> SdmLayout:
    """The record of an NTAG 424 DNA card for `player_id`, signed by the venue's current key id."""
    check_player_id(player_id)
    key_id, _ = keys.signing_key()
    payload = (
        f'{{"v":{SUN_FORMAT_VERSION},"p":"{player_id}","n":"{keys.venue}","k":"{key_id}",'
        f'"e":"{"0" * 32}","c":"{"0" * 16}"}}'
    ).encode("ascii")
    message = b"".join(ndef.message_encoder([ndef.Record(MIME_TYPE, "", payload)]))
    file = len(message).to_bytes(2, "big") + message
    start = 2 + message.index(payload)
    return SdmLayout(
        file=file,
        picc_offset=start + payload.index(b'"e":"') + 5,
        mac_input_offset=start,
        mac_offset=start + len(payload) - 18,
    )


def sun_tag_keys(uid: bytes, keys: VenueKeys, key_id: str | None = None) -> tuple[bytes, bytes]:
    """(SDMMetaReadKey, SDMFileReadKey) to put on the tag with this UID at personalisation."""
    key_id = key_id or keys.current
    sun = SunKeys.from_secret(keys.keys[key_id].reveal(), keys.venue, key_id)
    return sun.meta_key, sun.file_key(uid)


def ntag424_card_keys(uid: bytes, keys: VenueKeys) -> CardKeys:
    """All keys the desk writes on the NTAG 424 DNA with this UID: the SUN keys, and the card's
    application master key (diversified too: it changes the card, it verifies nothing)."""
    key_id = keys.current
    meta, file = sun_tag_keys(uid, keys, key_id)
    master = SunKeys.from_secret(keys.keys[key_id].reveal(), keys.venue, key_id + ":master").file_key(uid)
    return CardKeys(master=master, meta=meta, file=file)


@dataclass(frozen=True)
class VerifiedCard:
    uid: bytes
    player_id: str
    key_id: str
    counter: int | None = None  # NTAG 424 DNA: the tag's read counter (must go up; identify() checks)


class CardVerifier:
    """Checks a card's signature and UID binding with the venue keys (no registry look-up here)."""

    def __init__(self, keys: VenueKeys):
        self._keys = keys

    @property
    def venue(self) -> str:
        return self._keys.venue

    def verify(self, uid: bytes, message: bytes) -> VerifiedCard:
        """The genuine card's content, or CardError with the refusal reason."""
        record = decode_card(message)
        if record.venue != self._keys.venue:
            raise CardError(
                f"card was issued by venue {record.venue!r}, this is {self._keys.venue!r}", "wrong_venue"
            )
        status = self._keys.status(record.key_id)
        if status == "unknown":
            raise CardError(f"card is signed with unknown key id {record.key_id!r}", "unknown_key")
        if status == "retired":
            raise CardError(
                f"card is signed with retired key id {record.key_id!r}; re-issue the card", "retired_key"
            )
        if record.picc_data is not None:
            return self._verify_sun(uid, record)
        expected = compute_mac(
            self._keys.keys[record.key_id].reveal(), uid, record.player_id, record.venue, record.key_id
        )
        if not hmac.compare_digest(expected, record.mac):
            raise CardError(
                "card signature does not match this tag (forged, altered or copied from another tag)",
                "forged_card",
            )
        return VerifiedCard(uid=bytes(uid), player_id=record.player_id, key_id=record.key_id)

    def _verify_sun(self, uid: bytes, record: CardRecord) -> VerifiedCard:
        secret = self._keys.keys[record.key_id].reveal()
        sun = SunKeys.from_secret(secret, record.venue, record.key_id)
        assert record.picc_data is not None and record.mac_input is not None
        try:
            read = verify_sun(sun, record.picc_data, record.mac, record.mac_input)
        except SunError as exc:
            raise CardError(f"NTAG 424 DNA card: {exc}", exc.reason) from None
        if read.uid != bytes(uid):
            raise CardError(
                f"the SUN message was made by tag {read.uid.hex()}, read from tag {bytes(uid).hex()}: copied",
                "forged_card",
            )
        return VerifiedCard(
            uid=read.uid, player_id=record.player_id, key_id=record.key_id, counter=read.counter
        )
