"""The shortcuts taken for speed rule exactly as the general code: a bare fold, check or call (no amount,
chips or declaration) is ruled without building a `Facing`, and seven-card hands are ranked from one prime
product. Each is checked against the general path it stands in for."""

from __future__ import annotations

import random
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import betting
from controller.rules.betting import WORDS, Facing, bare_ruling, interpret, sized_ruling
from controller.rules.engine import TableEngine
from controller.rules.errors import Rejected
from controller.rules.profile import load_profile
from controller.rules.protocol import _VALIDATORS, QUICK_CHECKS
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
@given(
    facings,
    st.sampled_from(["fold", "check", "call", "bet", "raise", "allin", "x", None]),
    st.sampled_from(["cool_mule", "corner_pocket", "bluff_street"]),
)
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


# ---- the engine's shortcuts for the usual line -----------------------------------------------------------

_seat_no = st.one_of(st.integers(-1, 11), st.sampled_from([True, 2.0, "3", None]))
_card = st.sampled_from(["Ah", "Kd", "7c", "Td", "2s", "ah", "1x", 7, None])
_line = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("deal"), "seat": _seat_no},
        optional={"card": _card},
    ),
    st.fixed_dictionaries(
        {"type": st.just("action"), "seat": _seat_no, "action": st.sampled_from([*WORDS, "x", 3, None])},
        optional={
            "to": st.one_of(st.integers(-2, 500), st.sampled_from([True, 1.5, "9", None])),
            "chips": st.sampled_from([None, [100], [], [0], "x"]),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["board", "show"]), "seat": _seat_no},
        optional={"cards": st.one_of(st.lists(_card, max_size=6), st.sampled_from(["Ah", None, [["Ah"]]]))},
    ),
    st.fixed_dictionaries(
        {"type": st.just("seat"), "seat": _seat_no},
        optional={
            "player": st.sampled_from(["A", "", 7, True, None, ["A"]]),
            "stack": st.one_of(st.integers(-1, 3), st.sampled_from([None, 2.5, True])),
            "moved": st.sampled_from([True, False, None, 0, 1, "yes"]),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["burn", "hand_start", "hand_end", "muck", "button", "away", "back"])},
        optional={"seat": _seat_no},
    ),
    st.fixed_dictionaries(
        {"type": st.just("table")},
        optional={
            "seats": st.one_of(st.integers(0, 25), st.sampled_from([None, True, 6.0])),
            "profile": st.sampled_from(["cool_mule", 3, None]),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("level")},
        optional={
            "sb": st.one_of(st.integers(-1, 120), st.sampled_from([None, True, 50.0])),
            "bb": st.one_of(st.integers(-1, 120), st.sampled_from([None, False, "100"])),
            "ante": st.one_of(st.integers(-1, 20), st.sampled_from([None, True, 1.5])),
            "big_blind_ante": st.sampled_from([True, False, None, 0, 1]),
        },
    ),
)


@settings(max_examples=1500, deadline=None)
@given(_line, st.integers(2, 10))
def test_the_one_pass_check_accepts_only_what_the_full_check_accepts(ev, seats):
    """`protocol.QUICK_CHECKS` answers True only for a line the full check takes without a word, and then
    fills in the same defaults."""
    quick, full = dict(ev), dict(ev)
    if not QUICK_CHECKS[ev["type"]](quick, seats):
        return
    _VALIDATORS[ev["type"]](full, seats)  # must not raise
    assert quick == full


def _play(lines: list[dict], profile: str, quick: bool) -> list[dict]:
    """Every output line of `lines`, with or without the shortcuts (in-order deal, bare in-turn action)."""
    engine = TableEngine(profile, 9)
    out = []
    for n, line in enumerate(lines, 1):
        out += engine.feed(line, n)
        if not quick and engine.hand is not None:
            engine.hand.deal.settle(engine.hand.positions.dealt_in)  # every card: the full deal monitor
            if engine.hand.play is not None:
                engine.hand.play.quick = False
        out.append({"snapshot": engine.snapshot(), "stacks": engine.stacks()})
    return out


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(["cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"]),
    st.integers(0, 2**32),
)
def test_the_shortcuts_rule_exactly_as_the_general_path(profile, seed):
    """Hands dealt in order and out of order, with exposed cards, bare and sized actions in and out of turn:
    the engine with its shortcuts says exactly what it says with them switched off."""
    rng = random.Random(seed)
    seats = sorted(rng.sample(range(1, 10), rng.randint(2, 6)))
    lines: list[dict] = [{"type": "table", "seats": 9, "profile": profile}]
    lines += [
        {"type": "seat", "seat": s, "player": f"P{s}", "stack": rng.choice([300, 2000, 5000])} for s in seats
    ]
    lines.append({"type": "level", "sb": 25, "bb": 50})
    deck = [r + s for r in "23456789TJQKA" for s in "cdhs"]
    for _ in range(3):
        lines.append({"type": "hand_start"})
        order = seats[:]
        for _ in range(2):
            for s in order:
                line = {"type": "deal", "seat": s if rng.random() > 0.04 else rng.choice(seats)}
                if rng.random() < 0.03:
                    line["card"] = rng.choice(deck)
                lines.append(line)
        if rng.random() < 0.1:
            lines.append(
                {"type": "expose", "seat": rng.choice(seats), "card": rng.choice(deck), "by": "dealer"}
            )
        rng.shuffle(deck)
        board = iter(deck[:5])
        shadow = TableEngine(profile, 9)  # says whose turn it is, so that most actions come in turn
        for n, line in enumerate(lines, 1):
            shadow.feed(line, n)
        for street in range(4):
            for _ in range(rng.randint(2, 8)):
                play = shadow.hand.play if shadow.hand is not None else None
                to_act = play.to_act if play is not None else None
                s = to_act if to_act is not None and rng.random() < 0.8 else rng.choice(seats)
                word = rng.choice(["fold", "check", "call", "call", "check", "bet", "raise", "allin"])
                line = {"type": "action", "seat": s, "action": word}
                if word in ("bet", "raise") or rng.random() < 0.1:
                    line["to"] = rng.choice([50, 100, 150, 400, 1000])
                lines.append(line)
                shadow.feed(line, len(lines))
            if street < 3:
                cards = [next(board) for _ in range(3 if street == 0 else 1)]
                for line in ({"type": "burn"}, {"type": "board", "cards": cards}):
                    lines.append(line)
                    shadow.feed(line, len(lines))
        lines.append({"type": "hand_end"})
    assert _play(lines, profile, quick=True) == _play(lines, profile, quick=False)


_array_item = st.one_of(
    st.integers(0, 10**6).map(str),
    st.sampled_from(["-5", "+3", "1.5", "inf", "true", "false", "1e3", "00", "1 2", "x", "", "#", '"a"']),
    st.text(alphabet="ab cdp1#,[]'", max_size=8).map(lambda t: f"'{t}'"),
)


@settings(max_examples=800, deadline=None)
@given(st.lists(_array_item, max_size=6), st.sampled_from([", ", ",", " ,  "]), st.booleans())
def test_one_line_arrays_read_as_the_general_reader_reads_them(items, sep, trailing):
    """The one-step reader of a one-line PHH array gives what the item-by-item reader gives, or steps aside."""
    from controller.rules import phh

    value = "[" + sep.join(items) + ("," if trailing and items else "") + "]"
    quick = phh._one_line_array(value)
    if quick is None:
        return
    with mock.patch.object(phh, "_one_line_array", lambda value: None):
        general = phh.fast_toml(f"k = {value}\n")
    assert general is not None and general["k"] == quick


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet="ab_1 =\t\u00a0é-", max_size=10), st.sampled_from(["1", "'x'", "[1]", " 2 "]))
def test_key_lines_are_read_as_the_key_pattern_reads_them(key, value):
    """A PHH `key = value` line is split without the regular expression `_KEY_LINE`: same key, same value."""
    from controller.rules import phh

    line = f"{key}={value}"
    match = phh._KEY_LINE.fullmatch(line.strip())
    read = phh.fast_toml(line + "\n")
    if match is None:
        assert read is None
    elif read is not None:
        expected = phh.fast_toml(f"k = {match.group(2)}\n")
        assert read == {match.group(1): expected["k"]}


@settings(max_examples=1500, deadline=None)
@given(
    facings,
    st.sampled_from(["bet", "raise", "allin", "call", "check", "fold", "x"]),
    st.one_of(st.integers(0, 8000), st.sampled_from([True, -1, 2.5, None])),
    st.sampled_from(["cool_mule", "corner_pocket", "bluff_street", "dragons_den", "bar_league"]),
)
def test_a_sized_bet_or_raise_is_ruled_as_the_general_path_rules_it(facing, word, to, profile_name):
    """`sized_ruling` (a bet, raise or all-in with `to` alone, taken as entered) agrees with `interpret`."""
    profile = load_profile(profile_name)
    ev = {"seat": 1, "action": word, "to": to}
    f = facing
    quick = sized_ruling(word, to, f.committed, f.stack, f.current, f.min_raise, f.min_bet, f.can_raise)
    if quick is not None:
        assert ("ruling", quick) == _general(ev, facing, profile)
        assert quick.reason is None


def test_a_dict_fed_to_the_engine_is_neither_changed_nor_kept():
    """The engine reads a dict line without copying it when its check fills nothing in: the caller's dict
    must come back unchanged, and changing it afterwards must change nothing in the table."""
    import copy
    import json

    from bench.gen_session import generate

    # A hand with an out-of-turn call that waits for its turn (bluff_street: binding), chips and a
    # declaration, then a generated session.
    lines = [{"type": "table", "seats": 6, "profile": "bluff_street"}]
    lines += [{"type": "seat", "seat": s, "player": f"P{s}", "stack": 5000} for s in range(1, 7)]
    lines += [{"type": "level", "sb": 50, "bb": 100}, {"type": "button", "seat": 6}, {"type": "hand_start"}]
    lines += [{"type": "deal", "seat": s} for _ in range(2) for s in range(1, 7)]
    lines += [
        {"type": "action", "seat": 5, "action": "call"},  # out of turn: seat 3 is to act
        {"type": "action", "seat": 3, "action": "fold"},
        {"type": "action", "seat": 4, "action": "fold"},  # seat 5's call comes due
        {"type": "action", "seat": 6, "action": "raise", "chips": [100, 100, 100]},
        {"type": "action", "seat": 1, "action": "bet", "declared": "raise"},
        {"type": "hand_end"},
    ]
    lines += [json.loads(t) for t in generate(30, seats=6, profile="bluff_street", seed=3)[8:]]
    kept = copy.deepcopy(lines)
    as_text, as_dicts = TableEngine("bluff_street", 6), TableEngine("bluff_street", 6)
    for n, (line, same) in enumerate(zip(lines, kept, strict=True), 1):
        expected = as_text.feed(json.dumps(same), n)
        assert as_dicts.feed(line, n) == expected
        assert line == same
        line.clear()  # the caller reuses its dict: the table must not notice
        line["type"] = "garbage"
    assert as_dicts.snapshot() == as_text.snapshot()


def _engine_at(stage: int) -> TableEngine:
    """A 6-seat table: 0 before any hand, 1 at hand start, 2 half-way through the deal, 3 after the first
    action, 4 past substantial action."""
    engine = TableEngine("bluff_street", 6)
    lines = [{"type": "seat", "seat": s, "player": f"P{s}", "stack": 5000} for s in (1, 2, 3, 5)]
    if stage >= 1:
        lines += [
            {"type": "level", "sb": 50, "bb": 100},
            {"type": "button", "seat": 5},
            {"type": "hand_start"},
        ]
    if stage >= 2:
        lines += [{"type": "deal", "seat": s} for s in (1, 2, 3, 5)][: 6 if stage == 2 else 8]
        lines += [{"type": "deal", "seat": s} for s in (1, 2, 3, 5)][: 2 if stage == 2 else 4]
    if stage >= 3:
        lines.append({"type": "action", "seat": 5, "action": "call"})
    if stage >= 4:
        lines += [
            {"type": "action", "seat": 1, "action": "call"},
            {"type": "action", "seat": 2, "action": "check"},
        ]
    for n, line in enumerate(lines, 1):
        assert not any(o["type"] == "error" for o in engine.feed(line, n)), line
    return engine


@settings(max_examples=1500, deadline=None)
@given(_line, st.integers(0, 4))
def test_the_usual_line_handled_in_one_step_is_ruled_as_the_full_path_rules_it(ev, stage):
    """A dict line goes through the engine's one-step handlers (`_usual_*`) when it is the usual line of its
    type; as JSON text the same line takes the full path (decode, check, handler). Same outputs, same table
    afterwards, and the dict untouched."""
    import copy
    import json

    try:
        text = json.dumps(ev)
    except (TypeError, ValueError):
        return
    if json.loads(text) != ev:  # JSON would change the line (e.g. 2.0 and 2 read alike): nothing to compare
        return
    by_dict, by_text = _engine_at(stage), _engine_at(stage)
    kept = copy.deepcopy(ev)
    assert by_dict.feed(ev, 99) == by_text.feed(text, 99)
    assert ev == kept
    assert by_dict.snapshot() == by_text.snapshot()
    assert by_dict.stacks() == by_text.stacks()
    h1, h2 = by_dict.hand, by_text.hand
    if h1 is not None:
        h1.deal.settle(h1.positions.dealt_in)
        h2.deal.settle(h2.positions.dealt_in)
        assert h1.deal == h2.deal


def test_plain_phh_actions_are_read_as_split_actions_are():
    """to_lines reads "pK f" and "pK cc" by looking the whole text up; with that table empty every action
    is split into words: the lines must be the same for every sample hand."""
    import glob

    from controller import datapaths
    from controller.rules import phh

    root = datapaths.find("phh/pluribus")
    files = sorted(glob.glob(str(root / "*" / "*.phh")))
    hands = [phh.load(f) for f in files]
    quick = [phh.to_lines(h) for h in hands]
    with mock.patch.object(phh, "_player_index", lambda n: ({f"p{i + 1}": i for i in range(n)}, {})):
        general = [phh.to_lines(h) for h in hands]
    assert quick == general
    assert len(files) == 160


def test_a_phh_file_reads_alike_whatever_its_line_ends(tmp_path):
    """`load` reads the raw bytes and makes line ends "\\n" itself, as a text-mode read would."""
    import glob
    from pathlib import Path

    from controller import datapaths
    from controller.rules import phh

    root = datapaths.find("phh/pluribus")
    source = sorted(glob.glob(str(root / "*" / "*.phh")))[0]
    raw = Path(source).read_bytes()
    expected = phh.load(source)
    for name, data in (("crlf.phh", raw.replace(b"\n", b"\r\n")), ("cr.phh", raw.replace(b"\n", b"\r"))):
        path = tmp_path / name
        path.write_bytes(data)
        hand = phh.load(path)
        assert (hand.players, hand.actions, hand.starting, hand.finishing) == (
            expected.players,
            expected.actions,
            expected.starting,
            expected.finishing,
        )
