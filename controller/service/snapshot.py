"""The table part of the retained MQTT `state`: the rules engine's snapshot, as published (pure).

The engine's snapshot is the table's state (issue 13: one fold of it, the engine's). The service adds
only what the engine does not know, and derives none of the engine's figures again:

- display names, from the `seat` lines the engine accepted (the engine keeps player IDs only);
- the last rulings it published (`last_rulings`, so a screen started late still shows them).

Directors' tools read the published document back with `controller.mqtt.table_view.TableView`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

EngineSnapshot = Callable[[], dict[str, Any] | None]
NO_LEVEL = {"sb": 0, "bb": 0, "ante": 0}  # published before the first `level` line


class TableState:
    """What the service publishes about the table: `engine_snapshot()` plus names and recent rulings."""

    def __init__(self, engine_snapshot: EngineSnapshot, last: int = 12) -> None:
        self.engine_snapshot = engine_snapshot
        self.names: dict[int, tuple[str, str]] = {}  # seat -> (player, display name) of its seat line
        self.last_rulings: deque[dict[str, Any]] = deque(maxlen=last)

    def clear(self) -> None:
        """Before the engine is rebuilt from the log (which feeds every line again)."""
        self.names.clear()
        self.last_rulings.clear()

    def apply_input(self, line: dict[str, Any]) -> None:
        """An input line the engine accepted: only a `seat` line's display name is kept."""
        seat = line.get("seat")
        if line.get("type") == "seat" and isinstance(seat, int):
            name = line.get("name")
            if isinstance(name, str) and name:
                self.names[seat] = (str(line.get("player")), name)
            else:
                self.names.pop(seat, None)

    def apply_output(self, line: dict[str, Any]) -> None:
        """An output line of the engine: rulings are kept for `last_rulings` (`error` lines are not)."""
        if line.get("type") != "error":
            self.last_rulings.append(line)

    def snapshot(self) -> dict[str, Any]:
        """The table's fields of `state` (docs/mqtt.md), in the published order."""
        return table_document(self.engine_snapshot() or {}, self.names, self.last_rulings)

    def seat_view(self) -> dict[str, Any]:
        """The table as the NFC check-in asks about it: `phase` is `waiting` until the first hand began
        (late registration and seated taps count from the first deal; registry.checkin)."""
        doc = self.snapshot()
        if not doc.get("hand_number"):
            doc["phase"] = "waiting"
        return doc


class SeatView:
    """`snapshot()` for the NFC source, which asks `view.snapshot()` (controller/service/sources.py)."""

    def __init__(self, state: TableState) -> None:
        self.state = state

    def snapshot(self) -> dict[str, Any]:
        return self.state.seat_view()


def table_document(
    engine: dict[str, Any],
    names: dict[int, tuple[str, str]] | None = None,
    last_rulings: Any = (),
) -> dict[str, Any]:
    """The engine's snapshot (`players`, `hand`, `phase`, `button`, `sb`/`bb` seats, `dealer`,
    `dead_button`, `level`, `board`, `to_act`, `alerts`, `substantial_action`) in the shape of the
    published `state`, with each seat's display name where its seat line gave one."""
    names = names or {}
    seats = []
    players = engine.get("players")
    for key, p in players.items() if isinstance(players, dict) else ():
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
        named = names.get(seat)
        if named and named[0] == p.get("player"):
            entry["name"] = named[1]
        seats.append(entry)
    level = dict(engine["level"]) if isinstance(engine.get("level"), dict) else dict(NO_LEVEL)
    hand = engine.get("hand")
    doc: dict[str, Any] = {
        "seats": sorted(seats, key=lambda e: e["seat"]),
        "level": level,
        "hand_number": hand if isinstance(hand, int) else None,
        "button": engine.get("button"),
        "blinds": {"sb_seat": engine.get("sb"), "bb_seat": engine.get("bb"), **level},
        "dealer": engine.get("dealer"),
        "dead_button": engine.get("dead_button"),
        "phase": engine.get("phase") or "waiting",
        "board": list(engine.get("board") or []),
        "alerts": list(engine.get("alerts") or []),
        "substantial_action": bool(engine.get("substantial_action")),
        "last_rulings": list(last_rulings),
    }
    if engine.get("to_act") is not None:  # absent between turns, as published since the first release
        doc["to_act"] = engine["to_act"]
    if isinstance(engine.get("level_number"), int):  # the floor's level number (late arrival: checkin.py)
        doc["level_number"] = engine["level_number"]
    return doc
