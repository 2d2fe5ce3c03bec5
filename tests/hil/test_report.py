"""The report, the summary and `sim --list` are written for people: sentences with the players'
names, borrowed rules marked, frames big enough to read, nothing cut without saying how much."""

from __future__ import annotations

import base64
import re
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
from rich.console import Console

from hil.report import FRAME_WIDTH, write_report
from hil.scenario import ScenarioResult, StepResult, load
from hil.sim import Capture
from hil.sim_cli import SUMMARY_ALERTS, print_result

HAND = {
    "type": "hand",
    "number": 2,
    "redeal": True,
    "button": 2,
    "dead_button": False,
    "sb": 4,
    "bb": 5,
    "dealer": 2,
    "first_card": 4,
    "dealt_in": [4, 5, 1, 2],
    "sitting_out": [],
    "rule": "bluff_street:33.b",  # cool_mule's profile borrows the re-deal rule
}
MISDEAL = {"type": "misdeal", "reason": "first_cards_exposed", "rule": "cool_mule:5.g", "seq": 7, "t": 1.0}
REFUSED = {"type": "checkin", "seat": None, "player": "P9", "accepted": False, "reason": "wrong_table"}


def _result(scenario, rulings):
    steps = [StepResult(scenario.steps[0], "passed", rulings=rulings)]
    return ScenarioResult(scenario, steps, seconds=1.0)


def test_the_report_speaks_in_sentences_with_names_and_marks_borrowed_rules(tmp_path):
    scenario = load("demo")  # Ann 1, Bo 2, Cy 4, Di 5; Ivo (P9) is drawn at another table
    (tmp_path / "frames").mkdir()
    frame = np.full((360, 640, 3), 60, np.uint8)
    cv2.imwrite(str(tmp_path / "frames" / "001.jpg"), frame)
    captures = [
        Capture(1, REFUSED, "step 2"),
        Capture(2, MISDEAL, "step 23", frame_png="frames/001.jpg"),
        Capture(3, HAND, "step 24"),
    ]
    path = write_report(tmp_path / "report.html", scenario, _result(scenario, [MISDEAL, HAND]), captures)
    page = path.read_text()
    assert "MISDEAL: one of the first cards off the deck was exposed. Collect, reshuffle, re-deal." in page
    assert "button seat 2 (Bo), small blind seat 4 (Cy), big blind seat 5 (Di)" in page
    assert "Check-in refused for Ivo: wrong table." in page
    assert "borrowed from bluff_street: bluff_street:33.b" in page
    assert "borrowed from cool_mule" not in page  # the table's own rule is not marked
    assert "hand(number=" not in page and "dead_sb_seat" not in page.split("<details>")[0]
    assert "Alerts (2)" in page  # the refused check-in and the misdeal, listed first
    (picture,) = re.findall(r'class="frame"[^>]*src="data:image/jpeg;base64,([^"]+)"', page)
    img = cv2.imdecode(np.frombuffer(base64.b64decode(picture), np.uint8), cv2.IMREAD_COLOR)
    assert img.shape[1] == FRAME_WIDTH >= 1000  # the 640-pixel frame enlarged to be read


def test_the_summary_counts_the_alerts_it_does_not_print():
    scenario = load("demo")
    many = [dict(MISDEAL, seq=i) for i in range(SUMMARY_ALERTS + 3)]
    console = Console(record=True, width=200)
    print_result(console, _result(scenario, many), demo=True)
    text = console.export_text()
    assert text.count("MISDEAL: one of the first cards") == SUMMARY_ALERTS
    assert "and 3 more alerts (all in report.html)" in text


def test_sim_list_describes_every_scenario():
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "sim", "--list"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    blocks = [b for b in proc.stdout.split("\n\n") if b.strip()]
    shipped = sorted(
        p.stem for p in (Path(__file__).resolve().parents[2] / "hil" / "scenarios").glob("*.yaml")
    )
    assert sorted(b.split()[0] for b in blocks) == shipped, "one block per shipped scenario"
    demo = next(b for b in blocks if b.startswith("demo "))
    assert re.search(r"\(cool_mule, 6 seats, \d+ steps\)", demo) and "misdeal" in demo
    assert all(len(b.splitlines()) >= 2 for b in blocks), "each name has its description under it"


def test_the_live_view_wraps_rulings_and_counts_the_ones_it_no_longer_shows():
    from types import SimpleNamespace

    from hil.scenario import StepResult
    from hil.sim_cli import LIVE_RULINGS, _view

    scenario = load("demo")
    rulings = [dict(HAND, number=n) for n in range(1, LIVE_RULINGS + 5)]
    progress = SimpleNamespace(
        scenario=scenario.name,
        profile=scenario.profile,
        broker="embedded",
        started=0.0,
        steps=[StepResult(s) for s in scenario.steps],
        current=0,
        artifacts="/tmp/x",
    )
    state = {"seats": [{"seat": 5, "player": "P4", "name": "Di"}]}
    sim = SimpleNamespace(
        progress=progress,
        scenario=scenario,
        observer=SimpleNamespace(rulings=rulings),
        frames_pushed=3,
        panel_shown=lambda: {"text": "HAND 2"},
        service=SimpleNamespace(
            health=SimpleNamespace(as_dict=lambda: {"camera": {"status": "ok"}}),
            view=SimpleNamespace(snapshot=lambda: state),
        ),
    )
    console = Console(record=True, width=80)
    console.print(_view(sim))
    text = console.export_text()
    assert "... 4 earlier rulings (all in the report)" in text
    flat = " ".join(text.replace("│", " ").split())
    last = f"Hand {LIVE_RULINGS + 4} (re-deal): button seat 2 (Bo), small blind seat 4 (Cy), big blind seat 5 (Di);"
    assert last in flat, "the whole sentence, wrapped to 80 columns, not cut"
    assert "[borrowed from bluff_street: bluff_street:33.b]" in flat
