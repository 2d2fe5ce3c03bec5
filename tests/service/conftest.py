"""Fixtures for the service tests: a real Mosquitto on a free port, table configs, a worked hand."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.service.config import Config, parse_config
from tests.rules.tablekit import SPEC_INPUT

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
REPO = Path(__file__).resolve().parents[2]

# The worked example of the protocol spec: four players, a first card flashed in the deal.
HAND = SPEC_INPUT[1:-1]
FLASH = SPEC_INPUT[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on port {port}")


class Mosquitto:
    """A real Mosquitto broker for one test; `kill()` and `start()` for outages."""

    def __init__(self, workdir: Path, extra: str = "") -> None:
        self.port = free_port()
        self.workdir = workdir
        self.conf = workdir / "mosquitto.conf"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            # started as root, Mosquitto would drop to its own user and lose access to the test's files
            + f"user {getpass.getuser()}\n"
            + ("allow_anonymous true\n" if "allow_anonymous" not in extra else "")
            + f"persistence true\npersistence_location {workdir}/\nautosave_interval 1\n"
            + "log_dest stderr\nlog_type error\nlog_type warning\n"
            + extra
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.workdir / "broker.log", "ab") as log:
            self.proc = subprocess.Popen(
                [MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=log
            )
        wait_port(self.port)

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    if not os.path.exists(MOSQUITTO):
        pytest.skip("mosquitto is not installed")
    (tmp_path / "broker").mkdir()
    broker = Mosquitto(tmp_path / "broker")
    broker.start()
    yield broker
    broker.kill()


def table_config(tmp_path: Path, **sections: dict[str, Any]) -> Config:
    """A simulated table that touches nothing outside tmp_path; sections override."""
    raw: dict[str, Any] = {
        "table": {"seats": 6, "profile": "cool_mule", "venue": "testvenue", "id": "t1"},
        "devices": {"camera": "none", "panel": "none", "nfc": "none"},
        "broker": {"embedded_port": 0},
        "event_log": {"path": str(tmp_path / "events.db"), "synchronous": "normal"},
        "service": {"ready_timeout": 3.0},
    }
    for name, values in sections.items():
        raw.setdefault(name, {}).update(values)
    return parse_config(raw, "test")


def write_toml(path: Path, cfg: dict[str, dict[str, Any]]) -> Path:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        if isinstance(v, list | tuple):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return str(v)

    text = "".join(
        f"[{name}]\n" + "".join(f"{k} = {value(v)}\n" for k, v in section.items()) + "\n"
        for name, section in cfg.items()
    )
    path.write_text(text)
    return path


def service_process(config: Path, log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """`smart-table run --config FILE` as a real process."""
    with open(log, "ab") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(config)],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, **(env or {})},
        )
