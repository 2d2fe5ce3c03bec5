"""`smart-table floor`: the venue's service. MQTT in and out (aiomqtt), the registry database, the
director's web page, and a clock tick; the decisions are the `Floor` model's.

Tables keep working when the floor is down. The floor connects with a fixed client id and a
persistent session, so Mosquitto queues the tables' rulings and events for it while it is away, and
the tables' retained `status` and `state` give it every table's picture the moment it subscribes.
Its clock and the event-wide places are stored in the registry database after every change.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from controller.floor.auth import Sessions, page_secret
from controller.floor.config import FloorConfig
from controller.floor.model import Floor, FloorError, Out
from controller.floor.results import event_points, payouts, season_csv, season_standings, standings_csv
from controller.floor.store import FloorStore
from controller.registry.errors import RegistryError
from controller.registry.registry import Registry

log = logging.getLogger("smart_table.floor")
TICK_SECONDS = 0.1
STOP_WAIT = 4.0  # seconds the broker link and the web server get to close when the floor stops
BATCH_MESSAGES = 200  # messages folded per event-loop turn: the page's pushes get a turn between batches


class FloorService:
    def __init__(self, cfg: FloorConfig) -> None:
        self.cfg = cfg
        self.sessions = Sessions(page_secret(cfg))  # before anything opens: a bad secret file stops the start
        self.registry = Registry.open(cfg.registry)
        self.store = FloorStore(self.registry.db, cfg.event)
        names: dict[str, str] = {}
        entrants = cfg.entrants
        self.has_event = False
        try:
            self.registry.event(cfg.event)
            self.has_event = True
            regs = self.registry.registrations(cfg.event)
            entrants = entrants or len(regs) or None
            for r in regs:
                m = self.registry.find_member(r.player_id)
                if m:
                    names[r.player_id] = m.display_name
        except RegistryError:
            log.warning("event=floor_no_event event_id=%s (places counted from the tables)", cfg.event)
        self.floor = Floor(
            cfg,
            clock_state=self.store.load_clock(),
            finishes=self.store.load_finishes(),
            names=names,
            entrants=entrants,
        )
        self.outgoing: asyncio.Queue[Out] = asyncio.Queue(maxsize=10000)
        self.changed = asyncio.Condition()
        self.connected = False
        self.closing = False
        self.messages = 0

    @staticmethod
    def check(cfg: FloorConfig) -> None:
        """What must be right before the floor starts (the page's secret file); raises
        FloorConfigError with the fix."""
        page_secret(cfg)

    # ------------------------------------------------------------------ what the page and CLI call

    def now(self) -> float:
        return time.time()

    def view(self) -> dict[str, Any]:
        doc = self.floor.view(self.now())
        doc["broker"] = "connected" if self.connected else "disconnected"
        doc["server_time"] = self.now()
        doc["login"] = self.sessions.required  # the page offers "Log out" only where there is a login
        return doc

    async def confirm(self, move_id: str) -> None:
        move = self.floor.proposal(move_id)
        if move is None:
            raise FloorError(f"no balancing proposal {move_id!r} (it may have been made or replaced)")
        if self.has_event:
            try:
                self.registry.move_player(
                    self.cfg.event,
                    move.player,
                    move.to_table,
                    move.to_seat,
                    now=_utc(self.now()),
                    stack=move.stack,
                    rule=move.rule,
                )
            except RegistryError as exc:
                raise FloorError(f"the registry refused the move: {exc}") from None
        await self._after(self.floor.confirm(move_id, self.now()))

    async def seat_directly(self, move_id: str) -> None:
        await self._after(self.floor.seat_directly(move_id))

    async def clock_command(self, what: str, seconds: float = 0.0) -> None:
        now = self.now()
        if what == "start":
            outs = self.floor.clock_start(now)
        elif what == "pause":
            self.floor.clock_pause(now)
            outs = []
        elif what == "resume":
            outs = self.floor.clock_resume(now)
        elif what == "add":
            self.floor.clock_add(now, seconds)
            outs = []
        else:
            raise FloorError(f"clock: unknown command {what!r} (start, pause, resume, add)")
        await self._after(outs)

    def standings_csv(self) -> str:
        finishes = self.floor.standings.by_place()
        return standings_csv(
            finishes,
            payouts(self.cfg.profile, finishes, self.cfg.payouts),
            event_points(self.cfg.profile, finishes, self.cfg.points),
            self.floor.names,
        )

    def season_csv(self) -> str:
        """Season standings over every event stored in this registry (points per this venue's rulebook)."""
        events = self.store.finishes_by_event()
        points = [event_points(self.cfg.profile, fs, self.cfg.points) for fs in events.values()]
        return season_csv(season_standings(self.cfg.profile, points))

    async def wait_change(self, version: int, timeout: float = 10.0) -> None:
        async with self.changed:
            try:
                await asyncio.wait_for(
                    self.changed.wait_for(lambda: self.floor.version != version or self.closing), timeout
                )
            except TimeoutError:
                pass

    # ------------------------------------------------------------------ internals

    async def _after(self, outs: list[Out]) -> None:
        for out in outs:
            try:
                self.outgoing.put_nowait(out)
            except asyncio.QueueFull:
                log.error("event=floor_outgoing_full dropped=%s", out.topic)
        f = self.floor
        if f.clock_dirty:
            f.clock_dirty = False
            self.store.save_clock(f.clock)
        if f.new_finishes:
            done, f.new_finishes = f.new_finishes, []
            self.store.save_finishes(done)
        async with self.changed:
            self.changed.notify_all()

    async def _mqtt(self, stop: asyncio.Event) -> None:
        import aiomqtt

        from controller.service.config import read_secret

        b = self.cfg.broker
        password = read_secret(b.password_file) if b.password_file else ""
        while not stop.is_set():
            try:
                async with aiomqtt.Client(
                    **b.login(password),
                    identifier=b.client_id,
                    clean_session=False,
                    protocol=aiomqtt.ProtocolVersion.V311,
                    timeout=10,
                    max_queued_incoming_messages=20000,
                ) as client:
                    read_in_batches(client)
                    for topic in self.floor.subscriptions():
                        await client.subscribe(topic, qos=1)
                    self.connected = True
                    log.info("event=floor_connected broker=%s:%d", b.host, b.port)
                    await self._after([])
                    sender = asyncio.create_task(self._send(client))
                    try:
                        inbox = getattr(client, "_queue", None)  # aiomqtt's queue of received messages
                        async for first in client.messages:
                            # aiomqtt hands out one message per task and event-loop turn; what has
                            # already arrived is taken at once and folded in one go (bench_floor)
                            batch = [first]
                            while (
                                isinstance(inbox, asyncio.Queue)
                                and not inbox.empty()
                                and len(batch) < BATCH_MESSAGES
                            ):
                                batch.append(inbox.get_nowait())
                            outs: list[Out] = []
                            now = self.now()
                            for message in batch:
                                payload = (
                                    message.payload
                                    if isinstance(message.payload, bytes)
                                    else str(message.payload).encode()
                                )
                                self.messages += 1
                                try:
                                    outs += self.floor.handle(str(message.topic), payload, now)
                                except Exception:  # a message the model cannot fold must not stop the floor
                                    log.exception("event=floor_message_failed topic=%s", message.topic)
                            await self._after(outs)
                    finally:
                        sender.cancel()
                        await asyncio.gather(sender, return_exceptions=True)
            except aiomqtt.MqttError as exc:
                self.connected = False
                log.warning("event=floor_broker_unreachable error=%s", exc)
                await self._after([])
                await asyncio.sleep(1.0)

    async def _send(self, client: Any) -> None:
        while True:
            out = await self.outgoing.get()
            try:
                await client.publish(out.topic, json.dumps(out.body, separators=(",", ":")), qos=1)
            except Exception:
                await self.outgoing.put(out)  # sent again after the reconnect
                raise

    async def _tick(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await self._after(self.floor.tick(self.now()))
            except Exception:  # one bad tick must not stop the clock
                log.exception("event=floor_tick_failed")
            await asyncio.sleep(TICK_SECONDS)

    async def run(self, stop: asyncio.Event | None = None) -> None:
        import uvicorn

        from controller.floor.web import make_app

        stop = stop or asyncio.Event()
        server = uvicorn.Server(
            uvicorn.Config(
                make_app(self),
                host=self.cfg.web_bind,
                port=self.cfg.web_port,
                log_level="warning",
                lifespan="off",
                ws="none",
                timeout_graceful_shutdown=2,  # an open page's event stream must not hold the floor's exit
            )
        )
        server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
        tasks = [
            asyncio.create_task(self._mqtt(stop)),
            asyncio.create_task(self._tick(stop)),
            asyncio.create_task(server.serve()),
        ]
        log.info(
            "event=floor_started venue=%s event_id=%s web=http://%s:%d/",
            self.cfg.venue,
            self.cfg.event,
            self.cfg.web_bind,
            self.cfg.web_port,
        )
        try:
            await stop.wait()
        finally:
            self.closing = True  # the pages' event streams end, so the web server stops at once
            async with self.changed:
                self.changed.notify_all()
            server.should_exit = True
            for t in tasks[:2]:
                t.cancel()
            # the broker link says goodbye and the web server lets its pages go; neither may hold
            # the floor's exit past STOP_WAIT (aiomqtt waits up to its own 10 s timeout for a
            # broker's goodbye, which a director's restart should not): what is left is cut off
            _done, pending = await asyncio.wait(tasks, timeout=STOP_WAIT)
            for t in pending:
                log.warning("event=floor_stop_cut_off task=%s", t.get_coro().__qualname__)
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.registry.close()


READ_BATCH = 500  # packets read per wake-up of the floor's socket


def read_in_batches(client: Any) -> None:
    """Let one readable socket event read every packet that has arrived, not one.

    paho's `loop_read()` reads a single packet per call unless it has messages of its own in
    flight, and aiomqtt calls it once per readable event: with 30 busy tables the floor then spent
    an event-loop turn (a poll, a task switch and a wake-up of the reader) per message and fell
    behind Mosquitto by about a second (bench_floor.py's p99, issue 16). Reading up to READ_BATCH
    packets per event lets the floor fold a burst in one turn. paho keeps a partly read packet
    between calls, so stopping on "would block" loses nothing. Left as it is when paho's internals
    differ from the ones this was written against (paho-mqtt 2.x).
    """
    paho = getattr(client, "_client", None)
    if paho is None or not all(hasattr(paho, a) for a in ("_packet_read", "_loop_rc_handle", "_sock")):
        return
    from paho.mqtt.client import MQTTErrorCode

    def loop_read(max_packets: int = 1) -> MQTTErrorCode:
        for _ in range(READ_BATCH):
            if paho._sock is None:
                return MQTTErrorCode.MQTT_ERR_NO_CONN
            rc = paho._packet_read()
            if rc > 0:
                return paho._loop_rc_handle(rc)
            if rc == MQTTErrorCode.MQTT_ERR_AGAIN:
                break
        return MQTTErrorCode.MQTT_ERR_SUCCESS

    paho.loop_read = loop_read


def _utc(ts: float):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC)
