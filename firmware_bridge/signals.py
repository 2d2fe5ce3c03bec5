"""The signal language: a pure fold from the rules engine's output lines to panel scenes.

`SignalState(seats).apply(line)` takes one line of the table event protocol (the engine's output
lines, see shared/spec/table-events.md, plus `button_seen`, `checkin`, `bustout`, `clock` and
`hand_end`)
and returns the new Scene when what the players should see changed, else None. No clocks, no
I/O: the same lines always give the same scenes, so a replayed event log re-creates the panel.

Colour says what (white button, green deal, blue small blind, yellow big blind, purple sit out,
red wrong, orange a card to fix, cyan your turn, gold winner); the effect says how urgent
(solid: that is how it is; pulse: note this; blink: do something here now; chase: you act;
countdown: your clock). docs/panel.md shows every signal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from firmware_bridge.scene import COLORS, OFF, Scene, SceneError, SeatLight, clip_text

__all__ = ["SIGNAL_TYPES", "Scene", "SceneError", "SeatLight", "SignalError", "SignalState"]


def _light(color: str, effect: str, period_ms: int = 0, seconds: int = 0) -> SeatLight:
    return SeatLight(COLORS[color], effect, period_ms, seconds)


BUTTON = _light("white", "solid")
BUTTON_MOVE_HERE = _light("white", "blink")  # the physical button must go here
BUTTON_DEALS = _light("white", "chase")  # button seat, and it deals
DEALER = _light("green", "chase")  # deals this hand (dead button: not the button seat)
SMALL_BLIND = _light("blue", "solid")
DEAD_SMALL_BLIND = _light("dim_blue", "solid")  # empty seat holding the small-blind position
BIG_BLIND = _light("yellow", "solid")
SITTING_OUT = _light("purple", "solid")
MISDEAL = _light("red", "blink", 300)
CARD_TO_FIX = _light("orange", "blink")  # exposed card to replace, extra card to burn
DEAD_HAND = _light("dark_red", "solid")
WRONG_HERE = _light("red", "blink")  # acted out of turn, button seen at the wrong seat, refused check-in
YOUR_TURN = _light("cyan", "chase")
RULED = _light("magenta", "blink")  # your action was recorded as something else
WINNER = _light("gold", "chase")
ELIMINATED = _light("red", "pulse")
BUSTOUT_SECONDS = 30  # the question's window when the line does not say (registry.checkin's default)
WELCOME = _light("green", "pulse")
MOVE_OUT = _light("purple", "blink")  # the floor moves this player to another table (balancing, breaking)
MOVE_IN = _light("green", "blink")  # a player moved from another table takes this seat

# Display texts keep to the 128x32 display: at most 4 lines of 16 characters.
MISDEAL_REASONS = {
    "first_cards_exposed": "first cards\nexposed",
    "multiple_exposed": "2+ cards exposed",
    "button_card_exposed": "button card\nexposed",
    "first_card_wrong_seat": "first card to\nwrong seat",
    "dealt_to_ineligible_seat": "dealt to a seat\nsitting out",
    "eligible_seat_dealt_out": "a seat was\nskipped",
    "wrong_card_count": "wrong card count",
    "multiple_boxed": "2+ boxed cards",
    "button_misplaced": "button misplaced",
    "too_many_extra_cards": "too many extra\ncards",
}
BOARD_PROCEDURES = {
    "reshuffle_keep_burn": "reshuffle,\nkeep the burn",
    "next_card_then_reshuffle": "next card = turn",
    "scramble_pick_burn": "scramble,\npick the burn",
    "redeal_flop": "redeal the flop",
}

# Every line type the language reacts to (others are ignored: apply returns None).
SIGNAL_TYPES = (
    "hand",
    "misdeal",
    "replace_exposed",
    "extra_card",
    "boxed_card",
    "button_misplaced",
    "substantial_action",
    "dead_hand",
    "board_redeal",
    "action_ruled",
    "out_of_turn",
    "pots",
    "show_order",
    "award",
    "eliminated",
    "error",
    "button_seen",
    "checkin",
    "bustout",
    "clock",
    "hand_end",
    "move",  # the floor's `cmd/move` (balancing, breaking): who goes, to which table and seat
    "colour_up",  # the floor's `cmd/colour_up`: chips to colour up at this break
)


_CARD = re.compile(r"\b[2-9TJQKA][cdhs]\b")


class SignalError(ValueError):
    """A line of a known type whose fields are unusable; the message names type and field."""


@dataclass
class _Hand:
    number: int | None = None
    button: int | None = None
    dead_button: bool = False
    dealer: int | None = None
    sb: int | None = None
    bb: int | None = None
    dead_sb_seat: int | None = None
    first_card: int | None = None
    sitting_out: tuple[int, ...] = ()


class SignalState:
    """Folds table-event lines into the scene the panel should show (pure, deterministic)."""

    def __init__(self, seats: int) -> None:
        if not isinstance(seats, int) or not 2 <= seats <= 16:
            raise ValueError(f"seats must be 2..16, got {seats!r}")
        self.seats = seats
        self.last_error: str | None = None
        self._clock_calls = 0
        self._reset_hand()
        self._hand = _Hand()
        self._text = "READY"
        # seat -> (seconds, call number) of an open bust-out question ("out?"): it outlives a new
        # hand line (a tap between hands asks too) and ends with its answer or its expiry
        self._questions: dict[int, tuple[int, int]] = {}
        self.scene = self._compose()

    # --- state ---------------------------------------------------------------------------------

    def _reset_hand(self) -> None:
        self._hand = _Hand()
        self._button_pending: int | None = None  # seat where the physical button must go
        self._marks: dict[int, SeatLight] = {}  # per seat, stays for the hand
        self._notice: dict[int, SeatLight] = {}  # the latest ruling's seats, replaced by the next
        self._clocks: dict[int, tuple[int, int]] = {}  # seat -> (seconds, number of the clock call)
        self._misdeal = False
        self._checkins: dict[int, SeatLight] = {}

    def _compose(self) -> Scene:
        lights: list[SeatLight] = [OFF] * self.seats
        h = self._hand

        def put(seat: int | None, light: SeatLight) -> None:
            if seat is not None and 1 <= seat <= self.seats:
                lights[seat - 1] = light

        for seat in h.sitting_out:
            put(seat, SITTING_OUT)
        put(h.dead_sb_seat, DEAD_SMALL_BLIND)
        put(h.sb, SMALL_BLIND)
        put(h.bb, BIG_BLIND)
        if h.button is not None:
            if h.dealer == h.button and not h.dead_button:
                put(h.button, BUTTON_DEALS)
            else:
                put(h.button, BUTTON)
                put(h.dealer, DEALER)
        if self._button_pending is not None:
            put(self._button_pending, BUTTON_MOVE_HERE)
        for seat, light in self._checkins.items():
            put(seat, light)
        for seat, light in self._marks.items():
            put(seat, light)
        for seat, light in self._notice.items():
            put(seat, light)
        for seat, (seconds, call) in self._questions.items():
            put(seat, SeatLight(COLORS["red"], "countdown", seconds=seconds, clock_id=call))
        for seat, (seconds, call) in self._clocks.items():
            put(seat, SeatLight(COLORS["cyan"], "countdown", seconds=seconds, clock_id=call))
        if self._misdeal:
            lights = [MISDEAL] * self.seats
        return Scene(tuple(lights), clip_text(self._text))

    # --- field checks --------------------------------------------------------------------------

    def _seat(self, line: dict, name: str, *, optional: bool = False) -> int | None:
        value = line.get(name)
        if value is None and optional:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= self.seats:
            raise SignalError(f"{line.get('type')}.{name}: expected a seat 1..{self.seats}, got {value!r}")
        return value

    def _seats(self, line: dict, name: str) -> tuple[int, ...]:
        value = line.get(name, [])
        if not isinstance(value, list):
            raise SignalError(f"{line.get('type')}.{name}: expected a list of seats, got {value!r}")
        return tuple(self._seat({"type": line.get("type"), name: v}, name) for v in value)  # type: ignore[misc]

    @staticmethod
    def _str(line: dict, name: str, default: str | None = None) -> str:
        value = line.get(name, default)
        if not isinstance(value, str):
            raise SignalError(f"{line.get('type')}.{name}: expected a string, got {value!r}")
        return value

    # --- the fold ------------------------------------------------------------------------------

    def apply(self, line: dict) -> Scene | None:
        """Fold one line in. Returns the new scene if it differs from the current one, else None.

        A line of an unknown type is ignored; a known line with bad fields is refused: the state
        stays as it was, None is returned and `last_error` says what was wrong.
        """
        if not isinstance(line, dict):
            self.last_error = f"line must be a JSON object, got {type(line).__name__}"
            return None
        kind = line.get("type")
        handler = (
            getattr(self, "_on_" + kind, None) if isinstance(kind, str) and kind in SIGNAL_TYPES else None
        )
        if handler is None:
            return None
        saved = dict(self.__dict__)
        try:
            handler(line)
            scene = self._compose()
        except SignalError as exc:
            self.__dict__.clear()
            self.__dict__.update(saved)
            self.last_error = str(exc)
            return None
        if scene == self.scene:
            return None
        self.scene = scene
        return scene

    def _on_hand(self, line: dict) -> None:
        button = self._seat(line, "button")
        hand = _Hand(
            number=line.get("number") if isinstance(line.get("number"), int) else None,
            button=button,
            dead_button=bool(line.get("dead_button", False)),
            dealer=self._seat(line, "dealer", optional=True),
            sb=self._seat(line, "sb", optional=True),
            bb=self._seat(line, "bb", optional=True),
            dead_sb_seat=self._seat(line, "dead_sb_seat", optional=True),
            first_card=self._seat(line, "first_card", optional=True),
        )
        out = line.get("sitting_out", [])
        if not isinstance(out, list):
            raise SignalError(f"hand.sitting_out: expected a list, got {out!r}")
        seats = []
        for i, item in enumerate(out):
            seat = item.get("seat") if isinstance(item, dict) else item
            seats.append(
                self._seat({"type": "hand", f"sitting_out[{i}].seat": seat}, f"sitting_out[{i}].seat")
            )
        hand.sitting_out = tuple(s for s in seats if s is not None)
        self._reset_hand()
        self._hand = hand
        if hand.dead_button:
            self._button_pending = button  # blinks until the camera sees the button there
        title = ("REDEAL " if line.get("redeal") else "HAND ") + (str(hand.number) if hand.number else "")
        dealer = hand.dealer if hand.dealer is not None else button
        lines = [title.strip(), f"{'DEAD BUTTON' if hand.dead_button else 'BUTTON'} {button}"]
        lines.append(
            f"DEALER {dealer}" + (f" FIRST {hand.first_card}" if hand.first_card is not None else "")
        )
        if hand.sitting_out:
            lines.append("SIT OUT " + ",".join(str(s) for s in hand.sitting_out))
        self._text = "\n".join(lines)

    def _on_hand_end(self, line: dict) -> None:
        number = self._hand.number
        self._reset_hand()
        self._text = f"HAND {number} OVER\npress NEW HAND" if number else "HAND OVER\npress NEW HAND"

    def _on_misdeal(self, line: dict) -> None:
        reason = self._str(line, "reason", "")
        self._misdeal = True
        self._clocks.clear()
        self._text = "MISDEAL\n" + MISDEAL_REASONS.get(reason, reason.replace("_", " "))

    def _on_replace_exposed(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        card = self._str(line, "card", "")
        self._marks[seat] = CARD_TO_FIX  # type: ignore[index]
        self._text = f"EXPOSED {card}\nseat {seat} gets\nthe next card\n{card} = flop burn"

    def _on_extra_card(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        self._marks[seat] = CARD_TO_FIX  # type: ignore[index]
        self._text = f"EXTRA CARD\nseat {seat}: it is\nthe burn card"

    def _on_boxed_card(self, line: dict) -> None:
        card = self._str(line, "card", "")
        procedure = self._str(line, "procedure", "replace")
        how = "show, discard" if procedure == "discard" else "replace it"
        self._text = f"BOXED CARD {card}\n{how}"

    def _on_button_misplaced(self, line: dict) -> None:
        expected = self._seat(line, "expected")
        seen = self._seat(line, "seen", optional=True)
        self._button_pending = expected
        self._notice = {seen: WRONG_HERE} if seen is not None and seen != expected else {}
        self._text = f"MOVE BUTTON\nto seat {expected}" + (f"\n(now at {seen})" if seen else "")

    def _on_button_seen(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        if self._button_pending is None:
            return
        if seat == self._button_pending:
            self._button_pending = None
            self._notice = {s: light for s, light in self._notice.items() if light is not WRONG_HERE}
            if self._text.startswith("MOVE BUTTON"):
                self._text = f"BUTTON OK\nseat {seat}"

    def _on_substantial_action(self, line: dict) -> None:
        self._text = "SUBSTANTIAL\nACTION\nno misdeal now"

    def _on_dead_hand(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        reason = self._str(line, "reason", "")
        self._marks[seat] = DEAD_HAND  # type: ignore[index]
        self._clocks.pop(seat, None)  # type: ignore[arg-type]
        self._notice.pop(seat, None)  # type: ignore[arg-type]
        self._text = f"DEAD HAND\nseat {seat}\n{reason.replace('_', ' ')}"

    def _on_board_redeal(self, line: dict) -> None:
        street = self._str(line, "street", "board")
        procedure = self._str(line, "procedure", "")
        self._text = f"{street.upper()} TOO EARLY\n" + BOARD_PROCEDURES.get(
            procedure, procedure.replace("_", " ")
        )

    def _on_action_ruled(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        ruled = self._str(line, "as", "")
        to = line.get("to")
        reason = self._str(line, "reason", "")
        self._notice = {seat: RULED}  # type: ignore[dict-item]
        amount = f" {to}" if isinstance(to, int) and not isinstance(to, bool) else ""
        self._text = f"SEAT {seat} RULED\n{ruled.upper()}{amount}\n{reason.replace('_', ' ')}"

    def _on_out_of_turn(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        expected = self._seat(line, "expected")
        self._notice = {seat: WRONG_HERE, expected: YOUR_TURN}  # type: ignore[dict-item]
        self._text = f"OUT OF TURN {seat}\naction on {expected}"

    def _on_pots(self, line: dict) -> None:
        pots = line.get("pots")
        if not isinstance(pots, list) or not all(isinstance(p, dict) for p in pots):
            raise SignalError(f"pots.pots: expected a list of {{amount, eligible}}, got {pots!r}")
        parts = []
        for i, pot in enumerate(pots):
            amount = pot.get("amount")
            if not isinstance(amount, int) or isinstance(amount, bool) or amount < 0:
                raise SignalError(f"pots.pots[{i}].amount: expected chips >= 0, got {amount!r}")
            parts.append(("POT " if i == 0 else f"SIDE {i} ") + str(amount))
        self._text = "\n".join(parts[:4]) if parts else "POT 0"

    def _on_show_order(self, line: dict) -> None:
        first = self._seat(line, "first")
        self._notice = {first: YOUR_TURN}  # type: ignore[dict-item]
        self._text = f"SHOWDOWN\nseat {first} shows\nfirst"

    def _on_award(self, line: dict) -> None:
        winners = self._seats(line, "winners")
        if not winners:
            raise SignalError("award.winners: expected at least one seat")
        amount = line.get("amount")
        pot = line.get("pot", 0)
        hand = line.get("hand")
        # Showdown is over: blinds and dealer no longer matter, winners take the rim.
        button = self._hand.button
        self._hand = _Hand(number=self._hand.number, button=button)
        self._notice = {}
        self._clocks.clear()
        for seat in winners:
            self._marks[seat] = WINNER
        name = "POT" if pot in (0, None) else f"SIDE POT {pot}"
        text = f"{name} {amount if isinstance(amount, int) else ''}".strip()
        text += "\nseat " + ",".join(str(s) for s in winners)
        if isinstance(hand, str) and hand:
            text += "\n" + hand
        self._text = text

    def _on_eliminated(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        place = line.get("place")
        self._marks[seat] = ELIMINATED  # type: ignore[index]
        self._text = f"SEAT {seat} OUT" + (f"\nplace {place}" if isinstance(place, int) else "")

    def _on_error(self, line: dict) -> None:
        message = line.get("message", "")
        if not isinstance(message, str):
            message = str(message)
        if not self._misdeal:
            # An error message may quote the rejected line; a card in it need not be face up.
            self._text = "CHECK TABLE\n" + _CARD.sub("??", message)[:40]

    def _on_checkin(self, line: dict) -> None:
        accepted = line.get("accepted")
        if not isinstance(accepted, bool):
            raise SignalError(f"checkin.accepted: expected true or false, got {accepted!r}")
        seat = self._seat(line, "seat", optional=not accepted)
        if accepted:
            name = line.get("name") or line.get("player") or "player"
            self._checkins[seat] = WELCOME  # type: ignore[index]
            self._text = f"WELCOME\n{str(name)[:16]}\nseat {seat}"
            return
        if seat is not None:
            self._checkins[seat] = WRONG_HERE
        assigned = line.get("assigned")
        reason = line.get("reason")
        text = "NOT HERE" if seat is not None else "CHECK-IN REFUSED"
        if isinstance(assigned, dict) and assigned.get("seat") is not None:
            table = assigned.get("table")
            text += f"\ngo to {table + ' ' if isinstance(table, str) else ''}seat {assigned.get('seat')}"
        elif isinstance(reason, str) and reason:
            text += "\n" + reason.replace("_", " ")[:40]
        self._text = text

    def _on_bustout(self, line: dict) -> None:
        """A seated player tapped their card (registry.checkin.SeatTaps): the seat's ring counts down
        in red the seconds in which a second tap, or NEW HAND, confirms "out"; the answer (or the
        question's expiry, `ask` null) takes the question off the ring."""
        seat = self._seat(line, "seat")
        confirmed = line.get("confirmed")
        if not isinstance(confirmed, bool):
            raise SignalError(f"bustout.confirmed: expected true or false, got {confirmed!r}")
        ask = line.get("ask")
        if ask is not None and not isinstance(ask, str):
            raise SignalError(f"bustout.ask: expected a string or null, got {ask!r}")
        player = line.get("player")
        who = player[:16] if isinstance(player, str) and player else f"seat {seat}"
        if confirmed:
            self._questions.pop(seat, None)  # type: ignore[arg-type]
            self._marks[seat] = ELIMINATED  # type: ignore[index]
            self._text = f"SEAT {seat} OUT\n{who}"
            return
        if ask is None:
            if self._questions.pop(seat, None) is not None:  # type: ignore[arg-type]
                self._text = f"SEAT {seat}\nnot out"
            return
        seconds = line.get("seconds", BUSTOUT_SECONDS)
        if not isinstance(seconds, int) or isinstance(seconds, bool) or not 1 <= seconds <= 6553:
            raise SignalError(f"bustout.seconds: expected 1..6553, got {seconds!r}")
        self._clock_calls += 1
        self._questions[seat] = (seconds, self._clock_calls)  # type: ignore[index]
        how = "tap again or\nNEW HAND" if "NEW HAND" in ask else "tap again"
        self._text = f"OUT? seat {seat}\n{who}\n{how}"

    def _on_clock(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        seconds = line.get("seconds")
        if not isinstance(seconds, int) or isinstance(seconds, bool) or not 0 <= seconds <= 6553:
            raise SignalError(f"clock.seconds: expected 0..6553, got {seconds!r}")
        if seconds == 0:
            self._clocks.pop(seat, None)  # type: ignore[arg-type]
            self._text = f"CLOCK OFF\nseat {seat}"
        else:
            # Each call is a new clock, even with the same length on the same seat.
            self._clock_calls += 1
            self._clocks[seat] = (seconds, self._clock_calls)  # type: ignore[index]
            self._text = f"CLOCK\nseat {seat}: {seconds} s"

    # --- the floor's lines (cmd/move, cmd/colour_up): shown until the next hand ------------------

    def _on_move(self, line: dict) -> None:
        seat = self._seat(line, "seat")
        direction = self._str(line, "direction")
        if direction not in ("out", "in"):
            raise SignalError(f"move.direction: expected 'out' or 'in', got {direction!r}")
        table = line.get("table")
        to_seat = line.get("to_seat")
        where = str(table)[:13] if isinstance(table, str) else "a table"
        if direction == "out":
            self._checkins[seat] = MOVE_OUT  # type: ignore[index]
            self._text = f"MOVE seat {seat}\nto {where}" + (
                f"\nseat {to_seat}" if isinstance(to_seat, int) else ""
            )
        else:
            self._checkins[seat] = MOVE_IN  # type: ignore[index]
            self._text = f"MOVED IN\nseat {seat}\nfrom {where}"
        name = line.get("name")
        if isinstance(name, str) and name:
            self._text += "\n" + name[:16]

    def _on_colour_up(self, line: dict) -> None:
        chips = self._str(line, "chips")
        if not chips.strip():
            raise SignalError("colour_up.chips: expected the chips that go, got an empty string")
        self._text = f"COLOUR UP\n{chips[:16]}\nchip race now"
