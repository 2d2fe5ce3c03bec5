"""Health of each part of the service (camera, NFC, panel, MQTT, engine), as the director sees it.

`ok` works; `degraded` works partly or late (camera stalled, panel reconnecting); `failed` does not
work and is being retried; `unavailable` cannot work in this installation (a package not installed,
a device set to `none`). A change is logged once (key=value) and lands in the retained `state`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger("smart_table.health")
STATUSES = ("starting", "ok", "degraded", "failed", "unavailable", "disabled")


@dataclass(slots=True)
class SourceHealth:
    name: str
    status: str = "starting"
    detail: str = ""
    since: float = field(default_factory=time.time)
    counters: dict[str, int] = field(default_factory=dict)
    on_change: Callable[[SourceHealth], None] | None = None

    def set(self, status: str, detail: str = "") -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown health status {status!r}")
        if (status, detail) == (self.status, self.detail):
            return
        self.status, self.detail, self.since = status, detail, time.time()
        level = logging.INFO if status in ("ok", "disabled", "starting") else logging.WARNING
        log.log(level, "event=health source=%s status=%s detail=%r", self.name, status, detail)
        if self.on_change is not None:
            self.on_change(self)

    def count(self, key: str, n: int = 1) -> None:
        self.counters[key] = self.counters.get(key, 0) + n

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "detail": self.detail, "since": round(self.since, 3), **self.counters}

    @property
    def settled(self) -> bool:
        """Opened, or known not to open: what READY waits for."""
        return self.status != "starting"


class HealthBoard:
    """All parts' health; `changed` is called on any change (the service republishes its state)."""

    def __init__(self, on_change: Callable[[], None] | None = None) -> None:
        self.parts: dict[str, SourceHealth] = {}
        self.on_change = on_change

    def part(self, name: str) -> SourceHealth:
        if name not in self.parts:
            self.parts[name] = SourceHealth(name, on_change=lambda _h: self._changed())
        return self.parts[name]

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    def as_dict(self) -> dict[str, Any]:
        return {name: h.as_dict() for name, h in sorted(self.parts.items())}

    def summary(self) -> str:
        return " ".join(f"{n}={h.status}" for n, h in sorted(self.parts.items()))
