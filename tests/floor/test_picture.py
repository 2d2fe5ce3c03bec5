"""The camera picture at a table's last alert, from a real `smart-table run` table (a camera, a
real Mosquitto) through the floor to the director: kept per table, served behind the page's login
(401 without it), the ruling it belongs to named in the table's detail."""

from __future__ import annotations

import asyncio
import json

from controller.floor.config import parse_floor_config
from controller.mqtt.mosquitto import free_port
from controller.mqtt.picture import read_header
from tests.floor.conftest import running_floor, wait_for
from tests.floor.test_login import PASSWORD, fetch, secret_file
from tests.service.conftest import service_process
from tests.service.test_picture import FolderCamera, camera_table, decode, director, rule_a_misdeal


async def test_the_floor_serves_the_picture_of_a_real_tables_misdeal_behind_its_login(tmp_path, mosquitto):
    camera = FolderCamera(tmp_path / "camera")
    proc = service_process(camera_table(tmp_path, mosquitto.port, camera), tmp_path / "T1.log")
    cfg = parse_floor_config(
        {
            "floor": {
                "venue": "den",
                "event": "E1",
                "profile": "cool_mule",
                "tables": ["T1", "T2"],
                "seats": 6,
            },
            "registry": {"url": f"sqlite:///{tmp_path / 'registry.sqlite3'}"},
            "broker": {"host": "127.0.0.1", "port": mosquitto.port, "client_id": "floor-picture"},
            "web": {"port": free_port(), "password_file": secret_file(tmp_path)},
            "structure": {"levels": [{"sb": 50, "bb": 100, "minutes": 20}]},
        }
    )
    base = f"http://127.0.0.1:{cfg.web_port}"
    prefix = "smarttable/v1/den/T1"
    try:
        async with (
            running_floor(cfg) as floor,
            director(mosquitto.port, prefix) as (client, replies, pictures, _),
        ):
            before = await asyncio.to_thread(login_and_get, base, "/api/table/T1")
            assert before[0] == 200 and json.loads(before[2])["picture"] is None
            assert json.loads(before[2])["picture_note"].startswith("No camera picture yet")
            await rule_a_misdeal(client, prefix, camera, replies)
            await wait_for(lambda: floor.floor.picture("T1"), timeout=60, what="the picture at the floor")
            assert pictures and floor.floor.picture("T1") == pictures[-1]

            anonymous = await asyncio.to_thread(fetch, base + "/api/table/T1/picture")
            assert anonymous[0] == 401 and b"image" not in anonymous[1].get("Content-Type", "").encode()
            got = await asyncio.to_thread(login_and_get, base, "/api/table/T1/picture")
            assert got[0] == 200 and got[1]["Content-Type"] == "image/jpeg"
            assert decode(got[2]).shape == (360, 640, 3) and read_header(got[2])["type"] == "misdeal"
            none = await asyncio.to_thread(login_and_get, base, "/api/table/T2/picture")
            assert none[0] == 404  # T2 has sent none

            detail = json.loads((await asyncio.to_thread(login_and_get, base, "/api/table/T1"))[2])
            info = detail["picture_info"]
            assert detail["picture"].startswith("/api/table/T1/picture")
            assert (
                info["type"] == "misdeal"
                and info["rule"] == "cool_mule:5.g"
                and "misdeal" in info["text"].lower()
            )
            assert info["seq"] == read_header(got[2])["seq"] and info["taken"] and info["t"]
    finally:
        proc.terminate()
        proc.wait(10)


def login_and_get(base: str, path: str):
    good = fetch(base + "/login", data=f"password={PASSWORD}".encode(), method="POST")
    session = good[1]["Set-Cookie"].split(";")[0]
    return fetch(base + path, cookie=session)
