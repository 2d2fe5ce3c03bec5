"""Main and side pots, split pots and odd chips; chips conserved (hypothesis) in every hand."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.rules.errors import Rejected
from controller.rules.pots import Pot, build_pots, split, uncalled
from tests.rules.test_hand_play import act, card, flop, new_hand


def test_three_different_stacks_make_a_main_and_a_side_pot():
    """bar_league:Side Pots: each side pot is pushed or divided as a separate pot."""
    pots = build_pots({1: 500, 2: 1200, 3: 1200}, live=[1, 2, 3])
    assert pots == [Pot(1500, (1, 2, 3)), Pot(1400, (2, 3))]


def test_four_different_stacks_make_three_pots_and_folded_chips_stay_in():
    pots = build_pots({1: 300, 2: 800, 3: 2000, 4: 2000, 5: 100}, live=[1, 2, 3, 4])
    assert pots == [Pot(1300, (1, 2, 3, 4)), Pot(1500, (2, 3, 4)), Pot(2400, (3, 4))]
    assert sum(p.amount for p in pots) == 300 + 800 + 2000 + 2000 + 100


def test_uncalled_part_of_the_largest_bet():
    assert uncalled({1: 500, 2: 1200, 3: 900}) == (2, 300)
    assert uncalled({1: 500, 2: 500}) is None


def test_split_pot_odd_chip_goes_to_first_winner_left_of_button():
    """cool_mule:8.h: "any odd chip will be given to the first player to the left of the button." """
    shares, odd = split(1001, [2, 5], button=4, table_size=6, odd_rule="first_left_of_button")
    assert shares == {5: 501, 2: 500} and odd == {5: 1}


def test_bar_league_spreads_odd_chips_one_each_from_the_button():
    """bar_league:Odd Chips: remaining chips go to the player(s) closest to the left of the button."""
    shares, odd = split(302, [1, 3, 6], button=6, table_size=6, odd_rule="one_each_from_left_of_button")
    assert shares == {1: 101, 3: 101, 6: 100} and odd == {1: 1, 3: 1}
    shares, odd = split(302, [1, 3, 6], button=6, table_size=6, odd_rule="first_left_of_button")
    assert shares == {1: 102, 3: 100, 6: 100}


def _showdown_four_stacks(profile: str):
    stacks = {1: 1_000, 2: 3_000, 3: 6_000, 4: 10_000}
    hand = new_hand(profile, stacks=stacks, seats=4, sb=50, bb=100)
    for seat in (3, 4, 1, 2):
        act(hand, seat, "allin") if seat != 4 else act(hand, seat, "call")
    return hand


def test_four_stacks_all_in_side_pots_awarded_separately():
    """bluff_street:19: "Each side pot will be split separately." Seat 1 (1,000) has the best hand, seat 2
    the second best: seat 1 wins the main pot only, seat 2 the first side pot, and so on."""
    hand = new_hand("bluff_street", stacks={1: 1_000, 2: 3_000, 3: 6_000, 4: 10_000}, seats=4)
    act(hand, 3, "allin")  # 6000
    act(hand, 4, "call")
    act(hand, 1, "allin")
    out = act(hand, 2, "allin")
    assert out[-1]["type"] == "pots"
    assert out[-1]["pots"] == [
        {"amount": 4000, "eligible": [1, 2, 3, 4]},
        {"amount": 6000, "eligible": [2, 3, 4]},
        {"amount": 6000, "eligible": [3, 4]},
    ]
    for seat, cards in {1: ["Ah", "Ad"], 2: ["Kh", "Kd"], 3: ["Qh", "Qd"], 4: ["2c", "7s"]}.items():
        hand.show({"seat": seat, "cards": cards}, 0)
    flop(hand, ("3c", "8d", "9s"))
    card(hand, "Jc")
    card(hand, "4h")
    awards = [o for o in hand.finish(0) if o["type"] == "award"]
    assert [(a["pot"], a["winners"], a["amount"]) for a in awards] == [
        (0, [1], 4000),
        (1, [2], 6000),
        (2, [3], 6000),
    ]
    assert hand.stacks == {1: 4000, 2: 6000, 3: 6000, 4: 4000}


def test_split_pot_with_odd_chip_in_a_hand():
    """dragons_den:12: two high hands: the odd chip goes to the left of the button."""
    hand = new_hand("dragons_den", stacks={1: 5000, 2: 5000, 3: 5000}, sb=25, bb=50)
    act(hand, 3, "fold")  # the button folds; 25 + 50 in
    act(hand, 1, "raise", to=125)
    act(hand, 2, "call")
    flop(hand, ("Ah", "Kh", "Qd"))
    act(hand, 1, "check")
    act(hand, 2, "check")
    card(hand, "Jc")
    act(hand, 1, "bet", to=75)
    act(hand, 2, "call")
    card(hand, "Ts")
    act(hand, 1, "check")
    act(hand, 2, "check")
    hand.show({"seat": 1, "cards": ["2c", "3c"]}, 0)
    hand.show({"seat": 2, "cards": ["4d", "5d"]}, 0)
    (award,) = hand.finish(0)
    assert award["amount"] == 400 and award["winners"] == [1, 2] and award["hand"] == "Straight"
    assert award["shares"] == {"1": 200, "2": 200} and award["odd_chips_to"] is None
    hand = new_hand("dragons_den", stacks={1: 5000, 2: 5000, 3: 5000}, sb=25, bb=50)
    act(hand, 3, "call")
    act(hand, 1, "fold")  # the small blind's 25 stays in: 125 to split
    act(hand, 2, "check")
    flop(hand, ("Ah", "Kh", "Qd"))
    act(hand, 2, "check")
    act(hand, 3, "check")
    card(hand, "Jc")
    act(hand, 2, "check")
    act(hand, 3, "check")
    card(hand, "Ts")
    act(hand, 2, "check")
    act(hand, 3, "check")
    hand.show({"seat": 2, "cards": ["4d", "5d"]}, 0)
    hand.show({"seat": 3, "cards": ["2c", "3c"]}, 0)
    (award,) = hand.finish(0)
    assert award["shares"] == {"2": 63, "3": 62} and award["odd_chips_to"] == 2
    assert award["rule"] == "dragons_den:12"


# ---- properties ---------------------------------------------------------------------------------------

PROFILES = st.sampled_from(["cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"])
DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


@st.composite
def hands(draw):
    n = draw(st.integers(2, 6))
    stacks = {s: draw(st.integers(1, 3000)) for s in range(1, n + 1)}
    return draw(PROFILES), stacks, draw(st.randoms(use_true_random=False))


def play_random_hand(profile: str, stacks: dict[int, int], rng) -> tuple:
    """Random legal-looking and illegal-looking actions until the hand ends; returns (hand, outputs)."""
    hand = new_hand(profile, stacks=stacks, sb=10, bb=20, seats=6)
    start = hand.chips_in_play()
    deck = list(DECK)
    rng.shuffle(deck)
    out: list[dict] = []
    streets = 0
    for _ in range(200):
        assert hand.chips_in_play() == start
        if hand.to_act is not None:
            seat = hand.to_act if rng.random() < 0.9 else rng.choice(hand.order)
            kind = rng.choice(["fold", "check", "call", "bet", "raise", "allin", "call", "call"])
            ev = {"seat": seat, "action": kind}
            if kind in ("bet", "raise"):
                ev["to"] = rng.randint(1, 3000)
            if rng.random() < 0.2:
                ev["chips"] = [rng.choice([5, 25, 100, 500]) for _ in range(rng.randint(1, 3))]
            try:
                out += hand.action(ev, 0)
            except Rejected:
                pass
            continue
        if len(hand.live) < 2 or streets == 3:
            break
        need = 3 if streets == 0 else 1
        hand.burn(0)
        out += hand.board({"cards": [deck.pop() for _ in range(need)]}, 0)
        streets += 1
    if hand.to_act is None:
        for seat in hand.live:
            if rng.random() < 0.8:
                hand.show({"seat": seat, "cards": [deck.pop(), deck.pop()]}, 0)
    out += hand.finish(0)
    return hand, out, start


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(hands())
def test_chips_are_conserved_and_folded_hands_never_win(case):
    profile, stacks, rng = case
    hand, out, start = play_random_hand(profile, stacks, rng)
    assert sum(hand.stacks.values()) + hand.unawarded == start
    assert all(v >= 0 for v in hand.stacks.values())
    for line in out:
        if line["type"] == "award":
            assert not set(line["winners"]) & hand.folded
            assert sum(line["shares"].values()) == line["amount"]


@settings(max_examples=40, deadline=None)
@given(hands(), st.integers(0, 10**6))
def test_replay_is_deterministic(case, seed):
    import random

    profile, stacks, _ = case
    first = play_random_hand(profile, stacks, random.Random(seed))
    second = play_random_hand(profile, stacks, random.Random(seed))
    assert first[1] == second[1] and first[0].stacks == second[0].stacks
