"""The floor with real table services: two `smart-table run` processes (simulated devices) on a real
Mosquitto. The floor's level reaches both tables' engines, a bust is placed in the event, and a
balancing move goes through the tables' own command handling (leave at one, seat moved at the other)."""

from __future__ import annotations

import asyncio
import json

import aiomqtt

from controller.floor.config import parse_floor_config
from controller.mqtt.mosquitto import free_port
from tests.floor.conftest import running_floor, wait_for
from tests.service.conftest import service_process, write_toml


def table_toml(tmp_path, table: str, port: int):
    (tmp_path / table).mkdir()
    return write_toml(
        tmp_path / table / "table.toml",
        {
            "table": {"seats": 6, "profile": "cool_mule", "venue": "den", "id": table},
            "devices": {"camera": "none", "panel": "none", "nfc": "none"},
            "broker": {"host": "127.0.0.1", "port": port},
            "event_log": {"path": str(tmp_path / table / "events.db"), "synchronous": "normal"},
        },
    )


async def test_floor_drives_real_table_services(tmp_path, mosquitto):
    procs = [
        service_process(table_toml(tmp_path, t, mosquitto.port), tmp_path / f"{t}.log") for t in ("T1", "T2")
    ]
    cfg = parse_floor_config(
        {
            "floor": {
                "venue": "den",
                "event": "E9",
                "profile": "cool_mule",
                "tables": ["T1", "T2"],
                "seats": 6,
                "clock_start": "manual",
                "entrants": 8,
            },
            "registry": {"url": f"sqlite:///{tmp_path / 'registry.sqlite3'}"},
            "broker": {"host": "127.0.0.1", "port": mosquitto.port, "client_id": "floor-real"},
            "web": {"port": free_port()},
            "structure": {"levels": [{"sb": 50, "bb": 100, "minutes": 20}]},
        }
    )
    try:
        async with (
            aiomqtt.Client("127.0.0.1", mosquitto.port, protocol=aiomqtt.ProtocolVersion.V311) as director,
            running_floor(cfg) as floor,
        ):
            f = floor.floor
            await wait_for(
                lambda: all(t.status == "online" for t in f.tables.values()),
                timeout=30,
                what="both tables online",
            )
            for table, seats in (("T1", (1, 2, 3, 4, 5)), ("T2", (1, 3, 5))):
                for s in seats:
                    body = {"seat": s, "player": f"{table}-{s}", "stack": 5000}
                    await director.publish(f"smarttable/v1/den/{table}/cmd/seat", json.dumps(body), qos=1)
            # the floor's level reached both tables' engines (their own retained state says so)
            await wait_for(
                lambda: (
                    all((t.state.get("level") or {}).get("bb") == 100 for t in f.tables.values())
                    and len(f.tables["T1"].seats()) == 5
                    and len(f.tables["T2"].seats()) == 3
                ),  # all seated: a proposal from half a table is a break
                timeout=15,
                what="level 1 and the players at both tables",
            )
            # 5 against 3: a balancing move by cool_mule:12.l, through the tables' own commands. The
            # proposals are worked out again at the floor's next tick: one made while T2 was still being
            # seated (a break) may show until then, but not beside the balancing move.
            proposals = await wait_for(
                lambda: (
                    [p for p in floor.view()["proposals"] if "cool_mule:12.l" in p["text"]]
                    and floor.view()["proposals"]
                ),
                what="a balancing proposal",
            )
            assert all("cool_mule:12.l" in p["text"] for p in proposals), proposals
            proposal = proposals[0]
            await floor.confirm(proposal["id"])
            move = f.moves[proposal["id"]].move

            def scene(table: str) -> str:
                return str((f.tables[table].state.get("panel") or {}).get("scene") or "")

            # both tables' panels show the move (cmd/move): the seat to leave, and the seat that waits
            await wait_for(
                lambda: scene("T1").startswith(f"MOVE seat {move.from_seat}\nto T2\nseat {move.to_seat}"),
                what="the move on T1's panel",
            )
            await wait_for(
                lambda: scene("T2").startswith(f"MOVED IN\nseat {move.to_seat}\nfrom T1"),
                what="the move on T2's panel",
            )
            assert not [a for a in f.alerts if "refused the floor's move" in a["text"]]
            await wait_for(lambda: move.from_seat not in f.tables["T1"].seats(), what="the leave at T1")
            await wait_for(lambda: f.moves[proposal["id"]].status == "left", what="the player walking")
            await floor.seat_directly(proposal["id"])
            await wait_for(
                lambda: move.to_seat in f.tables["T2"].seats(), what="the moved player seated at T2"
            )
            assert f.tables["T2"].seats()[move.to_seat]["player"] == move.player
            await wait_for(lambda: not f.moves, what="the move completed")
            # a bust at T2 (the director's leave) is eighth of eight, not fourth at its table
            seat = min(s for s in f.tables["T2"].seats() if s != move.to_seat)
            gone = f.tables["T2"].seats()[seat]["player"]
            await director.publish(
                "smarttable/v1/den/T2/cmd/leave", json.dumps({"seat": seat, "reason": "eliminated"}), qos=1
            )
            await wait_for(lambda: gone in f.standings.finishes, timeout=10, what="the bust placed")
            assert f.standings.finishes[gone].place == 8
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(10)
            except Exception:
                p.kill()
        await asyncio.sleep(0)
