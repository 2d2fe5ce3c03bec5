"""The unit file passes systemd's own checks; the udev rules and the Mosquitto ACL are consistent."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
UNIT = REPO / "systemd" / "smart-table.service"
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze is not installed")


def installed_unit(tmp_path: Path) -> Path:
    """The unit as installed, with ExecStart pointing at this checkout's console script."""
    exe = Path(sys.executable).with_name("smart-table")
    text = UNIT.read_text().replace("/opt/smart-table/.venv/bin/smart-table", str(exe))
    path = tmp_path / "smart-table.service"
    path.write_text(text)
    return path


@needs_analyze
def test_unit_verifies_clean(tmp_path):
    result = subprocess.run(
        [ANALYZE, "verify", str(installed_unit(tmp_path))], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert "smart-table.service" not in result.stderr, result.stderr  # no warning about our unit


@needs_analyze
def test_security_exposure_at_most_2_5(tmp_path):
    result = subprocess.run(
        [ANALYZE, "security", "--offline=true", str(installed_unit(tmp_path))], capture_output=True, text=True
    )
    match = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout + result.stderr)
    assert match, result.stdout + result.stderr
    assert float(match.group(1)) <= 2.5


def test_unit_is_notify_with_watchdog_and_a_dedicated_user():
    text = UNIT.read_text()
    for line in (
        "Type=notify",
        "Restart=on-failure",
        "ProtectSystem=strict",
        "User=smart-table",
        "StateDirectory=smart-table",
        "DevicePolicy=closed",
    ):
        assert re.search(rf"^{re.escape(line)}$", text, re.M), line
    assert re.search(r"^WatchdogSec=\d+", text, re.M)


def test_udev_rules_give_the_service_group_its_three_devices():
    rules = [
        r
        for r in (REPO / "systemd" / "99-smart-table.rules").read_text().splitlines()
        if r.strip() and not r.startswith("#")
    ]
    assert rules
    for rule in rules:
        assert 'GROUP="smart-table"' in rule and 'MODE="0660"' in rule, rule
    links = {re.search(r'SYMLINK\+="([^"]+)"', r).group(1) for r in rules}
    assert links == {"smart-table/camera", "smart-table/panel", "smart-table/nfc"}
