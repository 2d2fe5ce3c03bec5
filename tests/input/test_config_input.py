"""`smart-table run --config` on a file that is not UTF-8, and the secrets it names: an empty or
group/world-readable token, password or key file is refused at start and by `--check` (exit 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.service.config import ConfigError, load_config
from tests.service.conftest import write_toml


def run_check(config: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--config", str(config), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )


def base(tmp_path: Path, **sections: dict) -> dict:
    cfg: dict = {
        "table": {"venue": "cool-mule", "id": "table-1", "profile": "cool_mule", "seats": 9},
        "devices": {"camera": "none", "panel": "none", "nfc": "none"},
        "event_log": {"path": str(tmp_path / "events.db")},
    }
    for name, values in sections.items():
        cfg.setdefault(name, {}).update(values)
    return cfg


def test_a_config_that_is_not_utf8_gets_a_message_naming_line_and_column_and_exit_2(tmp_path):
    config = tmp_path / "table.toml"
    config.write_bytes(b'[table]\nvenue = "cool-mule"\nid = "t\xe91"\n')  # Latin-1, from an old editor
    for args in (["--check"], []):
        r = subprocess.run(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(config), *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr
        assert "not UTF-8 text: byte 0xe9 at line 3, column 8" in r.stderr


def secret(tmp_path: Path, name: str, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / name
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("section", "key"),
    [
        ("commands", "token_file"),
        ("broker", "password_file"),
        ("broker", "key_file"),
        ("checkin", "keys_file"),
    ],
)
@pytest.mark.parametrize(
    ("text", "mode", "problem"),
    [
        ("", 0o600, "is empty"),
        ("\n\n", 0o600, "is empty"),
        ("s3cret\n", 0o644, "is readable or writable by others (mode 0644)"),
        ("s3cret\n", 0o640, "is readable or writable by others (mode 0640)"),
        ("s3cret\n", 0o602, "is readable or writable by others (mode 0602)"),
    ],
)
def test_empty_or_shared_secret_files_are_refused_by_check(tmp_path, section, key, text, mode, problem):
    path = secret(tmp_path, "secret", text, mode)
    extra = {"broker": {"host": "127.0.0.1", "username": "table-1@cool-mule"}}
    values = {key: str(path)}
    if key == "key_file":
        values["cert_file"] = str(secret(tmp_path, "cert.pem", "-----BEGIN CERTIFICATE-----\n", 0o644))
    if section == "checkin":
        values.update(registry=f"sqlite:///{tmp_path / 'r.db'}", event="E1")
    extra.setdefault(section, {}).update(values)
    config = write_toml(tmp_path / "table.toml", base(tmp_path, **extra))
    r = run_check(config)
    assert r.returncode == 2
    assert f"{section}.{key}: file {str(path)!r} {problem}" in r.stderr
    assert "s3cret" not in r.stderr  # the message names the file, never its content
    with pytest.raises(ConfigError):  # the service's start goes through the same check
        load_config(config)


def test_private_non_empty_secret_files_pass_check(tmp_path):
    token = secret(tmp_path, "token", "s3cret\n")
    password = secret(tmp_path, "password", "tpw\n", 0o400)
    config = write_toml(
        tmp_path / "table.toml",
        base(
            tmp_path,
            commands={"token_file": str(token)},
            broker={
                "host": "127.0.0.1",
                "username": "table-1@cool-mule",
                "password_file": str(password),
            },
        ),
    )
    r = run_check(config)
    assert r.returncode == 0, r.stderr


def test_a_secret_file_path_holding_a_nul_character_is_refused_by_name(tmp_path):
    """TOML allows "\\u0000" in a string; os.stat does not: the config names the key and the problem
    instead of failing with "embedded null byte" (found by tests/fuzz/test_fuzz_config.py)."""
    config = write_toml(tmp_path / "table.toml", base(tmp_path, commands={"token_file": "/etc/tok-en"}))
    config.write_text(config.read_text().replace("/etc/tok-en", "/etc/tok\\u0000en"))
    with pytest.raises(ConfigError, match=r"commands\.token_file: file path .* contains a NUL character"):
        load_config(config)
    r = run_check(config)
    assert r.returncode == 2 and "Traceback" not in r.stderr
