"""`smart-table doctor`: on an installed table, check every part a table needs, one line each, and
say how to fix what is wrong.

Run by the installer after docs/install.md, and by the unit before the service starts (the lines go
to the journal). Each check opens the real device the way the service would (camera frames, the NFC
reader through nfcpy, a handshake with the panel firmware, a connection to the broker with the
table's credentials and TLS), so a line that says ok means the service will find it working.

Exit code: 0 when nothing failed (warnings allowed), 1 when a check failed, 2 for a bad config.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

OK, WARN, FAIL, SKIP = "ok", "warn", "FAIL", "skip"
KERNEL_NFC_DRIVERS = ("pn533_usb", "pn533", "port100")  # take a USB reader before nfcpy can
BLACKLIST_FILE = "/etc/modprobe.d/smart-table-nfc.conf"
MIN_FREE_MB, LOW_FREE_MB = 100, 500


@dataclass(frozen=True)
class Check:
    part: str
    status: str  # ok | warn | FAIL | skip
    detail: str
    fix: str = ""

    def line(self) -> str:
        fix = f"  -> fix: {self.fix}" if self.fix and self.status in (WARN, FAIL) else ""
        return f"{self.status:4}  {self.part:8} {self.detail}{fix}"


@dataclass
class Environment:
    """What the checks look at outside the config; tests point these at a temporary tree."""

    sys_module: Path = Path("/sys/module")
    modprobe_d: Path = Path("/etc/modprobe.d")
    snapshot_dir: Path | None = None
    timeout: float = 6.0


# -- checks ---------------------------------------------------------------------------------------


async def check_camera(cfg: Any, env: Environment) -> Check:
    spec = cfg.devices.camera
    if spec == "none":
        return Check("camera", SKIP, "devices.camera = none: no camera on this table")
    if spec == "sim":
        return _check_sim_camera(cfg)
    if spec.startswith("picamera2"):
        try:
            import picamera2  # noqa: F401
        except ImportError:
            return Check(
                "camera",
                FAIL,
                f"{spec}: the picamera2 module is not importable from this venv",
                "sudo apt install python3-picamera2, and make the venv with "
                "`python3 -m venv --system-site-packages` (docs/install.md)",
            )
    from vision.sources import FrameSourceError, open_frames

    source = f"v4l2:{spec}" if spec.startswith("/dev/") else spec
    try:
        frames = open_frames(source, timeout_s=env.timeout)
        _, frame = await asyncio.wait_for(anext(frames), env.timeout)
        await frames.aclose()
    except (FrameSourceError, TimeoutError, StopAsyncIteration, OSError) as exc:
        return Check(
            "camera",
            FAIL,
            f"{spec}: no frame ({exc or 'timed out'})",
            "check the cable, `v4l2-ctl --list-devices`, the udev rule (/dev/smart-table/camera) "
            "and that the service's group may open it",
        )
    h, w = frame.shape[:2]
    written = _snapshot(cfg, frame, env.snapshot_dir)
    return Check("camera", OK, f"{spec}: delivers {w}x{h} frames{written}")


def _check_sim_camera(cfg: Any) -> Check:
    """The simulated camera opened as the service opens it, asked whether it can show cards."""
    from controller import devices
    from controller.service.sources import open_sim_camera

    try:
        trouble = open_sim_camera(cfg).problem()
    except devices.DeviceError as exc:
        return Check("camera", FAIL, f"simulated camera: {exc}", "reinstall the package (`make venv`)")
    if trouble:
        return Check(
            "camera",
            FAIL,
            f"simulated camera: {trouble}",
            "put the repository's data/decks beside the package",
        )
    return Check("camera", OK, "simulated camera (devices.camera = sim): frames come from the simulator")


def _snapshot(cfg: Any, frame: Any, folder: Path | None) -> str:
    """The frame and what the detector saw on it, for a person to look at."""
    if folder is None:
        return ""
    import cv2

    from vision.detect import Detector
    from vision.overlay import draw_overlay

    folder.mkdir(parents=True, exist_ok=True)
    layout = _layout(cfg, frame.shape[1], frame.shape[0])
    shot, overlay = folder / "camera.jpg", folder / "camera-overlay.jpg"
    cv2.imwrite(str(shot), frame)
    try:
        result = Detector(layout=layout).detect(frame)
        cv2.imwrite(str(overlay), draw_overlay(frame, result, layout))
    except Exception as exc:  # the snapshot still helps without the overlay
        return f"; snapshot {shot} (no overlay: {type(exc).__name__}: {exc})"
    return f"; snapshot {shot}, overlay {overlay}"


def _layout(cfg: Any, width: int = 1280, height: int = 720) -> Any:
    """The layout the service would use: the calibrated file, else the default for the seat count."""
    from vision.layout import default_layout, load_layout

    if cfg.devices.layout:
        return load_layout(cfg.devices.layout)
    return default_layout(cfg.table.seats, width, height)


def check_nfc(cfg: Any, env: Environment) -> Check:
    device = cfg.devices.nfc
    if device == "none":
        return Check("nfc", SKIP, "devices.nfc = none: no check-in at this table")
    loaded = [d for d in KERNEL_NFC_DRIVERS if (env.sys_module / d).exists()]
    if loaded and not device.startswith(("sim:", "tty:", "udp:")):
        lines = "\\n".join(f"blacklist {d}" for d in loaded)
        return Check(
            "nfc",
            FAIL,
            f"the kernel's {', '.join(loaded)} driver is loaded and takes the USB reader before nfcpy",
            f"printf '{lines}\\n' | sudo tee {BLACKLIST_FILE} && sudo modprobe -r {' '.join(loaded)}",
        )
    from controller.registry.reader import ReaderError, open_frontend

    try:
        clf = open_frontend(device)
    except ReaderError as exc:
        return Check("nfc", FAIL, str(exc), "plug the reader in; `lsusb`; docs/install.md, NFC reader")
    try:
        name = str(getattr(clf, "device", None) or device)
    finally:
        clf.close()
    blacklisted = _blacklisted(env.modprobe_d)
    missing = [d for d in ("pn533_usb", "port100") if d not in blacklisted]
    if missing and not device.startswith("sim:"):
        return Check(
            "nfc",
            WARN,
            f"{device}: {name} answers, but {', '.join(missing)} is not blacklisted: after a reboot "
            "the kernel may take the reader",
            f"printf 'blacklist pn533_usb\\nblacklist pn533\\nblacklist port100\\n' | sudo tee {BLACKLIST_FILE}",
        )
    return Check("nfc", OK, f"{device}: {name} answers")


def _blacklisted(folder: Path) -> set[str]:
    out: set[str] = set()
    for conf in sorted(folder.glob("*.conf")) if folder.is_dir() else []:
        try:
            text = conf.read_text(errors="replace")
        except OSError:
            continue
        for line in text.splitlines():
            words = line.split()
            if (
                len(words) >= 2
                and words[0] in ("blacklist", "install")
                and (words[0] == "blacklist" or "/bin/false" in line or "/bin/true" in line)
            ):
                out.add(words[1])
    return out


async def check_panel(cfg: Any, env: Environment) -> Check:
    port = cfg.devices.panel
    if port == "none":
        return Check("panel", SKIP, "devices.panel = none: no LED panel at this table")
    from controller import devices

    try:  # the link the service would open (a serial port, the simulator, a plug-in's)
        link = devices.open_panel(port, devices.PanelOptions(seats=cfg.table.seats))
    except devices.DeviceError as exc:
        return Check("panel", FAIL, str(exc), 'set devices.panel to a serial port, "sim" or "none"')
    if link.simulated:
        return Check("panel", OK, f"simulated panel (devices.panel = {port}): the firmware runs on a pty")
    port = link.port
    if "://" not in port and not Path(port).exists():
        return Check(
            "panel",
            FAIL,
            f"{port}: no such device",
            "plug the Pico into the Pi's USB; `ls -l /dev/ttyACM*`; the udev rule names it "
            "/dev/smart-table/panel (docs/panel.md)",
        )
    from firmware_bridge.bridge import PanelBridge

    try:
        async with PanelBridge(port, cfg.table.seats) as bridge:
            deadline = time.monotonic() + env.timeout
            while time.monotonic() < deadline and not bridge.connected:
                await asyncio.sleep(0.05)
            health = bridge.health
    except Exception as exc:
        return Check("panel", FAIL, f"{port}: cannot open ({exc})", "the service's group may open it (udev)")
    if not health.get("connected"):
        return Check(
            "panel",
            FAIL,
            f"{port}: the panel does not answer ({health.get('last_error') or 'no HELLO'})",
            "the Pico runs the panel firmware with link usb (docs/panel.md); a REPL on that port "
            "means main.py is missing or NEW HAND was held at power-up",
        )
    seats = health.get("panel_seats")
    warn = seats != cfg.table.seats
    return Check(
        "panel",
        WARN if warn else OK,
        f"{port}: firmware {health.get('fw_version')}, {seats} seats, {health.get('led_count')} LEDs, "
        f"boot {health.get('boot_counter')}",
        f'set "seats": {cfg.table.seats} in the Pico\'s panel_config.json' if warn else "",
    )


async def check_broker(cfg: Any, env: Environment) -> Check:
    b = cfg.broker
    if not b.host:
        return Check("broker", OK, "embedded broker (broker.host empty): the service starts its own")
    import aiomqtt

    from controller.service.config import read_secret

    try:
        password = read_secret(b.password_file)
    except OSError as exc:
        return Check(
            "broker", FAIL, f"broker.password_file {b.password_file}: {exc.strerror}", "create it, mode 0600"
        )
    import ssl

    try:
        login = b.login(password)
    except (OSError, ssl.SSLError) as exc:
        return Check("broker", FAIL, f"TLS files: {exc}", "check broker.ca_file/cert_file/key_file")
    where = f"{b.host}:{b.port}{' (TLS)' if b.tls else ''}{' as ' + b.username if b.username else ''}"
    try:
        async with aiomqtt.Client(
            **login, timeout=env.timeout, identifier=f"smart-table-doctor-{os.getpid()}"
        ):
            pass
    except aiomqtt.MqttError as exc:
        return Check(
            "broker",
            FAIL,
            f"{where}: {exc}",
            "the broker runs (`systemctl status mosquitto`), the host and port, the table's user and "
            "password (mosquitto_passwd), and for TLS the venue's CA (docs/mqtt.md)",
        )
    return Check("broker", OK, f"{where}: connected")


def check_clock() -> Check:
    timedatectl = shutil.which("timedatectl")
    if timedatectl:
        try:
            out = subprocess.run(
                [timedatectl, "show", "-p", "NTPSynchronized", "--value"],
                capture_output=True,
                text=True,
                timeout=5,
                # run inside the service too: systemd's tools report their own failure to $NOTIFY_SOCKET
                # ("ERRNO=112"), which would reach systemd as the service's state
                env={
                    k: v
                    for k, v in os.environ.items()
                    if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID")
                },
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            out = ""
        if out == "yes":
            return Check("clock", OK, "synchronised (NTP)")
        if out == "no":
            return Check(
                "clock",
                FAIL,
                "not synchronised: rulings and the event log would carry the wrong time",
                "sudo timedatectl set-ntp true; the Pi has no clock battery and needs the network",
            )
    if Path("/run/systemd/timesync/synchronized").exists():
        return Check("clock", OK, "synchronised (systemd-timesyncd)")
    return Check(
        "clock",
        WARN,
        "cannot tell whether the clock is synchronised (no timedatectl answer)",
        "sudo apt install systemd-timesyncd",
    )


def check_disk(cfg: Any) -> Check:
    folder = cfg.event_log_path().parent
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free_mb = shutil.disk_usage(probe).free // 2**20
    detail = f"{free_mb} MB free for the event log ({folder})"
    if free_mb < MIN_FREE_MB:
        return Check("disk", FAIL, detail, "free space: `sudo journalctl --vacuum-size=100M`, old archives")
    if free_mb < LOW_FREE_MB:
        return Check("disk", WARN, detail, "free some space before an event night")
    return Check("disk", OK, detail)


def check_secret_files(cfg: Any) -> Check:
    """The service's own rule (config.secret_file_problem): present, not empty, mode 0600."""
    from controller.service.config import secret_file_problem, secret_files

    named = secret_files(cfg)
    if not named:
        return Check("secrets", OK, "no key, password or token files configured")
    problems, fixes = [], []
    for key, path in named.items():
        if not os.path.exists(path):
            problems.append(f"{key} {path}: no such file")
            fixes.append(f"create {path}, mode 0600")
            continue
        problem = secret_file_problem(path)
        if problem:
            problems.append(f"{key}: {problem}")
            fixes.append(f"sudo chown smart-table: {path} && sudo chmod 600 {path}")
    if problems:
        return Check("secrets", FAIL, "; ".join(problems), "; ".join(fixes))
    return Check(
        "secrets", OK, f"{len(named)} file{'s' if len(named) > 1 else ''}, none readable by other users"
    )


def check_layout(cfg: Any) -> Check:
    if not cfg.devices.layout:
        if cfg.devices.camera in ("sim", "none"):
            return Check("layout", OK, "the simulated camera's default layout")
        return Check(
            "layout",
            WARN,
            "not calibrated: the default layout assumes the camera exactly over the table's centre",
            "smart-table vision calibrate (docs/vision.md), then devices.layout in table.toml",
        )
    from vision.layout import LayoutError

    try:
        layout = _layout(cfg)
    except (LayoutError, OSError, ValueError) as exc:
        return Check("layout", FAIL, f"{cfg.devices.layout}: {exc}", "run smart-table vision calibrate again")
    seats = len(layout.seat_zones)
    if seats != cfg.table.seats:
        return Check(
            "layout",
            FAIL,
            f"{cfg.devices.layout}: calibrated for {seats} seats, the table has {cfg.table.seats}",
            "calibrate again with the table's seat count",
        )
    return Check("layout", OK, f"{cfg.devices.layout}: calibrated, {seats} seat zones")


def start_checks(cfg: Any) -> list[Check]:
    """The checks the service runs itself at every start and shows in its health (`doctor` part): those
    that hold no device or connection the service is about to open (the camera, reader, panel and broker
    are the service's own parts in health)."""
    return [check_clock(), check_disk(cfg), check_secret_files(cfg), check_layout(cfg)]


def health_of(checks: list[Check]) -> tuple[str, str]:
    """(status, detail) for the service's health: failed while any check fails, each with its fix."""
    bad = [c for c in checks if c.status == FAIL]
    warn = [c for c in checks if c.status == WARN]
    if bad:
        return "failed", "; ".join(
            f"{c.part}: {c.detail} (fix: {c.fix})" if c.fix else f"{c.part}: {c.detail}" for c in bad
        )
    parts = ", ".join(c.part for c in checks)
    if warn:
        return "ok", f"{parts} checked; warnings: " + "; ".join(f"{c.part}: {c.detail}" for c in warn)
    return "ok", f"{parts}: all passed"


async def run_checks(cfg: Any, env: Environment) -> list[Check]:
    """Every check, in the order an installer fixes things."""
    out = [check_clock(), check_disk(cfg), check_secret_files(cfg)]
    out.append(await check_broker(cfg, env))
    out.append(await check_camera(cfg, env))
    out.append(check_layout(cfg))
    out.append(await asyncio.to_thread(check_nfc, cfg, env))
    out.append(await check_panel(cfg, env))
    return out


# -- command --------------------------------------------------------------------------------------


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "doctor",
        help="check an installed table: camera, NFC reader, panel, broker, clock, disk, files, layout",
        description="Check every part of an installed table and print one line each, with the fix for "
        "what is wrong. Exit 0 when nothing failed, 1 when a check failed, 2 for a bad config.",
    )
    p.add_argument("--config", default="/etc/smart-table/table.toml", help="the table's table.toml")
    p.add_argument("--snapshot", metavar="DIR", help="write the camera's frame and overlay here")
    p.add_argument("--json", action="store_true", help="one JSON object per check")
    p.add_argument("--timeout", type=float, default=6.0, help="seconds each device may take (default 6)")
    p.set_defaults(handler=_doctor)


def _doctor(args: argparse.Namespace) -> int:
    from controller.service.config import load_config_reporting

    cfg = load_config_reporting(args.config, check_secrets=False)
    if cfg is None:
        return 2
    env = Environment(snapshot_dir=Path(args.snapshot) if args.snapshot else None, timeout=args.timeout)
    checks = asyncio.run(run_checks(cfg, env))
    for c in checks:
        print(json.dumps(asdict(c)) if args.json else c.line(), flush=True)
    failed = [c for c in checks if c.status == FAIL]
    if not args.json:
        print(
            f"{len(checks) - len(failed)} of {len(checks)} checks passed"
            + (", see the fixes above" if failed else "")
        )
    return 1 if failed else 0
