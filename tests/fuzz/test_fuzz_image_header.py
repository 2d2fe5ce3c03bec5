"""Image headers into the size check: any bytes give a size or an ImageHeaderError with a message;
a header that states a size gives that size; over the pixel budget is refused before any decode."""

from __future__ import annotations

import struct
import tempfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.image_header import MAX_PIXELS, ImageHeaderError, check_image, image_size

MAGIC = [
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8",
    b"BM",
    b"GIF89a",
    b"RIFF\x00\x00\x00\x00WEBP",
    b"II*\x00",
    b"MM\x00*",
    b"P6",
]


@settings(max_examples=300, deadline=None)
@given(magic=st.sampled_from([b"", *MAGIC]), rest=st.binary(max_size=300))
def test_any_header_bytes(magic, rest):
    try:
        w, h = image_size(magic + rest)
    except ImageHeaderError as exc:
        assert str(exc)
    else:
        assert isinstance(w, int) and isinstance(h, int)


def png_header(w: int, h: int) -> bytes:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + b"IHDR"
        + ihdr
        + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr))
    )


def bmp_header(w: int, h: int) -> bytes:
    return b"BM" + bytes(16) + struct.pack("<ii", w, -h) + bytes(28)


def gif_header(w: int, h: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", w, h) + bytes(3)


@settings(max_examples=200, deadline=None)
@given(
    w=st.integers(1, 0xFFFF),
    h=st.integers(1, 0xFFFF),
    make=st.sampled_from([png_header, bmp_header, gif_header]),
)
def test_stated_sizes_are_read_and_the_budget_holds(w, h, make):
    header = make(w, h)
    assert image_size(header) == (w, h)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.img"
        path.write_bytes(header)
        if w * h > MAX_PIXELS:
            with pytest.raises(ImageHeaderError, match=f"{w}x{h} pixels"):
                check_image(path)
        else:
            assert check_image(path) == (w, h)
