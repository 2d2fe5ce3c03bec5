"""The simulators as devices: registered by name (pyproject.toml's `smart_table.devices` entry
points `camera.sim`, `reader.sim`, `panel.sim`), so the service, vision and the panel CLI reach them
through controller.devices like any real device and never import `hil`.

  camera `sim`         the scriptable overhead camera (hil.camera.SimulatedCamera), empty until scripted
  camera `sim:<seed>`  the simulated camera dealing scripted hands forever (hil.camera.DealingCamera)
  reader `sim:<name>`  the simulated RF field called <name> in this process; a name with a '/' is a
                       spool folder other processes drop taps into (hil.nfc.SimulatedReader)
  panel  `sim`         the real panel firmware under CPython on a pseudo-terminal (hil.panel_sim)
"""

from __future__ import annotations

from controller.devices import CameraOptions, DeviceError, PanelOptions


def sim_camera(spec: str, options: CameraOptions):
    from hil.camera import DealingCamera, SimulatedCamera

    _, colon, arg = spec.partition(":")
    if not colon:
        return SimulatedCamera(
            seats=options.seats, width=options.width, height=options.height, fps=options.fps
        )
    try:
        seed = int(arg or 0)
    except ValueError:
        raise DeviceError(f"sim source {spec!r}: seed must be an integer") from None
    return DealingCamera(seed, fps=options.fps)


def sim_reader(spec: str):
    from hil.nfc import SimulatedReader

    name = spec.partition(":")[2]
    if not name:
        raise DeviceError("simulated reader needs a name or spool directory: sim:<name>|sim:<dir>")
    return SimulatedReader.named(name)


def sim_panel(spec: str, options: PanelOptions):
    from hil.panel_sim import SimulatedPanel

    return SimulatedPanel(options.seats, baudrate=options.baudrate)
