"""The floor's model on hand-made table messages (no broker): level timing per rulebook, busts placed
once, alerts in plain sentences with their rule and where it comes from."""

from __future__ import annotations

import json

from controller.floor.config import parse_floor_config
from controller.floor.model import Floor

LEVELS = [{"sb": 50, "bb": 100, "seconds": 60}, {"sb": 100, "bb": 200, "seconds": 60}]


def floor_for(profile: str, tables=("T1",), entrants=9) -> Floor:
    cfg = parse_floor_config(
        {
            "floor": {"venue": "v", "profile": profile, "tables": list(tables), "clock_start": "manual"},
            "structure": {"levels": LEVELS},
        }
    )
    f = Floor(cfg, entrants=entrants)
    for t in tables:
        f.handle(f"smarttable/v1/v/{t}/status", b"online", 0.0)
    return f


def send(f: Floor, table: str, kind: str, doc: dict, now: float):
    return f.handle(f"smarttable/v1/v/{table}/{kind}", json.dumps(doc).encode(), now)


def state(level: tuple[int, int], phase: str) -> dict:
    return {
        "table": {"seats": 6},
        "seats": [{"seat": 1, "player": "A", "stack": 100}],
        "phase": phase,
        "level": {"sb": level[0], "bb": level[1], "ante": 0},
    }


def level_cmds(outs):
    return [o.body for o in outs if o.topic.endswith("/cmd/level")]


def test_first_level_goes_out_before_the_clock_starts():
    cfg = parse_floor_config(
        {"floor": {"venue": "v", "tables": ["T1"], "clock_start": "manual"}, "structure": {"levels": LEVELS}}
    )
    f = Floor(cfg, entrants=9)
    assert f.tick(0.5) == []  # no table online yet
    outs = f.handle("smarttable/v1/v/T1/status", b"online", 1.0)
    assert [(b["sb"], b["bb"]) for b in level_cmds(outs)] == [(50, 100)]
    assert outs[0].topic == "smarttable/v1/v/T1/cmd/level" and outs[0].body["reply_to"].endswith(
        "/reply/floor"
    )


def test_dragons_den_level_goes_out_when_the_clock_reaches_it_even_between_hands():
    """dragons_den:18: the new level applies to the next hand."""
    f = floor_for("dragons_den")
    f.tick(0.0)
    send(f, "T1", "state", state((50, 100), "between_hands"), 0.5)
    f.clock_start(1.0)
    assert [(b["sb"], b["bb"]) for b in level_cmds(f.tick(62.0))] == [(100, 200)]


def test_bar_league_one_more_hand_at_the_old_level_when_the_pot_was_pushed():
    """bar_league:Hand Start: 'If a blind level concludes after the previous pot has been pushed, one more
    hand will be played at the previous blind level before the new blind level takes effect.'"""
    f = floor_for("bar_league")
    f.tick(0.0)
    send(f, "T1", "state", state((50, 100), "between_hands"), 0.5)
    f.clock_start(1.0)
    send(f, "T1", "events", {"type": "hand_end", "seq": 1}, 50.0)  # pot pushed before the level ends
    assert level_cmds(f.tick(62.0)) == []
    assert any("one more hand at the previous level" in a["text"] for a in f.alerts)
    assert f.view(62.0)["tables"][0]["held"]
    # that hand starts at the old level; the new one is sent for the hand after it
    send(f, "T1", "events", {"type": "hand_start", "seq": 2}, 63.0)
    assert [(b["sb"], b["bb"]) for b in level_cmds(f.tick(63.1))] == [(100, 200)]


def test_bar_league_level_ending_during_a_hand_goes_out_at_once():
    f = floor_for("bar_league")
    f.tick(0.0)
    send(f, "T1", "state", state((50, 100), "preflop"), 0.5)
    f.clock_start(1.0)
    send(f, "T1", "events", {"type": "hand_start", "seq": 1}, 50.0)
    assert [(b["sb"], b["bb"]) for b in level_cmds(f.tick(62.0))] == [(100, 200)]


def test_busts_of_one_hand_are_placed_together_and_a_repeat_is_ignored():
    f = floor_for("cool_mule", tables=("T1", "T2"), entrants=9)
    send(f, "T2", "rulings", {"type": "eliminated", "seat": 3, "place": 3, "player": "B", "seq": 7}, 1.0)
    send(f, "T2", "rulings", {"type": "eliminated", "seat": 5, "place": 2, "player": "C", "seq": 8}, 1.0)
    send(
        f, "T2", "rulings", {"type": "eliminated", "seat": 5, "place": 2, "player": "C", "seq": 8}, 1.0
    )  # again
    f.tick(2.0)
    assert {p: x.place for p, x in f.standings.finishes.items()} == {"C": 8, "B": 9}
    assert "C is out in 8th place (busted at T2)." in [a["text"] for a in f.alerts]


def test_alert_sentence_cites_the_rule_and_says_own_or_borrowed():
    f = floor_for("cool_mule")
    send(
        f,
        "T1",
        "rulings",
        {"type": "misdeal", "reason": "first_cards_exposed", "rule": "cool_mule:5.g", "seq": 3},
        1.0,
    )
    send(
        f,
        "T1",
        "rulings",
        {"type": "button_misplaced", "expected": 2, "seen": 4, "rule": "bluff_street:29", "seq": 4},
        1.0,
    )
    texts = [(a["text"], a["source"]) for a in f.alerts]
    assert (
        "T1: MISDEAL: one of the first cards off the deck was exposed. Collect, reshuffle, re-deal.  [cool_mule:5.g]",
        "cool_mule:5.g, the venue's own rule",
    ) in texts
    assert texts[0][1] == "bluff_street:29, borrowed from Bluff Street"


def test_malformed_messages_change_nothing():
    f = floor_for("cool_mule")
    before = f.view(1.0)
    for payload in (b"{not json", b"[1, 2]", b""):
        f.handle("smarttable/v1/v/T1/rulings", payload, 1.0)
    f.handle("smarttable/v1/v/T9/state", b"{}", 1.0)  # a table of another event
    after = f.view(1.0)
    assert after["tables"] == before["tables"] and after["alerts"] == before["alerts"]


def test_page_says_when_late_registration_closes_dragons_den():
    """dragons_den:Reminder: in the seat no later than 30 minutes after the first deal."""
    f = floor_for("dragons_den")
    f.clock_start(1000.0)
    assert f.view(1000.0 + 29 * 60)["late_registration"] == {
        "open": True,
        "text": "within 30 minutes of the first deal",
        "rule": "dragons_den:Reminder",
        "closes_at": 1000.0 + 1800,
    }
    assert not f.view(1000.0 + 31 * 60)["late_registration"]["open"]


def table_state(players: dict[int, str], button: int, sb: int, bb: int, phase: str = "between_hands") -> dict:
    return {
        "table": {"seats": 6},
        "seats": [{"seat": s, "player": p, "stack": 5000} for s, p in players.items()],
        "phase": phase,
        "button": button,
        "blinds": {"sb_seat": sb, "bb_seat": bb},
        "level": {"sb": 50, "bb": 100, "ante": 0},
    }


def test_breaking_a_table_move_by_move_dragons_den_5():
    """dragons_den:5: players from a broken table 'assume the rights and responsibilities of the position'.
    Each confirmed move sends `leave` (moved) to the broken table; the other moves stay on offer."""
    f = floor_for("dragons_den", tables=("T1", "T2", "T3"))
    send(f, "T1", "state", table_state({1: "a", 2: "b", 3: "c", 4: "d"}, 1, 2, 3), 1.0)
    send(f, "T2", "state", table_state({1: "e", 2: "f", 3: "g", 5: "h"}, 1, 2, 3), 1.0)
    send(f, "T3", "state", table_state({2: "x", 4: "y"}, 2, 4, 2), 1.0)
    f.tick(1.1)
    offered = f.view(1.1)["proposals"]
    assert [(p["player"], p["kind"]) for p in offered] == [("x", "break"), ("y", "break")]
    assert all("dragons_den:5" in p["text"] for p in offered)
    outs = f.confirm(offered[0]["id"], 2.0)
    leaves = [o for o in outs if o.topic.endswith("/cmd/leave")]
    assert [(o.topic, o.body["seat"], o.body["reason"]) for o in leaves] == [
        ("smarttable/v1/v/T3/cmd/leave", 2, "moved")
    ]
    # both tables' panels show the move at once: who goes where, and the seat that waits
    notices = [(o.topic, o.body) for o in outs if o.topic.endswith("/cmd/move")]
    to_table, to_seat = offered[0]["to"].split(" seat ")
    assert [(t, b["seat"], b["direction"], b["table"]) for t, b in notices] == [
        ("smarttable/v1/v/T3/cmd/move", 2, "out", to_table),
        (f"smarttable/v1/v/{to_table}/cmd/move", int(to_seat), "in", "T3"),
    ]
    assert notices[0][1]["to_seat"] == int(to_seat)
    left = f.view(2.0)["proposals"]
    assert [p["player"] for p in left] == ["y"] and left[0]["to"] != offered[0]["to"]
    assert f.view(2.0)["moves"][0]["status"] == "confirmed"


def test_a_move_waits_for_the_hand_to_end_before_the_player_leaves():
    f = floor_for("cool_mule", tables=("T1", "T2"))
    send(
        f, "T1", "state", table_state({1: "a", 2: "b", 3: "c", 4: "d", 5: "e"}, 1, 2, 3, phase="preflop"), 1.0
    )
    send(f, "T1", "events", {"type": "hand_start", "seq": 1}, 1.0)
    send(f, "T2", "state", table_state({1: "p", 2: "q", 4: "r"}, 1, 2, 4), 1.0)
    f.tick(1.1)
    move = f.view(1.1)["proposals"][0]
    assert "cool_mule:12.l" in move["text"]
    outs = f.confirm(move["id"], 2.0)
    assert [o.topic for o in outs] == ["smarttable/v1/v/T1/cmd/move", "smarttable/v1/v/T2/cmd/move"]
    # T1 is in a hand: the panels show the move now, the leave waits
    send(f, "T1", "events", {"type": "hand_end", "seq": 2}, 3.0)
    outs = f.tick(3.1)
    assert [o.topic for o in outs if "/cmd/leave" in o.topic] == ["smarttable/v1/v/T1/cmd/leave"]
    assert f.tick(3.2) == []  # sent once


def test_a_bust_published_with_the_seat_only_is_placed_by_who_sat_there():
    """A real table's `eliminated` carries seat and place only (its privacy list); its next state may
    already show the seat empty. The floor remembers who sat where."""
    f = floor_for("cool_mule", tables=("T1",), entrants=5)
    send(f, "T1", "state", table_state({1: "a", 2: "b"}, 1, 2, 1), 1.0)
    send(f, "T1", "state", table_state({1: "a"}, 1, 2, 1), 1.5)  # the state overtook the ruling
    send(f, "T1", "rulings", {"type": "eliminated", "seat": 2, "place": 2, "seq": 9}, 1.6)
    send(f, "T1", "rulings", {"type": "eliminated", "seat": 6, "place": 2, "seq": 10}, 1.6)  # nobody known
    f.tick(2.0)
    assert f.standings.finishes["b"].place == 5
    assert any("never saw who sat there" in a["text"] for a in f.alerts)


def test_the_page_shows_the_rulebooks_chip_race_when_a_colour_up_begins():
    """bar_league:Chip Race: 'starting left of the button, each player receives 1 card for every odd chip'."""
    cfg = parse_floor_config(
        {
            "floor": {"venue": "v", "profile": "bar_league", "tables": ["T1"], "clock_start": "manual"},
            "structure": {
                "levels": [
                    {"sb": 25, "bb": 50, "seconds": 60},
                    {"sb": 100, "bb": 200, "seconds": 60, "colour_up": "25s out"},
                ]
            },
        }
    )
    f = Floor(cfg, entrants=9)
    f.clock_start(0.0)
    assert f.view(30.0)["clock"]["colour_up"] is None
    shown = f.view(61.0)["clock"]["colour_up"]
    assert shown["rule"] == "bar_league:Chip Race" and shown["steps"][0] == "Colour-up: 25s out."
    assert any("left of the button" in step for step in shown["steps"])
    f.clock_pause(70.0)
    assert f.view(500.0)["clock"]["seconds_left"] == 50.0 and not f.view(500.0)["clock"]["running"]


def test_busts_of_one_hand_are_placed_by_the_stacks_that_started_it_and_equal_ones_share():
    """The floor places a hand's busts by the stacks it saw when the hand started (cool_mule:12.d),
    not by the table's own numbering, and two who started level share the place (TDA, borrowed)."""
    f = floor_for("cool_mule", tables=("T1", "T2"), entrants=9)
    seats = [
        {"seat": 1, "player": "A", "stack": 3000},
        {"seat": 2, "player": "B", "stack": 1200},
        {"seat": 3, "player": "C", "stack": 1200},
        {"seat": 4, "player": "D", "stack": 600},
    ]
    entered = {"seats": 6, "actions": "entered"}
    send(f, "T1", "state", {"table": entered, "seats": seats, "phase": "between_hands"}, 1.0)
    send(f, "T1", "events", {"type": "hand_start", "seq": 1}, 2.0)
    # in the hand the stacks change (blinds, bets); the state then is not the hand's start
    send(
        f,
        "T1",
        "state",
        {"table": entered, "seats": [{**seats[0], "stack": 5400}], "phase": "river"},
        3.0,
    )
    for seq, (seat, place) in enumerate([(2, 7), (3, 8), (4, 9)], start=10):
        send(f, "T1", "rulings", {"type": "eliminated", "seat": seat, "place": place, "seq": seq}, 3.1)
    f.tick(4.0)
    assert {p: x.place for p, x in f.standings.finishes.items()} == {"B": 7, "C": 7, "D": 9}
    texts = [a["text"] for a in f.alerts]
    assert "B is out in 7th place, shared with C: each started the hand with 1200 (busted at T1)." in texts
    shared = next(a for a in f.alerts if a["text"].startswith("C is out"))
    assert shared["rule"] == "TDA:players eliminated at the same time"
    assert "borrowed from TDA" in shared["source"]
    view = f.view(4.0)
    assert [(r["name"], r["place"]) for r in view["standings"]] == [("B", 7), ("C", 7), ("D", 9)]


def test_an_observed_tables_stacks_neither_order_nor_tie_its_busts():
    """At an observed table nobody enters bets, so the stacks in its state are the ones players sat
    down with: two busts there keep the table's own order (its `place`), never a shared place."""
    f = floor_for("cool_mule", tables=("T1",), entrants=9)
    seats = [{"seat": 2, "player": "B", "stack": 10000}, {"seat": 3, "player": "C", "stack": 10000}]
    observed = {"seats": 6, "actions": "observed"}
    send(f, "T1", "state", {"table": observed, "seats": seats, "phase": "between_hands"}, 1.0)
    send(f, "T1", "events", {"type": "hand_start", "seq": 1}, 2.0)
    send(f, "T1", "rulings", {"type": "eliminated", "seat": 3, "place": 8, "seq": 5}, 3.0)
    send(f, "T1", "rulings", {"type": "eliminated", "seat": 2, "place": 9, "seq": 6}, 3.0)
    f.tick(4.0)
    assert {p: x.place for p, x in f.standings.finishes.items()} == {"C": 8, "B": 9}


def test_a_colour_up_reaches_every_tables_panel_once_when_its_break_begins():
    """The chip race and colour-up at the break (bar_league, corner_pocket, dragons_den:16): the
    floor sends `cmd/colour_up` to each table when the clock reaches it, once."""
    cfg = parse_floor_config(
        {
            "floor": {
                "venue": "v",
                "profile": "dragons_den",
                "tables": ["T1", "T2"],
                "clock_start": "manual",
            },
            "structure": {
                "levels": [
                    {"sb": 25, "bb": 50, "seconds": 60},
                    {"break": True, "seconds": 60, "colour_up": "25 chips"},
                    {"sb": 50, "bb": 100, "seconds": 60},
                ]
            },
        }
    )
    f = Floor(cfg, entrants=9)
    for t in ("T1", "T2"):
        f.handle(f"smarttable/v1/v/{t}/status", b"online", 0.0)
    f.clock_start(1.0)
    assert [o for o in f.tick(30.0) if o.topic.endswith("/cmd/colour_up")] == []
    outs = [o for o in f.tick(62.0) if o.topic.endswith("/cmd/colour_up")]
    assert [o.topic for o in outs] == ["smarttable/v1/v/T1/cmd/colour_up", "smarttable/v1/v/T2/cmd/colour_up"]
    assert outs[0].body["chips"] == "25 chips" and "dragons_den:16" in outs[0].body["step"]
    assert [o for o in f.tick(63.0) if o.topic.endswith("/cmd/colour_up")] == []  # once


def test_a_restarted_floor_sends_ids_the_tables_have_not_seen():
    """A table applies a command id once for good; the floor's first command after a restart must not
    reuse the id of its first command before it, or the table answers it as a redelivery and the new
    level (or move) is never applied."""
    cfg = parse_floor_config(
        {"floor": {"venue": "v", "tables": ["T1"], "clock_start": "manual"}, "structure": {"levels": LEVELS}}
    )
    runs = []
    for _ in range(2):  # the floor, then the floor started again
        outs = Floor(cfg, entrants=9).handle("smarttable/v1/v/T1/status", b"online", 1.0)
        runs.append([o.body["id"] for o in outs])
    assert runs[0] and runs[1], "the first level goes out when the table comes online"
    assert not set(runs[0]) & set(runs[1])
