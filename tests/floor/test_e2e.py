"""The floor end to end: three simulated tables (the real rules engine and check-in) and the floor on a
real Mosquitto. Levels reach every table, a bust at one table gets its place in the event, and a
balancing move seats the player, who taps in at the new table and is dealt in there."""

from __future__ import annotations

from controller.floor.seating.balancing import hands_until_big_blind
from controller.floor.simtable import SimTable
from tests.floor.conftest import Venue, running_floor, wait_for

TABLES = ["T1", "T2", "T3"]
LEVELS = [
    {"sb": 50, "bb": 100, "seconds": 1.5},
    {"sb": 100, "bb": 200, "ante": 25, "seconds": 600},
]


async def seat_everyone(venue: Venue, broker) -> dict[str, SimTable]:
    tables = {}
    for t in TABLES:
        sim = SimTable(
            "127.0.0.1", broker.port, "den", t, venue.profile, venue.seats, checkin=venue.checkin(t)
        )
        await sim.start()
        tables[t] = sim
    for a in venue.registry.seat_draw("E1"):
        result = await tables[a.table_id].tap(*venue.card(a.player_id), now=_now())
        assert result.accepted, result.message
    return tables


def _now():
    from datetime import UTC, datetime

    return datetime.now(UTC)


def level_of(sim: SimTable):
    lvl = sim.state()["level"]
    return lvl["sb"], lvl["bb"], lvl.get("ante", 0)


async def test_levels_busts_and_a_balancing_move_through_mosquitto(tmp_path, mosquitto):
    venue = Venue(tmp_path, "dragons_den", TABLES, seats=6, players=15)
    cfg = venue.floor_config(mosquitto, LEVELS)
    tables = await seat_everyone(venue, mosquitto)
    try:
        async with running_floor(cfg) as floor:
            # before the clock starts every table gets the first level
            await wait_for(
                lambda: all(level_of(s) == (50, 100, 0) for s in tables.values()),
                what="level 1 at every table",
            )
            for sim in tables.values():
                await sim.feed({"type": "hand_start"})
            await floor.clock_command("start")
            # dragons_den:18: the next level goes to every table when the clock reaches it
            await wait_for(
                lambda: all(level_of(s) == (100, 200, 25) for s in tables.values()),
                timeout=8,
                what="level 2 at every table",
            )
            assert all(
                any(c["name"] == "level" and c["bb"] == 200 for c in s.commands) for s in tables.values()
            )
            for sim in tables.values():
                await sim.feed({"type": "hand_end"})

            # two busts at T2: 15th and 14th in the event (the table alone would say 5th and 4th)
            t2 = tables["T2"]
            seats_t2 = sorted(int(s) for s in t2.engine.snapshot()["players"])
            first = t2.engine.players[seats_t2[0]].id
            out = await t2.feed({"type": "leave", "seat": seats_t2[0], "reason": "eliminated"})
            assert out[0]["place"] == 5  # the table's own count
            await wait_for(lambda: first in floor.floor.standings.finishes, what="the first bust placed")
            assert floor.floor.standings.finishes[first].place == 15
            second = t2.engine.players[seats_t2[1]].id
            await t2.feed({"type": "leave", "seat": seats_t2[1], "reason": "eliminated"})
            await wait_for(lambda: second in floor.floor.standings.finishes, what="the second bust placed")
            assert floor.floor.standings.finishes[second].place == 14
            page = floor.view()
            assert [(s["place"], s["name"]) for s in page["standings"]] == [
                (14, floor.floor.names[second]),
                (15, floor.floor.names[first]),
            ]
            assert page["players_left"] == 13

            # T2 has 3 players, the others 5 (too many to break a table): a move from the fullest table, big blind to worst position
            proposal = await wait_for(lambda: floor.view()["proposals"], what="a balancing proposal")
            p = proposal[0]
            assert "dragons_den:6" in p["text"] and p["to"].startswith("T2 seat")
            move = floor.floor.proposal(p["id"])
            src = tables[move.from_table]
            assert move.player == src.engine.players[move.from_seat].id
            await floor.confirm(p["id"])
            # the source table is between hands: the floor sends `leave` (moved) and the seat empties
            await wait_for(
                lambda: move.from_seat not in src.engine.players, what="the player leaving the source table"
            )
            assert venue.registry.assignment("E1", move.player).table_id == "T2"
            # the player taps in at T2: accepted as a moved player with the chips brought along
            result = await t2.tap(*venue.card(move.player), now=_now())
            assert result.accepted and result.extra.get("moved")
            assert result.lines[0] == {
                "type": "seat",
                "seat": move.to_seat,
                "player": move.player,
                "stack": 10000,
                "moved": True,
            }
            await wait_for(lambda: not floor.floor.moves, what="the move completed")
            # dealt in correctly at the new table: the worst position is the next big blind there
            t2_seats = next(t for t in floor.floor.table_seats() if t.table_id == "T2")
            positions = hands_until_big_blind(t2_seats)
            hand = (await t2.feed({"type": "hand_start"}))[0]
            assert hand["type"] == "hand" and move.to_seat in hand["dealt_in"]
            assert move.to_seat not in [s["seat"] for s in hand["sitting_out"]]
            # the floor's count of hands to the big blind is the table engine's: its next big blind is 0
            assert positions[hand["bb"]] == 0
            await wait_for(
                lambda: not floor.view()["proposals"], what="no further proposal (tables within one)"
            )
    finally:
        for sim in tables.values():
            await sim.stop()


async def test_floor_catches_up_after_a_restart(tmp_path, mosquitto):
    """Tables go on while the floor is down; back up, it gets the rulings Mosquitto kept for its session,
    the tables' retained state, and its own clock from the registry database."""
    venue = Venue(tmp_path, "cool_mule", TABLES, seats=6, players=9)
    cfg = venue.floor_config(mosquitto, LEVELS)
    tables = await seat_everyone(venue, mosquitto)
    try:
        async with running_floor(cfg) as floor:
            await floor.clock_command("start")
            await wait_for(lambda: all(level_of(s)[1] for s in tables.values()), what="levels at the tables")
        # the floor is down: a player busts at T1
        t1 = tables["T1"]
        seat = min(t1.engine.players)
        gone = t1.engine.players[seat].id
        await t1.feed({"type": "leave", "seat": seat, "reason": "eliminated"})
        async with running_floor(cfg) as floor:
            await wait_for(
                lambda: gone in floor.floor.standings.finishes, what="the bust made while the floor was down"
            )
            assert floor.floor.standings.finishes[gone].place == 9
            assert floor.view()["clock"]["started"]  # the clock came back from the database
            await wait_for(lambda: floor.view()["players_left"] == 8, what="every table's retained state")
    finally:
        for sim in tables.values():
            await sim.stop()


async def test_a_broker_that_never_says_goodbye_does_not_hold_the_floors_exit(
    tmp_path, mosquitto, monkeypatch, caplog
):
    """Stopping the floor (a director's restart, systemd's stop) closes the broker link, and aiomqtt
    waits up to its own 10 s timeout for the broker's goodbye. A broker that never gives it must not
    hold the exit: what is left after STOP_WAIT is cut off, and the log says which part it was."""
    import asyncio

    import aiomqtt

    from controller.floor import service as floor_service

    real_exit = aiomqtt.Client.__aexit__

    async def goodbye_never_comes(self, *exc):
        await asyncio.sleep(60)  # as if the broker never acknowledged the disconnect
        return await real_exit(self, *exc)

    venue = Venue(tmp_path, "cool_mule", TABLES, seats=6, players=9)
    cfg = venue.floor_config(mosquitto, LEVELS)
    monkeypatch.setattr(floor_service, "STOP_WAIT", 1.0)
    monkeypatch.setattr(aiomqtt.Client, "__aexit__", goodbye_never_comes)
    async with running_floor(cfg) as floor:  # its exit is awaited for at most 10 s
        assert floor.connected
    assert "event=floor_stop_cut_off task=FloorService._mqtt" in caplog.text
