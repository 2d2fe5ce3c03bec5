"""The table event protocol (../shared/spec/table-events.md) as typed, immutable events.

Every input line becomes one `InputEvent`: a frozen msgspec `Struct` tagged on `"type"` with the spec's
name (`Deal` is `{"type":"deal",...}`). `parse` is the one place a line is decoded and checked: it turns
JSON text or a decoded dict into its event, defaults filled, or raises `Rejected` naming the field and the
problem ("field 'seat': seat 11 does not exist at a 10-seat table"). What it checks is form (types,
ranges, known values); whether the event can happen *now* is the engine's business, ruled on by the
engine method named after it (`TableEngine.rule_deal` for a `Deal`, see controller/rules/engine.py).

Every output line is an `OutputLine` of the same kind (`Misdeal` is `{"type":"misdeal",...}`), built
where it is ruled; the engine hands each out as a dict (`to_line`, keys in the fields' order) written by
`dumps` as compact JSON, byte for byte what the protocol's consumers read.

Over 600 lines for a reason: the whole wire format, every line type in and out with its one check, is
read in this one module.

>>> parse('{"type":"deal","seat":3}', seats=9)
Deal(seat=3, card=None, face=None)
>>> parse({"type": "level", "sb": 50, "bb": 100}, seats=9)
Level(sb=50, bb=100, ante=0, big_blind_ante=False, minutes=None, number=None)
>>> parse('{"type":"deal","seat":12}', seats=9)
Traceback (most recent call last):
...
controller.rules.errors.Rejected: field 'seat': seat 12 does not exist at a 9-seat table
"""

from __future__ import annotations

import json
import re
import reprlib
from typing import Any, ClassVar, Union

import msgspec
from msgspec import UNSET, UnsetType

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
MOST_SEATS = 23  # a Hold'em deck deals two cards to at most 23 players


class _Event(msgspec.Struct, frozen=True, gc=False, tag_field="type", forbid_unknown_fields=True):
    """An input line. `kind` is its spec name (the `"type"` on the wire). Unknown fields are refused only by
    the typed reading of `parse`, which then leaves the line to the field-by-field reading (which ignores
    them, as the spec allows): a field nobody reads is never skipped unchecked for its JSON.

    gc=False (here, on `_Output` and on the engine's per-action `Facing`/`Ruling`/`Pot`): their fields are
    numbers, strings and tuples or lists of those, so they can close no reference cycle, and the cyclic
    garbage collector need not track the tens of them a hand makes (a long-running table included)."""

    kind: ClassVar[str]


# ---- input lines, in the spec's order -------------------------------------------------------------------


class Table(_Event, frozen=True, tag="table"):
    """First line only: table size, venue rulebook, and who tells the betting (`entered` | `observed`)."""

    seats: int | None = None
    profile: str | None = None
    actions: str | None = None


class Level(_Event, frozen=True, tag="level"):
    """Blinds for the next hand started; `big_blind_ante`: the big blind pays the table's ante (addition)."""

    sb: int
    bb: int
    ante: int = 0
    big_blind_ante: bool = False
    minutes: int | None = None  # (addition) the level's length, where the floor says it (clock_call.py)
    number: int | None = None  # (addition) the event's level number (corner_pocket:General Rules.C)


class Seat(_Event, frozen=True, tag="seat"):
    """A player takes a seat; `moved`: from another table of the event (has been dealt hands)."""

    seat: int
    player: str
    stack: int | None = None
    moved: bool = False


class Leave(_Event, frozen=True, tag="leave"):
    """The seat becomes empty: `eliminated` | `moved` | `disqualified` | `left`."""

    seat: int
    reason: str = "left"


class Button(_Event, frozen=True, tag="button"):
    """Place the button for the next hand."""

    seat: int


class Away(_Event, frozen=True, tag="away"):
    """The player leaves the seat (his hand may be dead: cool_mule:5.n, corner_pocket:General Rules.I)."""

    seat: int


class Back(_Event, frozen=True, tag="back"):
    """The player returns to the seat."""

    seat: int


class HandStart(_Event, frozen=True, tag="hand_start"):
    """A new hand begins (first riffle, or NEW HAND pressed)."""


class Deal(_Event, frozen=True, tag="deal"):
    """One hole card reached `seat`; with `card`, it was exposed as it was dealt. `face: "up"` without
    `card`: the camera saw it arrive face up but could not read it surely (an exposure needs no more)."""

    seat: int
    card: str | None = None
    face: str | None = None

    @property
    def exposed(self) -> bool:
        return self.card is not None or self.face == "up"


class Expose(_Event, frozen=True, tag="expose"):
    """A hole card already dealt became exposed, `by` the dealer or the player; `card` when it was read."""

    seat: int
    card: str | None = None
    by: str = "dealer"


class Boxed(_Event, frozen=True, tag="boxed"):
    """A card was found face up in the deck."""

    card: str


class Burn(_Event, frozen=True, tag="burn"):
    """A burn card was taken."""


class Board(_Event, frozen=True, tag="board"):
    """Cards turned face up on the board, as one group; `count` when more cards were seen than read
    (the camera's `cards` are then the ones it read surely, possibly none)."""

    cards: tuple[str, ...]
    count: int | None = None

    @property
    def size(self) -> int:
        """How many cards the group holds, read or not."""
        return len(self.cards) if self.count is None else self.count


class Action(_Event, frozen=True, tag="action"):
    """A player acted: `action` one of ACTIONS, `to` the round total after it, `chips` the chip values
    pushed out, `declared` the verbal word and/or amount (controller/rules/betting.py rules on it)."""

    seat: int
    action: str
    to: int | None = None
    chips: tuple[int, ...] | None = None
    declared: str | int | None = None


class ButtonSeen(_Event, frozen=True, tag="button_seen"):
    """The camera saw the physical button in front of `seat`."""

    seat: int


class Show(_Event, frozen=True, tag="show"):
    """A player tabled these hole cards."""

    seat: int
    cards: tuple[str, ...]


class Muck(_Event, frozen=True, tag="muck"):
    """A player threw the hand away."""

    seat: int


class HandEnd(_Event, frozen=True, tag="hand_end"):
    """The pot was pushed; the hand is over."""


# Additions to the protocol (allowed by the spec): a clock called on a seat and its expiry, a director's
# penalty (the player sits away but is dealt in: dragons_den:40), and what the camera sees at a table where
# nobody enters the actions (spec: `actions: observed`).


class Clock(_Event, frozen=True, tag="clock"):
    """A clock is called on `seat`; `seconds` when the director gives a length other than the venue's."""

    seat: int
    seconds: int | None = None


class TimeExpired(_Event, frozen=True, tag="time_expired"):
    """The clock on `seat` ran out: the hand is dead."""

    seat: int


class Penalty(_Event, frozen=True, tag="penalty"):
    """A time penalty in `hands`, `rounds` (dragons_den:40, bluff_street:58.b) or `minutes`."""

    seat: int
    reason: str = ""
    hands: int | None = None
    minutes: int | None = None
    rounds: int | None = None


class FoldSeen(_Event, frozen=True, tag="fold_seen"):
    """The seat's hole cards went face down into the muck (camera)."""

    seat: int


class ChipsSeen(_Event, frozen=True, tag="chips_seen"):
    """Chips went forward from the seat into the betting area (camera)."""

    seat: int


InputEvent = Union[  # noqa: UP007 (msgspec reads the union as a tagged union of these)
    Table, Level, Seat, Leave, Button, Away, Back, HandStart, Deal, Expose, Boxed, Burn, Board, Action,
    ButtonSeen, Show, Muck, HandEnd, Clock, TimeExpired, Penalty, FoldSeen, ChipsSeen,
]  # fmt: skip

EVENT_TYPES: tuple[type[_Event], ...] = InputEvent.__args__  # type: ignore[attr-defined]
for _cls in EVENT_TYPES:
    _cls.kind = _cls.__struct_config__.tag
BY_KIND: dict[str, type[_Event]] = {cls.kind: cls for cls in EVENT_TYPES}
INPUT_TYPES = tuple(BY_KIND)

# ---- output lines, in the spec's order ------------------------------------------------------------------
#
# Every output line may carry `rule`, the profile's citation (`"bar_league:Misdeals(a)"`); a field left
# UNSET is not written. `to_line` makes the dict the engine hands out (`TableEngine.feed`), keys in field
# order; controller/rules/borrowed.py then adds `borrowed_from` to a ruling on another venue's rule.


class _Output(msgspec.Struct, frozen=True, gc=False, kw_only=True, tag_field="type"):
    """An output line (a ruling or an error). `kind` is its spec name."""

    kind: ClassVar[str]


class SittingOut(msgspec.Struct, frozen=True, gc=False):
    """An occupied seat dealt no cards this hand: `between_sb_and_button` | `new_player_dead_position`."""

    seat: int
    reason: str


class HandLine(_Output, frozen=True, kw_only=True, tag="hand"):
    """Answer to every `hand_start`: where the button and blinds are, who is dealt in and in what order."""

    number: int
    button: int
    sb: int | None
    bb: int
    dead_button: bool
    dead_sb_seat: int | None
    dealer: int
    first_card: int
    dealt_in: list[int]
    sitting_out: list[SittingOut]
    redeal: bool
    rule: str | UnsetType = UNSET


class Misdeal(_Output, frozen=True, kw_only=True, tag="misdeal"):
    """The hand is void and must be re-dealt (`reason`: the spec's list)."""

    reason: str
    rule: str


class ReplaceExposed(_Output, frozen=True, kw_only=True, tag="replace_exposed"):
    """A card exposed in the deal is replaced after the deal and becomes the flop burn (`card` null when
    the camera saw it face up without reading it)."""

    seat: int
    card: str | None
    rule: str


class ExtraCard(_Output, frozen=True, kw_only=True, tag="extra_card"):
    """The first player got a surplus card after all hands were complete: it becomes the burn."""

    seat: int
    rule: str


class BoxedCard(_Output, frozen=True, kw_only=True, tag="boxed_card"):
    """A single boxed card: `replace` | `discard`."""

    card: str
    procedure: str
    rule: str


class ButtonMisplaced(_Output, frozen=True, kw_only=True, tag="button_misplaced"):
    """Before the deal: the physical button must be moved to `expected`."""

    expected: int
    seen: int
    rule: str


class SubstantialAction(_Output, frozen=True, kw_only=True, tag="substantial_action"):
    """Substantial action was just reached: from now on no misdeal can be declared."""

    rule: str


class DeadHand(_Output, frozen=True, kw_only=True, tag="dead_hand"):
    """The seat's hand is dead: `wrong_card_count` | `absent` | `exposed_cards` | `clock` | `out_of_turn`."""

    seat: int
    reason: str
    rule: str


class BoardRedeal(_Output, frozen=True, kw_only=True, tag="board_redeal"):
    """Board cards came too early or too many: the street and the venue's procedure."""

    street: str
    procedure: str
    rule: str


class ActionRuled(_Output, frozen=True, kw_only=True, tag="action_ruled"):
    """An action recorded as other than it was entered (`as` on the wire; `entered`: what was)."""

    seat: int
    as_: str = msgspec.field(name="as")
    to: int
    all_in: bool
    entered: str
    reason: str
    rule: str


class OutOfTurn(_Output, frozen=True, kw_only=True, tag="out_of_turn"):
    """`seat` acted while `expected` was to act; `binding`: the action stands when its turn comes;
    `chips_lost`: chips put out of turn and lost to the pot (corner_pocket:General Rules.D)."""

    seat: int
    expected: int | None
    rule: str
    binding: bool | UnsetType = UNSET
    chips_lost: int | UnsetType = UNSET


class PotLine(msgspec.Struct, frozen=True, gc=False):
    """One pot of a `pots` line: its chips and the seats that can win it, clockwise."""

    amount: int
    eligible: list[int]


class Pots(_Output, frozen=True, kw_only=True, tag="pots"):
    """After each betting round: main pot first, then side pots."""

    street: str
    pots: list[PotLine]
    rule: str


class ShowOrder(_Output, frozen=True, kw_only=True, tag="show_order"):
    """Who must table first at a showdown."""

    first: int
    rule: str


class AwardLine(_Output, frozen=True, kw_only=True, tag="award"):
    """A pot awarded: `shares` {seat: chips} with seat numbers as JSON keys, the odd chips and the hand."""

    pot: int
    amount: int
    winners: list[int]
    shares: dict[str, int]
    odd_chips_to: int | None
    odd_chips: dict[str, int]
    hand: str | None
    rule: str


class Eliminated(_Output, frozen=True, kw_only=True, tag="eliminated"):
    """A player busted: finishing place (ties broken by the larger stack at the start of the hand)."""

    seat: int
    place: int
    player: str
    rule: str | UnsetType = UNSET


class Error(_Output, frozen=True, kw_only=True, tag="error"):
    """An input line rejected: its number and what is wrong. The state is unchanged."""

    line: int
    message: str


class UncalledReturned(_Output, frozen=True, kw_only=True, tag="uncalled_returned"):
    """(addition) The part of a bet nobody called goes back to the seat."""

    seat: int
    amount: int
    rule: str


class ActionLimited(_Output, frozen=True, kw_only=True, tag="action_limited"):
    """(addition) The seat may only take `options` (a check facing a bet: call or fold)."""

    seat: int
    options: list[str]
    reason: str
    rule: str


class BurnMissing(_Output, frozen=True, kw_only=True, tag="burn_missing"):
    """(addition) No burn card before the street: the card stands."""

    street: str
    rule: str


class PotUnresolved(_Output, frozen=True, kw_only=True, tag="pot_unresolved"):
    """(addition) A pot nobody could be given (no eligible hand tabled)."""

    pot: int
    amount: int
    eligible: list[int]
    reason: str
    rule: str


class PenaltyLine(_Output, frozen=True, kw_only=True, tag="penalty"):
    """(addition) A time penalty given: its length in hands, rounds or minutes."""

    seat: int
    player: str
    reason: str
    hands: int | UnsetType = UNSET
    rounds: int | UnsetType = UNSET
    minutes: int | UnsetType = UNSET
    rule: str


class ClockLine(_Output, frozen=True, kw_only=True, tag="clock"):
    """(addition) A clock on the seat: seconds to act, the last `countdown` counted aloud."""

    seat: int
    seconds: int
    countdown: int
    rule: str
    reasonable_seconds: int | UnsetType = UNSET  # a tenth of the level at Bar League (clock_call.py)


class BlindDodge(_Output, frozen=True, kw_only=True, tag="blind_dodge"):
    """(addition) A player moved from seat `from` skips a blind he was due (bluff_street:31)."""

    seat: int
    from_: int | None = msgspec.field(name="from")
    player: str
    broken_table: bool | UnsetType = UNSET  # moved from a broken table (dodge.py, cool_mule:6.f)
    skipped_bb_in_hand: int | UnsetType = UNSET
    rule: str


class FouledDeck(_Output, frozen=True, kw_only=True, tag="fouled_deck"):
    """(addition) A card turned up twice: all action void, every chip back (bluff_street:33.d)."""

    card: str
    rule: str


OutputLine = Union[  # noqa: UP007
    HandLine, Misdeal, ReplaceExposed, ExtraCard, BoxedCard, ButtonMisplaced, SubstantialAction, DeadHand,
    BoardRedeal, ActionRuled, OutOfTurn, Pots, ShowOrder, AwardLine, Eliminated, Error, UncalledReturned,
    ActionLimited, BurnMissing, PotUnresolved, PenaltyLine, ClockLine, BlindDodge, FouledDeck,
]  # fmt: skip
OUTPUT_CLASSES: tuple[type[_Output], ...] = OutputLine.__args__  # type: ignore[attr-defined]
for _cls in OUTPUT_CLASSES:
    _cls.kind = _cls.__struct_config__.tag
OUTPUT_TYPES = tuple(cls.kind for cls in OUTPUT_CLASSES)

to_line = msgspec.to_builtins  # an output line as the dict the engine hands out, keys in field order


_encode = msgspec.json.Encoder().encode


def encode(event: _Event) -> bytes:
    """An input event as one compact JSON line (its `"type"` first): for logs and tests."""
    return _encode(event)


_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def dumps(line: dict) -> str:
    """An output line as the protocol writes it: compact JSON, keys in the order they were set.

    msgspec writes it (a reused Encoder, about a fifth of the time of Python's json, cProfile of
    bench/bench_engine.py); for an output line, whose numbers are all whole (chips, seats, line numbers),
    its bytes are Python's compact `ensure_ascii=False` JSON, escapes included (tests/rules/test_events.py
    holds the two equal on every character). A string msgspec cannot write (a lone surrogate, from a
    decoded dict fed in as it is) goes to Python's json, which writes it as it always has."""
    try:
        return _encode(line).decode()
    except (UnicodeEncodeError, TypeError, OverflowError):
        return _dumps(line)


# ---- decoding: the one place a line is read and checked -------------------------------------------------


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


_read_json = msgspec.json.Decoder().decode


def decode(text: str) -> dict:
    """One JSON object from one line, or Rejected saying where the JSON breaks.

    msgspec reads the line; a line it refuses (or that is no object) is read again by Python's json
    reader, which words the problem as the protocol always has ("malformed JSON at column 7: ...") and
    reads what msgspec leaves to it (a number too large for a float, a lone surrogate, a deep nest) as
    before."""
    try:
        obj = _read_json(text)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        pass
    else:
        if type(obj) is dict:
            return obj
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


_read_typed = msgspec.json.Decoder(InputEvent).decode


def parse(line: str | dict | InputEvent, seats: int) -> InputEvent | None:
    """One input line (JSON text, a decoded dict, or an event built by a source that reads another notation,
    as the PHH replay's controller/rules/phh_lines.py) as its event, checked for a `seats`-seat table; None
    for a blank or `#` comment line. Raises Rejected naming the field and the problem.

    JSON text is first read by msgspec straight into its event, the types checked in C, then `_FITS` checks
    what a type cannot say (a range, a card code, the table's size). A line either refuses (or that names
    a field no event has) is read again field by field by the makers below: they alone word the problem,
    and what they accept is the event. The fast reading gives nothing they would not (bench/bench_engine.py
    has the figure; tests/rules/test_events.py holds the two readings equal). A built event, typed by its
    builder, is held to `_FITS` as a decoded one is; one that does not fit is read by the makers as the
    line it stands for (its fields left unsaid, None, left out)."""
    if type(line) is str:
        try:
            event = _read_typed(line)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            pass
        else:
            fits = _FITS.get(type(event))
            if fits is not None and fits(event, seats):
                return event
        # Field by field: the reading that names what is wrong.
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            return None
        line = decode(stripped)
    elif (fits := _FITS.get(type(line))) is not None:  # a built event
        if fits(line, seats):
            return line
        line = _unsaid_left_out(line)
    elif isinstance(line, _Event):
        line = _unsaid_left_out(line)
    elif not isinstance(line, dict):
        line = dict(line)
    kind = line.get("type")
    if not isinstance(kind, str):
        raise Rejected("missing field 'type'")
    make = _MAKERS.get(kind)
    if make is None:
        raise Rejected(f"unknown type {_shown(kind)}")
    return make(line, seats)


def _unsaid_left_out(event: _Event) -> dict:
    """A built event as the line it stands for: its fields left unsaid (None) left out."""
    return {k: v for k, v in msgspec.to_builtins(event).items() if v is not None}


def _int(ev: dict, key: str, *, minimum: int = 0, required: bool = True, default: Any = None) -> Any:
    value = ev.get(key, default)
    if type(value) is int and minimum <= value <= MAX_CHIPS:
        return value  # the usual field: the checks below would all pass
    if value is None:
        if required:
            raise Rejected(f"missing field '{key}'")
        return default
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise Rejected(f"field '{key}' must be an integer, got {_shown(value)}")
        value = int(value)  # an int subclass: the plain number
    if value < minimum:
        raise Rejected(f"field '{key}' must be at least {minimum}, got {_shown(value)}")
    if value > MAX_CHIPS:
        raise Rejected(
            f"field '{key}': {_shown(value)} is larger than any chip count (at most {MAX_CHIPS:,})"
        )
    return value


def _seat(ev: dict, seats: int, key: str = "seat") -> int:
    seat = ev.get(key)
    if type(seat) is int and 0 < seat <= seats:
        return seat  # the usual line: the checks below would all pass
    seat = _int(ev, key, minimum=1)
    if seat > seats:
        raise Rejected(f"field '{key}': seat {seat} does not exist at a {seats}-seat table")
    return seat


def _card(ev: dict, key: str = "card") -> str:
    if key not in ev:
        raise Rejected(f"missing field '{key}'")
    card = ev[key]
    if type(card) is str and card in ALL_CARDS:
        return card
    if type(card) is not str or len(card) > 3:
        raise Rejected(f"field '{key}': expected a card code like 'Ah', got {_shown(card)}")
    raise Rejected(f"field '{key}': {card_problem(card)}")


def _cards(ev: dict, key: str = "cards", most: int = 52) -> tuple[str, ...]:
    cards = ev.get(key)
    if not isinstance(cards, list) or not cards:
        raise Rejected(f"field '{key}' must be a non-empty list of card codes")
    if len(cards) > 52:
        raise Rejected(f"field '{key}' lists {len(cards)} cards; a deck has 52")
    for i, card in enumerate(cards):
        if type(card) is str and card in ALL_CARDS:
            continue
        if type(card) is not str or len(card) > 3:
            raise Rejected(f"field '{key}'[{i}]: expected a card code like 'Ah', got {_shown(card)}")
        raise Rejected(f"field '{key}'[{i}]: {card_problem(card)}")
    if len(cards) > 1 and len(set(cards)) != len(cards):
        raise Rejected(f"field '{key}' lists the same card twice: {cards}")
    return tuple(cards)


def _choice(ev: dict, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
    value = ev.get(key, default)
    if value is None:
        raise Rejected(f"missing field '{key}' (one of {', '.join(choices)})")
    if value not in choices:
        raise Rejected(f"field '{key}': {_shown(value)} is not one of {', '.join(choices)}")
    return str(value)


def _bool(ev: dict, key: str, message: str) -> bool:
    value = ev.get(key, False)
    if value is not True and value is not False:
        raise Rejected(message.format(_shown(value)))
    return value


def _table(ev: dict, seats: int) -> Table:
    n = _int(ev, "seats", minimum=2, required=False, default=seats)
    if n > MOST_SEATS:
        raise Rejected(f"field 'seats': {n} seats is more than a Hold'em table can deal to ({MOST_SEATS})")
    profile = ev.get("profile")
    if "profile" in ev and not isinstance(profile, str):
        raise Rejected("field 'profile' must be a string")
    actions = _choice(ev, "actions", ACTIONS_MODES) if "actions" in ev else None
    return Table(n if "seats" in ev else None, profile, actions)


def _level(ev: dict, seats: int) -> Level:
    sb = _int(ev, "sb", minimum=0)
    bb = _int(ev, "bb", minimum=1)
    ante = _int(ev, "ante", minimum=0, required=False, default=0)
    big_blind_ante = _bool(ev, "big_blind_ante", "field 'big_blind_ante' must be true or false")
    if sb > bb:
        raise Rejected(f"small blind {sb} is larger than the big blind {bb}")
    minutes = _int(ev, "minutes", minimum=1, required=False)  # the level's length (clock_call.py)
    number = _int(ev, "number", minimum=1, required=False)  # the event's level number
    if minutes is not None and minutes > MAX_LEVEL_MINUTES:
        raise Rejected(f"field 'minutes': a level of {minutes} minutes is longer than a day")
    return Level(sb, bb, ante, big_blind_ante, minutes, number)


MAX_LEVEL_MINUTES = 1440


def _player(ev: dict) -> str:
    player = ev.get("player")
    if type(player) is str and 0 < len(player) <= LONGEST_PLAYER:
        return player
    if not isinstance(player, str | int) or isinstance(player, bool) or str(player) == "":
        raise Rejected("field 'player' must be a non-empty player id")
    if isinstance(player, int) and not 0 <= player <= MAX_CHIPS:
        raise Rejected(f"field 'player': {_shown(player)} is not a player id")
    if isinstance(player, str) and len(player) > LONGEST_PLAYER:
        raise Rejected(
            f"field 'player': a player id is at most {LONGEST_PLAYER} characters, got {len(player)}"
        )
    return str(player)


def _seat_line(ev: dict, seats: int) -> Seat:
    seat = _seat(ev, seats)
    player = _player(ev)
    stack = None if ev.get("stack") is None else _int(ev, "stack", minimum=1)
    moved = _bool(ev, "moved", "field 'moved' must be true or false, got {}")
    return Seat(seat, player, stack, moved)


def _leave(ev: dict, seats: int) -> Leave:
    return Leave(_seat(ev, seats), _choice(ev, "reason", LEAVE_REASONS, default="left"))


def _seat_only(cls: type) -> Any:
    return lambda ev, seats: cls(_seat(ev, seats))


def _bare(cls: type) -> Any:
    event = cls()  # no fields: one event stands for every such line
    return lambda ev, seats: event


FACES = ("up", "down")


def _deal(ev: dict, seats: int) -> Deal:
    seat = _seat(ev, seats)
    card = None if ev.get("card") is None else _card(ev)
    face = None if ev.get("face") is None else _choice(ev, "face", FACES)
    if face == "down" and card is not None:
        raise Rejected(f"field 'face': a card dealt face down shows no code, got card {card!r}")
    return Deal(seat, card, face)


def _expose(ev: dict, seats: int) -> Expose:
    seat = _seat(ev, seats)
    card = None if ev.get("card") is None else _card(ev)
    return Expose(seat, card, _choice(ev, "by", EXPOSED_BY, default="dealer"))


def _boxed(ev: dict, seats: int) -> Boxed:
    return Boxed(_card(ev))


def _board(ev: dict, seats: int) -> Board:
    if ev.get("count") is None:
        return Board(_cards(ev))
    count = _int(ev, "count", minimum=1)
    if count > 5:
        raise Rejected(f"field 'count': a board holds 5 cards, got {count}")
    cards = ev.get("cards", [])
    read = () if isinstance(cards, list) and not cards else _cards(ev)
    if count < len(read):
        raise Rejected(f"field 'count': {count} cards seen but {len(read)} read")
    return Board(read, count if count > len(read) else None)


_DECLARED_WORD = re.compile("|".join(ACTIONS))
_AMOUNT = re.compile(r"\d+")


def declared_parts(declared: str | int | None) -> tuple[str | None, int | None]:
    """(word, amount) of a checked verbal declaration (`Action.declared`); either may be None.
    `"raise 500"` raises by 500 over the bet faced; an amount alone is the same as pushing that many chips
    silently (bluff_street:35.c)."""
    if declared is None:
        return None, None
    if type(declared) is int:
        return None, declared
    text = declared.lower().replace("all-in", "allin").replace("all in", "allin")
    word = next((w for w in ACTIONS if w in text), None)
    match = _AMOUNT.search(text.replace(",", ""))
    return word, int(match.group()) if match else None


def _declared(ev: dict) -> str | int | None:
    declared = ev.get("declared")
    if declared is None:
        return None
    if isinstance(declared, bool):
        raise Rejected(f"field 'declared': expected a word or an amount, got {declared!r}")
    if isinstance(declared, int):
        if declared <= 0:
            raise Rejected(f"field 'declared': amount must be positive, got {declared}")
        return int(declared)
    if not isinstance(declared, str):
        raise Rejected(f"field 'declared': expected a word or an amount, got {declared!r}")
    if declared_parts(declared) == (None, None):
        raise Rejected(
            f"field 'declared': {declared!r} is neither an action word ({', '.join(ACTIONS)}) nor an amount"
        )
    return declared


_BETS = frozenset(("bet", "raise", "allin"))


_ACTION_SET = frozenset(ACTIONS)


def _action(ev: dict, seats: int) -> Action:
    seat = _seat(ev, seats)
    action = ev.get("action")
    if type(action) is not str or action not in _ACTION_SET:
        action = _choice(ev, "action", ACTIONS)  # names the problem
    to = ev.get("to")
    if to is not None and not (type(to) is int and (1 if action in _BETS else 0) <= to <= MAX_CHIPS):
        # `to` may be missing for allin (the whole stack) or for a raise told only by its chips.
        to = _int(ev, "to", minimum=1 if action in _BETS else 0)
    chips = ev.get("chips")
    if chips is not None:
        if not isinstance(chips, list) or not chips:
            raise Rejected("field 'chips' must be a non-empty list of chip values")
        for i, chip in enumerate(chips):
            if isinstance(chip, bool) or not isinstance(chip, int) or not 0 < chip <= MAX_CHIPS:
                raise Rejected(
                    f"field 'chips'[{i}] must be a chip value 1..{MAX_CHIPS:,}, got {_shown(chip)}"
                )
        chips = tuple(int(c) for c in chips)
    return Action(seat, action, to, chips, None if ev.get("declared") is None else _declared(ev))


def _show(ev: dict, seats: int) -> Show:
    seat = _seat(ev, seats)
    cards = _cards(ev)
    if len(cards) > 2:
        raise Rejected(f"field 'cards': a Hold'em hand has two hole cards, got {len(cards)}")
    return Show(seat, cards)


def _clock(ev: dict, seats: int) -> Clock:
    seat = _seat(ev, seats)
    return Clock(seat, _int(ev, "seconds", minimum=1, required=False))


def _penalty(ev: dict, seats: int) -> Penalty:
    seat = _seat(ev, seats)
    reason = ev.get("reason", "")
    if not isinstance(reason, str):
        raise Rejected("field 'reason' must be text")
    hands = _int(ev, "hands", minimum=1, required=False)
    minutes = _int(ev, "minutes", minimum=1, required=False)
    rounds = _int(ev, "rounds", minimum=1, required=False)
    if hands is None and minutes is None and rounds is None:
        raise Rejected("a penalty needs 'hands', 'rounds' or 'minutes'")
    return Penalty(seat, str(reason), hands, minutes, rounds)


def parse_as(kind: str, line: dict, seats: int) -> InputEvent:
    """A decoded line read as an input line of type `kind` whatever its `"type"` says (a hand played
    alone is handed its `action`, `board`, ... lines without one). Raises Rejected as `parse` does."""
    return _MAKERS[kind](line, seats)


_MAKERS = {
    "table": _table,
    "level": _level,
    "seat": _seat_line,
    "leave": _leave,
    "button": _seat_only(Button),
    "away": _seat_only(Away),
    "back": _seat_only(Back),
    "hand_start": _bare(HandStart),
    "deal": _deal,
    "expose": _expose,
    "boxed": _boxed,
    "burn": _bare(Burn),
    "board": _board,
    "action": _action,
    "button_seen": _seat_only(ButtonSeen),
    "show": _show,
    "muck": _seat_only(Muck),
    "hand_end": _bare(HandEnd),
    "clock": _clock,
    "time_expired": _seat_only(TimeExpired),
    "penalty": _penalty,
    "fold_seen": _seat_only(FoldSeen),
    "chips_seen": _seat_only(ChipsSeen),
}
assert tuple(_MAKERS) == INPUT_TYPES


# ---- the typed reading's checks: what msgspec's types cannot say ------------------------------------------
#
# One predicate per event the tables send most (the others are read by their maker alone): True when the
# maker would take the decoded event as it is. Each says less than its maker (no message): a False only sends
# the line to the maker, which words the problem.


def _fits_seat(ev: Any, seats: int) -> bool:
    return 0 < ev.seat <= seats


def _fits_bare(ev: Any, seats: int) -> bool:
    return True


def _fits_cards(cards: tuple[str, ...]) -> bool:
    if not cards:
        return False
    for card in cards:
        if card not in ALL_CARDS:
            return False
    return len(cards) == 1 or len(set(cards)) == len(cards)


def _fits_deal(ev: Deal, seats: int) -> bool:
    card, face = ev.card, ev.face
    return (
        0 < ev.seat <= seats
        and (card is None or card in ALL_CARDS)
        and (face is None or (face == "up" or (face == "down" and card is None)))
    )


def _fits_action(ev: Action, seats: int) -> bool:
    if not (0 < ev.seat <= seats) or ev.action not in _ACTION_SET or ev.declared is not None:
        return False
    to, chips = ev.to, ev.chips
    if to is not None and not ((1 if ev.action in _BETS else 0) <= to <= MAX_CHIPS):
        return False
    if chips is not None:
        if not chips:
            return False
        for chip in chips:
            if not 0 < chip <= MAX_CHIPS:
                return False
    return True


def _fits_board(ev: Board, seats: int) -> bool:
    return ev.count is None and _fits_cards(ev.cards)


def _fits_show(ev: Show, seats: int) -> bool:
    return 0 < ev.seat <= seats and len(ev.cards) <= 2 and _fits_cards(ev.cards)


def _fits_seat_line(ev: Seat, seats: int) -> bool:
    stack = ev.stack
    return (
        0 < ev.seat <= seats
        and 0 < len(ev.player) <= LONGEST_PLAYER
        and (stack is None or 0 < stack <= MAX_CHIPS)
    )


def _fits_level(ev: Level, seats: int) -> bool:
    return (
        0 <= ev.sb <= ev.bb <= MAX_CHIPS
        and ev.bb >= 1
        and 0 <= ev.ante <= MAX_CHIPS
        and (ev.minutes is None or 1 <= ev.minutes <= MAX_LEVEL_MINUTES)
        and (ev.number is None or 1 <= ev.number <= MAX_CHIPS)
    )


_FITS: dict[type, Any] = {
    Level: _fits_level,
    Seat: _fits_seat_line,
    Button: _fits_seat,
    Away: _fits_seat,
    Back: _fits_seat,
    HandStart: _fits_bare,
    Deal: _fits_deal,
    Burn: _fits_bare,
    Board: _fits_board,
    Action: _fits_action,
    ButtonSeen: _fits_seat,
    Show: _fits_show,
    Muck: _fits_seat,
    HandEnd: _fits_bare,
    TimeExpired: _fits_seat,
    FoldSeen: _fits_seat,
    ChipsSeen: _fits_seat,
}
