"""The engine's inbox: one bounded queue per source, drained round-robin.

A source that produces faster than the engine consumes waits on its own full queue; the other
sources' queues still have room, and the engine takes one item from each non-empty queue in turn,
so a burst of director commands cannot starve the camera (and a flood from one source is bounded).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Item:
    source: str
    line: dict[str, Any]
    # "in": an input line for the engine; "info": a line only logged and shown (NFC check-in results)
    kind: str = "in"
    # resolved with the engine's output lines once they are logged
    future: asyncio.Future[list[dict[str, Any]]] | None = None
    t: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)


class Inbox:
    def __init__(self, size: int, sizes: dict[str, int] | None = None) -> None:
        self.size = size
        self.sizes = sizes or {}
        self.queues: dict[str, asyncio.Queue[Item]] = {}
        self._ready = asyncio.Event()
        self._next = 0

    def queue(self, source: str) -> asyncio.Queue[Item]:
        if source not in self.queues:
            self.queues[source] = asyncio.Queue(maxsize=self.sizes.get(source, self.size))
        return self.queues[source]

    async def put(self, item: Item) -> None:
        """Wait for room in this source's queue (only this source waits)."""
        await self.queue(item.source).put(item)
        self._ready.set()

    def try_put(self, item: Item) -> bool:
        """Queue without waiting; False when this source's queue is full."""
        try:
            self.queue(item.source).put_nowait(item)
        except asyncio.QueueFull:
            return False
        self._ready.set()
        return True

    def pending(self) -> int:
        return sum(q.qsize() for q in self.queues.values())

    def _take(self, limit: int) -> list[Item]:
        batch: list[Item] = []
        queues = list(self.queues.values())
        if not queues:
            return batch
        progressed = True
        while len(batch) < limit and progressed:
            progressed = False
            for k in range(len(queues)):
                q = queues[(self._next + k) % len(queues)]
                if not q.empty():
                    batch.append(q.get_nowait())
                    progressed = True
                    if len(batch) >= limit:
                        break
            self._next = (self._next + 1) % len(queues)
        return batch

    async def get_batch(self, limit: int = 64) -> list[Item]:
        """At least one item, at most `limit`, fairly across sources."""
        while True:
            batch = self._take(limit)
            if batch:
                return batch
            self._ready.clear()
            if self.pending():
                continue
            await self._ready.wait()
