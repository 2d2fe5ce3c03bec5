"""Tracker: rendered deal sequences give the right protocol lines in the right order; flicker gives none."""

from __future__ import annotations

import numpy as np
import pytest

from hil.camera import SimulatedCamera, deal_hand_script, run_script
from vision.detect import Detector
from vision.layout import default_layout
from vision.tracker import Tracker

from .conftest import H, W


def test_rendered_deal_gives_the_right_lines(tango_model):
    cam = SimulatedCamera(seats=6, deck="tango", width=W, height=H, seed=3)
    steps = deal_hand_script(6, 3, np.random.default_rng(1), exposed_seat=5, flash_seat=2)
    steps[-1].frames = 6  # the river stays on the table long enough to settle
    layout = default_layout(6, W, H)
    tracker = Tracker(layout, debounce_frames=3, detector=Detector(tango_model, layout=layout, track=True))
    got: list[dict] = []
    expected: list[dict] = []
    for k, frame, _, so_far in run_script(cam, steps):
        got += tracker.update(frame, k / 10)
        expected = so_far
    assert got == expected
    kinds = [e["type"] for e in got]
    assert kinds[0] == "button_seen" and kinds.count("deal") == 12 and kinds.count("board") == 3
    assert {"type": "expose", "seat": 2, "card": cam._hole[2][0].code, "by": "dealer"} in got


def _card(x, y, face="down", code=None):
    return {"face": face, "code": code, "center": [x, y], "corners": [], "confidence": 0.9}


@pytest.fixture
def layout():
    return default_layout(6, W, H)


def _seat_point(layout, seat):
    return tuple(layout.to_image([layout.seat_anchors[seat]])[0])


def test_one_frame_flicker_makes_no_event(layout):
    tr = Tracker(layout, debounce_frames=3)
    x, y = _seat_point(layout, 2)
    frames = [[], [_card(x, y)], [], [], [_card(x, y)], [_card(x, y)], []]
    out = [tr.update({"cards": cards, "button": None}, t) for t, cards in enumerate(frames)]
    assert all(o == [] for o in out)


def test_a_card_split_in_two_is_one_card_dealt(layout):
    """Two face-down cards confirmed at one seat in one frame are one card seen split (a dealer lays one at
    a time): one `deal`, so that a seat's second card is no third one (no false wrong_card_count misdeal).
    A third card dealt later is still counted."""
    tr = Tracker(layout, debounce_frames=3)
    x, y = _seat_point(layout, 3)
    first = [_card(x, y)]
    split = [*first, _card(x + 14, y), _card(x + 26, y)]  # the second card, found as two
    third = [*split, _card(x - 30, y)]
    events = [
        tr.update({"cards": c, "button": None}, t)
        for t, c in enumerate([first] * 4 + [split] * 4 + [third] * 4)
    ]
    deals = [e for out in events for e in out if e["type"] == "deal"]
    assert deals == [{"type": "deal", "seat": 3}] * 3


def test_a_card_seen_twice_on_itself_is_no_card_flashed_nor_a_third(layout):
    """bench/bench_observed.py, bar_league hand 948: a seat's pair was found as one card face down and,
    3 px off it, a part of it face up (read Qs at 0.05). Counted, that was a card flashed in the deal
    (a false replace_exposed); a card seen twice on itself is silent, face up or down. A second card
    dealt half a card over the first is still a deal."""
    x, y = _seat_point(layout, 1)
    first = [_card(x, y)]
    twin_up = [_card(x - 1, y + 1), {**_card(x - 3, y - 4, "up", "Qs"), "confidence": 0.05}]
    twin_down = [_card(x, y), _card(x + 3, y + 2)]
    for twin in (twin_up, twin_down):
        tr = Tracker(layout, debounce_frames=3)
        events = [
            tr.update({"cards": c, "button": None}, t / 10) for t, c in enumerate([first] * 4 + [twin] * 14)
        ]
        assert [e for out in events for e in out] == [{"type": "deal", "seat": 1}], twin
    tr = Tracker(layout, debounce_frames=3)
    cw = layout.card_width_px()
    pair = [*first, _card(x + 0.5 * cw, y + 0.2 * cw)]
    events = [tr.update({"cards": c, "button": None}, t / 10) for t, c in enumerate([first] * 4 + [pair] * 6)]
    assert [e for out in events for e in out] == [{"type": "deal", "seat": 1}] * 2


def test_card_counts_after_n_frames_in_arrival_order(layout):
    tr = Tracker(layout, debounce_frames=3)
    a, b = _seat_point(layout, 4), _seat_point(layout, 1)
    events = []
    seq = [[_card(*a)], [_card(*a), _card(*b)], [_card(*a), _card(*b)], [_card(*a), _card(*b)], [_card(*b)]]
    for t, cards in enumerate(seq):
        events.append(tr.update({"cards": cards, "button": None}, t))
    assert events == [[], [], [{"type": "deal", "seat": 4}], [{"type": "deal", "seat": 1}], []]


def test_face_up_deal_expose_board_and_button(layout):
    tr = Tracker(layout, debounce_frames=2)
    s3, s5 = _seat_point(layout, 3), _seat_point(layout, 5)
    board = [tuple(layout.to_image([(dx, 0.0)])[0]) for dx in (-73.0, 0.0, 73.0)]
    btn = {"center": list(_seat_point(layout, 6)), "radius": 20, "confidence": 0.9}
    f1 = [_card(*s3, "up", "Kd"), _card(*s5)]
    f2 = [_card(*s3, "up", "Kd"), _card(*s5, "up", "7c")]
    f3 = [*f2, *(_card(*p, "up", c) for p, c in zip(board, ["Ah", "2c", "9s"], strict=True))]
    out = []
    for t, (cards, b) in enumerate(
        [(f1, btn), (f1, btn), (f2, btn), (f2, btn), (f3, None), (f3, None), (f3, None), (f3, None)]
    ):
        out += tr.update({"cards": cards, "button": b}, t)
    assert out == [
        {"type": "deal", "seat": 3, "card": "Kd"},
        {"type": "deal", "seat": 5},
        {"type": "button_seen", "seat": 6},
        {"type": "expose", "seat": 5, "card": "7c", "by": "dealer"},
        {"type": "board", "cards": ["Ah", "2c", "9s"]},
    ]


def test_reset_hand_silences_old_cards_and_reports_button_again(layout):
    tr = Tracker(layout, debounce_frames=2)
    s2 = _seat_point(layout, 2)
    btn = {"center": list(_seat_point(layout, 1)), "radius": 20, "confidence": 0.9}
    for t in range(3):
        tr.update({"cards": [_card(*s2)], "button": btn}, t)
    tr.reset_hand()
    out = []
    for t in range(3, 6):
        out += tr.update({"cards": [_card(*s2)], "button": btn}, t)
    assert out == [{"type": "button_seen", "seat": 1}]


def test_bad_input_is_refused(layout):
    tr = Tracker(layout)
    with pytest.raises(ValueError, match="needs a frame"):
        tr.update({"nothing": 1}, 0.0)


# -- a self-dealt table: folds, chips, showdown, who exposed a card, burns --------------------------
def _feed(tr, frames, t0=0.0, dt=0.1):
    """Each entry: (cards, chips) held for one frame; returns every line with its frame index."""
    out = []
    for k, (cards, chips) in enumerate(frames):
        for line in tr.update({"cards": cards, "chips": chips, "button": None}, t0 + k * dt):
            out.append((k, line))
    return out


def _hold(n, cards, chips=()):
    return [(list(cards), [{"center": list(c)} for c in chips])] * n


def _table_point(layout, x_mm, y_mm):
    return tuple(layout.to_image([(x_mm, y_mm)])[0])


def _dealt(layout, seats=(1, 2)):
    """Two face-down cards at each seat, dealt in order, then left for two seconds."""
    frames, cards = [], []
    for rnd in range(2):
        for s in seats:
            x, y = _seat_point(layout, s)
            cards = [*cards, _card(x + 20 * rnd, y + 10 * rnd)]
            frames += _hold(4, cards)
    return frames, cards


def test_fold_needs_the_cards_on_the_muck_not_only_gone(layout):
    tr = Tracker(layout, debounce_frames=3)
    frames, cards = _dealt(layout)
    muck = _table_point(layout, 0, -160)
    seat2 = [c for c in cards if layout.zone_at(tuple(c["center"])) == ("seat", 2)]
    seat1 = [c for c in cards if c not in seat2]
    # seat 2's cards hidden under a hand for a second: no fold; then tossed onto the muck: a fold
    frames += _hold(10, seat1) + _hold(4, cards) + _hold(6, [*seat1, _card(*muck)])
    lines = [ln for _k, ln in _feed(tr, frames + _hold(20, [*seat1, _card(*muck)]))]
    assert [ln["type"] for ln in lines] == ["deal"] * 4 + ["fold_seen"]
    assert lines[-1] == {"type": "fold_seen", "seat": 2}


def test_chips_seen_once_per_push_into_the_betting_area(layout):
    tr = Tracker(layout, debounce_frames=3)
    frames, cards = _dealt(layout)
    bet3 = _table_point(layout, *_bet_point(layout, 1))
    bet3b = (bet3[0] + 30, bet3[1])
    stack = _table_point(layout, *layout.seat_anchors[2])  # chips behind the cards: not a bet
    frames += _hold(6, cards, [stack]) + _hold(6, cards, [stack, bet3])
    frames += _hold(1, cards, [stack]) + _hold(6, cards, [stack, bet3])  # one frame missed: nothing
    frames += _hold(6, cards, [stack, bet3, bet3b])  # a raise: more chips
    frames += _hold(6, cards, [stack]) + _hold(6, cards, [stack, bet3])  # gathered, then a new bet
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert [ln for ln in lines if ln["type"] == "chips_seen"] == [{"type": "chips_seen", "seat": 1}] * 3


def _bet_point(layout, seat):
    """The middle of a seat's betting area, in table mm."""
    return tuple(layout.bets[seat].mean(axis=0))


def test_turned_up_cards_dealer_during_the_deal_player_after_it_show_after_the_river(layout):
    tr = Tracker(layout, debounce_frames=2)
    s1, s2 = _seat_point(layout, 1), _seat_point(layout, 2)
    # during the deal (seat 2 holds one card): the dealer turned it over
    frames = _hold(3, [_card(*s1)]) + _hold(3, [_card(*s1), _card(*s2)])
    frames += _hold(3, [_card(*s1), _card(*s2, "up", "9h")])
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert lines[-1] == {"type": "expose", "seat": 2, "card": "9h", "by": "dealer"}

    tr = Tracker(layout, debounce_frames=2, show_wait_s=1.0)
    frames, cards = _dealt(layout)
    frames += _hold(12, cards)  # the deal is over
    up = [dict(c) for c in cards]
    first_at_1 = next(i for i, c in enumerate(up) if layout.zone_at(tuple(c["center"])) == ("seat", 1))
    up[first_at_1] = {**up[first_at_1], "face": "up", "code": "Ah"}
    frames += _hold(15, up)
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert lines[-1] == {"type": "expose", "seat": 1, "card": "Ah", "by": "player"}

    tr = Tracker(layout, debounce_frames=2)
    frames, cards = _dealt(layout)
    board = [
        _card(*_table_point(layout, dx, 0.0), "up", c)
        for dx, c in zip((-146, -73, 0, 73, 146), ["2c", "3c", "4c", "5c", "6c"], strict=True)
    ]
    frames += _hold(6, cards + board[:3]) + _hold(6, cards + board[:4]) + _hold(6, cards + board)
    shown = [
        {**c, "face": "up", "code": code} for c, code in zip(cards, ["Ks", "Qs", "Kd", "Qd"], strict=True)
    ]
    frames += _hold(6, shown + board)
    lines = [ln for _k, ln in _feed(tr, frames)]
    shows = [ln for ln in lines if ln["type"] == "show"]
    assert shows == [
        {"type": "show", "seat": 1, "cards": ["Ks", "Kd"]},
        {"type": "show", "seat": 2, "cards": ["Qs", "Qd"]},
    ]
    assert not any(ln["type"] == "expose" for ln in lines)


def test_unsure_reading_is_no_card_code_but_still_a_card(layout):
    """Below min_confidence a reading is no reading: one that flickers between codes, and one read the
    same every frame (a still camera misreads the same way every frame), are a card without its code;
    a code read surely is given."""
    tr = Tracker(layout, debounce_frames=2, min_confidence=0.5)
    s3 = _seat_point(layout, 3)
    unsure = {**_card(*s3, "up", "Kd"), "confidence": 0.31}
    flicker = [([unsure] if i % 3 else [{**unsure, "code": "Kh"}], []) for i in range(12)]
    lines = [ln for _k, ln in _feed(tr, flicker)]
    assert lines == [{"type": "deal", "seat": 3, "face": "up"}]
    tr = Tracker(layout, debounce_frames=2, min_confidence=0.5)
    assert [ln for _k, ln in _feed(tr, _hold(30, [unsure]))] == [{"type": "deal", "seat": 3, "face": "up"}]
    sure = {**unsure, "confidence": 0.9}
    tr = Tracker(layout, debounce_frames=2, min_confidence=0.5)
    assert [ln for _k, ln in _feed(tr, _hold(4, [sure]))] == [{"type": "deal", "seat": 3, "card": "Kd"}]


def test_a_hole_card_is_named_only_when_read_surely_enough_for_a_ruling(layout):
    """A flashed hole card's code goes into the ruling (cool_mule:5.j's replaced card names it): the
    built-in reader's 0.64 (right about two times in three on real photos) gives the card face up
    without its code, which is all the exposure misdeal needs; 0.9 names it. A board card at 0.64 is
    still named (no ruling rests on its code). A venue's enrolled deck reads on its own scale: there
    0.64 names the hole card."""
    s3 = _seat_point(layout, 3)
    flashed = {**_card(*s3, "up", "As"), "confidence": 0.64}
    tr = Tracker(layout, debounce_frames=2)
    assert [ln for _k, ln in _feed(tr, _hold(12, [flashed]))] == [{"type": "deal", "seat": 3, "face": "up"}]
    tr = Tracker(layout, debounce_frames=2)
    sure = {**flashed, "confidence": 0.9}
    assert [ln for _k, ln in _feed(tr, _hold(4, [sure]))] == [{"type": "deal", "seat": 3, "card": "As"}]
    frames, cards = _dealt(layout)
    flop = [
        {**_card(*_table_point(layout, dx, 0.0), "up", c), "confidence": 0.64}
        for dx, c in zip((-146, -73, 0), ["2c", "3c", "4c"], strict=True)
    ]
    frames += _hold(6, [*cards, *flop])
    tr = Tracker(layout, debounce_frames=2)
    boards = [ln for _k, ln in _feed(tr, frames) if ln["type"] == "board"]
    assert boards == [{"type": "board", "cards": ["2c", "3c", "4c"]}]

    class Enrolled:  # a Detector with a venue's deck model: its reader's own score
        model = object()
        layout = None

    tr = Tracker(layout, debounce_frames=2, detector=Enrolled())
    assert [ln for _k, ln in _feed(tr, _hold(4, [flashed]))] == [{"type": "deal", "seat": 3, "card": "As"}]


def test_burn_before_each_street_and_a_boxed_card(layout):
    tr = Tracker(layout, debounce_frames=2)
    frames, cards = _dealt(layout)
    burn = tuple(layout.to_image([layout.burn.mean(axis=0)])[0])
    muck = _table_point(layout, 0, -160)
    frames += _hold(4, [*cards, _card(*muck, "up", "7d")])  # found face up in the deck, put aside
    base = [*cards, _card(*muck, "up", "7d")]
    frames += _hold(4, [*base, _card(*burn)])
    flop = [
        _card(*_table_point(layout, dx, 0.0), "up", c)
        for dx, c in zip((-146, -73, 0), ["2c", "3c", "4c"], strict=True)
    ]
    frames += _hold(6, [*base, _card(*burn), *flop])
    # the burn pile shifts (seen as another card): still one burn for the flop
    frames += _hold(4, [*base, _card(*burn), _card(burn[0] + 25, burn[1] + 20), *flop])
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert [ln["type"] for ln in lines][4:] == ["boxed", "burn", "board"]
    assert lines[4] == {"type": "boxed", "card": "7d"}


def test_card_lost_for_a_while_and_found_again_is_no_new_card(layout):
    tr = Tracker(layout, debounce_frames=2, forget_after=2)
    frames, cards = _dealt(layout)
    frames += _hold(8, cards[:1]) + _hold(6, cards)  # three hidden far longer than forget_after
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert [ln["type"] for ln in lines] == ["deal"] * 4


def test_cards_followed_sliding_onto_the_muck_are_a_fold(layout):
    tr = Tracker(layout, debounce_frames=2)
    frames, cards = _dealt(layout, seats=(3, 4))
    moving = [c for c in cards if layout.zone_at(tuple(c["center"])) == ("seat", 4)]
    rest = [c for c in cards if c not in moving]
    muck = np.asarray(_table_point(layout, 30, -160))
    for step in range(1, 25):  # a slow slide, a few pixels a frame: the tracker follows each card
        f = step / 24
        slid = [_card(*((1 - f) * np.asarray(c["center"]) + f * muck)) for c in moving]
        frames += _hold(1, rest + slid)
    frames += _hold(4, rest + slid)
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert lines[4:] == [{"type": "fold_seen", "seat": 4}]


def test_a_board_card_seen_split_or_shifted_is_no_sixth_card(layout):
    tr = Tracker(layout, debounce_frames=2)
    board = [
        _card(*_table_point(layout, dx, 0.0), "up", c)
        for dx, c in zip((-146, -73, 0, 73, 146), ["2c", "3c", "4c", "5c", "6c"], strict=True)
    ]
    frames = _hold(6, board[:3]) + _hold(6, board[:4]) + _hold(6, board)
    x, y = board[2]["center"]
    shifted = [*board, _card(x + 12, y + 30, "up", "Kh")]  # the middle card also found a second time
    frames += _hold(6, shifted) + _hold(6, board)
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert [ln["cards"] for ln in lines] == [["2c", "3c", "4c"], ["5c"], ["6c"]]


def test_something_below_the_board_row_is_no_board_card(layout):
    tr = Tracker(layout, debounce_frames=2)
    board = [
        _card(*_table_point(layout, dx, 0.0), "up", c)
        for dx, c in zip((-146, -73, 0), ["2c", "3c", "4c"], strict=True)
    ]
    below = _card(*_table_point(layout, -60, 55.0), "up", "Kh")  # a pot chip and a shadow, say
    turn = _card(*_table_point(layout, 73, 0.0), "up", "5c")
    frames = _hold(6, board) + _hold(6, [*board, below]) + _hold(6, [*board, below, turn])
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert [ln["cards"] for ln in lines] == [["2c", "3c", "4c"], ["5c"]]


def _board(layout, codes, conf=0.9):
    return [
        {**_card(*_table_point(layout, dx, 0.0), "up", c), "confidence": conf}
        for dx, c in zip((-146, -73, 0, 73, 146), codes, strict=False)
    ]


def test_a_code_already_given_this_hand_is_not_given_again(layout):
    """A deck holds each card once: a turn read as a flop card's code (a Q read as the K beside it),
    or a flop whose two cards read the same, is a board card without its code, never the same code
    twice (the engine would reject the line, or take a misread for a fouled deck)."""
    tr = Tracker(layout, debounce_frames=2)
    board = _board(layout, ["Kh", "7c", "2d", "Kh", "9s"])
    frames = _hold(6, board[:3]) + _hold(6, board[:4]) + _hold(6, board)
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert lines == [
        {"type": "board", "cards": ["Kh", "7c", "2d"]},
        {"type": "board", "cards": [], "count": 1},
        {"type": "board", "cards": ["9s"]},
    ]
    tr = Tracker(layout, debounce_frames=2)
    flop = _board(layout, ["Jd", "5c", "Jd"])
    lines = [ln for _k, ln in _feed(tr, _hold(8, flop))]
    assert lines == [{"type": "board", "cards": ["5c"], "count": 3}]


def _showdown(layout, codes, board_codes=("2c", "3c", "4c", "5c", "6c")):
    """Two seats dealt, a full board, then the seats' cards turned up reading `codes` (None: unread;
    a (code, confidence) pair: read so)."""
    frames, cards = _dealt(layout)
    board = _board(layout, board_codes)
    frames += _hold(6, cards + board[:3]) + _hold(6, cards + board[:4]) + _hold(6, cards + board)
    shown = []
    for c, code in zip(cards, codes, strict=True):
        code, conf = code if isinstance(code, tuple) else (code, 0.9)
        shown.append({**c, "face": "up", "code": code, "confidence": conf})
    return frames + _hold(30, shown + board)


def test_a_show_is_two_cards_read_surely_and_new_to_the_hand(layout):
    """Seat 1 holds cards 1 and 3, seat 2 cards 2 and 4. A show needs both of a seat's cards face up
    and read surely, neither a code already out: one unread card, one read below the confidence, or
    one read as a board card's code gives no show for that seat (nothing false), the other seat's
    sound show still goes."""
    cases = {
        "unread": ["Ks", "Qs", None, "Qd"],
        "unsure": ["Ks", "Qs", ("Kd", 0.25), "Qd"],
        "a board code": ["Ks", "Qs", "4c", "Qd"],
        "the other seat's code": ["Ks", "Qs", "Qd", "Qd"],
    }
    for name, codes in cases.items():
        tr = Tracker(layout, debounce_frames=2)
        lines = [ln for _k, ln in _feed(tr, _showdown(layout, codes))]
        shows = [ln for ln in lines if ln["type"] == "show"]
        if name == "the other seat's code":
            assert shows == [], name  # Qd twice: which seat holds it is not known
        else:
            assert shows == [{"type": "show", "seat": 2, "cards": ["Qs", "Qd"]}], name
        assert not any(ln["type"] in ("expose", "deal") and ln.get("card") for ln in lines[4:]), name
    tr = Tracker(layout, debounce_frames=2)
    lines = [ln for _k, ln in _feed(tr, _showdown(layout, ["Ks", "Qs", "Kd", "Qd"]))]
    assert [ln for ln in lines if ln["type"] == "show"] == [
        {"type": "show", "seat": 1, "cards": ["Ks", "Kd"]},
        {"type": "show", "seat": 2, "cards": ["Qs", "Qd"]},
    ]


def test_a_card_given_one_code_and_read_another_later_is_not_named_again(layout):
    """Seat 1's first card was flashed and given as Ks; half under the next card it is read Kc from
    then on (a rendered atlasnye deal read a flashed 4s as 4c at showdown). The show does not name
    it Kc: one of the two readings is wrong, and which is not known."""
    tr = Tracker(layout, debounce_frames=2)
    frames, cards = _dealt(layout)
    first_at_1 = next(i for i, c in enumerate(cards) if layout.zone_at(tuple(c["center"])) == ("seat", 1))
    flashed = {**cards[first_at_1], "face": "up", "code": "Ks"}
    later = {**cards[first_at_1], "face": "up", "code": "Kc"}
    # the deal with the first card at seat 1 face up from the start, then read otherwise
    frames = [([flashed if c is cards[first_at_1] else c for c in fc], chips) for fc, chips in frames]
    board = _board(layout, ["2c", "3c", "4c", "5c", "6c"])
    rest = [later if c is cards[first_at_1] else c for c in cards]
    frames += _hold(6, rest + board[:3]) + _hold(6, rest + board[:4]) + _hold(6, rest + board)
    shown = [
        {**c, "face": "up", "code": code} for c, code in zip(rest, ["Kc", "Qs", "Kd", "Qd"], strict=True)
    ]
    lines = [ln for _k, ln in _feed(tr, frames + _hold(30, shown + board))]
    assert {"type": "deal", "seat": 1, "card": "Ks"} in lines
    shows = [ln for ln in lines if ln["type"] == "show"]
    assert shows == [{"type": "show", "seat": 2, "cards": ["Qs", "Qd"]}]


def test_an_exposed_hole_card_reading_a_board_code_is_named_without_it(layout):
    """After the flop a player turns a card up that reads as a flop card's code: an exposure by the
    player, without a card code (the card is face up; which card it is, the camera does not know)."""
    tr = Tracker(layout, debounce_frames=2, show_wait_s=1.0)
    frames, cards = _dealt(layout)
    board = _board(layout, ["Ah", "7c", "2d"])
    frames += _hold(8, cards + board)
    up = [dict(c) for c in cards]
    first_at_1 = next(i for i, c in enumerate(up) if layout.zone_at(tuple(c["center"])) == ("seat", 1))
    up[first_at_1] = {**up[first_at_1], "face": "up", "code": "7c"}
    lines = [ln for _k, ln in _feed(tr, frames + _hold(20, up + board))]
    assert lines[-1] == {"type": "expose", "seat": 1, "by": "player"}


def test_a_face_down_hole_card_read_face_up_now_and_then_is_no_exposure(layout):
    """A face-down hole card the detector takes for face up in some frames (glare on the back), with a
    reading below the confidence or none: no `expose` until it is seen face up in the whole read wait."""
    tr = Tracker(layout, debounce_frames=3, show_wait_s=1.0)
    frames, cards = _dealt(layout)
    frames += _hold(12, cards)  # the deal is over
    i1 = next(i for i, c in enumerate(cards) if layout.zone_at(tuple(c["center"])) == ("seat", 1))
    glare = [dict(c) for c in cards]
    glare[i1] = {**glare[i1], "face": "up", "code": "8h", "confidence": 0.2}
    unread = [dict(c) for c in cards]
    unread[i1] = {**unread[i1], "face": "up", "code": None}
    for k in range(40):  # face up in runs of up to 5 frames, never the 9 of the read wait
        frames += _hold(1, glare if k % 6 < 3 else unread if k % 6 < 5 else cards)
    lines = [ln for _k, ln in _feed(tr, frames)]
    assert [ln["type"] for ln in lines] == ["deal"] * 4
    # turned up for good: the player's exposure, without the unsure code
    lines = [ln for _k, ln in _feed(tr, _hold(30, glare), t0=20.0)]
    assert lines == [{"type": "expose", "seat": 1, "by": "player"}]
