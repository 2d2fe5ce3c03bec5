"""`smart-table top`: a live terminal view of one table, built only from its MQTT topics.

`TopModel` folds the messages (pure), `render` draws it with rich; the same view works against the
embedded broker and Mosquitto, from the table's Pi or from the director's laptop.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from controller.mqtt.topics import TableTopics

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

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> TopOptions:
        from controller.service.config import ConfigError, load_config, read_secret

        try:
            cfg = load_config(args.config) if args.config else load_config(None)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        b = cfg.broker
        host = args.host or b.host or "127.0.0.1"
        port = args.port or (b.port if b.host else b.embedded_port)
        password = read_secret(args.password_file) if args.password_file else read_secret(b.password_file)
        return cls(
            host=host,
            port=port,
            venue=args.venue or cfg.table.venue,
            table=args.table or cfg.table.id,
            username=args.username or b.username,
            password=password,
            once=args.once,
            wait=args.wait,
        )


class TopModel:
    """What the view knows: the last status, state and rulings of one table."""

    def __init__(self, topics: TableTopics) -> None:
        self.topics = topics
        self.status = "unknown"
        self.state: dict[str, Any] = {}
        self.rulings: deque[dict[str, Any]] = deque(maxlen=10)
        self.events: deque[dict[str, Any]] = deque(maxlen=6)
        self.connection = "connecting"
        self.last_message = 0.0
        self.seen_seq: set[int] = set()

    def apply(self, topic: str, payload: bytes) -> None:
        self.last_message = time.time()
        prefix = self.topics.prefix + "/"
        if not topic.startswith(prefix):
            return
        kind = topic[len(prefix) :]
        if kind == "status":
            self.status = payload.decode(errors="replace") or "unknown"
            return
        try:
            doc = json.loads(payload)
        except ValueError:
            return
        if not isinstance(doc, dict):
            return
        if kind == "state":
            self.state = doc
        elif kind in ("rulings", "events"):
            seq = doc.get("seq")
            if isinstance(seq, int):  # at-least-once delivery: drop what we already have
                if seq in self.seen_seq:
                    return
                self.seen_seq.add(seq)
                if len(self.seen_seq) > 5000:
                    self.seen_seq = set(sorted(self.seen_seq)[-1000:])
            (self.rulings if kind == "rulings" else self.events).append(doc)


def _line_text(doc: dict[str, Any]) -> str:
    rest = {k: v for k, v in doc.items() if k not in ("type", "seq", "t", "source")}
    return f"{doc.get('type', '?')} " + " ".join(
        f"{k}={json.dumps(v, separators=(',', ':'))}" for k, v in rest.items()
    )


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
        health.add_column(col)
    for name, h in sorted((s.get("health") or {}).items()):
        if isinstance(h, dict):
            st = str(h.get("status", "?"))
            health.add_row(name, Text(st, STATUS_STYLE.get(st, "")), str(h.get("detail", ""))[:60])
    panel = s.get("panel") or {}
    alerts = Text("\n".join(_line_text(a) for a in s.get("alerts", []) if isinstance(a, dict)) or "none")
    rulings = Text("\n".join(_line_text(r) for r in model.rulings) or "none yet")
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
        Panel(rulings, title="last rulings"),
        health,
    )


async def watch(options: TopOptions, model: TopModel, on_update: Any, stop: asyncio.Event) -> None:
    import aiomqtt

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
                model.connection = f"{options.host}:{options.port}"
                await client.subscribe(model.topics.prefix + "/#", qos=1)
                on_update()
                async for message in client.messages:
                    payload = (
                        message.payload
                        if isinstance(message.payload, bytes)
                        else str(message.payload).encode()
                    )
                    model.apply(str(message.topic), payload)
                    on_update()
        except aiomqtt.MqttError as exc:
            model.connection = f"unreachable ({exc})"
            on_update()
            await asyncio.sleep(2)


def run_top(options: TopOptions) -> int:
    from rich.console import Console
    from rich.live import Live

    model = TopModel(TableTopics(options.venue, options.table))
    console = Console()

    async def main() -> int:
        stop = asyncio.Event()
        if options.once:
            task = asyncio.create_task(watch(options, model, lambda: None, stop))
            await asyncio.sleep(options.wait)
            stop.set()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            console.print(render(model))
            return 0 if model.state else 1
        with Live(render(model), console=console, refresh_per_second=4, screen=False) as live:
            await watch(options, model, lambda: live.update(render(model)), stop)
        return 0

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 0
