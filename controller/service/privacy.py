"""What may leave the table: only cards face up for the whole table, only player ID and display name.

The event log keeps every line as it was (replay needs it); everything published (MQTT, the terminal
view) goes through `public_line` / `public_snapshot` first. The rule is a whitelist per line type:
a field that is not listed is dropped, so a new field an engine or tracker adds (a hole card, an NFC
UID, an e-mail address) stays inside unless someone decides here that it is public.

Public cards: a `deal` with `card` (the card was turned face up as it was dealt, everyone saw it),
`expose` (a dealt card that became face up), `boxed` (face up in the deck), `board`, `show` (tabled),
and the output lines that name such cards. Never public: a `muck`'s cards, anything else with cards.
"""

from __future__ import annotations

import re
from typing import Any

CARD = re.compile(r"^[2-9TJQKA][cdhs]$")
CARD_IN_TEXT = re.compile(r"(?<![A-Za-z0-9])[2-9TJQKA][cdhs](?![A-Za-z0-9])")

# Fields that may be published, per line type (inputs and outputs of the protocol, plus `checkin`).
PUBLIC_FIELDS: dict[str, frozenset[str]] = {
    k: frozenset(v)
    for k, v in {
        # inputs
        "table": ("seats", "profile"),
        "level": ("sb", "bb", "ante"),
        "seat": ("seat", "player", "name", "stack", "moved"),
        "leave": ("seat", "reason"),
        # the floor's notices (cmd/move, cmd/colour_up): where a player goes is said at the table
        "move": ("seat", "direction", "table", "to_seat", "name"),
        "colour_up": ("chips", "step"),
        "button": ("seat",),
        "away": ("seat",),
        "back": ("seat",),
        "hand_start": (),
        "deal": ("seat", "card"),
        "expose": ("seat", "card", "by"),
        "boxed": ("card",),
        "burn": (),
        "board": ("cards",),
        "action": ("seat", "action", "to", "chips", "declared"),
        "button_seen": ("seat",),
        "show": ("seat", "cards"),
        "muck": ("seat",),
        "hand_end": (),
        "clock": ("seat", "seconds", "action", "countdown"),
        "penalty": ("seat", "player", "hands", "minutes", "reason", "rounds"),
        # outputs
        "hand": (
            "number",
            "button",
            "sb",
            "bb",
            "dead_button",
            "dead_sb_seat",
            "dealer",
            "first_card",
            "dealt_in",
            "sitting_out",
            "redeal",
            "ante",
            "level",
        ),
        "misdeal": ("reason",),
        "fouled_deck": ("card",),  # a board or tabled card seen twice: public already
        "replace_exposed": ("seat", "card"),
        "extra_card": ("seat",),
        "boxed_card": ("card", "procedure"),
        "button_misplaced": ("expected", "seen"),
        "substantial_action": (),
        "dead_hand": ("seat", "reason"),
        "board_redeal": ("street", "procedure"),
        "action_ruled": ("seat", "as", "to", "reason"),
        "out_of_turn": ("seat", "expected"),
        "pots": ("pots",),
        "show_order": ("first",),
        "award": ("pot", "amount", "winners", "shares", "odd_chips_to", "hand"),
        "eliminated": ("seat", "place"),
        "error": ("line", "message"),
        # check-in at the table (NFC)
        "checkin": (
            "seat",
            "player",
            "name",
            "status",
            "accepted",
            "reason",
            "message",
            "assigned",
            "repeat",
        ),
    }.items()
}
# Always kept: the line's kind, the protocol's citation, and the service's envelope.
ALWAYS = frozenset({"type", "rule", "seq", "t", "source"})
# A ruling on another venue's rule says whose (controller/rules/borrowed.py): public like the citation.
ALWAYS = ALWAYS | {"borrowed_from"}
# Never kept on a line of a type this module does not know.
PRIVATE_KEYS = frozenset(
    {"card", "cards", "hole", "hole_cards", "mucked", "uid", "ndef", "email", "phone", "address", "birth"}
)


def _has_card(value: Any) -> bool:
    if isinstance(value, str):
        return bool(CARD.match(value))
    if isinstance(value, list | tuple):
        return any(_has_card(v) for v in value)
    if isinstance(value, dict):
        return any(_has_card(v) for v in value.values())
    return False


def redact_text(text: str) -> str:
    """A message with every card-like token replaced (an error may quote the line it refused)."""
    return CARD_IN_TEXT.sub("[card]", text)


def public_line(line: dict[str, Any]) -> dict[str, Any]:
    """The part of a protocol line that may be published."""
    kind = line.get("type")
    allowed = PUBLIC_FIELDS.get(kind) if isinstance(kind, str) else None
    out: dict[str, Any] = {}
    for key, value in line.items():
        if key in ALWAYS:
            out[key] = value
        elif allowed is not None:
            if key in allowed:
                out[key] = value
        elif key not in PRIVATE_KEYS and not _has_card(value):
            out[key] = value
    if kind == "error" and isinstance(out.get("message"), str):
        out["message"] = redact_text(out["message"])
    return out


SEAT_FIELDS = frozenset({"seat", "player", "name", "stack", "away", "status", "occupied", "sitting_out"})
SNAPSHOT_FIELDS = frozenset(
    {
        "table",
        "venue",
        "seats",
        "button",
        "sb",
        "bb",
        "ante",
        "level",
        "blinds",
        "hand",
        "hand_number",
        "phase",
        "board",
        "alerts",
        "dead_button",
        "dealer",
        "panel",
        "health",
        "seq",
        "event_seq",
        "ruling_seq",
        "t",
        "profile",
        "last_rulings",
        "substantial_action",
        "engine",
        "to_act",
    }
)


def public_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
    """The retained `state` document: whitelisted top-level keys, seats reduced to public fields."""
    out: dict[str, Any] = {}
    for key, value in snapshot.items():
        if key not in SNAPSHOT_FIELDS:
            continue
        if key == "seats" and isinstance(value, list):
            out[key] = [
                {k: v for k, v in s.items() if k in SEAT_FIELDS} if isinstance(s, dict) else s for s in value
            ]
        elif key == "last_rulings" and isinstance(value, list):
            out[key] = [public_line(v) for v in value if isinstance(v, dict)]
        elif key == "alerts" and isinstance(value, list):
            out[key] = [public_line(v) if isinstance(v, dict) else v for v in value]
        else:
            out[key] = value
    return out
