"""Benchmark of the brokers a table can use without a venue's (prints its figures, exits 0).

`smart-table run` without `broker.host`, and so the zero-setup demo where Mosquitto is not
installed, serves MQTT from amqtt inside the service's process (controller.mqtt.local, which
replaced a broker of our own: issue 13, docs/mqtt.md quotes these figures). For each broker the
time to start it, and what a table
sends through it, QoS 1 from one publisher with the service link's window (64 in flight) to one
subscriber (a director's screen), ruling-sized payloads: how many arrive, how fast, and the latency
of one message at a time.

    .venv/bin/python bench/bench_broker.py [--messages 2000]

Mosquitto is measured when installed.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import aiomqtt

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from controller.mqtt import mosquitto  # noqa: E402
from controller.mqtt.local import LocalBroker  # noqa: E402

PAYLOAD = (
    b'{"type":"misdeal","reason":"first_cards_exposed","rule":"cool_mule:5.g","seq":15,"ruling_seq":6,'
    + b" " * 100
)
WINDOW = 64  # publishes the service's link keeps in flight (controller.mqtt.link.MqttLink.window)


def client(port: int) -> aiomqtt.Client:
    return aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V311, timeout=10)


async def traffic(port: int, n: int) -> dict[str, float]:
    """n QoS 1 messages with WINDOW in flight, then 200 one at a time (each waited for, 2 s at most)."""
    async with client(port) as sub, client(port) as pub:
        pub.pending_calls_threshold = 4 * WINDOW  # the window is the plan, not a warning
        await sub.subscribe("bench/#", qos=1)
        flood = 0
        arrived: dict[int, float] = {}
        wanted: dict[int, asyncio.Event] = {}

        async def receive() -> None:
            nonlocal flood
            async for m in sub.messages:
                topic = str(m.topic)
                if topic == "bench/flood":
                    flood += 1
                else:
                    key = int(topic.rsplit("/", 1)[1])
                    arrived[key] = time.perf_counter()
                    wanted[key].set()

        task = asyncio.create_task(receive())
        window = asyncio.Semaphore(WINDOW)

        async def one() -> None:
            async with window:
                await pub.publish("bench/flood", PAYLOAD, qos=1)

        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        last, seen = time.perf_counter(), flood
        while flood < n and time.perf_counter() - last < 5:  # 5 s without a new arrival: the rest is lost
            await asyncio.sleep(0.01)
            if flood != seen:
                last, seen = time.perf_counter(), flood
        elapsed = last - t0  # to the last arrival
        delivered = flood
        latencies: list[float] = []
        for i in range(200):
            wanted[i] = asyncio.Event()
            sent = time.perf_counter()
            await pub.publish(f"bench/one/{i}", PAYLOAD, qos=1)
            try:
                await asyncio.wait_for(wanted[i].wait(), 2)
                latencies.append(arrived[i] - sent)
            except TimeoutError:
                pass
        task.cancel()
    latencies.sort()
    return {
        "delivered": delivered,
        "msgs_per_s": delivered / elapsed,
        "one_lost": 200 - len(latencies),
        "median_ms": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "p99_ms": latencies[int(0.99 * (len(latencies) - 1))] * 1000 if latencies else float("nan"),
    }


@asynccontextmanager
async def amqtt_broker() -> AsyncIterator[int]:
    async with LocalBroker("127.0.0.1", 0) as broker:
        yield broker.port


@asynccontextmanager
async def mosquitto_broker() -> AsyncIterator[int]:
    with tempfile.TemporaryDirectory(prefix="bench-broker-") as tmp:
        broker = mosquitto.Mosquitto(Path(tmp), persistence=False)
        await broker.start_async()
        try:
            yield broker.port
        finally:
            await broker.stop_async()


async def measure(start: Callable[[], AbstractAsyncContextManager[int]], n: int) -> dict[str, float]:
    t0 = time.perf_counter()
    async with start() as port:
        started = time.perf_counter() - t0
        return {"start_s": started, **await traffic(port, n)}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    import amqtt

    brokers: list[tuple[str, Callable[[], AbstractAsyncContextManager[int]]]] = [
        (f"amqtt {amqtt.__version__} (in process: controller.mqtt.local)", amqtt_broker)
    ]
    if mosquitto.installed():
        brokers.append(("mosquitto (a process of its own)", mosquitto_broker))
    else:
        print("mosquitto is not installed: not measured")
    print(
        f"{args.messages} QoS 1 messages of {len(PAYLOAD)} bytes, {WINDOW} in flight, one publisher, "
        f"one subscriber; then 200 one at a time; {args.runs} runs each"
    )
    for name, start in brokers:
        for _ in range(args.runs):
            r = asyncio.run(measure(start, args.messages))
            print(
                f"  {name}: start {r['start_s'] * 1000:.0f} ms, delivered {r['delivered']:.0f} of "
                f"{args.messages} ({r['msgs_per_s']:.0f} msgs/s); one at a time: median "
                f"{r['median_ms']:.2f} ms, p99 {r['p99_ms']:.2f} ms, {r['one_lost']:.0f} of 200 lost"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
