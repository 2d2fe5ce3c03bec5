"""docs/install.md and systemd/install-check.sh (which performs the guide on a clean Debian, `make
install-check`) must not drift apart: every command of the guide is performed by the script, or
listed there as one that needs the Pi's hardware or the system itself."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GUIDE = (REPO / "docs" / "install.md").read_text()
SCRIPT = (REPO / "systemd" / "install-check.sh").read_text()


def guide_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", GUIDE, re.DOTALL)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_every_command_of_the_guide_is_walked_or_named_as_needing_the_pi():
    commands = guide_commands()
    assert len(commands) >= 40
    missing = [c for c in commands if c not in SCRIPT and c.replace("\\", "\\\\") not in SCRIPT]
    assert not missing, f"commands of docs/install.md that install-check.sh neither runs nor lists: {missing}"


def test_the_guide_covers_what_an_installer_on_raspberry_pi_os_meets():
    for needed in (
        "blacklist pn533_usb",  # the kernel's NFC drivers take the reader first
        "port100",
        "python3-picamera2",
        "--system-site-packages",
        "smart-table doctor",
        "2e8a:0005",  # the Pico on USB
        "Raspberry Pi 5",
        "WS2812",
        "ACR122U",
    ):
        assert needed in GUIDE, needed
    assert "```\n" in GUIDE.split("## Wiring", 1)[1].split("##", 1)[0], "the wiring picture"


def test_ci_runs_the_walk_through():
    assert "install-check" in (REPO / ".ci" / "run").read_text()
    assert re.search(r"^install-check:", (REPO / "Makefile").read_text(), re.MULTILINE)
