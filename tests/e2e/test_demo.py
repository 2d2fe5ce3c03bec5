"""`smart-table demo`: the default scenario end to end, as a newcomer runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.mark.timeout(120)
def test_demo_runs_the_default_scenario_and_leaves_a_report(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "demo", "--no-live"],
        capture_output=True,
        text=True,
        timeout=110,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (art,) = (tmp_path / "sim-artifacts").glob("demo-*")  # the default folder, relative to where it ran
    assert "PASS demo" in proc.stdout
    assert "MISDEAL: one of the first cards off the deck was exposed" in proc.stdout  # the --pretty sentence
    summary = json.loads((art / "summary.json").read_text())
    assert summary["passed"] and summary["broker"].startswith(("mosquitto", "embedded"))
    rulings = [json.loads(x) for x in (art / "rulings.jsonl").read_text().splitlines()]
    assert [r["type"] for r in rulings if r["type"] in ("hand", "misdeal")] == [
        "hand",
        "hand",
        "misdeal",
        "hand",
    ]
    report = (art / "report.html").read_text()
    assert report.count("data:image/jpeg;base64,") >= 8  # panel and camera pictures at the rulings
    assert "first_cards_exposed" in report and "cool_mule:5.g" in report
    assert list((art / "panel").glob("*.png")) and list((art / "frames").glob("*.jpg"))
    events = [json.loads(x) for x in (art / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "deal" and e["source"] == "camera" for e in events)
    assert (art / "events.db").is_file()


def test_demo_without_card_images_says_where_they_were_looked_for(tmp_path):
    env = dict(os.environ, SMART_TABLE_DECKS=str(tmp_path / "no-decks"))
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "demo", "--no-live"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert proc.returncode == 2
    assert "card images for the simulated camera are missing" in proc.stderr
    assert "no-decks" in proc.stderr and "SMART_TABLE_DECKS" in proc.stderr
    assert not (tmp_path / "sim-artifacts").exists()


@pytest.mark.timeout(120)
def test_ctrl_c_stops_cleanly_keeps_the_artifacts_and_leaves_no_broker_behind(tmp_path):
    import signal
    import socket
    import time

    art = tmp_path / "art"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "sim",
            "cool_mule_misdeals",
            "--no-live",
            "--no-captures",
            "--artifacts",
            str(art),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (art / "events.db").exists():
        time.sleep(0.1)
    time.sleep(3)  # a few steps in
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out[-2000:] + err[-2000:]
    assert "interrupted (Ctrl-C)" in out
    summary = json.loads((art / "summary.json").read_text())
    assert summary["passed"] is False and summary["error"].startswith("interrupted")
    assert (art / "report.html").is_file()
    if summary["broker"].startswith("mosquitto"):
        port = int(summary["broker"].rsplit(":", 1)[1])
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0  # the private broker is gone
