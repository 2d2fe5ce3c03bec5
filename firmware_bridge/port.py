"""The real panel link: the panel's USB serial line, opened by the bridge itself.

Registered as the `panel.serial` device (pyproject.toml): a config's `devices.panel` that is a
port path (`/dev/ttyACM0`, `/dev/serial/by-id/...`), `serial:PATH` or a pyserial URL
(`socket://host:port`) names it. There is nothing to set up or release: the bridge opens, watches
and reopens the port.
"""

from __future__ import annotations

from typing import Self


class SerialPanel:
    """A panel on a serial port (meets controller.devices.PanelLink; the bridge's own settings, seats
    and baud rate, need nothing here)."""

    simulated = False

    def __init__(self, spec: str, options: object = None) -> None:
        port = spec.removeprefix("serial:")
        if not port.strip():
            raise ValueError(f"panel {spec!r}: no serial port named (serial:/dev/ttyACM0)")
        self._port = port

    @property
    def port(self) -> str:
        return self._port

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        return None
