"""The MQTT link stops when it is cancelled, even when the broker fails at the same moment.

Python 3.11's TaskGroup turns "cancelled while a child failed" into the child's ExceptionGroup; the
link's reconnect loop, which retries on any failure, took that for a broken connection and went on
reconnecting (logging once per cause, so silently), and the service never exited on SIGTERM after
its broker died (found by `make install-check`: the walk kills the broker, then the table)."""

from __future__ import annotations

import asyncio
import sqlite3

import aiomqtt
import pytest

from controller.mqtt.link import BrokerConfig, MqttLink
from controller.mqtt.outbox import Outbox
from controller.mqtt.topics import TableTopics
from controller.service.health import SourceHealth
from controller.service.sources import supervise
from controller.tasks import run_together, stopping


def a_link() -> MqttLink:
    """A link to a broker that is never reached: its connection is replaced in each test."""
    return MqttLink(
        BrokerConfig(host="127.0.0.1"),
        TableTopics("v", "t1"),
        Outbox(sqlite3.connect(":memory:")),
        on_command=lambda cmd: None,
        on_status=lambda status, detail: None,
    )


async def test_a_link_cancelled_while_its_connection_fails_stops():
    link = a_link()
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

    link = a_link()
    link._serve_once = serve_once
    task = asyncio.create_task(link.run())
    await asyncio.sleep(0.8)  # the first retries come after 0.2 s and 0.4 s
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert tries >= 2


async def test_a_failed_job_leaves_no_cancel_behind():
    """After one job of a connection fails, the supervisor can still tell a stop from the next failure
    (with 3.11's TaskGroup, `cancelling()` stayed raised and every later failure looked like a stop)."""

    async def fails():
        await asyncio.sleep(0)
        raise ValueError("bad topic")

    with pytest.raises(ExceptionGroup) as caught:
        await run_together(fails(), asyncio.Event().wait(), what="the test link")
    assert [type(e) for e in caught.value.exceptions] == [ValueError]
    assert "the test link failed" in str(caught.value)
    assert not stopping()


async def test_a_device_that_errors_as_it_is_stopped_is_not_restarted():
    """A panel whose closing port raises while the service stops it: the supervisor stops too."""
    runs = 0

    async def run():
        nonlocal runs
        runs += 1
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            raise OSError("port closed under us") from None

    task = asyncio.create_task(supervise("panel", run, SourceHealth("panel")))
    await asyncio.sleep(0.05)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=3)
    assert task in done and task.cancelled(), "the supervisor restarted a device the service was stopping"
    assert runs == 1
