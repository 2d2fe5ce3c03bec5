"""Rulings as the people at the table read them: the `--pretty` sentences, with player names and
every rule borrowed from another venue's rulebook marked as borrowed.

One place for the wording that the report, the live view of `smart-table sim`, `smart-table top`
and the floor's alerts show, so a floor person reads the same sentence wherever a ruling appears. The sentences themselves
are controller/rules/pretty.py's; this module adds who sits where and where the rule comes from.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from controller.rules.pretty import describe

_SEAT = re.compile(r"\b([Ss]eat) (\d+)\b")


def names_by_seat(seats: Iterable[Any]) -> dict[int, str]:
    """{seat: name} from the `seats` of a table's state (or a scenario's players): the display name,
    else the player ID."""
    out: dict[int, str] = {}
    for entry in seats or ():
        if not isinstance(entry, Mapping):
            continue
        seat, name = entry.get("seat"), entry.get("name") or entry.get("player") or entry.get("id")
        if isinstance(seat, int) and name:
            out[seat] = str(name)
    return out


VENUES = {
    "cool_mule": "Cool Mule",
    "bar_league": "Bar League",
    "dragons_den": "Dragon's Den",
    "corner_pocket": "Corner Pocket",
    "bluff_street": "Bluff Street",
}


def provenance(rule: str | None, profile: str | None) -> str:
    """`cool_mule:5.g, the venue's own rule` / `bluff_street:29, borrowed from Bluff Street`: where a
    ruling's rule comes from, as the floor's page labels it."""
    if not rule:
        return ""
    book = rule.split(":", 1)[0]
    if book == profile:
        return f"{rule}, the venue's own rule"
    return f"{rule}, borrowed from {VENUES.get(book, book)}"


def rule_label(rule: str | None, profile: str | None) -> str:
    """`[cool_mule:5.g]`, or `[borrowed from bar_league: bar_league:Misdeals(a)]` when the table plays
    another venue's rulebook (a profile fills a gap in its own book with a neighbour's rule)."""
    if not rule:
        return ""
    book = rule.split(":", 1)[0]
    if profile and book != profile:
        return f"[borrowed from {book}: {rule}]"
    return f"[{rule}]"


def sentence(
    line: Mapping[str, Any], names: Mapping[int, str] | None = None, profile: str | None = None
) -> str:
    """One output line (a ruling, a check-in) as a sentence, names after seat numbers, rule at the end."""
    doc = dict(line)
    rule = doc.pop("rule", None)
    checkin = doc.get("type") == "checkin"
    text = _checkin(doc) if checkin else _described(doc)
    if names and not checkin:
        text = _SEAT.sub(lambda m: _named(m, names), text)
    label = rule_label(str(rule) if rule else None, profile)
    return f"{text}  {label}" if label else text


def is_borrowed(line: Mapping[str, Any], profile: str | None) -> bool:
    rule = line.get("rule")
    return bool(rule and profile and str(rule).split(":", 1)[0] != profile)


def _named(m: re.Match[str], names: Mapping[int, str]) -> str:
    name = names.get(int(m.group(2)))
    return f"{m.group(1)} {m.group(2)} ({name})" if name else m.group(0)


def _described(doc: dict[str, Any]) -> str:
    try:
        return describe(doc)
    except (KeyError, TypeError, ValueError):  # a line missing a field (filtered for privacy, or new)
        rest = ", ".join(f"{k} {v}" for k, v in doc.items() if k not in ("type", "seq", "t", "source"))
        return f"{str(doc.get('type', '?')).replace('_', ' ')}: {rest}" if rest else str(doc.get("type"))


def _checkin(doc: dict[str, Any]) -> str:
    who = doc.get("name") or doc.get("player") or "a card"
    seat = doc.get("seat")
    where = f" at seat {seat}" if seat else ""
    if doc.get("accepted") is False:
        reason = str(doc.get("reason") or "refused").replace("_", " ")
        return f"Check-in refused for {who}{where}: {reason}."
    return f"{who} checked in{where}."
