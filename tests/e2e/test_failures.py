"""A scenario whose expectation is not met fails, naming the step and what was seen instead."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hil.scenario import load
from hil.sim import SimSettings, SimTable, run_scenario

WRONG = textwrap.dedent("""
    name: a ruling that never comes
    profile: bluff_street
    seats: 6
    level: {sb: 50, bb: 100}
    steps:
      - seat: {seat: 1, player: A}
      - seat: {seat: 2, player: B}
      - seat: {seat: 4, player: C}
      - button: 1
      - move_button: 1
      - hand_start:
      - deal: 2
        name: a clean first card
        expect:
          - ruling: {type: misdeal, reason: first_cards_exposed}
            timeout: 1.5
      - deal: 4
""")


@pytest.mark.timeout(120)
def test_missing_ruling_fails_naming_the_step_and_what_was_seen(tmp_path, mosquitto):
    path = tmp_path / "wrong.yaml"
    path.write_text(WRONG)
    scenario = load(path)

    async def main():
        async with SimTable(
            scenario, SimSettings(external_broker=mosquitto, captures=False), tmp_path / "art"
        ) as sim:
            return await run_scenario(sim, scenario)

    result = asyncio.run(main())
    assert not result.passed
    failed = result.failure
    assert failed is not None and failed.step.index == 7
    assert "expected ruling misdeal(reason=first_cards_exposed) within 2 s" in failed.message
    assert "no ruling" in failed.message  # a clean card: the table said nothing
    assert [s.status for s in result.steps] == ["passed"] * 6 + ["failed", "not run"]
    assert "step 7 (a clean first card)" in result.summary()


@pytest.mark.timeout(120)
def test_hil_run_exits_1_and_prints_the_failing_step(tmp_path):
    path = tmp_path / "wrong.yaml"
    path.write_text(WRONG.replace("timeout: 1.5", "timeout: 1"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller.cli",
            "hil",
            "run",
            str(path),
            "--broker",
            "embedded",
            "--no-captures",
            "--artifacts",
            str(tmp_path / "art"),
        ],
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL   7 a clean first card" in proc.stdout
    assert "expected ruling misdeal(reason=first_cards_exposed)" in proc.stdout
    assert "PASS   6 hand start" in proc.stdout
    assert (Path(tmp_path / "art") / "report.html").is_file()


def test_bad_scenario_file_exits_2_before_anything_starts(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nprofile: cool_mule\nsteps:\n  - deal: 11\n")
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "hil", "run", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "step 1 (line 4): deal: seat: expected 1..10, got 11" in proc.stderr


SHORT = textwrap.dedent("""
    name: short
    profile: dragons_den
    seats: 4
    level: {sb: 25, bb: 50}
    steps:
      - seat: {seat: 1, player: A}
      - seat: {seat: 3, player: B}
      - button: 1
      - move_button: 1
      - hand_start:
        expect:
          - ruling: {type: hand, button: 1, sb: 1, bb: 3}
          - panel: {seats: {3: yellow}}
""")


@pytest.mark.timeout(120)
def test_a_broker_that_will_not_start_falls_back_to_the_embedded_one(tmp_path):
    path = tmp_path / "short.yaml"
    path.write_text(SHORT)
    scenario = load(path)

    async def main():
        settings = SimSettings(mosquitto="/bin/false", captures=False)  # a "mosquitto" that exits at once
        async with SimTable(scenario, settings, tmp_path / "art") as sim:
            return sim.broker_desc, await run_scenario(sim, scenario)

    broker, result = asyncio.run(main())
    assert broker.startswith("embedded 127.0.0.1:")
    assert result.passed, result.summary()
