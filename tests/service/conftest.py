"""Fixtures for the service tests: a real Mosquitto on a free port, table configs, a worked hand."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.mqtt.mosquitto import Mosquitto
from controller.mqtt.mosquitto import installed as mosquitto_installed
from controller.service.config import Config, parse_config
from tests.rules.tablekit import SPEC_INPUT

REPO = Path(__file__).resolve().parents[2]

# The worked example of the protocol spec: four players, a first card flashed in the deal.
HAND = SPEC_INPUT[1:-1]
FLASH = SPEC_INPUT[-1]


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    if not mosquitto_installed():
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


async def run_top(*args: str, columns: int = 200) -> tuple[int, str, str]:
    """`smart-table top ARGS` as its own process in a terminal `columns` wide: (exit status, out, err)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "controller.cli",
        "top",
        *args,
        cwd=REPO,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"COLUMNS": str(columns), "PATH": "/usr/bin:/bin"},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 40)
    assert proc.returncode is not None  # communicate() waited for it
    return proc.returncode, out.decode(), err.decode()
