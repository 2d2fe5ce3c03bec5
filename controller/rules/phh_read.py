"""Reading a PHH file (Poker Hand History, https://github.com/uoftcprg/phh-std) into a checked `PhhHand`.

Its own module because reading is where bad input meets the code: every problem is a `PhhError` naming the
file and the field, and the TOML reading has a figure behind it (below, and bench/bench_phh.py).
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass
from itertools import repeat
from pathlib import Path
from typing import Any

import msgspec


class PhhError(ValueError):
    """A PHH file this replay cannot use: names the file and the problem."""


@dataclass
class PhhHand:
    """One No-Limit Hold'em hand as a PHH file gives it, checked: players in PHH order (p1 first)."""

    path: str
    players: list[str]
    starting: list[int | None]  # None: unknown (`inf`)
    finishing: list[int | float] | None
    antes: list[int]
    blinds: list[int]
    min_bet: int
    actions: list[str]
    number: int | None = None


def whole_chips(value: Any, where: object) -> int | None:
    """A PHH number as whole chips (None for `inf`, an unknown stack); PhhError at `where` otherwise."""
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
    """`whole_chips` of each value; the place named in a message is spelled out only for a value that is wrong."""
    if set(map(type, values)) <= {int}:  # whole chips throughout (the usual case): checked by C loops
        return list(values)
    out: list[int | None] = []
    for i, v in enumerate(values):
        out.append(v if type(v) is int else whole_chips(v, f"{path}: {key}[{i}]"))
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
    min_bet = whole_chips(data.get("min_bet", blinds[1]), f"{path}: min_bet") or blinds[1]
    actions = data["actions"]
    if not all(map(isinstance, actions, repeat(str))):
        raise PhhError(f"{path}: field 'actions' must be strings")
    number = data.get("hand") if isinstance(data.get("hand"), int) else None
    return PhhHand(
        path, [str(p) for p in players], starting, finishing, antes, blinds, min_bet, actions, number
    )


# Reading a PHH file. tomllib is the reader of record; it is pure Python and takes about 110 us for a PHH
# file of 600 bytes (cProfile: its per-character array and whitespace scanning, `parse_array`,
# `skip_comments_and_array_ws`, `parse_value`), which alone would spend most of the budget of a replay at
# 10x pokerkit (bench/bench_phh.py prints both: tomllib 120 us, `_flat_toml` 8 us a file). PHH files are flat
# `key = value` lines whose values, with their single quotes made double, are JSON; msgspec's C reader
# reads them (0.8 us for the actions array of 21 actions, 0.2 us for a list of six numbers, against 1.1 and
# 0.4 us for the C scanner of Python's json: timeit). `_flat_toml` takes a file only where that reading is
# provably tomllib's, and steps aside (None) for anything else.

# The control characters TOML allows in no comment (a comment may hold a tab).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

_VALUE = msgspec.json.Decoder().decode  # one whole JSON value, or DecodeError


def _flat_toml(text: str) -> dict | None:
    """The document as tomllib reads it, for the flat subset PHH files use: `key = value` lines (a bare ASCII
    name) whose value is a number, true/false, a single-quoted string or an array of those, one line each,
    and comment lines. None for anything else (a multi-line array, a comment after a value, a
    double-quoted or multi-line string, a date, `inf`, a repeated key, ...): tomllib then reads it.

    Why the JSON reading is tomllib's: with no `"` or backslash in the file, `'...'` -> `"..."` makes each TOML
    literal string a JSON string of the same text (JSON refuses the control characters TOML refuses there);
    JSON numbers are a subset of TOML's with the same int/float split and values; `true`/`false` and arrays
    are alike (msgspec reads a float as Python's float() does, and an integer of any size as an int);
    `null` and `{` (no TOML value here) are refused, NaN and Infinity by msgspec (not JSON), as is a number
    out of a float's range (ValidationError; tomllib then reads it as inf); the value must be the whole
    rest of the line (msgspec refuses text after it). tests/rules/test_phh.py holds it to tomllib on every
    sample file and on generated documents."""
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
        try:
            out[key] = _VALUE(value)
        except (msgspec.DecodeError, msgspec.ValidationError):  # not JSON, or out of a float's range
            return None
    return out


def load(path: str | Path) -> PhhHand:
    """Read and check one PHH file; PhhError names the file and what is wrong with it."""
    try:
        # Read as Path.read_text(encoding="utf-8") reads, without its buffered text layer: the raw bytes,
        # decoded, line ends made "\n" as text mode makes them. Read until the end with os.read: four
        # system calls for a PHH file (open, read, the empty read at the end, close) where io.FileIO makes
        # seven (strace: two fstat and an lseek besides).
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            chunks = []
            while chunk := os.read(fd, 65536):
                chunks.append(chunk)
        finally:
            os.close(fd)
        text = (chunks[0] if len(chunks) == 1 else b"".join(chunks)).decode("utf-8")
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
