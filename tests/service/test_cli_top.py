"""`smart-table run --check` names bad keys; `smart-table top` shows a table from its MQTT topics."""

from __future__ import annotations

import json
import subprocess
import sys

from rich.console import Console

from controller.mqtt.topics import TableTopics
from controller.service.app import TableService
from controller.service.top import TopModel, render
from tests.service.conftest import FLASH, HAND, REPO, run_top, table_config, write_toml


def smart_table(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *args], cwd=REPO, capture_output=True, text=True, timeout=60
    )


def test_run_check_names_the_bad_key(tmp_path):
    bad = write_toml(tmp_path / "table.toml", {"table": {"seats": 12}, "broker": {"prot": 1}})
    result = smart_table("run", "--config", str(bad), "--check")
    assert result.returncode == 2
    assert "table.seats: must be 2..10, got 12" in result.stderr
    assert "broker.prot: unknown key (did you mean broker.port?)" in result.stderr
    good = write_toml(tmp_path / "good.toml", {"table": {"seats": 6}})
    ok = smart_table("run", "--config", str(good), "--check")
    assert ok.returncode == 0 and "ok" in ok.stdout


def test_top_model_folds_messages_and_drops_duplicates():
    model = TopModel(TableTopics("v", "t"))
    model.apply("smarttable/v1/v/t/status", b"online")
    model.apply(
        "smarttable/v1/v/t/state",
        json.dumps(
            {
                "table": {"seats": 6, "profile": "cool_mule"},
                "seats": [{"seat": 2, "player": "B", "stack": 500}],
                "hand_number": 3,
                "phase": "preflop",
                "button": 2,
                "blinds": {"sb": 50, "bb": 100, "sb_seat": 4},
                "health": {"camera": {"status": "degraded", "detail": "no frame for 10.2 s"}},
            }
        ).encode(),
    )
    ruling = json.dumps({"type": "misdeal", "reason": "first_cards_exposed", "seq": 9}).encode()
    model.apply("smarttable/v1/v/t/rulings", ruling)
    model.apply("smarttable/v1/v/t/rulings", ruling)  # at-least-once duplicate
    model.apply("smarttable/v1/v/t/state", b"not json")  # ignored, state kept
    assert len(model.rulings) == 1 and model.state["hand_number"] == 3
    console = Console(record=True, width=140)
    console.print(render(model))
    text = console.export_text()
    for expected in (
        "online",
        "hand 3",
        "preflop",
        "BTN",
        "degraded",
        "no frame for 10.2 s",
        "MISDEAL: one of the first cards off the deck was exposed",  # the --pretty sentence (issue 18)
        "50/100",
    ):
        assert expected in text, expected


async def test_top_once_against_a_running_table(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service:
        for line in [*HAND, FLASH]:
            await service.inject(line)
        config = write_toml(
            tmp_path / "top.toml",
            {
                "table": {"venue": "testvenue", "id": "t1"},
                "broker": {"host": "127.0.0.1", "port": service.broker.port},
            },
        )
        code, text, err = await run_top("--config", str(config), "--once", "--wait", "1.5", columns=160)
    assert code == 0, err
    assert "testvenue/t1" in text and "online" in text and "misdeal" in text
    assert "A" in text and "cool_mule" in text
