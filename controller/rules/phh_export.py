"""The hands a table played, out as PHH files (`smart-table hands export`).

Its own module because it runs the other way from replay: from the engine's record of a hand
(`HandPlay`: setup, history, stacks) to a PHH document that pokerkit and this replay read back.
"""

from __future__ import annotations

from typing import Any

from controller.rules.engine import TableEngine
from controller.rules.hand_play import HandPlay
from controller.rules.profile import load_profile


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
