"""Devices by name (controller/devices): every shipped name resolves to an implementation that meets
its interface, an unknown name is refused saying what is registered, and the configuration check
and vision.sources go through the same registry."""

from __future__ import annotations

import tomllib
from importlib.metadata import entry_points
from pathlib import Path

import cv2
import numpy as np
import pytest

from controller import devices
from controller.devices import registry
from controller.service.config import ConfigError, parse_config
from vision.sources import FrameSourceError, open_frames

REPO = Path(__file__).resolve().parents[2]
SHIPPED = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][devices.GROUP]


def test_the_installed_entry_points_are_the_ones_pyproject_ships():
    installed = {ep.name: ep.value for ep in entry_points(group=devices.GROUP)}
    assert installed == SHIPPED, (
        "the installed smart-table's device entry points differ from pyproject.toml's: "
        "reinstall it (`make venv`, or `pip install -e .`)"
    )
    assert {name.partition(".")[0] for name in SHIPPED} == set(devices.KINDS)


def test_every_shipped_name_loads():
    for full in SHIPPED:
        kind, _, name = full.partition(".")
        assert name in devices.names(kind)
        assert callable(registry.factory(kind, name)), full


async def test_every_shipped_camera_is_a_frame_source(tmp_path):
    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 25, (64, 48))
    writer.write(np.zeros((48, 64, 3), np.uint8))
    writer.release()
    specs = {
        "v4l2": ["v4l2:/dev/video0", "/dev/video0", "v4l2:0"],
        "picamera2": ["picamera2:0"],
        "video": [f"video:{video}", f"video:{video}?fast"],
        "dir": [f"dir:{tmp_path}"],
        "sim": ["sim", "sim:3"],
    }
    assert sorted(specs) == devices.names("camera")  # a new shipped camera needs a line here
    for name, examples in specs.items():
        for spec in examples:
            assert devices.resolve("camera", spec)[0] == name, spec
            source = devices.open_camera(spec, devices.CameraOptions(width=320, height=180))
            assert isinstance(source, devices.FrameSource), spec
    scripted = devices.open_camera("sim", devices.CameraOptions(seats=9, width=320, height=180))
    assert isinstance(scripted, devices.ScriptedCamera)
    frame, truth = scripted.frame()
    assert frame.shape == (180, 320, 3) and truth["cards"] == []
    dealing = devices.open_camera("sim:3")
    async for _t, frame in dealing.frames(fps=500):
        assert frame.ndim == 3
        break


def test_every_shipped_reader_is_a_card_reader():
    specs = {
        "usb": ["usb", "usb:054c:06c3"],
        "tty": ["tty:AMA0:pn532", "tty:USB0:pn532"],
        "udp": ["udp:localhost:54321"],
        "sim": ["sim:registry-test", "sim:/tmp/spool-that-is-only-named"],
    }
    assert sorted(specs) == devices.names("reader")
    for name, examples in specs.items():
        for spec in examples:
            assert devices.resolve("reader", spec) == (name, spec)
    for spec in ("usb", "tty:AMA0:pn532", "udp:localhost:54321", "sim:registry-test"):
        assert isinstance(devices.open_reader(spec), devices.CardReader), spec
    clf = devices.open_reader("sim:registry-test").frontend()
    assert clf.device is not None  # a ContactlessFrontend on the simulated field, opened
    with pytest.raises(devices.DeviceError, match="simulated reader needs a name"):
        devices.open_reader("sim:")


async def test_every_shipped_panel_link_opens():
    specs = {
        "serial": [
            "/dev/ttyACM0",
            "/dev/serial/by-id/usb-panel",
            "serial:/dev/ttyACM0",
            "socket://h:9",
            "ttyS0",
        ],
        "sim": ["sim"],
    }
    assert sorted(specs) == devices.names("panel")
    for name, examples in specs.items():
        for spec in examples:
            assert devices.resolve("panel", spec)[0] == name, spec
    link = devices.open_panel("serial:/dev/ttyACM0")
    assert isinstance(link, devices.PanelLink) and not link.simulated
    async with link:
        assert link.port == "/dev/ttyACM0"
    async with devices.open_panel("sim", devices.PanelOptions(seats=6)) as sim:
        assert sim.simulated and Path(sim.port).exists()  # the firmware runs behind a pty
    assert not Path(sim.port).exists()


@pytest.mark.parametrize(
    ("kind", "spec", "wrong"),
    [
        ("camera", "webcam:0", "webcam"),
        ("reader", "pcsc:0", "pcsc"),
        ("panel", "bluetooth:aa:bb", "bluetooth"),
    ],
)
def test_an_unknown_name_is_refused_naming_what_is_registered(kind, spec, wrong):
    opener = {"camera": devices.open_camera, "reader": devices.open_reader, "panel": devices.open_panel}[kind]
    with pytest.raises(devices.UnknownDevice) as err:
        opener(spec)
    text = str(err.value)
    assert f"{spec!r}: unknown kind {wrong!r}" in text
    assert f"registered: {', '.join(devices.names(kind))}" in text
    assert f"'{devices.GROUP}' entry points named '{kind}.<name>'" in text


def test_a_camera_without_a_kind_says_what_is_expected():
    with pytest.raises(devices.UnknownDevice, match=r"camera 'webcam': expected KIND:ARGUMENT"):
        devices.open_camera("webcam")


def test_the_configuration_names_unknown_devices_with_their_key():
    with pytest.raises(ConfigError) as err:
        parse_config({"devices": {"camera": "webcam:0", "nfc": "pcsc:0", "panel": "bluetooth:x"}}, "t.toml")
    text = str(err.value)
    assert "t.toml: devices.camera: camera 'webcam:0': unknown kind 'webcam'" in text
    assert "devices.nfc: card reader 'pcsc:0': unknown kind 'pcsc'" in text
    assert "devices.panel: panel link 'bluetooth:x': unknown kind 'bluetooth'" in text
    ok = parse_config({"devices": {"camera": "none", "nfc": "usb", "panel": "/dev/ttyACM0"}}, "t.toml")
    assert ok.devices.nfc == "usb"


async def test_a_plug_in_registered_by_name_is_used_everywhere():
    class Flat:
        def __init__(self, spec: str, options: devices.CameraOptions) -> None:
            self.value = int(spec.partition(":")[2])

        async def frames(self, fps=None):
            for _ in range(2):
                yield 0.0, np.full((8, 8, 3), self.value, np.uint8)

    devices.register("camera", "flat", Flat)
    try:
        assert "flat" in devices.names("camera")
        parse_config({"devices": {"camera": "flat:7"}}, "t.toml")  # accepted by the configuration check
        got = [int(f[0, 0, 0]) async for _t, f in open_frames("flat:7")]
        assert got == [7, 7]
    finally:
        devices.unregister("camera", "flat")
    with pytest.raises(FrameSourceError, match="unknown kind 'flat'"):
        open_frames("flat:7")


def test_a_registered_device_that_cannot_load_says_so(monkeypatch):
    from importlib.metadata import EntryPoint

    broken = EntryPoint(name="camera.broken", value="no_such_module_for_tests:make", group=devices.GROUP)
    table = {**registry._entry_points(), ("camera", "broken"): broken}
    monkeypatch.setattr(registry, "_entry_points", lambda: table)
    with pytest.raises(
        devices.DeviceUnavailable,
        match=r"camera 'broken' is registered \(no_such_module_for_tests:make\) but cannot be loaded here",
    ):
        devices.open_camera("broken:0")


def test_a_bad_argument_to_a_known_kind_is_a_device_error():
    with pytest.raises(devices.DeviceError, match=r"panel 'serial:': no serial port named"):
        devices.open_panel("serial:")
    with pytest.raises(devices.DeviceError, match=r"sim source 'sim:x': seed must be an integer"):
        devices.open_camera("sim:x")


def test_panel_sim_command_runs_the_registered_simulator():
    """`smart-table panel sim` (firmware_bridge) gets its simulated panel from the registry."""
    import subprocess
    import sys

    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "panel", "sim", "--seats", "4"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = proc.stdout.readline()
        assert first.startswith("panel port: "), first + proc.stderr.read()
        assert Path(first.removeprefix("panel port: ").strip()).exists()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
