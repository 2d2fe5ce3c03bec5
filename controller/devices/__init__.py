"""Devices behind one interface: typed surfaces (`interfaces`) and implementations by name (`registry`).

    from controller import devices
    cam = devices.open_camera("v4l2:/dev/video0", devices.CameraOptions(fps=10))
    async for t, frame in cam.frames(): ...

Real implementations (vision.sources' cameras, controller.registry.reader's nfcpy reader,
firmware_bridge.port's serial line) and the simulators of the simulated table register the same way, as
`smart_table.devices` entry points in pyproject.toml; code that uses a device names it by its
config string and never imports the package that provides it.
"""

from controller.devices.interfaces import (
    CameraOptions,
    CardReader,
    FrameSource,
    PanelLink,
    PanelOptions,
    ScriptedCamera,
)
from controller.devices.registry import (
    GROUP,
    KINDS,
    DeviceError,
    DeviceUnavailable,
    UnknownDevice,
    names,
    open_camera,
    open_panel,
    open_reader,
    problem,
    register,
    resolve,
    unregister,
)

__all__ = [
    "GROUP",
    "KINDS",
    "CameraOptions",
    "CardReader",
    "DeviceError",
    "DeviceUnavailable",
    "FrameSource",
    "PanelLink",
    "PanelOptions",
    "ScriptedCamera",
    "UnknownDevice",
    "names",
    "open_camera",
    "open_panel",
    "open_reader",
    "problem",
    "register",
    "resolve",
    "unregister",
]
