"""PHH (Poker Hand History, https://github.com/uoftcprg/phh-std) for No-Limit Hold'em: replay a hand through
the table engine and compare the final stacks with the file's `finishing_stacks`.

The parts, one idea each: `phh_read` (a file into a checked `PhhHand`), `phh_lines` (the hand as protocol
input events), this module (the replay), `phh_export` (a table's hands out as PHH files). What callers use
(`load`, `parse`, `to_events`, `to_lines`, `export_event_log`, `PhhError`) is importable from here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain, count

from controller.rules.engine import TableEngine
from controller.rules.events import Error
from controller.rules.phh_export import export_event_log
from controller.rules.phh_lines import to_events, to_lines
from controller.rules.phh_read import PhhError, PhhHand, load, parse
from controller.rules.profile import load_profile

__all__ = [
    "PhhError",
    "PhhHand",
    "ReplayResult",
    "export_event_log",
    "load",
    "parse",
    "replay",
    "to_events",
    "to_lines",
]


@dataclass
class ReplayResult:
    """One hand replayed: the engine's final stacks beside the file's, and the engine's output lines if kept."""

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
    # The hand's events, built from the file as its lines would be read, each checked by `events.parse` as a
    # line is (`TableEngine.feed_rulings`); line k (from 1) fed with its number, the loop in C (map), then
    # every output in one list. Typed: the replay reads them (errors, then the stacks), and only a kept
    # replay needs them as dicts.
    lines = to_events(hand, profile_name)
    ruled = list(chain.from_iterable(map(table.feed_rulings, lines, count(1))))
    # An `error` line names the input line it rejects (`line`, ../shared/spec/table-events.md).
    errors = [f"line {o.line} {lines[o.line - 1].kind}: {o.message}" for o in ruled if type(o) is Error]
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
    outputs = table.as_lines(ruled) if keep else []
    return ReplayResult(hand.path, final, finishing, match, fractional, errors, outputs)
