"""The table's own broker when none is configured (`broker.host` empty): amqtt in the service's process.

The zero-setup demo must run from a clone with only Python, so the broker it needs by default is a
maintained pure-Python one: amqtt (MQTT 3.1.1: clean sessions, QoS 0/1/2, retained messages, Last
Will, `+`/`#` subscriptions), listening on `broker.embedded_bind:embedded_port`, anonymous. It
replaced a broker of our own (issue 13; bench/bench_broker.py and docs/mqtt.md have the figures).
A venue runs Mosquitto (`broker.host`), which the simulated table also starts for itself when it is
installed (`controller.mqtt.mosquitto`).
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger("smart_table.broker")


class LocalBroker:
    """`async with LocalBroker(port=0) as b:` serves on `b.port` until the block ends.

    `start()` raises OSError (with its errno and strerror) when the address cannot be bound, as a
    socket would, so the caller can name the setting to change.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 1883) -> None:
        self.host = host
        self.port = port
        self._broker: Any = None

    async def start(self) -> None:
        from amqtt.broker import Broker
        from amqtt.errors import BrokerError

        # amqtt logs every connection and packet at INFO; the table's log keeps its warnings
        amqtt_log = logging.getLogger("amqtt")
        amqtt_log.setLevel(max(logging.WARNING, amqtt_log.level))
        config = {
            "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}},
            # anonymous, and none of the default plugins' $SYS topics and packet logging
            "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
        }
        broker = Broker(config)
        try:
            await broker.start()
        except BrokerError as exc:
            cause = exc.__cause__
            if isinstance(cause, OSError):
                raise cause from None
            raise
        self._broker = broker
        if self.port == 0:
            # the port the system chose: amqtt keeps its asyncio server by listener name
            self.port = int(broker._servers["default"].instance.sockets[0].getsockname()[1])
        log.info("event=broker_started host=%s port=%d kind=amqtt", self.host, self.port)

    async def stop(self) -> None:
        broker, self._broker = self._broker, None
        if broker is not None:
            await broker.shutdown()

    async def __aenter__(self) -> LocalBroker:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()
