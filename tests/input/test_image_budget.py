"""`vision detect` checks an image's size from its header before decoding it: a 1.2 MB PNG of
20,000 x 20,000 pixels gets a clear per-image error in milliseconds instead of a 2.4 GB decode."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.image_header import MAX_PIXELS, ImageHeaderError, check_image, image_size


def huge_png(path: Path, w: int, h: int) -> Path:
    """A valid PNG of w x h black grey pixels, written row by row (compresses to about 1 KB per 1 MP)."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    comp = zlib.compressobj(9)
    row = b"\x00" + b"\x00" * w
    data = b"".join(comp.compress(row) for _ in range(h)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", data) + chunk(b"IEND", b""))
    return path


def test_a_20000_px_square_png_is_refused_per_image_and_the_next_image_is_still_read(tmp_path):
    big = huge_png(tmp_path / "bomb.png", 20_000, 20_000)
    assert big.stat().st_size < 2_000_000
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), np.full((120, 160, 3), 40, np.uint8))
    code = (
        "import resource, sys, runpy\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))\n"  # a Pi's worth
        "sys.argv = ['smart-table', 'vision', 'detect', *sys.argv[1:]]\n"
        "runpy.run_module('controller.cli', run_name='__main__')\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code, str(big), str(small)], capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in r.stderr and "MemoryError" not in r.stderr, r.stderr
    results = [json.loads(x) for x in r.stdout.splitlines()]
    assert results[0] == {
        "image": str(big),
        "error": "image of 20000x20000 pixels (400 MP) is over the budget of 50 MP",
    }
    assert results[1]["image"] == str(small) and "error" not in results[1]
    assert r.returncode == 0


@pytest.mark.parametrize("ext", [".png", ".jpg", ".bmp", ".tiff", ".webp", ".ppm"])
def test_header_size_matches_what_opencv_decodes(tmp_path, ext):
    img = np.zeros((37, 53, 3), np.uint8)
    path = tmp_path / f"x{ext}"
    assert cv2.imwrite(str(path), img)
    assert check_image(path) == (53, 37)


def test_truncated_or_unknown_headers_are_named():
    with pytest.raises(ImageHeaderError, match="IHDR"):
        image_size(b"\x89PNG\r\n\x1a\n\x00\x00")
    with pytest.raises(ImageHeaderError, match="JPEG frame header not found"):
        image_size(b"\xff\xd8\xff\xe0\x00\x10" + b"\x00" * 14)
    with pytest.raises(ImageHeaderError, match="truncated"):
        image_size(b"II*\x00")  # a TIFF cut off before its directory offset (found by the fuzzer)
    with pytest.raises(ImageHeaderError, match="not an image format"):
        image_size(b"%PDF-1.4")
    assert MAX_PIXELS >= 7680 * 4320  # an 8K camera frame is within budget


def test_enroll_refuses_a_card_image_over_the_budget_before_decoding_any(tmp_path):
    deck = tmp_path / "deck"
    deck.mkdir()
    huge_png(deck / "As.png", 20_000, 20_000)
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "vision",
            "enroll",
            str(deck),
            "--out",
            str(tmp_path / "x.deck"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert (
        f"enroll: {deck / 'As.png'}: image of 20000x20000 pixels (400 MP) is over the budget of 50 MP"
        in r.stderr
    )
    assert not (tmp_path / "x.deck").exists()
