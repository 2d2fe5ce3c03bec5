"""A self-dealt table where nobody enters the actions (`actions: observed`, ../shared/spec/table-events.md,
"Tables where nobody enters the actions"): the engine rules only on what the camera, the NFC reader and
the director can know, and on that exactly as a table with entered actions."""

from __future__ import annotations

import json
import random

import pytest

from controller.rules.engine import TableEngine
from tests.rules.tablekit import HAND_END, HAND_START, deal, feed_fuzzed, fuzzed_table, leave, of_type, seat

PROFILES = ("bar_league", "bluff_street", "cool_mule", "corner_pocket", "dragons_den")

# What an observed table can never know, so must never say: these come only from entered actions.
FOR_WANT_OF_ACTIONS = {
    "board_redeal",  # "betting looked unfinished"
    "burn_missing",
    "pots",
    "award",
    "pot_unresolved",
    "uncalled_returned",
    "show_order",
    "action_ruled",
    "out_of_turn",
}


def fold_seen(s: int) -> dict:
    return {"type": "fold_seen", "seat": s}


def chips_seen(s: int) -> dict:
    return {"type": "chips_seen", "seat": s}


def board(*cards: str) -> dict:
    return {"type": "board", "cards": list(cards)}


class Observed:
    """An engine on an observed table and everything it said."""

    def __init__(self, profile: str, seats: int, players: list[int], actions: str = "observed"):
        self.engine = TableEngine(profile, seats)
        self.out: list[dict] = []
        self.n = 0
        self.feed({"type": "table", "seats": seats, "profile": profile, "actions": actions})
        for s in players:
            self.feed(seat(s, stack=5000))
        self.feed({"type": "level", "sb": 25, "bb": 50})

    def feed(self, *lines: dict) -> list[dict]:
        got: list[dict] = []
        for line in lines:
            self.n += 1
            got.extend(self.engine.feed(json.dumps(line), self.n))
        self.out.extend(got)
        return got

    def hand(self) -> dict:
        return of_type(self.feed(HAND_START), "hand")[-1]

    def deal_all(self, hand: dict) -> list[dict]:
        return self.feed(*(deal(s) for s in hand["dealt_in"] * 2))


def _issue_example(actions: str | None) -> list[dict]:
    """The issue's hand: bar_league, four seats, the eight hole cards in order, flop, turn, river, end."""
    lines: list[dict] = [{"type": "table", "seats": 4, "profile": "bar_league"}]
    if actions is not None:
        lines[0]["actions"] = actions
    lines += [seat(s, stack=1000) for s in (1, 2, 3, 4)]
    lines += [{"type": "level", "sb": 25, "bb": 50}, HAND_START]
    lines += [deal(s) for s in (1, 2, 3, 4, 1, 2, 3, 4)]
    lines += [board("Ah", "Kd", "7c"), board("2s"), board("9h"), HAND_END]
    engine = TableEngine("bar_league", 4)
    out: list[dict] = []
    for n, line in enumerate(lines, 1):
        out.extend(engine.feed(json.dumps(line), n))
    return out


def test_the_issues_camera_only_hand_gives_no_false_ruling_when_observed():
    entered = _issue_example(None)  # the default is entered: the spec's "Everything above holds"
    assert {o["type"] for o in entered} & FOR_WANT_OF_ACTIONS, "entered mode rules on the missing betting"
    observed = _issue_example("observed")
    types = [o["type"] for o in observed]
    assert types == ["hand", "substantial_action"], observed
    # bar_league:Substantial Action "b) 3x passive actions": the flop says the four players acted pre-flop.
    assert observed[1]["rule"] == "bar_league:Substantial Action"


def test_table_line_actions_is_checked():
    engine = TableEngine("bar_league", 4)
    bad = engine.feed('{"type":"table","seats":4,"profile":"bar_league","actions":"typed"}', 1)
    assert bad[0]["type"] == "error" and "actions" in bad[0]["message"]
    assert not engine.observed  # state unchanged
    assert engine.feed('{"type":"table","actions":"observed"}', 2) == []
    assert engine.observed
    with pytest.raises(ValueError):
        TableEngine("bar_league", 4, actions="typed")


def test_camera_lines_change_nothing_at_an_entered_table():
    """fold_seen/chips_seen are valid in either mode; with entered actions the action lines say it all."""

    def run(with_camera: bool) -> list[dict]:
        t = Observed("bluff_street", 6, [1, 2, 3, 4], actions="entered")
        h = t.hand()
        t.deal_all(h)
        utg, btn, sb, bb = h["dealt_in"][2], h["button"], h["sb"], h["bb"]
        script = [
            {"type": "action", "seat": utg, "action": "raise", "to": 150},
            chips_seen(utg),
            {"type": "action", "seat": btn, "action": "fold"},
            fold_seen(btn),
            {"type": "action", "seat": sb, "action": "fold"},
            {"type": "action", "seat": bb, "action": "call"},
            chips_seen(bb),
            {"type": "burn"},
            board("Ah", "Kd", "7c"),
            HAND_END,
        ]
        for line in script:
            if with_camera or line["type"] not in ("fold_seen", "chips_seen"):
                t.feed(line)
        return t.out

    assert run(True) == run(False)
    assert of_type(run(True), "pots")  # the entered table still computes its pots


def test_camera_lines_are_checked():
    t = Observed("bar_league", 6, [1, 2, 3, 4])
    assert t.feed(fold_seen(2)) == []  # between hands: cards pushed in, nothing to rule on
    h = t.hand()
    t.deal_all(h)
    bad = t.feed(chips_seen(6))
    assert bad[0]["type"] == "error" and "seat 6" in bad[0]["message"]
    bad = t.feed({"type": "fold_seen", "seat": 11})
    assert bad[0]["type"] == "error" and "seat 11" in bad[0]["message"]
    assert t.engine.hand.deal.substantial is False  # nothing counted from rejected lines


# ---- substantial action, per rulebook, as the spec counts it -------------------------------------------


def _late_card(profile: str, seen: list[str], boards: int = 0) -> list[dict]:
    """Four players dealt in; the camera sees `seen` ("f": a fold, "c": chips) from the seats in turn
    after the big blind, then `boards` board lines; then a fifth hole card to the big blind."""
    t = Observed(profile, 6, [1, 2, 4, 5])
    h = t.hand()
    t.deal_all(h)
    order = h["dealt_in"][2:] + h["dealt_in"][:2]  # first to act pre-flop: left of the big blind
    for s, what in zip(order, seen, strict=False):
        t.feed(fold_seen(s) if what == "f" else chips_seen(s))
    for cards in (["Ah", "Kd", "7c"], ["2s"], ["9h"])[:boards]:
        t.feed(board(*cards))
    return t.feed(deal(h["bb"]))


@pytest.mark.parametrize(
    "profile, seen, boards, reached",
    [
        # bar_league:Substantial Action "a) 1x aggressive action (bet, call, raise, complete)
        # b) 3x passive actions (check, bring-in, fold)"
        ("bar_league", "c", 0, True),
        ("bar_league", "ff", 0, False),
        ("bar_league", "fff", 0, True),
        # bluff_street:33.c "1. Any two actions in turn, where at least one of which puts chips in the pot
        # ... 2. Any combination of three actions in turn"
        ("bluff_street", "c", 0, False),
        ("bluff_street", "fc", 0, True),
        ("bluff_street", "ff", 0, False),
        ("bluff_street", "fff", 0, True),
        ("dragons_den", "cf", 0, True),  # dragons_den:27 uses the term; the TDA's (bluff_street:33.c)
        ("dragons_den", "f", 0, False),
        # cool_mule:5.o "If during play at least 2 players have acted ..."
        ("cool_mule", "c", 0, False),
        ("cool_mule", "fc", 0, True),
        # corner_pocket:Dealing.H "... discovered before two players act on their hands, it is a misdeal"
        ("corner_pocket", "f", 0, False),
        ("corner_pocket", "ff", 0, True),
        # A board line: "every player still in the hand acted in it at least once" (four of them here).
        ("bar_league", "", 1, True),
        ("bluff_street", "", 1, True),
        ("cool_mule", "", 1, True),
        ("corner_pocket", "", 1, True),
        ("dragons_den", "", 1, True),
    ],
)
def test_a_late_card_is_a_dead_hand_after_substantial_action_and_a_misdeal_before(
    profile: str, seen: str, boards: int, reached: bool
):
    out = _late_card(profile, list(seen), boards)
    if reached:
        # cool_mule:5.o "their hand is considered dead"; bar_league:Misdeals "A misdeal may only be declared
        # if substantial action has not yet occurred."
        assert [o["type"] for o in out] == ["dead_hand"], out
        assert out[0]["reason"] == "wrong_card_count"
    else:
        assert [o["type"] for o in out] == ["misdeal"], out
        assert out[0]["reason"] == "wrong_card_count"


def test_heads_up_flop_counts_two_passive_actions_only():
    """Two players see the flop with nothing seen pre-flop: two actions of unknown kind. Under bar_league
    (3 passive or 1 aggressive) that is not yet substantial action; under cool_mule:5.o (two players acted)
    it is."""
    for profile, reached in (("bar_league", False), ("cool_mule", True)):
        t = Observed(profile, 6, [2, 5])
        h = t.hand()
        t.deal_all(h)
        out = t.feed(board("Ah", "Kd", "7c"))
        assert bool(of_type(out, "substantial_action")) is reached, (profile, out)


def test_blinds_seen_going_in_during_the_deal_are_no_action():
    """bar_league:Substantial Action counts bets, calls, raises and completions: the blinds pushed out while
    the cards are dealt are none of them. Once every hand is dealt, chips from the big blind are a raise."""
    t = Observed("bar_league", 6, [1, 2, 4, 5])
    h = t.hand()
    assert t.feed(chips_seen(h["sb"]), chips_seen(h["bb"])) == []
    t.deal_all(h)
    assert not t.engine.hand.deal.substantial
    assert of_type(t.feed(chips_seen(h["bb"])), "substantial_action")


def test_actions_entered_at_an_observed_table_count_and_are_not_judged():
    """An `action` line that arrives is used (here: it reaches substantial action); its turn is not judged,
    since the actions before it were not entered."""
    t = Observed("bar_league", 6, [1, 2, 4, 5])
    h = t.hand()
    t.deal_all(h)
    out = t.feed({"type": "action", "seat": h["bb"], "action": "raise", "to": 300})  # the BB is not first
    assert [o["type"] for o in out] == ["substantial_action"]
    out = t.feed({"type": "action", "seat": h["sb"], "action": "fold"})
    assert out == []
    bad = t.feed(fold_seen(h["sb"]), {"type": "action", "seat": h["sb"], "action": "call"})
    assert [o["type"] for o in bad] == ["error"] and "folded" in bad[0]["message"]


# ---- what needs no betting knowledge is ruled exactly as with entered actions ----------------------------


@pytest.mark.parametrize("profile", PROFILES)
def test_board_irregularities_that_need_no_betting_are_ruled(profile: str):
    t = Observed(profile, 6, [1, 2, 4, 5])
    h = t.hand()
    t.deal_all(h)
    four = t.feed(board("Ah", "Kd", "7c", "2s"))
    redeal = of_type(four, "board_redeal")
    assert redeal and redeal[0]["street"] == "flop"
    expected = t.engine.profile.value("board", "four_card_flop")  # e.g. bluff_street:34 scramble
    assert redeal[0]["procedure"] == expected
    assert redeal[0]["rule"] == t.engine.profile.rule("board", "four_card_flop")
    assert not of_type(t.feed(board("Ah", "Kd", "7c")), "board_redeal")  # the new flop, no burn needed
    both = t.feed(board("2s", "9h"))  # turn and river turned up as one group: the river came early
    assert [(o["type"], o.get("street")) for o in both] == [("board_redeal", "river")]
    assert not ({o["type"] for o in t.out} & {"burn_missing", "pots", "award"})


@pytest.mark.parametrize("profile", PROFILES)
def test_a_player_exposing_a_card_is_ruled_per_rulebook(profile: str):
    """corner_pocket:Exposing Cards.A "A player who exposes his cards during the play will have his hand
    killed"; the other four play the card (bar_league:Exposing Cards(d), cool_mule:9.i, ...)."""
    t = Observed(profile, 6, [1, 2, 4, 5])
    h = t.hand()
    t.deal_all(h)
    out = t.feed({"type": "expose", "seat": h["bb"], "card": "Ah", "by": "player"})
    if profile == "corner_pocket":
        assert [(o["type"], o["reason"]) for o in out] == [("dead_hand", "exposed_cards")]
    else:
        assert out == []


# ---- a whole evening, per rulebook ----------------------------------------------------------------------

DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]


def _deal_fault(rng: random.Random, h: dict, empty: int) -> tuple[list[dict], str]:
    """Lines of a deal with a camera-visible dealer's error, and the misdeal every rulebook rules on it."""
    order = list(h["dealt_in"])
    kinds = ["first_exposed", "wrong_first_seat", "ineligible", "wrong_count"]
    if len(order) >= 5:  # (with fewer, the third card may be the button's: bar_league:Misdeals(b))
        kinds.append("two_exposed")
    kind = rng.choice(kinds)
    if kind == "first_exposed":  # cool_mule:5.g, bar_league:Misdeals(a), corner_pocket:Dealing.E ...
        return [deal(order[0], "Ah")], "first_cards_exposed"
    if (
        kind == "wrong_first_seat"
    ):  # bar_league:Misdeals(g) "the first hole card was dealt to the wrong position"
        return [deal(order[1])], "first_card_wrong_seat"
    if kind == "ineligible":  # bluff_street:33.a.3 "Cards dealt to a seat not entitled to a hand"
        return [deal(order[0]), deal(empty)], "dealt_to_ineligible_seat"
    if kind == "two_exposed":  # cool_mule:5.h "if more than one card is exposed, this is a misdeal"
        lines = [deal(s) for s in order]
        lines[2] = deal(order[2], "Kd")
        lines += [deal(order[0]), deal(order[1]), deal(order[3] if len(order) > 4 else order[0], "Qs")]
        return lines, "multiple_exposed"
    # bar_league:Misdeals(f) "any player has the incorrect quantity of hole cards"
    return [deal(s) for s in order * 2] + [deal(order[1])], "wrong_card_count"


def _camera_hand(rng: random.Random, t: Observed, h: dict) -> None:
    """Folds and chips seen (or not at all), a board up to some street, sometimes a showdown."""
    live = [s for s in h["dealt_in"]]
    streets = rng.choice((0, 1, 1, 2, 3, 3))
    deck = list(DECK)
    rng.shuffle(deck)
    for street in range(streets + 1):
        if rng.random() < 0.3:
            pass  # the camera saw nothing of this round
        else:
            for s in list(live):
                if len(live) > 2 and rng.random() < 0.35:
                    t.feed(fold_seen(s))
                    live.remove(s)
                elif rng.random() < 0.5:
                    t.feed(chips_seen(s))
        if street < streets:
            t.feed(board(*[deck.pop() for _ in range(3 if street == 0 else 1)]))
    if streets == 3 and rng.random() < 0.5:
        for s in live[:2]:
            t.feed({"type": "show", "seat": s, "cards": [deck.pop(), deck.pop()]})


def _expected_positions(prev: dict, occupied: set[int], seats: int) -> dict:
    """The dead button in three lines (bar_league:Dead Button "the button on each hand will always be
    moved into the small blind position from the previous hand"; the big blind advances to the next
    player; the small blind is last hand's big blind, posted only if that player is still there)."""
    bb = next(s for s in [(prev["bb"] + i - 1) % seats + 1 for i in range(1, seats + 1)] if s in occupied)
    sb_position = prev["sb"] if prev["sb"] is not None else prev["dead_sb_seat"]
    return {
        "button": sb_position,
        "bb": bb,
        "sb": prev["bb"] if prev["bb"] in occupied else None,
        "dead_button": sb_position not in occupied,
    }


@pytest.mark.parametrize("profile", PROFILES)
def test_a_whole_evening_nine_players_to_heads_up(profile: str):
    rng = random.Random(f"evening-{profile}")
    seats = 10  # seat 10 stays empty: a card dealt to it is dealt to a seat not entitled to a hand
    players = list(range(1, 10))
    t = Observed(profile, seats, players)
    twin = TableEngine(profile, seats)  # the same table with entered actions: same button and blinds
    twin_lines: list[dict] = [{"type": "table", "seats": seats, "profile": profile}]
    twin_lines += [seat(s) for s in players] + [{"type": "level", "sb": 25, "bb": 50}]
    for line in twin_lines:
        twin.feed(line)
    occupied = set(players)
    misdeals_made: list[str] = []
    places: list[int] = []
    hands: list[dict] = []
    heads_up_hands = 0
    while heads_up_hands < 4:
        h = t.hand()
        twin_hand = of_type(twin.feed(HAND_START), "hand")[-1]
        assert h == twin_hand
        if hands and len(occupied) >= 3 and hands[-1]["dealt_in"] and len(hands[-1]["dealt_in"]) >= 3:
            want = _expected_positions(hands[-1], occupied, seats)
            assert {k: h[k] for k in want} == want, (profile, hands[-1], h)
        hands.append(h)
        if len(occupied) == 2:
            heads_up_hands += 1
        if rng.random() < 0.2:
            lines, reason = _deal_fault(rng, h, empty=10)
            got = t.feed(*lines)
            for line in lines:
                twin.feed(line)
            misdeals = of_type(got, "misdeal")
            assert [m["reason"] for m in misdeals] == [reason], (profile, reason, got)
            misdeals_made.append(reason)
            h = t.hand()  # the re-deal: an exact replay
            assert h["redeal"] and h == of_type(twin.feed(HAND_START), "hand")[-1]
            for line in [deal(s) for s in h["dealt_in"] * 2]:
                twin.feed(line)
        t.deal_all(h)
        _camera_hand(rng, t, h)
        busting = []
        if len(occupied) > 2 and len(hands) % 3 == 0:  # a bust-out every third hand
            busting = [rng.choice(sorted(occupied))]
            if rng.random() < 0.5:  # tapped out while the hand is still on the table
                out = t.feed(leave(busting[0]))
                places += [o["place"] for o in of_type(out, "eliminated")]
        if rng.random() < 0.7:
            t.feed(HAND_END)  # else the next NEW HAND ends it
        twin.feed(HAND_END)
        for s in busting:
            out = t.feed(leave(s))  # the director's leave after a tap-out is taken quietly
            places += [o["place"] for o in of_type(out, "eliminated")]
            twin.feed(leave(s))
            occupied.discard(s)
    said = {o["type"] for o in t.out}
    assert not said & FOR_WANT_OF_ACTIONS, said & FOR_WANT_OF_ACTIONS
    assert "error" not in said, [o for o in t.out if o["type"] == "error"]
    assert len(of_type(t.out, "misdeal")) == len(misdeals_made) > 0
    assert places == list(range(9, 2, -1)), places  # finishing order kept: ninth place first
    assert len(hands) > 20
    assert any(h["dead_button"] for h in hands), "an evening of bust-outs puts the button on an empty seat"


def test_the_issues_hand_through_rules_replay():
    """The fixed contract: outside tests feed lines to `smart-table rules replay` and compare."""
    import subprocess
    import sys

    lines = [{"type": "table", "seats": 4, "profile": "bar_league", "actions": "observed"}]
    lines += [seat(s, stack=1000) for s in (1, 2, 3, 4)]
    lines += [{"type": "level", "sb": 25, "bb": 50}, HAND_START]
    lines += [deal(s) for s in (1, 2, 3, 4, 1, 2, 3, 4)]
    lines += [board("Ah", "Kd", "7c"), fold_seen(1), chips_seen(2), board("2s"), board("9h"), HAND_END]
    lines += [leave(3), HAND_START]
    r = subprocess.run(
        [sys.executable, "-m", "controller.cli", "rules", "replay", "-"],
        input="".join(json.dumps(line) + "\n" for line in lines),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    out = [json.loads(x) for x in r.stdout.splitlines()]
    assert [o["type"] for o in out] == ["hand", "substantial_action", "eliminated", "hand"], out
    assert out[2] == {"type": "eliminated", "seat": 3, "place": 4, "player": "P3"}
    # bar_league:Dead Button: the button moves into last hand's small blind (seat 1); seat 3 gone, the big
    # blind advances past it to seat 4, and seat 2 (last hand's big blind) posts the small blind.
    assert (out[3]["button"], out[3]["sb"], out[3]["bb"]) == (1, 2, 4)


def test_random_camera_lines_never_crash_nor_rule_for_want_of_actions():
    """Half-valid lines at an observed table: an `error` line leaves the table as it was, nothing is an
    internal error, and no ruling ever comes from actions nobody entered."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.rules.test_fuzz import event

    camera = st.fixed_dictionaries(
        {"type": st.sampled_from(["fold_seen", "chips_seen"]), "seat": st.integers(0, 11)}
    )
    no_bets = st.one_of(camera, camera, event).filter(
        lambda ev: not (isinstance(ev, dict) and ev.get("type") == "action")
    )

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(PROFILES), st.lists(no_bets, min_size=1, max_size=60))
    def run(profile: str, events: list) -> None:
        for text, out in feed_fuzzed(fuzzed_table(profile, actions="observed"), events):
            for line in out:
                assert line["type"] not in FOR_WANT_OF_ACTIONS - {"board_redeal"}, (text, line)
                if line["type"] == "board_redeal":  # only a four-card flop or two cards for the turn
                    assert len(json.loads(text)["cards"]) >= 2, (text, line)

    run()


def test_a_camera_misread_that_looks_like_a_duplicate_does_not_void_an_observed_hand():
    """At an observed table every card code is the camera's reading: a tabled 6h read as the board's 5h
    must not be ruled a fouled deck (bluff_street:33.d.2 voids all action), since the table speaks only
    when it is right. The same lines at an entered table are ruled a fouled deck."""
    for actions, fouled in (("observed", False), ("entered", True)):
        t = Observed("bluff_street", 6, [1, 2, 3], actions=actions)
        h = t.hand()
        t.deal_all(h)
        if actions == "entered":
            t.feed(*(act for act in _calls_to_flop(h)))
        out = t.feed(board("2s", "4d", "5h"))
        out += t.feed({"type": "show", "seat": 2, "cards": ["5h", "6c"]})
        assert any(o["type"] == "fouled_deck" for o in out) is fouled, (actions, out)
        assert (t.engine.phase == "misdeal") is fouled


def _calls_to_flop(h: dict) -> list[dict]:
    """Everyone calls the big blind and the big blind checks (an entered table's pre-flop)."""
    order = h["dealt_in"]
    bb = h["bb"]
    first = order.index(bb) + 1
    lines = [
        {"type": "action", "seat": s, "action": "call", "to": 50}
        for s in order[first:] + order[:first]
        if s != bb
    ]
    return [*lines, {"type": "action", "seat": bb, "action": "check"}]


# ---- what the tracker says when it saw a card but could not read it (issue 14) --------------------------


def test_a_first_card_seen_face_up_but_unread_is_a_misdeal_as_a_read_one_is():
    """bar_league:Misdeals(a): one of the first two cards exposed is a misdeal; which card it was does not
    matter, so the tracker's `deal` with `face: "up"` and no code rules exactly as one with a code."""
    for line in ({"face": "up"}, {"card": "Kd"}):
        t = Observed("bar_league", 6, [1, 2, 3, 4])
        h = t.hand()
        out = t.feed({"type": "deal", "seat": h["first_card"], **line})
        assert [(o["type"], o.get("reason"), o.get("rule")) for o in out] == [
            ("misdeal", "first_cards_exposed", "bar_league:Misdeals(a)")
        ]


def test_a_later_card_seen_face_up_but_unread_is_replaced_without_naming_a_card():
    """cool_mule:5.j/5.h: a single card exposed later in the deal is replaced (it becomes the burn); with
    no code read the ruling names no card (`card` null) rather than a wrong one, and a second exposure is
    the misdeal it would be with codes."""
    t = Observed("cool_mule", 6, [1, 2, 3, 4])
    h = t.hand()
    order = h["dealt_in"]
    t.feed(*(deal(s) for s in order[:3]))
    out = t.feed({"type": "deal", "seat": order[3], "face": "up"})
    assert [(o["type"], o["seat"], o["card"], o["rule"]) for o in out] == [
        ("replace_exposed", order[3], None, "cool_mule:5.j")
    ]
    from controller.rules.pretty import describe

    assert "None" not in describe(out[0]) and "exposed to seat" in describe(out[0])
    out = t.feed({"type": "expose", "seat": order[2], "by": "dealer"})  # seen turned up, not read
    assert [(o["type"], o["reason"]) for o in out] == [("misdeal", "multiple_exposed")]


def test_a_face_down_deal_with_a_card_code_is_refused_naming_the_field():
    t = Observed("cool_mule", 6, [1, 2, 3])
    h = t.hand()
    out = t.feed({"type": "deal", "seat": h["first_card"], "face": "down", "card": "Ah"})
    assert out[0]["type"] == "error" and "field 'face'" in out[0]["message"]
    out = t.feed({"type": "deal", "seat": h["first_card"], "face": "sideways"})
    assert out[0]["type"] == "error" and "field 'face'" in out[0]["message"]


def test_a_player_exposing_an_unread_card_is_ruled_by_who_exposed_it():
    """corner_pocket's player exposure kills the hand; an `expose` without a code needs no code for that."""
    t = Observed("corner_pocket", 6, [1, 2, 3])
    h = t.hand()
    t.deal_all(h)
    out = t.feed({"type": "expose", "seat": h["dealt_in"][1], "by": "player"})
    assert [(o["type"], o["reason"]) for o in out] == [("dead_hand", "exposed_cards")]


def test_a_board_group_with_unread_cards_moves_the_street_on_its_count():
    """The tracker's `board` with `count`: three cards seen, two read, is the flop; the turn then comes as
    one card, and a four-card flop seen with none read is still a four-card flop (bar_league:Board)."""
    t = Observed("bar_league", 6, [1, 2, 3])
    h = t.hand()
    t.deal_all(h)
    out = t.feed({"type": "board", "cards": ["Ah", "Kd"], "count": 3})
    assert {o["type"] for o in out} <= {"substantial_action"}  # no ruling on the flop itself
    assert t.engine.phase == "flop" and t.engine.snapshot()["board"] == ["Ah", "Kd"]
    assert t.feed({"type": "board", "cards": [], "count": 1}) == []
    assert t.engine.phase == "turn"
    bad = t.feed({"type": "board", "cards": ["2c", "3c"], "count": 1})
    assert bad[0]["type"] == "error" and "field 'count'" in bad[0]["message"]

    t = Observed("bar_league", 6, [1, 2, 3])
    t.deal_all(t.hand())
    out = t.feed({"type": "board", "cards": [], "count": 4})
    assert [(o["street"], o["rule"]) for o in out if o["type"] == "board_redeal"] == [
        ("flop", t.engine.profile.rule("board", "four_card_flop"))
    ]


def test_an_entered_showdown_on_a_board_not_all_read_awards_nothing_it_cannot_judge():
    """At an entered table a board card seen but not read leaves the showdown unjudged: the contested pot
    is not awarded (`pot_unresolved`), rather than awarded on a wrong board."""
    t = Observed("bluff_street", 6, [1, 2, 3], actions="entered")
    h = t.hand()
    t.deal_all(h)
    t.feed(*_calls_to_flop(h))
    t.feed({"type": "burn"}, board("2s", "4d", "5h"))
    for street in ({"type": "board", "cards": [], "count": 1}, board("9c")):
        for s in [s for s in h["dealt_in"] if s != h["button"]] + [h["button"]]:
            t.feed({"type": "action", "seat": s, "action": "check"})
        t.feed({"type": "burn"}, street)
    for s in [s for s in h["dealt_in"] if s != h["button"]] + [h["button"]]:
        t.feed({"type": "action", "seat": s, "action": "check"})
    t.feed(
        {"type": "show", "seat": 1, "cards": ["Ah", "Ad"]}, {"type": "show", "seat": 2, "cards": ["Kh", "Kd"]}
    )
    out = t.feed(HAND_END)
    assert "award" not in [o["type"] for o in out]
    assert [o["reason"] for o in out if o["type"] == "pot_unresolved"] == ["the board has 4 cards, not 5"]


# ---- a fouled deck from hole cards exposed in the deal (issue 17) -----------------------------------------


def _exposed_then(profile: str, actions: str, then: list[dict]) -> list[dict]:
    """A card exposed in the deal (the sixth off the deck: replaced, it becomes the burn), then `then`."""
    t = Observed(profile, 6, [1, 2, 3, 4], actions=actions)
    h = t.hand()
    order = h["dealt_in"]
    t.feed(*(deal(s) for s in order), deal(order[0]))
    out = t.feed({"type": "deal", "seat": order[1], "card": "Qs"})
    assert [o["type"] for o in out] == ["replace_exposed"], out
    t.feed(*(deal(s) for s in order[2:]), deal(order[1]))
    if actions == "entered":
        t.feed(*_calls_to_flop(h), {"type": "burn"})
    return t.feed(*then)


def test_a_card_exposed_in_the_deal_turning_up_again_fouls_the_deck_at_an_entered_table():
    """bluff_street:33.d.2: the exposed Qs became the burn; a Qs on the flop is a second Qs, all action
    void. Also when the second Qs is a card dealt face up, or tabled."""
    out = _exposed_then("bluff_street", "entered", [board("Qs", "2c", "3d")])
    assert [(o["type"], o["card"], o["rule"]) for o in out] == [("fouled_deck", "Qs", "bluff_street:33.d.2")]
    out = _exposed_then("cool_mule", "entered", [board("4c", "2c", "3d")])
    assert "fouled_deck" not in [o["type"] for o in out]


def test_a_card_exposed_in_the_deal_and_seen_again_says_nothing_at_an_observed_table():
    """At an observed table the two codes are camera readings: a misread must not void the hand."""
    out = _exposed_then("bluff_street", "observed", [board("Qs", "2c", "3d")])
    assert "fouled_deck" not in [o["type"] for o in out]


def test_a_player_showing_the_card_he_exposed_is_no_second_card():
    """A player's own exposed card stays in his hand: tabling it is the same card; another seat tabling it
    is a second one (bluff_street:33.d.2)."""
    t = Observed("bluff_street", 6, [1, 2, 3], actions="entered")
    h = t.hand()
    t.deal_all(h)
    seat_a, seat_b = h["dealt_in"][0], h["dealt_in"][1]
    assert t.feed({"type": "expose", "seat": seat_a, "card": "Jh", "by": "player"}) == []
    again = t.feed({"type": "expose", "seat": seat_b, "card": "Jh", "by": "player"})
    assert [o["type"] for o in again] == ["fouled_deck"]
