"""The embedded MQTT 3.1.1 broker (zero-setup demo), exercised by real MQTT clients."""

from __future__ import annotations

import asyncio
import struct

import aiomqtt
import pytest

from controller.mqtt.broker import CONNECT, Broker, packet, utf8
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


def client(port: int, **kw) -> aiomqtt.Client:
    return aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V311, timeout=5, **kw)


async def next_message(c: aiomqtt.Client, timeout: float = 3.0) -> aiomqtt.Message:
    async with asyncio.timeout(timeout):
        async for m in c.messages:
            return m
    raise AssertionError("no message")


async def test_qos1_wildcards_and_retained_messages():
    async with Broker(port=0) as broker, client(broker.port) as pub:
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
            assert [(m.payload, m.qos) for m in got] == [(b"r1", 1), (b"r2", 0)]
        # an empty retained message clears it
        await pub.publish("smarttable/v1/v/t/status", b"", qos=1, retain=True)
        async with client(broker.port) as sub2:
            await sub2.subscribe("smarttable/v1/#")
            with pytest.raises(TimeoutError):
                await next_message(sub2, timeout=0.3)


async def test_will_is_published_when_a_client_vanishes():
    async with Broker(port=0) as broker, client(broker.port) as watcher:
        await watcher.subscribe("t/status", qos=1)
        reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
        flags = 0x02 | 0x04 | 0x08 | 0x20  # clean, will, will QoS 1, will retain
        body = (
            utf8("MQTT")
            + bytes([4, flags])
            + struct.pack("!H", 30)
            + utf8("dying")
            + utf8("t/status")
            + utf8("offline")
        )
        writer.write(packet(CONNECT, 0, body))
        assert (await reader.readexactly(4))[3] == 0  # CONNACK accepted
        writer.transport.abort()  # no DISCONNECT: the will must go out
        message = await next_message(watcher)
        assert message.payload == b"offline"
        assert broker.retained["t/status"].payload == b"offline"


async def test_mqtt5_is_refused_and_garbage_closes_only_that_connection():
    async with Broker(port=0) as broker:
        with pytest.raises(aiomqtt.MqttError):
            async with aiomqtt.Client(
                "127.0.0.1", broker.port, protocol=aiomqtt.ProtocolVersion.V5, timeout=3
            ):
                pass
        reader, writer = await asyncio.open_connection("127.0.0.1", broker.port)
        writer.write(b"\x10\xff\xff\xff\xff\x7f")  # CONNECT with an impossible length
        assert await reader.read() == b""  # closed by the broker
        async with client(broker.port) as ok:  # still serving
            await ok.publish("x", b"1", qos=1)


async def test_username_and_password_are_checked():
    async with Broker(port=0, users={"table": "pw"}) as broker:
        with pytest.raises(aiomqtt.MqttError):
            async with client(broker.port, username="table", password="wrong"):
                pass
        async with client(broker.port, username="table", password="pw") as c:
            await c.publish("x", b"1", qos=1)
