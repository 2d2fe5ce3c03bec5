"""An MQTT test client that records what a table publishes (aiomqtt, any broker)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any, Self

import aiomqtt


class Recorder:
    """Subscribes to a table's prefix and keeps every message; reconnects if the broker goes away.

    The connect/reconnect loop is shared: a subclass changes what it subscribes to
    (`subscriptions`), how it connects (`client_options`) and what it keeps (`on_message`)."""

    connect_timeout = 5.0  # seconds `async with` waits for the first connection
    retry_delay = 0.05  # seconds between reconnection attempts

    def __init__(self, port: int, prefix: str, protocol: str = "3.1.1", **kw: Any) -> None:
        self.port, self.prefix, self.kw = port, prefix, kw
        self.protocol = aiomqtt.ProtocolVersion.V5 if protocol == "5" else aiomqtt.ProtocolVersion.V311
        self.messages: list[tuple[str, bytes, Any]] = []
        self.connected = asyncio.Event()
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.client: aiomqtt.Client | None = None

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._run())
        async with asyncio.timeout(self.connect_timeout):
            await self.connected.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    def client_options(self) -> dict[str, Any]:
        return {
            "identifier": self.kw.get("identifier"),
            "clean_session": self.kw.get("clean_session"),
            **self.kw.get("auth", {}),
        }

    def subscriptions(self) -> list[tuple[str, int]]:
        return [(self.prefix + "/#", 1)]

    def on_message(self, topic: str, payload: bytes, properties: Any) -> None:
        self.messages.append((topic, payload, properties))

    async def _run(self) -> None:
        while True:
            try:
                async with aiomqtt.Client(
                    "127.0.0.1", self.port, protocol=self.protocol, timeout=5, **self.client_options()
                ) as c:
                    await c.subscribe(self.subscriptions())
                    self.client = c
                    self.connected.set()
                    async for m in c.messages:
                        self.on_message(str(m.topic), bytes(m.payload), m.properties)
                        self._changed.set()
            except aiomqtt.MqttError:
                self.connected.clear()
                self.client = None
                await asyncio.sleep(self.retry_delay)

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> None:
        """Until `predicate(self)` holds: checked at each message, and every 0.2 s for what changes
        without one."""
        async with asyncio.timeout(timeout):
            while not predicate(self):
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.2):
                        await self._changed.wait()

    def docs(self, suffix: str) -> list[dict[str, Any]]:
        topic = f"{self.prefix}/{suffix}"
        return [json.loads(p) for t, p, _ in self.messages if t == topic]

    def payloads(self, suffix: str) -> list[bytes]:
        return [p for t, p, _ in self.messages if t == f"{self.prefix}/{suffix}"]

    async def command(self, name: str, body: dict[str, Any] | bytes, timeout: float = 5.0) -> dict[str, Any]:
        """Publish cmd/<name> and wait for the reply with the same id (JSON fallback, MQTT 3.1.1)."""
        assert self.client is not None
        ident = f"req-{len(self.messages)}-{name}"
        if isinstance(body, dict):
            body = {"id": ident, "reply_to": f"{self.prefix}/reply/test", **body}
            payload = json.dumps(body).encode()
        else:
            payload, ident = body, None
        seen = len(self.messages)
        await self.client.publish(f"{self.prefix}/cmd/{name}", payload, qos=1)
        found: list[dict[str, Any]] = []

        def answered(rec: Recorder) -> bool:
            nonlocal seen
            for t, p, _ in rec.messages[seen:]:
                if t.startswith(f"{self.prefix}/reply"):
                    doc = json.loads(p)
                    if ident is None or doc.get("id") == ident:
                        found.append(doc)
            seen = len(rec.messages)
            return bool(found)

        await self.wait_for(answered, timeout)
        return found[0]
