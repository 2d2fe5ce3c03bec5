"""Output lines as sentences a player or floor person reads (`rules replay --pretty`, the demo)."""

from __future__ import annotations

from typing import Any

from controller.rules.borrowed import venue_title

REASONS = {
    "first_cards_exposed": "one of the first cards off the deck was exposed",
    "multiple_exposed": "more than one card was exposed in the deal",
    "button_card_exposed": "a card meant for the button was exposed",
    "first_card_wrong_seat": "the first card went to the wrong seat",
    "dealt_to_ineligible_seat": "a seat not in the hand was dealt a card",
    "eligible_seat_dealt_out": "a seat in the hand was dealt out",
    "wrong_card_count": "a player has the wrong number of hole cards",
    "multiple_boxed": "two cards were found face up in the deck",
    "button_misplaced": "the button is in the wrong place",
    "too_many_extra_cards": "more than one extra card was dealt",
}


def _seats(seats: list[int]) -> str:
    return ", ".join(str(s) for s in seats) if seats else "none"


def describe(line: dict[str, Any], engine: Any = None) -> str:
    kind = line.get("type")
    rule = f"  [{line['rule']}]" if line.get("rule") else ""
    if line.get("rule") and line.get("borrowed_from"):
        # A borrowed rule reads as one: the venue's own book is silent (controller/rules/borrowed.py).
        rule = f"  [{line['rule']}, borrowed from {venue_title(line['borrowed_from'])}'s rulebook]"
    if kind == "hand":
        parts = [f"Hand {line['number']}{' (re-deal)' if line.get('redeal') else ''}:"]
        parts.append(f"button seat {line['button']}{' (DEAD BUTTON)' if line['dead_button'] else ''},")
        if line["sb"] is None:
            parts.append(f"no small blind (dead small blind at seat {line['dead_sb_seat']}),")
        else:
            parts.append(f"small blind seat {line['sb']},")
        parts.append(f"big blind seat {line['bb']};")
        parts.append(f"seat {line['dealer']} deals, first card to seat {line['first_card']};")
        parts.append(f"dealt in: {_seats(line['dealt_in'])}")
        for out in line.get("sitting_out", []):
            parts.append(f"; seat {out['seat']} sits out ({out['reason'].replace('_', ' ')})")
        return " ".join(parts) + rule
    if kind == "misdeal":
        return f"MISDEAL: {REASONS.get(line['reason'], line['reason'])}. Collect, reshuffle, re-deal.{rule}"
    if kind == "blind_dodge" and line.get("broken_table"):
        return f"Seat {line['seat']} ({line['player']}) came from a broken table after the big blind passed this seat: if he dodged it on purpose, he is penalised (the director's call); he waits for the button to pass.{rule}"
    if kind == "blind_dodge":
        return f"Seat {line['seat']} ({line['player']}) moved from seat {line['from']} and skips a blind he was due: if intentional, he forfeits both blinds and is penalised (the director's call).{rule}"
    if kind == "fouled_deck":
        return f"FOULED DECK: {line['card']} turned up twice. All action is void, every chip goes back; re-deal with a clean deck.{rule}"
    if kind == "replace_exposed":
        card = line.get("card")
        if card is None:  # seen face up, not read
            return f"A card exposed to seat {line['seat']}: deal on; seat {line['seat']} gets the next card after the deal, the exposed card becomes the flop burn.{rule}"
        return f"Card {card} exposed to seat {line['seat']}: deal on; seat {line['seat']} gets the next card after the deal, {card} becomes the flop burn.{rule}"
    if kind == "extra_card":
        return f"Extra card to seat {line['seat']}: it becomes the first burn card.{rule}"
    if kind == "boxed_card":
        what = "replaced by the next card" if line["procedure"] == "replace" else "shown and discarded"
        return f"Boxed card {line['card']}: {what}.{rule}"
    if kind == "button_misplaced":
        return f"Button is at seat {line['seen']}: move it to seat {line['expected']}.{rule}"
    if kind == "substantial_action":
        return f"Substantial action: no misdeal can be declared from here on.{rule}"
    if kind == "dead_hand":
        return f"Seat {line['seat']}'s hand is dead ({line['reason'].replace('_', ' ')}).{rule}"
    if kind == "board_redeal":
        return f"Premature or wrong {line['street']}: {line['procedure'].replace('_', ' ')}.{rule}"
    if kind == "action_ruled":
        to = f" to {line['to']}" if line.get("to") is not None else ""
        return f"Seat {line['seat']}'s action stands as {line['as']}{to} ({line.get('reason', '')}).{rule}"
    if kind == "out_of_turn":
        return f"Seat {line['seat']} acted out of turn; seat {line['expected']} was to act.{rule}"
    if kind == "pots":
        pots = "; ".join(f"{p['amount']} for seats {_seats(p['eligible'])}" for p in line["pots"])
        return f"Pots: {pots}{rule}"
    if kind == "show_order":
        return f"Showdown: seat {line['first']} shows first.{rule}"
    if kind == "award":
        shares = ", ".join(f"seat {s} gets {c}" for s, c in line.get("shares", {}).items())
        hand = f" with {line['hand']}" if line.get("hand") else ""
        return f"Pot {line['pot']} ({line['amount']}){hand}: {shares}.{rule}"
    if kind == "eliminated":
        return f"Seat {line['seat']} is eliminated in place {line['place']}.{rule}"
    if kind == "uncalled_returned":
        return f"Uncalled {line['amount']} goes back to seat {line['seat']}.{rule}"
    if kind == "action_limited":
        return f"Seat {line['seat']} may only {' or '.join(line.get('options', []))} ({line.get('reason', '')}).{rule}"
    if kind == "burn_missing":
        return f"No burn card before the {line['street']}: the card stands.{rule}"
    if kind == "pot_unresolved":
        return f"Pot {line['pot']} ({line['amount']}) not awarded: {line.get('reason', '')} (seats {_seats(line.get('eligible', []))}).{rule}"
    if kind == "penalty":
        length = f"{line['hands']} hands" if line.get("hands") else f"{line.get('minutes', '?')} minutes"
        if line.get("rounds"):
            length += f" ({line['rounds']} rounds of the players at the table)"
        return f"Penalty for seat {line['seat']}: {length} away from the table, still dealt in ({line.get('reason', '')}).{rule}"
    if kind == "clock":
        countdown = f", the last {line['countdown']} counted aloud" if line.get("countdown") else ""
        return f"Clock on seat {line['seat']}: {line.get('seconds', 60)} seconds to act{countdown}.{rule}"
    if kind == "error":
        return f"(line {line['line']} refused: {line['message']})"
    return " ".join(f"{k}={v}" for k, v in line.items())
