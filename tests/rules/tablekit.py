"""Small helpers for engine tests: build input lines, run them, pick output lines by type."""

from __future__ import annotations

import json

from controller.rules.engine import TableEngine


def table(profile: str, seats: int = 10) -> dict:
    return {"type": "table", "seats": seats, "profile": profile}


def seat(s: int, player: str | None = None, stack: int | None = None, moved: bool = False) -> dict:
    line = {"type": "seat", "seat": s, "player": player or f"P{s}", "moved": moved}
    if stack is not None:
        line["stack"] = stack
    return line


def deal(s: int, card: str | None = None) -> dict:
    return {"type": "deal", "seat": s, **({"card": card} if card else {})}


def act(s: int, action: str, to: int | None = None, **extra) -> dict:
    line = {"type": "action", "seat": s, "action": action, **extra}
    if to is not None:
        line["to"] = to
    return line


HAND_START = {"type": "hand_start"}
HAND_END = {"type": "hand_end"}
LEVEL = {"type": "level", "sb": 50, "bb": 100}


def leave(s: int, reason: str = "eliminated") -> dict:
    return {"type": "leave", "seat": s, "reason": reason}


class Table:
    """An engine plus everything it said, line by line."""

    def __init__(
        self,
        profile: str = "bluff_street",
        seats: int = 10,
        players: list[int] | None = None,
        stack: int | None = None,
    ):
        self.engine = TableEngine(profile, seats)
        self.out: list[dict] = []
        self.n = 0
        self.feed(table(profile, seats))
        for s in players or []:
            self.feed(seat(s, stack=stack))
        if players:
            self.feed(LEVEL)

    def feed(self, *lines: dict | str) -> list[dict]:
        got: list[dict] = []
        for line in lines:
            self.n += 1
            got.extend(self.engine.feed(line if isinstance(line, str) else json.dumps(line), self.n))
        self.out.extend(got)
        return got

    def hand(self) -> dict:
        lines = [o for o in self.feed(HAND_START) if o["type"] == "hand"]
        assert lines, f"no hand line: {self.out[-3:]}"
        return lines[-1]

    def deal_all(self, hand: dict, rounds: int = 2) -> list[dict]:
        got: list[dict] = []
        for _ in range(rounds):
            for s in hand["dealt_in"]:
                got.extend(self.feed(deal(s)))
        return got


def of_type(lines: list[dict], kind: str) -> list[dict]:
    return [line for line in lines if line["type"] == kind]


# The worked example of ../shared/spec/table-events.md, input and expected output.
SPEC_INPUT = [
    {"type": "table", "seats": 6, "profile": "cool_mule"},
    {"type": "seat", "seat": 1, "player": "A", "stack": 20000},
    {"type": "seat", "seat": 2, "player": "B", "stack": 20000},
    {"type": "seat", "seat": 4, "player": "C", "stack": 20000},
    {"type": "seat", "seat": 5, "player": "D", "stack": 20000},
    {"type": "level", "sb": 50, "bb": 100},
    {"type": "hand_start"},
    {"type": "deal", "seat": 2, "card": "Kd"},
]
SPEC_OUTPUT = [
    {
        "type": "hand",
        "number": 1,
        "button": 1,
        "sb": 2,
        "bb": 4,
        "dead_button": False,
        "dead_sb_seat": None,
        "dealer": 1,
        "first_card": 2,
        "dealt_in": [2, 4, 5, 1],
        "sitting_out": [],
        "redeal": False,
    },
    {"type": "misdeal", "reason": "first_cards_exposed", "rule": "cool_mule:5.g"},
]


def fuzzed_table(profile: str, actions: str = "entered") -> TableEngine:
    """Where fuzzed lines start: four players at a nine-seat table, blinds 25/50, a hand begun."""
    engine = TableEngine(profile, 9, actions=actions)
    for s in (1, 3, 5, 7):
        engine.feed(json.dumps({"type": "seat", "seat": s, "player": f"S{s}", "stack": 2000}))
    engine.feed(json.dumps({"type": "level", "sb": 25, "bb": 50}))
    engine.feed(json.dumps({"type": "hand_start"}))
    return engine


def feed_fuzzed(engine: TableEngine, events: list) -> list[tuple[str, list[dict]]]:
    """Feed each fuzzed event (raw text, or a dict whose None values are left out), checking each for
    what no input may cause: an internal error, or a line refused with errors only that still changed
    the table. Returns every event as text with its output, for the caller's own checks."""
    fed = []
    for n, ev in enumerate(events, 10):
        text = ev if isinstance(ev, str) else json.dumps({k: v for k, v in ev.items() if v is not None})
        before = engine.snapshot()
        out = engine.feed(text, n)
        for line in out:
            assert "internal error" not in line.get("message", ""), (text, line)
        if out and all(line["type"] == "error" for line in out):
            assert engine.snapshot() == before, text
        fed.append((text, out))
    return fed
