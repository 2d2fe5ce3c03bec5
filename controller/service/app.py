"""The table service: every source's lines -> rules engine -> event log, panel and MQTT.

    async with TableService(config) as service:      # replays the log, opens devices, READY
        outputs = await service.inject({"type": "hand_start"}, source="sim")

One task owns the engine. It takes lines from the per-source inbox in batches, feeds each to the
engine, and writes inputs, outputs and the MQTT outbox rows in one SQLite transaction; only then are
the outputs shown on the panel, released to MQTT and answered to whoever asked. The engine is pure,
so at start the logged inputs are fed again and the table is exactly as it was before the restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import time
from typing import Any

from controller.mqtt.link import IncomingCommand, LinkSettings, MqttLink
from controller.mqtt.outbox import Outbox
from controller.mqtt.topics import TableTopics
from controller.service.commands import CommandError, parse_command, peek_envelope
from controller.service.config import Config, read_secret
from controller.service.eventlog import EventLog
from controller.service.health import HealthBoard
from controller.service.inbox import Inbox, Item
from controller.service.privacy import public_line, public_snapshot
from controller.service.sdnotify import notify, watchdog_interval
from controller.service.snapshot import TableView, merge_engine_snapshot
from controller.service.sources import CameraSource, NfcSource, PanelLink, supervise

log = logging.getLogger("smart_table.service")
BATCH = 64


class ServiceError(RuntimeError):
    """The service cannot start (the message says what to change)."""


class EngineUnavailable:
    """Stands in while controller.rules.engine is missing: logs inputs, rules on nothing."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def feed(self, line: dict[str, Any] | str, line_no: int) -> list[dict[str, Any]]:
        return []


def _payload(line: dict[str, Any]) -> bytes:
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode()


class TableService:
    """One table: usable in-process (tests, the simulated table) or from `smart-table run`."""

    def __init__(self, config: Config) -> None:
        self.cfg = config
        self.topics = TableTopics(config.table.venue, config.table.id)
        self.health = HealthBoard(on_change=self._health_changed)
        self.log: EventLog | None = None
        self.outbox: Outbox | None = None
        self.engine: Any = None
        self.view = TableView(config.table.seats)
        sizes = {"director": config.service.command_backlog}
        self.inbox = Inbox(config.service.queue_size, sizes)
        self.camera = CameraSource(config, self.health.part("camera"))
        self.panel = PanelLink(config, self.health.part("panel"))
        self.nfc = NfcSource(config, self.health.part("nfc"))
        self.nfc.view = self.view  # a seated player's tap: bust-out or away/back (registry.checkin.SeatTaps)
        self.panel.before_new_hand = self.nfc.new_hand_confirms
        self.link: MqttLink | None = None
        self.broker: Any = None
        self.line_no = 0
        self.last_seq = 0
        self.replayed = 0
        self.replay_mismatches = 0
        self.ready_after: float | None = None
        self.commands_refused = 0
        self._token = read_secret(config.commands.token_file)
        self._tasks: list[asyncio.Task[Any]] = []
        self._waiters: set[asyncio.Task[Any]] = set()
        self._state_dirty = False
        self._last_progress = time.monotonic()
        self._started = False
        self._t0 = time.monotonic()

    # -- lifecycle ---------------------------------------------------------------------------------

    async def __aenter__(self) -> TableService:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        self._t0 = time.monotonic()
        self._open_log()
        self._open_engine()
        self._replay()
        await self._start_mqtt()
        self._tasks += [
            asyncio.create_task(self._engine_loop(), name="engine"),
            asyncio.create_task(self._state_loop(), name="state"),
            asyncio.create_task(self._watchdog(), name="watchdog"),
        ]
        for source in (self.camera, self.panel, self.nfc):
            run = functools.partial(source.run, self._emitter(source.name))
            self._tasks.append(
                asyncio.create_task(supervise(source.name, run, source.health), name=source.name)
            )
        self._started = True
        await self._wait_devices()
        self.ready_after = time.monotonic() - self._t0
        notify(f"READY=1\nSTATUS={self.health.summary()}")
        log.info(
            "event=ready seconds=%.3f replayed=%d %s", self.ready_after, self.replayed, self.health.summary()
        )

    async def stop(self) -> None:
        notify("STOPPING=1")
        if self.link is not None:
            await self.link.close()
        for task in [*self._tasks, *self._waiters]:
            task.cancel()
        await asyncio.gather(*self._tasks, *self._waiters, return_exceptions=True)
        self._tasks.clear()
        if self.broker is not None:
            await self.broker.stop()
        if self.log is not None:
            self.log.close()
        self._started = False
        log.info("event=stopped")

    def _open_log(self) -> None:
        path = self.cfg.event_log_path()
        try:
            self.log = EventLog(path, self.cfg.event_log.synchronous)
        except Exception as exc:
            raise ServiceError(f"event_log.path: cannot open {str(path)!r}: {exc}") from exc
        self.outbox = Outbox(self.log.conn)
        table = self.cfg.table
        logged = {k: self.log.get_meta(k) for k in ("seats", "profile", "table")}
        wanted = {"seats": str(table.seats), "profile": table.profile, "table": f"{table.venue}/{table.id}"}
        if logged["seats"] is None:
            with self.log.transaction():
                for k, v in wanted.items():
                    self.log.set_meta(k, v)
        else:
            differ = [
                f"{k} (log: {logged[k]}, config: {wanted[k]})" for k in wanted if logged[k] != wanted[k]
            ]
            if differ and self.log.count("in"):
                raise ServiceError(
                    f"event log {str(path)!r} belongs to another table setup: {', '.join(differ)}; "
                    "start with --fresh to archive it and begin a new log"
                )
        self.health.part("event_log").set("ok", str(path))

    def _open_engine(self) -> None:
        part = self.health.part("engine")
        try:
            from controller.rules.engine import TableEngine
            from controller.rules.profile import load_profile
        except ImportError as exc:
            self.engine = EngineUnavailable(str(exc))
            part.set("unavailable", f"rules engine not installed ({exc}); lines are logged, not ruled")
            return
        table = self.cfg.table
        self.engine = TableEngine(load_profile(table.profile), table.seats, actions=table.actions)
        part.set("ok", f"profile {table.profile}, {table.seats} seats, actions {table.actions}")

    def _feed(self, line: dict[str, Any], line_no: int) -> list[dict[str, Any]]:
        """The engine's answer; an engine bug becomes an error line, never a dead table."""
        try:
            return list(self.engine.feed(line, line_no))
        except Exception as exc:
            log.exception("event=engine_failure line=%d type=%s", line_no, line.get("type"))
            return [{"type": "error", "line": line_no, "message": f"engine failure: {type(exc).__name__}"}]

    def _replay(self) -> None:
        """Feed the logged inputs again; check the outputs against the logged ones."""
        assert self.log is not None
        t0 = time.monotonic()
        expected: list[dict[str, Any]] = []
        got: list[dict[str, Any]] = []
        first_mismatch: int | None = None

        def settle(line_no: int | None) -> None:
            nonlocal first_mismatch
            if got != expected:
                self.replay_mismatches += 1
                if first_mismatch is None:
                    first_mismatch = line_no
            expected.clear()
            got.clear()

        current: int | None = None
        for row in self.log.lines(("in", "out")):
            self.last_seq = row.seq
            if row.kind == "out":
                expected.append(row.line)
                continue
            settle(current)
            current = row.line_no
            self.line_no = row.line_no or self.line_no + 1
            outs = self._feed(row.line, self.line_no)
            got.extend(outs)
            if self._fold(row.line, outs):
                self.panel.on_line(row.line)
            for out in outs:
                self.panel.on_line(out)
            self.replayed += 1
        settle(current)
        if self.replay_mismatches and not isinstance(self.engine, EngineUnavailable):
            self.health.part("engine").set(
                "degraded",
                f"replay differs from the log at {self.replay_mismatches} line(s), first {first_mismatch}",
            )
        log.info(
            "event=replayed inputs=%d seconds=%.3f mismatches=%d",
            self.replayed,
            time.monotonic() - t0,
            self.replay_mismatches,
        )

    def _fold(self, line: dict[str, Any], outs: list[dict[str, Any]]) -> bool:
        accepted = not any(o.get("type") == "error" for o in outs)
        if accepted:
            self.view.apply_input(line)
        for out in outs:
            self.view.apply_output(out)
        return accepted

    async def _start_mqtt(self) -> None:
        assert self.outbox is not None
        b = self.cfg.broker
        host, port, protocol = b.host, b.port, b.protocol
        if not b.host:
            from controller.mqtt.broker import Broker

            self.broker = Broker(b.embedded_bind, b.embedded_port)
            try:
                await self.broker.start()
            except OSError as exc:
                raise ServiceError(
                    f"broker.embedded_port: cannot listen on {b.embedded_bind}:{b.embedded_port} ({exc.strerror}); "
                    "set broker.embedded_port, or broker.host to use a broker"
                ) from exc
            host = "127.0.0.1" if b.embedded_bind in ("0.0.0.0", "") else b.embedded_bind
            port = self.broker.port
            protocol = "3.1.1"
        elif protocol == "auto":
            protocol = "5"
        settings = LinkSettings(
            host=host,
            port=port,
            username=b.username,
            password=read_secret(b.password_file),
            tls=b.tls,
            ca_file=b.ca_file,
            cert_file=b.cert_file,
            key_file=b.key_file,
            tls_insecure=b.tls_insecure,
            protocol=protocol,
            keepalive=b.keepalive,
            client_id=b.client_id or f"smart-table-{self.cfg.table.venue}-{self.cfg.table.id}",
        )
        part = self.health.part("mqtt")
        self.link = MqttLink(settings, self.topics, self.outbox, self._on_command, on_status=part.set)
        self._tasks.append(asyncio.create_task(self.link.run(), name="mqtt"))
        self._state_dirty = True

    async def _wait_devices(self) -> None:
        """READY once every device is open or has said why not (bounded by service.ready_timeout)."""
        deadline = time.monotonic() + self.cfg.service.ready_timeout
        parts = [self.health.part(n) for n in ("camera", "panel", "nfc", "mqtt")]
        while time.monotonic() < deadline and not all(p.settled for p in parts):
            await asyncio.sleep(0.02)

    # -- inputs ------------------------------------------------------------------------------------

    def _emitter(self, source: str) -> Any:
        async def emit(line: dict[str, Any], kind: str = "in") -> None:
            await self.inbox.put(Item(source, line, kind=kind, t=time.time()))

        return emit

    async def inject(self, line: dict[str, Any] | str, source: str = "sim") -> list[dict[str, Any]]:
        """Feed one input line as if a device had produced it; returns the engine's outputs once logged."""
        if isinstance(line, str):
            try:
                line = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"inject: not JSON: {exc.msg} at column {exc.colno}") from None
        if not isinstance(line, dict):
            raise ValueError("inject: expected a JSON object")
        kind = "info" if line.get("type") == "checkin" else "in"
        future: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        await self.inbox.put(Item(source, line, kind=kind, future=future, t=time.time()))
        return await future

    async def push_frame(self, frame: Any, t: float | None = None) -> None:
        """One camera frame for the tracker (devices.camera = "sim")."""
        await self.camera.push(frame, t)

    # -- the engine task ---------------------------------------------------------------------------

    async def _engine_loop(self) -> None:
        while True:
            self._last_progress = time.monotonic()
            batch = await self.inbox.get_batch(BATCH)
            try:
                results = self._process(batch)
            except Exception as exc:  # the log is unwritable (disk full...): refuse, keep running
                log.exception("event=batch_failed items=%d", len(batch))
                self.health.part("event_log").set("failed", f"{type(exc).__name__}: {exc}"[:200])
                for item in batch:
                    if item.future is not None and not item.future.done():
                        item.future.set_exception(ServiceError(f"event log unwritable: {exc}"))
                await asyncio.sleep(0.5)
                continue
            if self.health.part("event_log").status != "ok":
                self.health.part("event_log").set("ok", str(self.cfg.event_log_path()))
            self._last_progress = time.monotonic()
            assert self.link is not None
            self.link.wake()
            for item, outs in results:
                if item.meta.get("accepted"):
                    self.panel.on_line(item.line)
                for out in outs:
                    self.panel.on_line(out)
                    self.camera.on_output(out)
                if item.kind == "info":
                    self.panel.on_line(item.line)
                if item.future is not None and not item.future.done():
                    item.future.set_result(outs)
            await asyncio.sleep(0)

    def _process(self, batch: list[Item]) -> list[tuple[Item, list[dict[str, Any]]]]:
        """Engine + log + outbox for a batch, in one transaction (pure CPU and SQLite, no awaits)."""
        assert self.log is not None and self.outbox is not None
        results: list[tuple[Item, list[dict[str, Any]]]] = []
        line_no = self.line_no
        with self.log.transaction():
            for item in batch:
                line, t = item.line, item.t or time.time()
                if item.kind == "info":
                    seq = self.log.append("info", item.source, line, t=t)
                    self._publish(self.topics.events, line, seq, t, item.source)
                    results.append((item, []))
                    continue
                line_no += 1
                seq = self.log.append("in", item.source, line, line_no, t=t)
                outs = self._feed(line, line_no)
                accepted = self._fold(line, outs)
                item.meta["accepted"] = accepted
                if accepted:
                    self._publish(self.topics.events, line, seq, t, item.source)
                for out in outs:
                    oseq = self.log.append("out", "engine", out, line_no, t=t)
                    self._publish(self.topics.rulings, out, oseq, t, None)
                    self.last_seq = oseq
                self.last_seq = max(self.last_seq, seq)
                results.append((item, outs))
            self._put_state()
        self.line_no = line_no
        return results

    def _publish(self, topic: str, line: dict[str, Any], seq: int, t: float, source: str | None) -> None:
        assert self.outbox is not None
        doc = public_line(line)
        doc["seq"] = seq
        doc["t"] = round(t, 3)
        if source is not None:
            doc["source"] = source
        self.outbox.put(topic, _payload(doc), qos=1)

    # -- state -------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The public snapshot published as the retained `state`."""
        engine_snapshot = None
        snap = getattr(self.engine, "snapshot", None)
        if callable(snap):
            try:
                engine_snapshot = snap()
            except Exception as exc:
                log.warning("event=engine_snapshot_failed error=%r", str(exc)[:200])
        doc = merge_engine_snapshot(self.view.snapshot(), engine_snapshot)
        t = self.cfg.table
        doc["table"] = {"id": t.id, "venue": t.venue, "seats": t.seats, "profile": t.profile}
        doc["health"] = self.health.as_dict()
        doc["panel"] = self.panel.describe()
        doc["seq"] = self.last_seq
        doc["t"] = round(time.time(), 3)
        if self.link is not None:
            mqtt = doc["health"].setdefault("mqtt", {})
            mqtt["outbox"] = len(self.outbox) if self.outbox else 0
            mqtt["sent"] = self.link.sent
            mqtt["commands_shed"] = self.link.commands_shed
            mqtt["replies_dropped"] = self.link.replies_dropped
        engine = doc["health"].setdefault("engine", {})
        engine["replayed"] = self.replayed
        engine["replay_mismatches"] = self.replay_mismatches
        return public_snapshot(doc)

    def _put_state(self) -> None:
        assert self.outbox is not None
        self.outbox.put(self.topics.state, _payload(self.state()), qos=1, retain=True, key="state")
        self._state_dirty = False

    def _health_changed(self) -> None:
        self._state_dirty = True

    async def _state_loop(self) -> None:
        """Health changes reach the retained state within a fraction of a second (coalesced)."""
        while True:
            await asyncio.sleep(0.25)
            if self._state_dirty and self.log is not None:
                with self.log.transaction():
                    self._put_state()
                if self.link is not None:
                    self.link.wake()

    # -- director commands -------------------------------------------------------------------------

    def _on_command(self, cmd: IncomingCommand) -> None:
        part = self.health.part("mqtt")
        part.count("commands")
        try:
            command = parse_command(
                cmd.name,
                cmd.payload,
                seats=self.cfg.table.seats,
                allowed=tuple(self.cfg.commands.allow),
                token=self._token,
            )
        except CommandError as exc:
            ident, reply_to = peek_envelope(cmd.payload)
            self._refuse(cmd, ident, reply_to, exc.code, str(exc))
            return
        topic = cmd.response_topic or command.reply_to or self.topics.reply
        if not self.topics.reply_allowed(topic):
            self._refuse(
                cmd,
                command.id,
                None,
                "invalid",
                f"reply topic {topic!r} is not under {self.topics.reply}/ (the table may publish only there)",
            )
            return
        if command.line is None:  # status: the service answers itself
            self._reply(
                cmd, topic, {"ok": True, "command": cmd.name, "id": command.id, "state": self.state()}
            )
            return
        future: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        item = Item("director", command.line, future=future, t=time.time())
        if not self.inbox.try_put(item):
            self._refuse(cmd, command.id, topic, "busy", "the table is busy; command not applied, try again")
            return
        waiter = asyncio.create_task(self._answer(cmd, topic, command.id, future))
        self._waiters.add(waiter)
        waiter.add_done_callback(self._waiters.discard)

    async def _answer(
        self, cmd: IncomingCommand, topic: str, ident: Any, future: asyncio.Future[Any]
    ) -> None:
        try:
            outs = await future
        except Exception as exc:
            self._refuse(cmd, ident, topic, "failed", str(exc))
            return
        errors = [o for o in outs if o.get("type") == "error"]
        reply: dict[str, Any] = {
            "ok": not errors,
            "command": cmd.name,
            "id": ident,
            "outputs": [public_line(o) for o in outs],
        }
        if errors:
            self.commands_refused += 1
            reply["error"] = "refused"
            reply["message"] = public_line(errors[0]).get("message", "refused by the rules engine")
        self._reply(cmd, topic, reply)

    def _refuse(
        self, cmd: IncomingCommand, ident: Any, reply_to: str | None, code: str, message: str
    ) -> None:
        self.commands_refused += 1
        self.health.part("mqtt").count("refused")
        log.info("event=command_refused command=%s code=%s message=%r", cmd.name[:40], code, message[:200])
        topic = cmd.response_topic or reply_to or self.topics.reply
        if not self.topics.reply_allowed(topic):
            topic = self.topics.reply
        self._reply(
            cmd, topic, {"ok": False, "command": cmd.name, "id": ident, "error": code, "message": message}
        )

    def _reply(self, cmd: IncomingCommand, topic: str, body: dict[str, Any]) -> None:
        if self.link is not None:
            self.link.reply(topic, _payload(body), cmd.correlation)

    # -- watchdog ----------------------------------------------------------------------------------

    def healthy(self) -> bool:
        """The main loop is alive and the engine keeps up: what earns a watchdog ping."""
        engine = next((t for t in self._tasks if t.get_name() == "engine"), None)
        if engine is None or engine.done():
            return False
        stuck = self.inbox.pending() > 0 and time.monotonic() - self._last_progress > 10
        return not stuck

    async def _watchdog(self) -> None:
        interval = watchdog_interval()
        if interval is None:
            return
        while True:
            t0 = time.monotonic()
            await asyncio.sleep(interval)
            lag = time.monotonic() - t0 - interval
            if lag < interval and self.healthy():
                notify(f"WATCHDOG=1\nSTATUS={self.health.summary()}")
            else:
                log.warning("event=watchdog_withheld lag=%.3f", lag)


def pid_rss_kib(pid: int | None = None) -> int:
    """Resident memory of a process in KiB (Linux /proc)."""
    with open(f"/proc/{pid or os.getpid()}/status") as f:
        for row in f:
            if row.startswith("VmRSS:"):
                return int(row.split()[1])
    return 0


async def run_forever(config: Config, stop: asyncio.Event) -> None:
    async with TableService(config):
        await stop.wait()


def archive_log(config: Config) -> str | None:
    """Move the event log aside (for --fresh); returns the archive's name."""
    path = config.event_log_path()
    if not path.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.stem}-{stamp}{path.suffix}")
    for suffix in ("", "-wal", "-shm"):
        src = path.with_name(path.name + suffix)
        if src.exists():
            with contextlib.suppress(OSError):
                src.rename(target.with_name(target.name + suffix))
    return str(target)
