"""Button and blinds under the dead-button rule, for each rulebook, quoting the rule checked."""

from __future__ import annotations

import pytest

from tests.rules.tablekit import HAND_END, HAND_START, SPEC_INPUT, SPEC_OUTPUT, Table, leave, of_type, seat

PROFILES = ["cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"]


def next_hand(t: Table) -> dict:
    t.feed(HAND_END)
    return t.hand()


def test_spec_worked_example_exactly():
    t = Table("cool_mule", seats=6)
    assert t.feed(*SPEC_INPUT[1:]) == SPEC_OUTPUT


@pytest.mark.parametrize(
    ("profile", "button"),
    [("cool_mule", 2), ("corner_pocket", 2), ("bluff_street", 9), ("dragons_den", 9), ("bar_league", 9)],
)
def test_first_button_follows_the_profile(profile, button):
    """cool_mule:4.a / corner_pocket:Before Play Begins.A: "The player who draws seat number 1 ... will be
    the first dealer" (lowest seat when 1 is empty). bluff_street:30: "the button will begin in the seat
    with the first chip stack to the dealer's right" (the highest occupied seat)."""
    t = Table(profile, players=[2, 4, 6, 9])
    assert t.hand()["button"] == button


def test_explicit_button_line_places_the_first_button():
    t = Table("cool_mule", players=[1, 3, 5, 7])
    t.feed({"type": "button", "seat": 5})
    h = t.hand()
    assert (h["button"], h["sb"], h["bb"], h["first_card"]) == (5, 7, 1, 7)


@pytest.mark.parametrize("profile", PROFILES)
def test_big_blind_eliminated_no_small_blind_then_dead_button(profile):
    """cool_mule:10.b "If the player in the big blind is eliminated, the button will move normally and there
    will be no small blind. The following hand, the button will move into the position where the eliminated
    player was, creating a dead button" (corner_pocket:Blinds.D says the same)."""
    t = Table(profile, players=[1, 2, 3, 4, 5])
    t.feed({"type": "button", "seat": 1})
    h1 = t.hand()
    assert (h1["button"], h1["sb"], h1["bb"]) == (1, 2, 3)
    t.feed(HAND_END, leave(3))
    h2 = t.hand()
    assert (h2["button"], h2["sb"], h2["dead_sb_seat"], h2["bb"]) == (2, None, 3, 4)
    assert h2["dead_button"] is False
    h3 = next_hand(t)
    assert (h3["button"], h3["dead_button"], h3["sb"], h3["bb"]) == (3, True, 4, 5)
    # The hand is dealt by the player to the right of the dead button (cool_mule:10.b).
    assert h3["dealer"] == 2
    assert h3["first_card"] == 4
    h4 = next_hand(t)
    assert (h4["button"], h4["dead_button"], h4["sb"], h4["bb"]) == (4, False, 5, 1)


@pytest.mark.parametrize("profile", PROFILES)
def test_small_blind_eliminated_button_moves_to_the_empty_seat(profile):
    """cool_mule:10.c "If the player in the small blind is eliminated, the button will move into the
    position where the eliminated player was, creating a dead button situation." """
    t = Table(profile, players=[1, 2, 3, 4, 5])
    t.feed({"type": "button", "seat": 1})
    t.hand()
    t.feed(HAND_END, leave(2))
    h = t.hand()
    assert (h["button"], h["dead_button"], h["sb"], h["bb"], h["dealer"]) == (2, True, 3, 4, 1)
    assert h["dealt_in"] == [3, 4, 5, 1]
    assert h["rule"]  # a dead button is a ruling and carries its citation


@pytest.mark.parametrize("profile", PROFILES)
def test_both_blinds_eliminated(profile):
    """cool_mule:10.d "If both of the players in the blinds are eliminated in the same hand, the button will
    move into the position where the former small blind was and there will be no small blind. The following
    hand, the button will move into the position where the former big blind was." """
    t = Table(profile, players=[1, 2, 3, 4, 5, 6])
    t.feed({"type": "button", "seat": 1})
    t.hand()
    t.feed(HAND_END, leave(2), leave(3))
    h = t.hand()
    assert (h["button"], h["dead_button"], h["sb"], h["dead_sb_seat"], h["bb"]) == (2, True, None, 3, 4)
    h = next_hand(t)
    assert (h["button"], h["dead_button"], h["sb"], h["bb"]) == (3, True, 4, 5)
    h = next_hand(t)
    assert (h["button"], h["dead_button"], h["sb"], h["bb"]) == (4, False, 5, 6)


@pytest.mark.parametrize("profile", PROFILES)
@pytest.mark.parametrize("busted", [1, 2, 3])
def test_switch_to_heads_up_never_gives_the_big_blind_twice(profile, busted):
    """bluff_street:32 / dragons_den:26: "In heads-up play, the small blind is on the button and acts first.
    When beginning heads-up play, the button may need to be adjusted to ensure no player takes the big blind
    twice in a row." The last card is dealt to the button."""
    t = Table(profile, players=[1, 2, 3])
    t.feed({"type": "button", "seat": 1})
    h1 = t.hand()
    t.feed(HAND_END, leave(busted))
    h2 = t.hand()
    assert h2["bb"] != h1["bb"]
    assert h2["button"] == h2["sb"] and h2["button"] != h2["bb"]
    assert h2["dealt_in"][-1] == h2["button"] and h2["first_card"] == h2["bb"]
    assert h2["dead_button"] is False and h2["dead_sb_seat"] is None
    h3 = next_hand(t)
    assert h3["bb"] == h2["button"] and h3["button"] == h2["bb"]


@pytest.mark.parametrize("profile", PROFILES)
def test_moved_player_between_small_blind_and_button_sits_out_until_the_button_passes(profile):
    """cool_mule:12.k "The only place a moved player cannot be placed is between the small blind and the
    button. ... that player must sit out that hand." (dragons_den:5, bluff_street:11, corner_pocket
    Multi-table rules.B, bar_league:Player Movement say the same.)"""
    t = Table(profile, players=[1, 2, 5, 7])
    t.feed({"type": "button", "seat": 1})
    h1 = t.hand()
    assert (h1["sb"], h1["bb"]) == (2, 5)
    t.feed(HAND_END, seat(3, "M", moved=True))  # seat 3 lies between SB 2 and BB 5
    h2 = t.hand()
    assert (h2["button"], h2["sb"], h2["bb"]) == (2, 5, 7)
    assert h2["sitting_out"] == [{"seat": 3, "reason": "between_sb_and_button"}]
    assert 3 not in h2["dealt_in"]
    h3 = next_hand(t)
    assert 3 in h3["dealt_in"] and h3["sitting_out"] == []


def test_new_player_between_blinds_bar_league_and_cool_mule_deal_in_bluff_street_sits_out():
    """bar_league:New Player Placement: "In all other positions, new players will be dealt in upon arrival";
    cool_mule:6.e "New players to a table are dealt in immediately" (12.k is for moved players only);
    bluff_street:30 counts "the seating of a new Participant into a position between the small blind and
    the button" among what keeps the button from advancing: that player waits."""
    for profile, dealt in (("bar_league", True), ("cool_mule", True), ("bluff_street", False)):
        t = Table(profile, players=[1, 2, 5, 7])
        t.feed({"type": "button", "seat": 1})
        t.hand()
        t.feed(HAND_END, seat(3, "NEW"))
        h = t.hand()
        assert (3 in h["dealt_in"]) is dealt, profile


def test_bar_league_new_player_may_not_take_a_dead_button():
    """bar_league:New Player Placement: "A player who has not yet been dealt a hand within a given event may
    not be dealt into a dead button position, nor a dead small blind position. ... the player must wait until
    the button passes them." A moved player may (bar_league:Player Movement)."""
    for moved, sits_out in ((False, True), (True, False)):
        t = Table("bar_league", players=[1, 2, 3, 4, 5])
        t.feed({"type": "button", "seat": 1})
        t.hand()
        t.feed(HAND_END, leave(2), seat(2, "N", moved=moved))  # the small blind busts, a newcomer sits there
        h = t.hand()
        assert h["button"] == 2
        if sits_out:
            assert h["sitting_out"] == [{"seat": 2, "reason": "new_player_dead_position"}]
            assert h["dead_button"] is True and h["dealer"] == 1
        else:
            assert h["sitting_out"] == [] and h["dealt_in"][-1] == 2 and h["dead_button"] is False


def test_new_player_in_the_big_blind_posts_it():
    """cool_mule:6.e "New players to a table are dealt in immediately. If a player is seated in the big blind
    position, the player must post the big blind and will be dealt in the hand." """
    t = Table("cool_mule", players=[1, 2, 3, 6])
    t.feed({"type": "button", "seat": 1})
    t.hand()
    t.feed(HAND_END, seat(4, "NEW"))
    h = t.hand()
    assert (h["button"], h["sb"], h["bb"]) == (2, 3, 4)


def test_eliminations_by_leave_lines_count_places_down():
    """cool_mule:12.c: a player who loses all chips is eliminated; with stacks untracked the `leave` lines
    say so, and each gets the next finishing place."""
    t = Table("cool_mule", players=[1, 2, 3, 4])
    t.hand()
    out = t.feed(HAND_END, leave(3), leave(4))
    places = [(o["seat"], o["place"]) for o in of_type(out, "eliminated")]
    assert places == [(3, 4), (4, 3)]


def test_hand_needs_two_players():
    t = Table("bluff_street", players=[4])
    out = t.feed(HAND_START)
    assert out[0]["type"] == "error" and "two players" in out[0]["message"]


@pytest.mark.parametrize("profile", PROFILES)
def test_long_elimination_sequence_down_to_heads_up_nobody_misses_a_big_blind(profile):
    """cool_mule:10.a "No player should miss a big or small blind through players being eliminated"
    (corner_pocket:Blinds.G): nine players, someone busts every other hand, down to heads-up. Every
    player posts the big blind in turn: between two big blinds of one player, everyone else still
    seated posted one."""
    t = Table(profile, seats=9, players=list(range(1, 10)))
    t.feed({"type": "button", "seat": 1})
    bust_order = [5, 2, 9, 3, 7, 1, 6]  # leaves seats 4 and 8 heads-up
    bbs: list[int] = []
    seated = set(range(1, 10))
    for hand_no in range(30):
        h = t.hand()
        bbs.append(h["bb"])
        assert h["bb"] in seated
        t.feed(HAND_END)
        if hand_no % 2 == 1 and bust_order:
            gone = bust_order.pop(0)
            seated.discard(gone)
            t.feed(leave(gone))
    # Between two big blinds of a survivor, every other survivor posted exactly one.
    for i, seat_no in enumerate(bbs):
        later = bbs[i + 1 :]
        if seat_no in seated and seat_no in later:
            between = later[: later.index(seat_no)]
            others = [s for s in between if s in seated]
            assert sorted(others) == sorted(seated - {seat_no}), (i, bbs)
    assert bbs[-2:] in ([4, 8], [8, 4])


def test_two_players_busted_in_one_hand_the_bigger_starting_stack_finishes_higher():
    """cool_mule:12.d "If two or more players are eliminated on the same hand, the player who started
    the hand with the most chips will be awarded the higher finishing position." Seat 3 started with 800 and seat 2 with 300: seat 3 is second, seat 2 third, whatever
    their seat numbers."""
    t = Table("cool_mule", seats=6)
    for s, chips in ((1, 5000), (2, 300), (3, 800)):
        t.feed(seat(s, stack=chips))
    t.feed({"type": "level", "sb": 50, "bb": 100})
    t.deal_all(t.hand())
    t.feed(*({"type": "action", "seat": s, "action": "allin"} for s in (1, 2, 3)))
    for cards in (["3c", "8d", "9s"], ["Jc"], ["4h"]):
        t.feed({"type": "burn"}, {"type": "board", "cards": cards})
    for s, cards in ((1, ["Ah", "Ad"]), (2, ["Kh", "Kd"]), (3, ["Qh", "Qd"])):
        t.feed({"type": "show", "seat": s, "cards": cards})
    out = t.feed(HAND_END)
    assert [(o["seat"], o["place"]) for o in of_type(out, "eliminated")] == [(3, 2), (2, 3)]
    assert t.engine.stacks() == {1: 6100}
