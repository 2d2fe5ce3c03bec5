"""`smart-table doctor` on simulated devices: the real camera source on real photos, the simulated
NFC reader through nfcpy, the real panel firmware on a pty, Mosquitto with a password, and what it
says (one line, with the fix) when each is wrong."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import cv2
import pytest

from controller import datapaths
from controller.doctor import FAIL, OK, WARN, Environment, check_nfc, check_panel, run_checks
from controller.mqtt.mosquitto import Mosquitto
from controller.mqtt.mosquitto import installed as mosquitto_installed
from controller.service.config import load_config
from hil.panel_sim import SimulatedPanel
from vision.layout import default_layout, save_layout

REPO = Path(__file__).resolve().parents[2]
PHOTOS = datapaths.find("real_photos") / "foltys_single_cards"


def write_config(tmp_path: Path, **devices: str) -> Path:
    layout = tmp_path / "layout.toml"
    save_layout(default_layout(6, 1280, 720), layout)
    token = tmp_path / "director-token"
    token.write_text("s3cret\n")
    token.chmod(0o600)
    values = {
        "camera": f"dir:{PHOTOS}",
        "panel": "none",
        "nfc": "sim:doctor",
        "layout": str(layout),
        **devices,
    }
    text = (
        '[table]\nseats = 6\nprofile = "cool_mule"\n'
        "[devices]\n" + "".join(f'{k} = "{v}"\n' for k, v in values.items()) + "[commands]\n"
        f'token_file = "{token}"\n'
        f'[event_log]\npath = "{tmp_path / "events.db"}"\n'
    )
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


def by_part(checks):
    return {c.part: c for c in checks}


async def test_a_working_simulated_table_passes_every_check_and_leaves_a_snapshot(tmp_path):
    async with SimulatedPanel(6, leds_per_seat=4) as panel:
        cfg = load_config(write_config(tmp_path, panel=panel.port))
        env = Environment(sys_module=tmp_path / "sys-module", snapshot_dir=tmp_path / "snap")
        checks = by_part(await run_checks(cfg, env))
    assert set(checks) == {"clock", "disk", "secrets", "broker", "camera", "layout", "nfc", "panel"}
    for part in ("disk", "secrets", "broker", "camera", "layout", "nfc", "panel"):
        assert checks[part].status == OK, checks[part].line()
    assert "firmware 1." in checks["panel"].detail and "6 seats" in checks["panel"].detail
    assert "delivers" in checks["camera"].detail
    shot = cv2.imread(str(tmp_path / "snap" / "camera.jpg"))
    overlay = cv2.imread(str(tmp_path / "snap" / "camera-overlay.jpg"))
    assert shot is not None and overlay is not None and shot.shape == overlay.shape
    assert checks["clock"].status in (OK, WARN, FAIL) and checks["clock"].line().strip()


def test_a_kernel_nfc_driver_holding_the_reader_is_named_with_the_blacklist_fix(tmp_path):
    cfg = load_config(write_config(tmp_path, nfc="usb"))
    sys_module = tmp_path / "sys-module"
    (sys_module / "pn533_usb").mkdir(parents=True)
    check = check_nfc(cfg, Environment(sys_module=sys_module, modprobe_d=tmp_path / "modprobe.d"))
    assert check.status == FAIL
    assert "pn533_usb" in check.detail
    assert "blacklist pn533_usb" in check.fix and "/etc/modprobe.d/" in check.fix
    assert check.line().startswith("FAIL  nfc") and "-> fix:" in check.line()


async def test_a_port_with_no_panel_firmware_behind_it_is_reported(tmp_path):
    master, slave = os.openpty()  # a serial port where nothing answers (a Pico in its REPL is similar)
    try:
        cfg = load_config(write_config(tmp_path, panel=os.ttyname(slave)))
        check = await check_panel(cfg, Environment(timeout=1.5))
    finally:
        os.close(master)
        os.close(slave)
    assert check.status == FAIL and "does not answer" in check.detail and "link usb" in check.fix
    missing = await check_panel(
        load_config(write_config(tmp_path, panel="none")).replace(devices={"panel": "/dev/nope"}),
        Environment(),
    )
    assert missing.status == FAIL and "no such device" in missing.detail


def test_key_files_readable_by_others_fail_with_chmod(tmp_path):
    cfg_path = write_config(tmp_path)
    (tmp_path / "director-token").chmod(0o644)
    proc = subprocess.run(
        [sys.executable, "-m", "controller.cli", "doctor", "--config", str(cfg_path), "--timeout", "3"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if " secrets " in x)
    assert (
        line.startswith("FAIL") and "mode 0644" in line and f"chmod 600 {tmp_path / 'director-token'}" in line
    )
    assert "checks passed, see the fixes above" in proc.stdout


@pytest.mark.skipif(not mosquitto_installed(), reason="mosquitto is not installed")
async def test_the_broker_is_checked_with_the_tables_credentials(tmp_path):
    work = tmp_path / "broker"
    work.mkdir()
    passwd = work / "passwd"
    passwd.touch()
    passwd.chmod(0o600)
    subprocess.run(
        ["mosquitto_passwd", "-b", str(passwd), "table-1", "right"], check=True, capture_output=True
    )
    broker = Mosquitto(work, extra=f"allow_anonymous false\npassword_file {passwd}\n")
    broker.start()
    try:
        secret = tmp_path / "mqtt-password"
        results = {}
        for password in ("right", "wrong"):
            secret.write_text(password + "\n")
            secret.chmod(0o600)
            cfg = load_config(write_config(tmp_path)).replace(
                broker={
                    "host": "127.0.0.1",
                    "port": broker.port,
                    "username": "table-1",
                    "password_file": str(secret),
                }
            )
            results[password] = by_part(await run_checks(cfg, Environment(timeout=3)))["broker"]
    finally:
        broker.kill()
    assert results["right"].status == OK and "as table-1: connected" in results["right"].detail
    assert results["wrong"].status == FAIL and "mosquitto_passwd" in results["wrong"].fix


def test_a_layout_calibrated_for_another_table_size_fails(tmp_path):
    cfg_path = write_config(tmp_path)
    save_layout(default_layout(9, 1280, 720), tmp_path / "layout.toml")
    checks = by_part(asyncio.run(run_checks(load_config(cfg_path), Environment(timeout=3))))
    assert checks["layout"].status == FAIL and "9 seats" in checks["layout"].detail


@pytest.mark.skipif(not mosquitto_installed(), reason="mosquitto is not installed")
async def test_the_broker_check_verifies_tls_against_the_venue_ca(tmp_path):
    from tests.service.test_mosquitto_tls import make_ca_and_server

    ca, crt, key = make_ca_and_server(tmp_path / "pki", "venue")
    other_ca, _, _ = make_ca_and_server(tmp_path / "other", "someone else")
    (tmp_path / "broker").mkdir()
    broker = Mosquitto(
        tmp_path / "broker", extra=f"cafile {ca}\ncertfile {crt}\nkeyfile {key}\n", persistence=False
    )
    broker.start()
    try:
        base = load_config(write_config(tmp_path))
        results = {}
        for name, authority in (("venue", ca), ("other", other_ca)):
            cfg = base.replace(
                broker={"host": "127.0.0.1", "port": broker.port, "tls": True, "ca_file": str(authority)}
            )
            results[name] = by_part(await run_checks(cfg, Environment(timeout=3)))["broker"]
    finally:
        broker.kill()
    assert results["venue"].status == OK and "(TLS)" in results["venue"].detail
    assert results["other"].status == FAIL and "venue's CA" in results["other"].fix


async def test_a_simulated_camera_without_its_card_images_fails_and_says_where_it_looked(
    tmp_path, monkeypatch
):
    """The demo table's camera renders cards from a deck's images: with them gone the doctor must
    say so before the evening, not report the camera ok and leave the first deal to crash."""
    from hil.scene import load_deck

    cfg = load_config(write_config(tmp_path, camera="sim"))
    env = Environment(sys_module=tmp_path / "sys-module")
    assert by_part(await run_checks(cfg, env))["camera"].status == OK
    monkeypatch.setenv("SMART_TABLE_DECKS", str(tmp_path / "no-decks"))
    load_deck.cache_clear()  # the images loaded above would otherwise still be at hand
    try:
        camera = by_part(await run_checks(cfg, env))["camera"]
    finally:
        load_deck.cache_clear()
    assert camera.status == FAIL, camera.line()
    assert "no-decks" in camera.detail and "SMART_TABLE_DECKS" in camera.detail
