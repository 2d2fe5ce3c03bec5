"""Balancing and breaking per rulebook, each test quoting the rule it holds."""

from __future__ import annotations

from controller.floor.seating.balancing import (
    TableSeats,
    balance_move,
    between_sb_and_button,
    break_moves,
    halted_tables,
    hands_until_big_blind,
    proposals,
    seat_choices,
)


def full_a() -> TableSeats:
    # 8 players at seats 1-8 of 9, button 3, small blind 4, big blind 5
    return TableSeats(
        "A",
        9,
        {s: f"a{s}" for s in range(1, 9)},
        button=3,
        sb_seat=4,
        bb_seat=5,
        stacks={s: 1000 * s for s in range(1, 9)},
    )


def short_b() -> TableSeats:
    # 6 players, seats 6, 7 and 9 open, big blind at seat 3
    return TableSeats("B", 9, {s: f"b{s}" for s in (1, 2, 3, 4, 5, 8)}, button=1, sb_seat=2, bb_seat=3)


def test_hands_until_big_blind_counts_from_the_seat_after_the_big_blind():
    pos = hands_until_big_blind(full_a())
    assert pos[6] == 0 and pos[7] == 1 and pos[5] == 7
    assert hands_until_big_blind(short_b(), extra=6)[6] == 2


def test_dragons_den_moves_the_big_blind_to_the_worst_position():
    """dragons_den:6: 'players will be moved from the big blind to the worst position'."""
    move = balance_move("dragons_den", [full_a(), short_b()], ["A", "B"])
    assert move is not None
    assert (move.from_table, move.from_seat, move.player) == ("A", 6, "a6")  # big blind next hand at A
    assert (move.to_table, move.to_seat) == ("B", 6)  # the open seat that posts the big blind soonest
    assert move.rule == "dragons_den:6" and move.stack == 6000 and "dragons_den:6" in move.reason


def test_dragons_den_takes_a_single_big_blind_when_available():
    """dragons_den:6: '...including taking a single big blind when available'. An open seat right after
    the big blind posts the next big blind: that is where the moved player goes."""
    b = TableSeats("B", 9, {s: f"b{s}" for s in (1, 2, 3, 5, 6, 8)}, button=1, sb_seat=2, bb_seat=3)
    move = balance_move("dragons_den", [full_a(), b], ["A", "B"])
    assert move is not None and move.to_seat == 4
    assert hands_until_big_blind(b, extra=4)[4] == 0


def test_cool_mule_moves_the_player_who_will_not_lose_position():
    """cool_mule:12.l: 'A player moved to balance two tables will be the player who will not lose position
    as a result of the move ... the worst positioned seats are the most preferable'."""
    move = balance_move("cool_mule", [full_a(), short_b()], ["A", "B"])
    assert move is not None
    # B's worst open seat (6) is two hands from the big blind; at A seat 8 is two hands from it too
    assert (move.to_table, move.to_seat) == ("B", 6)
    assert (move.from_seat, move.player) == (8, "a8") and move.rule == "cool_mule:12.l"


def test_corner_pocket_uses_the_same_rule_as_cool_mule():
    """corner_pocket:Multi-table rules.C (word for word cool_mule:12.l)."""
    move = balance_move("corner_pocket", [full_a(), short_b()], ["A", "B"])
    assert move is not None and move.from_seat == 8 and move.rule == "corner_pocket:Multi-table rules.C"


def test_tables_within_one_are_left_alone_bluff_street_12c():
    """bluff_street:12.c: 'the remaining tables will be balanced within one Participant'."""
    a = TableSeats("A", 9, {s: f"a{s}" for s in range(1, 8)}, 3, 4, 5)
    assert balance_move("bluff_street", [a, short_b()], ["A", "B"]) is None


def test_source_is_the_full_table_next_in_the_breaking_order_bluff_street_12():
    """bluff_street:12: 'Participants will be moved from the next table in the breaking order that is at
    full capacity to the short table'."""
    a, c = full_a(), TableSeats("C", 9, {s: f"c{s}" for s in range(1, 9)}, 3, 4, 5)
    assert balance_move("bluff_street", [a, c, short_b()], ["C", "A", "B"]).from_table == "C"
    assert balance_move("bluff_street", [a, c, short_b()], ["A", "C", "B"]).from_table == "A"


def test_no_hand_between_the_small_blind_and_the_button():
    """dragons_den:5: 'The only place they cannot get a hand is between the small blind and the button.'
    With the small blind at 2 and the big blind at 5, seats 3 and 4 lie between next hand's button and
    small blind: they are offered last, flagged as waiting a hand (bar_league:Player Movement)."""
    b = TableSeats("B", 9, {1: "x", 2: "y", 5: "z", 6: "w", 7: "v"}, button=1, sb_seat=2, bb_seat=5)
    assert between_sb_and_button(b, 3) and between_sb_and_button(b, 4) and not between_sb_and_button(b, 8)
    choices = seat_choices(b)
    assert [c[1] for c in choices] == [8, 9, 3, 4]
    assert choices[-1][2] and not choices[0][2]


def test_play_halts_at_a_table_three_short_dragons_den_6():
    """dragons_den:6: 'Play will halt on any table that is three or more players short.'"""
    b = TableSeats("B", 9, {1: "x", 2: "y", 3: "z", 4: "w", 5: "v"}, 1, 2, 3)
    assert halted_tables("dragons_den", [full_a(), b]) == [("B", 3, "dragons_den:6")]
    assert halted_tables("dragons_den", [full_a(), short_b()]) == []


def test_breaking_follows_the_breaking_order_bluff_street_11():
    """bluff_street:11: 'The breaking order for an Event will be posted at the close of registration' and
    players from a broken table 'can get the big blind, the small blind or the button'."""
    t1 = TableSeats("T1", 6, {2: "p", 5: "q"}, 2, 5, 2)
    t2 = TableSeats("T2", 6, {s: f"t2-{s}" for s in (1, 2, 3, 4, 5)}, 1, 2, 3)
    t3 = TableSeats("T3", 6, {s: f"t3-{s}" for s in (1, 2, 4, 5)}, 1, 2, 4)
    moves = break_moves("bluff_street", [t1, t2, t3], ["T1", "T2", "T3"])
    assert [(m.player, m.to_table) for m in moves] == [("p", "T3"), ("q", "T2")]
    assert all(m.kind == "break" and m.rule == "bluff_street:11" for m in moves)
    assert proposals("bluff_street", [t1, t2, t3], ["T1", "T2", "T3"]) == moves
    # the next table in the order is broken only once its players fit elsewhere
    t3_full = TableSeats("T3", 6, {s: f"t3-{s}" for s in range(1, 7)}, 1, 2, 3)
    assert break_moves("bluff_street", [t1, t2, t3_full], ["T2", "T1", "T3"]) == []


def test_dragons_den_breaking_cites_rule_5():
    t1 = TableSeats("T1", 6, {1: "p"}, 1, None, None)
    t2 = TableSeats("T2", 6, {1: "a", 2: "b"}, 1, 2, 1)
    moves = break_moves("dragons_den", [t1, t2], ["T1", "T2"])
    assert len(moves) == 1 and moves[0].rule == "dragons_den:5" and moves[0].to_table == "T2"
