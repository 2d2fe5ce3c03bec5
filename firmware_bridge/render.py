"""Pictures of the panel: the table rim seen from above with every LED, and the status display.

Used by `smart-table panel render`, by the simulated panel (`SimulatedPanel.render_png`) and to
make docs/panel/*.png. OpenCV draws; nothing here talks to hardware.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import cv2
import numpy as np

from firmware_bridge.firmware import panelfw
from firmware_bridge.firmware import panelproto as proto
from firmware_bridge.scene import Scene

Pixel = tuple[int, int, int]

WIDTH, HEIGHT = 960, 680
CENTER = (WIDTH // 2, HEIGHT // 2 + 20)
RIM_AXES = (380, 230)  # ellipse half-axes of the LED ring
FELT = (40, 110, 30)  # BGR
RAIL = (30, 45, 70)


def _seat_angle(seat_index: int, seats: int) -> float:
    """Seat 1 at the bottom, left of centre; numbers run clockwise as seen from above."""
    return math.radians(90 + (seat_index + 0.5) * 360 / seats)


def _on_rim(angle: float, grow: float = 0.0) -> tuple[int, int]:
    return (
        int(CENTER[0] + (RIM_AXES[0] + grow) * math.cos(angle)),
        int(CENTER[1] + (RIM_AXES[1] + grow) * math.sin(angle)),
    )


def render_rim(
    segments: list[list[Pixel]],
    text: str,
    path: str | os.PathLike[str],
    *,
    labels: list[str] | None = None,
    title: str | None = None,
) -> Path:
    """Draw LED segments (one list of RGB pixels per seat) round the rim, and the status text."""
    img = np.full((HEIGHT, WIDTH, 3), 24, np.uint8)
    cv2.ellipse(img, CENTER, (RIM_AXES[0] + 34, RIM_AXES[1] + 34), 0, 0, 360, RAIL, -1, cv2.LINE_AA)
    cv2.ellipse(img, CENTER, (RIM_AXES[0] - 26, RIM_AXES[1] - 26), 0, 0, 360, FELT, -1, cv2.LINE_AA)
    seats = len(segments)
    glow = np.zeros_like(img)
    span = 360 / max(seats, 1) * 0.78
    for s, pixels in enumerate(segments):
        base = _seat_angle(s, seats)
        n = len(pixels)
        for i, (r, g, b) in enumerate(pixels):
            offset = (i - (n - 1) / 2) * span / max(n - 1, 1)
            pos = _on_rim(base + math.radians(offset))
            lit = max(r, g, b) > 0
            if lit:
                cv2.circle(glow, pos, 16, (b, g, r), -1, cv2.LINE_AA)
            cv2.circle(img, pos, 8, (b, g, r) if lit else (55, 55, 55), -1, cv2.LINE_AA)
            cv2.circle(img, pos, 8, (90, 90, 90), 1, cv2.LINE_AA)
        label_pos = _on_rim(base, 62)
        label = str(s + 1)
        size = cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.8, 2)[0]
        cv2.putText(
            img,
            label,
            (label_pos[0] - size[0] // 2, label_pos[1] + size[1] // 2),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.8,
            (235, 235, 235),
            2,
            cv2.LINE_AA,
        )
        if labels and s < len(labels) and labels[s]:
            tag = labels[s]
            tsize = cv2.getTextSize(tag, cv2.FONT_HERSHEY_SIMPLEX, 0.45, 1)[0]
            cv2.putText(
                img,
                tag,
                (label_pos[0] - tsize[0] // 2, label_pos[1] + size[1] // 2 + 18),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.45,
                (170, 170, 170),
                1,
                cv2.LINE_AA,
            )
    glow = cv2.GaussianBlur(glow, (0, 0), 9)
    img = cv2.add(img, (glow * 0.8).astype(np.uint8))
    _draw_display(img, text)
    if title:
        cv2.putText(img, title, (20, 34), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (230, 230, 230), 2, cv2.LINE_AA)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(out), img, [cv2.IMWRITE_PNG_COMPRESSION, 9]):
        raise OSError(f"could not write {out}")
    return out


def _draw_display(img: np.ndarray, text: str) -> None:
    """The 128x32 OLED in the middle of the table, 16 characters by 4 lines, scaled up."""
    lines: list[str] = []
    for line in (text or "").split("\n"):
        while line and len(lines) < 4:
            lines.append(line[:16])
            line = line[16:]
    w, h = 128 * 3, 32 * 3 + 12
    x0, y0 = CENTER[0] - w // 2, CENTER[1] - h // 2
    cv2.rectangle(img, (x0 - 6, y0 - 6), (x0 + w + 6, y0 + h + 6), (70, 70, 70), -1)
    cv2.rectangle(img, (x0, y0), (x0 + w, y0 + h), (10, 10, 10), -1)
    for row, line in enumerate(lines[:4]):
        safe = line.encode("ascii", "replace").decode()
        cv2.putText(
            img,
            safe,
            (x0 + 8, y0 + 24 + row * 26),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.68,
            (255, 230, 150),
            1,
            cv2.LINE_AA,
        )


def scene_segments(scene: Scene, leds_per_seat: int = 8) -> list[list[Pixel]]:
    """LED colours for a still picture of the scene, using the firmware's own effect code at a
    moment where each effect is visible (blink on, pulse bright, chase mid-way, countdown 3/4 left)."""
    segments = []
    for light in scene.seats:
        code = proto.EFFECT_NAMES.index(light.effect)
        total = light.seconds * 10
        seat = (*light.color, code, light.period_ms if code != proto.EFFECT_COUNTDOWN else total, total)
        period = light.period_ms or (1500 if light.effect == "pulse" else 1000)
        elapsed = {"pulse": period // 2, "chase": period * 5 // (2 * leds_per_seat) + 1}.get(light.effect, 0)
        remaining = light.seconds * 750  # ms: three quarters of the clock left
        pixels = panelfw.render_segment(seat, leds_per_seat, elapsed, remaining)
        segments.append([tuple(p) for p in pixels])
    return segments


def render_scene(
    scene: Scene, path: str | os.PathLike[str], *, leds_per_seat: int = 8, title: str | None = None
) -> Path:
    return render_rim(
        scene_segments(scene, leds_per_seat), scene.text, path, labels=scene_labels(scene), title=title
    )


def scene_labels(scene: Scene) -> list[str]:
    """The word under each seat's number: its effect, where the colour alone does not say it."""
    labels = [light.effect if light.effect not in ("off", "solid") else "" for light in scene.seats]
    for i, light in enumerate(scene.seats):
        if light.effect == "countdown":
            labels[i] = f"clock {light.seconds}s"
    return labels


def offline_segments(
    seats: int, leds_per_seat: int = 8, elapsed_ms: int = 900
) -> tuple[list[list[Pixel]], str]:
    """What the firmware shows with no host heartbeat, from the firmware's own code."""

    class _StillHal:
        def ticks_ms(self) -> int:
            return elapsed_ms

        def ticks_diff(self, a: int, b: int) -> int:
            return a - b

        def ticks_add(self, t: int, ms: int) -> int:
            return t + ms

        def config(self) -> dict:
            return {"seats": seats, "leds_per_seat": leds_per_seat, "brightness": 255}

        def load(self, name: str) -> None:
            return None

        def save(self, name: str, text: str) -> None:
            pass

        def show(self, pixels: list) -> None:
            self.pixels = pixels

        def display(self, text: str) -> None:
            pass

        def log(self, text: str) -> None:
            pass

        def uart_write(self, data: bytes) -> None:
            pass

        def state_changed(self, snapshot: dict) -> None:
            pass

    hal = _StillHal()
    panel = panelfw.Panel(hal)
    panel.started = 0
    panel.mode = panelfw.MODE_OFFLINE
    panel.text = panelfw.OFFLINE_TEXT
    panel.render(elapsed_ms, force=True)
    pixels = [tuple(p) for p in hal.pixels]
    return [pixels[i * leds_per_seat : (i + 1) * leds_per_seat] for i in range(seats)], panel.text
