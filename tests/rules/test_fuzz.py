"""Random and half-valid input never breaks the engine: every line gets rulings or an `error` line, never
an internal error, and a rejected line leaves the table exactly as it was."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.rules.cards import ALL_CARDS
from controller.rules.engine import TableEngine
from tests.rules.tablekit import feed_fuzzed, fuzzed_table

CARDS = sorted(ALL_CARDS)
seat_no = st.one_of(st.sampled_from([1, 3, 5, 7, 1, 3, 5, 7, 2]), st.integers(0, 11))
card = st.sampled_from([*CARDS, "Zz", "ah", 7])

event = st.one_of(
    st.fixed_dictionaries(
        {
            "type": st.just("seat"),
            "seat": seat_no,
            "player": st.sampled_from("ABCDEFGH"),
            "stack": st.one_of(st.none(), st.integers(0, 5000)),
            "moved": st.booleans(),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("leave"),
            "seat": seat_no,
            "reason": st.sampled_from(["eliminated", "moved", "left", "zzz"]),
        }
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("level"),
            "sb": st.integers(0, 300),
            "bb": st.integers(0, 300),
            "ante": st.integers(0, 50),
        }
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["hand_start", "hand_end", "burn"])}),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["button", "away", "back", "button_seen", "muck"]), "seat": seat_no}
    ),
    st.fixed_dictionaries({"type": st.just("deal"), "seat": seat_no, "card": st.one_of(st.none(), card)}),
    st.fixed_dictionaries(
        {
            "type": st.just("expose"),
            "seat": seat_no,
            "card": card,
            "by": st.sampled_from(["dealer", "player"]),
        }
    ),
    st.fixed_dictionaries({"type": st.just("boxed"), "card": card}),
    st.fixed_dictionaries({"type": st.just("board"), "cards": st.lists(card, min_size=0, max_size=5)}),
    st.fixed_dictionaries(
        {"type": st.just("show"), "seat": seat_no, "cards": st.lists(card, min_size=1, max_size=3)}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("action"),
            "seat": seat_no,
            "action": st.sampled_from(["fold", "check", "call", "bet", "raise", "allin", "x"]),
            "to": st.one_of(st.none(), st.integers(-5, 6000)),
            "chips": st.one_of(st.none(), st.lists(st.sampled_from([25, 100, 500, 1000, 0]), max_size=4)),
            "declared": st.one_of(st.none(), st.sampled_from(["raise", "call", "500"])),
        }
    ),
    st.text(max_size=20),
)


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(
    st.sampled_from(["cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"]),
    st.lists(event, min_size=1, max_size=80),
)
def test_no_line_sequence_causes_an_internal_error(profile, events):
    feed_fuzzed(fuzzed_table(profile), events)


def test_board_after_every_hand_was_killed_is_refused_not_a_crash():
    engine = TableEngine("corner_pocket", 6)
    for line in (
        {"type": "seat", "seat": 1, "player": "A", "stack": 1000},
        {"type": "seat", "seat": 2, "player": "B", "stack": 1000},
        {"type": "level", "sb": 5, "bb": 10},
        {"type": "hand_start"},
        {"type": "time_expired", "seat": 2},
        {"type": "time_expired", "seat": 1},
    ):
        engine.feed(json.dumps(line))
    out = engine.feed(json.dumps({"type": "board", "cards": ["2c", "3d", "4h"]}), 99)
    assert out[0]["type"] == "error" and "no seat holds a live hand" in out[0]["message"]


def test_phh_file_with_an_empty_value_is_a_phh_error(tmp_path):
    from controller.rules.phh import PhhError, load

    bad = tmp_path / "bad.phh"
    bad.write_text("variant = 'NT'\nantes =\n")
    try:
        load(bad)
    except PhhError as exc:
        assert "bad.phh" in str(exc)
    else:
        raise AssertionError("an empty value must be refused")
