"""A simulated table that speaks a real table's MQTT topics, for the floor's tests, bench and demo.

It runs the real rules engine (`TableEngine`), the service's own state view, command parser and
privacy filter, so what it publishes (`status`, `state`, `events`, `rulings`, `reply`) is what a
table publishes; it leaves out the camera, the panel, the event log and the outbox. A card tap goes
through the registry's real check-in (`TableCheckIn`) when one is given.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from controller.mqtt.topics import TableTopics
from controller.rules.engine import TableEngine
from controller.service.commands import FIELDS, NOTICES, CommandError, parse_command
from controller.service.privacy import public_line, public_snapshot
from controller.service.snapshot import TableState


class SimTable:
    def __init__(
        self,
        host: str,
        port: int,
        venue: str,
        table_id: str,
        profile: str,
        seats: int = 10,
        checkin: Any = None,
    ) -> None:
        self.host, self.port = host, port
        self.topics = TableTopics(venue, table_id)
        self.profile, self.seat_count = profile, seats
        self.engine = TableEngine(profile, seats)
        self.view = TableState(self.engine.snapshot)
        self.event_no = self.ruling_no = 0  # the numbered streams a real table publishes (docs/mqtt.md)
        self.checkin = checkin
        self.seq = 0
        self.client: Any = None
        self._reader: asyncio.Task | None = None
        self.commands: list[dict[str, Any]] = []  # director commands received, in order
        self.outputs: list[dict[str, Any]] = []  # every ruling, in order
        self.notices: list[dict[str, Any]] = []  # the floor's panel notices (cmd/move, cmd/colour_up)

    async def start(self) -> None:
        import aiomqtt

        self.client = aiomqtt.Client(
            self.host,
            self.port,
            identifier=f"sim-{self.topics.table}",
            protocol=aiomqtt.ProtocolVersion.V311,
            will=aiomqtt.Will(self.topics.status, "offline", qos=1, retain=True),
            timeout=10,
        )
        await self.client.__aenter__()
        await self.client.subscribe(self.topics.commands, qos=1)
        self._reader = asyncio.create_task(self._read())
        await self.feed(
            {"type": "table", "seats": self.seat_count, "profile": self.profile, "actions": "observed"}
        )
        await self.client.publish(self.topics.status, "online", qos=1, retain=True)

    async def stop(self, crash: bool = False) -> None:
        if self._reader:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self.client is not None:
            if not crash:
                await self.client.publish(self.topics.status, "offline", qos=1, retain=True)
            await self.client.__aexit__(None, None, None)
            self.client = None

    def state(self) -> dict[str, Any]:
        doc = self.view.snapshot()
        doc["table"] = {
            "id": self.topics.table,
            "venue": self.topics.venue,
            "seats": self.seat_count,
            "profile": self.profile,
            "actions": "observed",  # the table line it starts with
        }
        doc["seq"], doc["event_seq"], doc["ruling_seq"], doc["t"] = (
            self.seq,
            self.event_no,
            self.ruling_no,
            time.time(),
        )
        return doc

    async def _publish(self, topic: str, doc: dict[str, Any], retain: bool = False) -> None:
        await self.client.publish(topic, json.dumps(doc, separators=(",", ":")), qos=1, retain=retain)

    async def feed(self, line: dict[str, Any], source: str = "sim") -> list[dict[str, Any]]:
        """One input line through the engine; publishes the event, its rulings and the new state."""
        outputs = self.engine.feed(dict(line))
        errors = [o for o in outputs if o.get("type") == "error"]
        if not errors:
            self.seq += 1
            self.event_no += 1
            self.view.apply_input(line)
            await self._publish(
                self.topics.events,
                {
                    **public_line(line),
                    "seq": self.seq,
                    "event_seq": self.event_no,
                    "t": time.time(),
                    "source": source,
                },
            )
        for o in outputs:
            self.seq += 1
            self.ruling_no += 1
            self.view.apply_output(o)
            self.outputs.append(o)
            await self._publish(
                self.topics.rulings,
                {**public_line(o), "seq": self.seq, "ruling_seq": self.ruling_no, "t": time.time()},
            )
        await self._publish(self.topics.state, public_snapshot(self.state()), retain=True)
        return outputs

    async def tap(self, uid: bytes, message: bytes, now: Any) -> Any:
        """A player's card on this table's reader: the registry's check-in decides."""
        result = self.checkin.on_tap(uid, message, now)
        for line in result.lines:
            if line["type"] == "seat":
                await self.feed(line, "nfc")
            else:
                self.seq += 1
                self.event_no += 1
                await self._publish(
                    self.topics.events,
                    {
                        **public_line(line),
                        "seq": self.seq,
                        "event_seq": self.event_no,
                        "t": time.time(),
                        "source": "nfc",
                    },
                )
        return result

    async def _read(self) -> None:
        async for message in self.client.messages:
            name = self.topics.command_name(str(message.topic))
            if name is None:
                continue
            payload = message.payload if isinstance(message.payload, bytes) else str(message.payload).encode()
            await self._command(name, payload)

    async def _command(self, name: str, payload: bytes) -> None:
        try:
            cmd = parse_command(name, payload, seats=self.seat_count, allowed=tuple(FIELDS))
        except CommandError as exc:
            await self._reply(None, {"ok": False, "command": name, "error": exc.code, "message": str(exc)})
            return
        self.commands.append({"name": name, **json.loads(payload or b"{}")})
        reply: dict[str, Any] = {"ok": True, "command": name, "id": cmd.id}
        if name in NOTICES and cmd.line is not None:  # shown and published, as a table does; not engine input
            self.seq += 1
            await self._publish(
                self.topics.events,
                {**public_line(cmd.line), "seq": self.seq, "t": time.time(), "source": "director"},
            )
            self.notices.append(cmd.line)
            reply["outputs"] = []
        elif cmd.line is None:
            reply["state"] = self.state()
        else:
            outputs = await self.feed(cmd.line, "director")
            errors = [o for o in outputs if o.get("type") == "error"]
            if errors:
                reply = {
                    "ok": False,
                    "command": name,
                    "id": cmd.id,
                    "error": "refused",
                    "message": errors[0].get("message"),
                }
            else:
                reply["outputs"] = outputs
        await self._reply(cmd.reply_to, reply)

    async def _reply(self, reply_to: str | None, doc: dict[str, Any]) -> None:
        topic = reply_to if reply_to and self.topics.reply_allowed(reply_to) else self.topics.reply
        await self._publish(topic, doc)
