"""The table's own broker (amqtt, the zero-setup demo's when Mosquitto is absent) and the topic rules,
exercised by real MQTT clients: what the service relies on (QoS 1, retained state, the Last Will)."""

from __future__ import annotations

import asyncio
import struct

import aiomqtt
import pytest

from controller.mqtt.local import LocalBroker
from controller.mqtt.topics import topic_matches, valid_topic_filter


@pytest.mark.parametrize(
    ("flt", "topic", "match"),
    [
        ("a/+/c", "a/b/c", True),
        ("a/+/c", "a/b/d", False),
        ("a/#", "a", True),
        ("a/#", "a/b/c", True),
        ("+/+", "a/b", True),
        ("+", "a/b", False),
        ("#", "$SYS/x", False),
        ("$SYS/#", "$SYS/x", True),
        ("a/b", "a/b/c", False),
    ],
)
def test_topic_matching(flt, topic, match):
    assert topic_matches(flt, topic) is match


def test_filter_validation():
    assert valid_topic_filter("a/+/#")
    assert not valid_topic_filter("a/#/b")
    assert not valid_topic_filter("a/b+")


def utf8(s: str) -> bytes:
    b = s.encode()
    return struct.pack("!H", len(b)) + b


def connect_packet(body: bytes) -> bytes:
    assert len(body) < 128  # one length byte
    return bytes([0x10, len(body)]) + body


async def vanish(port: int, client_id: str) -> None:
    """A client that set a retained QoS 1 will on `t/status` and drops its connection, no DISCONNECT."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    flags = 0x02 | 0x04 | 0x08 | 0x20  # clean, will, will QoS 1, will retain
    body = utf8("MQTT") + bytes([4, flags]) + struct.pack("!H", 30) + utf8(client_id)
    writer.write(connect_packet(body + utf8("t/status") + utf8("offline")))
    assert (await reader.readexactly(4))[3] == 0  # CONNACK accepted
    writer.transport.abort()  # no DISCONNECT: the will must go out


def client(port: int, **kw) -> aiomqtt.Client:
    return aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V311, timeout=5, **kw)


async def next_message(c: aiomqtt.Client, timeout: float = 3.0) -> aiomqtt.Message:
    async with asyncio.timeout(timeout):
        async for m in c.messages:
            return m
    raise AssertionError("no message")


async def test_qos1_wildcards_and_retained_messages():
    async with LocalBroker(port=0) as broker, client(broker.port) as pub:
        await pub.publish("smarttable/v1/v/t/status", b"online", qos=1, retain=True)
        async with client(broker.port) as sub:
            await sub.subscribe("smarttable/v1/+/t/#", qos=1)
            retained = await next_message(sub)
            assert (str(retained.topic), retained.payload, retained.retain) == (
                "smarttable/v1/v/t/status",
                b"online",
                True,
            )
            await pub.publish("smarttable/v1/v/t/rulings", b"r1", qos=1)
            await pub.publish("smarttable/v1/v/other/rulings", b"no", qos=1)
            await pub.publish("smarttable/v1/v/t/rulings", b"r2", qos=0)
            got = [await next_message(sub), await next_message(sub)]
            # in order, the other table's left out; r1 at QoS 1 (amqtt hands the QoS 0 one on at the
            # subscription's QoS, more than MQTT asks: the table publishes everything at QoS 1)
            assert [m.payload for m in got] == [b"r1", b"r2"] and got[0].qos == 1
        # an empty retained message clears it
        await pub.publish("smarttable/v1/v/t/status", b"", qos=1, retain=True)
        async with client(broker.port) as sub2:
            await sub2.subscribe("smarttable/v1/#")
            with pytest.raises(TimeoutError):
                await next_message(sub2, timeout=0.3)


async def test_will_is_published_when_a_client_vanishes():
    async with LocalBroker(port=0) as broker, client(broker.port) as watcher:
        await watcher.subscribe("t/status", qos=1)
        await vanish(broker.port, "dying")
        message = await next_message(watcher)
        assert message.payload == b"offline"


async def test_the_will_is_retained_for_whoever_subscribes_later():
    async with LocalBroker(port=0) as broker:
        await vanish(broker.port, "dying-too")
        async with client(broker.port) as late:
            await late.subscribe("t/status", qos=1)
            message = await next_message(late)
            assert (message.payload, message.retain) == (b"offline", True)


async def test_garbage_closes_only_that_connection():
    async with LocalBroker(port=0) as broker:
        reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
        writer.write(b"\x10\xff\xff\xff\xff\x7f")  # CONNECT with an impossible length
        assert await asyncio.wait_for(reader.read(), 10) == b""  # closed by the broker
        async with client(broker.port) as ok:  # still serving
            await ok.publish("x", b"1", qos=1)


async def test_a_taken_port_is_an_os_error_naming_it():
    async with LocalBroker(port=0) as first:
        with pytest.raises(OSError) as exc:
            await LocalBroker(port=first.port).start()
        assert exc.value.errno is not None
