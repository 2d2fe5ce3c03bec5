"""The shortcuts taken for speed rule exactly as the general code: a bare fold, check or call (no amount,
chips or declaration) is ruled without building a `Facing`, and seven-card hands are ranked from one prime
product. Each is checked against the general path it stands in for."""

from __future__ import annotations

import random
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import betting
from controller.rules.betting import Facing, bare_ruling, interpret
from controller.rules.errors import Rejected
from controller.rules.profile import load_profile
from controller.rules.showdown import hand_value

facings = st.builds(
    Facing,
    committed=st.integers(0, 3000),
    stack=st.one_of(st.none(), st.integers(0, 3000)),
    current=st.integers(0, 4000),
    min_raise=st.integers(1, 1000),
    min_bet=st.integers(1, 500),
    can_raise=st.booleans(),
    restriction=st.sampled_from([None, "check_facing_bet", "out_of_turn"]),
)


def _general(ev: dict, facing: Facing, profile) -> tuple:
    """What `interpret` rules with the shortcut switched off: the ruling, or the rejection message."""
    with mock.patch.object(betting, "bare_ruling", lambda *args: None):
        try:
            return ("ruling", interpret(ev, facing, profile))
        except Rejected as exc:
            return ("rejected", str(exc))


@settings(max_examples=400, deadline=None)
@given(facings, st.sampled_from(["fold", "check", "call", "bet", "raise", "allin", "x", None]),
       st.sampled_from(["cool_mule", "corner_pocket", "bluff_street"]))
def test_a_bare_word_is_ruled_as_the_general_path_rules_it(facing, word, profile_name):
    profile = load_profile(profile_name)
    ev = {"seat": 1, "action": word}
    quick = bare_ruling(word, facing.committed, facing.stack, facing.current)
    if quick is not None:
        assert ("ruling", quick) == _general(ev, facing, profile)
    else:  # left to interpret: only what the shortcut does not cover
        assert word not in ("fold", "call") and not (word == "check" and facing.current <= facing.committed)


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
