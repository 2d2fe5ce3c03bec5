"""A table's rulings as plain sentences for the director, with the rule cited and whether the rule is
the venue's own or borrowed from another rulebook (pure)."""

from __future__ import annotations

from typing import Any

VENUES = {
    "cool_mule": "Cool Mule",
    "bar_league": "Bar League",
    "dragons_den": "Dragon's Den",
    "corner_pocket": "Corner Pocket",
    "bluff_street": "Bluff Street",
}

MISDEAL_REASONS = {
    "first_cards_exposed": "one of the first cards dealt was exposed",
    "multiple_exposed": "two or more cards were exposed in the deal",
    "button_card_exposed": "the button's card was exposed",
    "first_card_wrong_seat": "the first card went to the wrong seat",
    "dealt_to_ineligible_seat": "a seat that may not play this hand was dealt in",
    "eligible_seat_dealt_out": "a seat that should play was dealt out",
    "wrong_card_count": "a player got the wrong number of cards",
    "multiple_boxed": "more than one card was boxed",
    "button_misplaced": "the button was in the wrong place",
    "too_many_extra_cards": "too many extra cards were dealt",
}

ALERT_TYPES = frozenset(
    {
        "misdeal",
        "button_misplaced",
        "dead_hand",
        "boxed_card",
        "replace_exposed",
        "extra_card",
        "out_of_turn",
        "board_redeal",
        "action_ruled",
        "eliminated",
    }
)


def provenance(rule: str | None, profile: str) -> str:
    if not rule:
        return ""
    book = rule.split(":", 1)[0]
    if book == profile:
        return f"{rule}, the venue's own rule"
    return f"{rule}, borrowed from {VENUES.get(book, book)}"


def sentence(table: str, ruling: dict[str, Any], profile: str) -> str:
    """'Table 2: misdeal: one of the first cards dealt was exposed; re-deal (cool_mule:5.g, the venue's own rule).'"""
    kind = ruling.get("type")
    seat = ruling.get("seat")
    if kind == "misdeal":
        what = f"misdeal: {MISDEAL_REASONS.get(ruling.get('reason'), ruling.get('reason') or 'see the table')}; re-deal the hand"
    elif kind == "button_misplaced":
        what = f"the button belongs at seat {ruling.get('expected')}, not seat {ruling.get('seen')}"
    elif kind == "dead_hand":
        what = f"seat {seat}'s hand is dead" + (f" ({ruling['reason']})" if ruling.get("reason") else "")
    elif kind == "boxed_card":
        what = f"a boxed card: {ruling.get('procedure', 'replace')} it"
    elif kind == "replace_exposed":
        what = f"seat {seat}'s exposed card is replaced after the deal and becomes the flop burn"
    elif kind == "board_redeal":
        what = f"the {ruling.get('street', 'board')} came too early: {str(ruling.get('procedure', '')).replace('_', ' ')}"
    elif kind == "out_of_turn":
        what = f"seat {seat} acted out of turn"
    elif kind == "eliminated":
        what = f"{ruling.get('player', 'a player')} at seat {seat} is out"
    else:
        what = str(kind).replace("_", " ")
    cite = provenance(ruling.get("rule"), profile)
    return f"{table}: {what}" + (f" ({cite})." if cite else ".")
