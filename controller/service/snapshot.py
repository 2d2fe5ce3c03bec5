"""The table as a director's screen sees it, folded from the protocol lines (pure, no I/O).

The retained MQTT `state` document is built from this view, merged with the rules engine's own
`snapshot()` where the engine offers one (its stacks and phase are authoritative). Keeping a view of
our own means the service can always describe the table, even with an engine that has no snapshot.
"""

from __future__ import annotations

from collections import deque
from typing import Any

ALERT_TYPES = frozenset(
    {
        "misdeal",
        "button_misplaced",
        "dead_hand",
        "boxed_card",
        "replace_exposed",
        "extra_card",
        "out_of_turn",
        "board_redeal",
        "action_ruled",
        "fouled_deck",  # the hand is void (bluff_street:33.d.2)
        "blind_dodge",  # for the director to rule on (bluff_street:31)
    }
)
STREETS = {0: "preflop", 3: "flop", 4: "turn", 5: "river"}


class TableView:
    """Seats, level, current hand, phase, public board and alerts, from input and output lines."""

    def __init__(self, seats: int, last: int = 12) -> None:
        self.seat_count = seats
        self.seats: dict[int, dict[str, Any]] = {}
        self.level: dict[str, int] = {"sb": 0, "bb": 0, "ante": 0}
        self.level_number: int | None = None
        self.hand: dict[str, Any] = {}
        self.phase = "waiting"
        self.board: list[str] = []
        self.alerts: list[dict[str, Any]] = []
        self.substantial_action = False
        self.last_rulings: deque[dict[str, Any]] = deque(maxlen=last)

    def apply_input(self, line: dict[str, Any]) -> None:
        """Fold an input line the engine accepted."""
        kind = line.get("type")
        seat = line.get("seat")
        if kind == "seat" and isinstance(seat, int):
            entry: dict[str, Any] = {"seat": seat, "player": line.get("player"), "away": False}
            if isinstance(line.get("name"), str):
                entry["name"] = line["name"]
            if isinstance(line.get("stack"), int):
                entry["stack"] = line["stack"]
            self.seats[seat] = entry
        elif kind == "leave" and isinstance(seat, int):
            self.seats.pop(seat, None)
        elif kind in ("away", "back") and seat in self.seats:
            self.seats[seat]["away"] = kind == "away"
        elif kind == "level":
            self.level = {k: int(line.get(k) or 0) for k in ("sb", "bb", "ante")}
            if isinstance(line.get("number"), int):  # the floor's level number (late arrival: checkin.py)
                self.level_number = line["number"]
        elif kind == "hand_start":
            self.board = []
            self.alerts = []
            self.substantial_action = False
            self.phase = "deal"
        elif kind == "board" and isinstance(line.get("cards"), list):
            self.board.extend(c for c in line["cards"] if isinstance(c, str))
            self.phase = STREETS.get(len(self.board), self.phase)
        elif kind == "action" and self.phase == "deal":
            self.phase = "preflop"
        elif kind == "show":
            self.phase = "showdown"
        elif kind == "hand_end":
            self.phase = "between_hands"

    def apply_output(self, line: dict[str, Any]) -> None:
        """Fold an output line of the engine."""
        kind = line.get("type")
        if kind == "error":
            return
        self.last_rulings.append(line)
        if kind == "hand":
            self.hand = {k: line.get(k) for k in ("number", "button", "sb", "bb", "dealer", "dead_button")}
            self.hand["blinds"] = dict(self.level)
        elif kind in ("misdeal", "fouled_deck"):  # both void the hand until it is dealt again
            self.phase = "misdeal"
        elif kind == "substantial_action":
            self.substantial_action = True
        elif kind == "show_order":
            self.phase = "showdown"
        if kind in ALERT_TYPES:
            self.alerts.append(line)
            del self.alerts[:-10]

    def snapshot(self) -> dict[str, Any]:
        return {
            "seats": [self.seats[s] for s in sorted(self.seats)],
            "level": dict(self.level),
            "hand_number": self.hand.get("number"),
            "button": self.hand.get("button"),
            "blinds": {"sb_seat": self.hand.get("sb"), "bb_seat": self.hand.get("bb"), **self.level},
            "dealer": self.hand.get("dealer"),
            "dead_button": self.hand.get("dead_button"),
            "phase": self.phase,
            "board": list(self.board),
            "alerts": list(self.alerts),
            "substantial_action": self.substantial_action,
            "last_rulings": list(self.last_rulings),
            **({"level_number": self.level_number} if self.level_number is not None else {}),
        }


def merge_engine_snapshot(view: dict[str, Any], engine: dict[str, Any] | None) -> dict[str, Any]:
    """Prefer the engine's figures (stacks, phase, button, blinds) where it has them.

    The engine's snapshot: `players` {seat: {player, stack, away}}, `hand` (number), `phase`,
    `button`, `sb`/`bb` (seats), `dead_button`, `level` {sb, bb, ante}, `board`, `to_act`, `alerts`.
    """
    if not engine:
        return view
    out = dict(view)
    for key in ("button", "phase", "board", "dead_button", "to_act"):
        if engine.get(key) is not None:
            out[key] = engine[key]
    if isinstance(engine.get("hand"), int):
        out["hand_number"] = engine["hand"]
    if isinstance(engine.get("alerts"), list) and engine["alerts"]:
        out["alerts"] = engine["alerts"]
    blinds = dict(out.get("blinds") or {})
    if isinstance(engine.get("level"), dict):
        blinds.update({k: engine["level"].get(k) for k in ("sb", "bb", "ante")})
        out["level"] = dict(engine["level"])
    if "sb" in engine:
        blinds["sb_seat"] = engine.get("sb")
    if "bb" in engine:
        blinds["bb_seat"] = engine.get("bb")
    out["blinds"] = blinds
    players = engine.get("players")
    if isinstance(players, dict):
        names = {e["seat"]: e.get("name") for e in view.get("seats", []) if isinstance(e, dict)}
        seats = []
        for key, p in players.items():
            try:
                seat = int(key)
            except (TypeError, ValueError):
                continue
            if not isinstance(p, dict):
                continue
            entry = {
                "seat": seat,
                "player": p.get("player"),
                "stack": p.get("stack"),
                "away": bool(p.get("away")),
            }
            if names.get(seat):
                entry["name"] = names[seat]
            seats.append(entry)
        out["seats"] = sorted(seats, key=lambda e: e["seat"])
    return out
