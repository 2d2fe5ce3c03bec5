"""Pictures of the panel and the `smart-table panel ...` commands."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from firmware_bridge import catalog, cli, render
from firmware_bridge.signals import SignalState
from hil.panel_sim import SimulatedPanel

DOCS = Path(__file__).resolve().parents[2] / "docs" / "panel"
RUN_CLI = (
    "import argparse, sys; from firmware_bridge import cli; p = argparse.ArgumentParser(); "
    "s = p.add_subparsers(); cli.register(s); a = p.parse_args(sys.argv[1:]); sys.exit(a.handler(a))"
)


def run(*argv: str) -> int:
    parser = argparse.ArgumentParser()
    cli.register(parser.add_subparsers())
    args = parser.parse_args(list(argv))
    return args.handler(args)


def led_bgr(
    image: np.ndarray, seat: int, seats: int = 10, led: int = 0, per_seat: int = 8
) -> tuple[int, ...]:
    """Colour at the centre of one LED as drawn by render_rim."""
    span = 360 / seats * 0.78
    offset = (led - (per_seat - 1) / 2) * span / (per_seat - 1)
    x, y = render._on_rim(render._seat_angle(seat - 1, seats) + math.radians(offset))
    return tuple(int(v) for v in image[y, x])


def test_misdeal_picture_has_every_led_red(tmp_path):
    path = cli.render_signal("misdeal", tmp_path / "m.png")
    image = cv2.imread(str(path))
    for seat in range(1, 11):
        b, g, r = led_bgr(image, seat, led=seat % 8)
        assert r > 200 and g < 80 and b < 80, (seat, (b, g, r))


def test_hand_picture_shows_blinds_in_their_colours_and_empty_seats_dark(tmp_path):
    image = cv2.imread(str(cli.render_signal("hand", tmp_path / "h.png")))
    b, g, r = led_bgr(image, 4, led=3)  # small blind
    assert b > 200 and r < 80
    b, g, r = led_bgr(image, 5, led=3)  # big blind
    assert r > 200 and g > 150 and b < 100
    assert max(led_bgr(image, 8, led=3)) < 120  # nobody's role: dark LED


@pytest.mark.parametrize("name", [*catalog.SIGNALS, catalog.OFFLINE])
def test_committed_doc_pictures_match_what_the_code_draws(tmp_path, name):
    """A picture is stale when what it shows changed (index.json: text, labels, every LED's colour) or
    when the drawing did; OpenCV's own text rasteriser (5.0 and 5.1 kern differently, a mean
    difference of about 1 level) is neither."""
    index = json.loads((DOCS / "index.json").read_text())
    regenerate = "run smart-table panel render --all docs/panel"
    assert index.get(name) == cli.signal_picture(name), (
        f"docs/panel/index.json is stale for {name}: {regenerate}"
    )
    committed = cv2.imread(str(DOCS / f"{name}.png"))
    assert committed is not None, f"docs/panel/{name}.png is missing: {regenerate}"
    fresh = cv2.imread(str(cli.render_signal(name, tmp_path / f"{name}.png")))
    assert committed.shape == fresh.shape
    for seat in range(1, catalog.SEATS + 1):
        for led in range(8):
            was, now = led_bgr(committed, seat, led=led), led_bgr(fresh, seat, led=led)
            assert max(abs(a - b) for a, b in zip(was, now, strict=True)) <= 6, (
                f"{name}.png: seat {seat} LED {led} is {was}, the code draws {now}: {regenerate}"
            )
    assert float(np.abs(committed.astype(int) - fresh.astype(int)).mean()) < 3.0, f"{name}.png: {regenerate}"


def test_docs_page_shows_every_picture():
    page = (DOCS.parent / "panel.md").read_text()
    for name in [*catalog.SIGNALS, catalog.OFFLINE]:
        assert f"(panel/{name}.png)" in page


def test_render_cli_options(tmp_path, capsys):
    assert run("panel", "render", "--signal", "clock", "-o", str(tmp_path / "c.png")) == 0
    assert (tmp_path / "c.png").stat().st_size > 1000
    assert run("panel", "render", "--signal", "nope") == 2
    assert "unknown signal 'nope'" in capsys.readouterr().err
    assert run("panel", "render", "--list") == 0
    assert "misdeal" in capsys.readouterr().out.split()

    scene = SignalState(4).apply({"type": "misdeal", "reason": "multiple_boxed"})
    (tmp_path / "scene.json").write_text(json.dumps(scene.to_dict()))
    assert run("panel", "render", "--scene", str(tmp_path / "scene.json"), "-o", str(tmp_path / "s.png")) == 0
    (tmp_path / "bad.json").write_text(json.dumps({"seats": [{"color": "mauve"}]}))
    assert run("panel", "render", "--scene", str(tmp_path / "bad.json"), "-o", str(tmp_path / "b.png")) == 2
    assert "scene.seats[0].color" in capsys.readouterr().err


def test_render_lines_reports_bad_lines_by_number(tmp_path, capsys):
    lines = tmp_path / "events.jsonl"
    lines.write_text(
        '# a comment\n{"type":"hand","button":1,"bb":2}\n{"type":"clock","seat":99,"seconds":5}\n'
    )
    assert run("panel", "render", "--lines", str(lines), "--seats", "4", "-o", str(tmp_path / "l.png")) == 0
    assert f"{lines}:3: clock.seat" in capsys.readouterr().err
    lines.write_text('{"type":"hand",\n')
    assert run("panel", "render", "--lines", str(lines), "-o", str(tmp_path / "l.png")) == 2
    assert f"{lines}:1: not JSON" in capsys.readouterr().err


async def test_simulated_panel_renders_its_leds_as_lit(tmp_path):
    from firmware_bridge.bridge import PanelBridge

    scene = SignalState(4).apply({"type": "misdeal", "reason": "wrong_card_count"})
    async with SimulatedPanel(4) as sim, PanelBridge(sim.port, 4) as bridge:
        assert await bridge.show(scene, timeout=8)
        await sim.wait_for(lambda s: s.get("text", "").startswith("MISDEAL"), 8)
        phases = set()
        for _ in range(200):  # catch the blink in its "on" phase (no await between check and render)
            await asyncio.sleep(0.01)
            leds = sim.leds()
            if leds:
                phases.add(leds[0][0])
            if leds and leds[0][0] == (255, 0, 0):
                break
        assert phases >= {(255, 0, 0)}, phases
        image = cv2.imread(str(sim.render_png(tmp_path / "now.png")))
        _, g, r = led_bgr(image, 1, seats=4)
        assert r > 200 and g < 80


async def test_panel_drive_command_shows_lines_on_a_panel(tmp_path):
    events = tmp_path / "events.jsonl"
    events.write_text(
        "\n".join(
            json.dumps(line)
            for line in [
                {"type": "hand", "number": 2, "button": 1, "sb": 2, "bb": 3, "dealer": 1},
                {"type": "bogus"},
                {"type": "misdeal", "reason": "button_misplaced"},
            ]
        )
    )
    async with SimulatedPanel(4) as sim:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            RUN_CLI,
            "panel",
            "drive",
            "--port",
            sim.port,
            "--seats",
            "4",
            str(events),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 30)
        assert proc.returncode == 0, err.decode()
        health = json.loads(err.decode().strip().splitlines()[-1])
        assert health["connected"] and health["frames_acked"] >= 2
        state = sim.state()
        assert state["text"] == "MISDEAL\nbutton misplaced"
        assert {s["effect"] for s in state["seats"]} == {"blink"}
