"""The MQTT link stops when it is cancelled, even when the broker fails at the same moment.

Python 3.11's TaskGroup turns "cancelled while a child failed" into the child's ExceptionGroup; the
link's reconnect loop, which retries on any failure, took that for a broken connection and went on
reconnecting (logging once per cause, so silently), and the service never exited on SIGTERM after
its broker died (found by `make install-check`: the walk kills the broker, then the table)."""

from __future__ import annotations

import asyncio
import sqlite3

import aiomqtt

from controller.mqtt.link import BrokerConfig, MqttLink
from controller.mqtt.outbox import Outbox
from controller.mqtt.topics import TableTopics


async def test_a_link_cancelled_while_its_connection_fails_stops():
    link = MqttLink(
        BrokerConfig(host="127.0.0.1"),
        TableTopics("v", "t1"),
        Outbox(sqlite3.connect(":memory:")),
        on_command=lambda cmd: None,
        on_status=lambda status, detail: None,
    )
    entered = asyncio.Event()

    async def serve_once(_aiomqtt):
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            # what a TaskGroup raises when it is cancelled while a child has failed
            raise BaseExceptionGroup("unhandled errors in a TaskGroup", [aiomqtt.MqttError("gone")]) from None

    link._serve_once = serve_once
    task = asyncio.create_task(link.run())
    await entered.wait()
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=3)
    assert task in done, "the link went on reconnecting after it was cancelled"
    assert task.cancelled()


async def test_a_link_whose_connection_fails_reconnects():
    """Without a cancel, the same failure is a broken connection: the link tries again."""
    tries = 0

    async def serve_once(_aiomqtt):
        nonlocal tries
        tries += 1
        raise BaseExceptionGroup("unhandled errors in a TaskGroup", [aiomqtt.MqttError("gone")])

    link = MqttLink(
        BrokerConfig(host="127.0.0.1"),
        TableTopics("v", "t1"),
        Outbox(sqlite3.connect(":memory:")),
        on_command=lambda cmd: None,
        on_status=lambda status, detail: None,
    )
    link._serve_once = serve_once
    task = asyncio.create_task(link.run())
    await asyncio.sleep(0.8)  # the first retries come after 0.2 s and 0.4 s
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert tries >= 2
