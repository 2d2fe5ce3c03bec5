"""What the fault suite and bench/bench_faults.py share: a director on a real broker that follows
the table's rulings exactly once (numbered stream + `cmd/replay`), floods of lines and commands,
and the checker that holds the subscriber's view against the table's event log."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiomqtt

from controller.mqtt.follow import StreamFollower
from controller.service.eventlog import EventLog
from tests.service.mqtt_helpers import Recorder

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


class Director(Recorder):
    """Subscribes to the table (persistent session, QoS 1), passes each ruling on once, in order,
    asks `cmd/replay` for what it missed, and sends commands. Reconnects when the broker goes
    (the Recorder's loop)."""

    connect_timeout = 10.0
    retry_delay = 0.1

    def __init__(self, port: int, prefix: str, identifier: str = "director-1", protocol: str = "5") -> None:
        super().__init__(port, prefix, protocol)
        self.identifier = identifier
        self.follower = StreamFollower("rulings")
        self.delivered: list[dict[str, Any]] = []
        self.received = 0
        self.fetched = 0  # rulings passed on from a replay: what live delivery had missed
        self.status: list[bytes] = []
        self.replies: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count()

    def client_options(self) -> dict[str, Any]:
        if self.protocol.value != 5:
            return {"identifier": self.identifier, "clean_session": False}
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties

        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 600
        return {"identifier": self.identifier, "clean_start": False, "properties": properties}

    def subscriptions(self) -> list[tuple[str, int]]:
        return [
            (f"{self.prefix}/rulings", 1),
            (f"{self.prefix}/status", 1),
            (f"{self.prefix}/reply/{self.identifier}", 1),
        ]

    def on_message(self, topic: str, payload: bytes, properties: Any) -> None:
        if topic.endswith("/rulings"):
            self.received += 1
            self.delivered += self.follower.feed(json.loads(payload))
        elif topic.endswith("/status"):
            self.status.append(payload)
        else:
            doc = json.loads(payload)
            if isinstance(doc.get("id"), str):
                self.replies[doc["id"]] = doc

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
