"""The table's connection to the broker (aiomqtt): publishes the outbox in order, receives commands.

One task owns the connection and reconnects with backoff forever; while it is down the outbox fills
on disk and the rest of the service does not notice. On every (re)connect it publishes `status`
= `online` (retained; the Last Will sets `offline`), subscribes to `cmd/+`, and sends the outbox from
its oldest row, deleting rows only after the broker's PUBACK, so rulings arrive in order and none is
lost (at least once; payloads carry `seq` for de-duplication).

MQTT 5 adds the response-topic and correlation-data properties to commands and replies; with MQTT
3.1.1 (the embedded broker) the JSON payload's `reply_to` and `id` carry the same information.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.mqtt.outbox import Outbox
from controller.mqtt.topics import TableTopics

log = logging.getLogger("smart_table.mqtt")


class _ShedCounter(logging.Filter):
    """aiomqtt logs every message it sheds from a full incoming queue; count them, log one in 1000."""

    def __init__(self) -> None:
        super().__init__()
        self.shed = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if "queue is full" in record.getMessage():
            self.shed += 1
            if self.shed % 1000 != 1:
                return False
            record.msg = f"event=mqtt_incoming_shed total={self.shed} (incoming queue full; commands dropped)"
            record.args = ()
        return True


@dataclass(frozen=True, slots=True)
class LinkSettings:
    host: str
    port: int = 1883
    username: str = ""
    password: str = ""
    tls: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    tls_insecure: bool = False
    protocol: str = "5"  # "5" or "3.1.1"
    keepalive: int = 30
    client_id: str = ""


@dataclass(frozen=True, slots=True)
class IncomingCommand:
    name: str
    payload: bytes
    response_topic: str | None = None
    correlation: bytes | None = None


class MqttLink:
    def __init__(
        self,
        settings: LinkSettings,
        topics: TableTopics,
        outbox: Outbox,
        on_command: Callable[[IncomingCommand], None],
        on_status: Callable[[str, str], None] | None = None,
        window: int = 64,
        max_incoming: int = 1000,
    ) -> None:
        self.settings = settings
        self.topics = topics
        self.outbox = outbox
        self.on_command = on_command
        self.on_status = on_status or (lambda status, detail: None)
        self.window = window
        self.max_incoming = max_incoming
        self.connected = False
        self.sent = 0
        self._wake = asyncio.Event()
        self._client: Any = None
        self._replies: asyncio.Queue[tuple[str, bytes, bytes | None]] = asyncio.Queue(maxsize=1024)
        self.replies_dropped = 0
        self._shed = _ShedCounter()
        self._client_log = logging.getLogger("smart_table.mqtt.client")
        self._client_log.addFilter(self._shed)

    @property
    def commands_shed(self) -> int:
        """Incoming messages dropped because the incoming queue was full (a flood of commands)."""
        return self._shed.shed

    def wake(self) -> None:
        """New rows are in the outbox."""
        self._wake.set()

    def _client_kwargs(self) -> dict[str, Any]:
        import aiomqtt

        s = self.settings
        kwargs: dict[str, Any] = {
            "hostname": s.host,
            "port": s.port,
            "identifier": s.client_id or None,
            "keepalive": s.keepalive,
            "will": aiomqtt.Will(self.topics.status, b"offline", qos=1, retain=True),
            "max_queued_incoming_messages": self.max_incoming,
            "timeout": 10,
            "logger": self._client_log,
        }
        if s.protocol == "5":
            kwargs["protocol"] = aiomqtt.ProtocolVersion.V5
            kwargs["clean_start"] = True
        else:
            kwargs["protocol"] = aiomqtt.ProtocolVersion.V311
            kwargs["clean_session"] = True
        if s.username:
            kwargs["username"] = s.username
            kwargs["password"] = s.password or None
        if s.tls:
            context = ssl.create_default_context(cafile=s.ca_file or None)
            if s.cert_file:
                context.load_cert_chain(s.cert_file, s.key_file or None)
            if s.tls_insecure:
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            kwargs["tls_context"] = context
            kwargs["tls_insecure"] = s.tls_insecure
        return kwargs

    async def run(self) -> None:
        """Connect, serve, reconnect: forever (cancel to stop)."""
        import aiomqtt

        delay = 0.2
        while True:
            try:
                async with aiomqtt.Client(**self._client_kwargs()) as client:
                    self._client = client
                    client.pending_calls_threshold = 4 * self.window
                    # subscribe first: a director who sees `online` can send a command at once
                    await client.subscribe(self.topics.commands, qos=1)
                    await client.publish(self.topics.status, b"online", qos=1, retain=True)
                    self.connected = True
                    delay = 0.2
                    self.on_status("ok", f"connected to {self.settings.host}:{self.settings.port}")
                    log.info(
                        "event=mqtt_connected host=%s port=%d backlog=%d",
                        self.settings.host,
                        self.settings.port,
                        len(self.outbox),
                    )
                    async with asyncio.TaskGroup() as group:
                        group.create_task(self._drain(client))
                        group.create_task(self._receive(client))
                        group.create_task(self._send_replies(client))
            except* (aiomqtt.MqttError, OSError, TimeoutError) as group_exc:
                reason = "; ".join(str(e) for e in group_exc.exceptions)[:200]
                self.connected = False
                self._client = None
                self.on_status("failed", f"broker unreachable: {reason}; outbox {len(self.outbox)} waiting")
                log.warning("event=mqtt_disconnected reason=%r retry_in=%.1f", reason, delay)
            self.connected = False
            self._client = None
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    async def _drain(self, client: Any) -> None:
        while True:
            rows = self.outbox.peek(self.window)
            if not rows:
                self._wake.clear()
                rows = self.outbox.peek(self.window)
                if not rows:
                    await self._wake.wait()
                    continue
            # paho sends in call order; the gather only overlaps the waits for the PUBACKs.
            await asyncio.gather(
                *(client.publish(r.topic, r.payload, qos=r.qos, retain=r.retain, timeout=30) for r in rows)
            )
            self.outbox.ack([r.id for r in rows])
            self.sent += len(rows)

    async def _receive(self, client: Any) -> None:
        async for message in client.messages:
            name = self.topics.command_name(str(message.topic))
            if name is None:
                continue
            props = message.properties
            response_topic = getattr(props, "ResponseTopic", None) if props is not None else None
            correlation = getattr(props, "CorrelationData", None) if props is not None else None
            payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
            try:
                self.on_command(IncomingCommand(name, payload, response_topic, correlation))
            except Exception:  # a bug in one command must not drop the connection
                log.exception("event=command_handler_failed command=%s", name)

    def reply(self, topic: str, payload: bytes, correlation: bytes | None = None) -> None:
        """Queue a reply; replies are not durable (the asker waits for them now or not at all)."""
        try:
            self._replies.put_nowait((topic, payload, correlation))
        except asyncio.QueueFull:
            self.replies_dropped += 1

    async def _send_replies(self, client: Any) -> None:
        """Replies in order, up to `window` awaiting their PUBACK at once."""
        while True:
            batch = [await self._replies.get()]
            while len(batch) < self.window and not self._replies.empty():
                batch.append(self._replies.get_nowait())
            await asyncio.gather(
                *(
                    client.publish(t, p, qos=1, properties=self._reply_properties(c), timeout=30)
                    for t, p, c in batch
                )
            )

    def _reply_properties(self, correlation: bytes | None) -> Any:
        if correlation is None or self.settings.protocol != "5":
            return None
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        properties = Properties(PacketTypes.PUBLISH)
        properties.CorrelationData = correlation
        return properties

    async def close(self) -> None:
        """A clean goodbye: `offline` retained (the will covers the unclean cases)."""
        client = self._client
        if client is not None and self.connected:
            with contextlib.suppress(Exception):
                await client.publish(self.topics.status, b"offline", qos=1, retain=True, timeout=2)
