"""Devices by name: a config string (`sim`, `v4l2:/dev/video0`, `tty:AMA0:pn532`, `/dev/ttyACM0`)
names an implementation, which is found here and built by its factory.

Implementations register as Python entry points of the group `smart_table.devices`, named
`<kind>.<name>` (kind: camera, reader, panel), in pyproject.toml; the real ones live with the code
that drives the hardware, the simulators with the simulated table, so nothing that uses a device
imports the package that provides it. `register()` adds one in-process (a test's fake, a plug-in under
development). A name that is not registered raises `UnknownDevice` naming what was asked for and
what is registered.

Factories: camera `(spec, CameraOptions) -> FrameSource`, reader `(spec) -> CardReader`, panel
`(spec, PanelOptions) -> PanelLink`. Each gets the whole spec (normalised: `/dev/video0` becomes
`v4l2:/dev/video0`, a panel's `/dev/ttyACM0` stays as it is) and raises `DeviceError` (or any
ValueError, which becomes one) for a bad one.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from controller.devices.interfaces import (
    CameraOptions,
    CardReader,
    FrameSource,
    PanelLink,
    PanelOptions,
)

GROUP = "smart_table.devices"
KINDS = ("camera", "reader", "panel")
_WHAT = {"camera": "camera", "reader": "card reader", "panel": "panel link"}
_local: dict[tuple[str, str], Callable[..., Any]] = {}


class DeviceError(ValueError):
    """A device spec that cannot be used; the message names the spec and what is wrong with it."""


class UnknownDevice(DeviceError, LookupError):
    """No implementation registered under that name; the message lists the registered ones."""


class DeviceUnavailable(DeviceError):
    """Registered, but its code cannot be loaded in this installation (a package missing)."""


@functools.cache
def _entry_points() -> dict[tuple[str, str], EntryPoint]:
    found: dict[tuple[str, str], EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        kind, _, name = ep.name.partition(".")
        if kind in KINDS and name:
            found[(kind, name)] = ep
    return found


def register(kind: str, name: str, factory: Callable[..., Any]) -> None:
    """Add (or replace) an implementation in this process, ahead of the installed entry points."""
    if kind not in KINDS:
        raise ValueError(f"device kind {kind!r}: one of {', '.join(KINDS)}")
    _local[(kind, name)] = factory


def unregister(kind: str, name: str) -> None:
    """Forget an implementation added with `register` (the installed ones stay)."""
    _local.pop((kind, name), None)


def names(kind: str) -> list[str]:
    """The registered names of a kind, sorted."""
    return sorted({n for k, n in (*_entry_points(), *_local) if k == kind})


def resolve(kind: str, spec: str) -> tuple[str, str]:
    """(registered name, normalised spec) for a config string; UnknownDevice when none fits."""
    spec = spec.strip()
    if kind == "camera":
        if spec.startswith("/dev/"):
            spec = f"v4l2:{spec}"
        name = spec.partition(":")[0] if ":" in spec or spec == "sim" else ""
    elif kind == "panel":
        head, colon, _ = spec.partition(":")
        if head == "sim":
            name = "sim"
        elif colon and not spec.startswith("/") and "://" not in spec:
            name = head  # KIND:ARGUMENT (serial:/dev/ttyACM0, or a plug-in's)
        else:
            name = "serial"  # a port path (/dev/ttyACM0, /dev/serial/by-id/...) or a pyserial URL
    elif kind == "reader":
        name = spec.partition(":")[0]
    else:
        raise ValueError(f"device kind {kind!r}: one of {', '.join(KINDS)}")
    if not name or name not in names(kind):
        raise UnknownDevice(_unknown(kind, spec, name))
    return name, spec


def _unknown(kind: str, spec: str, name: str) -> str:
    known = names(kind)
    what = _WHAT[kind]
    listed = ", ".join(known) if known else "none"
    if not known:
        hint = (
            f"no {what} is registered at all: the installed smart-table predates the entry points in "
            "pyproject.toml; reinstall it (`make venv`, or `pip install -e .`)"
        )
    else:
        hint = f"registered: {listed}; plug-ins add more as '{GROUP}' entry points named '{kind}.<name>'"
    if not name:
        return f"{what} {spec!r}: expected KIND:ARGUMENT ({hint})"
    return f"{what} {spec!r}: unknown kind {name!r} ({hint})"


def factory(kind: str, name: str) -> Callable[..., Any]:
    """The factory registered as `<kind>.<name>`; UnknownDevice or DeviceUnavailable when there is none."""
    if (kind, name) in _local:
        return _local[(kind, name)]
    ep = _entry_points().get((kind, name))
    if ep is None:
        raise UnknownDevice(_unknown(kind, name, name))
    try:
        return ep.load()
    except (ImportError, AttributeError) as exc:
        raise DeviceUnavailable(
            f"{_WHAT[kind]} {name!r} is registered ({ep.value}) but cannot be loaded here: {exc}"
        ) from None


def _build(kind: str, spec: str, *args: Any) -> Any:
    name, spec = resolve(kind, spec)
    make = factory(kind, name)
    try:
        return make(spec, *args)
    except DeviceError:
        raise
    except ValueError as exc:  # a factory's word on a bad spec (it need not import this package)
        raise DeviceError(str(exc)) from exc


def open_camera(spec: str, options: CameraOptions | None = None) -> FrameSource:
    """The frame source a camera spec names (see vision.sources for the shipped kinds)."""
    return _build("camera", spec, options or CameraOptions())


def open_reader(spec: str) -> CardReader:
    """The card reader an NFC spec names (`sim:<name>`, or an nfcpy path: usb, tty:..., udp:...)."""
    return _build("reader", spec)


def open_panel(spec: str, options: PanelOptions | None = None) -> PanelLink:
    """The panel link a panel spec names (`sim`, or a serial port path / pyserial URL)."""
    return _build("panel", spec, options or PanelOptions())


def problem(kind: str, spec: str) -> str | None:
    """Why `spec` names no registered device of `kind`, or None (the configuration check)."""
    try:
        resolve(kind, spec)
    except UnknownDevice as exc:
        return str(exc)
    return None
