"""`smart-table demo`: the default scenario end to end, as a newcomer runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.mark.timeout(120)
def test_demo_runs_the_default_scenario_and_leaves_a_report(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "demo", "--no-live"],
                          capture_output=True, text=True, timeout=110, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (art,) = (tmp_path / "sim-artifacts").glob("demo-*")  # the default folder, relative to where it ran
    assert "PASS demo" in proc.stdout and "misdeal(reason=first_cards_exposed)" in proc.stdout
    summary = json.loads((art / "summary.json").read_text())
    assert summary["passed"] and summary["broker"].startswith(("mosquitto", "embedded"))
    rulings = [json.loads(x) for x in (art / "rulings.jsonl").read_text().splitlines()]
    assert [r["type"] for r in rulings if r["type"] in ("hand", "misdeal")] == ["hand", "hand", "misdeal", "hand"]
    report = (art / "report.html").read_text()
    assert report.count("data:image/jpeg;base64,") >= 8  # panel and camera pictures at the rulings
    assert "first_cards_exposed" in report and "cool_mule:5.g" in report
    assert list((art / "panel").glob("*.png")) and list((art / "frames").glob("*.jpg"))
    events = [json.loads(x) for x in (art / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "deal" and e["source"] == "camera" for e in events)
    assert (art / "events.db").is_file()


def test_demo_without_card_images_says_where_they_were_looked_for(tmp_path):
    env = dict(os.environ, SMART_TABLE_DECKS=str(tmp_path / "no-decks"))
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "demo", "--no-live"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env)
    assert proc.returncode == 2
    assert "card images for the simulated camera are missing" in proc.stderr
    assert "no-decks" in proc.stderr and "SMART_TABLE_DECKS" in proc.stderr
    assert not (tmp_path / "sim-artifacts").exists()
