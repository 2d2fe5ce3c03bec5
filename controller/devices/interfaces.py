"""What the table asks of its devices: the small typed surfaces every implementation meets.

A camera, card reader or panel link is whatever object has these methods; real hardware
(OpenCV/Picamera2, nfcpy, a serial port) and the simulated table's simulators meet them the same
way, so the service, vision and the panel bridge are written against these, never a simulator.
Implementations are found by name through `controller.devices.registry`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

if TYPE_CHECKING:
    import nfc
    import numpy as np

    Frame = np.ndarray  # a BGR uint8 picture, height x width x 3
else:
    Frame = Any


@runtime_checkable
class FrameSource(Protocol):
    """Pictures in order: a camera, a video file, a folder of images, a simulated table.

    `frames` yields (seconds since the first frame, BGR frame); it ends when a file ends and raises
    (naming the device) when a camera stops delivering.
    """

    def frames(self, fps: float | None = None) -> AsyncIterator[tuple[float, Frame]]: ...


@runtime_checkable
class ScriptedCamera(FrameSource, Protocol):
    """A camera read one picture at a time on the caller's clock: the simulated overhead camera.

    The service polls `frame()` at its own rate between pushed frames; `stopped` True makes it
    deliver nothing, which is how a hung camera is simulated. What lies on the table is scripted
    through the implementation's own methods (deal_to, board, move_button, ...).
    """

    stopped: bool

    def frame(self) -> tuple[Frame, dict[str, Any]]:
        """The picture now, and what is truly on the table (the simulator's ground truth)."""
        ...

    def problem(self) -> str | None:
        """Why it could not show the cards it is scripted to deal (its card images are missing), or
        None: the doctor asks before an evening, not the first deal."""
        ...


@runtime_checkable
class CardReader(Protocol):
    """An NFC reader as nfcpy drives it: the tap loop polls the frontend it opens.

    `frontend()` returns an opened `nfc.ContactlessFrontend` (for a simulated reader, one whose
    device is the simulated RF field), or raises `DeviceError` saying what to check.
    """

    def frontend(self) -> nfc.ContactlessFrontend: ...


@runtime_checkable
class PanelLink(Protocol):
    """Where the LED panel's serial line is. Entered, `port` is a path or pyserial URL the panel
    bridge opens; leaving it releases whatever the link set up (a simulated panel's firmware).

    `simulated` is True for a simulator, which the service then offers as `panel.sim` to the tests
    and `smart-table sim` (to press its buttons or unplug it).
    """

    simulated: bool

    @property
    def port(self) -> str: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc_info: object) -> None: ...


@dataclass(frozen=True)
class CameraOptions:
    """What a camera factory may need besides its spec; each factory uses the fields it knows."""

    fps: float = 10.0  # frames per second asked for (a simulated camera renders at this rate)
    timeout_s: float = 5.0  # a live camera silent this long has stopped
    seats: int = 6  # the table's seats (the simulated camera lays out this many)
    width: int = 1280  # a simulated camera's frame size
    height: int = 720


@dataclass(frozen=True)
class PanelOptions:
    """What a panel-link factory may need besides its spec."""

    seats: int = 10
    baudrate: int = 115200
