"""The hil/sim commands' cheap paths: listing and checking scenario files (no table started)."""

from __future__ import annotations

import subprocess
import sys

from hil.scenario import shipped


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *args], capture_output=True, text=True, timeout=60
    )


def test_sim_list_names_every_shipped_scenario():
    out = run("sim", "--list")
    assert out.returncode == 0
    names = out.stdout.split()
    assert "demo" in names and "cool_mule_misdeals" in names and "bluff_street_eliminations" in names


def test_hil_run_check_validates_all_shipped_files():
    out = run("hil", "run", "--all", "--check")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\nok ") + out.stdout.startswith("ok ") == len(shipped()) == 12


def test_hil_run_without_a_scenario_says_what_to_give():
    out = run("hil", "run")
    assert out.returncode == 2 and "--all" in out.stderr and "demo" in out.stderr


def test_unusable_options_are_refused_by_name():
    out = run("sim", "demo", "--width", "50", "--fps", "0")
    assert out.returncode == 2
    assert "--width/--height: 50x360" in out.stderr and "--fps" in out.stderr
