"""`smart-table top`: a live terminal view of a table, built only from its MQTT topics.

`TopModel` folds one table's messages (pure), `render` draws it with rich; `Discovery` folds every
table of the broker when none is named (`smart-table top` alone lists what it finds). Rulings read as
the `--pretty` sentences with player names (controller/sentences.py); a view started after a ruling
shows it from the retained state. The same view works against the embedded broker and Mosquitto,
from the table's Pi or from the director's laptop. An unreachable broker exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import time
from dataclasses import dataclass
from typing import Any

from controller.mqtt.table_view import TableView
from controller.mqtt.topics import ROOT, TableTopics

STATUS_STYLE = {
    "ok": "green",
    "degraded": "yellow",
    "failed": "red",
    "unavailable": "magenta",
    "disabled": "dim",
    "starting": "cyan",
}


@dataclass(frozen=True, slots=True)
class TopOptions:
    host: str
    port: int
    venue: str
    table: str
    username: str = ""
    password: str = ""
    once: bool = False
    wait: float = 1.0

    @property
    def discover(self) -> bool:
        """No table named (no --config, --venue or --table): list every table the broker knows."""
        return not (self.venue and self.table)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TopOptions:
        from controller.service.config import ConfigError, load_config, read_secret

        if args.config:
            try:
                cfg = load_config(args.config)
            except ConfigError as exc:
                raise ValueError(str(exc)) from None
            b = cfg.broker
            host = args.host or b.host or "127.0.0.1"
            port = args.port or (b.port if b.host else b.embedded_port)
            venue, table = args.venue or cfg.table.venue, args.table or cfg.table.id
            username, password_file = args.username or b.username, args.password_file or b.password_file
        else:  # the broker on this machine, and whatever tables it carries
            host, port = args.host or "127.0.0.1", args.port or 1883
            venue, table = args.venue or "", args.table or ""
            if bool(venue) != bool(table):
                venue, table = venue or "+", table or "+"  # one level named: discover within it
            username, password_file = args.username or "", args.password_file or ""
        try:
            password = read_secret(password_file)
        except OSError as exc:
            raise ValueError(f"--password-file {password_file}: cannot read: {exc.strerror}") from None
        return cls(host, port, venue, table, username, password, args.once, args.wait)


class TopModel(TableView):
    """What the view knows of one table: the shared client-side model (controller/mqtt/table_view.py),
    and how the connection is."""

    def __init__(self, topics: TableTopics) -> None:
        super().__init__(topics)
        self.connection = "connecting"

    def apply(self, topic: str, payload: bytes) -> None:
        self.feed(topic, payload, time.time())


class Discovery:
    """Every table seen on the broker (`smarttable/v1/+/+/#`), each folded by its own TopModel."""

    def __init__(self, venue: str = "+", table: str = "+") -> None:
        self.filter = f"{ROOT}/{venue or '+'}/{table or '+'}/#"
        self.tables: dict[tuple[str, str], TopModel] = {}
        self.connection = "connecting"

    def apply(self, topic: str, payload: bytes) -> None:
        parts = topic.split("/")
        if len(parts) < 5 or "/".join(parts[:2]) != ROOT:
            return
        key = (parts[2], parts[3])
        if key not in self.tables:
            self.tables[key] = TopModel(TableTopics(*key))
            self.tables[key].connection = self.connection
        self.tables[key].apply(topic, payload)


def _sentence(doc: dict[str, Any], state: dict[str, Any]) -> str:
    from controller.sentences import names_by_seat, sentence

    table = state.get("table") if isinstance(state.get("table"), dict) else {}
    return sentence(doc, names_by_seat(state.get("seats") or []), table.get("profile"))


def recent_rulings(model: TopModel) -> tuple[list[dict[str, Any]], str]:
    """The rulings to show and where they come from: those received live, else the ones the retained
    state carries (a view started after the ruling still shows it)."""
    shown, live = model.last_rulings()
    return shown, "last rulings" if live else "last rulings (from the table's retained state)"


def render(model: TopModel) -> Any:
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    s = model.state
    table_info = s.get("table", {}) if isinstance(s.get("table"), dict) else {}
    status_style = "green" if model.status == "online" else "red"
    head = Text.assemble(
        (f"{model.topics.venue}/{model.topics.table}", "bold"),
        "  ",
        (model.status, status_style),
        f"  profile {table_info.get('profile', '?')}  hand {s.get('hand_number') or '-'}",
        f"  phase {s.get('phase', '-')}  button {s.get('button') or '-'}",
        f"  connection {model.connection}",
        f"  replayed {model.replays}" if model.replays else "",
        (f"  lost {model.lost}", "red") if model.lost else "",
    )
    blinds = s.get("blinds") or {}
    level = Text(
        f"blinds {blinds.get('sb', '-')}/{blinds.get('bb', '-')} ante {blinds.get('ante', 0)}"
        f"  SB seat {blinds.get('sb_seat') or '-'}  BB seat {blinds.get('bb_seat') or '-'}"
        f"  board {' '.join(s.get('board') or []) or '-'}"
    )
    seats = Table(title="seats", expand=True)
    for col in ("seat", "player", "name", "stack", ""):
        seats.add_column(col)
    by_seat = {e.get("seat"): e for e in s.get("seats", []) if isinstance(e, dict)}
    for n in range(1, int(table_info.get("seats") or 10) + 1):
        e = by_seat.get(n, {})
        marks = []
        if n == s.get("button"):
            marks.append("BTN")
        if n == blinds.get("sb_seat"):
            marks.append("SB")
        if n == blinds.get("bb_seat"):
            marks.append("BB")
        if e.get("away"):
            marks.append("away")
        seats.add_row(
            str(n),
            str(e.get("player") or ""),
            str(e.get("name") or ""),
            str(e.get("stack") if e.get("stack") is not None else ""),
            " ".join(marks),
        )
    health = Table(title="health", expand=True)
    for col in ("part", "status", "detail"):
        health.add_column(col, overflow="fold")  # wrapped, never cut
    for name, h in sorted((s.get("health") or {}).items()):
        if isinstance(h, dict):
            st = str(h.get("status", "?"))
            health.add_row(name, Text(st, STATUS_STYLE.get(st, "")), Text(str(h.get("detail", ""))))
    panel = s.get("panel") or {}
    alerts = Text("\n".join(_sentence(a, s) for a in s.get("alerts", []) if isinstance(a, dict)) or "none")
    shown, title = recent_rulings(model)
    older = model.rulings_received - len(shown) if model.rulings else 0
    lines = (
        [f"... {older} earlier rulings not shown (all are in the table's event log)"] if older > 0 else []
    ) + [_sentence(r, s) for r in shown]
    rulings = Text("\n".join(lines) or "none yet")
    return Group(
        Panel(Group(head, level), title="smart-table top"),
        seats,
        Panel(
            Text(
                f"scene {panel.get('scene') or '-'}  acknowledged {panel.get('acked', 0)}  "
                f"port {panel.get('port') or '-'}"
            ),
            title="panel",
        ),
        Panel(alerts, title="alerts"),
        Panel(rulings, title=title),
        health,
    )


def render_discovery(found: Discovery, options: TopOptions) -> Any:
    """One table: its full view. Several: one line each, the newest ruling as a sentence."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    where = f"{options.host}:{options.port}"
    if not found.tables:
        return Text(
            f"no table seen on {where} yet ({found.connection}); tables publish under "
            f"{ROOT}/<venue>/<table>/, check the broker and its credentials"
        )
    if len(found.tables) == 1:
        ((venue, table),) = found.tables
        head = Text(f"1 table on {where}: {venue}/{table}  (smart-table top --venue {venue} --table {table})")
        return Group(head, render(found.tables[(venue, table)]))
    listing = Table(title=f"{len(found.tables)} tables on {where}", expand=True)
    for col in ("table", "status", "profile", "hand", "phase", "latest ruling"):
        listing.add_column(col, overflow="fold")
    for (venue, table), model in sorted(found.tables.items()):
        s = model.state
        info = s.get("table") if isinstance(s.get("table"), dict) else {}
        shown, _ = recent_rulings(model)
        listing.add_row(
            f"{venue}/{table}",
            Text(model.status, "green" if model.status == "online" else "red"),
            str(info.get("profile", "?")),
            str(s.get("hand_number") or "-"),
            str(s.get("phase", "-")),
            _sentence(shown[-1], s) if shown else "none yet",
        )
    return Group(listing, Text("one table in full: smart-table top --venue VENUE --table TABLE"))


class BrokerUnreachable(Exception):
    """The first connection failed: nothing to show, and the command says so and exits non-zero."""


REPLAY_TICK = 0.5  # how often unanswered replays are asked again


async def ask_replays(client: Any, model: TopModel | Discovery, now: float) -> bool:
    """Ask each table with a gap in its streams for everything since the last line the view holds
    (`cmd/replay`, issue 15); the answer comes back on the view's own reply topic, which the view
    subscribes to. True when anything changed (a gap given up on passes the held lines on)."""
    views = list(model.tables.values()) if isinstance(model, Discovery) else [model]
    changed = False
    for view in views:
        requests, lines = view.tick(now)
        changed = changed or bool(lines)
        for body in requests:
            prefix = view.topics.prefix
            doc = {**body, "id": f"top-{os.getpid()}-{view.replays}-{body['since']}"}
            doc["reply_to"] = f"{prefix}/reply/top-{os.getpid()}"
            await client.publish(f"{prefix}/cmd/replay", json.dumps(doc), qos=1)
    return changed


async def watch(
    options: TopOptions, model: TopModel | Discovery, on_update: Any, stop: asyncio.Event, topic: str = ""
) -> None:
    """Subscribe and fold messages until stopped; reconnect when a connection that worked drops; fill
    gaps in the tables' streams with `cmd/replay`. Raises BrokerUnreachable when the very first
    connection fails."""
    import aiomqtt

    connected_once = False

    async def retry(client: Any) -> None:
        with contextlib.suppress(aiomqtt.MqttError):  # the connection went: the reader reconnects
            while True:
                await asyncio.sleep(REPLAY_TICK)
                if await ask_replays(client, model, time.time()):
                    on_update()

    while not stop.is_set():
        try:
            async with aiomqtt.Client(
                options.host,
                options.port,
                username=options.username or None,
                password=options.password or None,
                protocol=aiomqtt.ProtocolVersion.V311,
                timeout=5,
            ) as client:
                connected_once = True
                model.connection = f"{options.host}:{options.port}"
                await client.subscribe(topic or model.topics.prefix + "/#", qos=1)
                on_update()
                retrying = asyncio.create_task(retry(client))
                try:
                    async for message in client.messages:
                        payload = (
                            message.payload
                            if isinstance(message.payload, bytes)
                            else str(message.payload).encode()
                        )
                        model.apply(str(message.topic), payload)
                        await ask_replays(client, model, time.time())
                        on_update()
                finally:
                    retrying.cancel()
        except aiomqtt.MqttError as exc:
            if not connected_once:
                raise BrokerUnreachable(
                    f"cannot reach the broker at {options.host}:{options.port}: {exc}"
                ) from None
            model.connection = f"unreachable ({exc})"
            on_update()
            await asyncio.sleep(2)


def run_top(options: TopOptions) -> int:
    """0: a table was shown; 1: the broker is unreachable, or (with --once) no table was seen."""
    import sys

    from rich.console import Console
    from rich.live import Live

    console = Console()
    if options.discover:
        found = Discovery(options.venue, options.table)
        model: TopModel | Discovery = found
        topic = found.filter

        def view() -> Any:
            return render_discovery(found, options)

        def seen() -> bool:
            return bool(found.tables)
    else:
        single = TopModel(TableTopics(options.venue, options.table))
        model, topic = single, ""

        def view() -> Any:
            return render(single)

        def seen() -> bool:
            return bool(single.state)

    async def main() -> int:
        stop = asyncio.Event()
        if options.once:
            task = asyncio.create_task(watch(options, model, lambda: None, stop, topic))
            done, _ = await asyncio.wait({task}, timeout=options.wait)
            if task in done and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]
            stop.set()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            console.print(view())
            return 0 if seen() else 1
        with Live(view(), console=console, refresh_per_second=4, screen=False) as live:
            await watch(options, model, lambda: live.update(view()), stop, topic)
        return 0

    try:
        return asyncio.run(main())
    except BrokerUnreachable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
