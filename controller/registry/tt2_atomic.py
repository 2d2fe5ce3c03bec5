"""All-or-nothing NDEF writes on Type 2 tags (NTAG215/216): the card is fully old or fully new.

nfcpy writes an NDEF message in place: length 0, data, length. A card pulled away in between holds
nothing valid. Here the new message is written *beside* the old one, read back, and then made
current by one 4-byte page write at page 4 (the start of the data area), which either happens or
does not:

* page 4 = `00 00 00 00` (NULL TLVs): readers go on to the NDEF TLV at byte 20, or
* page 4 = `FD n ..` / `FD FF hi lo` (a proprietary TLV readers skip): the NDEF TLV at byte 18+n / 20+n.

Before that page write, every reader (nfcpy, phones: these are plain NFC Forum TLVs) still finds
the old message; after it, the new one. Needs room for both messages: an NTAG213 (144 bytes) has
room for one card only, so `write_atomically` returns False and the caller falls back to nfcpy's
in-place write (and the put-back-and-rewrite procedure).
"""

from __future__ import annotations

from typing import Any

DATA_START = 16  # byte offset of page 4
PAGE = 4


class LayoutError(Exception):
    """The tag memory holds something this writer does not rearrange (lock/memory control TLVs)."""


def _tlv_bytes(message: bytes) -> bytes:
    n = len(message)
    head = bytes([0x03, n]) if n < 255 else b"\x03\xff" + n.to_bytes(2, "big")
    return head + message + b"\xfe"


def find_ndef(data: bytes) -> tuple[int, int] | None:
    """(start, end) byte offsets (tag memory offsets) of the first NDEF TLV in the data area `data`
    (which starts at byte 16), or None when there is none."""
    i = 0
    while i < len(data):
        t = data[i]
        if t == 0x00:
            i += 1
            continue
        if t == 0xFE:
            return None
        if i + 1 >= len(data):
            return None
        length, head = data[i + 1], 2
        if length == 0xFF:
            if i + 3 >= len(data):
                return None
            length, head = int.from_bytes(data[i + 2 : i + 4], "big"), 4
        if t in (0x01, 0x02):
            raise LayoutError("lock or memory control TLV present")
        if t == 0x03:
            return DATA_START + i, DATA_START + i + head + length
        i += head + length
    return None


def commit_header(target: int) -> bytes:
    """The page-4 bytes that make readers find the NDEF TLV at tag offset `target` (>= 20)."""
    if target == DATA_START + PAGE:
        return b"\x00\x00\x00\x00"
    skip = target - (DATA_START + 2)
    if skip <= 254:
        return bytes([0xFD, skip, 0x00, 0x00])
    skip = target - (DATA_START + 4)
    return b"\xfd\xff" + skip.to_bytes(2, "big")


def plan(data: bytes, message: bytes) -> int | None:
    """Where to put the new NDEF TLV (page-aligned offset >= 20) without touching the old message."""
    new = _tlv_bytes(message)
    old = find_ndef(data)
    end_of_area = DATA_START + len(data)
    q = DATA_START + PAGE
    while q + len(new) <= end_of_area:
        if old is None or q + len(new) <= old[0] or q >= old[1]:
            return q
        q += PAGE
    return None


def write_atomically(tag: Any, message: bytes) -> bool:
    """Write `message` as the tag's NDEF message, all or nothing. False: not possible on this tag
    (not a Type 2 tag, unformatted, read-only, no room for two messages, control TLVs)."""
    import nfc.tag.tt2

    if not isinstance(tag, nfc.tag.tt2.Type2Tag):
        return False
    cc = bytes(tag.read(3)[:4])
    if cc[0] != 0xE1 or cc[3] & 0x0F:
        return False
    size = cc[2] * 8
    data = bytearray()
    page = DATA_START // PAGE
    while len(data) < size:
        data += tag.read(page)
        page += 4
    data = bytes(data[:size])
    try:
        target = plan(data, message)
    except LayoutError:
        return False
    if target is None:
        return False
    new = _tlv_bytes(message)
    new += bytes(-len(new) % PAGE)
    first = target // PAGE
    for i in range(0, len(new), PAGE):
        tag.write(first + i // PAGE, new[i : i + PAGE])
    readback = bytearray()
    page = first
    while len(readback) < len(new):
        readback += tag.read(page)
        page += 4
    if bytes(readback[: len(new)]) != new:
        raise nfc.tag.tt2.Type2TagCommandError(nfc.tag.tt2.INVALID_RESPONSE_ERROR)
    tag.write(DATA_START // PAGE, commit_header(target))  # the single page write that switches
    return True
