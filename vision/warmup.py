"""Pay the detector's one-time costs before the first real frame.

The first card a fresh process sees is several times slower than the next ones: OpenCV sets up
its first calls, and the readers build their glyph and suit tables lazily. At a table that first
card may be the one flashed in the deal, whose misdeal must show at once. So the service runs the
detector once on a drawn probe frame (felt, a face-up card with a corner index and pips, a
face-down card, a disc) while it starts, before it reports READY.
"""

from __future__ import annotations

import time

import cv2
import numpy as np

from vision.detect import Detector

PROBE_SIZE = (1280, 720)


def probe_frame(width: int = PROBE_SIZE[0], height: int = PROBE_SIZE[1]) -> np.ndarray:
    """A plain felt with a face-up ace of spades-like card, a face-down card and a white disc."""
    frame = np.zeros((height, width, 3), np.uint8)
    frame[:] = (40, 110, 30)  # green felt, BGR
    cw = max(24, width // 18)
    ch = int(cw * 1.4)
    x0, y0 = width // 3, height // 3
    cv2.rectangle(frame, (x0, y0), (x0 + cw, y0 + ch), (245, 245, 245), -1)
    scale = cw / 70
    cv2.putText(
        frame, "A", (x0 + 3, y0 + int(20 * scale)), cv2.FONT_HERSHEY_SIMPLEX, 0.6 * scale, (0, 0, 0), 2
    )
    cv2.circle(frame, (x0 + cw // 2, y0 + ch // 2), max(3, cw // 6), (0, 0, 0), -1)
    x1 = x0 + 2 * cw
    # a back as decks print it: a white border round a patterned field (a bare striped block is
    # no card to the verifier, which drops lone faceless finds it is sure are none)
    frame[y0 : y0 + ch, x1 : x1 + cw] = (245, 245, 245)
    b = max(2, cw // 12)
    field = frame[y0 + b : y0 + ch - b, x1 + b : x1 + cw - b]  # a view: drawn on in place
    field[:] = (40, 40, 160)
    fh, fw = field.shape[:2]
    for k in range(-fh, fw, 7):  # a lattice
        cv2.line(field, (k, 0), (k + fh, fh), (230, 230, 230), 1)
        cv2.line(field, (k, fh), (k + fh, 0), (230, 230, 230), 1)
    cv2.circle(frame, (x0 - cw, y0 + ch // 2), cw // 3, (235, 235, 235), -1)
    cv2.putText(
        frame,
        "D",
        (x0 - cw - cw // 8, y0 + ch // 2 + cw // 8),
        cv2.FONT_HERSHEY_SIMPLEX,
        0.4 * scale,
        (0, 0, 0),
        1,
    )
    return frame


def warm_up(detector: Detector) -> float:
    """Run a throwaway detector sharing `detector`'s deck model on the probe; milliseconds taken.

    A separate instance, so the real detector learns nothing (card size, tracked cards) from the probe.
    """
    t0 = time.perf_counter()
    probe = Detector(track=True)
    probe.model = detector.model
    frame = probe_frame()
    probe.detect(frame)
    probe.detect(frame)  # the tracked path too
    return (time.perf_counter() - t0) * 1000
