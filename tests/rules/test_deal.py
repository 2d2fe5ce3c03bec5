"""The deal monitor: every misdeal reason of the spec, gated and cited per rulebook."""

from __future__ import annotations

import pytest

from tests.rules.tablekit import HAND_END, HAND_START, LEVEL, Table, act, deal, of_type, seat

PROFILES = ["cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"]


def start(profile: str, players=(1, 2, 3, 4, 5), button: int = 1) -> tuple[Table, dict]:
    t = Table(profile, players=list(players))
    t.feed({"type": "button", "seat": button})
    return t, t.hand()


def misdeals(lines: list[dict]) -> list[tuple[str, str]]:
    return [(o["reason"], o["rule"]) for o in of_type(lines, "misdeal")]


@pytest.mark.parametrize(
    ("profile", "second_card_misdeal", "rule"),
    [
        ("cool_mule", True, "cool_mule:5.g"),
        ("bar_league", True, "bar_league:Misdeals(a)"),
        ("dragons_den", True, "dragons_den:27.a"),
        ("bluff_street", True, "bluff_street:33.a.6"),
        ("corner_pocket", False, "corner_pocket:Dealing.E"),
    ],
)
def test_first_cards_exposed(profile, second_card_misdeal, rule):
    """cool_mule:5.g "if the first or second card off the deck is exposed, this is a misdeal";
    corner_pocket:Dealing.E "If the first holecard dealt is exposed, a misdeal results. If any other holecard
    is exposed ... the deal continues"."""
    t, h = start(profile)
    first, second = h["dealt_in"][0], h["dealt_in"][1]
    assert misdeals(t.feed(deal(first, "Kd"))) == [("first_cards_exposed", rule)]
    t.feed(HAND_START)
    out = t.feed(deal(first), deal(second, "7s"))
    if second_card_misdeal:
        assert misdeals(out) == [("first_cards_exposed", rule)]
    else:
        assert of_type(out, "replace_exposed") == [
            {"type": "replace_exposed", "seat": second, "card": "7s", "rule": rule}
        ]


@pytest.mark.parametrize("profile", PROFILES)
def test_single_exposed_card_is_replaced_and_the_seat_gets_the_next_card(profile):
    """cool_mule:5.j "the dealer continues to deal all the hole cards. The dealer then deals one more card to
    the player who had their card exposed ... [it] becomes the first burn card." """
    t, h = start(profile)
    order = h["dealt_in"]
    out = t.feed(deal(order[0]), deal(order[1]), deal(order[2], "9h"))
    assert [o["type"] for o in out] == ["replace_exposed"]
    for s in order[3:] + order:
        assert t.feed(deal(s)) == []
    # The exposed seat's replacement completes the deal: no wrong-count ruling.
    assert t.feed(deal(order[2])) == []
    assert t.engine.hand.deal.complete


@pytest.mark.parametrize("profile", PROFILES)
def test_two_exposed_cards_are_a_misdeal(profile):
    """cool_mule:5.h "if more than one card is exposed, this is a misdeal" (bar_league:Misdeals(c),
    dragons_den:27.b, corner_pocket:Dealing.E, bluff_street:33.a.6)."""
    t, h = start(profile)
    order = h["dealt_in"]
    t.feed(deal(order[0]), deal(order[1]), deal(order[2], "9h"))
    out = t.feed(deal(order[3], "2c"))
    assert [r for r, _ in misdeals(out)] == ["multiple_exposed"]


def test_bar_league_button_card_exposed():
    """bar_league:Misdeals(b) "any card intended for the button position is exposed"; elsewhere it is
    replaced like any other card (cool_mule:5.j)."""
    for profile, expected in (("bar_league", ["button_card_exposed"]), ("cool_mule", [])):
        t, h = start(profile)
        order = h["dealt_in"]
        assert order[-1] == h["button"]
        out = t.feed(*[deal(s) for s in order[:-1]], deal(order[-1], "Ac"))
        assert [r for r, _ in misdeals(out)] == expected, profile


@pytest.mark.parametrize("profile", PROFILES)
def test_first_card_to_the_wrong_seat(profile):
    """bar_league:Misdeals(g) "the first hole card was dealt to the wrong position"; dragons_den:27.c,
    bluff_street:33.a.2 (borrowed by the others)."""
    t, h = start(profile)
    out = t.feed(deal(h["dealt_in"][1]))
    assert [r for r, _ in misdeals(out)] == ["first_card_wrong_seat"]


@pytest.mark.parametrize("profile", PROFILES)
def test_card_to_a_seat_not_entitled(profile):
    """dragons_den:27.d / bluff_street:33.a.3 "cards dealt to a seat not entitled to a hand"."""
    t, h = start(profile, players=(1, 2, 3, 4, 6))
    out = t.feed(deal(h["dealt_in"][0]), deal(5))
    assert [r for r, _ in misdeals(out)] == ["dealt_to_ineligible_seat"]


def test_card_to_a_sitting_out_seat_is_to_a_seat_not_entitled():
    t = Table("bluff_street", players=[1, 2, 5, 7])
    t.feed({"type": "button", "seat": 1})
    t.hand()
    t.feed(HAND_END, seat(3, "M", moved=True))
    h = t.hand()
    assert h["sitting_out"] and 3 not in h["dealt_in"]
    out = t.feed(deal(h["dealt_in"][0]), deal(3))
    assert [r for r, _ in misdeals(out)] == ["dealt_to_ineligible_seat"]


@pytest.mark.parametrize("profile", PROFILES)
def test_a_seat_entitled_to_a_hand_dealt_out(profile):
    """dragons_den:27.e / bluff_street:33.a.4 "a seat entitled to a hand is dealt out"."""
    t, h = start(profile)
    order = h["dealt_in"]
    skipped = order[2]
    lines = [deal(s) for s in order if s != skipped]
    out = t.feed(*lines, deal(order[0]), deal(order[1]), deal(order[3]))
    assert [r for r, _ in misdeals(out)] == ["eligible_seat_dealt_out"]


@pytest.mark.parametrize("profile", PROFILES)
def test_the_button_may_take_two_consecutive_cards(profile):
    """dragons_den:27 / bluff_street:33.a.6.i "Players may be dealt two consecutive cards on the button." """
    t, h = start(profile)
    order = h["dealt_in"]
    out = t.feed(
        *[deal(s) for s in order[:-1]], *[deal(s) for s in order[:-1]], deal(order[-1]), deal(order[-1])
    )
    assert misdeals(out) == []
    assert t.engine.hand.deal.complete


@pytest.mark.parametrize("profile", PROFILES)
def test_third_card_to_a_seat_mid_deal_is_a_wrong_card_count(profile):
    t, h = start(profile)
    order = h["dealt_in"]
    out = t.feed(*[deal(s) for s in order], deal(order[0]), deal(order[1]), deal(order[1]))
    assert [r for r, _ in misdeals(out)] == ["wrong_card_count"]


def test_extra_card_to_the_first_player_then_a_second_one():
    """cool_mule:5.i "if the dealer mistakenly deals the first player an extra card after all players have
    received their starting hands, the card will be ... used for the first burn card. If the dealer mistakenly
    deals more than one extra card, this is a misdeal." """
    t, h = start("cool_mule")
    t.deal_all(h)
    first = h["dealt_in"][0]
    assert t.feed(deal(first)) == [{"type": "extra_card", "seat": first, "rule": "cool_mule:5.i"}]
    assert misdeals(t.feed(deal(h["dealt_in"][1]))) == [("too_many_extra_cards", "cool_mule:5.i")]


def test_surplus_card_to_another_seat_after_the_deal_is_a_wrong_card_count():
    t, h = start("cool_mule")
    t.deal_all(h)
    assert [r for r, _ in misdeals(t.feed(deal(h["dealt_in"][2])))] == ["wrong_card_count"]


@pytest.mark.parametrize(
    ("profile", "misdeal"),
    [
        ("bluff_street", True),
        ("bar_league", True),
        ("cool_mule", True),
        ("dragons_den", True),
        ("corner_pocket", False),
    ],
)
def test_two_boxed_cards(profile, misdeal):
    """bluff_street:33.a.1 "2 or more boxed cards on the initial deal" and bar_league:Misdeals(d) are
    misdeals; corner_pocket:Dealing.G treats every boxed card as a scrap of paper, replaced."""
    t, _h = start(profile)
    first = t.feed({"type": "boxed", "card": "4d"})
    assert first[0]["type"] == "boxed_card"
    out = t.feed({"type": "boxed", "card": "5d"})
    if misdeal:
        assert [r for r, _ in misdeals(out)] == ["multiple_boxed"]
    else:
        assert out[0] == {
            "type": "boxed_card",
            "card": "5d",
            "procedure": "replace",
            "rule": "corner_pocket:Dealing.G",
        }


def test_single_boxed_card_procedures():
    """bar_league:Boxed Cards "Boxed cards are never replaced during a hand in progress"; after substantial
    action the others show and discard it too."""
    t, _h = start("bar_league")
    assert t.feed({"type": "boxed", "card": "4d"})[0]["procedure"] == "discard"
    t, _h = start("bluff_street")
    assert t.feed({"type": "boxed", "card": "4d"})[0]["procedure"] == "replace"


@pytest.mark.parametrize("profile", PROFILES)
def test_button_in_the_wrong_place(profile):
    """Before the deal the table says where the button goes; once the deal started it is a misdeal
    (bar_league:Misdeals(e) "the button is revealed to be in the wrong position")."""
    t, h = start(profile)
    out = t.feed({"type": "button_seen", "seat": 3})
    assert out[0]["type"] == "button_misplaced" and (out[0]["expected"], out[0]["seen"]) == (1, 3)
    assert t.feed({"type": "button_seen", "seat": 1}) == []
    t.feed(deal(h["dealt_in"][0]))
    assert [r for r, _ in misdeals(t.feed({"type": "button_seen", "seat": 4}))] == ["button_misplaced"]


def test_redeal_is_an_exact_replay():
    """bluff_street:33.b "the re-deal is an exact re-play: the button does not move, no new Participants are
    seated, and limits stay the same." """
    t, h = start("bluff_street", players=(1, 2, 4, 6))
    t.feed(deal(h["dealt_in"][0], "As"))
    t.feed(seat(3, "LATE"), {"type": "level", "sb": 100, "bb": 200})
    again = t.hand()
    assert again["redeal"] is True and again["number"] == h["number"]
    for key in ("button", "sb", "bb", "dealt_in", "dead_button"):
        assert again[key] == h[key]
    assert t.engine.hand.level.bb == 100
    t.feed(HAND_END)
    nxt = t.hand()
    assert nxt["number"] == h["number"] + 1 and t.engine.hand.level.bb == 200


def test_no_misdeal_after_substantial_action_wrong_count_kills_the_hand_instead():
    """bar_league:Misdeals "A misdeal may only be declared if substantial action has not yet occurred"; a
    wrong card count then makes that hand dead (cool_mule:5.o)."""
    t = Table("bar_league", players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1})
    h = t.hand()
    t.deal_all(h)
    utg = h["dealt_in"][2]
    out = t.feed(act(utg, "call", 100))
    assert of_type(out, "substantial_action") == [
        {"type": "substantial_action", "rule": "bar_league:Substantial Action"}
    ]
    out = t.feed(deal(utg))
    assert of_type(out, "misdeal") == []
    assert of_type(out, "dead_hand") == [
        {
            "type": "dead_hand",
            "seat": utg,
            "reason": "wrong_card_count",
            "rule": "cool_mule:5.o",
            "borrowed_from": "cool_mule",
        }
    ]


def test_late_card_before_substantial_action_is_a_misdeal():
    """A `deal` after betting began: the hand had the wrong card count when the action started. (Not at
    Bluff Street, where the late card is the button's: bluff_street:53 "the button may receive his or her
    final card, even if substantial action has occurred"; tests/rules/test_rulebook_fidelity.py.)"""
    t = Table("cool_mule", players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1})
    h = t.hand()
    order = h["dealt_in"]
    t.feed(*[deal(s) for s in order], *[deal(s) for s in order[:-1]])
    t.feed(act(order[2], "fold"))
    assert [r for r, _ in misdeals(t.feed(deal(order[-1])))] == ["wrong_card_count"]


@pytest.mark.parametrize(
    ("profile", "reached_after"),
    [
        ("bar_league", ["call"]),  # one aggressive action
        ("bar_league", ["fold", "fold", "fold"]),  # three passive ones
        ("bluff_street", ["fold", "call"]),  # two actions, one with chips
        ("dragons_den", ["fold", "fold", "fold"]),  # three actions
        ("cool_mule", ["fold", "fold"]),  # two players acted
        ("corner_pocket", ["fold", "call"]),
    ],
)
def test_substantial_action_definitions(profile, reached_after):
    t = Table(profile, players=[1, 2, 3, 4, 5, 6], stack=10000)
    t.feed({"type": "button", "seat": 1})
    h = t.hand()
    t.deal_all(h)
    order = h["dealt_in"][2:] + h["dealt_in"][:2]
    seen = []
    for seat_no, kind in zip(order, reached_after, strict=False):
        out = t.feed(act(seat_no, kind, 100 if kind == "call" else None))
        seen.append(bool(of_type(out, "substantial_action")))
    assert seen == [False] * (len(reached_after) - 1) + [True]


def test_two_folds_are_not_substantial_under_tda():
    """bluff_street:33.c.1 "any 2 actions except 2 checks or 2 folds"."""
    t = Table("bluff_street", players=[1, 2, 3, 4, 5, 6], stack=10000)
    t.feed({"type": "button", "seat": 1})
    h = t.hand()
    t.deal_all(h)
    out = t.feed(act(h["dealt_in"][2], "fold"), act(h["dealt_in"][3], "fold"))
    assert of_type(out, "substantial_action") == []
    assert of_type(t.feed(deal(h["dealt_in"][4])), "misdeal")


def test_player_exposure_kills_only_in_corner_pocket():
    """corner_pocket:Exposing Cards.A "A player who exposes his cards during the play will have his hand
    killed"; cool_mule:9.i "will not have his hand killed"."""
    for profile, dead in (("corner_pocket", True), ("cool_mule", False), ("bluff_street", False)):
        t = Table(profile, players=[1, 2, 3, 4], stack=10000)
        t.feed({"type": "button", "seat": 1})
        h = t.hand()
        t.deal_all(h)
        out = t.feed({"type": "expose", "seat": 4, "card": "Qs", "by": "player"})
        assert bool(of_type(out, "dead_hand")) is dead, profile
        if dead:
            assert out[0] == {
                "type": "dead_hand",
                "seat": 4,
                "reason": "exposed_cards",
                "rule": "corner_pocket:Exposing Cards.A",
            }


# Not Corner Pocket: there the absent hand is folded at his turn (corner_pocket:General Rules.I, Blinds.B
# "his hand folded in turn"), tests/rules/test_rulebook_fidelity.py.
@pytest.mark.parametrize("profile", [p for p in PROFILES if p != "corner_pocket"])
def test_absent_player_is_dealt_in_and_dead_when_the_deal_is_complete(profile):
    """cool_mule:5.n "An absent player is always dealt a hand, and their blinds must be posted by the dealer.
    Once the last card is dealt, the hand of an absent player is dead." """
    t = Table(profile, players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1}, {"type": "away", "seat": 3})
    h = t.hand()
    assert 3 in h["dealt_in"]
    out = t.deal_all(h)
    dead = of_type(out, "dead_hand")
    assert [(d["seat"], d["reason"]) for d in dead] == [(3, "absent")]
    # and it comes exactly with the last card
    assert out[-1]["type"] in ("dead_hand", "pots") and dead[0] in out


def test_player_back_before_the_last_card_keeps_a_live_hand():
    t = Table("bluff_street", players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1}, {"type": "away", "seat": 3})
    h = t.hand()
    t.feed(*[deal(s) for s in h["dealt_in"]], {"type": "back", "seat": 3})
    out = t.feed(*[deal(s) for s in h["dealt_in"]])
    assert of_type(out, "dead_hand") == []


def test_deal_after_a_misdeal_is_refused_until_the_redeal():
    t, h = start("cool_mule")
    t.feed(deal(h["dealt_in"][0], "Ad"))
    out = t.feed(deal(h["dealt_in"][1]))
    assert out[0]["type"] == "error" and "void after a misdeal" in out[0]["message"]


def test_level_applies_to_next_hand():
    t = Table("cool_mule", players=[1, 2, 3], stack=5000)
    t.feed({"type": "level", "sb": 25, "bb": 50})
    t.hand()
    assert t.engine.hand.level.bb == 50 and LEVEL["bb"] == 100


def test_penalty_in_hands_keeps_the_player_dealt_in_with_a_dead_hand():
    """dragons_den:40 "For the period of the penalty, the offender shall remain away from the table but will
    continue to be dealt in"; cool_mule:11.c blinds are posted for them. Served, they play again."""
    t = Table("dragons_den", players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1})
    out = t.feed({"type": "penalty", "seat": 3, "reason": "soft play", "hands": 1})
    assert out == [
        {
            "type": "penalty",
            "seat": 3,
            "player": "P3",
            "reason": "soft play",
            "hands": 1,
            "rule": "dragons_den:40",
        }
    ]
    h = t.hand()
    assert 3 in h["dealt_in"]
    dead = of_type(t.deal_all(h), "dead_hand")
    assert [(d["seat"], d["reason"]) for d in dead] == [(3, "absent")]
    t.feed(HAND_END)
    h2 = t.hand()
    assert of_type(t.deal_all(h2), "dead_hand") == []
    assert t.feed({"type": "penalty", "seat": 3, "reason": "x"})[0]["type"] == "error"
