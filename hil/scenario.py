"""Scenario files: what happens at a simulated table, and what players and the director must see.

A scenario is YAML (hil/scenarios/*.yaml), checked in full before anything runs, every problem
named by file and step:

    name: clean hand
    profile: cool_mule            # one of the five rulebooks
    seats: 6
    actions: observed             # optional: observed (default, self-dealt: nobody enters bets) or entered
    level: {sb: 50, bb: 100}      # optional: the first blind level (a director command)
    players:                      # the registration desk: members, cards issued, seats drawn
      - {id: P1, name: Ann, seat: 1}
      - {id: P9, name: Ivo, table: T2}   # drawn at another table of the event
    steps:
      - tap: P1                   # the player's card on the table's NFC reader
        expect:
          - checkin: {player: P1, seat: 1, accepted: true}
          - panel: {text_contains: WELCOME, seats: {1: green}}
      - move_button: 1            # the physical button, seen by the camera
      - hand_start:               # NEW HAND on the panel (the real firmware's button)
        expect:
          - ruling: {type: hand, button: 1, sb: 2, bb: 3}
      - deal: {seat: 2, flashed: true}
        expect:
          - ruling: {type: misdeal, reason: first_cards_exposed}

This module is pure (no I/O but reading the file): the model, validation, and the matching of
what was expected against what was seen. `hil.sim.run_scenario` executes a scenario.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROFILES = ("cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street")
SCENARIO_DIR = Path(__file__).resolve().parent / "scenarios"
DEFAULT_SCENARIO = "demo"
TABLE_ID = "T1"

# step kind -> what its value may be (checked in _check_step)
STEP_KINDS = (
    "tap",  # player id: the player's card on the reader
    "seat",  # {seat, player, name?, stack?, moved?}: the director seats a player (cmd/seat)
    "leave",  # {seat, reason?}: the director takes a player off the table (cmd/leave)
    "eliminate",  # seat: shorthand for leave with reason eliminated
    "level",  # {sb, bb, ante?}: the director sets the next level (cmd/level)
    "button",  # seat: the director places the button for the next hand (cmd/button)
    "move_button",  # seat: the physical dealer button is put in front of a seat (camera)
    "hand_start",  # null: NEW HAND pressed on the panel
    "hand_end",  # null: the director ends the hand (cmd/hand_end)
    "deal",  # seat | {seat, card?, flashed?} | [seats]: hole cards land (camera)
    "deal_hand",  # null | {rounds?, skip?}: two rounds in the order of the last `hand` ruling
    "expose",  # {seat, index?}: a dealt card is turned face up (camera)
    "board",  # n | [cards]: board cards turned face up as one group (camera)
    "burn",  # null: a burn card taken (no sensor sees it: entered as the dealer would)
    "action",  # {seat, action, to?}: a player acts (entered as the dealer would)
    # What a self-dealt table shows. The camera's tracker does not report these yet: the simulator renders
    # what it can and sends the line the camera will send (fold_seen, chips_seen, show) itself.
    "fold",  # seat: the seat's cards go face down into the muck (fold_seen)
    "chips",  # seat: chips go forward from the seat into the betting area (chips_seen)
    "show",  # seat: the seat's hole cards are turned face up at showdown (show)
    "collect",  # null: every card is gathered off the felt for the next deal (camera)
    "muck",  # seat: the seat's cards are thrown into the muck (camera)
    "wait",  # seconds
)
EXPECT_KINDS = ("ruling", "no_ruling", "checkin", "event", "panel", "state")
COLOR_NAMES = (
    "white",
    "green",
    "blue",
    "dim_blue",
    "yellow",
    "purple",
    "red",
    "orange",
    "dark_red",
    "cyan",
    "magenta",
    "gold",
    "off",
)
CARD = re.compile(r"^[2-9TJQKA][cdhs]$")
PLAYER_ID = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
ACTIONS = ("fold", "check", "call", "bet", "raise", "allin")
ACTIONS_MODES = ("observed", "entered")  # the table's `actions`: nobody enters bets, or someone does
LEAVE_REASONS = ("eliminated", "moved", "disqualified", "left")


class ScenarioError(ValueError):
    """An unusable scenario file: every problem, each naming the file and the step."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


@dataclass(frozen=True)
class Player:
    id: str
    name: str
    seat: int | None = None  # at our table; None for a player drawn elsewhere
    table: str = TABLE_ID


@dataclass(frozen=True)
class Expectation:
    kind: str  # one of EXPECT_KINDS
    want: Any  # the expected fields (subset match), or for no_ruling a type name / fields
    timeout: float | None = None

    def describe(self) -> str:
        return f"{self.kind} {_short(self.want)}"


@dataclass(frozen=True)
class Step:
    index: int  # 1-based, as a person counts them
    kind: str
    value: Any
    title: str
    expect: tuple[Expectation, ...] = ()
    line: int | None = None  # line in the YAML file, when known

    @property
    def label(self) -> str:
        return f"step {self.index} ({self.title})"


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    profile: str
    seats: int
    players: tuple[Player, ...]
    steps: tuple[Step, ...]
    level: dict[str, int] | None = None
    source: str = "<scenario>"
    actions: str = "observed"

    @property
    def slug(self) -> str:
        return (
            re.sub(
                r"[^A-Za-z0-9_-]+", "-", Path(self.source).stem if self.source != "<scenario>" else self.name
            ).strip("-")
            or "scenario"
        )

    def player(self, pid: str) -> Player | None:
        return next((p for p in self.players if p.id == pid), None)


# -- loading -----------------------------------------------------------------------------------------


def resolve(name: str) -> Path:
    """A scenario argument: a path, or a name in hil/scenarios (with or without .yaml)."""
    p = Path(name)
    if p.is_file():
        return p
    for cand in (SCENARIO_DIR / name, SCENARIO_DIR / f"{name}.yaml", SCENARIO_DIR / f"{name}.yml"):
        if cand.is_file():
            return cand
    known = ", ".join(shipped_names()) or "none"
    raise ScenarioError(name, [f"no such scenario file or shipped scenario (shipped: {known})"])


def shipped() -> list[Path]:
    return sorted(SCENARIO_DIR.glob("*.yaml"))


def shipped_names() -> list[str]:
    return [p.stem for p in shipped()]


def load(name: str | Path) -> Scenario:
    """Read and validate one scenario; raises ScenarioError listing every problem."""
    import yaml

    path = resolve(str(name))
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(source, [f"cannot read: {exc.strerror or exc}"]) from None
    try:
        raw = yaml.load(text, Loader=_line_loader())
    except yaml.YAMLError as exc:
        raise ScenarioError(source, [f"not valid YAML: {exc}"]) from None
    return parse(raw, source)


def _line_loader() -> type:
    import yaml

    class LineLoader(yaml.SafeLoader):
        """Safe YAML that remembers the line of each mapping (steps are reported by line)."""

        def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
            mapping = super().construct_mapping(node, deep=deep)
            mapping["__line__"] = node.start_mark.line + 1
            return mapping

    return LineLoader


def _strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_lines(v) for k, v in value.items() if k != "__line__"}
    if isinstance(value, list):
        return [_strip_lines(v) for v in value]
    return value


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def parse(raw: Any, source: str = "<scenario>") -> Scenario:
    """Validate a decoded YAML document."""
    problems: list[str] = []
    if not isinstance(raw, dict):
        raise ScenarioError(
            source, [f"expected a mapping with name, profile, steps; got {type(raw).__name__}"]
        )
    known = {"name", "description", "profile", "seats", "players", "steps", "level", "actions", "__line__"}
    for key in raw:
        if key not in known:
            problems.append(f"unknown key {key!r} (keys: {', '.join(sorted(known - {'__line__'}))})")
    name = raw.get("name") or Path(source).stem
    profile = raw.get("profile")
    if profile not in PROFILES:
        problems.append(f"profile: {profile!r} is not one of {', '.join(PROFILES)}")
    seats = raw.get("seats", 10)
    if not _int(seats) or not 2 <= seats <= 10:
        problems.append(f"seats: expected 2..10, got {seats!r}")
        seats = 10
    actions = raw.get("actions", "observed")
    if actions not in ACTIONS_MODES:
        problems.append(
            f"actions: {actions!r} is not one of {', '.join(ACTIONS_MODES)} "
            "(observed: nobody enters the bets; entered: every action is entered)"
        )
    level = raw.get("level")
    if level is not None:
        level = _strip_lines(level)
        if not (isinstance(level, dict) and _int(level.get("sb")) and _int(level.get("bb"))):
            problems.append("level: expected {sb: N, bb: N, ante: N (optional)}")
            level = None
    players = _players(raw.get("players") or [], seats, problems)
    steps_raw = raw.get("steps")
    steps: list[Step] = []
    if not isinstance(steps_raw, list) or not steps_raw:
        problems.append("steps: expected a non-empty list")
    else:
        ids = {p.id for p in players}
        for i, item in enumerate(steps_raw, start=1):
            step = _step(i, item, seats, ids, problems)
            if step is not None:
                steps.append(step)
    if problems:
        raise ScenarioError(source, problems)
    return Scenario(
        name=str(name),
        description=str(raw.get("description") or "").strip(),
        profile=str(profile),
        seats=int(seats),
        players=tuple(players),
        steps=tuple(steps),
        level=level,
        source=source,
        actions=str(actions),
    )


def _players(raw: Any, seats: int, problems: list[str]) -> list[Player]:
    out: list[Player] = []
    if not isinstance(raw, list):
        problems.append("players: expected a list of {id, name, seat} or {id, name, table}")
        return out
    taken: set[int] = set()
    for k, p in enumerate(raw, start=1):
        where = f"players[{k}]" + (f" (line {p.get('__line__')})" if isinstance(p, dict) else "")
        if not isinstance(p, dict):
            problems.append(f"{where}: expected {{id, name, seat}}")
            continue
        pid, pname, seat, table = (
            p.get("id"),
            p.get("name", p.get("id")),
            p.get("seat"),
            p.get("table", TABLE_ID),
        )
        if not isinstance(pid, str) or not PLAYER_ID.match(pid):
            problems.append(f"{where}: id {pid!r}: 1-32 letters, digits, '_', '-'")
            continue
        if any(q.id == pid for q in out):
            problems.append(f"{where}: player {pid} is listed twice")
        if not isinstance(table, str) or not re.match(r"^[A-Za-z0-9_-]{1,16}$", table):
            problems.append(f"{where}: table {table!r}: 1-16 letters, digits, '_', '-'")
            continue
        if table == TABLE_ID:
            if not _int(seat) or not 1 <= seat <= seats:
                problems.append(f"{where}: seat: expected 1..{seats} at this table, got {seat!r}")
                continue
            if seat in taken:
                problems.append(f"{where}: seat {seat} is given to two players")
            taken.add(seat)
        else:
            seat = None
        out.append(Player(pid, str(pname), seat, table))
    return out


def _step(index: int, item: Any, seats: int, player_ids: set[str], problems: list[str]) -> Step | None:
    line = item.get("__line__") if isinstance(item, dict) else None
    where = f"step {index}" + (f" (line {line})" if line else "")
    if isinstance(item, str) and item in STEP_KINDS:
        item = {item: None}
    if not isinstance(item, dict):
        problems.append(f"{where}: expected a mapping like '- deal: 3', got {item!r}")
        return None
    kinds = [k for k in item if k in STEP_KINDS]
    extra = [k for k in item if k not in STEP_KINDS and k not in ("expect", "name", "timeout", "__line__")]
    if len(kinds) != 1 or extra:
        what = ", ".join(map(repr, extra)) if extra else f"{len(kinds)} step kinds"
        problems.append(f"{where}: one step kind needed ({', '.join(STEP_KINDS)}); found {what}")
        return None
    kind = kinds[0]
    value = _strip_lines(item[kind])
    before = len(problems)
    _check_step(where, kind, value, seats, player_ids, problems)
    expects = _expectations(where, item.get("expect"), seats, problems)
    if len(problems) > before:
        return None
    title = str(item.get("name") or _title(kind, value))
    return Step(index, kind, value, title, tuple(expects), line)


def _seat_ok(v: Any, seats: int) -> bool:
    return _int(v) and 1 <= v <= seats


def _check_step(where: str, kind: str, v: Any, seats: int, ids: set[str], p: list[str]) -> None:
    def bad(msg: str) -> None:
        p.append(f"{where}: {kind}: {msg}")

    if kind == "tap":
        if not isinstance(v, str):
            bad("expected a player id")
        elif v not in ids:
            bad(f"player {v!r} is not in players ({', '.join(sorted(ids)) or 'none'})")
    elif kind == "seat":
        if not (isinstance(v, dict) and _seat_ok(v.get("seat"), seats) and isinstance(v.get("player"), str)):
            bad(f"expected {{seat: 1..{seats}, player: ID, stack: N (optional)}}")
    elif kind in ("leave", "eliminate"):
        seat = v.get("seat") if isinstance(v, dict) else v
        if not _seat_ok(seat, seats):
            bad(f"expected a seat 1..{seats}")
        if isinstance(v, dict) and v.get("reason", "eliminated") not in LEAVE_REASONS:
            bad(f"reason: one of {', '.join(LEAVE_REASONS)}")
    elif kind == "level":
        if not (isinstance(v, dict) and _int(v.get("sb")) and _int(v.get("bb"))):
            bad("expected {sb: N, bb: N, ante: N (optional)}")
    elif kind in ("button", "move_button", "muck", "fold", "chips", "show"):
        if not _seat_ok(v, seats):
            bad(f"expected a seat 1..{seats}, got {v!r}")
    elif kind in ("hand_start", "hand_end", "burn", "collect"):
        if v is not None:
            bad("takes no value")
    elif kind == "deal":
        items = v if isinstance(v, list) else [v]
        if not items:
            bad("expected a seat, a list of seats or {seat, flashed, card}")
        for d in items:
            seat = d.get("seat") if isinstance(d, dict) else d
            if not _seat_ok(seat, seats):
                bad(f"seat: expected 1..{seats}, got {seat!r}")
            if isinstance(d, dict):
                if "card" in d and not (isinstance(d["card"], str) and CARD.match(d["card"])):
                    bad(f"card: {d['card']!r} is not a card code like Ah or Td")
                unknown = set(d) - {"seat", "card", "flashed"}
                if unknown:
                    bad(f"unknown field(s) {', '.join(sorted(unknown))} (seat, card, flashed)")
    elif kind == "deal_hand":
        if v is not None and not isinstance(v, dict):
            bad("expected nothing or {rounds: 1|2, skip: [seats], extra: [seats]}")
    elif kind == "expose":
        if not (isinstance(v, dict) and _seat_ok(v.get("seat"), seats)):
            bad("expected {seat: N, index: 0|1, by: dealer|player (optional)}")
        elif v.get("by", "dealer") not in ("dealer", "player"):
            bad(f"by: {v.get('by')!r} is not dealer or player")
    elif kind == "board":
        if _int(v):
            if not 1 <= v <= 5:
                bad("expected 1..5 cards")
        elif isinstance(v, list) and v:
            for c in v:
                if not (isinstance(c, str) and CARD.match(c)):
                    bad(f"{c!r} is not a card code like Ah or Td")
        else:
            bad("expected a number of cards or a list of card codes")
    elif kind == "action":
        if not (isinstance(v, dict) and _seat_ok(v.get("seat"), seats) and v.get("action") in ACTIONS):
            bad(f"expected {{seat: N, action: {'|'.join(ACTIONS)}, to: N (optional)}}")
        elif "to" in v and not _int(v["to"]):
            bad("to: expected a number of chips")
    elif kind == "wait" and (not isinstance(v, int | float) or isinstance(v, bool) or not 0 <= v <= 60):
        bad("expected seconds (0..60)")


def _expectations(where: str, raw: Any, seats: int, p: list[str]) -> list[Expectation]:
    if raw is None:
        return []
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        p.append(f"{where}: expect: expected a list like [- ruling: {{type: misdeal}}]")
        return []
    out = []
    for k, e in enumerate(raw, start=1):
        if not isinstance(e, dict):
            p.append(f"{where}: expect[{k}]: expected a mapping with one of {', '.join(EXPECT_KINDS)}")
            continue
        kinds = [key for key in e if key in EXPECT_KINDS]
        extra = [key for key in e if key not in EXPECT_KINDS and key not in ("timeout", "__line__")]
        if len(kinds) != 1 or extra:
            p.append(
                f"{where}: expect[{k}]: one of {', '.join(EXPECT_KINDS)} needed"
                + (f"; unknown {', '.join(map(repr, extra))}" if extra else "")
            )
            continue
        kind = kinds[0]
        want = _strip_lines(e[kind])
        if kind in ("ruling", "checkin", "event", "state") and not isinstance(want, dict):
            p.append(f"{where}: expect[{k}]: {kind}: expected fields, e.g. {{type: misdeal, reason: ...}}")
            continue
        if kind == "no_ruling" and not isinstance(want, str | dict):
            p.append(f"{where}: expect[{k}]: no_ruling: expected a ruling type or fields")
            continue
        if kind == "panel":
            problem = _check_panel(want, seats)
            if problem:
                p.append(f"{where}: expect[{k}]: panel: {problem}")
                continue
        timeout = e.get("timeout")
        if timeout is not None and (not isinstance(timeout, int | float) or timeout <= 0):
            p.append(f"{where}: expect[{k}]: timeout: expected seconds > 0")
            continue
        out.append(Expectation(kind, want, float(timeout) if timeout else None))
    return out


def _check_panel(want: Any, seats: int) -> str | None:
    if not isinstance(want, dict):
        return "expected {text: ..., text_contains: ..., seats: {N: colour | {color, effect}}}"
    unknown = set(want) - {"text", "text_contains", "seats"}
    if unknown:
        return f"unknown field(s) {', '.join(sorted(unknown))} (text, text_contains, seats)"
    for seat, light in (want.get("seats") or {}).items():
        if not _seat_ok(seat, seats):
            return f"seats: {seat!r} is not a seat 1..{seats}"
        colour = light.get("color") if isinstance(light, dict) else light
        if colour not in COLOR_NAMES:
            return f"seats: {seat}: colour {colour!r} is not one of {', '.join(COLOR_NAMES)}"
    return None


def _title(kind: str, v: Any) -> str:
    if v is None:
        return kind.replace("_", " ")
    if kind == "deal" and isinstance(v, dict):
        how = " flashed" if v.get("flashed") else ""
        return f"deal to seat {v['seat']}{how}"
    if kind == "deal":
        if not isinstance(v, list):
            return f"deal to seat {v}"
        seats = [
            f"{d['seat']} flashed"
            if isinstance(d, dict) and d.get("flashed")
            else str(d["seat"] if isinstance(d, dict) else d)
            for d in v
        ]
        return f"deal to seats {', '.join(seats)}"
    return f"{kind.replace('_', ' ')} {_short(v)}"


def _short(v: Any) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_short(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_short(x) for x in v) + "]"
    return str(v)


# -- matching ----------------------------------------------------------------------------------------


def matches(want: Any, got: Any) -> bool:
    """`want` is a subset of `got`: dict keys compared recursively, lists element-wise, numbers by value.

    Seat-keyed dicts may use int keys where the document has string keys (JSON), and may address a
    list of {seat: N, ...} entries by seat number."""
    if isinstance(want, dict):
        if isinstance(got, list) and all(isinstance(g, dict) and "seat" in g for g in got):
            got = {str(g["seat"]): g for g in got}  # seats listed as [{seat: 1, ...}]: address them by number
        if not isinstance(got, dict):
            return False
        for k, w in want.items():
            if k in got:
                g = got[k]
            elif str(k) in got:
                g = got[str(k)]
            else:
                return False
            if not matches(w, g):
                return False
        return True
    if isinstance(want, list):
        return (
            isinstance(got, list)
            and len(want) == len(got)
            and all(matches(w, g) for w, g in zip(want, got, strict=False))
        )
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    return bool(want == got)


def ruling_matches(want: dict[str, Any] | str, ruling: dict[str, Any]) -> bool:
    if isinstance(want, str):
        return ruling.get("type") == want
    return matches(want, ruling)


def describe_ruling(r: dict[str, Any]) -> str:
    """One ruling as a person reads it: type first, then the fields that matter."""
    skip = {"type", "seq", "event_seq", "ruling_seq", "t", "rule", "source"}
    fields = ", ".join(f"{k}={_short(v)}" for k, v in r.items() if k not in skip)
    return f"{r.get('type')}({fields})" if fields else str(r.get("type"))


def panel_matches(
    want: dict[str, Any], shown: dict[str, Any], colours: dict[str, tuple[int, int, int]]
) -> bool:
    """`shown` is SimulatedPanel.scene_dict(): {'seats': [{seat, color:[r,g,b], effect}], 'text': str}."""
    text = shown.get("text") or ""
    if "text" in want and text != want["text"]:
        return False
    if "text_contains" in want and str(want["text_contains"]).lower() not in text.lower():
        return False
    lights = {s.get("seat"): s for s in shown.get("seats") or []}
    for seat, light in (want.get("seats") or {}).items():
        got = lights.get(int(seat))
        if got is None:
            return False
        colour = light.get("color") if isinstance(light, dict) else light
        effect = light.get("effect") if isinstance(light, dict) else None
        if tuple(got.get("color") or ()) != tuple(colours.get(colour, (-1, -1, -1))):
            return False
        if effect and got.get("effect") != effect:
            return False
    return True


def describe_panel(shown: dict[str, Any], colours: dict[str, tuple[int, int, int]]) -> str:
    names = {tuple(v): k for k, v in colours.items()}
    lit = [
        f"{s['seat']}:{names.get(tuple(s.get('color') or ()), s.get('color'))}/{s.get('effect')}"
        for s in shown.get("seats") or []
        if tuple(s.get("color") or (0, 0, 0)) != (0, 0, 0)
    ]
    text = (shown.get("text") or "").replace("\n", " | ")
    return f"text {text!r}, seats lit {', '.join(lit) or 'none'}"


# -- results -----------------------------------------------------------------------------------------


@dataclass
class StepResult:
    step: Step
    status: str = "not run"  # passed | failed | not run
    message: str = ""
    seconds: float = 0.0
    rulings: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == "passed"


@dataclass
class ScenarioResult:
    scenario: Scenario
    steps: list[StepResult]
    seconds: float = 0.0
    artifacts: str | None = None
    error: str | None = None  # the run itself broke (a part did not start...)

    @property
    def passed(self) -> bool:
        return self.error is None and all(s.passed for s in self.steps)

    @property
    def failure(self) -> StepResult | None:
        return next((s for s in self.steps if s.status == "failed"), None)

    def summary(self) -> str:
        ok = sum(s.passed for s in self.steps)
        head = (
            f"{'PASS' if self.passed else 'FAIL'} {self.scenario.slug}: {ok}/{len(self.steps)} steps passed "
            f"in {self.seconds:.1f} s"
        )
        if self.error:
            return f"{head}\n  error: {self.error}"
        bad = self.failure
        if bad is not None:
            head += f"\n  {bad.step.label}: {bad.message}"
        return head
