"""Event-wide results: finishing places across tables, payouts, league points, season standings, CSV.

Pure. A table only knows its own players; the floor knows the event: a player who busts is placed
below everyone still playing anywhere. Players busted in the same hand at one table come in as one
group, ordered by the table (the larger stack at the start of the hand finishes higher:
cool_mule:12.d, corner_pocket:General Rules.B; the engine applies it and the table's places give
the order).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Finish:
    player: str
    place: int
    table: str | None = None
    start_stack: int | None = None
    eliminated_by: str | None = None


@dataclass(frozen=True, slots=True)
class Bust:
    player: str
    table: str | None = None
    start_stack: int | None = None  # chips at the start of the hand the player busted in
    eliminated_by: str | None = None


class Standings:
    """Places of one event, folded from busts (idempotent: a bust delivered twice counts once)."""

    def __init__(self, entrants: int, finishes: Iterable[Finish] = ()) -> None:
        self.entrants = entrants
        self.finishes: dict[str, Finish] = {f.player: f for f in finishes}

    @property
    def remaining(self) -> int:
        return self.entrants - len(self.finishes)

    def bust(self, group: Sequence[Bust]) -> list[Finish]:
        """Place players busted together (one hand at one table), best first in `group` order unless
        start stacks say otherwise: the larger starting stack finishes higher."""
        fresh = [b for b in group if b.player not in self.finishes]
        fresh = sorted(fresh, key=lambda b: -(b.start_stack or 0) if any(x.start_stack for x in fresh) else 0)
        first = self.remaining - len(fresh) + 1
        out = []
        for i, b in enumerate(fresh):
            f = Finish(b.player, first + i, b.table, b.start_stack, b.eliminated_by)
            self.finishes[b.player] = f
            out.append(f)
        return out

    def winner(self, player: str, table: str | None = None) -> Finish | None:
        """The last player standing takes first place."""
        if player in self.finishes or self.remaining != 1:
            return None
        f = Finish(player, 1, table)
        self.finishes[player] = f
        return f

    def by_place(self) -> list[Finish]:
        return sorted(self.finishes.values(), key=lambda f: f.place)


def places_by_chips(stacks: Mapping[str, int], best_free_place: int) -> list[Finish]:
    """Places for players still in when play stops early: by chip count (cool_mule:12.a at a time
    limit; bar_league:Dealmaking(d): a deal never gifts positions, ranks follow the chips)."""
    ranked = sorted(stacks.items(), key=lambda kv: (-kv[1], kv[0]))
    return [Finish(p, best_free_place + i) for i, (p, _chips) in enumerate(ranked)]


# ------------------------------------------------------------------ payouts

DEFAULT_PAYOUTS = {"dragons_den": ((300, 200, 100), "dragons_den:1")}


def payouts(profile: str, finishes: Iterable[Finish], table: Sequence[int] | None = None) -> dict[str, int]:
    """Prize per player by place: the venue's table, else the rulebook's (Dragon's Den 300/200/100).
    No chop (dragons_den:1: "Chopping is not allowed")."""
    amounts = tuple(table) if table is not None else DEFAULT_PAYOUTS.get(profile, ((), ""))[0]
    return {f.player: amounts[f.place - 1] for f in finishes if 1 <= f.place <= len(amounts)}


def payout_rule(profile: str, table: Sequence[int] | None) -> str:
    if table is not None:
        return "the venue's payout table (floor config)"
    return DEFAULT_PAYOUTS.get(profile, ((), f"{profile}: no payouts in the rulebook"))[1]


# ------------------------------------------------------------------ league points

# corner_pocket:Point System.A: 20 points for 1st down to 1 for 20th.
CORNER_POCKET_POINTS = tuple(range(20, 0, -1))
CORNER_POCKET_KNOCKOUT = 1  # corner_pocket:Point System.B: one point per player eliminated
CORNER_POCKET_ATTENDANCE = 10  # corner_pocket:Point System.D: perfect attendance
CORNER_POCKET_QUALIFY = 6  # corner_pocket:Point System.C: 6 of the 10 practice tournaments


@dataclass(frozen=True, slots=True)
class PointsRule:
    table: tuple[int, ...]
    knockout: int
    rule: str


def points_rule(profile: str, table: Sequence[int] | None = None) -> PointsRule:
    """Corner Pocket's printed table plus knockouts; Cool Mule points by finish only (cool_mule:12.b,
    the table is the venue's); Bar League's and others' tables come from the venue's config."""
    if profile == "corner_pocket" and table is None:
        return PointsRule(CORNER_POCKET_POINTS, CORNER_POCKET_KNOCKOUT, "corner_pocket:Point System.A-B")
    if profile == "cool_mule":
        return PointsRule(tuple(table or ()), 0, "cool_mule:12.b")
    if not table:
        return PointsRule((), 0, "none (no [points] table in the floor config)")
    return PointsRule(tuple(table), 0, "the venue's points table (floor config)")


def event_points(
    profile: str,
    finishes: Iterable[Finish],
    table: Sequence[int] | None = None,
    not_reported: Iterable[str] = (),
) -> dict[str, int]:
    """Points per player for one event. Cool Mule: a player who did not report to the director gets
    none (cool_mule:12.c)."""
    rule = points_rule(profile, table)
    if not rule.table and not rule.knockout:
        return {}  # no points table: this event awards none
    finishes = list(finishes)
    skip = set(not_reported) if profile == "cool_mule" else set()
    points: dict[str, int] = {}
    for f in finishes:
        if f.player in skip:
            continue
        points[f.player] = rule.table[f.place - 1] if 1 <= f.place <= len(rule.table) else 0
    if rule.knockout:
        for f in finishes:
            if f.eliminated_by and f.eliminated_by in points:
                points[f.eliminated_by] += rule.knockout
    return points


@dataclass(frozen=True, slots=True)
class SeasonRow:
    player: str
    points: int
    events: int
    attendance_bonus: int
    qualified: bool


def season_standings(
    profile: str, events: Sequence[Mapping[str, int]], season_events: int | None = None
) -> list[SeasonRow]:
    """Season table from each event's points. Corner Pocket: 10 points for perfect attendance
    (corner_pocket:Point System.D) and the final table needs 6 events (Point System.C)."""
    totals: dict[str, int] = {}
    played: dict[str, int] = {}
    for ev in events:
        for player, pts in ev.items():
            totals[player] = totals.get(player, 0) + pts
            played[player] = played.get(player, 0) + 1
    rows = []
    held = season_events if season_events is not None else len(events)
    for player, pts in totals.items():
        bonus = CORNER_POCKET_ATTENDANCE if profile == "corner_pocket" and played[player] >= held else 0
        qualified = played[player] >= CORNER_POCKET_QUALIFY if profile == "corner_pocket" else True
        rows.append(SeasonRow(player, pts + bonus, played[player], bonus, qualified))
    return sorted(rows, key=lambda r: (-r.points, r.player))


def standings_csv(
    finishes: Iterable[Finish], prizes: Mapping[str, int], points: Mapping[str, int], names: Mapping[str, str]
) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["place", "player", "name", "table", "prize", "points"])
    for f in sorted(finishes, key=lambda f: f.place):
        w.writerow(
            [
                f.place,
                f.player,
                names.get(f.player, ""),
                f.table or "",
                prizes.get(f.player, ""),
                points.get(f.player, ""),
            ]
        )
    return out.getvalue()


def season_csv(rows: Iterable[SeasonRow]) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["rank", "player", "points", "events", "attendance_bonus", "qualified"])
    for i, r in enumerate(rows, start=1):
        w.writerow([i, r.player, r.points, r.events, r.attendance_bonus, "yes" if r.qualified else "no"])
    return out.getvalue()
