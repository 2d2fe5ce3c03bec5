"""Event-wide results: finishing places across tables, payouts, league points, season standings, CSV.

Pure. A table only knows its own players; the floor knows the event: a player who busts is placed
below everyone still playing anywhere. Players busted in the same hand at one table come in as one
group: the larger stack at the start of the hand finishes higher (cool_mule:12.d: "the player who
started the hand with the most chips will be awarded the higher finishing position";
corner_pocket:General Rules.B: "the player who began the hand with the higher chip count will finish
higher"). Players who started that hand with equal stacks share the better place: no rulebook here
says what equal stacks get, so the TDA's rule for players eliminated at the same time is borrowed
(SHARED_PLACE_RULE), and the prize and points of the places they share are split evenly between them.
Where the floor does not know the starting stacks, the table's own order stands.
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


# Every rulebook here is silent on equal starting stacks (cool_mule:12.d and corner_pocket:General
# Rules.B only order unequal ones; Bar League, Bluff Street and Dragon's Den say nothing of busts in
# one hand). Borrowed: the Poker TDA's rule for players eliminated at the same time (equal chip
# counts at the start of the hand finish tied); Dragon's Den's book is the TDA's (dragons_den.txt's
# preamble: the TDA rules "supplement the standard or house rules").
SHARED_PLACE_RULE = "TDA:players eliminated at the same time"  # provenance(): "borrowed from TDA"
BIGGER_STACK_RULE = {
    "cool_mule": "cool_mule:12.d",
    "corner_pocket": "corner_pocket:General Rules.B",
}


def place_rule(profile: str, shared: bool) -> str:
    """The rule an event-wide place of a multi-bust hand rests on."""
    if shared:
        return SHARED_PLACE_RULE
    # the other books borrow cool_mule:12.d (their profiles' elimination_order)
    return BIGGER_STACK_RULE.get(profile, "cool_mule:12.d")


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
        start stacks say otherwise: the larger starting stack finishes higher (cool_mule:12.d), and
        equal starting stacks share the better place (SHARED_PLACE_RULE): two who bust together
        with 1,500 each when 8 are left are both 7th, and the next out is 6th."""
        fresh = [b for b in group if b.player not in self.finishes]
        known = all(b.start_stack is not None for b in fresh)
        if known:
            fresh = sorted(fresh, key=lambda b: -(b.start_stack or 0))  # stable: the table's order otherwise
        first = self.remaining - len(fresh) + 1
        out: list[Finish] = []
        for i, b in enumerate(fresh):
            place = first + i
            if known and out and fresh[i - 1].start_stack == b.start_stack:
                place = out[-1].place  # started the hand level with the one above: the same place
            f = Finish(b.player, place, b.table, b.start_stack, b.eliminated_by)
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


def shared_with(finishes: Iterable[Finish]) -> dict[int, int]:
    """How many players hold each place (more than one only for a shared place)."""
    count: dict[int, int] = {}
    for f in finishes:
        count[f.place] = count.get(f.place, 0) + 1
    return count


def _split(amounts: Sequence[int], place: int, holders: int) -> int | float:
    """A shared place's amount: the places it covers (place .. place+holders-1), split evenly."""
    total = sum(amounts[p - 1] for p in range(place, place + holders) if 1 <= p <= len(amounts))
    share = total / holders
    return int(share) if share == int(share) else round(share, 2)


def places_by_chips(stacks: Mapping[str, int], best_free_place: int) -> list[Finish]:
    """Places for players still in when play stops early: by chip count (cool_mule:12.a at a time
    limit; bar_league:Dealmaking(d): a deal never gifts positions, ranks follow the chips)."""
    ranked = sorted(stacks.items(), key=lambda kv: (-kv[1], kv[0]))
    return [Finish(p, best_free_place + i) for i, (p, _chips) in enumerate(ranked)]


# ------------------------------------------------------------------ payouts

DEFAULT_PAYOUTS = {"dragons_den": ((300, 200, 100), "dragons_den:1")}


def payouts(profile: str, finishes: Iterable[Finish], table: Sequence[int] | None = None) -> dict[str, int]:
    """Prize per player by place: the venue's table, else the rulebook's (Dragon's Den 300/200/100).
    No chop (dragons_den:1: "Chopping is not allowed"); a shared place (SHARED_PLACE_RULE) is not a
    chop: its holders split the prizes of the places they cover evenly."""
    amounts = tuple(table) if table is not None else DEFAULT_PAYOUTS.get(profile, ((), ""))[0]
    finishes = list(finishes)
    holders = shared_with(finishes)
    out: dict[str, int] = {}
    for f in finishes:
        if 1 <= f.place <= len(amounts):
            out[f.player] = _split(amounts, f.place, holders[f.place])  # type: ignore[assignment]
    return out


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
    holders = shared_with(finishes)
    for f in finishes:
        if f.player in skip:
            continue
        points[f.player] = _split(rule.table, f.place, holders[f.place])  # type: ignore[assignment]
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
