"""One worked example per signal of the panel language, for docs/panel.md and `panel render --signal`.

Each entry: name -> (what the players see and why, the table-event lines that lead to it on a
10-seat table). Rendering an entry folds its lines through SignalState, so the pictures always
show what the code does.
"""

from __future__ import annotations

from typing import Any

SEATS = 10


def _hand(**over: Any) -> dict[str, Any]:
    line = {
        "type": "hand",
        "number": 7,
        "button": 3,
        "sb": 4,
        "bb": 5,
        "dead_button": False,
        "dead_sb_seat": None,
        "dealer": 3,
        "first_card": 4,
        "dealt_in": [4, 5, 6, 7, 8, 9, 10, 1, 2, 3],
        "sitting_out": [],
        "redeal": False,
    }
    line.update(over)
    return line


DEAD_BUTTON = _hand(
    number=8,
    button=4,
    sb=None,
    bb=5,
    dead_button=True,
    dead_sb_seat=None,
    dealer=3,
    first_card=5,
    dealt_in=[5, 6, 7, 8, 9, 10, 1, 2, 3],
)

SIGNALS: dict[str, tuple[str, list[dict[str, Any]]]] = {
    "hand": (
        "A new hand: the button seat deals (white chase), small blind blue, big blind yellow. "
        "The display names the hand, the dealer and the seat that gets the first card.",
        [_hand()],
    ),
    "dead_button": (
        "Dead button: the button belongs in front of an empty seat (4). That seat blinks white until "
        "the camera sees the button there; the nearest occupied seat to its right (3) deals (green chase).",
        [DEAD_BUTTON],
    ),
    "button_seen": (
        "The camera saw the button at the seat where it must go: the blink stops, the seat shows solid white.",
        [DEAD_BUTTON, {"type": "button_seen", "seat": 4}],
    ),
    "dead_small_blind": (
        "No small blind is posted this hand: the empty seat holding the small-blind position glows dim blue.",
        [
            _hand(
                button=2,
                sb=None,
                dead_sb_seat=3,
                bb=4,
                dealer=2,
                first_card=4,
                dealt_in=[4, 5, 6, 7, 8, 9, 10, 1, 2],
            )
        ],
    ),
    "sitting_out": (
        "Seats that receive no cards this hand (between the small blind and the button, or a new player "
        "in the dead position) are purple; the display lists them.",
        [
            _hand(
                sitting_out=[
                    {"seat": 9, "reason": "new_player_dead_position"},
                    {"seat": 10, "reason": "between_sb_and_button"},
                ],
                dealt_in=[4, 5, 6, 7, 8, 1, 2, 3],
            )
        ],
    ),
    "redeal": (
        "The hand after a misdeal is a redeal of the same hand: same positions, the display says REDEAL.",
        [_hand(redeal=True)],
    ),
    "misdeal": (
        "Misdeal: every seat flashes red, fast; the display gives the reason. It lasts until the redeal starts.",
        [_hand(), {"type": "misdeal", "reason": "first_cards_exposed", "rule": "cool_mule:5.g"}],
    ),
    "replace_exposed": (
        "A card exposed in the deal is replaced: the seat that gets a replacement blinks orange.",
        [_hand(), {"type": "replace_exposed", "seat": 6, "card": "Kd"}],
    ),
    "extra_card": (
        "The first player got a surplus card: that seat blinks orange, the card becomes the burn.",
        [_hand(), {"type": "extra_card", "seat": 4}],
    ),
    "boxed_card": (
        "A card was found face up in the deck: the display says whether it is replaced or shown and discarded.",
        [_hand(), {"type": "boxed_card", "card": "7c", "procedure": "replace"}],
    ),
    "button_misplaced": (
        "The physical button is in the wrong place: where it must go blinks white, where it is now "
        "blinks red, until the camera sees it at the right seat.",
        [_hand(), {"type": "button_misplaced", "expected": 3, "seen": 2}],
    ),
    "substantial_action": (
        "Substantial action reached: from now on no misdeal can be declared. Display only.",
        [_hand(), {"type": "substantial_action"}],
    ),
    "dead_hand": (
        "A seat's hand is dead (wrong card count, absent, exposed, clock, out of turn): dark red, steady.",
        [_hand(), {"type": "dead_hand", "seat": 8, "reason": "wrong_card_count"}],
    ),
    "board_redeal": (
        "Board cards came too early or too many: the display gives the procedure.",
        [_hand(), {"type": "board_redeal", "street": "turn", "procedure": "next_card_then_reshuffle"}],
    ),
    "action_ruled": (
        "An action was recorded as something else (oversized chip, under-raise...): the seat blinks magenta.",
        [_hand(), {"type": "action_ruled", "seat": 6, "as": "call", "to": 200, "reason": "oversized_chip"}],
    ),
    "out_of_turn": (
        "A player acted out of turn: that seat blinks red, the seat whose turn it is chases cyan.",
        [_hand(), {"type": "out_of_turn", "seat": 8, "expected": 6}],
    ),
    "pots": (
        "After a betting round the display shows the main pot and side pots.",
        [
            _hand(),
            {
                "type": "pots",
                "pots": [{"amount": 1200, "eligible": [4, 5, 6]}, {"amount": 400, "eligible": [5, 6]}],
            },
        ],
    ),
    "show_order": (
        "Showdown: the seat that must table first chases cyan.",
        [_hand(), {"type": "show_order", "first": 5}],
    ),
    "award": (
        "A pot is awarded: the winners chase gold, the display gives the amount and the hand.",
        [
            _hand(),
            {
                "type": "award",
                "pot": 0,
                "amount": 1200,
                "winners": [5, 9],
                "shares": {"5": 600, "9": 600},
                "odd_chips_to": None,
                "hand": "Straight",
            },
        ],
    ),
    "eliminated": (
        "A player busted: the seat pulses red, the display gives the finishing place.",
        [_hand(), {"type": "eliminated", "seat": 7, "place": 12}],
    ),
    "error": (
        "The engine rejected an input line: the display asks the players to check the table; seats unchanged.",
        [_hand(), {"type": "error", "line": 14, "message": "deal before hand_start"}],
    ),
    "checkin_accepted": (
        "A player tapped their card at the right seat: the seat pulses green, the display welcomes them.",
        [{"type": "checkin", "seat": 6, "player": "P17", "name": "Ann", "accepted": True}],
    ),
    "checkin_refused": (
        "A player tapped in at the wrong seat: the seat blinks red and the display sends them to their seat.",
        [
            {
                "type": "checkin",
                "seat": 2,
                "accepted": False,
                "reason": "wrong_seat",
                "assigned": {"table": "T2", "seat": 5},
            }
        ],
    ),
    "bustout_question": (
        "A seated player tapped their card during the hand: the table asks whether they are out. The "
        "seat's ring counts down in red the seconds in which a second tap, or NEW HAND, confirms it "
        "(the seat is then out: `leave` with reason eliminated); unanswered, the question goes off.",
        [
            _hand(),
            {
                "type": "bustout",
                "seat": 7,
                "player": "P17",
                "confirmed": False,
                "ask": "OUT? tap again or press NEW HAND",
                "seconds": 30,
            },
        ],
    ),
    "clock": (
        "The clock is called on a seat: its segment counts down (fewer LEDs as time runs out, blinking "
        "in the last ten seconds, red when time is up).",
        [_hand(), {"type": "clock", "seat": 6, "seconds": 60}],
    ),
    "hand_end": (
        "The pot was pushed: the rim goes dark and the display asks for NEW HAND.",
        [_hand(), {"type": "hand_end"}],
    ),
    "move_out": (
        "The floor moves a player to another table (balancing, breaking): the seat blinks purple, the "
        "display says where to go.",
        [
            _hand(),
            {"type": "move", "seat": 3, "direction": "out", "table": "T2", "to_seat": 5, "name": "Ann"},
        ],
    ),
    "move_in": (
        "A player moved from another table is to sit here: the seat blinks green until the next hand.",
        [_hand(), {"type": "move", "seat": 5, "direction": "in", "table": "T1", "name": "Ann"}],
    ),
    "colour_up": (
        "A colour-up is due (the floor's clock reached a break with a colour-up): the display says "
        "which chips go.",
        [_hand(), {"type": "colour_up", "chips": "25 chips"}],
    ),
}

# Not a signal of the language but what players must recognise: the firmware's own pattern when the
# table computer stops talking to it (never the last ruling, frozen).
OFFLINE = "offline"
