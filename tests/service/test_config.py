"""Configuration: defaults run the simulated table; every bad key is named."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.service.config import ConfigError, load_config, parse_config

REPO = Path(__file__).resolve().parents[2]


def test_defaults_are_the_simulated_table():
    cfg = load_config(None)
    assert (cfg.devices.camera, cfg.devices.panel, cfg.devices.nfc) == ("sim", "sim", "sim:table")
    assert cfg.broker.host == ""  # embedded broker
    assert cfg.prefix == "smarttable/v1/demo/table-1"


def test_every_problem_is_reported_with_its_key(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(
        '[table]\nseats = 12\nprofile = "nope"\nid = "a/b"\n'
        '[broker]\nhots = "x"\nport = "1883"\n'
        "[devices]\ncamera_stall_seconds = -1\n"
        "[nonsense]\n"
    )
    with pytest.raises(ConfigError) as err:
        load_config(path)
    text = str(err.value)
    for expected in (
        "table.seats: must be 2..10, got 12",
        "table.profile: 'nope' is not one of",
        "table.id: 'a/b'",
        "broker.hots: unknown key (did you mean broker.host?)",
        "broker.port: expected an integer, got str '1883'",
        "devices.camera_stall_seconds: must be > 0",
        "nonsense: unknown section",
    ):
        assert expected in text, text
    assert all(line.startswith(str(path)) for line in text.splitlines())


def test_unreadable_and_invalid_toml(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[table\nid=")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


def test_dependent_settings_are_checked(tmp_path):
    with pytest.raises(ConfigError) as err:
        parse_config(
            {"broker": {"password_file": str(tmp_path / "nope")}, "checkin": {"registry": "sqlite:///x"}}
        )
    text = str(err.value)
    assert "broker.password_file: file" in text
    assert "checkin.registry: set, so checkin.keys_file and checkin.event are needed too" in text


def test_example_config_in_systemd_is_valid(tmp_path):
    text = (REPO / "systemd" / "table.toml").read_text()
    for name in ("mqtt-password", "director-token", "venue-keys.toml", "layout.toml", "ca.crt", "venue.deck"):
        (tmp_path / name).write_text("secret\n")
        (tmp_path / name).chmod(0o600)  # a secret others can read is refused (config.secret_file_problem)
    path = tmp_path / "table.toml"
    path.write_text(text.replace("/etc/smart-table/", f"{tmp_path}/"))
    cfg = load_config(path)
    assert cfg.broker.host  # an installed table uses Mosquitto
    assert cfg.devices.camera != "sim"


def test_replace_keeps_validation():
    cfg = load_config(None).replace(table={"seats": 6})
    assert cfg.table.seats == 6
    with pytest.raises(ConfigError, match=r"table\.seats"):
        cfg.replace(table={"seats": 1})


def test_camera_debounce_is_configurable_but_never_a_single_frame():
    assert (
        parse_config({"devices": {"camera_debounce_frames": 2}}, "t.toml").devices.camera_debounce_frames == 2
    )
    with pytest.raises(ConfigError, match=r"devices\.camera_debounce_frames: must be 2\.\.30"):
        parse_config({"devices": {"camera_debounce_frames": 1}}, "t.toml")
