"""The table service: every source's lines -> rules engine -> event log, panel and MQTT.

    async with TableService(config) as service:      # replays the log, opens devices, READY
        outputs = await service.inject({"type": "hand_start"}, source="sim")

One task owns the engine. It takes lines from the per-source inbox in batches, feeds each to the
engine, and writes inputs, outputs and the MQTT outbox rows in one SQLite transaction; only then are
the outputs shown on the panel, released to MQTT and answered to whoever asked. The engine is pure,
so at start the logged inputs are fed again and the table is exactly as it was before the restart.

The log is the truth: when a batch cannot be written (disk full, a string SQLite cannot encode) the
engine is rebuilt from the log and the batch is tried line by line, so the engine never holds a
change the log does not; a line the log refuses is answered with an error, and while the log is full
the table is `degraded` (said over MQTT directly, since the outbox lives in the same file) and the
device lines wait until it takes them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import functools
import json
import logging
import os
import sqlite3
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

from controller.mqtt.link import IncomingCommand, MqttLink
from controller.mqtt.outbox import Outbox
from controller.mqtt.topics import TableTopics, encodable
from controller.rules.engine import DIRECTOR_ALERTS, TableEngine
from controller.rules.profile import load_profile
from controller.service.commands import NOTICES, CommandError, parse_command, peek_envelope, redelivery_key
from controller.service.config import Config, read_secret
from controller.service.eventlog import EventLog
from controller.service.health import HealthBoard
from controller.service.inbox import Inbox, Item
from controller.service.picture import PicturePublisher
from controller.service.privacy import public_line, public_snapshot
from controller.service.sdnotify import notify, watchdog_interval
from controller.service.snapshot import SeatView, TableState
from controller.service.sources import CameraSource, NfcSource, PanelLink, supervise
from controller.tasks import stopping

log = logging.getLogger("smart_table.service")
BATCH = 64
# a core task (engine, state, MQTT link) failing this often within CRASH_WINDOW seconds is a table
# that cannot recover by itself: the watchdog ping is withheld and systemd restarts the service
CRASH_LOOP = 5
CRASH_WINDOW = 60.0


class ServiceError(RuntimeError):
    """The service cannot start (the message says what to change)."""


class LogRefused(ServiceError):
    """The event log did not take this line (the message says why); the table is unchanged."""


def _payload(line: dict[str, Any]) -> bytes:
    """JSON for MQTT; a string UTF-8 cannot carry (a lone surrogate) becomes `?`, never an exception."""
    return json.dumps(line, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "replace")


def _picture_header(out: dict[str, Any], seq: int, ruling_no: int, t: float) -> dict[str, Any]:
    """What the picture at an alert names: the ruling's numbers, type, reason and rule (public fields)."""
    line = public_line(out)
    header = {"seq": seq, "ruling_seq": ruling_no, "type": line.get("type"), "t": round(t, 3)}
    for key in ("reason", "rule", "seat"):
        if isinstance(line.get(key), str | int) and not isinstance(line.get(key), bool):
            header[key] = line[key]
    return header


def unencodable_field(value: Any, where: str = "") -> str | None:
    """The path of the first string in `value` that UTF-8 cannot carry, or None when all can."""
    if isinstance(value, str):
        return None if encodable(value) else where or "line"
    if isinstance(value, dict):
        for k, v in value.items():
            key = str(k)
            if not encodable(key):
                return f"{where}.{key!a}" if where else ascii(key)
            found = unencodable_field(v, f"{where}.{key}" if where else key)
            if found:
                return found
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = unencodable_field(v, f"{where}[{i}]")
            if found:
                return found
    return None


def log_is_full(exc: BaseException) -> bool:
    """SQLite or the file system ran out of room (as opposed to a line that cannot be written)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    return isinstance(exc, sqlite3.OperationalError | sqlite3.DatabaseError) and "full" in str(exc).lower()


class TableService:
    """One table: usable in-process (tests, the simulated table) or from `smart-table run`."""

    def __init__(self, config: Config) -> None:
        self.cfg = config
        self.topics = TableTopics(config.table.venue, config.table.id)
        self.health = HealthBoard(on_change=self._health_changed)
        self.log: EventLog | None = None
        self.outbox: Outbox | None = None
        self.engine: TableEngine | None = None
        self.view = TableState(self._engine_snapshot)
        sizes = {"director": config.service.command_backlog}
        self.inbox = Inbox(config.service.queue_size, sizes)
        self.camera = CameraSource(config, self.health.part("camera"))
        self.panel = PanelLink(config, self.health.part("panel"))
        self.nfc = NfcSource(config, self.health.part("nfc"))
        # a seated player's tap: bust-out or away/back (registry.checkin.SeatTaps)
        self.nfc.view = SeatView(self.view)
        self.panel.before_new_hand = self.nfc.new_hand_confirms
        self.link: MqttLink | None = None
        self.broker: Any = None
        self.picture: PicturePublisher | None = None  # the camera picture at an alert (mqtt.publish_picture)
        self.line_no = 0
        self.last_seq = 0
        # gap-free numbers of the lines published on `events` and on `rulings` (see docs/mqtt.md)
        self.event_no = 0
        self.ruling_no = 0
        self.log_refused = 0  # lines the event log did not take (unencodable, or the log was full)
        self.rebuilds = 0  # times the engine was rebuilt from the log after a failed write
        self._held: list[Item] = []  # device lines waiting for room in the log
        self._crashes: dict[str, deque[float]] = {}
        self._panel_seen: Any = None
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
        self._run_start_checks()
        self._open_log()
        self._open_engine()
        self._replay()
        await self._start_mqtt()
        self._start_picture()
        self._tasks += [
            asyncio.create_task(self._keep_running("engine", self._engine_loop), name="engine"),
            asyncio.create_task(self._keep_running("state", self._state_loop), name="state"),
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

    def _run_start_checks(self) -> None:
        """`smart-table doctor`'s device-free checks (clock, disk, secret files, layout) at every start,
        in health as the `doctor` part, so `top` and the director see what the installer must fix."""
        from controller.doctor import health_of, start_checks

        part = self.health.part("doctor")
        try:
            status, detail = health_of(start_checks(self.cfg))
        except Exception as exc:  # a check must never keep the table from starting
            status, detail = "failed", f"the start checks could not run: {type(exc).__name__}: {exc}"
        part.set(status, detail[:500])
        if status != "ok":
            log.warning("event=start_checks status=%s detail=%s", status, json.dumps(detail))

    def _start_picture(self) -> None:
        """The picture at each alert, where the table has a camera and the venue wants it."""
        m, part = self.cfg.mqtt, self.health.part("picture")
        if self.cfg.devices.camera == "none" or not m.publish_picture:
            why = (
                "devices.camera = none"
                if self.cfg.devices.camera == "none"
                else "mqtt.publish_picture = false"
            )
            part.set("disabled", why)
            return
        topic = self.topics.picture
        self.picture = PicturePublisher(
            self.camera.latest_picture,
            lambda payload: self.link is not None and self.link.reply(topic, payload, retain=True),
            part,
            max_age=self.cfg.devices.camera_stall_seconds,
            width=m.picture_width,
            quality=m.picture_quality,
        )
        part.set("ok", f"published on {topic} at each alert")

    async def stop(self) -> None:
        notify("STOPPING=1")
        if self.picture is not None:
            await self.picture.stop()
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
        table = self.cfg.table
        self.engine = TableEngine(load_profile(table.profile), table.seats, actions=table.actions)
        self.health.part("engine").set(
            "ok", f"profile {table.profile}, {table.seats} seats, actions {table.actions}"
        )

    def _feed(self, line: dict[str, Any], line_no: int) -> list[dict[str, Any]]:
        """The engine's answer; an engine bug becomes an error line, never a dead table."""
        try:
            return list(self.engine.feed(line, line_no))
        except Exception as exc:
            log.exception("event=engine_failure line=%d type=%s", line_no, line.get("type"))
            return [{"type": "error", "line": line_no, "message": f"engine failure: {type(exc).__name__}"}]

    def _replay(self, rebuild: bool = False) -> None:
        """Feed the logged inputs again; check the outputs against the logged ones.

        At start this also numbers the published lines of a log written before `event_seq` and
        `ruling_seq` existed. With `rebuild` (a write failed) the engine and the view are made anew
        from the log, and the panel is left as it is (it shows only what was logged).
        """
        assert self.log is not None
        t0 = time.monotonic()
        expected: list[dict[str, Any]] = []
        got: list[dict[str, Any]] = []
        first_mismatch: int | None = None
        mismatches = 0
        numbering: list[tuple[int, int]] = []
        event_no = ruling_no = 0
        pending_in: Any = None  # the last input row, numbered once its outputs are known

        def settle(line_no: int | None) -> None:
            nonlocal first_mismatch, mismatches, event_no, pending_in
            if got != expected:
                mismatches += 1
                if first_mismatch is None:
                    first_mismatch = line_no
            if pending_in is not None:
                row, accepted = pending_in
                if row.pub is not None:
                    event_no = max(event_no, row.pub)
                elif accepted:
                    event_no += 1
                    numbering.append((row.seq, event_no))
                pending_in = None
            expected.clear()
            got.clear()

        current: int | None = None
        line_no = 0
        for row in self.log.lines(("in", "out", "info")):
            self.last_seq = row.seq
            if row.kind == "out":
                expected.append(row.line)
                if row.pub is not None:
                    ruling_no = max(ruling_no, row.pub)
                else:
                    ruling_no += 1
                    numbering.append((row.seq, ruling_no))
                continue
            settle(current)
            if row.kind == "info":
                if row.pub is not None:
                    event_no = max(event_no, row.pub)
                else:
                    event_no += 1
                    numbering.append((row.seq, event_no))
                continue
            current = row.line_no
            line_no = row.line_no or line_no + 1
            outs = self._feed(row.line, line_no)
            got.extend(outs)
            accepted = self._fold(row.line, outs)
            pending_in = (row, accepted)
            if not rebuild:
                if accepted:
                    self.panel.on_line(row.line)
                for out in outs:
                    self.panel.on_line(out)
                self.replayed += 1
        settle(current)
        self.line_no = line_no
        self.event_no, self.ruling_no = event_no, ruling_no
        if numbering:
            with self.log.transaction():
                for seq, pub in numbering:
                    self.log.set_pub(seq, pub)
        if rebuild:
            return
        self.replay_mismatches = mismatches
        if self.replay_mismatches:
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

    def _rebuild(self, cause: BaseException) -> None:
        """A write failed after the engine had taken the batch: make the engine the log's again."""
        self.rebuilds += 1
        self.view.clear()  # the same object: the NFC source reads it too
        self._open_engine()
        self._replay(rebuild=True)
        log.warning(
            "event=engine_rebuilt_from_log cause=%r lines=%d",
            f"{type(cause).__name__}: {cause}"[:200],
            self.line_no,
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
            from controller.mqtt.local import LocalBroker

            self.broker = LocalBroker(b.embedded_bind, b.embedded_port)
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
        settings = dataclasses.replace(
            b,
            host=host,
            port=port,
            protocol=protocol,
            client_id=b.client_id or f"smart-table-{self.cfg.table.venue}-{self.cfg.table.id}",
            # the embedded broker keeps no sessions; Mosquitto keeps commands sent while we restart
            session_expiry=0 if self.broker is not None else b.session_expiry,
        )
        part = self.health.part("mqtt")
        self.link = MqttLink(
            settings,
            self.topics,
            self.outbox,
            self._on_command,
            on_status=part.set,
            password=read_secret(b.password_file),
        )
        self._tasks.append(asyncio.create_task(self._keep_running("mqtt", self.link.run), name="mqtt"))
        self._state_dirty = True

    async def _keep_running(self, name: str, run: Callable[[], Awaitable[None]]) -> None:
        """Supervise a core task: a failure is logged once with its cause, counted in health
        (`restarts`), and the task restarted with backoff; a crash loop withholds the watchdog."""
        delay = 0.2
        last_cause = ""
        while True:
            started = time.monotonic()
            try:
                await run()
                cause = "returned"
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if stopping():  # stopped while it failed: the error replaced the cancel
                    raise asyncio.CancelledError from exc
                cause = f"{type(exc).__name__}: {exc}".encode("utf-8", "replace").decode()[:200]
            crashes = self._crashes.setdefault(name, deque(maxlen=CRASH_LOOP))
            crashes.append(time.monotonic())
            part = self.health.part(name)
            part.count("restarts")
            if cause != last_cause:
                log.error("event=task_failed task=%s cause=%r retry_in=%.1f", name, cause, delay)
                last_cause = cause
            part.set("failed", f"task failed ({cause}); restarting")
            if time.monotonic() - started > CRASH_WINDOW:
                delay = 0.2
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)

    def crash_looping(self) -> list[str]:
        """Core tasks (and the MQTT link inside its task) failing faster than they recover."""
        now = time.monotonic()
        looping = [
            name
            for name, times in self._crashes.items()
            if len(times) >= CRASH_LOOP and now - times[0] < CRASH_WINDOW
        ]
        if self.link is not None and self.link.crash_looping(CRASH_LOOP, CRASH_WINDOW):
            looping.append("mqtt-link")
        return looping

    async def _wait_devices(self) -> None:
        """READY once every device is open or has said why not (bounded by service.ready_timeout)."""
        deadline = time.monotonic() + self.cfg.service.ready_timeout
        parts = [self.health.part(n) for n in ("camera", "panel", "nfc", "mqtt")]
        while time.monotonic() < deadline and not all(p.settled for p in parts):
            await asyncio.sleep(0.02)

    # -- inputs ------------------------------------------------------------------------------------

    def _emitter(self, source: str) -> Any:
        async def emit(line: dict[str, Any], kind: str = "in") -> None:
            bad = unencodable_field(line)
            if bad is not None:  # never reaches the log, MQTT or the panel
                self.health.part(source).count("lines_refused")
                log.warning("event=line_refused source=%s field=%s reason=unencodable", source, bad)
                return
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
        bad = unencodable_field(line)
        if bad is not None:
            raise ValueError(f"inject: {bad}: not valid Unicode (a lone surrogate); line not applied")
        kind = "info" if line.get("type") == "checkin" else "in"
        future: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        await self.inbox.put(Item(source, line, kind=kind, future=future, t=time.time()))
        return await future

    async def push_frame(self, frame: Any, t: float | None = None) -> None:
        """One camera frame for the tracker (devices.camera = "sim")."""
        await self.camera.push(frame, t)

    # -- the engine task ---------------------------------------------------------------------------

    async def _engine_loop(self) -> None:
        delay = 0.5
        while True:
            self._last_progress = time.monotonic()
            if self._held:
                if not self._log_writable():  # still full: wait for room, announce it
                    self._announce_state()
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 5.0)
                    continue
                batch, self._held = self._held, []
            else:
                batch = await self.inbox.get_batch(BATCH)
            try:
                results = self._process(batch)
            except Exception as exc:
                results = self._recover(batch, exc)
            else:
                delay = 0.5
                part = self.health.part("event_log")
                if part.status != "ok":
                    part.set("ok", str(self.cfg.event_log_path()))
            self._last_progress = time.monotonic()
            self._released(results)
            await asyncio.sleep(0)

    def _released(self, results: list[tuple[Item, list[dict[str, Any]]]]) -> None:
        """What was committed goes out: panel, camera tracker, MQTT, the askers."""
        assert self.link is not None
        self.link.wake()
        for item, outs in results:
            if item.meta.get("accepted"):
                self.panel.on_line(item.line)
            for out in outs:
                self.panel.on_line(out)
                self.camera.on_output(out)
            if self.picture is not None:
                for header in item.meta.get("alerts", ()):
                    self.picture.on_alert(header)
            if item.kind == "info":
                self.panel.on_line(item.line)
            if item.future is not None and not item.future.done():
                item.future.set_result(outs)

    def _recover(self, batch: list[Item], exc: BaseException) -> list[tuple[Item, list[dict[str, Any]]]]:
        """A batch the log did not take: rebuild the engine from the log, then line by line.

        A line the log refuses alone is answered with an error (it is not applied). When the log is
        full, the lines that have an asker are refused (they can ask again) and the device lines are
        held, in order, until the log takes them again: nothing the table saw is lost.
        """
        log.warning("event=batch_failed items=%d cause=%r", len(batch), f"{type(exc).__name__}: {exc}"[:200])
        self._rebuild(exc)
        results: list[tuple[Item, list[dict[str, Any]]]] = []
        for k, item in enumerate(batch):
            try:
                results += self._process([item])
                continue
            except Exception as one:
                self._rebuild(one)
                if log_is_full(one):
                    self._log_full(one, batch[k:])
                    break
                self._refuse_item(item, f"the event log did not take this line ({type(one).__name__}: {one})")
        return results

    def _log_full(self, exc: BaseException, rest: list[Item]) -> None:
        held = [item for item in rest if item.future is None]
        for item in rest:
            if item.future is not None:
                self._refuse_item(item, "the event log is full; not applied, try again when the table is ok")
        self._held = held + self._held
        self.health.part("event_log").set(
            "degraded",
            f"full ({type(exc).__name__}: {exc}); {len(self._held)} device line(s) waiting, commands refused",
        )
        self._announce_state()

    def _refuse_item(self, item: Item, reason: str) -> None:
        self.log_refused += 1
        self.health.part("event_log").count("lines_refused")
        log.warning(
            "event=line_refused source=%s type=%r reason=%r", item.source, item.line.get("type"), reason[:200]
        )
        if item.future is not None and not item.future.done():
            item.future.set_exception(LogRefused(reason))

    def _log_writable(self) -> bool:
        """A small committed write: does the log take lines again?"""
        assert self.log is not None
        return self.log.writable()

    def _announce_state(self) -> None:
        """The state straight to the broker (retained), when the outbox cannot take it (log full)."""
        if self.link is not None:
            self.link.reply(self.topics.state, _payload(self.state()), retain=True)
            self._panel_seen = self.panel.describe()

    def _process(self, batch: list[Item]) -> list[tuple[Item, list[dict[str, Any]]]]:
        """Engine + log + outbox for a batch, in one transaction (pure CPU and SQLite, no awaits).

        The counters are the service's only once the transaction is committed; on an exception the
        engine has taken lines the log has not, and the caller rebuilds it (`_recover`).
        """
        assert self.log is not None and self.outbox is not None
        results: list[tuple[Item, list[dict[str, Any]]]] = []
        line_no, event_no, ruling_no, last_seq = self.line_no, self.event_no, self.ruling_no, self.last_seq
        with self.log.transaction():
            for item in batch:
                line, t = item.line, item.t or time.time()
                if item.kind == "info":
                    event_no += 1
                    seq = self.log.append("info", item.source, line, t=t, pub=event_no)
                    self._publish(self.topics.events, line, seq, t, item.source, ("event_seq", event_no))
                    last_seq = max(last_seq, seq)
                    results.append((item, []))
                    continue
                cmd_key = item.meta.get("cmd_id")
                if cmd_key is not None and item.meta.get("redelivered", True):
                    earlier = self.log.command_outputs(cmd_key, self._redelivery_since(item))
                    if earlier is not None:  # delivered again (the broker redelivers unacked ones)
                        item.meta["duplicate"] = True
                        results.append((item, earlier))
                        continue
                line_no += 1
                outs = self._feed(line, line_no)
                accepted = self._fold(line, outs)
                item.meta["accepted"] = accepted
                if accepted:
                    event_no += 1
                seq = self.log.append(
                    "in", item.source, line, line_no, t=t, pub=event_no if accepted else None
                )
                if accepted:
                    self._publish(self.topics.events, line, seq, t, item.source, ("event_seq", event_no))
                last_seq = max(last_seq, seq)
                alerts: list[dict[str, Any]] = []
                for out in outs:
                    ruling_no += 1
                    oseq = self.log.append("out", "engine", out, line_no, t=t, pub=ruling_no)
                    self._publish(self.topics.rulings, out, oseq, t, None, ("ruling_seq", ruling_no))
                    last_seq = oseq
                    if out.get("type") in DIRECTOR_ALERTS:  # the camera picture's header (service.picture)
                        alerts.append(_picture_header(out, oseq, ruling_no, t))
                item.meta["alerts"] = alerts
                if cmd_key is not None:
                    self.log.record_command(cmd_key, seq, outs)
                results.append((item, outs))
            # the state document below names these (a failed commit rebuilds all three from the log)
            self.last_seq, self.event_no, self.ruling_no = last_seq, event_no, ruling_no
            self._put_state()
        self.line_no, self.event_no, self.ruling_no = line_no, event_no, ruling_no
        return results

    def _redelivery_since(self, item: Item) -> float | None:
        """A command without an id matches only what was logged within the broker's session expiry
        (what the broker can still be redelivering): packet ids are reused after that."""
        if "redelivered" not in item.meta:
            return None
        return time.time() - max(self.cfg.broker.session_expiry, 60)

    def _public_doc(
        self, line: dict[str, Any], seq: int, t: float, source: str | None, number: tuple[str, int]
    ) -> dict[str, Any]:
        """A line as published on `events` / `rulings` (and as `cmd/replay` answers it)."""
        doc = public_line(line)
        doc["seq"] = seq
        doc[number[0]] = number[1]
        doc["t"] = round(t, 3)
        if source is not None:
            doc["source"] = source
        return doc

    def _publish(
        self,
        topic: str,
        line: dict[str, Any],
        seq: int,
        t: float,
        source: str | None,
        number: tuple[str, int],
    ) -> None:
        assert self.outbox is not None
        self.outbox.put(topic, _payload(self._public_doc(line, seq, t, source, number)), qos=1)

    # -- state -------------------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The public snapshot published as the retained `state`: the engine's, and the service's parts."""
        doc = self.view.snapshot()
        t = self.cfg.table
        doc["table"] = {
            "id": t.id,
            "venue": t.venue,
            "seats": t.seats,
            "profile": t.profile,
            "actions": t.actions,
        }
        doc["health"] = self.health.as_dict()
        doc["panel"] = self.panel.describe()
        doc["seq"] = self.last_seq
        doc["event_seq"] = self.event_no
        doc["ruling_seq"] = self.ruling_no
        doc["t"] = round(time.time(), 3)
        if self.link is not None:
            mqtt = doc["health"].setdefault("mqtt", {})
            with contextlib.suppress(sqlite3.Error):
                mqtt["outbox"] = len(self.outbox) if self.outbox else 0
            mqtt["sent"] = self.link.sent
            mqtt["commands_shed"] = self.link.commands_shed
            mqtt["replies_dropped"] = self.link.replies_dropped
            mqtt["crashes"] = self.link.crashes
        engine = doc["health"].setdefault("engine", {})
        engine["replayed"] = self.replayed
        engine["replay_mismatches"] = self.replay_mismatches
        engine["rebuilds"] = self.rebuilds
        doc["health"].setdefault("event_log", {})["refused"] = self.log_refused
        return public_snapshot(doc)

    def _engine_snapshot(self) -> dict[str, Any] | None:
        """The engine's snapshot, the table's one state (None before the engine is open)."""
        if self.engine is None:
            return None
        try:
            return self.engine.snapshot()
        except Exception as exc:
            log.warning("event=engine_snapshot_failed error=%r", str(exc)[:200])
            return None

    def _put_state(self) -> None:
        assert self.outbox is not None
        self._panel_seen = self.panel.describe()
        self.outbox.put(self.topics.state, _payload(self.state()), qos=1, retain=True, key="state")
        self._state_dirty = False

    def _health_changed(self) -> None:
        self._state_dirty = True

    async def _state_loop(self) -> None:
        """Health and panel changes reach the retained state within a fraction of a second (coalesced).

        The panel's scene changes after the batch that caused it was committed, so the state written
        with the batch still names the old scene: it is written again once the panel has moved on.
        """
        while True:
            await asyncio.sleep(0.25)
            if self.log is None:
                continue
            if self._panel_seen != self.panel.describe():
                self._state_dirty = True
            if not self._state_dirty:
                continue
            try:
                with self.log.transaction():
                    self._put_state()
            except Exception as exc:  # the log is full: say so straight to the broker
                if not log_is_full(exc):
                    raise
                self._announce_state()
                self._state_dirty = False
            if self.link is not None:
                self.link.wake()

    # -- director commands -------------------------------------------------------------------------

    def _on_command(self, cmd: IncomingCommand) -> None:
        """Validate, queue for the engine, answer; the broker hears the command is handled (ack) only
        once it is logged or answered, so one the table dies holding is delivered again."""
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
            cmd.ack()
            return
        topic = cmd.response_topic or command.reply_to or self.topics.reply
        if not self.topics.reply_allowed(topic):
            self._refuse(
                cmd,
                command.id,
                None,
                "invalid",
                f"reply topic {topic!a} is not under {self.topics.reply}/ (the table may publish only there)",
            )
            cmd.ack()
            return
        if command.name == "replay":
            assert command.args is not None
            self._reply(
                cmd, topic, {"ok": True, "command": cmd.name, "id": command.id, **self.replay(**command.args)}
            )
            cmd.ack()
            return
        if command.line is None:  # status: the service answers itself
            self._reply(
                cmd, topic, {"ok": True, "command": cmd.name, "id": command.id, "state": self.state()}
            )
            cmd.ack()
            return
        if self._held:  # the log is full: say so now rather than keep the director waiting
            self._refuse(
                cmd, command.id, topic, "failed", "the event log is full; not applied, try again later"
            )
            cmd.ack()
            return
        future: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        # the floor's notices (move, colour-up) are only logged, published and shown on the panel
        kind = "info" if command.name in NOTICES else "in"
        item = Item("director", command.line, kind=kind, future=future, t=time.time())
        if command.id is not None:
            item.meta["cmd_id"] = json.dumps(command.id)
        elif cmd.mid:  # no id: still applied once if the broker delivers it again (issue 15)
            item.meta["cmd_id"] = redelivery_key(cmd.name, cmd.payload, cmd.mid)
            item.meta["redelivered"] = cmd.dup
        if not self.inbox.try_put(item):
            self._refuse(cmd, command.id, topic, "busy", "the table is busy; command not applied, try again")
            cmd.ack()
            return
        waiter = asyncio.create_task(self._answer(cmd, topic, command.id, future, item))
        self._waiters.add(waiter)
        waiter.add_done_callback(self._waiters.discard)

    def replay(self, stream: str = "rulings", since: int = 0, limit: int = 500) -> dict[str, Any]:
        """`cmd/replay`: the lines published on `stream` after number `since`, from the event log,
        exactly as they were published (so a subscriber that saw a gap, or a broker that lost what it
        had acknowledged, recovers)."""
        assert self.log is not None
        number = "ruling_seq" if stream == "rulings" else "event_seq"
        rows = self.log.published(stream, since, limit)
        lines = [
            self._public_doc(r.line, r.seq, r.t, None if r.kind == "out" else r.source, (number, r.pub or 0))
            for r in rows
        ]
        last = self.ruling_no if stream == "rulings" else self.event_no
        upto = rows[-1].pub if rows else since
        return {
            "stream": stream,
            "since": since,
            "lines": lines,
            "last": last,
            "more": bool(upto and upto < last),
        }

    async def _answer(
        self, cmd: IncomingCommand, topic: str, ident: Any, future: asyncio.Future[Any], item: Item
    ) -> None:
        try:
            outs = await future
        except Exception as exc:
            self._refuse(cmd, ident, topic, "failed", str(exc))
            cmd.ack()
            return
        errors = [o for o in outs if o.get("type") == "error"]
        reply: dict[str, Any] = {
            "ok": not errors,
            "command": cmd.name,
            "id": ident,
            "outputs": [public_line(o) for o in outs],
        }
        if item.meta.get("duplicate"):
            reply["duplicate"] = True  # applied once already: this is its first answer again
        if errors:
            self.commands_refused += 1
            reply["error"] = "refused"
            reply["message"] = public_line(errors[0]).get("message", "refused by the rules engine")
        self._reply(cmd, topic, reply)
        cmd.ack()

    def _refuse(
        self, cmd: IncomingCommand, ident: Any, reply_to: str | None, code: str, message: str
    ) -> None:
        self.commands_refused += 1
        self.health.part("mqtt").count("refused")
        log.info(
            "event=command_refused command=%s code=%s message=%r", ascii(cmd.name[:40]), code, message[:200]
        )
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
        """What earns a watchdog ping: the main loop is alive, the engine keeps up, and no core task
        (engine, state, the MQTT link) is failing faster than it recovers; otherwise systemd
        restarts the table."""
        for name in ("engine", "state", "mqtt"):
            task = next((t for t in self._tasks if t.get_name() == name), None)
            if task is None or task.done():
                return False
        looping = self.crash_looping()
        if looping:
            log.error("event=crash_loop tasks=%s", ",".join(looping))
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
