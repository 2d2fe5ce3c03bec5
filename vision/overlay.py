"""Draw what the detector saw on the frame, so a person can check the camera by looking."""

from __future__ import annotations

import cv2
import numpy as np

UP, DOWN, BUTTON, CHIP, ZONE = (0, 220, 0), (0, 140, 255), (255, 0, 255), (200, 200, 0), (255, 255, 255)


def draw_overlay(frame: np.ndarray, result, layout=None) -> np.ndarray:
    out = frame.copy()
    t = max(1, round(frame.shape[1] / 900))
    if layout is not None:
        draw_layout(out, layout, t)
    for d in result.discs:
        if d.get("kind") == "chip":
            c = tuple(int(v) for v in d["center"])
            cv2.circle(out, c, int(d["radius"]), CHIP, t, cv2.LINE_AA)
    for card in result.cards:
        pts = np.round(np.array(card.corners)).astype(np.int32)
        colour = UP if card.face == "up" else DOWN
        cv2.polylines(out, [pts], True, colour, 2 * t, cv2.LINE_AA)
        label = card.code or ("?" if card.face == "up" else "down")
        org = (int(card.center[0]) - 12 * t, int(card.center[1]) + 5 * t)
        cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * t, (0, 0, 0), 3 * t, cv2.LINE_AA)
        cv2.putText(out, label, org, cv2.FONT_HERSHEY_SIMPLEX, 0.6 * t, colour, t, cv2.LINE_AA)
    if result.button is not None:
        b = result.button
        c = tuple(int(v) for v in b.center)
        cv2.circle(out, c, int(b.radius), BUTTON, 2 * t, cv2.LINE_AA)
        cv2.putText(
            out,
            "BUTTON",
            (c[0] - 30 * t, c[1] - int(b.radius) - 6),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.6 * t,
            BUTTON,
            t,
            cv2.LINE_AA,
        )
    return out


def draw_layout(out: np.ndarray, layout, t: int = 1) -> None:
    """Seat zones (numbered), board and muck zones, mapped into the image."""
    for seat, poly in layout.seat_zones.items():
        q = np.round(layout.to_image(poly)).astype(np.int32)
        cv2.polylines(out, [q], True, ZONE, t, cv2.LINE_AA)
        a = np.round(layout.to_image([layout.seat_anchors[seat]])[0]).astype(int)
        cv2.putText(
            out,
            f"seat {seat}",
            (int(a[0]) - 25 * t, int(a[1]) + 60 * t),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.6 * t,
            ZONE,
            t,
            cv2.LINE_AA,
        )
    for name, poly in (("board", layout.board), ("muck", layout.muck)):
        q = np.round(layout.to_image(poly)).astype(np.int32)
        cv2.polylines(out, [q], True, (0, 255, 255), t, cv2.LINE_AA)
        cv2.putText(
            out,
            name,
            tuple(int(v) for v in q[0] + [4, 18 * t]),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.6 * t,
            (0, 255, 255),
            t,
            cv2.LINE_AA,
        )
