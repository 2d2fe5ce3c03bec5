"""Each venue's profile says what its own book says; where it borrows, every ruling says whose rule it is.

Every test quotes the rule it holds; `quoted` checks the quotation against ../shared/rulebooks/ when
that folder is there (a clone alone skips the check of the text, never the test of the table)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.rules.pretty import describe
from controller.rules.profile import PROFILE_NAMES, load_profile
from tests.rules.tablekit import HAND_END, HAND_START, Table, act, deal, of_type, seat

RULEBOOKS = Path(__file__).resolve().parents[2].parent / "shared" / "rulebooks"


# The two books that penalise a blind dodged only by a player moving from a broken table (cool_mule:6.f,
# dragons_den:25): (profile, the book's words).
DODGE_AT_A_BROKEN_TABLE = [
    (
        "cool_mule",
        "Any player who intentionally dodges any blind when moving from a broken table will incur a penalty.",
    ),
    (
        "dragons_den",
        "A player who intentionally dodges any blind when moving from a broken table will incur a penalty.",
    ),
]


def quoted(book: str, text: str) -> str:
    """`text`, after checking it is the book's own wording (whitespace and case aside)."""
    path = RULEBOOKS / f"{book}.txt"
    if path.is_file():
        squash = re.compile(r"\s+")
        page = squash.sub(" ", path.read_text(encoding="utf-8")).lower()
        assert squash.sub(" ", text).lower() in page, f"not in {book}'s rulebook: {text!r}"
    return text


def start(profile: str, players=(1, 2, 3, 4, 5), stack: int | None = None) -> tuple[Table, dict]:
    t = Table(profile, players=list(players), stack=stack)
    t.feed({"type": "button", "seat": 1})
    return t, t.hand()


# ---------------------------------------------------------------- an extra card to the first player


@pytest.mark.parametrize(
    ("profile", "rule", "text"),
    [
        (
            "bar_league",
            "bar_league:Misdeals(f)",
            "a misdeal will be declared if/when one of the following seven conditions has been met for a "
            "reason other than player error: a) either one of the first two cards dealt are exposed. "
            "b) any card intended for the button position is exposed. c) more than one hole card is exposed. "
            "d) more than one boxed card is found. e) the button is revealed to be in the wrong position. "
            "f) any player has the incorrect quantity of hole cards.",
        ),
        (
            "corner_pocket",
            "corner_pocket:Dealing.H",
            "If a player is dealt more or less cards than the game is playing calls for, and it is discovered "
            "before two players act on their hands, it is a misdeal.",
        ),
    ],
)
def test_an_extra_card_to_the_first_player_is_a_misdeal_where_the_book_says_so(profile, rule, text):
    quoted(profile, text)
    t, h = start(profile)
    t.deal_all(h)
    out = t.feed(deal(h["dealt_in"][0]))
    assert of_type(out, "misdeal") == [{"type": "misdeal", "reason": "wrong_card_count", "rule": rule}]
    assert of_type(out, "extra_card") == []
    # The re-deal is the same hand again (a misdeal voids it).
    assert t.hand()["redeal"] is True


@pytest.mark.parametrize(
    ("profile", "rule"), [("cool_mule", "cool_mule:5.i"), ("dragons_den", "dragons_den:49")]
)
def test_an_extra_card_to_the_first_player_becomes_the_burn_where_the_book_says_so(profile, rule):
    quoted(
        "cool_mule",
        "if the dealer mistakenly deals the first player an extra card after all players have received their "
        "starting hands, the card will be returned to the deck and used for the first burn card.",
    )
    quoted(
        "dragons_den",
        "If the dealer mistakenly deals the first player an extra card (after all players have received their "
        "starting hands), the card will be returned to the deck and used for the burn card.",
    )
    t, h = start(profile)
    t.deal_all(h)
    first = h["dealt_in"][0]
    assert t.feed(deal(first)) == [{"type": "extra_card", "seat": first, "rule": rule}]


def test_every_profile_can_say_either_reading_of_the_extra_card():
    values = {name: load_profile(name).value("deal", "extra_card_to_first_player") for name in PROFILE_NAMES}
    assert values == {
        "cool_mule": "burn",
        "dragons_den": "burn",
        "bluff_street": "burn",
        "bar_league": "misdeal",
        "corner_pocket": "misdeal",
    }


# ---------------------------------------------------------------- new players at Cool Mule


def test_cool_mule_deals_a_new_player_in_immediately_even_between_the_small_blind_and_the_button():
    quoted("cool_mule", "New players to a table are dealt in immediately.")
    quoted(
        "cool_mule",
        "The only place a moved player cannot be placed is between the small blind and the button. If it is "
        "necessary for a player to be moved to this position, that player must sit out that hand.",
    )
    for moved, dealt in ((False, True), (True, False)):
        t, _ = start("cool_mule", players=(1, 2, 5, 7))
        t.feed(HAND_END, seat(3, "NEW", moved=moved))  # seat 3 lies between the new button 2 and SB 5
        h = t.hand()
        assert (h["button"], h["sb"], h["bb"]) == (2, 5, 7)
        assert (3 in h["dealt_in"]) is dealt
        if not dealt:
            assert h["sitting_out"] == [{"seat": 3, "reason": "between_sb_and_button"}]
            assert h["rule"] == "cool_mule:12.k"


# ---------------------------------------------------------------- borrowed rules say so


def _cool_mule_hand_to_the_flop() -> tuple[Table, list[dict]]:
    t, h = start("cool_mule", players=(1, 2, 3, 4), stack=10000)
    t.deal_all(h)
    out = t.feed(act(4, "call", 100), act(1, "call", 100), act(2, "call", 100), act(3, "check"))
    return t, out


def test_rulings_on_another_venues_rule_at_a_cool_mule_table_say_whose_rule_it_is():
    """The issue's three at a Cool Mule table: `bluff_street:19` (pots) is now Cool Mule's own 7.p,
    `corner_pocket:Betting.K` (an uncalled bet) and `bluff_street:33.b` (the re-deal) say they are
    borrowed; Cool Mule's own rules carry no such mark."""
    quoted(
        "cool_mule",
        "If a player lacks sufficient chips for a blind or to call a bet, the player is entitled to get action "
        "on whatever amount of chips the player has. In this situation a side pot would occur for players "
        "with remaining chips.",
    )
    t, out = _cool_mule_hand_to_the_flop()
    (pots,) = of_type(out, "pots")
    assert pots["rule"] == "cool_mule:7.p" and "borrowed_from" not in pots
    # An uncalled bet: everyone folds to a flop bet.
    t.feed({"type": "board", "cards": ["2c", "7d", "9h"]})
    out = t.feed(act(2, "bet", 200), act(3, "fold"), act(4, "fold"), act(1, "fold"))
    (back,) = of_type(out, "uncalled_returned")
    assert back["rule"] == "corner_pocket:Betting.K" and back["borrowed_from"] == "corner_pocket"
    # The re-deal after a misdeal (cool_mule:5.g is Cool Mule's own, the exact replay is borrowed).
    t.feed(HAND_END)
    h = t.hand()
    (misdeal,) = t.feed(deal(h["dealt_in"][0], "Ah"))
    assert misdeal["rule"] == "cool_mule:5.g" and "borrowed_from" not in misdeal
    redeal = t.hand()
    assert redeal["redeal"] is True
    assert redeal["rule"] == "bluff_street:33.b" and redeal["borrowed_from"] == "bluff_street"


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_no_ruling_ever_cites_another_book_without_borrowed_from(profile):
    """A whole session's rulings at each venue: `borrowed_from` is there exactly when the book is not the
    venue's own."""
    from bench.gen_session import generate

    engine = Table(profile).engine
    seen = 0
    for n, text in enumerate(generate(hands=25, seed=11), 1):
        if n == 1:
            continue  # the generator's own `table` line: this test keeps the venue
        for line in engine.feed(text, n):
            rule = line.get("rule")
            if rule is None:
                continue
            seen += 1
            own = rule.startswith(profile + ":")
            assert ("borrowed_from" in line) is (not own), line
            if not own:
                assert rule.startswith(line["borrowed_from"] + ":")
    assert seen > 50


def test_the_pretty_rendering_marks_a_borrowed_rule():
    t, _ = _cool_mule_hand_to_the_flop()
    t.feed({"type": "board", "cards": ["2c", "7d", "9h"]})
    out = t.feed(act(2, "bet", 200), act(3, "fold"), act(4, "fold"), act(1, "fold"))
    (back,) = of_type(out, "uncalled_returned")
    assert describe(back) == (
        "Uncalled 200 goes back to seat 2.  [corner_pocket:Betting.K, borrowed from Corner Pocket's rulebook]"
    )
    (pots,) = of_type(out, "pots")
    assert describe(pots).endswith("[cool_mule:7.p]")
    own = {"type": "misdeal", "reason": "first_cards_exposed", "rule": "cool_mule:5.g"}
    assert describe(own).endswith("[cool_mule:5.g]")


def test_the_published_line_keeps_the_borrowed_mark():
    """MQTT and the panel see lines through the privacy whitelist: the mark goes with the citation."""
    from controller.service.privacy import public_line

    line = {"type": "pots", "pots": [], "rule": "bluff_street:19", "borrowed_from": "bluff_street"}
    assert public_line(line)["borrowed_from"] == "bluff_street"


def test_hand_start_answer_is_unchanged_when_nothing_is_borrowed():
    t = Table("cool_mule", players=[1, 2, 3])
    line = t.feed(HAND_START)[0]
    assert "borrowed_from" not in line


# ---------------------------------------------------------------- settings re-read against the venue's text


@pytest.mark.parametrize(
    ("profile", "rule", "text"),
    [
        (
            "cool_mule",
            "cool_mule:9.e",
            "If at any time a player’s cards touch the muck, the cards are dead and must remain in the muck",
        ),
        (
            "corner_pocket",
            "corner_pocket:General Rules.H",
            "Throwing one's cards face down into or towards the muck, even at showdown, folds one's hand.",
        ),
    ],
)
def test_a_fold_out_of_turn_stands_by_the_venues_own_rule(profile, rule, text):
    """Cool Mule 7.d excuses a first offence out of turn, but a folded hand is in the muck (9.e); Corner
    Pocket loses the chips of an out-of-turn action (General Rules.D), and a thrown hand is folded (H)."""
    quoted(profile, text)
    t, h = start(profile, players=(1, 2, 3, 4, 5), stack=10000)
    t.deal_all(h)
    out = t.feed(act(5, "fold"))  # seat 4 (under the gun) is to act
    (line,) = of_type(out, "out_of_turn")
    assert line["binding"] is True and line["rule"] == rule and "borrowed_from" not in line
    assert 5 not in t.engine.hand.play.live


@pytest.mark.parametrize(
    ("profile", "rule"),
    [("cool_mule", "cool_mule:7.p"), ("corner_pocket", "corner_pocket:Betting.K")],
)
def test_side_pots_cite_the_venues_own_rule(profile, rule):
    quoted(
        "corner_pocket",
        "The excess part of the bet is either returned to the bettor or used to form a side pot with another "
        "player or players who matched the amount called, as applicable. There is no limitation on the "
        "number of side pots.",
    )
    t = Table(profile, players=[1, 2, 3])
    for s, stack in ((1, 1000), (2, 3000), (3, 5000)):
        t.engine.players[s].stack = stack
    t.feed({"type": "button", "seat": 1})
    h = t.hand()
    t.deal_all(h)
    out = t.feed(act(1, "allin"), act(2, "allin"), act(3, "call"))
    (pots,) = of_type(out, "pots")
    assert [p["amount"] for p in pots["pots"]] == [3000, 4000]
    assert pots["rule"] == rule and "borrowed_from" not in pots


@pytest.mark.parametrize("profile", ["bluff_street", "dragons_den"])
def test_a_wrong_card_count_after_substantial_action_is_dead_by_rule_53(profile):
    """bluff_street:33.c only says the hand must proceed; the dead hand is 53's."""
    quoted(
        "bluff_street",
        "If substantial action occurs, a misdeal cannot be declared and the hand must proceed.",
    )
    quoted(
        "bluff_street",
        "Your hand is declared dead if: You fold or announce that you are folding when facing a bet or a raise.",
    )
    quoted("bluff_street", "The hand does not contain the proper number of cards for that particular game")
    t, h = start(profile, players=(1, 2, 3, 4, 5), stack=10000)
    t.deal_all(h)
    t.feed(act(4, "call", 100), act(5, "call", 100), act(1, "call", 100))
    out = t.feed(deal(4))
    (dead,) = of_type(out, "dead_hand")
    assert (dead["seat"], dead["reason"], dead["rule"]) == (4, "wrong_card_count", "bluff_street:53")
    assert ("borrowed_from" in dead) is (profile == "dragons_den")


# ---------------------------------------------------------------- each venue's clock


@pytest.mark.parametrize(
    ("profile", "seconds", "countdown", "rule", "text"),
    [
        (
            "bar_league",
            40,
            10,
            "bar_league:Calling a Clock",
            "tournament officials will begin a 40-second timer, the last ten seconds of which will be counted "
            "aloud by the official.",
        ),
        (
            "cool_mule",
            60,
            10,
            "cool_mule:12.i",
            "the player with action will be given one minute to make a decision. If a decision has not been made "
            "by the time 50 seconds has elapsed, there will be a 10-second verbal countdown.",
        ),
        (
            "corner_pocket",
            70,
            10,
            "corner_pocket:Call for a Clock.B",
            "the player with action will be given one minute to make a decision. If a decision has not been made "
            "by the time the minute is over, there will be a 10-second countdown.",
        ),
        (
            "dragons_den",
            70,
            10,
            "dragons_den:20",
            "a player will be given a maximum of one minute to make a decision. If action has not been taken "
            "before time expires, there will be a 10-second countdown.",
        ),
        (
            "bluff_street",
            30,
            5,
            "bluff_street:25",
            "give the Participant an additional 0 up to 25 seconds to make a decision. If action has not been "
            "taken when prompted by the Floor Person, there will be a 5-second countdown",
        ),
    ],
)
def test_each_venue_has_its_own_clock_and_a_dead_hand_when_it_runs_out(
    profile, seconds, countdown, rule, text
):
    quoted(profile, text)
    t, h = start(profile, players=(1, 2, 3, 4), stack=10000)
    t.deal_all(h)
    to_act = t.engine.hand.play.to_act
    assert t.feed({"type": "clock", "seat": to_act}) == [
        {"type": "clock", "seat": to_act, "seconds": seconds, "countdown": countdown, "rule": rule}
    ]
    # The director may set a shorter clock (bluff_street:25 "speed up the amount of time allotted").
    (short,) = t.feed({"type": "clock", "seat": to_act, "seconds": 3})
    assert (short["seconds"], short["countdown"]) == (3, min(3, countdown))
    out = t.feed({"type": "time_expired", "seat": to_act})
    (dead,) = of_type(out, "dead_hand")
    assert (dead["seat"], dead["reason"]) == (to_act, "clock")
    assert to_act not in t.engine.hand.play.live and t.engine.hand.play.to_act != to_act
    assert describe(out[0]).startswith(f"Seat {to_act}'s hand is dead (clock)")


def test_the_director_can_send_time_expired_as_a_command():
    """The countdown reaches zero on the director's watch: `cmd/time_expired` becomes the protocol line."""
    from controller.service.commands import parse_command
    from controller.service.config import COMMAND_NAMES

    command = parse_command("time_expired", b'{"seat": 3}', seats=6, allowed=COMMAND_NAMES)
    assert command.line == {"type": "time_expired", "seat": 3}


# ---------------------------------------------------------------- the button's final card


BUTTON_53 = (
    "In button games, the button may receive his or her final card, even if substantial action has occurred, "
    "unless he or she acts on the hand prior to receiving the final card. In the event that he or she acts "
    "before receiving the final card, the hand is dead."
)


def _button_short_a_card(profile: str) -> Table:
    """Five players, button 1: everyone has two cards but the button, who has one."""
    t, h = start(profile, players=(1, 2, 3, 4, 5), stack=10000)
    order = h["dealt_in"]
    assert order[-1] == 1
    t.feed(*[deal(s) for s in order], *[deal(s) for s in order[:-1]])
    return t


@pytest.mark.parametrize("profile", ["bluff_street", "dragons_den"])
def test_the_button_may_receive_his_final_card_after_substantial_action(profile):
    quoted("bluff_street", BUTTON_53)
    t = _button_short_a_card(profile)
    out = t.feed(act(4, "call", 100), act(5, "call", 100))
    assert of_type(out, "substantial_action")
    out = t.feed(deal(1))
    assert of_type(out, "dead_hand") == [] and of_type(out, "misdeal") == []
    assert 1 in t.engine.hand.play.live
    assert of_type(t.feed(act(1, "call", 100)), "error") == []


@pytest.mark.parametrize("profile", ["bluff_street", "dragons_den"])
def test_the_button_who_acted_before_his_final_card_has_a_dead_hand(profile):
    quoted("bluff_street", BUTTON_53)
    t = _button_short_a_card(profile)
    t.feed(act(4, "call", 100), act(5, "call", 100), act(1, "call", 100))
    out = t.feed(deal(1))
    (dead,) = of_type(out, "dead_hand")
    assert (dead["seat"], dead["reason"], dead["rule"]) == (1, "wrong_card_count", "bluff_street:53")
    assert 1 not in t.engine.hand.play.live


def test_the_button_may_take_his_final_card_before_substantial_action_too():
    """A fortiori: what 53 allows after substantial action it allows before it (no misdeal)."""
    t = _button_short_a_card("bluff_street")
    out = t.feed(act(4, "fold"), deal(1))
    assert of_type(out, "misdeal") == [] and of_type(out, "dead_hand") == []


@pytest.mark.parametrize(
    ("profile", "rule"),
    [
        ("cool_mule", "cool_mule:5.o"),
        ("corner_pocket", "corner_pocket:Dealing.H"),
        ("bar_league", "cool_mule:5.o"),
    ],
)
def test_venues_without_the_button_exception_rule_the_late_card_a_wrong_count(profile, rule):
    quoted(
        "cool_mule",
        "If during play at least 2 players have acted and a player discovers their hand has too many cards, "
        "their hand is considered dead",
    )
    t = _button_short_a_card(profile)
    t.feed(act(4, "call", 100), act(5, "call", 100))
    (dead,) = of_type(t.feed(deal(1)), "dead_hand")
    assert (dead["seat"], dead["reason"], dead["rule"]) == (1, "wrong_card_count", rule)


# ---------------------------------------------------------------- a player absent at his turn

CORNER_POCKET_I = (
    "If a player is absent from his seat when it is his turn to act, for any reason, his hand will be "
    "immediately folded."
)
CORNER_POCKET_BLINDS_B = (
    "Absent players may not avoid the blinds. An absent player in the small and/or big blind will have his "
    "blind posted and his hand folded in turn."
)
COOL_MULE_7R = (
    "All players must remain at the table if they still have action pending on a hand. If a player leaves "
    "the table and does not return when it is their turn to act, their hand is dead and must be folded by "
    "the dealer."
)


def test_corner_pocket_folds_an_absent_player_when_the_action_reaches_him_not_at_the_deal():
    quoted("corner_pocket", CORNER_POCKET_I)
    quoted("corner_pocket", CORNER_POCKET_BLINDS_B)
    t = Table("corner_pocket", players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1}, {"type": "away", "seat": 3})  # seat 3 is the big blind
    h = t.hand()
    assert 3 in h["dealt_in"]
    assert of_type(t.deal_all(h), "dead_hand") == []  # the deal's end decides nothing here
    assert t.engine.hand.play.stacks[3] == 9900  # his blind is posted
    out = t.feed(act(4, "call", 100), act(1, "call", 100))
    assert of_type(out, "dead_hand") == []
    out = t.feed(act(2, "call", 100))  # the action reaches the big blind, who is away
    (dead,) = of_type(out, "dead_hand")
    assert (dead["seat"], dead["reason"], dead["rule"]) == (3, "absent", "corner_pocket:General Rules.I")
    assert 3 not in t.engine.hand.play.live
    assert t.engine.hand.play.street == "preflop" and of_type(out, "pots")  # the round closed behind him


def test_corner_pocket_player_back_before_his_turn_plays_his_hand():
    quoted("corner_pocket", CORNER_POCKET_I)
    t = Table("corner_pocket", players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1}, {"type": "away", "seat": 3})
    t.deal_all(t.hand())
    t.feed(act(4, "call", 100), {"type": "back", "seat": 3}, act(1, "call", 100), act(2, "call", 100))
    assert 3 in t.engine.hand.play.live
    assert of_type(t.feed(act(3, "check")), "error") == []


@pytest.mark.parametrize(
    ("profile", "dead"), [("cool_mule", True), ("bluff_street", False), ("bar_league", False)]
)
def test_a_player_who_leaves_during_the_hand_and_is_not_back_at_his_turn(profile, dead):
    """Cool Mule 7.r kills the hand; Bluff Street 29 leaves it to the floor ("may be considered abandoned")
    and Bar League judges absence once, when the final hole card is dealt."""
    quoted("cool_mule", COOL_MULE_7R)
    quoted(
        "bluff_street",
        "Once action has begun, a hand may be considered abandoned and mucked if a Participant",
    )
    t = Table(profile, players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1})
    t.deal_all(t.hand())
    out = t.feed(act(4, "call", 100), {"type": "away", "seat": 2}, act(1, "call", 100))
    got = of_type(out, "dead_hand")
    if dead:
        assert [(d["seat"], d["reason"], d["rule"]) for d in got] == [(2, "absent", "cool_mule:7.r")]
        assert t.engine.hand.play.to_act == 3
    else:
        assert got == [] and t.engine.hand.play.to_act == 2


def test_two_absent_players_in_a_row_are_both_folded_at_their_turns():
    t = Table("cool_mule", players=[1, 2, 3, 4, 5], stack=10000)
    t.feed({"type": "button", "seat": 1})
    t.deal_all(t.hand())
    out = t.feed({"type": "away", "seat": 5}, {"type": "away", "seat": 1}, act(4, "call", 100))
    assert [d["seat"] for d in of_type(out, "dead_hand")] == [5, 1]
    assert t.engine.hand.play.to_act == 2


# ---------------------------------------------------------------- a fouled deck

BLUFF_33_D_2 = (
    "If two cards of the same rank and suit are found, all action is void, and all chips in the pot are "
    "returned to the participants who wagered them."
)


@pytest.mark.parametrize("profile", PROFILE_NAMES)
def test_a_card_seen_twice_fouls_the_deck_all_action_void_and_chips_returned(profile):
    quoted("bluff_street", BLUFF_33_D_2)
    t, h = start(profile, players=(1, 2, 3, 4), stack=10000)
    t.deal_all(h)
    t.feed(act(4, "raise", 300), act(1, "call", 300), act(2, "call", 300), act(3, "call", 300))
    t.feed({"type": "board", "cards": ["Ah", "7d", "2c"]})
    t.feed(act(2, "bet", 500), act(3, "call", 500), act(4, "fold"), act(1, "fold"))
    assert t.engine.stacks()[2] == 9200
    out = t.feed({"type": "board", "cards": ["7d"]})  # the seven of diamonds again
    assert out == [
        {
            "type": "fouled_deck",
            "card": "7d",
            "rule": "bluff_street:33.d.2",
            **({} if profile == "bluff_street" else {"borrowed_from": "bluff_street"}),
        }
    ]
    assert t.engine.stacks() == {1: 10000, 2: 10000, 3: 10000, 4: 10000}  # every chip returned
    assert t.engine.phase == "misdeal"
    assert of_type(t.feed(act(2, "check")), "error")  # the hand is over: nothing more is ruled on it
    again = t.hand()
    assert again["redeal"] is True and again["number"] == h["number"]
    assert describe(out[0]).startswith("FOULED DECK: 7d turned up twice. All action is void")


def test_a_tabled_card_that_is_on_the_board_fouls_the_deck():
    t, h = start("bluff_street", players=(1, 2, 3), stack=10000)
    t.deal_all(h)
    t.feed(act(1, "call", 100), act(2, "call", 100), act(3, "check"))
    for cards in (["Ah", "7d", "2c"], ["9s"], ["Kd"]):
        t.feed({"type": "board", "cards": cards})
        t.feed(act(2, "check"), act(3, "check"), act(1, "check"))
    out = t.feed({"type": "show", "seat": 2, "cards": ["Kd", "Qs"]})
    assert [o["type"] for o in out] == ["fouled_deck"] and out[0]["card"] == "Kd"
    assert t.engine.stacks() == {1: 10000, 2: 10000, 3: 10000}


def test_a_card_already_out_is_only_refused_where_the_profile_says_so(tmp_path):
    """A venue that wants the old behaviour (the line refused, the hand goes on) can say so."""
    from controller.rules.profile import PROFILE_DIR, load_profile_file

    text = (PROFILE_DIR / "bluff_street.toml").read_text()
    text = text.replace(
        'fouled_deck = { value = "void_return_chips"', 'fouled_deck = { value = "refuse_line"'
    )
    path = tmp_path / "house.toml"
    path.write_text(text)
    from controller.rules.engine import TableEngine

    engine = TableEngine(load_profile_file(path), 10)
    lines = [seat(1), seat(2), seat(3), {"type": "level", "sb": 50, "bb": 100}, {"type": "button", "seat": 1}]
    lines += [HAND_START, *[deal(s) for s in (2, 3, 1, 2, 3, 1)]]
    lines += [
        act(1, "call", 100),
        act(2, "call", 100),
        act(3, "check"),
        {"type": "board", "cards": ["Ah", "7d", "2c"]},
    ]
    for n, line in enumerate(lines, 1):
        engine.feed(line, n)
    (err,) = engine.feed({"type": "board", "cards": ["Ah"]}, 99)
    assert err["type"] == "error" and "Ah" in err["message"] and engine.phase == "flop"


# ---------------------------------------------------------------- docs/rules.md is the profiles' table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
ROW = re.compile(r"^\| `(?P<key>[a-z_]+\.[a-z_]+)` \| `(?P<value>[^`]*)` \| `(?P<rule>[^`]+)`(?P<rest>.*)$")


def _doc_rows(name: str) -> dict[str, tuple[str, str, str]]:
    text = DOCS.read_text(encoding="utf-8")
    start, end = f"<!-- table:{name} -->", f"<!-- /table:{name} -->"
    assert start in text and end in text, f"docs/rules.md has no table for {name}"
    rows = {}
    for line in text.split(start, 1)[1].split(end, 1)[0].splitlines():
        m = ROW.match(line)
        if m:
            rows[m["key"]] = (m["value"], m["rule"], m["rest"])
    return rows


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_docs_rules_lists_every_setting_with_its_value_and_citation(name):
    profile = load_profile(name)
    rows = _doc_rows(name)
    expected = set()
    for section, settings in profile.settings.items():
        for key, setting in settings.items():
            where = f"{section}.{key}"
            expected.add(where)
            assert where in rows, f"docs/rules.md: {name} has no row for {where}"
            value, rule, rest = rows[where]
            shown = setting.value
            shown = ("true" if shown else "false") if isinstance(shown, bool) else shown
            shown = f'"{shown}"' if isinstance(setting.value, str) else str(shown)
            assert value == shown, f"docs/rules.md: {name} {where} says {value}, the profile {shown}"
            assert rule == setting.rule, (
                f"docs/rules.md: {name} {where} cites {rule}, the profile {setting.rule}"
            )
            borrowed = not setting.rule.startswith(name + ":")
            assert ("**borrowed from" in rest) is borrowed, f"docs/rules.md: {name} {where} borrowed mark"
    assert set(rows) == expected, f"docs/rules.md: {name} lists settings the profile lacks"


def test_rules_profile_marks_borrowed_settings(capsys):
    """`smart-table rules profile` is a rendering too: a borrowed citation says whose book it is."""
    import argparse

    from controller.rules.cli import _show_profile

    assert _show_profile(argparse.Namespace(name="cool_mule")) in (0, None)
    text = capsys.readouterr().out
    assert "redeal_exact_replay = True  (bluff_street:33.b, borrowed from Bluff Street)" in text
    assert "exposed_misdeal_cards = 2  (cool_mule:5.g)" in text


# ---------------------------------------------------------------- every misdeal, in each book's words


def _first_exposed(t, order):
    return t.feed(deal(order[0], "Kd"))


def _second_exposed(t, order):
    return t.feed(deal(order[0]), deal(order[1], "Kd"))


def _button_exposed(t, order):
    return t.feed(*[deal(s) for s in order[:-1]], deal(order[-1], "Ac"))


def _two_exposed(t, order):
    return t.feed(deal(order[0]), deal(order[1]), deal(order[2], "9h"), deal(order[3], "2c"))


def _two_boxed(t, order):
    return t.feed({"type": "boxed", "card": "4d"}, {"type": "boxed", "card": "5d"})


def _button_wrong(t, order):
    return t.feed(deal(order[0]), {"type": "button_seen", "seat": 4})


def _third_card(t, order):
    return t.feed(*[deal(s) for s in order], deal(order[0]), deal(order[1]), deal(order[1]))


def _first_to_wrong_seat(t, order):
    return t.feed(deal(order[1]))


def _seat_dealt_out(t, order):
    skipped = order[2]
    return t.feed(*[deal(s) for s in order if s != skipped], deal(order[0]), deal(order[1]), deal(order[3]))


def _not_entitled(t, order):
    return t.feed(deal(order[0]), deal(7))  # seat 7 is empty


MISDEALS = [
    (
        "bar_league",
        _first_exposed,
        "first_cards_exposed",
        "bar_league:Misdeals(a)",
        "a) either one of the first two cards dealt are exposed.",
    ),
    (
        "bar_league",
        _second_exposed,
        "first_cards_exposed",
        "bar_league:Misdeals(a)",
        "a) either one of the first two cards dealt are exposed.",
    ),
    (
        "bar_league",
        _button_exposed,
        "button_card_exposed",
        "bar_league:Misdeals(b)",
        "b) any card intended for the button position is exposed.",
    ),
    (
        "bar_league",
        _two_exposed,
        "multiple_exposed",
        "bar_league:Misdeals(c)",
        "c) more than one hole card is exposed.",
    ),
    (
        "bar_league",
        _two_boxed,
        "multiple_boxed",
        "bar_league:Misdeals(d)",
        "d) more than one boxed card is found.",
    ),
    (
        "bar_league",
        _button_wrong,
        "button_misplaced",
        "bar_league:Misdeals(e)",
        "e) the button is revealed to be in the wrong position.",
    ),
    (
        "bar_league",
        _third_card,
        "wrong_card_count",
        "bar_league:Misdeals(f)",
        "f) any player has the incorrect quantity of hole cards.",
    ),
    (
        "bar_league",
        _first_to_wrong_seat,
        "first_card_wrong_seat",
        "bar_league:Misdeals(g)",
        "g) the first hole card was dealt to the wrong position.",
    ),
    (
        "cool_mule",
        _first_exposed,
        "first_cards_exposed",
        "cool_mule:5.g",
        "During the deal, if the first or second card off the deck is exposed, this is a misdeal.",
    ),
    (
        "cool_mule",
        _second_exposed,
        "first_cards_exposed",
        "cool_mule:5.g",
        "During the deal, if the first or second card off the deck is exposed, this is a misdeal.",
    ),
    (
        "cool_mule",
        _two_exposed,
        "multiple_exposed",
        "cool_mule:5.h",
        "During the deal, if more than one card is exposed, this is a misdeal.",
    ),
    (
        "corner_pocket",
        _first_exposed,
        "first_cards_exposed",
        "corner_pocket:Dealing.E",
        "If the first holecard dealt is exposed, a misdeal results.",
    ),
    (
        "corner_pocket",
        _two_exposed,
        "multiple_exposed",
        "corner_pocket:Dealing.E",
        "If more than one holecard is exposed, this is a misdeal and there must be a redeal.",
    ),
    (
        "corner_pocket",
        _third_card,
        "wrong_card_count",
        "corner_pocket:Dealing.H",
        "If a player is dealt more or less cards than the game is playing calls for, and it is discovered before two players act on their hands, it is a misdeal.",
    ),
    (
        "corner_pocket",
        _not_entitled,
        "dealt_to_ineligible_seat",
        "corner_pocket:Dealing.H",
        "If a player is dealt more or less cards than the game is playing calls for",
    ),
    (
        "corner_pocket",
        _seat_dealt_out,
        "eligible_seat_dealt_out",
        "corner_pocket:Dealing.H",
        "If a player is dealt more or less cards than the game is playing calls for",
    ),
    (
        "dragons_den",
        _first_exposed,
        "first_cards_exposed",
        "dragons_den:27.a",
        "a) exposure of one of the first two cards dealt",
    ),
    (
        "dragons_den",
        _second_exposed,
        "first_cards_exposed",
        "dragons_den:27.a",
        "a) exposure of one of the first two cards dealt",
    ),
    ("dragons_den", _two_exposed, "multiple_exposed", "dragons_den:27.b", "b) two or more exposed cards"),
    (
        "dragons_den",
        _first_to_wrong_seat,
        "first_card_wrong_seat",
        "dragons_den:27.c",
        "c) first card dealt to the wrong seat",
    ),
    (
        "dragons_den",
        _not_entitled,
        "dealt_to_ineligible_seat",
        "dragons_den:27.d",
        "d) cards dealt to a seat not entitled to a hand",
    ),
    (
        "dragons_den",
        _seat_dealt_out,
        "eligible_seat_dealt_out",
        "dragons_den:27.e",
        "e) a seat entitled to a hand is dealt out",
    ),
    (
        "bluff_street",
        _two_boxed,
        "multiple_boxed",
        "bluff_street:33.a.1",
        "1. 2 or more boxed cards on the initial deal.",
    ),
    (
        "bluff_street",
        _first_to_wrong_seat,
        "first_card_wrong_seat",
        "bluff_street:33.a.2",
        "2. First card dealt to the wrong seat.",
    ),
    (
        "bluff_street",
        _not_entitled,
        "dealt_to_ineligible_seat",
        "bluff_street:33.a.3",
        "3. Cards dealt to a seat not entitled to a hand.",
    ),
    (
        "bluff_street",
        _seat_dealt_out,
        "eligible_seat_dealt_out",
        "bluff_street:33.a.4",
        "4. A seat entitled to a hand is dealt out.",
    ),
    (
        "bluff_street",
        _first_exposed,
        "first_cards_exposed",
        "bluff_street:33.a.6",
        "6. In flop games, if either of the first 2 cards dealt off the deck or any other 2 down cards are exposed by dealer error.",
    ),
    (
        "bluff_street",
        _two_exposed,
        "multiple_exposed",
        "bluff_street:33.a.6",
        "or any other 2 down cards are exposed by dealer error",
    ),
]


@pytest.mark.parametrize(
    ("profile", "scenario", "reason", "rule", "text"),
    MISDEALS,
    ids=[f"{m[0]}-{m[2]}-{m[1].__name__.strip('_')}" for m in MISDEALS],
)
def test_every_misdeal_cites_the_rule_that_says_it(profile, scenario, reason, rule, text):
    quoted(rule.split(":")[0], text)
    t, h = start(profile)
    out = scenario(t, h["dealt_in"])
    assert of_type(out, "misdeal") == [{"type": "misdeal", "reason": reason, "rule": rule}]


@pytest.mark.parametrize(
    ("profile", "scenario"),
    [("cool_mule", _button_exposed), ("corner_pocket", _second_exposed), ("dragons_den", _button_exposed)],
)
def test_a_single_card_exposed_later_in_the_deal_is_replaced_not_a_misdeal(profile, scenario):
    quoted(
        "cool_mule",
        "During the deal, if any single card is exposed beyond the first or second card off the deck, the "
        "dealer continues to deal all the hole cards. The dealer then deals one more card to the player who "
        "had their card exposed",
    )
    quoted(
        "corner_pocket",
        "If any other holecard is exposed due to a dealer error, the deal continues. The exposed card may not "
        "be kept.",
    )
    t, h = start(profile)
    out = scenario(t, h["dealt_in"])
    assert of_type(out, "misdeal") == [] and len(of_type(out, "replace_exposed")) == 1


def test_bar_league_a_player_exposing_his_own_card_is_no_misdeal():
    """The seven conditions count only "for a reason other than player error"."""
    quoted(
        "bar_league",
        "one of the following seven conditions has been met for a reason other than player error",
    )
    quoted(
        "bar_league",
        "a player’s illegally-exposed hand may never be killed as a penalty for violating this rule.",
    )
    t, h = start("bar_league", stack=10000)
    t.deal_all(h)
    out = t.feed({"type": "expose", "seat": h["dealt_in"][0], "card": "Ah", "by": "player"})
    assert of_type(out, "misdeal") == [] and of_type(out, "dead_hand") == []


# ---------------------------------------------------------------- dead hands, in each book's words


@pytest.mark.parametrize(
    ("profile", "rule", "text"),
    [
        (
            "cool_mule",
            "cool_mule:5.o",
            "If during play at least 2 players have acted and a player discovers their hand has too many cards, "
            "their hand is considered dead and must be folded and they loose all chips placed in the pot.",
        ),
        (
            "corner_pocket",
            "corner_pocket:Dealing.H",
            "If it is discovered after two players have acted, then all chips bet, antes and blinds are "
            "forfeited by that player.",
        ),
    ],
)
def test_too_many_cards_after_two_players_acted_a_dead_hand_that_forfeits_its_chips(profile, rule, text):
    quoted(profile, text)
    t, h = start(profile, players=(1, 2, 3, 4, 5), stack=10000)
    t.deal_all(h)
    t.feed(act(4, "call", 100), act(5, "call", 100))  # two players acted
    out = t.feed(deal(4))  # seat 4 finds a third card
    assert of_type(out, "misdeal") == []
    (dead,) = of_type(out, "dead_hand")
    assert (dead["seat"], dead["reason"], dead["rule"]) == (4, "wrong_card_count", rule)
    play = t.engine.hand.play
    assert 4 not in play.live and play.stacks[4] == 9900  # the call stays in the pot
    assert sum(p.amount for p in play.pots()) == 350  # the blinds and both calls, seat 4's included


def test_corner_pocket_a_player_exposing_his_cards_has_his_hand_killed():
    quoted(
        "corner_pocket",
        "A player who exposes his cards during the play will have his hand killed and immediately folded.",
    )
    t, h = start("corner_pocket", stack=10000)
    t.deal_all(h)
    out = t.feed({"type": "expose", "seat": 4, "card": "Ah", "by": "player"})
    (dead,) = of_type(out, "dead_hand")
    assert (dead["seat"], dead["reason"], dead["rule"]) == (
        4,
        "exposed_cards",
        "corner_pocket:Exposing Cards.A",
    )


@pytest.mark.parametrize(
    ("profile", "text"),
    [
        (
            "cool_mule",
            "A player who exposes his cards during play may incur a penalty, but will not have his hand killed.",
        ),
        (
            "dragons_den",
            "A player who exposes (tables his cards face up) with action pending may incur a penalty, but will not have a dead hand.",
        ),
        (
            "bluff_street",
            "A Participant exposing his or her cards with action pending will incur a penalty, but will not have a dead hand.",
        ),
    ],
)
def test_elsewhere_a_player_exposing_his_cards_keeps_a_live_hand(profile, text):
    quoted(profile, text)
    t, h = start(profile, stack=10000)
    t.deal_all(h)
    out = t.feed({"type": "expose", "seat": 4, "card": "Ah", "by": "player"})
    assert of_type(out, "dead_hand") == [] and 4 in t.engine.hand.play.live


@pytest.mark.parametrize(
    ("profile", "rule", "text"),
    [
        (
            "bar_league",
            "bar_league:Player Absence",
            "A player is considered absent from a hand if they are not within arm’s length of their seat by the time the final hole card has been dealt to the last player in the hand to receive hole cards.",
        ),
        (
            "cool_mule",
            "cool_mule:5.n",
            "An absent player is always dealt a hand, and their blinds must be posted by the dealer. Once the last card is dealt, the hand of an absent player is dead and must be folded by the dealer.",
        ),
        (
            "dragons_den",
            "dragons_den:22",
            "If a player is not in their seat by the time the dealer receives their second card, that player’s hand is dead and moved into the muck by the dealer.",
        ),
        (
            "bluff_street",
            "bluff_street:27",
            "A Participant must be at his or her seat by the time all Participants have been dealt complete initial hands to have a live hand.",
        ),
    ],
)
def test_absent_at_the_end_of_the_deal_a_dead_hand_by_the_venues_words(profile, rule, text):
    quoted(profile, text)
    t, h = start(profile, players=(1, 2, 3, 4), stack=10000)
    t.feed({"type": "away", "seat": 2})
    out = t.deal_all(h)
    (dead,) = of_type(out, "dead_hand")
    assert (dead["seat"], dead["reason"], dead["rule"]) == (2, "absent", rule)
    assert t.engine.hand.play.stacks[2] == 9950  # the small blind was posted for him


# ---------------------------------------------------------------- when a new level takes effect

NEW_LEVEL = {"type": "level", "sb": 100, "bb": 200}


def _blinds(t: Table) -> tuple[int, int]:
    level = t.engine.hand.level
    return level.sb, level.bb


def test_bar_league_a_level_that_ends_between_hands_waits_one_more_hand():
    quoted(
        "bar_league",
        "If a blind level concludes after the previous pot has been pushed, one more hand will be played at "
        "the previous blind level before the new blind level takes effect.",
    )
    t, _ = start("bar_league", stack=10000)
    t.feed(HAND_END, NEW_LEVEL)  # the pot was pushed, then the level concluded
    t.hand()
    assert _blinds(t) == (50, 100)
    t.feed(HAND_END)
    t.hand()
    assert _blinds(t) == (100, 200)
    # A level that concludes during a hand takes effect with the next one.
    t.feed({"type": "level", "sb": 200, "bb": 400}, HAND_END)
    t.hand()
    assert _blinds(t) == (200, 400)


def test_corner_pocket_a_level_before_the_first_card_takes_effect_at_once():
    quoted(
        "corner_pocket",
        "If the cards have been gathered up, shuffled, and cut, but no card has yet been dealt to a player, "
        "then the limit increase is effective immediately. Otherwise, if any cards have been dealt, the "
        "increase will take effect on the very next hand.",
    )
    t, h = start("corner_pocket", stack=10000)
    t.feed(NEW_LEVEL)  # no card dealt yet
    assert _blinds(t) == (100, 200)
    play = t.engine.hand.play
    assert (play.stacks[h["sb"]], play.stacks[h["bb"]]) == (9900, 9800)  # posted again at the new level
    t.feed(deal(h["dealt_in"][0]), {"type": "level", "sb": 200, "bb": 400})
    assert _blinds(t) == (100, 200)  # a card is out: the very next hand
    t.feed(HAND_END)
    t.hand()
    assert _blinds(t) == (200, 400)


@pytest.mark.parametrize(
    ("profile", "text"),
    [
        ("cool_mule", "When a new round is announced, the new blinds and antes apply to the next hand."),
        (
            "dragons_den",
            "When time has elapsed in a round and a new level is announced by a member of the tournament staff, the new level applies to the next hand. A hand begins with the first riffle.",
        ),
        (
            "bluff_street",
            "When time has elapsed in a round and a new level is announced, the new level applies to the next hand. A new hand begins with the first riffle of the deck.",
        ),
    ],
)
def test_elsewhere_a_new_level_applies_to_the_next_hand(profile, text):
    quoted(profile, text)
    t, _ = start(profile, stack=10000)
    t.feed(NEW_LEVEL)  # the hand has begun (first riffle), no card yet
    assert _blinds(t) == (50, 100)
    t.feed(HAND_END, {"type": "level", "sb": 200, "bb": 400})
    t.hand()
    assert _blinds(t) == (200, 400)  # between hands: the next hand


# ---------------------------------------------------------------- penalties in rounds


def test_dragons_den_a_round_penalty_is_one_hand_per_player_at_the_table():
    quoted(
        "dragons_den",
        "The offender will miss one hand for every player, including the offender, who is at the table when "
        "the penalty is given multiplied by the number of rounds specified in the penalty. For the period of "
        "the penalty, the offender shall remain away from the table but will continue to be dealt in.",
    )
    t = Table("dragons_den", players=[1, 2, 3, 4], stack=10000)
    t.feed({"type": "button", "seat": 1})
    (line,) = t.feed({"type": "penalty", "seat": 3, "reason": "soft play", "rounds": 2})
    assert (line["hands"], line["rounds"], line["rule"]) == (8, 2, "dragons_den:40")
    assert describe(line).startswith(
        "Penalty for seat 3: 8 hands (2 rounds of the players at the table) away"
    )
    dead_in = []
    for _ in range(9):
        h = t.hand()
        dead = of_type(t.deal_all(h), "dead_hand")
        dead_in.append([d["seat"] for d in dead] == [3])
        t.feed(HAND_END)
    assert dead_in == [True] * 8 + [False]  # eight hands away, dealt in, then he plays


def test_a_round_penalty_is_refused_where_the_book_counts_minutes():
    quoted(
        "cool_mule",
        "Penalties available for use by the Tournament Director are verbal warnings, 5, 10 and 15 minutes away from the table",
    )
    t = Table("cool_mule", players=[1, 2, 3])
    (err,) = t.feed({"type": "penalty", "seat": 2, "reason": "abuse", "rounds": 1})
    assert err["type"] == "error" and "no penalty in rounds" in err["message"]
    assert t.engine.players[2].penalty_hands == 0 and not t.engine.players[2].away


def test_the_director_can_give_a_penalty_in_rounds():
    from controller.service.commands import parse_command
    from controller.service.config import COMMAND_NAMES

    command = parse_command(
        "penalty", b'{"seat": 2, "reason": "abuse", "rounds": 2}', seats=6, allowed=COMMAND_NAMES
    )
    assert command.line == {"type": "penalty", "seat": 2, "reason": "abuse", "rounds": 2}


# ---------------------------------------------------------------- dodging blinds

BLUFF_31 = (
    "A Participant who intentionally dodges his or her blind(s) when moving from an existing seat must "
    "forfeit both blinds and incur a penalty"
)


def _after_one_hand(profile: str) -> Table:
    t, h = start(profile, players=(1, 2, 3, 4, 5))
    assert (h["sb"], h["bb"]) == (2, 3)  # next hand: button 2, small blind 3, big blind 4
    t.feed(HAND_END)
    return t


def test_bluff_street_flags_a_seat_change_that_skips_the_big_blind_he_was_due():
    quoted("bluff_street", BLUFF_31)
    t = _after_one_hand("bluff_street")
    out = t.feed({"type": "leave", "seat": 4, "reason": "left"}, seat(7, "P4"))
    assert out == [{"type": "blind_dodge", "seat": 7, "from": 4, "player": "P4", "rule": "bluff_street:31"}]
    assert t.engine.players[7].dealt is True  # a player of this table, not a new one
    assert "forfeits both blinds" in describe(out[0])
    h = t.hand()
    assert h["bb"] == 5 and 7 in h["dealt_in"]  # the table plays on; the director rules on intent


def test_a_seat_change_that_skips_no_blind_is_not_flagged():
    t = _after_one_hand("bluff_street")
    assert t.feed({"type": "leave", "seat": 1, "reason": "left"}, seat(7, "P1")) == []


@pytest.mark.parametrize(("profile", "text"), DODGE_AT_A_BROKEN_TABLE)
def test_where_the_dodge_is_at_a_broken_table_the_table_flags_nothing_but_knows_the_player(profile, text):
    quoted(profile, text)
    t = _after_one_hand(profile)
    assert t.feed({"type": "leave", "seat": 4, "reason": "left"}, seat(7, "P4")) == []
    assert t.engine.players[7].dealt is True


# ---------------------------------------------------------------- a player found in the wrong seat


def test_a_player_moved_to_his_correct_seat_takes_his_current_stack_with_him():
    quoted(
        "bluff_street",
        "A Participant who started the Tournament in the wrong seat with the correct chip stack amount will "
        "be moved to the correct seat and will take their current total chip stack with them.",
    )
    t, h = start("bluff_street", players=(1, 2, 3, 4, 5), stack=10000)
    t.deal_all(h)
    t.feed(act(4, "raise", 300), act(5, "fold"), act(1, "fold"), act(2, "fold"), act(3, "fold"), HAND_END)
    assert t.engine.players[4].stack == 10150
    # The director moves him: leave the wrong seat, sit at the drawn one (no stack given).
    t.feed({"type": "leave", "seat": 4, "reason": "moved"}, seat(8, "P4"))
    assert 4 not in t.engine.players and t.engine.players[8].stack == 10150
    assert t.engine.players[8].dealt is True
    h2 = t.hand()
    assert 8 in h2["dealt_in"]


def test_the_directors_view_shows_a_fouled_deck_and_a_blind_dodge_as_alerts():
    """The published state is the engine's snapshot (controller/service/snapshot.py): its `alerts`."""
    from controller.service.snapshot import TableState

    t, h = start("bluff_street", players=(1, 2, 3, 4), stack=10000)
    t.deal_all(h)
    t.feed(act(4, "raise", 300), act(1, "call", 300), act(2, "call", 300), act(3, "call", 300))
    t.feed({"type": "board", "cards": ["Ah", "7d", "2c"]})
    t.feed(act(2, "bet", 500), act(3, "call", 500), act(4, "fold"), act(1, "fold"))
    t.feed({"type": "board", "cards": ["7d"]})  # the seven of diamonds again (bluff_street:33.d.2)
    doc = TableState(t.engine.snapshot).snapshot()
    assert doc["phase"] == "misdeal" and [a["type"] for a in doc["alerts"]] == ["fouled_deck"]
    t = _after_one_hand("bluff_street")
    t.feed({"type": "leave", "seat": 4, "reason": "left"}, seat(7, "P4"))  # bluff_street:31
    assert [a["type"] for a in TableState(t.engine.snapshot).snapshot()["alerts"]] == ["blind_dodge"]
