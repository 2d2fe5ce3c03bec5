"""An image's width and height read from its header, before anything is decoded.

A PNG of 20,000 x 20,000 pixels is a 1.2 MB file that OpenCV decodes into 1.2 GB (2.4 GB with the
working copies): `check_image` refuses it from the header's few bytes, so a bad or hostile file
costs nothing. Formats: PNG, JPEG, BMP, GIF, WebP, TIFF, PNM (what OpenCV reads in practice).
"""

from __future__ import annotations

import struct
from pathlib import Path

# 50 megapixels: above any table camera (an 8K frame is 33 MP), far below what hurts the Pi.
MAX_PIXELS = 50_000_000
_HEAD = 64 * 1024  # bytes read: JPEG's size comes after its metadata segments


class ImageHeaderError(ValueError):
    """The file is not an image whose size its header states, or the size is out of budget."""


class ImageTooLargeError(ImageHeaderError):
    """The header states more pixels than the budget."""


def image_size(head: bytes) -> tuple[int, int]:
    """(width, height) from the first bytes of an image file; ImageHeaderError when not stated."""
    try:
        return _stated_size(head)
    except struct.error:  # a field cut off by the end of the file
        raise ImageHeaderError("image header truncated") from None


def _stated_size(head: bytes) -> tuple[int, int]:
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        if len(head) < 24 or head[12:16] != b"IHDR":
            raise ImageHeaderError("PNG without its IHDR header")
        return struct.unpack(">II", head[16:24])
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    if head.startswith(b"BM"):
        if len(head) < 26:
            raise ImageHeaderError("BMP header truncated")
        w, h = struct.unpack("<ii", head[18:26])
        return abs(w), abs(h)  # a negative height is a top-down bitmap
    if head[:6] in (b"GIF87a", b"GIF89a"):
        if len(head) < 10:
            raise ImageHeaderError("GIF header truncated")
        return struct.unpack("<HH", head[6:10])
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return _webp_size(head)
    if head[:4] in (b"II*\x00", b"MM\x00*"):
        return _tiff_size(head)
    if len(head) >= 2 and head[0:1] == b"P" and head[1:2] in b"123456":
        return _pnm_size(head)
    raise ImageHeaderError("not an image format this reads (PNG, JPEG, BMP, GIF, WebP, TIFF, PNM)")


def check_image(path: str | Path, max_pixels: int = MAX_PIXELS) -> tuple[int, int]:
    """The size of the image at `path` if within the pixel budget; else ImageHeaderError saying why."""
    with open(path, "rb") as f:
        head = f.read(_HEAD)
    w, h = image_size(head)
    if w <= 0 or h <= 0:
        raise ImageHeaderError(f"header states {w}x{h} pixels")
    if w * h > max_pixels:
        raise ImageTooLargeError(
            f"image of {w}x{h} pixels ({w * h / 1e6:.0f} MP) is over the budget of {max_pixels / 1e6:.0f} MP"
        )
    return w, h


def _jpeg_size(head: bytes) -> tuple[int, int]:
    i = 2
    while i + 4 <= len(head):
        if head[i] != 0xFF:
            raise ImageHeaderError(f"JPEG marker expected at byte {i}")
        marker = head[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            i += 2
            continue
        (length,) = struct.unpack(">H", head[i + 2 : i + 4])
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if i + 9 > len(head):
                break
            h, w = struct.unpack(">HH", head[i + 5 : i + 9])
            return w, h
        if length < 2:
            raise ImageHeaderError(f"JPEG segment of length {length} at byte {i}")
        i += 2 + length
    raise ImageHeaderError(f"JPEG frame header not found in the first {_HEAD // 1024} KiB")


def _webp_size(head: bytes) -> tuple[int, int]:
    chunk = head[12:16]
    if chunk == b"VP8X" and len(head) >= 30:
        w = int.from_bytes(head[24:27], "little") + 1
        h = int.from_bytes(head[27:30], "little") + 1
        return w, h
    if chunk == b"VP8L" and len(head) >= 25:
        bits = int.from_bytes(head[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(head) >= 30:
        w, h = struct.unpack("<HH", head[26:30])
        return w & 0x3FFF, h & 0x3FFF
    raise ImageHeaderError("WebP header truncated or of an unknown kind")


def _tiff_size(head: bytes) -> tuple[int, int]:
    end = "<" if head[:2] == b"II" else ">"
    (ifd,) = struct.unpack(end + "I", head[4:8])
    if ifd + 2 > len(head):
        raise ImageHeaderError(f"TIFF directory at byte {ifd}, beyond the first {_HEAD // 1024} KiB")
    (count,) = struct.unpack(end + "H", head[ifd : ifd + 2])
    size: dict[int, int] = {}
    for k in range(count):
        entry = head[ifd + 2 + 12 * k : ifd + 14 + 12 * k]
        if len(entry) < 12:
            break
        tag, kind = struct.unpack(end + "HH", entry[:4])
        if tag in (256, 257):  # ImageWidth, ImageLength: SHORT or LONG
            fmt = "H" if kind == 3 else "I"
            size[tag] = struct.unpack(end + fmt, entry[8 : 8 + struct.calcsize(fmt)])[0]
    if 256 not in size or 257 not in size:
        raise ImageHeaderError("TIFF directory without width and height")
    return size[256], size[257]


def _pnm_size(head: bytes) -> tuple[int, int]:
    words: list[bytes] = []
    for line in head[2:].split(b"\n"):
        words.extend(line.split(b"#", 1)[0].split())
        if len(words) >= 2:
            break
    try:
        return int(words[0]), int(words[1])
    except (IndexError, ValueError):
        raise ImageHeaderError("PNM header without width and height") from None
