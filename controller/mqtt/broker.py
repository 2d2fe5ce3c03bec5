"""A small asyncio MQTT 3.1.1 broker for the zero-setup demo (used only when no broker is configured).

Supported: CONNECT with clean sessions, optional username/password, QoS 0 and 1 (a QoS 2 publish is
accepted with the full PUBREC/PUBREL/PUBCOMP handshake and delivered at QoS 1), retained messages,
Last Will (on any disconnect that is not a DISCONNECT packet, including keep-alive timeout),
subscriptions with `+` and `#`, client-id takeover. Not supported: MQTT 5, persistent sessions
(clean_session=0 is served as a clean session), ACLs, TLS, redelivery after reconnect. A venue runs
Mosquitto; see docs/mqtt.md for which features need which broker.

A slow subscriber never stalls the others: delivery writes to each client's socket without waiting,
and a client whose unsent backlog exceeds `max_backlog` bytes is disconnected.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from dataclasses import dataclass, field

from controller.mqtt.topics import topic_matches, valid_topic_filter, valid_topic_name

log = logging.getLogger("smart_table.broker")

CONNECT, CONNACK, PUBLISH, PUBACK, PUBREC, PUBREL, PUBCOMP = 1, 2, 3, 4, 5, 6, 7
SUBSCRIBE, SUBACK, UNSUBSCRIBE, UNSUBACK, PINGREQ, PINGRESP, DISCONNECT = 8, 9, 10, 11, 12, 13, 14
MAX_PACKET = 1 << 20


class ProtocolError(Exception):
    """The client broke the protocol; the connection is closed (and its will published)."""


def encode_length(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def packet(kind: int, flags: int, body: bytes) -> bytes:
    return bytes([(kind << 4) | flags]) + encode_length(len(body)) + body


def utf8(s: str) -> bytes:
    b = s.encode()
    return struct.pack("!H", len(b)) + b


class Reader:
    """Cursor over one packet's body."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ProtocolError("packet shorter than its fields")
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int(struct.unpack("!H", self.take(2))[0])

    def blob(self) -> bytes:
        return self.take(self.u16())

    def text(self) -> str:
        try:
            return self.blob().decode()
        except UnicodeDecodeError:
            raise ProtocolError("string is not UTF-8") from None

    def rest(self) -> bytes:
        return self.take(len(self.data) - self.pos)

    @property
    def more(self) -> bool:
        return self.pos < len(self.data)


async def read_packet(reader: asyncio.StreamReader) -> tuple[int, int, bytes]:
    first = await reader.readexactly(1)
    length, shift = 0, 0
    for _ in range(4):
        byte = (await reader.readexactly(1))[0]
        length |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            break
    else:
        raise ProtocolError("malformed remaining length")
    if length > MAX_PACKET:
        raise ProtocolError(f"packet of {length} bytes exceeds {MAX_PACKET}")
    return first[0] >> 4, first[0] & 0x0F, await reader.readexactly(length)


@dataclass(slots=True)
class Message:
    topic: str
    payload: bytes
    qos: int
    retain: bool


@dataclass(eq=False)
class Session:
    client_id: str
    writer: asyncio.StreamWriter
    keepalive: int
    will: Message | None = None
    subscriptions: dict[str, int] = field(default_factory=dict)
    next_id: int = 0
    inflight: set[int] = field(default_factory=set)
    closed: bool = False

    def packet_id(self) -> int:
        self.next_id = self.next_id % 65535 + 1
        return self.next_id


class Broker:
    """`async with Broker(port=0) as b:` serves on `b.port` until the block ends."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 1883,
        users: dict[str, str] | None = None,
        max_backlog: int = 4 << 20,
    ) -> None:
        self.host, self.port = host, port
        self.users = users
        self.max_backlog = max_backlog
        self.sessions: dict[str, Session] = {}
        self.retained: dict[str, Message] = {}
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        log.info("event=broker_started host=%s port=%d", self.host, self.port)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for session in list(self.sessions.values()):
            session.writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def __aenter__(self) -> Broker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- connections -------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        session: Session | None = None
        clean_exit = False
        try:
            kind, _, body = await asyncio.wait_for(read_packet(reader), 10)
            if kind != CONNECT:
                raise ProtocolError("first packet is not CONNECT")
            session = self._connect(body, writer)
            if session is None:
                return
            while True:
                timeout = session.keepalive * 1.5 if session.keepalive else None
                kind, flags, body = await asyncio.wait_for(read_packet(reader), timeout)
                if kind == DISCONNECT:
                    clean_exit = True
                    return
                self._handle(session, kind, flags, body)
        except (TimeoutError, asyncio.IncompleteReadError, ConnectionError, ProtocolError) as exc:
            if isinstance(exc, ProtocolError):
                log.warning(
                    "event=broker_protocol_error client=%s error=%s", session and session.client_id, exc
                )
        finally:
            self._tasks.discard(task)
            if session is not None and not session.closed:
                session.closed = True
                if self.sessions.get(session.client_id) is session:
                    del self.sessions[session.client_id]
                if not clean_exit and session.will is not None:
                    self.publish(session.will)
            writer.close()

    def _connect(self, body: bytes, writer: asyncio.StreamWriter) -> Session | None:
        r = Reader(body)
        name, level = r.text(), r.u8()
        if name != "MQTT" or level != 4:
            writer.write(packet(CONNACK, 0, b"\x00\x01"))  # unacceptable protocol version
            return None
        flags, keepalive = r.u8(), r.u16()
        client_id = r.text()
        will = None
        if flags & 0x04:
            will_topic, will_payload = r.text(), r.blob()
            if not valid_topic_name(will_topic):
                raise ProtocolError(f"invalid will topic {will_topic!r}")
            will = Message(will_topic, will_payload, min((flags >> 3) & 3, 1), bool(flags & 0x20))
        username = r.text() if flags & 0x80 else None
        password = r.blob().decode(errors="replace") if flags & 0x40 else None
        if self.users is not None and (username is None or self.users.get(username) != password):
            writer.write(packet(CONNACK, 0, b"\x00\x04"))  # bad user name or password
            return None
        if not client_id:
            client_id = f"auto-{id(writer):x}"
        old = self.sessions.get(client_id)
        if old is not None:  # takeover: the old connection ends, its will is not sent
            old.closed = True
            old.writer.close()
        session = Session(client_id, writer, keepalive, will)
        self.sessions[client_id] = session
        writer.write(packet(CONNACK, 0, b"\x00\x00"))
        return session

    def _handle(self, s: Session, kind: int, flags: int, body: bytes) -> None:
        r = Reader(body)
        if kind == PUBLISH:
            qos = (flags >> 1) & 3
            if qos == 3:
                raise ProtocolError("QoS 3")
            topic = r.text()
            if not valid_topic_name(topic):
                raise ProtocolError(f"invalid topic name {topic!r}")
            pid = r.u16() if qos else 0
            self.publish(Message(topic, r.rest(), min(qos, 1), bool(flags & 1)))
            if qos == 1:
                self._send(s, packet(PUBACK, 0, struct.pack("!H", pid)))
            elif qos == 2:
                self._send(s, packet(PUBREC, 0, struct.pack("!H", pid)))
        elif kind == PUBREL:
            self._send(s, packet(PUBCOMP, 0, struct.pack("!H", r.u16())))
        elif kind == PUBACK:
            s.inflight.discard(r.u16())
        elif kind == SUBSCRIBE:
            pid, codes, new = r.u16(), bytearray(), []
            while r.more:
                flt, qos = r.text(), r.u8() & 3
                if not valid_topic_filter(flt) or qos > 2:
                    codes.append(0x80)
                    continue
                granted = min(qos, 1)
                s.subscriptions[flt] = granted
                codes.append(granted)
                new.append((flt, granted))
            self._send(s, packet(SUBACK, 0, struct.pack("!H", pid) + bytes(codes)))
            for flt, granted in new:
                for msg in list(self.retained.values()):
                    if topic_matches(flt, msg.topic):
                        self._deliver(s, msg, min(granted, msg.qos), retain=True)
        elif kind == UNSUBSCRIBE:
            pid = r.u16()
            while r.more:
                s.subscriptions.pop(r.text(), None)
            self._send(s, packet(UNSUBACK, 0, struct.pack("!H", pid)))
        elif kind == PINGREQ:
            self._send(s, packet(PINGRESP, 0, b""))
        elif kind in (PUBREC, PUBCOMP):
            pass
        else:
            raise ProtocolError(f"unexpected packet type {kind}")

    # -- delivery ----------------------------------------------------------------------------------

    def publish(self, msg: Message) -> None:
        """Deliver to every matching subscriber; keep (or clear, when empty) a retained message."""
        if msg.retain:
            if msg.payload:
                self.retained[msg.topic] = msg
            else:
                self.retained.pop(msg.topic, None)
        for s in list(self.sessions.values()):
            granted = max((q for f, q in s.subscriptions.items() if topic_matches(f, msg.topic)), default=-1)
            if granted >= 0:
                self._deliver(s, msg, min(granted, msg.qos), retain=False)

    def _deliver(self, s: Session, msg: Message, qos: int, retain: bool) -> None:
        flags = (qos << 1) | int(retain)
        body = utf8(msg.topic)
        if qos:
            pid = s.packet_id()
            s.inflight.add(pid)
            body += struct.pack("!H", pid)
        self._send(s, packet(PUBLISH, flags, body + msg.payload))

    def _send(self, s: Session, data: bytes) -> None:
        if s.closed:
            return
        transport = s.writer.transport
        if transport.is_closing():
            return
        if transport.get_write_buffer_size() > self.max_backlog:
            log.warning("event=broker_slow_client client=%s action=disconnect", s.client_id)
            s.writer.close()
            return
        s.writer.write(data)
