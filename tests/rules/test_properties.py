"""Properties of the seating and button rules over random seatings and random elimination sequences
(hypothesis): nobody misses a big blind through eliminations, the big blind advances every hand, nobody
posts it twice in a row, and replaying the same lines gives the same output."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.rules.engine import TableEngine, dumps
from controller.rules.seating import strictly_between

PROFILES = ["cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"]


@st.composite
def sessions(draw):
    """A table, its first seating and, between hands, random eliminations and arrivals."""
    seats = draw(st.integers(4, 10))
    profile = draw(st.sampled_from(PROFILES))
    occupied = draw(st.lists(st.integers(1, seats), min_size=3, max_size=seats, unique=True))
    lines = [{"type": "table", "seats": seats, "profile": profile}]
    lines += [{"type": "seat", "seat": s, "player": f"P{s}"} for s in occupied]
    lines.append({"type": "level", "sb": 50, "bb": 100})
    if draw(st.booleans()):
        lines.append({"type": "button", "seat": draw(st.sampled_from(occupied))})
    present = set(occupied)
    next_id = 100
    for _ in range(draw(st.integers(3, 25))):
        lines += [{"type": "hand_start"}, {"type": "hand_end"}]
        # Between hands: up to two eliminations (keeping two players) and maybe an arrival.
        for _ in range(draw(st.integers(0, 2))):
            if len(present) > 2:
                gone = draw(st.sampled_from(sorted(present)))
                present.discard(gone)
                lines.append({"type": "leave", "seat": gone, "reason": "eliminated"})
        empty = [s for s in range(1, seats + 1) if s not in present]
        if empty and draw(st.integers(0, 4)) == 0:
            s = draw(st.sampled_from(empty))
            present.add(s)
            next_id += 1
            lines.append({"type": "seat", "seat": s, "player": f"N{next_id}", "moved": draw(st.booleans())})
    return seats, lines


def run(lines):
    engine = TableEngine("bluff_street", 10)
    out = []
    for n, line in enumerate(lines, 1):
        out.extend(engine.feed(json.dumps(line), n))
    return out


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions())
def test_big_blind_advances_to_the_next_player_due_and_never_twice(session):
    seats, lines = session
    out = run(lines)
    assert not [o for o in out if o["type"] == "error"], [o for o in out if o["type"] == "error"][:3]
    hands = [o for o in out if o["type"] == "hand"]
    # who sat where when each hand started
    players_at: list[dict[int, str]] = []
    current: dict[int, str] = {}
    for line in lines:
        if line["type"] == "seat":
            current[line["seat"]] = line["player"]
        elif line["type"] == "leave":
            current.pop(line["seat"], None)
        elif line["type"] == "hand_start":
            players_at.append(dict(current))
    assert len(hands) == len(players_at)
    for i in range(1, len(hands)):
        prev, hand = hands[i - 1], hands[i]
        before, now = players_at[i - 1], players_at[i]
        dealt = set(hand["dealt_in"])
        # The big blind goes to the first player dealt in after last hand's big blind: nobody in
        # between was skipped, so nobody misses a big blind through eliminations.
        skipped = [s for s in strictly_between(prev["bb"], hand["bb"], seats) if s in dealt]
        assert skipped == [], (prev, hand)
        # Nobody posts the big blind twice in a row.
        assert now[hand["bb"]] != before.get(prev["bb"]), (prev, hand)
        assert hand["bb"] in dealt and (hand["sb"] is None or hand["sb"] in dealt)
        if (
            not hand["sitting_out"]
            and not prev["sitting_out"]
            and len(dealt) > 2
            and len(prev["dealt_in"]) > 2
        ):
            # The small blind position is last hand's big blind seat; the button last hand's small
            # blind position (unless the positions had to be rebuilt coming out of heads-up).
            sb_position = hand["sb"] if hand["sb"] is not None else hand["dead_sb_seat"]
            prev_sb_position = prev["sb"] if prev["sb"] is not None else prev["dead_sb_seat"]
            if sb_position == prev["bb"] and prev_sb_position != hand["bb"]:
                assert hand["button"] == prev_sb_position
        if len(dealt) == 2:
            assert hand["button"] == hand["sb"] and hand["first_card"] == hand["bb"]
        # dead_button exactly when the button seat is not dealt in
        assert hand["dead_button"] == (hand["button"] not in dealt)
        if hand["dead_button"]:
            # the dealer is the nearest player dealt in to the right of the dead button
            s = hand["button"]
            while s not in dealt:
                s = s - 1 if s > 1 else seats
            assert hand["dealer"] == s


@settings(max_examples=100, deadline=None)
@given(sessions())
def test_replay_is_deterministic(session):
    _, lines = session
    first = [dumps(o) for o in run(lines)]
    second = [dumps(o) for o in run(lines)]
    assert first == second
