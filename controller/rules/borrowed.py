"""Borrowed rules: where a venue's book is silent its profile cites another venue's rule, and every
ruling on such a rule says so, so that nobody takes `bluff_street:19` at a Cool Mule table for Cool
Mule's own text.

A citation is `<rulebook>:<rule>`; the ruling is borrowed when the rulebook is not the table's venue.
The ruling keeps its `rule` and gains `borrowed_from` (the lending venue), a field the protocol allows
to be added (../shared/spec/table-events.md: "You may add fields").
"""

from __future__ import annotations

from typing import Any

VENUE_TITLES = {
    "bar_league": "Bar League",
    "bluff_street": "Bluff Street",
    "cool_mule": "Cool Mule",
    "corner_pocket": "Corner Pocket",
    "dragons_den": "Dragon's Den",
}


def lender(rule: str, venue: str) -> str | None:
    """The venue whose book a citation comes from, when that is not `venue`'s own; else None."""
    book, sep, _ = rule.partition(":")
    if not sep or book == venue:
        return None
    return book


def mark_borrowed(lines: list[dict[str, Any]], venue: str) -> None:
    """Add `borrowed_from` to every line whose `rule` cites another venue's book (in place)."""
    own = venue + ":"
    for line in lines:
        rule = line.get("rule")
        if rule is not None and type(rule) is str and not rule.startswith(own) and ":" in rule:
            line["borrowed_from"] = rule.partition(":")[0]


def venue_title(book: str) -> str:
    """A rulebook's name as a reader writes it (`bluff_street` -> Bluff Street)."""
    return VENUE_TITLES.get(book, book.replace("_", " ").title())
