"""The floor's picture of the tournament, folded from the tables' MQTT messages (no I/O).

`Floor.handle(topic, payload, now)` folds one message, `Floor.tick(now)` moves the clock on; both
return the director commands to publish (`Out`: topic and JSON body). The service does the
publishing, the database and the web page; everything decided here is testable without them.
"""

from __future__ import annotations

import logging
import secrets
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from controller.floor import clock
from controller.floor.alerts import provenance, sentence
from controller.floor.config import FloorConfig
from controller.floor.results import (
    SHARED_PLACE_RULE,
    Bust,
    Finish,
    Standings,
    event_points,
    payout_rule,
    payouts,
    place_rule,
    points_rule,
)
from controller.floor.seating.balancing import Move, TableSeats, halted_tables, proposals
from controller.floor.seating.late import late_entry
from controller.mqtt.picture import read_header
from controller.mqtt.table_view import ALERT_TYPES, TableView
from controller.mqtt.topics import ROOT, TableTopics
from controller.rules.pretty import describe
from controller.sentences import names_by_seat

log = logging.getLogger("smart_table.floor")

BETWEEN_HANDS = ("between_hands", "waiting")
BUST_SETTLE_SECONDS = 0.3  # busts of one hand arrive together; a group is placed once it is complete
LEVEL_RETRY_SECONDS = 5.0


class FloorError(ValueError):
    """A director's request the floor refuses (unknown move, table offline); says why."""


@dataclass(frozen=True, slots=True)
class Out:
    topic: str
    body: dict[str, Any]


@dataclass
class TableModel:
    table_id: str
    view: TableView  # the table's own picture and its streams, gaps filled by replay (issue 15)
    phase: str = "waiting"
    hand_starts: int = 0
    sent_level: tuple[int, int, int] | None = None
    sent_at: float = 0.0
    held_level: tuple[tuple[int, int, int], int] | None = None  # (level, hand_starts when held)
    # seat -> the last player seen there: a table publishes `eliminated` with the seat only (its
    # privacy list), and its next state may already show the seat empty
    occupants: dict[int, str] = field(default_factory=dict)
    alerts: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=5))
    busts: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    # player -> chips, as last seen between hands, and as frozen when the hand started: busts of one
    # hand are placed by the stacks they started it with (cool_mule:12.d; equal ones share a place).
    # Only at a table whose state says `actions: entered` (an observed one does not count chips).
    between_stacks: dict[str, int] = field(default_factory=dict)
    start_stacks: dict[str, int] = field(default_factory=dict)
    colour_up_sent: int | None = None  # the clock index whose colour-up this table's panel was sent
    # the camera picture at the table's last alert (its retained `picture`: a JPEG, seat zones
    # blacked out by the table) and the ruling its header names; kept in memory only
    picture: bytes | None = None
    picture_header: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        return self.view.status

    @property
    def state(self) -> dict[str, Any]:
        return self.view.state

    @property
    def between_hands(self) -> bool:
        return self.phase in BETWEEN_HANDS

    def level(self) -> tuple[int, int, int] | None:
        lvl = self.state.get("level")
        if isinstance(lvl, dict) and lvl.get("bb"):
            return (int(lvl.get("sb") or 0), int(lvl.get("bb") or 0), int(lvl.get("ante") or 0))
        return None

    def seats(self) -> dict[int, dict[str, Any]]:
        return self.view.seats

    def seat_count(self) -> int:
        info = self.state.get("table")
        if isinstance(info, dict) and isinstance(info.get("seats"), int):
            return info["seats"]
        return 10


@dataclass
class MoveInFlight:
    move: Move
    status: str = "confirmed"  # confirmed -> left (player walking) -> done
    name: str = ""
    leave_sent: bool = False


class Floor:
    def __init__(
        self,
        cfg: FloorConfig,
        *,
        clock_state: clock.ClockState | None = None,
        finishes: list[Finish] | None = None,
        names: dict[str, str] | None = None,
        entrants: int | None = None,
    ) -> None:
        self.cfg = cfg
        # a table applies a command id once, for good (a redelivery is answered, not applied again):
        # the ids of this run of the floor must differ from the last run's, or after a restart of the
        # floor its `floor-1` would be taken for the earlier one and the level or move never applied
        self.run = secrets.token_hex(4)
        self.structure = cfg.the_structure()
        self.clock = clock_state or clock.ClockState()
        self.names = dict(names or {})
        self.tables = {t: TableModel(t, TableView(TableTopics(cfg.venue, t))) for t in cfg.tables}
        self.entrants_fixed = entrants or cfg.entrants
        self.standings = Standings(self.entrants_fixed or 0, finishes or ())
        self.moves: dict[str, MoveInFlight] = {}
        self.proposals: list[Move] = []
        self.alerts: deque[dict[str, Any]] = deque(maxlen=30)
        self.version = 0
        self.clock_dirty = False
        self.new_finishes: list[Finish] = []
        self.prefix = f"{ROOT}/{cfg.venue}/"
        self.reply_topic = "reply/floor"
        self._ids = 0
        self._last_index = -1
        self._seats_dirty = False

    # ------------------------------------------------------------------ messages from the tables

    def subscriptions(self) -> list[str]:
        p = self.prefix + "+/"
        return [p + "status", p + "state", p + "events", p + "rulings", p + "reply/floor", p + "picture"]

    def handle(self, topic: str, payload: bytes, now: float) -> list[Out]:
        if not topic.startswith(self.prefix):
            return []
        table_id, _, kind = topic[len(self.prefix) :].partition("/")
        t = self.tables.get(table_id)
        if t is None:
            return []  # a table of this venue that is not in this event
        if kind == "picture":
            self._picture(t, payload)
            return []
        fed = t.view.feed(topic, payload, now)
        if fed.kind == "status":
            self._changed()
            return self.tick(now)
        if fed.kind == "malformed":
            log.warning("event=bad_message table=%s topic=%s", table_id, kind)
            return []
        doc = fed.doc or {}
        out: list[Out] = []
        if fed.kind == "state":
            for seat, entry in t.seats().items():
                t.occupants[seat] = str(entry["player"])
            if isinstance(doc.get("phase"), str) and not t.hand_starts:
                t.phase = doc["phase"]
            info = doc.get("table") if isinstance(doc.get("table"), dict) else {}
            if info.get("actions") != "entered":
                # an observed table never sees chips move: its stacks are the ones players sat down
                # with, so they cannot order (or tie) a hand's busts; the table's own order stands
                t.between_stacks = {}
            elif doc.get("phase") in BETWEEN_HANDS:
                t.between_stacks = {
                    str(e["player"]): e["stack"]
                    for e in t.seats().values()
                    if isinstance(e.get("stack"), int)
                }
            self._seats_dirty = True  # proposals are worked out at the next tick, once for many states
            self._changed()
        elif fed.kind == "reply" and kind == self.reply_topic and doc.get("ok") is False:
            self._alert(
                t.table_id,
                f"{t.table_id} refused the floor's {doc.get('command')}: {doc.get('message')}",
                None,
                now,
            )
        for stream, line in fed.lines:  # each line once, in order, a replay's too
            out += self._event(t, line, now) if stream == "events" else self._ruling(t, line, now)
        return out + self._replay(t, now)

    def _replay(self, t: TableModel, now: float) -> list[Out]:
        """Ask the table for what the floor missed (a gap in its numbered streams), and give up on a
        gap it cannot fill, saying so (docs/mqtt.md, cmd/replay)."""
        lost = t.view.lost
        requests, lines = t.view.tick(now)
        out = [self._cmd(t.table_id, "replay", body) for body in requests]
        if t.view.lost > lost:
            self._alert(
                t.table_id,
                f"{t.table_id}: {t.view.lost - lost} message(s) were lost and the table could not replay them.",
                None,
                now,
            )
        for stream, line in lines:
            out += self._event(t, line, now) if stream == "events" else self._ruling(t, line, now)
        return out

    def _event(self, t: TableModel, line: dict[str, Any], now: float) -> list[Out]:
        kind = line.get("type")
        out: list[Out] = []
        if kind == "hand_start":
            out += self._flush_busts(t, now, force=True)  # the last hand's busts, by its starting stacks
            t.phase = "deal"
            t.hand_starts += 1
            t.start_stacks = dict(t.between_stacks)
            if self.clock.started_at is None and self.cfg.clock_start == "first_deal":
                self.clock = clock.start(self.clock, now)  # the clock starts with the first deal
                self.clock_dirty = True
        elif kind == "hand_end":
            t.phase = "between_hands"
        elif kind == "seat":
            player = str(line.get("player"))
            if isinstance(line.get("seat"), int):
                t.occupants[line["seat"]] = player
            if isinstance(line.get("name"), str):
                self.names.setdefault(player, line["name"])
            for mid, m in list(self.moves.items()):
                if m.move.player == player and m.move.to_table == t.table_id and m.status != "done":
                    m.status = "done"
                    self._alert(
                        t.table_id,
                        f"{m.name or player} took seat {line.get('seat')} at {t.table_id} (moved).",
                        m.move.rule,
                        now,
                    )
                    del self.moves[mid]
        elif kind == "checkin" and line.get("accepted") and isinstance(line.get("name"), str):
            self.names.setdefault(str(line.get("player")), line["name"])
        elif kind == "leave":
            for m in self.moves.values():
                if (
                    m.move.from_table == t.table_id
                    and m.move.from_seat == line.get("seat")
                    and m.status == "confirmed"
                ):
                    m.status = "left"
        self._changed()
        return out

    def _ruling(self, t: TableModel, line: dict[str, Any], now: float) -> list[Out]:
        kind = line.get("type")
        out: list[Out] = []
        if kind == "eliminated":
            player = line.get("player") or t.occupants.get(line.get("seat"))  # type: ignore[arg-type]
            if player is None:
                self._alert(
                    t.table_id,
                    f"{t.table_id}: the player at seat {line.get('seat')} is out, but the floor "
                    "never saw who sat there, so it cannot place them.",
                    None,
                    now,
                )
            else:
                t.busts.append(({**line, "player": player}, now))
        else:
            out += self._flush_busts(t, now, force=True)
        if kind in ALERT_TYPES and kind != "eliminated":
            names = names_by_seat(t.state.get("seats") or [])
            text = sentence(t.table_id, line, self.cfg.profile, names)
            self._alert(t.table_id, text, line.get("rule"), now, line)
        return out

    def _flush_busts(self, t: TableModel, now: float, force: bool) -> list[Out]:
        if not t.busts or not (force or now - t.busts[-1][1] >= BUST_SETTLE_SECONDS):
            return []
        group = sorted(t.busts, key=lambda b: b[0].get("place") or 0)
        t.busts = []
        if not self.standings.entrants:
            self.standings.entrants = self.entrants()
        busts = [Bust(str(line.get("player")), t.table_id) for line, _ in group]
        if len(busts) > 1 and all(b.player in t.start_stacks for b in busts):
            busts = [Bust(b.player, b.table, t.start_stacks[b.player]) for b in busts]
        placed = self.standings.bust(busts)
        for f in placed:
            name = self.names.get(f.player, f.player)
            rule = group[0][0].get("rule")
            text = f"{name} is out in {ordinal(f.place)} place (busted at {t.table_id})."
            level = [self.names.get(o.player, o.player) for o in placed if o.place == f.place and o is not f]
            if level:
                rule = SHARED_PLACE_RULE
                text = (
                    f"{name} is out in {ordinal(f.place)} place, shared with {', '.join(level)}: "
                    f"each started the hand with {f.start_stack} (busted at {t.table_id})."
                )
            elif len(placed) > 1 and f.start_stack is not None:
                rule = place_rule(self.cfg.profile, False)
                text = (
                    f"{name} is out in {ordinal(f.place)} place (busted at {t.table_id}; started the hand "
                    f"with {f.start_stack})."
                )
            self._alert(t.table_id, text, rule, now)
        self.new_finishes += placed
        self._winner()
        self._recompute()
        return []

    def _winner(self) -> None:
        alive = [(tid, e["player"]) for tid, t in self.tables.items() for e in t.seats().values()]
        if self.standings.remaining == 1 and len(alive) == 1:
            f = self.standings.winner(str(alive[0][1]), alive[0][0])
            if f:
                self.new_finishes.append(f)

    # ------------------------------------------------------------------ the clock

    def tick(self, now: float) -> list[Out]:
        out: list[Out] = []
        for t in self.tables.values():
            out += self._replay(t, now)
            out += self._flush_busts(t, now, force=False)
        if self._seats_dirty:
            self._recompute()
        # Before the clock starts, the tables get the first level, so their first hand has blinds.
        v = clock.view(self.structure, self.clock, now)
        if v.index != self._last_index:
            self._last_index = v.index
            self._changed()
        lvl = self.structure.play_level(v.index if self.clock.started_at is not None else 0)
        if lvl is None:
            return out
        target = (lvl.sb, lvl.bb, lvl.ante)
        for t in self.tables.values():
            if t.status != "online":
                continue
            if t.level() == target:
                t.sent_level = target
                t.held_level = None
                continue
            if t.held_level is not None and t.held_level[0] == target:
                if t.hand_starts <= t.held_level[1]:
                    continue  # bar_league:Hand Start: one more hand at the previous level
                t.held_level = None
            elif (
                t.sent_level != target
                and t.sent_level is not None
                and not clock.send_level_now(self.cfg.profile, t.between_hands)
            ):
                t.held_level = (target, t.hand_starts)
                self._alert(
                    t.table_id,
                    f"{t.table_id}: the level ended after the pot was pushed: one more hand at the previous level "
                    f"({clock.transition_rule(self.cfg.profile).rule}).",
                    clock.transition_rule(self.cfg.profile).rule,
                    now,
                )
                continue
            if t.sent_level == target and now - t.sent_at < LEVEL_RETRY_SECONDS:
                continue
            t.sent_level, t.sent_at = target, now
            body = {"sb": lvl.sb, "bb": lvl.bb, "ante": lvl.ante, "number": lvl.number}
            if lvl.seconds >= 60:  # the level's length: bar_league's clock may be called after a tenth
                body["minutes"] = round(lvl.seconds / 60)
            out.append(self._cmd(t.table_id, "level", body))
        out += self._colour_up(v)
        out += self._move_commands()
        return out

    def _colour_up(self, v: clock.ClockView) -> list[Out]:
        """When the clock reaches a level or break with a colour-up, every table's panel says so,
        once per table (sent again to a table that comes online during it)."""
        if self.clock.started_at is None or not v.level.colour_up:
            return []
        rule, steps = clock.colour_up_steps(self.cfg.profile, v.level.colour_up)
        out = []
        for t in self.tables.values():
            if t.status != "online" or t.colour_up_sent == v.index:
                continue
            t.colour_up_sent = v.index
            body = {"chips": v.level.colour_up[:64]}
            if len(steps) > 1:  # steps[0] names the chips; the first thing the players do
                body["step"] = f"{steps[1]} ({rule})"[:200]
            out.append(self._cmd(t.table_id, "colour_up", body))
        return out

    def clock_start(self, now: float) -> list[Out]:
        self.clock = clock.start(self.clock, now)
        self.clock_dirty = True
        self._changed()
        return self.tick(now)

    def clock_pause(self, now: float) -> None:
        self.clock = clock.pause(self.clock, now)
        self.clock_dirty = True
        self._changed()

    def clock_resume(self, now: float) -> list[Out]:
        self.clock = clock.resume(self.clock, now)
        self.clock_dirty = True
        self._changed()
        return self.tick(now)

    def clock_add(self, now: float, seconds: float) -> None:
        if self.clock.started_at is None:
            raise FloorError("the clock has not started")
        self.clock = clock.add_time(self.structure, self.clock, now, seconds)
        self.clock_dirty = True
        self._changed()

    # ------------------------------------------------------------------ balancing

    def table_seats(self) -> list[TableSeats]:
        """The tables as the balancing rules see them, with confirmed moves counted as made."""
        out = []
        moving = [m.move for m in self.moves.values()]
        for t in self.tables.values():
            if t.status != "online" or not t.state:
                continue
            seats = t.seats()
            players = {s: str(e["player"]) for s, e in seats.items()}
            stacks = {s: int(e["stack"]) for s, e in seats.items() if isinstance(e.get("stack"), int)}
            for m in moving:
                if m.from_table == t.table_id:
                    players.pop(m.from_seat, None)
                if m.to_table == t.table_id:
                    players[m.to_seat] = m.player
            blinds = t.state.get("blinds") or {}
            out.append(
                TableSeats(
                    t.table_id,
                    t.seat_count(),
                    players,
                    t.state.get("button"),
                    blinds.get("sb_seat"),
                    blinds.get("bb_seat"),
                    stacks,
                )
            )
        return out

    def _recompute(self) -> None:
        self._seats_dirty = False
        seats = self.table_seats()
        # confirmed moves count as made (table_seats), so a break's other moves stay on offer
        self.proposals = proposals(self.cfg.profile, seats, self.cfg.breaking_order)
        self._changed()

    def confirm(self, move_id: str, now: float) -> list[Out]:
        move = next((m for m in self.proposals if m.id == move_id), None)
        if move is None:
            raise FloorError(f"no balancing proposal {move_id!r} (it may have been made or replaced)")
        name = self.names.get(move.player, move.player)
        self.moves[move.id] = MoveInFlight(move, "confirmed", name)
        self._alert(move.from_table, move.reason, move.rule, now)
        self._recompute()
        return self._move_notices(move, name) + self._move_commands()

    def _move_notices(self, move: Move, name: str) -> list[Out]:
        """Both tables' panels show the move at once: the seat the player leaves (where to go) and
        the seat that waits for them (cmd/move; docs/panel.md move_out, move_in)."""
        named = {"name": name} if name and name != move.player else {}
        return [
            self._cmd(
                move.from_table,
                "move",
                {
                    "seat": move.from_seat,
                    "direction": "out",
                    "table": move.to_table,
                    "to_seat": move.to_seat,
                    **named,
                },
            ),
            self._cmd(
                move.to_table,
                "move",
                {"seat": move.to_seat, "direction": "in", "table": move.from_table, **named},
            ),
        ]

    def proposal(self, move_id: str) -> Move | None:
        return next((m for m in self.proposals if m.id == move_id), None) or (
            self.moves[move_id].move if move_id in self.moves else None
        )

    def seat_directly(self, move_id: str) -> list[Out]:
        """For a table without a card reader: the floor seats the moved player itself."""
        m = self.moves.get(move_id)
        if m is None or m.status != "left":
            raise FloorError(f"move {move_id!r} is not waiting for the player at the new seat")
        body: dict[str, Any] = {"seat": m.move.to_seat, "player": m.move.player, "moved": True}
        if m.move.stack is not None:
            body["stack"] = m.move.stack
        if m.name and m.name != m.move.player:
            body["name"] = m.name
        return [self._cmd(m.move.to_table, "seat", body)]

    def _move_commands(self) -> list[Out]:
        out = []
        for m in self.moves.values():
            src = self.tables.get(m.move.from_table)
            if m.status != "confirmed" or src is None or src.status != "online" or not src.between_hands:
                continue  # a player leaves between hands (the table refuses a leave in a hand)
            if m.leave_sent:
                continue
            m.leave_sent = True
            out.append(self._cmd(m.move.from_table, "leave", {"seat": m.move.from_seat, "reason": "moved"}))
        return out

    # ------------------------------------------------------------------ helpers

    def _cmd(self, table: str, name: str, body: dict[str, Any]) -> Out:
        self._ids += 1
        prefix = f"{self.prefix}{table}"
        return Out(
            f"{prefix}/cmd/{name}",
            {**body, "id": f"floor-{self.run}-{self._ids}", "reply_to": f"{prefix}/{self.reply_topic}"},
        )

    def _alert(
        self, table: str | None, text: str, rule: str | None, now: float, line: dict | None = None
    ) -> None:
        entry = {
            "table": table,
            "text": text,
            "rule": rule,
            "source": provenance(rule, self.cfg.profile),
            "t": now,
        }
        if line is not None:
            entry["type"] = line.get("type")
            entry["seq"] = line.get("seq")
            entry["ruled_at"] = line.get("t")  # the table's time of the ruling
        self.alerts.appendleft(entry)
        if table in self.tables:
            self.tables[table].alerts.appendleft(entry)
        self._changed()

    def _changed(self) -> None:
        self.version += 1

    def entrants(self) -> int:
        if self.entrants_fixed:
            return self.entrants_fixed
        seated = sum(len(t.seats()) for t in self.tables.values())
        return (
            len(self.standings.finishes) + seated + sum(1 for m in self.moves.values() if m.status == "left")
        )

    # ------------------------------------------------------------------ the page's view

    def view(self, now: float) -> dict[str, Any]:
        cv = clock.view(self.structure, self.clock, now)
        lvl = self.structure.play_level(cv.index)
        nxt = cv.next_level
        stacks = [
            int(e["stack"])
            for t in self.tables.values()
            for e in t.seats().values()
            if isinstance(e.get("stack"), int)
        ]
        alive = sum(len(t.seats()) for t in self.tables.values()) + sum(
            1 for m in self.moves.values() if m.status == "left"
        )
        halted = {
            tid: (short, rule) for tid, short, rule in halted_tables(self.cfg.profile, self.table_seats())
        }
        colour = None
        if cv.level.colour_up:
            rule, steps = clock.colour_up_steps(self.cfg.profile, cv.level.colour_up)
            colour = {"rule": rule, "steps": steps}
        late = late_entry(
            self.cfg.profile,
            now=now,
            first_deal=self.clock.started_at,
            level_number=lvl.number if lvl else 1,
            called_in=True,
        )
        finishes = self.standings.by_place()
        prizes = payouts(self.cfg.profile, finishes, self.cfg.payouts)
        points = event_points(self.cfg.profile, finishes, self.cfg.points)
        return {
            "venue": self.cfg.venue,
            "event": self.cfg.event,
            "profile": self.cfg.profile,
            "clock": {
                "started": cv.started,
                "running": cv.running,
                "label": cv.level.label,
                "blinds": cv.level.blinds_text
                if not cv.level.is_break
                else f"break (then {nxt.blinds_text if nxt else '-'})",
                "seconds_left": round(cv.seconds_left, 2),
                "next": f"{nxt.label}: {nxt.blinds_text}" if nxt else "last level",
                "in_force": lvl.blinds_text if lvl else "-",
                "colour_up": colour,
                "source": self.structure.source,
                "transition": f"{clock.transition_rule(self.cfg.profile).text} ({clock.transition_rule(self.cfg.profile).rule})",
            },
            "late_registration": {
                "open": late.allowed,
                "text": late.message,
                "rule": late.rule,
                "closes_at": late.deadline,
            },
            "players_left": alive,
            "entrants": self.entrants(),
            "average_stack": round(sum(stacks) / len(stacks)) if stacks else None,
            "tables": [self._table_view(t, halted.get(t.table_id)) for t in self.tables.values()],
            "alerts": list(self.alerts)[:15],
            "proposals": [
                {
                    "id": m.id,
                    "text": m.reason,
                    "rule": m.rule,
                    "player": m.player,
                    "name": self.names.get(m.player, m.player),
                    "from": f"{m.from_table} seat {m.from_seat}",
                    "to": f"{m.to_table} seat {m.to_seat}",
                    "kind": m.kind,
                }
                for m in self.proposals
            ],
            "moves": [
                {
                    "id": mid,
                    "status": m.status,
                    "name": m.name,
                    "text": f"{m.name}: {m.move.from_table} seat {m.move.from_seat} → {m.move.to_table} seat {m.move.to_seat}"
                    + (" (waits one hand)" if m.move.waits_one_hand else ""),
                }
                for mid, m in self.moves.items()
            ],
            "standings": [
                {
                    "place": f.place,
                    "player": f.player,
                    "name": self.names.get(f.player, f.player),
                    "table": f.table,
                    "prize": prizes.get(f.player),
                    "points": points.get(f.player),
                }
                for f in finishes
            ],
            "payout_rule": payout_rule(self.cfg.profile, self.cfg.payouts),
            "points_rule": points_rule(self.cfg.profile, self.cfg.points).rule,
            "version": self.version,
        }

    def _picture(self, t: TableModel, payload: bytes) -> None:
        """A table's camera picture at its last alert: kept when it is a JPEG with our header."""
        header = read_header(payload)
        if header is None:
            if payload:  # an empty retained message clears it; anything else is not a picture of ours
                log.warning("event=bad_picture table=%s bytes=%d", t.table_id, len(payload))
            t.picture, t.picture_header = None, {}
        else:
            t.picture, t.picture_header = payload, header
        self._changed()

    def picture(self, table_id: str) -> bytes | None:
        t = self.tables.get(table_id)
        return None if t is None else t.picture

    def _picture_doc(self, t: TableModel) -> dict[str, Any]:
        """What the page shows beside the picture: the ruling it belongs to, in words, and when."""
        if t.picture is None:
            return {
                "picture": None,
                "picture_note": "No camera picture yet: the table sends one at its next alert.",
            }
        h = t.picture_header
        kind = str(h.get("type") or "alert")
        line = {k: v for k, v in h.items() if k in ("type", "reason", "rule", "seat")}
        try:
            text = describe(line).strip()
            if line.get("rule") and "  [" in text:
                text = text.rsplit("  [", 1)[0]
        except (KeyError, TypeError, ValueError):
            text = kind.replace("_", " ")
        return {
            "picture": f"/api/table/{t.table_id}/picture?seq={h.get('seq', 0)}",
            "picture_info": {
                "type": kind,
                "text": text,
                "rule": h.get("rule"),
                "seq": h.get("seq"),
                "t": h.get("t"),
                "taken": h.get("taken"),
                "width": h.get("width"),
                "height": h.get("height"),
            },
            "picture_note": "",
        }

    def table_detail(self, table_id: str) -> dict[str, Any] | None:
        """One table in detail for the page: seats and stacks, board, its alerts, its last rulings
        (from the table's retained state, in words) and its camera picture, where it has one.
        Built on request, not pushed: 30 tables' rulings in every push would cost every page."""
        t = self.tables.get(table_id)
        if t is None:
            return None
        halted = {
            tid: (short, rule) for tid, short, rule in halted_tables(self.cfg.profile, self.table_seats())
        }
        doc = self._table_view(t, halted.get(table_id))
        s = t.state
        rulings = []
        for line in reversed([x for x in s.get("last_rulings") or [] if isinstance(x, dict)]):
            if line.get("type") in ("error",):
                continue
            try:
                text = describe(line).strip()
                if line.get("rule") and "  [" in text:  # the rule is given apart, with its provenance
                    text = text.rsplit("  [", 1)[0]
            except (KeyError, TypeError, ValueError):  # a public line lacks a private field describe wants
                text = str(line.get("type", "ruling")).replace("_", " ")
            rulings.append(
                {
                    "type": line.get("type"),
                    "text": text,
                    "rule": line.get("rule"),
                    "source": provenance(line.get("rule"), self.cfg.profile),
                }
            )
        doc.update(
            {
                "board": [c for c in s.get("board") or [] if isinstance(c, str)],
                "level": s.get("level") or {},
                "dead_button": s.get("dead_button"),
                "to_act": s.get("to_act"),
                "substantial_action": s.get("substantial_action"),
                "alerts": list(t.alerts),
                "rulings": rulings,
                **self._picture_doc(t),
            }
        )
        return doc

    def _table_view(self, t: TableModel, halted: tuple[int, str] | None) -> dict[str, Any]:
        s = t.state
        blinds = s.get("blinds") or {}
        seats = []
        for n, e in sorted(t.seats().items()):
            marks = [
                m
                for m, seat in (
                    ("BTN", s.get("button")),
                    ("SB", blinds.get("sb_seat")),
                    ("BB", blinds.get("bb_seat")),
                    ("deals", s.get("dealer")),
                )
                if seat == n
            ]
            if e.get("away"):
                marks.append("away")
            pid = str(e["player"])
            seats.append(
                {
                    "seat": n,
                    "player": pid,
                    "name": e.get("name") or self.names.get(pid, pid),
                    "stack": e.get("stack"),
                    "marks": marks,
                }
            )
        level = s.get("level") or {}
        return {
            "id": t.table_id,
            "status": t.status,
            "phase": s.get("phase", t.phase),
            "hand": s.get("hand_number"),
            "button": s.get("button"),
            "dealer": s.get("dealer"),
            "blinds": f"{level.get('sb', '-')}/{level.get('bb', '-')}"
            + (f" ante {level['ante']}" if level.get("ante") else ""),
            "seats": seats,
            "alerts": list(t.alerts)[:3],
            "halted": f"Play halts: {halted[0]} players short of the fullest table ({halted[1]})."
            if halted
            else None,
            "held": bool(t.held_level),
        }


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
