"""Action interpretation per rulebook: each test quotes the rule it checks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from controller.rules.errors import Rejected
from controller.rules.hand_play import HandPlay
from tests.rules.test_hand_play import act, flop, new_hand, types

FIVE = ("cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street")


def _flop_hand(profile: str, stacks: dict[int, int] | None = None, bb: int = 200):
    """Everyone calls pre-flop, the flop is out, seat 1 (left of the button) to act."""
    stacks = stacks or {s: 20_000 for s in range(1, 7)}
    hand = new_hand(profile, stacks=stacks, sb=bb // 2, bb=bb)
    seats = hand.order
    for seat in seats[2:] + seats[:1]:
        act(hand, seat, "call")
    act(hand, seats[1], "check")
    flop(hand)
    assert hand.to_act == seats[0]
    return hand


def ruled(out: list[dict]) -> dict:
    rulings = [o for o in out if o["type"] == "action_ruled"]
    assert len(rulings) == 1, out
    return rulings[0]


# ---- minimum bet and minimum raise ----------------------------------------------------------------


@pytest.mark.parametrize("profile", FIVE)
def test_opening_bet_under_the_big_blind_is_corrected(profile):
    """bar_league:Minimum Bets(a), cool_mule:7.i, corner_pocket:Betting.A: bets are at least the big blind."""
    hand = _flop_hand(profile)
    r = ruled(act(hand, 1, "bet", to=150))
    assert (r["as"], r["to"], r["reason"]) == ("bet", 200, "under_min_bet")
    assert r["rule"] == hand.profile.rule("betting", "under_min_bet")


def test_bar_league_minimum_raise_example():
    """bar_league:Minimum Raises: "Player A bets 200, Player B raises 500 more to 700 total. To raise again,
    the next player must raise to at least 500 more, to 1200 total." """
    hand = _flop_hand("bar_league")
    act(hand, 1, "bet", to=200)
    act(hand, 2, "raise", to=700)
    assert hand.min_raise == 500
    assert act(hand, 3, "raise", to=1200) == []


@pytest.mark.parametrize(
    ("profile", "to", "expected"),
    [
        # bar_league:Insufficient Raise Amounts: 50% or more of the largest prior full bet -> exactly a full
        # minimum raise; not eclipsing 50% -> a call.
        ("bar_league", 950, ("raise", 1200, "under_raise_completed")),
        ("bar_league", 949, ("call", 700, "under_raise_called")),
        # bluff_street:40 and dragons_den:31: "50% or more of the previous bet".
        ("bluff_street", 950, ("raise", 1200, "under_raise_completed")),
        ("dragons_den", 950, ("raise", 1200, "under_raise_completed")),
        # cool_mule:7.j: "If a player raises more than 50% but less than a minimum raise ..." - exactly half
        # is not more than half: a call.
        ("cool_mule", 950, ("call", 700, "under_raise_called")),
        ("cool_mule", 951, ("raise", 1200, "under_raise_completed")),
    ],
)
def test_fifty_percent_rule(profile, to, expected):
    hand = _flop_hand(profile)
    act(hand, 1, "bet", to=200)
    act(hand, 2, "raise", to=700)  # a 500 raise: the next full raise is to 1200, half of it is 250
    r = ruled(act(hand, 3, "raise", to=to))
    assert (r["as"], r["to"], r["reason"]) == expected
    assert r["rule"] == hand.profile.rule("betting", "under_raise")
    assert hand.round_in[3] == expected[1]


# ---- oversized chips and multiple chips ---------------------------------------------------------------


@pytest.mark.parametrize("profile", FIVE)
def test_single_oversized_chip_facing_a_bet_is_a_call(profile):
    """cool_mule:7.k, bar_league:Using Oversized Chips, dragons_den:32, corner_pocket:Betting.H,
    bluff_street:42: a single oversized chip without a declaration is a call."""
    hand = new_hand(profile, stacks={s: 20_000 for s in range(1, 7)}, sb=100, bb=200)
    r = ruled(act(hand, 3, "raise", chips=[1000]))
    assert (r["as"], r["to"], r["reason"]) == ("call", 200, "oversized_chip")
    assert r["rule"] == hand.profile.rule("betting", "oversized_chip")


@pytest.mark.parametrize("profile", FIVE)
def test_declared_raise_with_one_chip_is_the_largest_raise_up_to_the_chip(profile):
    """dragons_den:32 / bluff_street:42: "states raise but does not state the amount, the raise will be the
    maximum allowable up to the size of that chip"; cool_mule:7.n: the chip is the call and raise combined."""
    hand = new_hand(profile, stacks={s: 20_000 for s in range(1, 7)}, sb=100, bb=200)
    assert act(hand, 3, "raise", chips=[1000], declared="raise") == []
    assert hand.round_in[3] == 1000 and hand.current == 1000


@pytest.mark.parametrize("profile", FIVE)
def test_postflop_opening_bet_with_one_chip_is_the_chip_value(profile):
    """cool_mule:7.m, dragons_den:32, bluff_street:42: after the flop an initial bet of an oversized chip
    without comment is a bet of the chip's value."""
    hand = _flop_hand(profile)
    assert act(hand, 1, "bet", chips=[5000]) == []
    assert hand.current == 5000 and hand.last_aggressor == 1


@pytest.mark.parametrize("profile", ["bluff_street", "dragons_den", "cool_mule"])
def test_multi_chip_rule_example(profile):
    """bluff_street:37: "preflop, 200-400 blinds: A raises to 1200 total, B puts out two 1000 chips without
    declaring raise. This is just a call because removing one 1000 chip leaves less than the amount to
    call." dragons_den:33 rules the same."""
    hand = new_hand(profile, stacks={s: 20_000 for s in range(1, 7)}, sb=200, bb=400)
    act(hand, 3, "raise", to=1200)
    r = ruled(act(hand, 4, "raise", chips=[1000, 1000]))
    assert (r["as"], r["to"], r["reason"]) == ("call", 1200, "multi_chip")
    assert r["rule"] == hand.profile.rule("betting", "multi_chip")


def test_multi_chip_bet_with_a_chip_not_needed_is_governed_by_the_fifty_percent_rule():
    """bluff_street:37: if removing one of the smallest chips still leaves the call, the 50% standard
    applies (bluff_street:44: 525 facing 325 is a raise to 650)."""
    hand = new_hand("bluff_street", stacks={s: 20_000 for s in range(1, 7)}, sb=100, bb=200)
    act(hand, 3, "raise", to=325)  # under-raise from 200: completed to 400
    hand2 = _flop_hand("bluff_street", bb=100)
    act(hand2, 1, "bet", to=325)
    r = ruled(act(hand2, 2, "raise", chips=[500, 25]))
    assert (r["as"], r["to"]) == ("raise", 650)
    assert hand.round_in[3] == 400


# ---- invalid declarations ---------------------------------------------------------------------------


@pytest.mark.parametrize("profile", FIVE)
def test_call_facing_no_bet_is_a_check(profile):
    """bluff_street:35.b.1.A: a player facing no bet who declares "call" has checked."""
    hand = _flop_hand(profile)
    r = ruled(act(hand, 1, "call"))
    assert (r["as"], r["reason"]) == ("check", "call_facing_no_bet")
    assert hand.round_in[1] == 0 and hand.to_act == 2


@pytest.mark.parametrize("profile", FIVE)
def test_raise_facing_no_bet_is_at_least_a_minimum_bet(profile):
    """bluff_street:35.b.1.B: declaring "raise" facing no bet: the player must make at least a minimum bet."""
    hand = _flop_hand(profile)
    r = ruled(act(hand, 1, "raise", declared="raise"))
    assert (r["as"], r["to"], r["reason"]) == ("bet", 200, "raise_facing_no_bet")


def test_check_facing_a_bet_allows_only_call_or_fold():
    """bluff_street:35.b.1: "A player declaring check when facing a bet may call or fold, but cannot raise." """
    hand = _flop_hand("bluff_street")
    act(hand, 1, "bet", to=400)
    out = act(hand, 2, "check")
    assert out == [
        {
            "type": "action_limited",
            "seat": 2,
            "options": ["call", "fold"],
            "reason": "check_facing_bet",
            "rule": "bluff_street:35.b.1",
        }
    ]
    assert hand.to_act == 2
    r = ruled(act(hand, 2, "raise", to=2000))
    assert (r["as"], r["to"], r["reason"]) == ("call", 400, "check_facing_bet")


def test_amount_bigger_than_the_stack_is_rejected():
    hand = new_hand(stacks={1: 5000, 2: 5000, 3: 800})
    with pytest.raises(Rejected, match="stack is 800"):
        act(hand, 3, "raise", to=900)
    with pytest.raises(Rejected, match="all in is to 800"):
        act(hand, 3, "allin", to=900)
    assert hand.to_act == 3 and hand.stacks[3] == 800


# ---- re-opening the betting ---------------------------------------------------------------------------


def _reopen_scenario(profile: str):
    """bluff_street:41.a's example: A bets 500, B raises to 1,000, C calls, D all in 1,300, E all in 1,700."""
    stacks = {1: 20_000, 2: 20_000, 3: 20_000, 4: 1_400, 5: 1_800, 6: 20_000}  # 100 goes in pre-flop
    hand = _flop_hand(profile, stacks=stacks, bb=100)
    act(hand, 1, "bet", to=500)
    act(hand, 2, "raise", to=1000)
    act(hand, 3, "call")
    act(hand, 4, "allin")
    act(hand, 5, "allin")
    act(hand, 6, "fold")
    act(hand, 1, "call")  # A faced the full raise to 1000: A could raise; A calls
    assert hand.to_act == 2
    return hand


def test_consecutive_short_all_ins_reopen_the_betting_at_bluff_street():
    """bluff_street:41.a: "Participants B or C would be allowed to call 1,700 and raise 500 for a total wager
    of 2,200." """
    hand = _reopen_scenario("bluff_street")
    assert act(hand, 2, "raise", to=2200) == []
    assert hand.current == 2200


@pytest.mark.parametrize(
    ("profile", "rule"),
    [
        ("bar_league", "bar_league:Re-Opening Betting Action(b)"),
        ("cool_mule", "cool_mule:7.q"),
        ("dragons_den", "dragons_den:31"),
    ],
)
def test_short_all_ins_do_not_reopen_for_players_who_acted(profile, rule):
    """cool_mule:7.q: "Anytime there is less than a full raise (all in), the betting is not reopened for
    players who have already acted." """
    hand = _reopen_scenario(profile)
    r = ruled(act(hand, 2, "raise", to=2200))
    assert (r["as"], r["to"], r["reason"], r["rule"]) == ("call", 1700, "betting_not_reopened", rule)


def test_corner_pocket_all_in_of_half_a_bet_counts_as_a_full_bet():
    """corner_pocket:Betting.M: "An all-in wager of half a bet or more is treated as a full bet and a player
    may fold, call or make a full raise." """
    stacks = {1: 20_000, 2: 20_000, 3: 1_350}
    hand = _flop_hand("corner_pocket", stacks=stacks, bb=100)
    act(hand, 1, "bet", to=1000)
    act(hand, 2, "call")
    act(hand, 3, "allin")  # 250 over a 1000 bet: less than half -> does not reopen
    r = ruled(act(hand, 1, "raise", to=3000))
    assert (r["as"], r["reason"]) == ("call", "betting_not_reopened")
    hand = _flop_hand("corner_pocket", stacks={1: 20_000, 2: 20_000, 3: 1_600}, bb=100)
    act(hand, 1, "bet", to=1000)
    act(hand, 2, "call")
    act(hand, 3, "allin")  # 500 over a 1000 bet: half a bet -> treated as a full bet
    assert act(hand, 1, "raise", to=3000) == []


# ---- out of turn ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("profile", "rule"),
    [
        ("bar_league", "bar_league:Out-of-Turn Actions(b)"),
        ("dragons_den", "dragons_den:29"),
        ("bluff_street", "bluff_street:35.d"),
    ],
)
def test_out_of_turn_action_binds_when_the_action_did_not_change(profile, rule):
    """bar_league:Out-of-Turn Actions(b)/(c): binding unless first changed by a bet or raise; a check, call
    or fold does not change the action."""
    hand = new_hand(profile)
    out = act(hand, 5, "call")  # seat 3 is to act
    assert out == [{"type": "out_of_turn", "seat": 5, "expected": 3, "rule": rule, "binding": True}]
    assert hand.to_act == 3 and hand.round_in[5] == 0
    act(hand, 3, "call")
    out = act(hand, 4, "fold")
    assert out[0]["type"] == "action_ruled" and (out[0]["seat"], out[0]["as"], out[0]["reason"]) == (
        5,
        "call",
        "out_of_turn_binding",
    )
    assert hand.round_in[5] == 100 and hand.to_act == 6


def test_out_of_turn_action_is_released_when_a_raise_changes_the_action():
    """bar_league:Out-of-Turn Actions(b): changed by the corrected sequence, the player has all options."""
    hand = new_hand("bar_league")
    act(hand, 5, "call")
    act(hand, 3, "raise", to=300)
    act(hand, 4, "fold")
    assert hand.to_act == 5 and hand.round_in[5] == 0
    assert act(hand, 5, "raise", to=900) == []


def test_out_of_turn_fold_is_binding():
    """dragons_den:29: "An out of turn fold is binding." """
    hand = new_hand("dragons_den")
    out = act(hand, 6, "fold")
    assert out[0]["binding"] is True and 6 not in hand.live and hand.to_act == 3


def test_cool_mule_first_offence_is_not_binding_the_next_one_is():
    """cool_mule:7.d: "Accidentally acting out of turn is not binding on the first offence. Further offences
    of acting out of turn (accidental or not) are binding." """
    hand = new_hand("cool_mule")
    out = act(hand, 5, "call")
    assert out[0]["binding"] is False and 5 not in hand.pending and hand.round_in[5] == 0
    warned = HandPlay(hand.profile, replace(hand.setup, prior_offences=frozenset({5})))
    out = act(warned, 5, "call")
    assert out[0]["binding"] is True and 5 in warned.pending


def test_cool_mule_check_out_of_turn_binds_when_nobody_bets():
    """cool_mule:7.e: "A player who checks out of turn may not bet on their turn to act if there has been no
    action." """
    hand = _flop_hand("cool_mule", stacks={1: 5000, 2: 5000, 3: 5000}, bb=100)
    out = act(hand, 3, "check")  # seat 1 is to act
    assert out[0]["binding"] is True and 3 in hand.pending
    act(hand, 1, "check")
    out = act(hand, 2, "check")
    assert out[0]["type"] == "action_ruled" and (out[0]["seat"], out[0]["as"]) == (3, "check")
    assert hand.to_act is None


def test_cool_mule_out_of_turn_player_may_not_raise_after_an_intervening_raise():
    """cool_mule:7.f: "If the action by an intervening player is a raise, the player acting out of turn may
    not raise - they may either complete their out of turn action and fold or call." """
    hand = new_hand("cool_mule")
    hand = HandPlay(hand.profile, replace(hand.setup, prior_offences=frozenset({5})))
    act(hand, 5, "call")
    act(hand, 3, "raise", to=300)
    act(hand, 4, "fold")
    r = ruled(act(hand, 5, "raise", to=900))
    assert (r["as"], r["to"], r["rule"]) == ("call", 300, "cool_mule:7.d")


def test_corner_pocket_out_of_turn_chips_are_lost():
    """corner_pocket:General Rules.D: "Acting out of turn results in lose of those chips, no warning will be
    given." The player still acts in turn."""
    hand = new_hand("corner_pocket")
    out = act(hand, 5, "call")
    assert out[0]["chips_lost"] == 100 and hand.stacks[5] == 9_900 and hand.dead == 100
    assert hand.to_act == 3
    for seat in (3, 4):
        act(hand, seat, "call")
    assert hand.to_act == 5
    act(hand, 5, "call")
    assert hand.stacks[5] == 9_800


# ---- uncalled bets ------------------------------------------------------------------------------------


def test_uncalled_bet_is_returned():
    """corner_pocket:Betting.K: the excess part of the bet is returned to the bettor."""
    hand = _flop_hand("corner_pocket", stacks={1: 5000, 2: 5000, 3: 5000}, bb=100)
    act(hand, 1, "bet", to=800)
    act(hand, 2, "fold")
    out = act(hand, 3, "fold")
    assert out[0] == {
        "type": "uncalled_returned",
        "seat": 1,
        "amount": 800,
        "rule": "corner_pocket:Betting.K",
    }
    assert types(out) == ["uncalled_returned", "pots"]
    assert hand.stacks[1] == 4900
