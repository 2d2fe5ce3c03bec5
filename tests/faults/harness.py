"""What the fault suite and bench/bench_faults.py share: a director on a real broker that follows
the table's rulings exactly once (numbered stream + `cmd/replay`), floods of lines and commands,
and the checker that holds the subscriber's view against the table's event log."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt

from controller.mqtt.follow import StreamFollower
from controller.service.eventlog import EventLog

REPO = Path(__file__).resolve().parents[2]
# Mosquitto for a flood: the table's persistent session may queue thousands of commands while the
# table restarts (the default 1000 would drop the rest, and say so in its log)
FLOOD_BROKER = "max_queued_messages 100000\nmax_inflight_messages 100\n"
SEATED = [{"type": "seat", "seat": s, "player": f"P{s}", "stack": 20000} for s in (1, 2, 3, 4)]


def flood_line(k: int) -> dict[str, Any]:
    """An input the engine rules on every time (an `error`: seat 1 is taken), unique by its name, so
    the log shows whether line k was applied once, never, or twice."""
    return {"type": "seat", "seat": 1, "player": f"F-{k}"}


def flood_command(k: int) -> dict[str, Any]:
    return {"id": f"cmd-{k}", "seat": 1, "player": f"F-{k}"}


class Director:
    """Subscribes to the table (persistent session, QoS 1), passes each ruling on once, in order,
    asks `cmd/replay` for what it missed, and sends commands. Reconnects when the broker goes."""

    def __init__(self, port: int, prefix: str, identifier: str = "director-1", protocol: str = "5") -> None:
        self.port, self.prefix, self.identifier = port, prefix, identifier
        self.protocol = aiomqtt.ProtocolVersion.V5 if protocol == "5" else aiomqtt.ProtocolVersion.V311
        self.follower = StreamFollower("rulings")
        self.delivered: list[dict[str, Any]] = []
        self.received = 0
        self.fetched = 0  # rulings passed on from a replay: what live delivery had missed
        self.status: list[bytes] = []
        self.replies: dict[str, dict[str, Any]] = {}
        self.client: aiomqtt.Client | None = None
        self.connected = asyncio.Event()
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._ids = itertools.count()

    async def __aenter__(self) -> Director:
        self._task = asyncio.create_task(self._run())
        async with asyncio.timeout(10):
            await self.connected.wait()
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _run(self) -> None:
        while True:
            try:
                kw: dict[str, Any] = (
                    {"clean_start": False} if self.protocol.value == 5 else {"clean_session": False}
                )
                properties = None
                if self.protocol.value == 5:
                    from paho.mqtt.packettypes import PacketTypes
                    from paho.mqtt.properties import Properties

                    properties = Properties(PacketTypes.CONNECT)
                    properties.SessionExpiryInterval = 600
                async with aiomqtt.Client(
                    "127.0.0.1",
                    self.port,
                    identifier=self.identifier,
                    protocol=self.protocol,
                    timeout=5,
                    properties=properties,
                    **kw,
                ) as c:
                    await c.subscribe(
                        [
                            (f"{self.prefix}/rulings", 1),
                            (f"{self.prefix}/status", 1),
                            (f"{self.prefix}/reply/{self.identifier}", 1),
                        ]
                    )
                    self.client = c
                    self.connected.set()
                    async for m in c.messages:
                        self._on_message(str(m.topic), bytes(m.payload))
            except aiomqtt.MqttError:
                self.connected.clear()
                self.client = None
                await asyncio.sleep(0.1)

    def _on_message(self, topic: str, payload: bytes) -> None:
        if topic.endswith("/rulings"):
            self.received += 1
            self.delivered += self.follower.feed(json.loads(payload))
        elif topic.endswith("/status"):
            self.status.append(payload)
        else:
            doc = json.loads(payload)
            if isinstance(doc.get("id"), str):
                self.replies[doc["id"]] = doc
        self._changed.set()

    async def wait_for(self, predicate: Any, timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate(self):
                self._changed.clear()
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.2):
                        await self._changed.wait()

    async def publish(self, name: str, body: dict[str, Any], anonymous: bool = False) -> str:
        """A command (QoS 1) with an id (`anonymous`: without one, as a hand-typed mosquitto_pub
        sends it); returns the id. Waits while the broker is away."""
        body = {"reply_to": f"{self.prefix}/reply/{self.identifier}", **body}
        if not anonymous:
            body.setdefault("id", f"{self.identifier}-{next(self._ids)}")
        while True:
            await self.connected.wait()
            assert self.client is not None
            try:
                await self.client.publish(f"{self.prefix}/cmd/{name}", json.dumps(body), qos=1, timeout=5)
                return str(body.get("id", ""))
            except aiomqtt.MqttError:
                await asyncio.sleep(0.1)

    async def ask(self, name: str, body: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
        ident = await self.publish(name, body)
        await self.wait_for(lambda d: ident in d.replies, timeout)
        return self.replies.pop(ident)

    async def catch_up(self, timeout: float = 20.0) -> int:
        """Replay until the table has nothing this director has not passed on; returns the requests."""
        requests = 0
        async with asyncio.timeout(timeout):
            while True:
                try:
                    reply = await self.ask("replay", {"since": self.follower.next - 1}, timeout=3)
                except TimeoutError:
                    continue  # the broker or the table is still coming back
                requests += 1
                fresh = self.follower.feed_all(reply["lines"])
                self.fetched += len(fresh)
                self.delivered += fresh
                if not reply["more"] and not self.follower.behind(reply["last"]):
                    return requests


@dataclass
class Verdict:
    """The subscriber's rulings against the log's: what a user cares about after a fault."""

    logged: int
    delivered: int
    lost: list[int] = field(default_factory=list)
    duplicates: int = 0  # passed on twice (the follower's job is to make this 0)
    out_of_order: int = 0
    wrong: list[int] = field(default_factory=list)  # delivered, but not what the log holds
    received: int = 0  # raw messages, duplicates included (at least once)

    @property
    def exactly_once(self) -> bool:
        return not (self.lost or self.duplicates or self.out_of_order or self.wrong)


def check_rulings(log_path: Path, delivered: list[dict[str, Any]], received: int = 0) -> Verdict:
    """Every ruling in the log reached the subscriber exactly once, in order, as logged."""
    log = EventLog(log_path)
    try:
        logged = {r.pub: r for r in log.lines(("out",))}
    finally:
        log.close()
    numbers = [d["ruling_seq"] for d in delivered]
    counts = Counter(numbers)
    verdict = Verdict(logged=len(logged), delivered=len(delivered), received=received)
    verdict.duplicates = sum(c - 1 for c in counts.values())
    verdict.out_of_order = sum(1 for a, b in itertools.pairwise(numbers) if b <= a)
    verdict.lost = sorted(set(logged) - set(counts))
    for d in delivered:
        row = logged.get(d["ruling_seq"])
        if row is None or row.seq != d["seq"] or row.line.get("type") != d.get("type"):
            verdict.wrong.append(d["ruling_seq"])
    return verdict


def applied_counts(log_path: Path, prefix: str = "F-") -> Counter[str]:
    """How often each flood line (by its player name) was applied: logged as an input."""
    log = EventLog(log_path)
    try:
        return Counter(
            str(r.line["player"])
            for r in log.lines(("in",))
            if str(r.line.get("player", "")).startswith(prefix)
        )
    finally:
        log.close()


def check_commands(log_path: Path, sent: range) -> tuple[list[int], list[int]]:
    """(lost, applied twice) among the flood commands numbered `sent`."""
    counts = applied_counts(log_path)
    lost = [k for k in sent if counts[f"F-{k}"] == 0]
    twice = [k for k in sent if counts[f"F-{k}"] > 1]
    return lost, twice
