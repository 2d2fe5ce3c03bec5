"""PHH (Poker Hand History, https://github.com/uoftcprg/phh-std) for No-Limit Hold'em: read a hand, turn it
into protocol input lines, replay it through the rules engine and compare the final stacks with the
file's `finishing_stacks`; and write the hands a table played as PHH files.

Seat mapping: player pK sits in seat K of a table with as many seats as players. PHH orders players
from the small blind: p1 = small blind, p2 = big blind, ..., last = button; heads-up the blinds are
reversed (p1 = big blind, p2 = button and small blind), so the button is the last seat either way
except heads-up, where it is seat 2.
"""

from __future__ import annotations

import io
import json
import json.scanner
import math
import re
import tomllib
from dataclasses import dataclass, field
from itertools import chain, count, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any

from controller.rules.engine import TableEngine
from controller.rules.hand_play import HandPlay
from controller.rules.profile import load_profile


class PhhError(ValueError):
    """A PHH file this replay cannot use: names the file and the problem."""


@dataclass
class PhhHand:
    path: str
    players: list[str]
    starting: list[int | None]  # None: unknown (`inf`)
    finishing: list[int | float] | None
    antes: list[int]
    blinds: list[int]
    min_bet: int
    actions: list[str]
    number: int | None = None


def _whole(value: Any, where: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PhhError(f"{where}: expected a number, got {value!r}")
    if isinstance(value, float):
        if math.isinf(value):
            return None
        if not value.is_integer():
            raise PhhError(f"{where}: {value} is not a whole number of chips")
        value = int(value)
    return value


def _wholes(values: list, path: str, key: str) -> list[int | None]:
    """`_whole` of each value; the place named in a message is spelled out only for a value that is wrong."""
    if set(map(type, values)) <= {int}:  # whole chips throughout (the usual case): checked by C loops
        return list(values)
    out: list[int | None] = []
    for i, v in enumerate(values):
        out.append(v if type(v) is int else _whole(v, f"{path}: {key}[{i}]"))
    return out


def parse(data: dict, path: str) -> PhhHand:
    """Check the fields a No-Limit Hold'em replay needs; PhhError says which is wrong."""
    variant = data.get("variant")
    if variant != "NT":
        raise PhhError(f"{path}: variant {variant!r} is not No-Limit Texas Hold'em ('NT')")
    for key in ("antes", "blinds_or_straddles", "starting_stacks", "actions"):
        if not isinstance(data.get(key), list):
            raise PhhError(f"{path}: field '{key}' is missing or not an array")
    n = len(data["starting_stacks"])
    if n < 2:
        raise PhhError(f"{path}: a hand needs at least 2 players, got {n}")
    for key in ("antes", "blinds_or_straddles"):
        if len(data[key]) != n:
            raise PhhError(f"{path}: field '{key}' has {len(data[key])} entries for {n} players")
    starting = _wholes(data["starting_stacks"], path, "starting_stacks")
    antes = [v or 0 for v in _wholes(data["antes"], path, "antes")]
    blinds = [v or 0 for v in _wholes(data["blinds_or_straddles"], path, "blinds_or_straddles")]
    if any(blinds[2:]):
        raise PhhError(
            f"{path}: straddles are not supported (blinds_or_straddles = {data['blinds_or_straddles']})"
        )
    finishing = data.get("finishing_stacks")
    if finishing is not None and (not isinstance(finishing, list) or len(finishing) != n):
        raise PhhError(f"{path}: field 'finishing_stacks' must list {n} stacks")
    players = data.get("players") or [f"p{i + 1}" for i in range(n)]
    if not isinstance(players, list) or len(players) != n:
        raise PhhError(f"{path}: field 'players' must list {n} names")
    min_bet = _whole(data.get("min_bet", blinds[1]), f"{path}: min_bet") or blinds[1]
    actions = data["actions"]
    if not all(map(isinstance, actions, repeat(str))):
        raise PhhError(f"{path}: field 'actions' must be strings")
    number = data.get("hand") if isinstance(data.get("hand"), int) else None
    return PhhHand(
        path, [str(p) for p in players], starting, finishing, antes, blinds, min_bet, actions, number
    )


# Reading a PHH file. tomllib is the reader of record; it is pure Python and takes about 105 us for a PHH
# file of 600 bytes (cProfile: its per-character array and whitespace scanning, `parse_array`,
# `skip_comments_and_array_ws`, `parse_value`), which alone would spend most of the budget of a replay at
# 10x pokerkit (bench/bench_phh.py). PHH files are flat `key = value` lines whose values, with their single
# quotes made double, are JSON; the C JSON scanner reads them in about a tenth of the time. `_flat_toml`
# takes a file only where that reading is provably tomllib's, and steps aside (None) for anything else.

# The control characters TOML allows in no comment (a comment may hold a tab).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not TOML")  # NaN and Infinity are JSON to Python's decoder, not TOML


_SCAN = json.scanner.make_scanner(json.JSONDecoder(parse_constant=_no_constant))


def _flat_toml(text: str) -> dict | None:
    """The document as tomllib reads it, for the flat subset PHH files use: `key = value` lines (a bare ASCII
    name) whose value is a number, true/false, a single-quoted string or an array of those, one line each,
    and comment lines. None for anything else (a multi-line array, a comment after a value, a
    double-quoted or multi-line string, a date, `inf`, a repeated key, ...): tomllib then reads it.

    Why the JSON reading is tomllib's: with no `"` or backslash in the file, `'...'` -> `"..."` makes each TOML
    literal string a JSON string of the same text (JSON refuses the control characters TOML refuses there);
    JSON numbers are a subset of TOML's with the same int/float split and values; `true`/`false` and arrays
    are alike; `null` and `{` (no TOML value here) are refused, NaN/Infinity by `_no_constant`; the scanner
    must use the whole value. tests/rules/test_phh.py holds it to tomllib on every sample file and on
    generated documents."""
    if '"' in text or "\\" in text or "{" in text or "null" in text or "\r" in text or "\x7f" in text:
        return None  # (JSON takes CR for a blank and DEL inside a string, TOML neither)
    out: dict[str, Any] = {}
    for line in text.replace("'", '"').split("\n"):
        line = line.strip(" \t")
        if not line:
            continue
        if line[0] == "#":
            if _CONTROL.search(line) is not None:  # (a value's control characters JSON refuses itself)
                return None
            continue
        key, equals, value = line.partition("=")
        key = key.rstrip(" \t")
        if not equals or key in out or not (key.isascii() and key.isidentifier()):
            return None
        value = value.lstrip(" \t")
        try:
            out[key], end = _SCAN(value, 0)
        except (ValueError, StopIteration):  # not JSON (StopIteration: no value at all)
            return None
        if end != len(value):
            return None
    return out


def load(path: str | Path) -> PhhHand:
    """Read and check one PHH file; PhhError names the file and what is wrong with it."""
    try:
        # Read as Path.read_text(encoding="utf-8") reads, without its buffered text layer: the raw bytes,
        # decoded, line ends made "\n" as text mode makes them.
        with io.FileIO(path) as fh:
            text = fh.readall().decode("utf-8")
    except OSError as exc:
        raise PhhError(f"{path}: cannot read: {exc.strerror}") from None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    data = _flat_toml(text)
    if data is None:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PhhError(f"{path}: not valid TOML: {exc}") from None
    return parse(data, str(path))


def button_seat(n: int) -> int:
    return 2 if n == 2 else n


def _effective(values: list[int]) -> list[int]:
    """Per-player forced bets as paid: PHH reverses them heads-up."""
    return list(reversed(values)) if len(values) == 2 else list(values)


class _Where:
    """Where an action sits in the file, spelled out only when there is something wrong to report."""

    __slots__ = ("k", "path", "text")

    def __init__(self, path: str, k: int, text: str):
        self.path, self.k, self.text = path, k, text

    def __str__(self) -> str:
        return f"{self.path}: actions[{self.k}] {self.text!r}"

    def __format__(self, spec: str) -> str:
        return str(self)


def _split_cards(text: str, where: object) -> list[str]:
    if len(text) % 2:
        raise PhhError(f"{where}: cannot read cards {text!r}")
    return [text[i : i + 2] for i in range(0, len(text), 2)]


_PLAYER_INDEX: dict[int, tuple[dict[str, int], dict[str, tuple[int, str]]]] = {}


def _player_index(n: int) -> tuple[dict[str, int], dict[str, tuple[int, str]]]:
    """For a hand of n players: "p1" -> 0, ...; and the two usual actions written plainly, "p1 f" and
    "p1 cc", -> (0, "f"), ... (read without splitting them). Read-only, kept per n."""
    index = _PLAYER_INDEX.get(n)
    if index is None:
        players = {f"p{i + 1}": i for i in range(n)}
        plain = {f"{name} {verb}": (i, verb) for name, i in players.items() for verb in ("f", "cc")}
        index = _PLAYER_INDEX[n] = (players, plain)
    return index


def _dealt_to(hole_deals: list[list[str]]) -> dict[int, str]:
    """Player index -> the hole cards the "d dh" actions gave it (for "sm -": show what was dealt)."""
    dealt: dict[int, str] = {}
    for words in hole_deals:
        number = words[2][1:]
        if number.isdigit():
            p = int(number) - 1
            dealt[p] = dealt.get(p, "") + words[3]
    return dealt


def to_lines(hand: PhhHand, profile: str = "bluff_street") -> list[dict]:
    """The protocol input lines of one PHH hand, from `table` to `hand_end`."""
    n = len(hand.players)
    sb, bb = hand.blinds[0], hand.blinds[1]
    antes = _effective(hand.antes)
    bb_index = 0 if n == 2 else 1
    level: dict[str, Any] = {"type": "level", "sb": sb, "bb": bb, "ante": 0}
    if any(antes):
        if len(set(antes)) == 1:
            level["ante"] = antes[0]
        elif [i for i, a in enumerate(antes) if a] == [bb_index]:
            level["ante"] = antes[bb_index]
            level["big_blind_ante"] = True
        else:
            raise PhhError(f"{hand.path}: antes {hand.antes} are neither uniform nor a big-blind ante")
    lines: list[dict] = [{"type": "table", "seats": n, "profile": profile}]
    for i, name in enumerate(hand.players):
        line: dict[str, Any] = {"type": "seat", "seat": i + 1, "player": name, "moved": True}
        if hand.starting[i] is not None:
            line["stack"] = hand.starting[i]
        lines.append(line)
    lines += [level, {"type": "button", "seat": button_seat(n)}, {"type": "hand_start"}]
    seats = range(1, n + 1)
    lines += [{"type": "deal", "seat": s} for s in seats]
    lines += [{"type": "deal", "seat": s} for s in seats]

    # Follow the bets just enough to name each action as the protocol does (check or call, bet or raise).
    inf = math.inf
    stacks: list = []  # behind each player (inf: unknown)
    street_in: list = []  # put in this betting round
    for start, ante, post in zip(hand.starting, antes, _effective(hand.blinds), strict=True):
        stack = inf if start is None else start
        stack -= min(ante, stack)
        post = min(post, stack)
        stacks.append(stack - post)
        street_in.append(post)
    current = max(bb, max(street_in))
    player_index, plain = _player_index(n)
    hole_deals: list[list[str]] = []  # the "d dh" actions so far, read only for a later "sm -"
    append = lines.append
    for k, text in enumerate(hand.actions):
        known = plain.get(text)
        if known is not None:  # "pK f" or "pK cc" as written plainly: most actions
            p, verb = known
        else:
            words = (text.split("#", 1)[0] if "#" in text else text).split()
            if not words:
                continue
            actor = words[0]
            verb = words[1] if len(words) > 1 else ""
            if actor == "d":
                if verb == "dh" and len(words) >= 4:
                    hole_deals.append(words)  # face down: the deal lines above
                elif verb == "db" and len(words) >= 3:
                    cards = words[2]
                    if len(cards) == 6:  # a flop
                        cards = [cards[:2], cards[2:4], cards[4:]]
                    elif len(cards) == 2:  # a turn or river
                        cards = [cards]
                    else:
                        cards = _split_cards(cards, _Where(hand.path, k, text))
                    append({"type": "burn"})
                    append({"type": "board", "cards": cards})
                    street_in = [0] * n
                    current = 0
                else:
                    raise PhhError(f"{_Where(hand.path, k, text)}: unknown dealer action")
                continue
            p = player_index.get(actor)
            if p is None:
                if not (actor[:1] == "p" and actor[1:].isdigit()):
                    raise PhhError(f"{_Where(hand.path, k, text)}: unknown actor {actor!r}")
                p = int(actor[1:]) - 1  # "p01" names player 1 too
                if not 0 <= p < n:
                    raise PhhError(f"{_Where(hand.path, k, text)}: there is no player {actor}")
        if verb == "f":
            append({"type": "action", "seat": p + 1, "action": "fold"})
        elif verb == "cc":
            owed = current - street_in[p]
            if owed > 0:
                pay = owed if owed < stacks[p] else stacks[p]
                stacks[p] -= pay
                street_in[p] += pay
                append({"type": "action", "seat": p + 1, "action": "call"})
            else:
                append({"type": "action", "seat": p + 1, "action": "check"})
        elif verb == "cbr":
            amount = words[2] if len(words) > 2 else ""
            if amount.isascii() and amount.isdigit():  # the usual whole number of chips
                to = int(amount)
            else:
                where = _Where(hand.path, k, text)
                if not amount:
                    raise PhhError(f"{where}: 'cbr' needs an amount")
                try:
                    to = _whole(float(amount) if "." in amount else int(amount), where)
                except ValueError:
                    raise PhhError(f"{where}: amount {amount!r} is not a number") from None
                if to is None:
                    raise PhhError(f"{where}: amount must be finite")
            pay = to - street_in[p]
            if pay > stacks[p]:
                where = _Where(hand.path, k, text)
                raise PhhError(f"{where}: {actor} bets {to} with only {stacks[p] + street_in[p]}")
            kind = "allin" if pay == stacks[p] else ("bet" if current == 0 else "raise")
            append({"type": "action", "seat": p + 1, "action": kind, "to": to})
            stacks[p] -= pay
            street_in[p] = to
            if to > current:
                current = to
        elif verb == "sm":
            cards = words[2] if len(words) > 2 else ""
            if cards == "-":
                cards = _dealt_to(hole_deals).get(p, "?")
            if not cards:
                append({"type": "muck", "seat": p + 1})
            elif "?" not in cards:
                if len(cards) == 4:  # two hole cards
                    cards = [cards[:2], cards[2:]]
                else:
                    cards = _split_cards(cards, _Where(hand.path, k, text))
                append({"type": "show", "seat": p + 1, "cards": cards})
            # Unknown cards neither shown nor mucked: the hand cannot claim a contested pot.
        else:
            raise PhhError(f"{_Where(hand.path, k, text)}: unknown player action {verb!r}")
    lines.append({"type": "hand_end"})
    return lines


@dataclass
class ReplayResult:
    path: str
    final_stacks: list[int | None]
    finishing_stacks: list[int | float] | None
    match: bool
    fractional: bool = False  # the file's finishing stacks split a chip (not whole numbers)
    errors: list[str] = field(default_factory=list)
    outputs: list[dict] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "file": self.path,
            "final_stacks": self.final_stacks,
            "finishing_stacks": self.finishing_stacks,
            "match": self.match,
        }


def replay(hand: PhhHand, profile_name: str = "bluff_street", keep: bool = False) -> ReplayResult:
    """Drive one hand through the table engine; compare the final stacks with the file's."""
    n = len(hand.players)
    table = TableEngine(load_profile(profile_name), n)
    lines = to_lines(hand, profile_name)
    # Line k (from 1) fed with its number; the loop in C (map), then every output in one list.
    outputs: list[dict] = list(chain.from_iterable(map(table.feed, lines, count(1))))
    # An `error` line names the input line it rejects (`line`, ../shared/spec/table-events.md).
    errors: list[str] = []
    if "error" in map(itemgetter("type"), outputs):
        for o in outputs:
            if o["type"] == "error":
                errors.append(f"line {o['line']} {lines[o['line'] - 1]['type']}: {o['message']}")
    stacks = table.stacks()
    # A seat the table no longer lists was vacated by a bust-out: it finished with no chips.
    final = [stacks.get(s, 0) for s in range(1, n + 1)]
    finishing = hand.finishing
    fractional = False
    if finishing is not None:
        for v in finishing:
            if isinstance(v, float) and not v.is_integer():
                fractional = True
                break
    if finishing is None or errors:
        match = False
    elif final == finishing and None not in final:
        match = True  # the usual case: the same whole numbers
    else:
        match = all(f is not None and float(f) == float(e) for f, e in zip(final, finishing, strict=True))
    return ReplayResult(hand.path, final, finishing, match, fractional, errors, outputs if keep else [])


# ---- export ------------------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "inf"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "") + "'" if "\n" not in value else repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def hand_to_phh(
    play: HandPlay, names: dict[int, str] | None = None, extra: dict[str, Any] | None = None
) -> str:
    """One finished hand as a PHH document. Players in PHH order: p1 is the first seat left of the button
    (the small blind), the button last; heads-up p1 is the big blind. Unshown hole cards are `????`."""
    setup = play.setup
    seats = list(play.order)
    index = {s: i + 1 for i, s in enumerate(seats)}
    n = len(seats)
    blinds = [setup.sb if s == setup.sb_seat else setup.bb if s == setup.bb_seat else 0 for s in seats]
    if setup.ante and setup.big_blind_ante:
        antes = [setup.ante if s == setup.bb_seat else 0 for s in seats]
    else:
        antes = [setup.ante] * n
    if n == 2:  # PHH writes heads-up forced bets reversed
        blinds, antes = blinds[::-1], antes[::-1]
    actions = [f"d dh p{index[s]} {''.join(play.shown.get(s, ['??', '??']))}" for s in seats]
    for item in play.history:
        if item[0] == "action":
            _, seat, kind, to = item
            code = {"fold": "f", "check": "cc", "call": "cc"}.get(kind)
            actions.append(f"p{index[seat]} {code}" if code else f"p{index[seat]} cbr {to}")
        elif item[0] == "board":
            actions.append("d db " + "".join(item[1]))
        elif item[0] == "show":
            actions.append(f"p{index[item[1]]} sm {''.join(item[2])}")
        elif item[0] == "muck":
            actions.append(f"p{index[item[1]]} sm")
    fields: dict[str, Any] = {
        "variant": "NT",
        "ante_trimming_status": True,
        "antes": antes,
        "blinds_or_straddles": blinds,
        "min_bet": setup.bb,
        "starting_stacks": [setup.stacks.get(s) for s in seats],
        "actions": actions,
        "hand": setup.number,
        "seats": seats,
        "seat_count": setup.seats,
        "players": [(names or {}).get(s, f"seat {s}") for s in seats],
        "finishing_stacks": [play.stacks.get(s) for s in seats],
    }
    fields.update(extra or {})
    return "".join(f"{key} = {_toml_value(value)}\n" for key, value in fields.items())


def export_event_log(
    lines: list[dict | str], profile: str = "bluff_street", seats: int = 10
) -> list[tuple[int, str]]:
    """Play a table's recorded input lines through the engine; (hand number, PHH text) per finished hand.
    Misdealt hands are not hands: only hands that reached `hand_end` are written."""
    first = next((x for x in lines if isinstance(x, dict) and x.get("type") == "table"), None)
    if first is not None:
        profile = first.get("profile", profile)
        seats = first.get("seats", seats)
    table = TableEngine(load_profile(profile), seats)
    hands: list[tuple[int, str]] = []
    names: dict[int, str] = {}
    for number, line in enumerate(lines, start=1):
        if isinstance(line, dict) and line.get("type") == "seat":
            names[line["seat"]] = str(line.get("player", f"seat {line['seat']}"))
        before = _current_play(table)
        out = table.feed(line, number)
        is_end = (isinstance(line, dict) and line.get("type") == "hand_end") or (
            isinstance(line, str) and '"hand_end"' in line
        )
        if (
            is_end
            and before is not None
            and before.finished
            and not any(o.get("type") == "error" for o in out)
        ):
            hands.append((before.setup.number, hand_to_phh(before, names, {"_profile": profile})))
    return hands


def _current_play(table: TableEngine) -> HandPlay | None:
    """The hand the engine is playing (None between hands and after a misdeal, which drops the play)."""
    return table.hand.play if table.hand is not None else None
