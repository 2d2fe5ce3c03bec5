"""Showdown order per rulebook, cards speak (treys), show both cards to win, card validation."""

from __future__ import annotations

import random

import pytest

from controller.rules.errors import Rejected
from controller.rules.showdown import hand_value
from tests.rules.test_hand_play import act, card, flop, new_hand


def _to_river(profile: str, river_bet: bool):
    """Four players see a river; on it seat 4 bets and seats 5 and 1 call, or everyone checks."""
    hand = new_hand(profile, stacks={1: 5000, 2: 5000, 4: 5000, 5: 5000}, button=5, seats=6)
    # order from the button's left: 1 (SB), 2 (BB), 4, 5 (button)
    for seat in (4, 5, 1):
        act(hand, seat, "call")
    act(hand, 2, "check")
    for street in ("flop", "turn"):
        flop(hand, ("2c", "7d", "Ks")) if street == "flop" else card(hand, "9h")
        for seat in (1, 2, 4, 5):
            act(hand, seat, "check")
    card(hand, "Th")
    out = []
    if river_bet:
        act(hand, 1, "check")
        act(hand, 2, "fold")
        act(hand, 4, "bet", to=300)
        act(hand, 5, "call")
        out = act(hand, 1, "call")
    else:
        for seat in (1, 2, 4, 5):
            out = act(hand, seat, "check")
    return hand, [o for o in out if o["type"] == "show_order"]


@pytest.mark.parametrize(
    ("profile", "first", "rule"),
    [
        ("bar_league", 4, "bar_league:Showdown Order"),
        ("dragons_den", 4, "dragons_den:11"),
        ("corner_pocket", 4, "corner_pocket:General Rules.G"),
        ("bluff_street", 4, "bluff_street:17"),
        # cool_mule:9.k: "starting with the player to the left of the last to call" (seat 1 called last;
        # left of it, skipping the folded seat 2, is seat 4).
        ("cool_mule", 4, "cool_mule:9.k"),
    ],
)
def test_show_order_after_a_river_bet(profile, first, rule):
    hand, order = _to_river(profile, river_bet=True)
    assert order == [{"type": "show_order", "first": first, "rule": rule}]
    assert hand.street == "showdown"


@pytest.mark.parametrize(
    ("profile", "first", "rule"),
    [
        # bar_league:Showdown Order: no action on the final round -> begins with the small blind position.
        ("bar_league", 1, "bar_league:Showdown Order"),
        # bluff_street:17: no bet on the final round -> the first seat left of the button.
        ("bluff_street", 1, "bluff_street:17"),
        # corner_pocket:General Rules.G: no action on the river -> the player in earliest position.
        ("corner_pocket", 1, "corner_pocket:General Rules.G"),
        ("dragons_den", 1, "bluff_street:17"),
    ],
)
def test_show_order_when_the_river_is_checked_through(profile, first, rule):
    _hand, order = _to_river(profile, river_bet=False)
    assert order == [{"type": "show_order", "first": first, "rule": rule}]


def test_show_order_no_bet_when_small_blind_folded_differs_by_rulebook():
    """With the small blind out of the hand: Bar League still starts from the small-blind position (the
    next live seat clockwise from it), Bluff Street from the first live seat left of the button."""
    from controller.rules.showdown import first_to_show

    live = [2, 4]
    assert first_to_show("last_aggressor", "small_blind", live, 5, 1, 6, None, None, 2) == 2
    # Heads-up the small blind is the button: Bar League starts there, Bluff Street left of it.
    assert first_to_show("last_aggressor", "small_blind", [2, 5], 5, 5, 6, None, None, 2) == 5
    assert first_to_show("last_aggressor", "left_of_button", [2, 5], 5, 5, 6, None, None, 2) == 2


def test_cards_speak_with_treys():
    assert hand_value(["Ah", "Kh"], ["Qh", "Jh", "Th", "2c", "3d"]) == (1, "Royal Flush")
    assert hand_value(["2c", "2d"], ["2h", "Kc", "Kd", "7s", "8s"])[1] == "Full House"


def test_a_player_must_show_both_cards_to_win_a_contested_pot():
    """cool_mule:9.m / bluff_street:20: the better hand not tabled cannot win; the tabled hand takes it."""
    hand, _ = _to_river("bluff_street", river_bet=True)
    hand.show({"seat": 4, "cards": ["3c", "4c"]}, 0)  # seven high
    hand.muck({"seat": 5}, 0)
    # Seat 1 holds a better hand but never tables it.
    awards = [o for o in hand.finish(0) if o["type"] == "award"]
    assert [(a["winners"], a["amount"]) for a in awards] == [([4], 1300)]


def test_pot_with_no_tabled_hand_is_reported_unresolved():
    hand, _ = _to_river("bluff_street", river_bet=False)
    out = hand.finish(0)
    assert out[0]["type"] == "pot_unresolved" and out[0]["amount"] == 400
    assert sum(hand.stacks.values()) + hand.unawarded == 20_000


def test_uncontested_pot_needs_no_show():
    """bar_league:Show All To Win: if all opponents have folded, no hole cards need to be shown."""
    hand = new_hand("bar_league", stacks={1: 1000, 2: 1000, 3: 1000})
    act(hand, 3, "raise", to=300)
    act(hand, 1, "fold")
    act(hand, 2, "fold")
    (award,) = hand.finish(0)
    assert award["winners"] == [3] and award["amount"] == 250 and award["hand"] is None
    assert hand.stacks == {1: 950, 2: 900, 3: 1150}


def test_shown_cards_are_validated_before_treys_sees_them():
    hand, _ = _to_river("bluff_street", river_bet=True)
    for cards, message in [
        (["Ah"], "must be a list of 2 cards"),
        (["Ah", "Ah"], "same card twice"),
        (["Ah", "Ks"], "already in the board"),
        (["Ah", "Xz"], "not a card"),
        (["Ah", "kd"], "must be written Kd"),
    ]:
        with pytest.raises(Rejected, match=message):
            hand.show({"seat": 4, "cards": cards}, 0)
    hand.show({"seat": 4, "cards": ["Ah", "Ad"]}, 0)
    with pytest.raises(Rejected, match="already in seat 4's hand"):
        hand.show({"seat": 5, "cards": ["Ah", "2d"]}, 0)
    with pytest.raises(Rejected, match="has folded"):
        hand.show({"seat": 2, "cards": ["3s", "2d"]}, 0)
    assert list(hand.shown) == [4]


def test_show_during_betting_is_rejected():
    hand = new_hand(stacks={1: 1000, 2: 1000, 3: 1000})
    with pytest.raises(Rejected, match="betting is still in progress"):
        hand.show({"seat": 3, "cards": ["Ah", "Ad"]}, 0)


def test_all_in_runout_has_no_show_order():
    """bar_league:Showdown Order: when all action is complete before the last card, there is no showdown
    order: every hand is tabled (bluff_street:15)."""
    hand = new_hand("bar_league", stacks={1: 1000, 2: 1000})
    act(hand, 2, "allin")
    out = act(hand, 1, "call")
    assert [o["type"] for o in out] == ["pots"]
    hand.show({"seat": 1, "cards": ["Ah", "Ad"]}, 0)
    hand.show({"seat": 2, "cards": ["Kh", "Kd"]}, 0)
    outputs = flop(hand, ("2c", "7d", "Ks")) + card(hand, "9h") + card(hand, "3s")
    assert outputs == [] and hand.street == "showdown"
    (award,) = hand.finish(0)
    assert award["winners"] == [2] and award["hand"] == "Three of a Kind"


def test_fast_seven_card_evaluation_equals_treys():
    import random

    from treys import Card, Evaluator

    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    rng = random.Random(7)
    evaluator = Evaluator()
    for _ in range(2000):
        cards = rng.sample(deck, 7)
        expected = evaluator.evaluate([Card.new(c) for c in cards[2:]], [Card.new(c) for c in cards[:2]])
        assert hand_value(cards[:2], cards[2:])[0] == expected


def test_seven_card_ranks_equal_treys_on_flush_boards():
    """Random seven-card hands rarely hold a flush: here every hand has five to seven cards of one suit."""
    from treys import Card, Evaluator

    evaluator = Evaluator()
    rng = random.Random(11)
    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    for _ in range(1500):
        suit = rng.choice("cdhs")
        suited = rng.sample([c for c in deck if c[1] == suit], rng.randint(5, 7))
        cards = suited + rng.sample([c for c in deck if c[1] != suit], 7 - len(suited))
        rng.shuffle(cards)
        expected = evaluator.evaluate([Card.new(c) for c in cards[2:]], [Card.new(c) for c in cards[:2]])
        rank, name = hand_value(cards[:2], cards[2:])
        assert rank == expected
        assert name == evaluator.class_to_string(evaluator.get_rank_class(expected))
