"""The table's connection to the broker (aiomqtt): publishes the outbox in order, receives commands.

One task owns the connection and reconnects with backoff forever; while it is down the outbox fills
on disk and the rest of the service does not notice. On every (re)connect it publishes `status`
= `online` (retained; the Last Will sets `offline`), subscribes to `cmd/+`, and sends the outbox from
its oldest row, deleting rows only after the broker's PUBACK, so rulings arrive in order and none is
lost (at least once; payloads carry `seq` for de-duplication).

MQTT 5 adds the response-topic and correlation-data properties to commands and replies; with MQTT
3.1.1 (the embedded broker) the JSON payload's `reply_to` and `id` carry the same information.

Commands survive a restart of the table: with an external broker the session is persistent
(`clean_start` off and a session expiry with MQTT 5, `clean_session` off with 3.1.1), and a command
is acknowledged to the broker only once the service has logged (or answered) it (`IncomingCommand.ack`),
so one the table had not handled when it died is delivered again when it is back.

Nothing that reaches the client may end the link: reply topics and payloads are checked before they
are handed to paho (which raises on a wildcard or a lone surrogate), and any failure inside the
connection, network or not, closes it (saying `offline`) and reconnects with backoff, logged once
per cause and counted (`crashes`, `reconnects`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.mqtt.outbox import Outbox
from controller.mqtt.topics import TableTopics, valid_topic_name
from controller.tasks import run_together, stopping

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
class BrokerConfig:
    """Where the broker is and how to log in: a config file's `[broker]` section (checked key by key
    by `controller.service.config`) and what `MqttLink`, doctor and Home Assistant connect with. The
    password stays in its file (`password_file`) and is read by whoever connects."""

    # empty: start the embedded broker (zero-setup demo) on embedded_bind:embedded_port
    host: str = ""
    port: int = 1883
    embedded_bind: str = "127.0.0.1"
    embedded_port: int = 1883
    username: str = ""
    password_file: str = ""
    tls: bool = False
    ca_file: str = ""
    cert_file: str = ""
    key_file: str = ""
    tls_insecure: bool = False
    # "auto": MQTT 5 with an external broker, 3.1.1 with the embedded one; the link gets "5" or "3.1.1"
    protocol: str = "auto"
    keepalive: int = 30
    client_id: str = ""
    # seconds the broker keeps the table's session (commands sent while it restarts wait there); 0: clean
    session_expiry: int = 3600

    def tls_context(self) -> ssl.SSLContext | None:
        """The TLS context `tls` asks for (None without TLS); raises OSError or ssl.SSLError for a
        CA, certificate or key file that cannot be used."""
        if not self.tls:
            return None
        context = ssl.create_default_context(cafile=self.ca_file or None)
        if self.cert_file:
            context.load_cert_chain(self.cert_file, self.key_file or None)
        if self.tls_insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    def login(self, password: str) -> dict[str, Any]:
        """`aiomqtt.Client`'s keyword arguments for where the broker is and how to log in: host and port,
        the user and `password` (read from `password_file` by the caller) when there is a user, and the
        TLS context when `tls` is on (raises as `tls_context` does). Every client of the table's and the
        floor's brokers logs in through this."""
        kwargs: dict[str, Any] = {"hostname": self.host, "port": self.port}
        if self.username:
            kwargs["username"] = self.username
            kwargs["password"] = password or None
        if self.tls:
            kwargs["tls_context"] = self.tls_context()
            kwargs["tls_insecure"] = self.tls_insecure
        return kwargs


def _no_ack() -> None:
    return None


@dataclass(frozen=True, slots=True)
class IncomingCommand:
    name: str
    payload: bytes
    response_topic: str | None = None
    correlation: bytes | None = None
    # tell the broker the command is handled (logged or answered); until then it is redelivered
    ack: Callable[[], None] = _no_ack
    # the packet id and DUP flag: a command the broker delivers again (the table died before its
    # ack) comes back with DUP set and the same packet id, so one without an `id` is still known
    mid: int = 0
    dup: bool = False


class MqttLink:
    def __init__(
        self,
        settings: BrokerConfig,
        topics: TableTopics,
        outbox: Outbox,
        on_command: Callable[[IncomingCommand], None],
        on_status: Callable[[str, str], None] | None = None,
        window: int = 64,
        max_incoming: int = 1000,
        password: str = "",
    ) -> None:
        self.settings = settings
        self.password = password
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
        self._dups: set[int] = set()  # packet ids paho delivered with DUP set, not yet handed on
        self._replies: asyncio.Queue[tuple[str, bytes, bytes | None, bool]] = asyncio.Queue(maxsize=1024)
        self.replies_dropped = 0
        self.crashes = 0  # failures inside the link that were not the network's (bugs, bad data)
        self._crash_times: list[float] = []
        self.reconnects = 0
        self.connected_at: float | None = None
        self.down_since: float | None = None  # monotonic time the link last went down
        self._last_cause = ""
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
            **s.login(self.password),
            "identifier": s.client_id or None,
            "keepalive": s.keepalive,
            "will": aiomqtt.Will(self.topics.status, b"offline", qos=1, retain=True),
            "max_queued_incoming_messages": self.max_incoming,
            "timeout": 10,
            "logger": self._client_log,
        }
        persistent = s.session_expiry > 0 and bool(s.client_id)
        if s.protocol == "5":
            kwargs["protocol"] = aiomqtt.ProtocolVersion.V5
            kwargs["clean_start"] = not persistent
            if persistent:
                from paho.mqtt.packettypes import PacketTypes
                from paho.mqtt.properties import Properties

                properties = Properties(PacketTypes.CONNECT)
                properties.SessionExpiryInterval = s.session_expiry
                kwargs["properties"] = properties
        else:
            kwargs["protocol"] = aiomqtt.ProtocolVersion.V311
            kwargs["clean_session"] = not persistent
        return kwargs

    async def run(self) -> None:
        """Connect, serve, reconnect: forever (cancel to stop). Nothing inside may end this loop."""
        import aiomqtt

        delay = 0.2
        while True:
            try:
                await self._serve_once(aiomqtt)
                cause, network = "connection closed", True
            except asyncio.CancelledError:
                raise
            except BaseException as exc:  # an ExceptionGroup, a bug, bad data: reconnect all the same
                if stopping():
                    # cancelled while the connection failed (the broker died as the table stopped):
                    # the closing client's error replaced the cancel; the link is being stopped, not
                    # broken, and must not reconnect forever (the table would never exit on SIGTERM)
                    raise asyncio.CancelledError from exc
                cause, network = self._cause(exc, aiomqtt)
                if not network:
                    self.crashes += 1
                    self._crash_times = [*self._crash_times[-15:], time.monotonic()]
            if self.connected_at is not None:  # it was up: retry soon
                delay = 0.2
            self._went_down(cause, network, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def crash_looping(self, count: int, window: float) -> bool:
        """`count` failures of our own within `window` seconds, with no connection lasting since."""
        recent = [t for t in self._crash_times if time.monotonic() - t < window]
        return len(recent) >= count

    def _cause(self, exc: BaseException, aiomqtt: Any) -> tuple[str, bool]:
        """What ended the connection, and whether it was the network (else: a fault of ours)."""
        leaves: list[BaseException] = []

        def flatten(e: BaseException) -> None:
            if isinstance(e, BaseExceptionGroup):
                for inner in e.exceptions:
                    flatten(inner)
            else:
                leaves.append(e)

        flatten(exc)
        network = all(isinstance(e, aiomqtt.MqttError | OSError | TimeoutError) for e in leaves)
        cause = "; ".join(f"{type(e).__name__}: {e}" for e in leaves)
        return cause.encode("utf-8", "replace").decode()[:200], network

    def _went_down(self, cause: str, network: bool, delay: float) -> None:
        self.connected = False
        self._client = None
        self.connected_at = None
        if self.down_since is None:
            self.down_since = time.monotonic()
        what = "broker unreachable" if network else "link failed"
        self.on_status("failed", f"{what}: {cause}; outbox {len(self.outbox)} waiting")
        if cause != self._last_cause:  # once per cause, not once per retry
            self._last_cause = cause
            level = logging.WARNING if network else logging.ERROR
            log.log(
                level, "event=mqtt_disconnected network=%s reason=%r retry_in=%.1f", network, cause, delay
            )

    async def _serve_once(self, aiomqtt: Any) -> None:
        client = aiomqtt.Client(**self._client_kwargs())
        # acknowledge a command only once it is handled (IncomingCommand.ack): redelivered otherwise
        client._client.manual_ack_set(True)
        self._watch_dup(client)
        async with client:
            self._client = client
            client.pending_calls_threshold = 4 * self.window
            try:
                # subscribe first: a director who sees `online` can send a command at once
                await client.subscribe(self.topics.commands, qos=1)
                await client.publish(self.topics.status, b"online", qos=1, retain=True)
                self.connected = True
                self.connected_at = time.monotonic()
                self.down_since = None
                self.reconnects += 1
                self._last_cause = ""
                self.on_status("ok", f"connected to {self.settings.host}:{self.settings.port}")
                log.info(
                    "event=mqtt_connected host=%s port=%d backlog=%d",
                    self.settings.host,
                    self.settings.port,
                    len(self.outbox),
                )
                await run_together(
                    self._drain(client),
                    self._receive(client),
                    self._send_replies(client),
                    what="the MQTT link",
                )
            except BaseException as exc:
                # not the network's fault: the connection is still up, so say `offline` ourselves
                # (a clean DISCONNECT suppresses the Last Will) before closing and starting again
                if not isinstance(exc, asyncio.CancelledError) and not self._cause(exc, aiomqtt)[1]:
                    self.connected = False
                    with contextlib.suppress(Exception):
                        await client.publish(self.topics.status, b"offline", qos=1, retain=True, timeout=2)
                raise

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
            ack = self._acker(client, message.mid, message.qos)
            dup = message.mid in self._dups
            self._dups.discard(message.mid)
            try:
                self.on_command(
                    IncomingCommand(name, payload, response_topic, correlation, ack, message.mid, dup)
                )
            except Exception:  # a bug in one command must not drop the connection
                log.exception("event=command_handler_failed command=%s", name[:40])
                ack()

    def _watch_dup(self, client: Any) -> None:
        """aiomqtt's Message drops paho's DUP flag: note it by packet id as paho hands messages over."""
        paho = client._client
        inner = paho.on_message
        dups = self._dups = set[int]()

        def on_message(c: Any, userdata: Any, message: Any) -> None:
            if message.qos and message.dup:
                dups.add(message.mid)
            inner(c, userdata, message)

        paho.on_message = on_message

    def _acker(self, client: Any, mid: int, qos: int) -> Callable[[], None]:
        """Acknowledge once, and only on the connection the command came in on."""
        done = False

        def ack() -> None:
            nonlocal done
            if done or qos == 0 or self._client is not client:
                return
            done = True
            with contextlib.suppress(Exception):
                client._client.ack(mid, qos)

        return ack

    def reply(
        self, topic: str, payload: bytes, correlation: bytes | None = None, retain: bool = False
    ) -> bool:
        """Queue a reply (or an announcement that cannot wait for the outbox: the log is full).

        Not durable (the asker waits for it now or not at all). A topic the table may not publish to
        is dropped here, counted, never handed to the client: paho raises on it.
        """
        if not (isinstance(topic, str) and valid_topic_name(topic)) or not isinstance(payload, bytes):
            self.replies_dropped += 1
            log.warning("event=reply_dropped reason=invalid_topic topic=%r", ascii(topic)[:120])
            return False
        try:
            self._replies.put_nowait((topic, payload, correlation, retain))
        except asyncio.QueueFull:
            self.replies_dropped += 1
            return False
        return True

    async def _send_replies(self, client: Any) -> None:
        """Replies in order, up to `window` awaiting their PUBACK at once."""
        while True:
            batch = [await self._replies.get()]
            while len(batch) < self.window and not self._replies.empty():
                batch.append(self._replies.get_nowait())
            await asyncio.gather(
                *(
                    client.publish(t, p, qos=1, retain=r, properties=self._reply_properties(c), timeout=30)
                    for t, p, c, r in batch
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
