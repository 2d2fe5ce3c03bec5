"""The simulated table: the real table service with simulated sensors, driven by a scenario.

    async with SimTable(scenario, settings, artifacts_dir) as sim:
        result = await run_scenario(sim, scenario)

What is real and what is simulated:
- the table service (controller.service.app.TableService): rules engine, event log, MQTT outbox,
  director commands, panel link, NFC check-in, exactly as `smart-table run` starts it;
- the broker: a private Mosquitto on a free port of 127.0.0.1 when /usr/sbin/mosquitto (or
  `mosquitto` on PATH) exists, else the service's embedded broker; everything the scenario checks
  about rulings is read back from the broker by an MQTT client, as a director's screen would;
- the camera: frames rendered from the scripted table (hil.camera.SimulatedCamera) are pushed into
  the service, which runs the real vision pipeline on them (detector + tracker);
- the NFC reader: hil.nfc's simulated reader behind nfcpy, with cards written as the desk writes
  them and a player registry (SQLite) set up as the desk would (members, cards, seat draw);
- the LED panel: the real firmware under CPython on a pseudo-terminal (hil.panel_sim), and its
  NEW HAND button starts each hand.

At each ruling the simulated table saves a picture of the panel and an annotated camera frame; the
artifacts folder ends with the event log, the rulings and an HTML report (hil.report).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from controller.mqtt.mosquitto import Mosquitto, MosquittoError, find_mosquitto
from hil.scenario import (
    TABLE_ID,
    Expectation,
    Player,
    Scenario,
    ScenarioResult,
    Step,
    StepResult,
    describe_panel,
    describe_ruling,
    matches,
    panel_matches,
    ruling_matches,
)

log = logging.getLogger("smart_table.sim")
EVENT_ID = "SIM"
NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)
# How long a step waits for the camera to report what it rendered before entering the line itself.
CAMERA_FALLBACK_S = 4.0
ARTIFACT_FILES = (
    "registry.sqlite3",
    "registry.sqlite3-wal",
    "registry.sqlite3-shm",
    "venue-keys.toml",
    "events.db",
    "events.db-wal",
    "events.db-shm",
    "panel",
    "frames",
    "mosquitto",
    "report.html",
    "summary.json",
    "rulings.jsonl",
    "events.jsonl",
    "camera.jsonl",
    "service.log",
)


class SimError(RuntimeError):
    """The simulated table cannot start or run (the message says what is missing)."""


@dataclass
class SimSettings:
    """How the simulated table runs; defaults keep a scenario fast on a small machine."""

    width: int = 640  # rendered frame size
    height: int = 360
    fps: float = 25.0  # frames rendered and pushed per second (at most; the tracker sets the pace)
    debounce: int = 2  # frames a card must be seen before the tracker reports it
    deck: str = "anglo_poker"  # folder under ../shared/data/decks (or SMART_TABLE_DECKS)
    seed: int = 0  # rendering noise and card choice
    broker: str = "auto"  # auto | mosquitto | embedded
    step_timeout: float = 6.0  # seconds a step may take to show what it expects
    captures: bool = True  # panel picture and annotated frame at each ruling
    mosquitto: str = ""  # path of the mosquitto binary (empty: /usr/sbin/mosquitto or PATH)
    external_broker: str = ""  # "host:port" of a broker already running (tests, a venue's broker)
    # the table reads with the deck it is shown enrolled (`smart-table vision enroll`, docs/vision.md),
    # as a venue sets it up; False: the built-in reader, which names fewer of the small cards of a
    # 640x360 frame surely (it then reports them without their codes, issue 12)
    enrolled: bool = True


def _enrolled_deck(deck: str, folder: Path) -> str:
    """The deck model file of `deck`, enrolled from its card images as an installer does."""
    from hil.scene import deck_dir
    from vision.read import enroll_deck

    model, _warnings = enroll_deck(deck_dir(deck))
    path = folder / f"{deck}.deck.npz"
    model.save(str(path))
    return str(path)


def check_decks(deck: str) -> None:
    """Fail early, and say where the card images were looked for."""
    from hil.scene import deck_dir, load_deck

    path = deck_dir(deck)
    try:
        load_deck(deck)
    except FileNotFoundError as exc:
        raise SimError(
            f"card images for the simulated camera are missing: {exc}. The deck folders live in "
            f"../shared/data/decks beside the repository (looked in {path}); "
            "set SMART_TABLE_DECKS=/path/to/decks to use another folder"
        ) from None


class Observer:
    """An MQTT client watching the table as the director's screen does: every message under the prefix,
    folded by the directors' own model (controller/mqtt/table_view.py), so each event and ruling is
    kept once, in order, and a gap in the table's numbered streams is filled with `cmd/replay`."""

    def __init__(self, host: str, port: int, prefix: str) -> None:
        from controller.mqtt.table_view import TableView
        from controller.mqtt.topics import TableTopics

        self.host, self.port, self.prefix = host, port, prefix
        venue, table = prefix.split("/")[-2:]
        self.view = TableView(TableTopics(venue, table))
        self.rulings: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.replies: list[dict[str, Any]] = []
        self.messages = 0
        self.last_message = time.monotonic()
        self.on_ruling: list[Callable[[dict[str, Any]], None]] = []  # rulings, and check-in events
        self._changed = asyncio.Event()
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.client: Any = None

    @property
    def state(self) -> dict[str, Any] | None:
        return self.view.state or None

    @property
    def status(self) -> str | None:
        return None if self.view.status == "unknown" else self.view.status

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="sim-observer")
        try:
            async with asyncio.timeout(10):
                await self._connected.wait()
        except TimeoutError:
            raise SimError(f"cannot subscribe to the broker at {self.host}:{self.port}") from None

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    async def _run(self) -> None:
        import aiomqtt

        while True:
            try:
                async with aiomqtt.Client(
                    self.host, self.port, identifier=f"sim-observer-{os.getpid()}-{id(self)}", timeout=5
                ) as client:
                    self.client = client
                    await client.subscribe(self.prefix + "/#", qos=1)
                    self._connected.set()
                    retrying = asyncio.create_task(self._retry(client))
                    try:
                        async for message in client.messages:
                            self._on_message(str(message.topic), bytes(message.payload))
                            await self._ask_replays(client)
                    finally:
                        retrying.cancel()
            except aiomqtt.MqttError as exc:
                log.warning("event=observer_disconnected error=%r", str(exc)[:200])
                self.client = None
                self._connected.clear()
                await asyncio.sleep(0.2)

    async def _retry(self, client: Any) -> None:
        import aiomqtt

        with contextlib.suppress(aiomqtt.MqttError):
            while True:
                await asyncio.sleep(0.5)
                await self._ask_replays(client)

    async def _ask_replays(self, client: Any) -> None:
        requests, lines = self.view.tick(time.monotonic())
        self._passed(lines)
        for body in requests:
            doc = {**body, "id": f"sim-replay-{time.monotonic_ns()}", "reply_to": f"{self.prefix}/reply/sim"}
            await client.publish(f"{self.prefix}/cmd/replay", json.dumps(doc), qos=1)

    def _on_message(self, topic: str, payload: bytes) -> None:
        self.messages += 1
        self.last_message = time.monotonic()
        fed = self.view.feed(topic, payload, time.monotonic())
        if fed.kind in ("reply", "replay") and fed.doc is not None:
            self.replies.append(fed.doc)
        self._passed(fed.lines)
        self._changed.set()

    def _passed(self, lines: list[tuple[str, dict[str, Any]]]) -> None:
        for stream, doc in lines:
            if stream == "rulings":
                self.rulings.append(doc)
                for callback in list(self.on_ruling):
                    callback(doc)
            else:
                self.events.append(doc)
                if doc.get("type") == "checkin":  # what a player sees at tap-in belongs in the report too
                    for callback in list(self.on_ruling):
                        callback(doc)
        if lines:
            self._changed.set()

    async def changed(self, timeout: float) -> None:
        self._changed.clear()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._changed.wait()

    async def command(self, name: str, body: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
        """A director command (cmd/<name>), answered on reply/sim; returns the reply."""
        if self.client is None:
            raise SimError("the MQTT observer is not connected")
        ident = f"sim-{len(self.replies)}-{time.monotonic_ns()}"
        payload = json.dumps({"id": ident, "reply_to": f"{self.prefix}/reply/sim", **body})
        await self.client.publish(f"{self.prefix}/cmd/{name}", payload, qos=1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for reply in self.replies:
                if reply.get("id") == ident:
                    return reply
            await self.changed(0.1)
        raise SimError(f"cmd/{name}: no reply from the table within {timeout:.0f} s")


# -- registration desk ---------------------------------------------------------------------------------


@dataclass
class Desk:
    """The venue's registry for the simulated event: where players are drawn, and their cards."""

    registry_url: str
    keys_file: Path
    venue: str
    uids: dict[str, bytes]
    assignments: dict[str, tuple[str, int]]


def uid_for(n: int) -> bytes:
    return bytes([4, 0x51, 0x4D, 0, 0, n // 256, n % 256])


def set_up_desk(workdir: Path, venue: str, profile: str, seats: int, players: tuple[Player, ...]) -> Desk:
    """Members, cards and a seat draw in a fresh SQLite registry, through the registry's own API.

    The draw is random; the scenario says where each player sits. So each draw (and each late
    registration, which takes a random free seat) gets a seed chosen with the registry's own pure draw
    functions so that it lands the player on the seat the scenario names: the check-in path is then
    exactly the real one. Players drawn at another table fill that table first.
    """
    from controller.registry.draw import TableSpec, draw_late_seat, draw_seats
    from controller.registry.keys import create_key_file, load_keys
    from controller.registry.policy import policy_for
    from controller.registry.registry import Registry

    keys_file = workdir / "venue-keys.toml"
    if not keys_file.exists():
        create_key_file(keys_file, venue, "k1")
    keys = load_keys(keys_file)
    url = f"sqlite:///{workdir / 'registry.sqlite3'}"
    registry = Registry.open(url)
    try:
        ours = [p for p in players if p.table == TABLE_ID]
        others = [p for p in players if p.table != TABLE_ID]
        other_tables: dict[str, int] = {}
        for p in others:
            other_tables[p.table] = other_tables.get(p.table, 0) + 1
        for t, n in list(other_tables.items()):
            # A table has two seats at least; a filler player makes it full, so that the late
            # registrations of this table's players cannot be sent there.
            for k in range(n, 2):
                filler = Player(f"{t}-x{k}", "Other player", None, t)
                players = (*players, filler)
                other_tables[t] += 1
        tables = [TableSpec(TABLE_ID, seats)] + [TableSpec(t, max(2, n)) for t, n in other_tables.items()]
        registry.open_event(
            EVENT_ID,
            "Simulated event",
            venue=venue,
            profile=profile,
            starts_at=NOW,
            tables=tables,
            now=NOW,
            min_age=18,
        )
        uids: dict[str, bytes] = {}
        for n, p in enumerate(players, start=1):
            registry.add_member(p.id, p.name, date(1990, 5, 1), now=NOW, photo_id_checked=True)
            uids[p.id] = uid_for(n)
            registry.issue_card(uids[p.id], p.id, venue, keys.current, now=NOW)
        seat1_button = policy_for(profile).seat1_button
        if not ours:
            raise SimError("players: at least one player must sit at this table")
        first = next((p for p in ours if p.seat == 1), ours[0]) if seat1_button else ours[0]
        if seat1_button and first.seat != 1:
            raise SimError(
                f"profile {profile}: the player drawn at seat 1 takes the first button, "
                "so one player at this table needs seat 1"
            )

        def wanted(a_seat: int, a_table: str, p: Player) -> bool:
            return a_table == p.table and (p.seat is None or a_seat == p.seat)

        seed = _find_seed(
            lambda rng: all(
                wanted(a.seat, a.table_id, first)
                for a in draw_seats([first.id], tables, rng, seat1_button=seat1_button)
            )
        )
        registry.register(EVENT_ID, first.id, now=NOW)
        registry.draw(EVENT_ID, seed=seed, now=NOW)
        taken: dict[str, set[int]] = {TABLE_ID: {first.seat or 0}}
        pending = [p for p in players if p is not first]
        while pending:
            placed = False
            for p in sorted(pending, key=lambda q: q.table == TABLE_ID):  # other tables first

                def lands(rng: random.Random, p: Player = p) -> bool:
                    t, s = draw_late_seat({k: set(v) for k, v in taken.items()}, tables, rng)
                    return wanted(s, t, p)

                try:
                    seed = _find_seed(lands, tries=4000)
                except SimError:
                    continue
                registry.register(EVENT_ID, p.id, now=NOW, seed=seed)
                a = registry.assignment(EVENT_ID, p.id)
                assert a is not None
                taken.setdefault(a.table_id, set()).add(a.seat)
                pending.remove(p)
                placed = True
                break
            if not placed:
                names = ", ".join(p.id for p in pending)
                raise SimError(
                    f"players: cannot draw {names} where the scenario puts them "
                    "(too many players at other tables?)"
                )
        assignments = {}
        for p in players:
            a = registry.assignment(EVENT_ID, p.id)
            assert a is not None
            assignments[p.id] = (a.table_id, a.seat)
        return Desk(url, keys_file, venue, uids, assignments)
    finally:
        registry.close()


def _find_seed(ok: Callable[[random.Random], bool], tries: int = 20000) -> int:
    for seed in range(tries):
        if ok(random.Random(seed)):
            return seed
    raise SimError("no seed gives the wanted seat draw")


# -- the table -----------------------------------------------------------------------------------------


def _recording_tracker(
    layout: Any, debounce: int, sink: list[tuple[float, dict[str, Any]]], camera: Any
) -> Any:
    """The vision tracker, also keeping what it reported (so a step knows what the camera saw). It
    reads with the service camera's own detector (the venue's enrolled deck, `devices.deck`), which
    the camera opens at start, as the tracker the service makes for itself does."""
    from vision.tracker import Tracker

    class RecordingTracker(Tracker):
        def update(self, frame_or_detections: Any, t: float) -> list[dict]:
            if self._detector is None and camera.detector is not None:
                camera.detector.layout = self.layout
                self._detector = camera.detector
            lines = super().update(frame_or_detections, t)
            now = time.monotonic()
            for line in lines:
                sink.append((now, dict(line)))
            return lines

    return RecordingTracker(layout, debounce_frames=debounce)


@dataclass
class Capture:
    """What the table showed at one ruling: the panel picture and the annotated camera frame."""

    index: int
    ruling: dict[str, Any]
    step: str
    panel_png: str | None = None
    frame_png: str | None = None
    panel_text: str = ""


@dataclass
class Progress:
    """What the live view shows (updated by the runner)."""

    scenario: str = ""
    profile: str = ""
    broker: str = ""
    artifacts: str = ""
    steps: list[StepResult] = field(default_factory=list)
    current: int = 0
    started: float = field(default_factory=time.monotonic)


class SimTable:
    """The whole simulated table (async context manager). See the module docstring."""

    def __init__(
        self,
        scenario: Scenario,
        settings: SimSettings | None = None,
        artifacts: str | os.PathLike[str] | None = None,
    ) -> None:
        self.scenario = scenario
        self.settings = settings or SimSettings()
        stamp = time.strftime("%Y%m%d-%H%M%S")
        folder = Path(artifacts) if artifacts else Path("sim-artifacts") / f"{scenario.slug}-{stamp}"
        self.artifacts = folder.absolute()  # the registry and event log are opened by URL/path elsewhere
        self.service: Any = None
        self.observer: Observer | None = None
        self.mosquitto: Mosquitto | None = None
        self.broker_desc = ""
        self.desk: Desk | None = None
        self.cam: Any = None
        self.layout: Any = None
        self.camera_lines: list[tuple[float, dict[str, Any]]] = []
        self.captures: list[Capture] = []
        self.frames_pushed = 0
        self.last_frame: Any = None
        self.button_at: int | None = None  # where the physical button lies
        self.cards_on_felt = 0
        self.hands: list[dict[str, Any]] = []  # `hand` rulings, in order
        self.current_step = ""
        self.progress = Progress(scenario=scenario.name, profile=scenario.profile)
        self._cam_lock = asyncio.Lock()
        self._capture_queue: asyncio.Queue[tuple[dict[str, Any], str]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[Any]] = []
        self._reader_name = f"sim-{os.getpid()}-{time.monotonic_ns()}"
        self._detector: Any = None
        self._last_panel_key: Any = None
        self._last_frame_key: Any = None
        self._cam_version = 0
        self._log_handler: logging.Handler | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    async def __aenter__(self) -> SimTable:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        s, sc = self.settings, self.scenario
        check_decks(s.deck)
        self._prepare_artifacts()
        (self.artifacts / "panel").mkdir(exist_ok=True)
        (self.artifacts / "frames").mkdir(exist_ok=True)
        self.progress.artifacts = str(self.artifacts)
        self._log_to_file()

        from controller.service.app import TableService
        from controller.service.config import parse_config
        from hil.camera import SimulatedCamera
        from vision.layout import default_layout

        broker: dict[str, Any]
        binary = (
            find_mosquitto(s.mosquitto)
            if s.broker in ("auto", "mosquitto") and not s.external_broker
            else None
        )
        if s.broker == "mosquitto" and binary is None:
            raise SimError(
                "--broker mosquitto: no mosquitto binary found (/usr/sbin/mosquitto or PATH); "
                "install it (apt install mosquitto) or use --broker embedded"
            )
        if s.external_broker:
            host, _, port_text = s.external_broker.rpartition(":")
            if not host or not port_text.isdigit():
                raise SimError(f"external broker {s.external_broker!r}: expected host:port")
            broker = {"host": host, "port": int(port_text)}
            self.broker_desc = f"external {s.external_broker}"
        else:
            broker = {"host": "", "embedded_bind": "127.0.0.1", "embedded_port": 0}
        if binary is not None and not s.external_broker:
            # a private broker for one simulated table: 127.0.0.1 only, a free port, no persistence
            mosquitto = Mosquitto(self.artifacts / "mosquitto", persistence=False, binary=binary)
            try:
                await mosquitto.start_async()
            except MosquittoError as exc:
                if s.broker == "mosquitto":
                    raise SimError(str(exc)) from None
                log.warning("event=mosquitto_failed fallback=embedded error=%r", str(exc)[:300])
            else:
                self.mosquitto = mosquitto
                broker = {"host": "127.0.0.1", "port": mosquitto.port}
                self.broker_desc = f"mosquitto 127.0.0.1:{mosquitto.port}"
        venue = sc.profile  # the venue whose keys sign the player cards
        topic_venue = f"sim-{sc.slug}"[:64]  # topics smarttable/v1/sim-<scenario>/T1: runs never mix
        devices: dict[str, Any] = {
            "camera": "sim",
            "panel": "sim",
            "nfc": "none",
            "camera_fps": float(s.fps),
            "sim_width": s.width,
            "sim_height": s.height,
        }
        if s.enrolled:
            devices["deck"] = await asyncio.to_thread(_enrolled_deck, s.deck, self.artifacts)
        checkin: dict[str, Any] = {}
        if sc.players:
            self.desk = await asyncio.to_thread(
                set_up_desk, self.artifacts, venue, sc.profile, sc.seats, sc.players
            )
            devices["nfc"] = f"sim:{self._reader_name}"
            checkin = {
                "registry": self.desk.registry_url,
                "keys_file": str(self.desk.keys_file),
                "event": EVENT_ID,
            }
        config = parse_config(
            {
                "table": {
                    "id": TABLE_ID,
                    "venue": topic_venue,
                    "seats": sc.seats,
                    "profile": sc.profile,
                    "actions": sc.actions,
                },
                "devices": devices,
                "broker": broker,
                "event_log": {"path": str(self.artifacts / "events.db"), "synchronous": "normal"},
                "checkin": checkin,
                "service": {"ready_timeout": 8.0},
            },
            "<smart-table sim>",
        )
        self.cam = SimulatedCamera(
            seats=sc.seats, deck=s.deck, width=s.width, height=s.height, seed=s.seed, fps=s.fps
        )
        self.layout = default_layout(sc.seats, s.width, s.height)
        self.service = TableService(config)
        # Frames come from our own rendering loop (pushed in-process), so the scene never changes
        # while a frame of it is being rendered; the service's camera runs the real vision pipeline.
        self.service.camera.sim = None
        self.service.camera.tracker = _recording_tracker(
            self.layout, s.debounce, self.camera_lines, self.service.camera
        )
        self._tasks.append(asyncio.create_task(self._frame_pump(), name="sim-frames"))
        await self.service.start()
        host = "127.0.0.1"
        if self.mosquitto is not None:
            port = self.mosquitto.port
        elif s.external_broker:
            host, port = broker["host"], broker["port"]
        else:
            self.broker_desc = f"embedded 127.0.0.1:{self.service.broker.port}"
            port = self.service.broker.port
        self.progress.broker = self.broker_desc
        self.observer = Observer(host, port, config.prefix)
        self.observer.on_ruling.append(self._on_ruling)
        await self.observer.start()
        self._tasks.append(asyncio.create_task(self._capture_loop(), name="sim-captures"))
        await self._wait_panel()
        health = self.service.health.as_dict()
        bad = {
            k: v
            for k, v in health.items()
            if isinstance(v, dict) and v.get("status") not in ("ok", "disabled")
        }
        if bad:
            log.warning("event=sim_parts_not_ok parts=%s", json.dumps(bad)[:500])
        if sc.level:
            await self.command("level", dict(sc.level))

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks.clear()
        if self.observer is not None:
            await self.observer.stop()
        if self.service is not None:
            with contextlib.suppress(Exception):
                await self.service.stop()
        if self.mosquitto is not None:
            await self.mosquitto.stop_async()
        if self._log_handler is not None:
            logging.getLogger().removeHandler(self._log_handler)
            self._log_handler.close()
            self._log_handler = None

    def _prepare_artifacts(self) -> None:
        """A new folder, or one a previous run left (recognised by its summary.json): emptied of our files."""
        folder = self.artifacts
        if folder.exists() and any(folder.iterdir()):
            if not (folder / "summary.json").exists() and not (folder / "events.db").exists():
                raise SimError(
                    f"artifacts folder {folder} is not empty and not from a previous run; "
                    "name a new or empty folder"
                )
            for name in ARTIFACT_FILES:
                target = folder / name
                if target.is_dir():
                    shutil.rmtree(target)
                else:
                    target.unlink(missing_ok=True)
        folder.mkdir(parents=True, exist_ok=True)

    def _log_to_file(self) -> None:
        handler = logging.FileHandler(self.artifacts / "service.log", encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        root = logging.getLogger()
        root.addHandler(handler)
        if root.level > logging.INFO or root.level == logging.NOTSET:
            root.setLevel(logging.INFO)
        self._log_handler = handler

    async def _wait_panel(self) -> None:
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            bridge = self.service.panel.bridge
            if self.service.panel.sim is not None and bridge is not None and bridge.health.get("connected"):
                return
            await asyncio.sleep(0.05)
        log.warning("event=sim_panel_not_connected")

    # -- camera ------------------------------------------------------------------------------------------

    async def _frame_pump(self) -> None:
        period = 1.0 / self.settings.fps
        t0 = time.monotonic()
        while True:
            started = time.monotonic()
            async with self._cam_lock:
                frame, _truth = await asyncio.to_thread(self.cam.frame)
            self.last_frame = frame
            await self.service.push_frame(frame, time.monotonic() - t0)
            self.frames_pushed += 1
            await asyncio.sleep(max(0.0, period - (time.monotonic() - started)))

    async def change_table(self, change: Callable[[Any], Any]) -> Any:
        """Change what lies on the felt between two rendered frames."""
        async with self._cam_lock:
            out = change(self.cam)
            self._cam_version += 1
        return out

    async def frames(self, n: int) -> None:
        """Wait until `n` more frames went to the vision pipeline."""
        target = self.frames_pushed + n
        deadline = time.monotonic() + max(5.0, n * 0.5)
        while self.frames_pushed < target and time.monotonic() < deadline:
            await asyncio.sleep(0.01)

    async def camera_reports(
        self, mark: int, want: Callable[[dict[str, Any]], bool], timeout: float
    ) -> dict[str, Any] | None:
        """The first line the camera reported after `mark` that `want`s, waiting up to `timeout`; returned
        once the engine has taken it (published as an event, or refused with an error ruling), so that
        nothing entered afterwards can overtake it."""
        assert self.observer is not None
        events_mark, rulings_mark = len(self.observer.events), len(self.observer.rulings)
        deadline = time.monotonic() + timeout
        found: dict[str, Any] | None = None
        while found is None:
            found = next((line for _t, line in self.camera_lines[mark:] if want(line)), None)
            if found is None:
                if time.monotonic() > deadline:
                    return None
                await asyncio.sleep(0.01)
        while time.monotonic() < deadline + 2.0:
            if self._engine_took(found, events_mark, rulings_mark):
                break
            await self.observer.changed(0.05)
        return found

    def _engine_took(self, line: dict[str, Any], events_mark: int, rulings_mark: int) -> bool:
        assert self.observer is not None
        for ev in self.observer.events[events_mark:]:
            if (
                ev.get("source") == "camera"
                and ev.get("type") == line.get("type")
                and ev.get("seat") == line.get("seat")
            ):
                return True
        return any(r.get("type") == "error" for r in self.observer.rulings[rulings_mark:])

    # -- inputs other than the camera ------------------------------------------------------------------

    async def command(self, name: str, body: dict[str, Any]) -> dict[str, Any]:
        assert self.observer is not None
        mark = len(self.observer.rulings)
        reply = await self.observer.command(name, body, timeout=self.settings.step_timeout)
        if not reply.get("ok"):
            raise SimError(f"cmd/{name} refused by the table: {reply.get('error')}: {reply.get('message')}")
        await self.rulings_arrive(mark, len(reply.get("outputs") or []))
        return reply

    async def tap(self, player: str, dwell: float = 0.6) -> None:
        from controller.registry.card import encode_card
        from controller.registry.keys import load_keys
        from hil.nfc import SimulatedNtag, SimulatedReader

        assert self.desk is not None
        keys = load_keys(self.desk.keys_file)
        uid = self.desk.uids[player]
        tag = SimulatedNtag.with_message(encode_card(uid, player, keys), uid=uid)
        SimulatedReader.named(self._reader_name).present(tag, dwell=dwell)

    async def press_new_hand(self) -> bool:
        panel = self.service.panel.sim
        if panel is None:
            return False
        try:
            async with asyncio.timeout(self.settings.step_timeout):
                await panel.press("new_hand")
        except TimeoutError:
            raise SimError("the simulated panel did not take the NEW HAND press") from None
        return True

    async def enter(self, line: dict[str, Any]) -> list[dict[str, Any]]:
        """A line no sensor produces (actions, burns): entered as the dealer's tablet would."""
        assert self.observer is not None
        mark = len(self.observer.rulings)
        try:
            async with asyncio.timeout(self.settings.step_timeout):
                outs = list(await self.service.inject(line, source="sim"))
        except TimeoutError:
            raise SimError(
                f"the table did not take {json.dumps(line)} within {self.settings.step_timeout:.0f} s "
                f"(engine queue: {self.service.inbox.pending()} lines)"
            ) from None
        await self.rulings_arrive(mark, len(outs))
        return outs

    async def rulings_arrive(self, mark: int, n: int, timeout: float = 3.0) -> None:
        """Until `n` rulings after `mark` came back through the broker (so each lands in its own step)."""
        assert self.observer is not None
        deadline = time.monotonic() + timeout
        while len(self.observer.rulings) < mark + n and time.monotonic() < deadline:
            await self.observer.changed(0.05)

    async def settle(self, quiet: float = 0.2, longest: float = 3.0) -> None:
        """Until the engine has nothing queued and the broker has been quiet for `quiet` seconds."""
        assert self.observer is not None
        deadline = time.monotonic() + longest
        while time.monotonic() < deadline:
            if self.service.inbox.pending() == 0 and time.monotonic() - self.observer.last_message >= quiet:
                return
            await asyncio.sleep(0.02)

    # -- what players see ---------------------------------------------------------------------------------

    def panel_shown(self) -> dict[str, Any]:
        panel = self.service.panel.sim
        if panel is None:
            return {"seats": [], "text": ""}
        try:
            return panel.scene_dict()
        except (KeyError, TypeError):
            return {"seats": [], "text": str(panel.state().get("text", ""))}

    @staticmethod
    def colours() -> dict[str, tuple[int, int, int]]:
        from firmware_bridge.scene import COLORS

        out: dict[str, tuple[int, int, int]] = {}
        for name, value in COLORS.items():
            with contextlib.suppress(TypeError, ValueError):
                out[name] = tuple(int(c) for c in value)  # type: ignore[assignment]
        out.setdefault("off", (0, 0, 0))
        return out

    # -- captures -----------------------------------------------------------------------------------------

    def _on_ruling(self, ruling: dict[str, Any]) -> None:
        """A ruling (or a check-in event) arrived from the broker: picture it."""
        if ruling.get("type") == "hand":
            self.hands.append(ruling)
        if self.settings.captures:
            self._capture_queue.put_nowait((ruling, self.current_step))
        else:
            self.captures.append(Capture(len(self.captures) + 1, ruling, self.current_step))

    async def captured(self, timeout: float = 5.0) -> None:
        """Until every ruling received so far has its pictures."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._capture_queue.join()

    async def _capture_loop(self) -> None:
        while True:
            ruling, step = await self._capture_queue.get()
            try:
                await self._capture(ruling, step)
            except Exception as exc:  # a picture must never stop the table
                log.warning("event=capture_failed error=%r", str(exc)[:200])
            finally:
                self._capture_queue.task_done()

    async def _capture(self, ruling: dict[str, Any], step: str) -> None:
        index = len(self.captures) + 1
        cap = Capture(index, ruling, step)
        self.captures.append(cap)
        # Let the panel show the scene the engine just asked for (acknowledged by the firmware).
        link = self.service.panel
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline and link.scene is not None and link.shown is not link.scene:
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.05)  # the firmware reports what it lit right after acknowledging
        shown = self.panel_shown()
        cap.panel_text = shown.get("text") or ""
        kind = str(ruling.get("type", "ruling"))
        key = json.dumps(shown, sort_keys=True)
        if key == self._last_panel_key and self.captures[:-1]:
            cap.panel_png = next((c.panel_png for c in reversed(self.captures[:-1]) if c.panel_png), None)
        elif self.service.panel.sim is not None:
            name = f"panel/{index:03d}-{kind}.png"
            title = f"#{index} {kind}"
            await asyncio.to_thread(self.service.panel.sim.render_png, self.artifacts / name, title)
            cap.panel_png = name
            self._last_panel_key = key
        if self._cam_version == self._last_frame_key and self.captures[:-1]:
            cap.frame_png = next((c.frame_png for c in reversed(self.captures[:-1]) if c.frame_png), None)
        elif self.last_frame is not None:
            name = f"frames/{index:03d}-{kind}.jpg"
            await asyncio.to_thread(self._annotate, self.last_frame, self.artifacts / name)
            cap.frame_png = name
            self._last_frame_key = self._cam_version

    def _annotate(self, frame: Any, path: Path) -> None:
        import cv2

        from vision.detect import Detector
        from vision.overlay import draw_overlay

        if self._detector is None:
            self._detector = Detector(layout=self.layout)
        result = self._detector.detect(frame)
        cv2.imwrite(str(path), draw_overlay(frame, result, self.layout), [cv2.IMWRITE_JPEG_QUALITY, 85])

    # -- artifacts ----------------------------------------------------------------------------------------

    def write_artifacts(self, result: ScenarioResult) -> None:
        from hil.report import write_report

        assert self.observer is not None
        with open(self.artifacts / "rulings.jsonl", "w", encoding="utf-8") as f:
            for cap in self.captures:
                if cap.ruling.get("type") == "checkin" and "source" in cap.ruling:
                    continue  # a check-in event, pictured in the report; not a ruling
                f.write(json.dumps({**cap.ruling, "step": cap.step}, separators=(",", ":")) + "\n")
        with open(self.artifacts / "events.jsonl", "w", encoding="utf-8") as f:
            for ev in self.observer.events:
                f.write(json.dumps(ev, separators=(",", ":")) + "\n")
        with open(self.artifacts / "camera.jsonl", "w", encoding="utf-8") as f:
            for t, line in self.camera_lines:
                f.write(json.dumps({**line, "t": round(t, 3)}, separators=(",", ":")) + "\n")
        summary = {
            "scenario": self.scenario.name,
            "source": self.scenario.source,
            "profile": self.scenario.profile,
            "passed": result.passed,
            "seconds": round(result.seconds, 2),
            "broker": self.broker_desc,
            "steps": [
                {
                    "step": r.step.index,
                    "title": r.step.title,
                    "status": r.status,
                    "message": r.message,
                    "seconds": round(r.seconds, 3),
                }
                for r in result.steps
            ],
            "rulings": sum(
                1 for c in self.captures if not (c.ruling.get("type") == "checkin" and "source" in c.ruling)
            ),
            "events": len(self.observer.events),
            "frames": self.frames_pushed,
            "error": result.error,
        }
        (self.artifacts / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        write_report(self.artifacts / "report.html", self.scenario, result, self.captures, self.broker_desc)


# -- running a scenario ------------------------------------------------------------------------------------


class StepFailed(Exception):
    pass


async def run_scenario(
    sim: SimTable, scenario: Scenario, on_progress: Callable[[], None] | None = None
) -> ScenarioResult:
    """Every step in order; at the first failure the rest are not run (the table is no longer as scripted)."""
    results = [StepResult(step) for step in scenario.steps]
    sim.progress.steps = results
    t0 = time.monotonic()
    outcome = ScenarioResult(scenario, results, artifacts=str(sim.artifacts))
    for k, res in enumerate(results):
        sim.progress.current = k
        sim.current_step = res.step.label
        if on_progress:
            on_progress()
        started = time.monotonic()
        assert sim.observer is not None
        mark = len(sim.observer.rulings)
        events_mark = len(sim.observer.events)
        try:
            await _do_step(sim, res.step)
            await _check(sim, res.step, mark, events_mark)
            res.status = "passed"
        except StepFailed as exc:
            res.status, res.message = "failed", str(exc)
        except SimError as exc:
            res.status, res.message = "failed", str(exc)
        finally:
            await sim.captured()
            res.seconds = time.monotonic() - started
            res.rulings = list(sim.observer.rulings[mark:])
        if on_progress:
            on_progress()
        if res.status == "failed":
            break
    outcome.seconds = time.monotonic() - t0
    return outcome


def _timeout(sim: SimTable, e: Expectation | None = None) -> float:
    return e.timeout if e is not None and e.timeout else sim.settings.step_timeout


def _seen_camera(sim: SimTable, mark: int) -> str:
    lines = [json.dumps(line, separators=(",", ":")) for _t, line in sim.camera_lines[mark:]]
    return "; ".join(lines[-6:]) if lines else "nothing"


async def _camera_must_report(
    sim: SimTable, mark: int, wanted: Callable[[dict[str, Any]], bool], timeout: float, what: str
) -> dict[str, Any]:
    """The first camera line since `mark` that is `wanted`; the step fails when none comes within
    `timeout`, naming `what` the camera should have reported and the last lines it did report."""
    got = await sim.camera_reports(mark, wanted, timeout)
    if got is None:
        raise StepFailed(
            f"the camera did not report {what} within {timeout:.0f} s; it reported: {_seen_camera(sim, mark)}"
        )
    return got


async def _camera_or_entered(sim, mark: int, line: dict[str, Any], timeout: float) -> None:
    """The camera's report of what the step rendered (same type, same seat); where the camera does not
    see it in time, the simulator enters the line itself, as a dealer's tablet would, and the run's
    camera log shows that it did."""
    got = await sim.camera_reports(
        mark,
        lambda ln: ln.get("type") == line["type"] and ln.get("seat") == line["seat"],
        min(timeout, CAMERA_FALLBACK_S),
    )
    if got is None:
        await sim.enter(line)


async def _deal_one(sim: SimTable, seat: int, card: str | None, flashed: bool) -> None:
    mark = len(sim.camera_lines)
    await sim.change_table(lambda cam: cam.deal_to(seat, card, face_up=flashed))
    sim.cards_on_felt += 1

    def seen(line: dict[str, Any]) -> bool:
        return line.get("type") == "deal" and line.get("seat") == seat and (("card" in line) == flashed)

    how = "face up" if flashed else "face down"
    await _camera_must_report(
        sim, mark, seen, sim.settings.step_timeout, f"the card dealt {how} to seat {seat}"
    )
    await sim.settle(quiet=0.05, longest=1.0)


async def _do_step(sim: SimTable, step: Step) -> None:
    kind, v = step.kind, step.value
    timeout = sim.settings.step_timeout
    if kind == "tap":
        assert sim.observer is not None
        before = len(sim.observer.events)
        await sim.tap(v)
        deadline = time.monotonic() + timeout
        # A check-in, or for a seated player once play began a bust-out question or its answer (SeatTaps).
        while not any(e.get("type") in ("checkin", "bustout") for e in sim.observer.events[before:]):
            if time.monotonic() > deadline:
                raise StepFailed(
                    f"no check-in reached the table within {timeout:.0f} s of tapping {v}'s card "
                    f"(nfc: {sim.service.health.part('nfc').detail})"
                )
            await sim.observer.changed(0.1)
        await sim.settle()
    elif kind == "seat":
        await sim.command("seat", dict(v))
    elif kind in ("leave", "eliminate"):
        body = dict(v) if isinstance(v, dict) else {"seat": v}
        body.setdefault("reason", "eliminated")
        await sim.command("leave", body)
    elif kind == "level":
        await sim.command("level", dict(v))
    elif kind == "button":
        await sim.command("button", {"seat": v})
    elif kind == "hand_end":
        await sim.command("hand_end", {})
    elif kind == "move_button":
        mark = len(sim.camera_lines)
        await sim.change_table(lambda cam: cam.move_button(v))
        moved = sim.button_at != v
        sim.button_at = v
        if moved:
            await _camera_must_report(
                sim,
                mark,
                lambda ln: ln.get("type") == "button_seen" and ln.get("seat") == v,
                timeout,
                f"the button in front of seat {v}",
            )
        await sim.settle()
    elif kind == "hand_start":
        if sim.cards_on_felt:
            await _collect(sim)
        assert sim.observer is not None
        before = len(sim.observer.rulings)
        hands = len(sim.hands)
        mark = len(sim.camera_lines)
        buttons = sim.service.panel.health.counters
        pressed_before = buttons.get("buttons", 0)
        pressed = await sim.press_new_hand()
        if not pressed:
            await sim.command("hand_start", {})
        deadline = time.monotonic() + timeout
        again: float | None = time.monotonic() + min(3.0, timeout / 2)
        while len(sim.hands) == hands:
            if pressed and again is not None and time.monotonic() > again:
                again = None
                if buttons.get("buttons", 0) == pressed_before:
                    # The host never got the press: the firmware's loop missed it (starved on a loaded
                    # machine). A player presses again; the first press did nothing, so no hand is doubled.
                    log.warning("event=new_hand_repressed step=%s", step.label)
                    await sim.press_new_hand()
            if time.monotonic() > deadline:
                seen = [describe_ruling(r) for r in sim.observer.rulings[before:]]
                raise StepFailed(
                    f"NEW HAND pressed, but no `hand` ruling within {timeout:.0f} s; "
                    f"rulings: {', '.join(seen) or 'none'}"
                )
            await sim.observer.changed(0.1)
        if sim.button_at is not None:
            # The tracker starts the hand afresh and reports the button again: wait for that report.
            await sim.camera_reports(mark, lambda ln: ln.get("type") == "button_seen", timeout)
        await sim.settle()
    elif kind == "deal":
        for d in v if isinstance(v, list) else [v]:
            if isinstance(d, dict):
                await _deal_one(sim, d["seat"], d.get("card"), bool(d.get("flashed") or d.get("card")))
            else:
                await _deal_one(sim, d, None, False)
        await sim.settle()
    elif kind == "deal_hand":
        if not sim.hands:
            raise StepFailed("deal_hand needs a hand: no `hand` ruling yet (start one with hand_start)")
        opts = v or {}
        order = [s for s in sim.hands[-1].get("dealt_in", []) if s not in (opts.get("skip") or [])]
        for _round in range(int(opts.get("rounds", 2))):
            for seat in order:
                await _deal_one(sim, seat, None, False)
        await sim.settle()
    elif kind == "expose":
        mark = len(sim.camera_lines)
        code = await sim.change_table(lambda cam: cam.expose(v["seat"], int(v.get("index", 0))))
        got = await _camera_must_report(
            sim,
            mark,
            lambda ln: ln.get("type") == "expose" and ln.get("seat") == v["seat"],
            timeout,
            f"the card turned up at seat {v['seat']}",
        )
        if v.get("by") == "player" and got.get("by") != "player":
            # The tracker tells a card turned up in a seat zone after the deal (the player's) from one that
            # arrived face up (the dealer's); where it could not, who turned the card up is told here.
            await sim.enter({"type": "expose", "seat": v["seat"], "card": code, "by": "player"})
        await sim.settle()
    elif kind == "fold":
        # The cards are rendered going face down onto the muck pile (cam.fold, spread beside the pile, left a
        # later deal unseen at seat 4 in bar_league_eliminations); the camera reports the fold, or the
        # simulator enters it.
        mark = len(sim.camera_lines)
        await sim.change_table(lambda cam: cam.muck(v))
        await _camera_or_entered(sim, mark, {"type": "fold_seen", "seat": v}, timeout)
        await sim.settle(quiet=0.05)
    elif kind == "chips":
        mark = len(sim.camera_lines)
        await sim.change_table(lambda cam: cam.bet(v))
        await _camera_or_entered(sim, mark, {"type": "chips_seen", "seat": v}, timeout)
        await sim.settle(quiet=0.05)
    elif kind == "show":
        # Both hole cards turned face up where they lie; the camera reports the `show`.
        mark = len(sim.camera_lines)
        cards = await sim.change_table(lambda cam: cam.show(v))
        if len(cards) != 2:
            raise StepFailed(f"seat {v} holds {len(cards)} card(s) on the felt: nothing to show")
        await _camera_or_entered(sim, mark, {"type": "show", "seat": v, "cards": cards}, timeout)
        await sim.settle()
    elif kind == "board":
        cards = [None] * v if isinstance(v, int) else list(v)
        mark = len(sim.camera_lines)
        await sim.change_table(lambda cam: cam.board(cards))
        sim.cards_on_felt += len(cards)
        await _camera_must_report(
            sim,
            mark,
            lambda ln: ln.get("type") == "board" and len(ln.get("cards") or []) == len(cards),
            timeout,
            f"{len(cards)} board card(s)",
        )
        await sim.settle()
    elif kind == "burn":
        await sim.enter({"type": "burn"})
    elif kind == "action":
        await sim.enter({"type": "action", **v})
        await sim.settle(quiet=0.05)
    elif kind == "collect":
        await _collect(sim)
    elif kind == "muck":
        await sim.change_table(lambda cam: cam.muck(v))
        await sim.frames(2)
    elif kind == "wait":
        await asyncio.sleep(float(v))
    else:  # pragma: no cover - parse() admits only known kinds
        raise StepFailed(f"unknown step kind {kind!r}")


async def _collect(sim: SimTable) -> None:
    """Cards off the felt, and enough frames that the tracker forgets them before the next deal."""
    await sim.change_table(lambda cam: cam.clear())
    sim.cards_on_felt = 0
    await sim.frames(8)


async def _check(sim: SimTable, step: Step, mark: int, events_mark: int) -> None:
    """Every expectation of the step, each waited for up to its timeout."""
    assert sim.observer is not None
    obs = sim.observer
    pos = mark  # ruling expectations match in order
    for e in step.expect:
        timeout = _timeout(sim, e)
        deadline = time.monotonic() + timeout
        if e.kind == "ruling":
            while True:
                found = next(
                    (i for i in range(pos, len(obs.rulings)) if ruling_matches(e.want, obs.rulings[i])), None
                )
                if found is not None:
                    pos = found + 1
                    break
                if time.monotonic() > deadline:
                    seen = [describe_ruling(r) for r in obs.rulings[mark:]]
                    raise StepFailed(
                        f"expected ruling {describe_ruling(dict(e.want))} within {timeout:.0f} s, "
                        f"but the table published {', '.join(seen) if seen else 'no ruling'} in this step"
                        f" (panel: {describe_panel(sim.panel_shown(), sim.colours())})"
                    )
                await obs.changed(0.1)
        elif e.kind == "no_ruling":
            await sim.settle()
            bad = [r for r in obs.rulings[mark:] if ruling_matches(e.want, r)]
            if bad:
                raise StepFailed(
                    f"expected no ruling {e.describe()[10:]}, but the table published "
                    f"{', '.join(describe_ruling(r) for r in bad)}"
                )
        elif e.kind in ("checkin", "event"):
            want = dict(e.want)
            if e.kind == "checkin":
                want.setdefault("type", "checkin")
            while True:
                if any(matches(want, ev) for ev in obs.events[events_mark:]):
                    break
                if time.monotonic() > deadline:
                    seen = [
                        json.dumps(
                            {k: v for k, v in ev.items() if k not in ("seq", "event_seq", "ruling_seq", "t")},
                            separators=(",", ":"),
                        )
                        for ev in obs.events[events_mark:]
                    ]
                    raise StepFailed(
                        f"expected {e.kind} {json.dumps(want)} within {timeout:.0f} s, but the events "
                        f"published in this step were: {'; '.join(seen[-6:]) or 'none'}"
                    )
                await obs.changed(0.1)
        elif e.kind == "panel":
            colours = sim.colours()
            while not panel_matches(e.want, sim.panel_shown(), colours):
                if time.monotonic() > deadline:
                    raise StepFailed(
                        f"expected the panel to show {e.describe()[6:]} within {timeout:.0f} s; "
                        f"it shows {describe_panel(sim.panel_shown(), colours)}"
                    )
                await asyncio.sleep(0.05)
        elif e.kind == "state":
            while not (obs.state is not None and matches(e.want, obs.state)):
                if time.monotonic() > deadline:
                    got = {k: obs.state.get(k) for k in e.want} if obs.state else None
                    raise StepFailed(
                        f"expected the retained state to hold {json.dumps(e.want)} within "
                        f"{timeout:.0f} s; it holds {json.dumps(got)}"
                    )
                await obs.changed(0.1)
