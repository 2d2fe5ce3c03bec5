"""The floor's configuration: the shipped example parses; a wrong setting is refused by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.floor.config import FloorConfigError, load_floor_config, parse_floor_config

EXAMPLE = Path(__file__).resolve().parents[2] / "controller" / "floor" / "venue.example.toml"


def test_the_example_config_parses():
    cfg = load_floor_config(EXAMPLE)
    assert cfg.profile == "dragons_den" and cfg.tables[0] == "table-1" and cfg.breaking_order[0] == "table-4"
    s = cfg.the_structure()
    assert s.levels[3].is_break and s.levels[3].colour_up == "25 chips" and s.levels[4].ante == 25
    assert cfg.payouts == (300, 200, 100)


def test_defaults_work_on_one_machine():
    cfg = parse_floor_config({})
    assert (cfg.broker.host, cfg.web_port, cfg.tables) == ("127.0.0.1", 8080, ("table-1",))
    assert cfg.the_structure().source.startswith("cool_mule: the rulebook prints no structure")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"floor": {"profile": "poker_palace"}}, "floor.profile: 'poker_palace'"),
        ({"floor": {"tables": ["a", "a"]}}, "listed twice"),
        ({"floor": {"tables": ["a", "b"], "breaking_order": ["a"]}}, "floor.breaking_order"),
        ({"web": {"port": 70000}}, "web.port"),
        ({"clock": {}}, "unknown section(s) clock"),
        ({"structure": {"levels": [{"sb": 10, "bb": 5, "minutes": 1}]}}, "structure.levels[1]"),
        ({"payouts": {"places": [300, "two hundred"]}}, "payouts.places"),
    ],
)
def test_bad_settings_are_refused_by_name(raw, message):
    with pytest.raises(FloorConfigError) as err:
        parse_floor_config(raw)
    assert message in str(err.value)


def test_unreadable_file_is_named(tmp_path):
    bad = tmp_path / "venue.toml"
    bad.write_text("[floor\n")
    with pytest.raises(FloorConfigError, match="not valid TOML"):
        load_floor_config(bad)
    with pytest.raises(FloorConfigError, match="cannot read"):
        load_floor_config(tmp_path / "missing.toml")


def test_cli_refuses_a_bad_config_with_its_message(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "venue.toml"
    bad.write_text('[floor]\nprofile = "poker_palace"\n')
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "floor", "--config", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=EXAMPLE.parents[2],
    )
    assert done.returncode == 2
    assert "floor.profile: 'poker_palace' is not one of" in done.stderr
