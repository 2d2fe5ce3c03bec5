"""The hand after the deal: turn order, blinds and antes, board irregularities, kills, and the engine contract.

Helpers here (`new_hand`, `act`, `types`) are shared by the other hand-play test files.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules.errors import Rejected
from controller.rules.hand_play import HandPlay, HandSetup
from controller.rules.profile import load_profile


def new_hand(
    profile: str = "bluff_street",
    stacks: dict[int, int | None] | None = None,
    button: int | None = None,
    sb: int = 50,
    bb: int = 100,
    ante: int = 0,
    seats: int = 6,
    big_blind_ante: bool = False,
) -> HandPlay:
    """A hand with the usual positions: button given (default the last occupied seat), blinds to its left."""
    stacks = stacks or {s: 10_000 for s in range(1, 7)}
    occupied = sorted(stacks)
    button = occupied[-1] if button is None else button
    order = sorted(occupied, key=lambda s: (s - button - 1) % seats)
    heads_up = len(order) == 2
    sb_seat, bb_seat = (button, order[0]) if heads_up else (order[0], order[1])
    setup = HandSetup(
        number=1,
        button=button,
        sb_seat=sb_seat,
        bb_seat=bb_seat,
        dealt_in=order,
        stacks=dict(stacks),
        sb=sb,
        bb=bb,
        ante=ante,
        seats=seats,
        heads_up=heads_up,
        big_blind_ante=big_blind_ante,
    )
    return HandPlay(load_profile(profile), setup)


def act(hand: HandPlay, seat: int, action: str, **fields) -> list[dict]:
    return hand.action({"type": "action", "seat": seat, "action": action, **fields}, 0)


def types(lines: list[dict]) -> list[str]:
    return [line["type"] for line in lines]


def flop(hand: HandPlay, cards=("2c", "7d", "Ks"), burn: bool = True) -> list[dict]:
    out = hand.burn(0) if burn else []
    return out + hand.board({"type": "board", "cards": list(cards)}, 0)


def card(hand: HandPlay, c: str, burn: bool = True) -> list[dict]:
    out = hand.burn(0) if burn else []
    return out + hand.board({"type": "board", "cards": [c]}, 0)


# ---- turn order -----------------------------------------------------------------------------------


def test_preflop_starts_left_of_big_blind_and_postflop_left_of_button():
    """corner_pocket:Basic Play.D (left of the big blind first pre-flop) and .E (dealer's left after)."""
    hand = new_hand("corner_pocket")
    assert hand.to_act == 3
    for seat in (3, 4, 5, 6, 1):
        act(hand, seat, "call")
    assert hand.to_act == 2  # the big blind's option
    out = act(hand, 2, "check")
    assert types(out) == ["pots"] and out[0]["pots"] == [{"amount": 600, "eligible": [1, 2, 3, 4, 5, 6]}]
    assert hand.to_act is None
    flop(hand)
    assert hand.street == "flop" and hand.to_act == 1


def test_heads_up_button_posts_small_blind_acts_first_preflop_last_after():
    """bluff_street:32: the small blind is on the button, acts first pre-flop and last on all other rounds."""
    hand = new_hand("bluff_street", stacks={2: 5000, 5: 5000}, button=5)
    assert hand.setup.sb_seat == 5 and hand.stacks == {2: 4900, 5: 4950}
    assert hand.to_act == 5
    act(hand, 5, "call")
    assert hand.to_act == 2
    act(hand, 2, "check")
    flop(hand)
    assert hand.to_act == 2  # the big blind acts first after the flop
    act(hand, 2, "check")
    assert hand.to_act == 5


def test_short_blinds_post_all_in_for_less():
    """cool_mule:7.p: a player lacking chips for a blind gets action on what they have."""
    hand = new_hand("cool_mule", stacks={1: 30, 2: 60, 3: 1000})
    assert hand.stacks[1] == 0 and hand.stacks[2] == 0  # SB posts 30, BB posts 60: both all in
    assert hand.to_act == 3
    out = act(hand, 3, "call")
    assert hand.acted == [(3, "call", 100)]  # the call is the full big blind
    # The 40 over the short big blind is uncalled and comes back.
    returned = [o for o in out if o["type"] == "uncalled_returned"]
    assert returned == [
        {"type": "uncalled_returned", "seat": 3, "amount": 40, "rule": "corner_pocket:Betting.K"}
    ]
    assert out[-1]["pots"] == [{"amount": 90, "eligible": [1, 2, 3]}, {"amount": 60, "eligible": [2, 3]}]


def test_antes_come_before_the_blinds():
    """bar_league:Ante First: antes are paid before any other bet, even when it leaves a short blind."""
    hand = new_hand("bar_league", stacks={1: 120, 2: 5000, 3: 5000}, ante=100)
    assert hand.total[1] == 120 and hand.stacks[1] == 0  # 100 ante, then only 20 of the small blind
    assert hand.round_in[1] == 20


def test_big_blind_ante_is_paid_by_the_big_blind_only():
    hand = new_hand(stacks={1: 5000, 2: 5000, 3: 5000}, ante=150, big_blind_ante=True)
    assert hand.stacks == {1: 4950, 2: 4750, 3: 5000}


# ---- the board ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "procedure", "rule"),
    [
        ("cool_mule", "reshuffle_keep_burn", "cool_mule:5.k"),
        ("bar_league", "reshuffle_keep_burn", "bar_league:Premature Community Cards(a)"),
        ("dragons_den", "reshuffle_keep_burn", "dragons_den:47"),
        ("corner_pocket", "reshuffle_keep_burn", "corner_pocket:Dealing.F"),
        ("bluff_street", "reshuffle_keep_burn", "dragons_den:47"),
    ],
)
def test_premature_flop_is_redealt(profile, procedure, rule):
    """A flop turned before the pre-flop betting is complete: the burn stays, the flop goes back."""
    hand = new_hand(profile)
    act(hand, 3, "call")
    out = flop(hand)
    assert out == [{"type": "board_redeal", "street": "flop", "procedure": procedure, "rule": rule}]
    assert hand.board_cards == [] and hand.street == "preflop" and hand.to_act == 4


@pytest.mark.parametrize(
    ("profile", "procedure", "rule"),
    [
        ("cool_mule", "reshuffle_keep_burn", "cool_mule:5.l"),
        ("bar_league", "reshuffle_keep_burn", "bar_league:Premature Community Cards(b)"),
        ("dragons_den", "next_card_then_reshuffle", "dragons_den:48"),
        ("corner_pocket", "next_card_then_reshuffle", "corner_pocket:Dealing.I"),
    ],
)
def test_premature_turn_procedure_differs_by_rulebook(profile, procedure, rule):
    hand = _to_flop(profile)
    act(hand, 1, "check")
    out = card(hand, "9h")
    assert out == [{"type": "board_redeal", "street": "turn", "procedure": procedure, "rule": rule}]
    act(hand, 2, "check")
    assert hand.to_act is None
    if procedure == "next_card_then_reshuffle":
        # The would-be river is burned and dealt as the turn; the river then comes without a burn.
        assert card(hand, "Th") == []
        act(hand, 1, "check")
        act(hand, 2, "check")
        assert card(hand, "Jh", burn=False) == []
    else:
        # The new turn comes without a new burn.
        assert card(hand, "Th", burn=False) == []
    assert "burn_missing" not in types(hand.finish(0))


def _to_flop(profile: str) -> HandPlay:
    hand = new_hand(profile, stacks={1: 5000, 2: 5000, 3: 5000})
    act(hand, 3, "fold")
    act(hand, 1, "call")
    act(hand, 2, "check")
    flop(hand)
    return hand


@pytest.mark.parametrize(
    ("profile", "procedure", "rule"),
    [
        ("bluff_street", "scramble_pick_burn", "bluff_street:34"),
        ("dragons_den", "redeal_flop", "dragons_den:46"),
        ("corner_pocket", "redeal_flop", "corner_pocket:Dealing.F"),
        ("cool_mule", "redeal_flop", "cool_mule:5.k"),
        ("bar_league", "redeal_flop", "dragons_den:46"),
    ],
)
def test_four_card_flop(profile, procedure, rule):
    hand = new_hand(profile, stacks={1: 5000, 2: 5000})
    act(hand, 2, "call")
    act(hand, 1, "check")
    out = flop(hand, ("2c", "7d", "Ks", "Ah"))
    assert out == [{"type": "board_redeal", "street": "flop", "procedure": procedure, "rule": rule}]
    assert flop(hand, ("2c", "7d", "Ks"), burn=False) == []  # the flop that replaces it needs no new burn
    assert hand.board_cards == ["2c", "7d", "Ks"]


def test_missing_burn_is_noted_and_the_card_stands():
    """corner_pocket:Dealing.D: no burn card for that round, the card dealt stands."""
    hand = _to_flop("corner_pocket")
    act(hand, 1, "check")
    act(hand, 2, "check")
    out = card(hand, "9h", burn=False)
    assert out == [{"type": "burn_missing", "street": "turn", "rule": "corner_pocket:Dealing.D"}]
    assert hand.board_cards[-1] == "9h" and hand.street == "turn"


def test_board_with_wrong_count_or_duplicate_is_rejected_and_changes_nothing():
    hand = new_hand(stacks={1: 5000, 2: 5000})
    act(hand, 2, "call")
    act(hand, 1, "check")
    with pytest.raises(Rejected, match="a flop is 3 cards"):
        hand.board({"cards": ["2c", "7d"]}, 0)
    with pytest.raises(Rejected, match="same card twice"):
        hand.board({"cards": ["2c", "2c", "7d"]}, 0)
    flop(hand)
    act(hand, 1, "check")
    act(hand, 2, "check")
    with pytest.raises(Rejected, match="already in the board"):
        hand.board({"cards": ["Ks"]}, 0)
    assert hand.board_cards == ["2c", "7d", "Ks"] and hand.street == "flop"


# ---- rejections leave the hand unchanged -----------------------------------------------------------


def test_impossible_actions_are_rejected_without_changing_state():
    hand = new_hand(stacks={1: 5000, 2: 5000, 3: 300})
    snapshot = (dict(hand.stacks), dict(hand.total), hand.to_act, list(hand.acted))
    with pytest.raises(Rejected, match="not dealt in"):
        act(hand, 5, "call")
    with pytest.raises(Rejected, match="stack is 300"):
        act(hand, 3, "raise", to=1000)
    act(hand, 3, "fold")
    with pytest.raises(Rejected, match="has folded"):
        act(hand, 3, "call")
    assert (dict(hand.stacks), dict(hand.total)) == snapshot[:2]
    assert hand.to_act == 1


def test_kill_folds_the_hand_and_moves_the_action():
    """The engine kills a hand (e.g. absent at its turn, corner_pocket:General Rules.I): it is folded."""
    hand = new_hand(stacks={1: 5000, 2: 5000, 3: 5000})
    assert hand.to_act == 3
    assert hand.kill(3, "absent") == []
    assert hand.to_act == 1 and 3 not in hand.live
    act(hand, 1, "fold")
    assert hand.to_act is None
    out = hand.finish(0)
    assert out[-1]["winners"] == [2] and hand.stacks == {1: 4950, 2: 5050, 3: 5000}


def test_acted_records_ruled_actions_for_substantial_action_counting():
    hand = new_hand(stacks={1: 5000, 2: 5000, 3: 5000})
    act(hand, 3, "raise", to=300)
    act(hand, 1, "fold")
    act(hand, 2, "call")
    assert hand.acted == [(3, "raise", 300), (1, "fold", 0), (2, "call", 200)]


@pytest.mark.parametrize(
    ("profile", "rule"),
    [
        ("cool_mule", "cool_mule:5.m"),
        ("bar_league", "bar_league:Premature Community Cards(c)"),
        ("dragons_den", "dragons_den:48"),
        ("corner_pocket", "corner_pocket:Dealing.J"),
        ("bluff_street", "dragons_den:48"),
    ],
)
def test_premature_river_is_reshuffled_and_dealt_without_a_burn(profile, rule):
    hand = _to_flop(profile)
    act(hand, 1, "check")
    act(hand, 2, "check")
    card(hand, "9h")
    act(hand, 1, "bet", to=200)
    out = card(hand, "Th")  # the river before seat 2 acted on the turn
    assert out == [
        {"type": "board_redeal", "street": "river", "procedure": "reshuffle_keep_burn", "rule": rule}
    ]
    act(hand, 2, "call")
    assert card(hand, "Jh", burn=False) == []
    assert hand.board_cards == ["2c", "7d", "Ks", "9h", "Jh"] and hand.to_act == 1


def test_turn_and_river_together_the_turn_stands():
    hand = _to_flop("bar_league")
    act(hand, 1, "check")
    act(hand, 2, "check")
    hand.burn(0)
    out = hand.board({"cards": ["9h", "Th"]}, 0)
    assert out == [
        {
            "type": "board_redeal",
            "street": "river",
            "procedure": "reshuffle_keep_burn",
            "rule": "bar_league:Premature Community Cards(c)",
        }
    ]
    assert hand.board_cards == ["2c", "7d", "Ks", "9h"] and hand.street == "turn" and hand.to_act == 1


# ---- bad input never crashes the hand -------------------------------------------------------------------

_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 30_000),
    st.text(max_size=6),
    st.lists(
        st.one_of(st.integers(-5, 5000), st.sampled_from(["Ah", "Kd", "2c", "ah", "Xx", "Ah"])), max_size=6
    ),
)
_EVENTS = st.fixed_dictionaries(
    {"kind": st.sampled_from(["action", "board", "show", "muck", "burn", "kill"])},
    optional={
        "seat": st.one_of(st.integers(-1, 8), _VALUES),
        "action": st.one_of(st.sampled_from(["fold", "check", "call", "bet", "raise", "allin"]), _VALUES),
        "to": _VALUES,
        "chips": _VALUES,
        "declared": _VALUES,
        "cards": _VALUES,
    },
)


def _observable(hand) -> tuple:
    """What a rejected line must leave as it was."""
    return (
        dict(hand.stacks),
        dict(hand.total),
        hand.to_act,
        list(hand.board_cards),
        dict(hand.shown),
        set(hand.folded),
        hand.street,
    )


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(["cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"]),
    st.lists(_EVENTS, max_size=40),
)
def test_malformed_or_impossible_lines_are_rejected_and_leave_state_unchanged(profile, events):
    hand = new_hand(profile, stacks={1: 3000, 2: 500, 3: 3000, 4: 1200})
    start = hand.chips_in_play()
    for ev in events:
        kind = ev.pop("kind")
        before = _observable(hand)
        try:
            if kind == "action":
                hand.action(ev, 0)
            elif kind == "board":
                hand.board(ev, 0)
            elif kind == "show":
                hand.show(ev, 0)
            elif kind == "muck":
                hand.muck(ev, 0)
            elif kind == "burn":
                hand.burn(0)
            elif isinstance(ev.get("seat"), int):
                hand.kill(ev["seat"], "absent")
        except Rejected:
            after = _observable(hand)
            assert after == before, (kind, ev)
        assert hand.chips_in_play() == start
    hand.finish(0)
    assert sum(hand.stacks.values()) + hand.unawarded == start
