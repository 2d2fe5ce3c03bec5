"""Draw what the detector saw on the frame, so a person can check the camera by looking."""

from __future__ import annotations

import cv2
import numpy as np

UP, DOWN, BUTTON, CHIP, ZONE = (0, 220, 0), (0, 140, 255), (255, 0, 255), (200, 200, 0), (255, 255, 255)
FONT = cv2.FONT_HERSHEY_SIMPLEX


class Labels:
    """Places text labels inside the frame and clear of each other: a label that would leave the picture
    is pulled back in, one that would cover another moves down (or up) a line until it is clear, so the
    installer can read every seat number and card code (issue 18: seats 1 and 6 fell off 640x360 frames,
    BUTTON covered a seat label)."""

    def __init__(self, out: np.ndarray, t: int) -> None:
        self.out, self.t, self.boxes = out, t, []

    def put(self, text: str, org: tuple[int, int], colour, outline: bool = False) -> None:
        t, (h, w) = self.t, self.out.shape[:2]
        (tw, th), base = cv2.getTextSize(text, FONT, 0.6 * t, t)
        x, y = org
        step = th + base + 2
        for k in range(12):
            dy = (k + 1) // 2 * step * (1 if k % 2 else -1)  # 0, +1, -1, +2, -2 ... lines
            cx = min(max(int(x), 1), max(1, w - tw - 1))
            cy = min(max(int(y) + dy, th + 1), max(th + 1, h - base - 1))
            box = (cx, cy - th, cx + tw, cy + base)
            if not any(_overlap(box, b) for b in self.boxes):
                break
        self.boxes.append(box)
        if outline:
            cv2.putText(self.out, text, (cx, cy), FONT, 0.6 * t, (0, 0, 0), 3 * t, cv2.LINE_AA)
        cv2.putText(self.out, text, (cx, cy), FONT, 0.6 * t, colour, t, cv2.LINE_AA)


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def draw_overlay(frame: np.ndarray, result, layout=None) -> np.ndarray:
    out = frame.copy()
    t = max(1, round(frame.shape[1] / 900))
    labels = Labels(out, t)
    if layout is not None:
        draw_layout(out, layout, t, labels)
    for d in result.discs:
        if d.get("kind") == "chip":
            c = tuple(int(v) for v in d["center"])
            cv2.circle(out, c, int(d["radius"]), CHIP, t, cv2.LINE_AA)
    for card in result.cards:
        pts = np.round(np.array(card.corners)).astype(np.int32)
        colour = UP if card.face == "up" else DOWN
        cv2.polylines(out, [pts], True, colour, 2 * t, cv2.LINE_AA)
        label = card.code or ("?" if card.face == "up" else "down")
        labels.put(label, (int(card.center[0]) - 12 * t, int(card.center[1]) + 5 * t), colour, outline=True)
    if result.button is not None:
        b = result.button
        c = tuple(int(v) for v in b.center)
        cv2.circle(out, c, int(b.radius), BUTTON, 2 * t, cv2.LINE_AA)
        labels.put("BUTTON", (c[0] - 30 * t, c[1] - int(b.radius) - 6), BUTTON)
    return out


def draw_layout(out: np.ndarray, layout, t: int = 1, labels: Labels | None = None) -> None:
    """Seat zones (numbered), board and muck zones, mapped into the image."""
    labels = labels or Labels(out, t)
    for seat, poly in layout.seat_zones.items():
        q = np.round(layout.to_image(poly)).astype(np.int32)
        cv2.polylines(out, [q], True, ZONE, t, cv2.LINE_AA)
        a = np.round(layout.to_image([layout.seat_anchors[seat]])[0]).astype(int)
        labels.put(f"seat {seat}", (int(a[0]) - 25 * t, int(a[1]) + 5 * t), ZONE)
    for name, poly in (("board", layout.board), ("muck", layout.muck)):
        q = np.round(layout.to_image(poly)).astype(np.int32)
        cv2.polylines(out, [q], True, (0, 255, 255), t, cv2.LINE_AA)
        labels.put(name, tuple(int(v) for v in q[0] + [4, 18 * t]), (0, 255, 255))
