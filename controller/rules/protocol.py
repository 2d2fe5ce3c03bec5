"""Input lines of the table event protocol (../shared/spec/table-events.md), checked field by field.

`parse_line` turns one text line into a validated dict or raises `Rejected` naming the field and the
problem. Validation here is about form (types, ranges, known values); whether an event can happen
*now* is the engine's business.
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

from controller.rules.cards import ALL_CARDS, card_problem
from controller.rules.errors import Rejected

ACTIONS = ("fold", "check", "call", "bet", "raise", "allin")
LEAVE_REASONS = ("eliminated", "moved", "disqualified", "left")
EXPOSED_BY = ("dealer", "player")
ACTIONS_MODES = ("entered", "observed")  # the `table` line's `actions`: who tells the engine the betting

# No real chip count comes near a trillion, and sums of 23 such stacks stay exact in any JSON reader
# (2**53): a larger number is a typo or an attack, refused before it reaches the engine or the output.
MAX_CHIPS = 10**12
LONGEST_PLAYER = 64  # characters of a player id (as director commands allow)


def _no_constant(name: str) -> Any:
    raise Rejected(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


_decoder = json.JSONDecoder(parse_constant=_no_constant)
_clip = reprlib.Repr()  # (keyword arguments only from Python 3.12)
_clip.maxstring = _clip.maxother = _clip.maxlong = 40
_clip.maxlevel, _clip.maxlist, _clip.maxdict = 2, 4, 4


def _shown(value: Any) -> str:
    """A value as an error message quotes it: clipped, so a megabyte or a deep nest stays one short line."""
    return _clip.repr(value)


def _lone_surrogate(value: Any) -> str | None:
    """Where in a decoded line a string holds a lone surrogate (a `\\ud800` escape: not a character, so
    it cannot be written to the log, MQTT or a terminal), or None. Iterative: a deep nest is no risk."""
    todo: list[tuple[Any, str]] = [(value, "the line")]
    while todo:
        item, where = todo.pop()
        if type(item) is str:
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"{where} holds {exc.object[exc.start]!a} at character {exc.start + 1}"
        elif isinstance(item, dict):
            for key, inner in item.items():
                todo.append((inner, f"field {key!a}" if where == "the line" else f"{where}[{key!a}]"))
                todo.append((key, "a field name"))
        elif isinstance(item, list):
            todo.extend((inner, f"{where}[{i}]") for i, inner in enumerate(item))
    return None


def _int(ev: dict, key: str, *, minimum: int = 0, required: bool = True, default: Any = None) -> Any:
    value = ev.get(key, default)
    if value is None:
        if required:
            raise Rejected(f"missing field '{key}'")
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise Rejected(f"field '{key}' must be an integer, got {_shown(value)}")
    if value < minimum:
        raise Rejected(f"field '{key}' must be at least {minimum}, got {_shown(value)}")
    if value > MAX_CHIPS:
        raise Rejected(
            f"field '{key}': {_shown(value)} is larger than any chip count (at most {MAX_CHIPS:,})"
        )
    return value


def _seat(ev: dict, seats: int, key: str = "seat") -> int:
    seat = _int(ev, key, minimum=1)
    if seat > seats:
        raise Rejected(f"field '{key}': seat {seat} does not exist at a {seats}-seat table")
    return seat


def _card(ev: dict, key: str = "card") -> str:
    if key not in ev:
        raise Rejected(f"missing field '{key}'")
    if type(ev[key]) is not str or len(ev[key]) > 3:
        raise Rejected(f"field '{key}': expected a card code like 'Ah', got {_shown(ev[key])}")
    problem = card_problem(ev[key])
    if problem:
        raise Rejected(f"field '{key}': {problem}")
    return ev[key]


def _cards(ev: dict, key: str = "cards") -> list[str]:
    cards = ev.get(key)
    if not isinstance(cards, list) or not cards:
        raise Rejected(f"field '{key}' must be a non-empty list of card codes")
    if len(cards) > 52:
        raise Rejected(f"field '{key}' lists {len(cards)} cards; a deck has 52")
    for i, card in enumerate(cards):
        if type(card) is not str or len(card) > 3:
            raise Rejected(f"field '{key}'[{i}]: expected a card code like 'Ah', got {_shown(card)}")
        problem = card_problem(card)
        if problem:
            raise Rejected(f"field '{key}'[{i}]: {problem}")
    if len(set(cards)) != len(cards):
        raise Rejected(f"field '{key}' lists the same card twice: {cards}")
    return cards


def _choice(ev: dict, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
    value = ev.get(key, default)
    if value is None:
        raise Rejected(f"missing field '{key}' (one of {', '.join(choices)})")
    if value not in choices:
        raise Rejected(f"field '{key}': {_shown(value)} is not one of {', '.join(choices)}")
    return value


def decode(text: str) -> dict:
    """One JSON object from one line, or Rejected saying where the JSON breaks."""
    text = text.strip()
    try:
        obj, end = _decoder.raw_decode(text)
    except json.JSONDecodeError as exc:
        raise Rejected(f"malformed JSON at column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise Rejected("malformed JSON: nested too deeply (a protocol line is two levels deep)") from None
    except ValueError:  # Python's int-to-str limit: a number of more than 4,300 digits
        raise Rejected(
            f"a number of thousands of digits: larger than any chip count (at most {MAX_CHIPS:,})"
        ) from None
    if end != len(text):
        raise Rejected(f"malformed JSON: unexpected text after the object at column {end + 1}")
    if not isinstance(obj, dict):
        raise Rejected(f"expected a JSON object, got {type(obj).__name__}")
    if ("\\u" in text or not text.isascii()) and (where := _lone_surrogate(obj)):
        raise Rejected(f"{where}, a lone surrogate, not a character: send UTF-8 text")
    return obj


def validate(ev: dict, seats: int) -> dict:
    """Check one decoded input line; returns it with defaults filled. Raises Rejected."""
    kind = ev.get("type")
    if type(kind) is str:
        quick = QUICK_CHECKS.get(kind)
        if quick is not None and quick(ev, seats):
            return ev
    elif not isinstance(kind, str):
        raise Rejected("missing field 'type'")
    check = _VALIDATORS.get(kind)
    if check is None:
        raise Rejected(f"unknown type {_shown(kind)}")
    check(ev, seats)
    return ev


def _v_table(ev: dict, seats: int) -> None:
    n = _int(ev, "seats", minimum=2, required=False, default=seats)
    if n > 23:
        raise Rejected(f"field 'seats': {n} seats is more than a Hold'em table can deal to (23)")
    if "profile" in ev and not isinstance(ev["profile"], str):
        raise Rejected("field 'profile' must be a string")
    if "actions" in ev:
        _choice(ev, "actions", ACTIONS_MODES)


MAX_LEVEL_MINUTES = 1440


def _v_level(ev: dict, seats: int) -> None:
    sb = _int(ev, "sb", minimum=0)
    bb = _int(ev, "bb", minimum=1)
    ev["ante"] = _int(ev, "ante", minimum=0, required=False, default=0)
    if not isinstance(ev.get("big_blind_ante", False), bool):
        raise Rejected("field 'big_blind_ante' must be true or false")
    if sb > bb:
        raise Rejected(f"small blind {sb} is larger than the big blind {bb}")
    _int(ev, "minutes", minimum=1, required=False, default=None)  # the level's length (clock_call.py)
    _int(ev, "number", minimum=1, required=False, default=None)  # the event's level number
    if ev.get("minutes") is not None and ev["minutes"] > MAX_LEVEL_MINUTES:
        raise Rejected(f"field 'minutes': a level of {ev['minutes']} minutes is longer than a day")


def _v_seat(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    player = ev.get("player")
    if not isinstance(player, str | int) or isinstance(player, bool) or str(player) == "":
        raise Rejected("field 'player' must be a non-empty player id")
    if isinstance(player, int) and not 0 <= player <= MAX_CHIPS:
        raise Rejected(f"field 'player': {_shown(player)} is not a player id")
    if isinstance(player, str) and len(player) > LONGEST_PLAYER:
        raise Rejected(
            f"field 'player': a player id is at most {LONGEST_PLAYER} characters, got {len(player)}"
        )
    if ev.get("stack") is not None:
        _int(ev, "stack", minimum=1)
    moved = ev.get("moved", False)
    if not isinstance(moved, bool):
        raise Rejected(f"field 'moved' must be true or false, got {_shown(moved)}")
    ev["moved"] = moved


def _v_leave(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    ev["reason"] = _choice(ev, "reason", LEAVE_REASONS, default="left")


def _v_seat_only(ev: dict, seats: int) -> None:
    _seat(ev, seats)


def _v_none(ev: dict, seats: int) -> None:
    return None


def _v_deal(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    if ev.get("card") is not None:
        _card(ev)


def _v_expose(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    _card(ev)
    ev["by"] = _choice(ev, "by", EXPOSED_BY, default="dealer")


def _v_boxed(ev: dict, seats: int) -> None:
    _card(ev)


def _v_board(ev: dict, seats: int) -> None:
    _cards(ev)


def _v_action(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    action = _choice(ev, "action", ACTIONS)
    if action in ("bet", "raise", "allin"):
        # `to` may be missing for allin (the whole stack) or for a raise told only by its chips.
        if ev.get("to") is not None:
            _int(ev, "to", minimum=1)
    elif ev.get("to") is not None:
        _int(ev, "to", minimum=0)
    chips = ev.get("chips")
    if chips is not None:
        if not isinstance(chips, list) or not chips:
            raise Rejected("field 'chips' must be a non-empty list of chip values")
        for i, chip in enumerate(chips):
            if isinstance(chip, bool) or not isinstance(chip, int) or not 0 < chip <= MAX_CHIPS:
                raise Rejected(
                    f"field 'chips'[{i}] must be a chip value 1..{MAX_CHIPS:,}, got {_shown(chip)}"
                )


def _v_show(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    _cards(ev)
    if len(ev["cards"]) > 2:
        raise Rejected(f"field 'cards': a Hold'em hand has two hole cards, got {len(ev['cards'])}")


def _v_clock(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    _int(ev, "seconds", minimum=1, required=False, default=60)


def _v_penalty(ev: dict, seats: int) -> None:
    _seat(ev, seats)
    reason = ev.get("reason", "")
    if not isinstance(reason, str):
        raise Rejected("field 'reason' must be text")
    hands = _int(ev, "hands", minimum=1, required=False)
    minutes = _int(ev, "minutes", minimum=1, required=False)
    rounds = _int(ev, "rounds", minimum=1, required=False)  # dragons_den:40, bluff_street:58.b
    if hands is None and minutes is None and rounds is None:
        raise Rejected("a penalty needs 'hands', 'rounds' or 'minutes'")


_VALIDATORS = {
    "table": _v_table,
    "level": _v_level,
    "seat": _v_seat,
    "leave": _v_leave,
    "button": _v_seat_only,
    "away": _v_seat_only,
    "back": _v_seat_only,
    "hand_start": _v_none,
    "deal": _v_deal,
    "expose": _v_expose,
    "boxed": _v_boxed,
    "burn": _v_none,
    "board": _v_board,
    "action": _v_action,
    "button_seen": _v_seat_only,
    "show": _v_show,
    "muck": _v_seat_only,
    "hand_end": _v_none,
    # Additions to the protocol (allowed by the spec): a clock called on a seat, and its expiry.
    "clock": _v_clock,
    "time_expired": _v_seat_only,
    # A director's penalty: the player sits away from the table but is dealt in (dragons_den:40).
    "penalty": _v_penalty,
    # What the camera sees at a table where nobody enters the actions (spec: `actions: observed`).
    "fold_seen": _v_seat_only,
    "chips_seen": _v_seat_only,
}

INPUT_TYPES = tuple(_VALIDATORS)


# ---- the usual line, accepted in one pass -------------------------------------------------------------
#
# Each `_accept_*` below answers True only for a line its `_v_*` above accepts without a word (and then
# fills the same defaults); for anything else, odd or wrong, it answers False and the `_v_*` check runs,
# naming the problem exactly as before. Plain `int` and `str` only: subclasses take the general path.

_CARD_SET = ALL_CARDS
_BETS = BETS = frozenset(("bet", "raise", "allin"))
_ACTION_SET = ACTION_SET = frozenset(ACTIONS)


def _accept_seat_field(ev: dict, seats: int) -> bool:
    seat = ev.get("seat")
    return type(seat) is int and 0 < seat <= seats


def _accept_none(ev: dict, seats: int) -> bool:
    return True


def _accept_deal(ev: dict, seats: int) -> bool:
    seat = ev.get("seat")
    if type(seat) is not int or not 0 < seat <= seats:
        return False
    card = ev.get("card")
    return card is None or (type(card) is str and card in _CARD_SET)


def _accept_action(ev: dict, seats: int) -> bool:
    seat = ev.get("seat")
    if type(seat) is not int or not 0 < seat <= seats:
        return False
    action = ev.get("action")
    if type(action) is not str or action not in _ACTION_SET:
        return False
    to = ev.get("to")
    if to is not None and (type(to) is not int or to < (1 if action in _BETS else 0) or to > MAX_CHIPS):
        return False
    return ev.get("chips") is None  # chip lists: the general check


def _accept_cards(cards: object, most: int) -> bool:
    if type(cards) is not list or not 0 < len(cards) <= most:
        return False
    for card in cards:
        if type(card) is not str or card not in _CARD_SET:
            return False
    return len(cards) == 1 or len(set(cards)) == len(cards)


def _accept_board(ev: dict, seats: int) -> bool:
    return _accept_cards(ev.get("cards"), 52)


def _accept_show(ev: dict, seats: int) -> bool:
    seat = ev.get("seat")
    return type(seat) is int and 0 < seat <= seats and _accept_cards(ev.get("cards"), 2)


def _accept_seat(ev: dict, seats: int) -> bool:
    seat = ev.get("seat")
    if type(seat) is not int or not 0 < seat <= seats:
        return False
    player = ev.get("player")
    if type(player) is not str or not player or len(player) > LONGEST_PLAYER:
        return False
    stack = ev.get("stack")
    if stack is not None and (type(stack) is not int or not 0 < stack <= MAX_CHIPS):
        return False
    moved = ev.get("moved", False)
    if moved is not True and moved is not False:
        return False
    ev["moved"] = moved
    return True


def _accept_table(ev: dict, seats: int) -> bool:
    n = ev.get("seats")
    if n is None:
        n = seats
    if type(n) is not int or not 2 <= n <= 23:
        return False
    if "actions" in ev and not (type(ev["actions"]) is str and ev["actions"] in ACTIONS_MODES):
        return False
    return "profile" not in ev or type(ev["profile"]) is str


def _accept_level(ev: dict, seats: int) -> bool:
    if "minutes" in ev or "number" in ev:
        return False  # the checked path (_v_level) checks the level's length and number
    sb, bb = ev.get("sb"), ev.get("bb")
    if type(sb) is not int or type(bb) is not int or not 0 <= sb <= bb or not 1 <= bb <= MAX_CHIPS:
        return False
    ante = ev.get("ante")
    if ante is None:
        ante = 0
    elif type(ante) is not int or not 0 <= ante <= MAX_CHIPS:
        return False
    big_blind_ante = ev.get("big_blind_ante", False)
    if big_blind_ante is not True and big_blind_ante is not False:
        return False
    ev["ante"] = ante
    return True


QUICK_CHECKS_FILL = frozenset(("seat", "level"))  # their checks write defaults into the line

QUICK_CHECKS = {
    "table": _accept_table,
    "level": _accept_level,
    "deal": _accept_deal,
    "action": _accept_action,
    "board": _accept_board,
    "burn": _accept_none,
    "show": _accept_show,
    "muck": _accept_seat_field,
    "seat": _accept_seat,
    "button": _accept_seat_field,
    "button_seen": _accept_seat_field,
    "away": _accept_seat_field,
    "back": _accept_seat_field,
    "hand_start": _accept_none,
    "hand_end": _accept_none,
    "fold_seen": _accept_seat_field,
    "chips_seen": _accept_seat_field,
}
