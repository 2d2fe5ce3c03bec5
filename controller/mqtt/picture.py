"""The `picture` topic's payload: a JPEG whose first segment is a JPEG comment (COM, 0xFFFE) holding
a small JSON header, the ruling the picture belongs to.

One message carries both, so a retained picture and its header can never disagree (two retained
topics could, between their two publishes). Any JPEG decoder shows the picture and skips the
comment; `exiftool -Comment` or Pillow's `Image.info["comment"]` read the header. Pure bytes, no
imaging library: the floor reads the header without decoding the picture.
"""

from __future__ import annotations

import json
from typing import Any

SOI = b"\xff\xd8"
COM = b"\xff\xfe"
MAX_HEADER = 4096  # a header is a few fields; anything longer is not ours


def with_header(jpeg: bytes, header: dict[str, Any]) -> bytes:
    """`jpeg` with `header` as a COM segment right after the start-of-image marker."""
    if not jpeg.startswith(SOI):
        raise ValueError("not a JPEG (no start-of-image marker)")
    body = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode()
    if len(body) > MAX_HEADER:
        raise ValueError(f"picture header is {len(body)} bytes, more than {MAX_HEADER}")
    return SOI + COM + (len(body) + 2).to_bytes(2, "big") + body + jpeg[2:]


def read_header(payload: bytes) -> dict[str, Any] | None:
    """The JSON header of a picture payload, or None when it is no JPEG or carries none of ours."""
    if len(payload) < 6 or not payload.startswith(SOI + COM):
        return None
    size = int.from_bytes(payload[4:6], "big")
    if size < 2 or size - 2 > MAX_HEADER or 4 + size > len(payload):
        return None
    try:
        doc = json.loads(payload[6 : 4 + size])
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None
