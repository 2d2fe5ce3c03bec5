"""The camera picture at an alert (docs/mqtt.md "Camera picture"): a real `smart-table run` table
with a camera on a real Mosquitto publishes it retained when it rules a misdeal, as a JPEG of the
configured width whose header names the ruling; and no seat's cards can be read from it, while the
board's can (privacy: only what is face up for the whole table leaves it)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
from pathlib import Path

import aiomqtt
import cv2
import numpy as np
import pytest

from controller.mqtt.picture import read_header, with_header
from controller.service.config import ConfigError
from controller.service.picture import redaction_mask, render_picture
from hil.camera import SimulatedCamera
from tests.service.conftest import service_process, table_config, write_toml
from vision.detect import Detector
from vision.layout import default_layout

SEATED = (1, 2, 4, 5)
W, H = 960, 540  # the camera's frames; the picture is 640 wide


def decode(jpeg: bytes) -> np.ndarray:
    img = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert img is not None, "not a decodable JPEG"
    return img


def zone_pixels(img: np.ndarray, layout, seat: int) -> np.ndarray:
    """The picture's pixels well inside a seat's zone (eroded: JPEG rings at the zone's edge)."""
    h, w = img.shape[:2]
    mask = np.zeros((h, w), np.uint8)
    pts = layout.to_image(layout.seat_zones[seat]) * [w / layout.image_size[0], h / layout.image_size[1]]
    cv2.fillPoly(mask, [np.round(pts).astype(np.int32)], 255)
    mask = cv2.erode(mask, np.ones((9, 9), np.uint8))
    return img[mask > 0]


def test_no_card_in_any_seat_zone_can_be_read_from_the_picture_but_the_board_can():
    cam = SimulatedCamera(seats=6, seed=3, width=W, height=H)
    for seat in range(1, 7):  # every player peeking: both cards face up in every seat
        cam.deal_to(seat, face_up=True)
        cam.deal_to(seat, face_up=True)
    cam.board(["Ah", "Kd", "7c"])
    frame, _ = cam.frame()
    layout = default_layout(6, W, H)
    detector = Detector(layout=layout)
    raw = [(c.code, layout.zone_at(c.center)) for c in detector.detect(frame).cards if c.face == "up"]
    assert {z[1] for _, z in raw if z and z[0] == "seat"} == set(range(1, 7))  # readable in the frame

    jpeg = render_picture(frame, layout, {"type": "misdeal", "seq": 7})
    assert read_header(jpeg) == {"type": "misdeal", "seq": 7, "width": 640, "height": 360}
    img = decode(jpeg)
    assert img.shape == (360, 640, 3)
    # the detector, on the picture brought back to the frame's size, finds no card at any seat ...
    back = cv2.resize(img, (W, H), interpolation=cv2.INTER_CUBIC)
    seen = [(c.face, layout.zone_at(c.center)) for c in detector.detect(back).cards]
    assert not [z for _, z in seen if z is None or z[0] != "board"], seen
    assert sum(1 for face, z in seen if face == "up" and z == ("board", None)) == 3  # ... the board's all
    for seat in range(1, 7):  # and the seat zones are flat black, not a blur that a filter could undo
        assert zone_pixels(img, layout, seat).max() < 24, seat


def test_the_redaction_covers_everything_outside_the_table_and_keeps_the_board():
    layout = default_layout(6, 1280, 720)
    mask = redaction_mask(layout, 640, 360)
    assert mask[0, 0] and mask[359, 639] and mask[5, 320]  # corners and the rim: the players' side
    board = np.round(layout.to_image(layout.board) / 2).astype(int)
    (x0, y0), (x1, y1) = board.min(axis=0), board.max(axis=0)
    assert not mask[y0 + 2 : y1 - 2, x0 + 2 : x1 - 2].any()


def test_the_header_is_read_back_and_a_foreign_payload_is_not_taken_for_one():
    jpeg = cv2.imencode(".jpg", np.zeros((8, 8, 3), np.uint8))[1].tobytes()
    both = with_header(jpeg, {"type": "dead_hand", "seq": 3})
    assert read_header(both) == {"type": "dead_hand", "seq": 3} and decode(both).shape == (8, 8, 3)
    for other in (jpeg, b"", b"\xff\xd8\xff\xfe\x00\x09notjson", b'{"type":"misdeal"}'):
        assert read_header(other) is None
    with pytest.raises(ValueError, match="not a JPEG"):
        with_header(b"GIF89a", {})


def test_the_switch_and_its_limits_are_named(tmp_path):
    assert table_config(tmp_path).mqtt.publish_picture is True
    with pytest.raises(ConfigError, match=r"mqtt.picture_quality: must be 1..100, got 0"):
        table_config(tmp_path, mqtt={"picture_quality": 0})
    with pytest.raises(ConfigError, match=r"mqtt.publish_picture: expected true or false"):
        table_config(tmp_path, mqtt={"publish_picture": "yes"})


class FolderCamera:
    """A camera for a `smart-table run` process: `dir:` frames that are all links to one file, so
    replacing that file changes what the camera sees from its next frame on."""

    def __init__(self, root: Path, frames: int = 400) -> None:
        self.root = root
        self.frames_dir = root / "frames"
        self.frames_dir.mkdir(parents=True)
        self.current = root / "current.png"
        self.sim = SimulatedCamera(seats=6, seed=5, width=W, height=H)
        self.show()
        for n in range(frames):
            os.symlink(self.current, self.frames_dir / f"{n:04d}.png")

    @property
    def spec(self) -> str:
        return f"dir:{self.frames_dir}"

    def show(self) -> np.ndarray:
        frame, _ = self.sim.frame()
        tmp = self.root / "next.png"
        cv2.imwrite(str(tmp), frame)
        os.replace(tmp, self.current)
        return frame


def camera_table(tmp_path: Path, port: int, camera: FolderCamera, venue="den", table="T1", **sections):
    cfg = {
        "table": {"seats": 6, "profile": "cool_mule", "venue": venue, "id": table},
        "devices": {"camera": camera.spec, "panel": "none", "nfc": "none", "camera_fps": 5},
        "broker": {"host": "127.0.0.1", "port": port},
        "event_log": {"path": str(tmp_path / f"{table}-events.db"), "synchronous": "normal"},
        **sections,
    }
    return write_toml(tmp_path / f"{table}.toml", cfg)


_COMMAND_NUMBERS = itertools.count(1)


async def command(client: aiomqtt.Client, prefix: str, name: str, body: dict, replies: asyncio.Queue) -> dict:
    """A director command and its reply (the table answers on reply/test)."""
    ident = f"{name}-{next(_COMMAND_NUMBERS)}"  # unique: the table answers a repeated id as a redelivery
    await client.publish(
        f"{prefix}/cmd/{name}", json.dumps({**body, "id": ident, "reply_to": f"{prefix}/reply/test"}), qos=1
    )
    async with asyncio.timeout(30):
        while True:
            reply = await replies.get()
            if reply.get("id") == ident:
                return reply


async def rule_a_misdeal(client: aiomqtt.Client, prefix: str, camera: FolderCamera, replies) -> np.ndarray:
    """Seat four players, start a hand, and let the camera see its first card dealt face up
    (cool_mule:5.g: a misdeal). Returns the frame the camera saw."""
    for s in SEATED:
        assert (
            await command(client, prefix, "seat", {"seat": s, "player": f"P{s}", "stack": 10000}, replies)
        )["ok"]
    assert (await command(client, prefix, "level", {"sb": 50, "bb": 100}, replies))["ok"]
    reply = await command(client, prefix, "hand_start", {}, replies)
    hands = [o for o in reply.get("outputs", []) if o["type"] == "hand"]
    assert hands, f"hand_start gave no hand: {reply}"
    first = hands[0]["first_card"]
    camera.sim.deal_to(first, card="Kd", face_up=True)
    return camera.show(), first


@contextlib.asynccontextmanager
async def director(port: int, prefix: str):
    """A client that reads the table's replies into a queue and its pictures into a list."""
    replies: asyncio.Queue = asyncio.Queue()
    pictures: list[bytes] = []
    rulings: list[dict] = []
    online = asyncio.Event()
    async with aiomqtt.Client("127.0.0.1", port, protocol=aiomqtt.ProtocolVersion.V311, timeout=10) as c:
        await c.subscribe(
            [
                (f"{prefix}/reply/test", 1),
                (f"{prefix}/picture", 1),
                (f"{prefix}/rulings", 1),
                (f"{prefix}/status", 1),
            ]
        )

        async def read():
            async for m in c.messages:
                topic = str(m.topic)
                if topic.endswith("/picture"):
                    pictures.append(bytes(m.payload))
                elif topic.endswith("/status"):
                    if m.payload == b"online":
                        online.set()
                elif topic.endswith("/rulings"):
                    rulings.append(json.loads(m.payload))
                else:
                    await replies.put(json.loads(m.payload))

        task = asyncio.create_task(read())
        try:
            async with asyncio.timeout(60):  # a command sent before the table subscribed is lost
                await online.wait()
            yield c, replies, pictures, rulings
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def until(predicate, timeout: float, what: str):
    async with asyncio.timeout(timeout):
        while not (value := predicate()):
            await asyncio.sleep(0.05)
    assert value, what
    return value


async def test_a_real_table_publishes_the_picture_of_its_misdeal(tmp_path, mosquitto):
    camera = FolderCamera(tmp_path / "camera")
    proc = service_process(camera_table(tmp_path, mosquitto.port, camera), tmp_path / "T1.log")
    prefix = "smarttable/v1/den/T1"
    try:
        async with director(mosquitto.port, prefix) as (client, replies, pictures, rulings):
            frame, first = await rule_a_misdeal(client, prefix, camera, replies)
            await until(lambda: pictures, 60, "the picture of the misdeal")
            misdeal = next(r for r in rulings if r["type"] == "misdeal")
            header = read_header(pictures[-1])
            assert header["type"] == "misdeal" and header["seq"] == misdeal["seq"]
            assert header["rule"] == "cool_mule:5.g" and header["t"] == misdeal["t"]
            img = decode(pictures[-1])
            assert img.shape == (360, 640, 3) and (header["width"], header["height"]) == (640, 360)
            layout = default_layout(6, W, H)
            raw = zone_pixels(cv2.resize(frame, (640, 360), interpolation=cv2.INTER_AREA), layout, first)
            assert raw.std() > 20  # the flashed card was there in the frame ...
            assert zone_pixels(img, layout, first).max() < 24  # ... and is black in the picture
        # retained: a director who connects later gets it at once
        async with director(mosquitto.port, prefix) as (_c, _r, later, _rl):
            await until(lambda: later, 10, "the retained picture")
            assert later[-1] == pictures[-1]
    finally:
        proc.terminate()
        proc.wait(10)
    assert b"Traceback" not in (tmp_path / "T1.log").read_bytes()


async def test_a_venue_can_turn_the_picture_off(tmp_path, mosquitto):
    camera = FolderCamera(tmp_path / "camera")
    toml = camera_table(tmp_path, mosquitto.port, camera, mqtt={"publish_picture": False})
    proc = service_process(toml, tmp_path / "T1.log")
    prefix = "smarttable/v1/den/T1"
    try:
        async with director(mosquitto.port, prefix) as (client, replies, pictures, rulings):
            await rule_a_misdeal(client, prefix, camera, replies)
            await until(lambda: any(r["type"] == "misdeal" for r in rulings), 60, "the misdeal")
            reply = await command(client, prefix, "status", {}, replies)
            assert reply["state"]["health"]["picture"]["status"] == "disabled"
            await asyncio.sleep(1.0)
            assert pictures == []
    finally:
        proc.terminate()
        proc.wait(10)


async def test_a_picture_that_cannot_be_made_is_counted_and_logged_once_and_the_table_rules_on(
    tmp_path, caplog
):
    """A camera whose frames stop matching its layout (its resolution changed): each alert's
    picture fails, `health.picture` says why and counts it, the log says it once, every ruling is
    still made."""
    from controller.service.app import TableService
    from tests.service.conftest import FLASH, HAND

    cfg = table_config(tmp_path, devices={"camera": "sim", "camera_fps": 5, "sim_width": W, "sim_height": H})
    async with TableService(cfg) as service:
        await until(lambda: service.camera.tracker is not None, 30, "the camera's first frame")
        service.camera.sim.stopped = True  # from now on only the pushed frame
        await service.push_frame(np.zeros((H // 2, W // 2, 3), np.uint8))
        await until(lambda: service.camera.latest[0].shape[0] == H // 2, 10, "the pushed frame")
        part = service.health.part("picture")
        for n in (1, 2):
            for line in HAND if n == 1 else HAND[-1:]:
                await service.inject(line)
            assert [o["type"] for o in await service.inject(FLASH)] == ["misdeal"]
            await until(lambda n=n: part.counters.get("failures") == n, 10, f"failure {n} counted")
        assert part.status == "degraded" and f"frame is {W // 2}x{H // 2}" in part.detail
        assert service.health.as_dict()["picture"]["failures"] == 2
    assert sum("event=picture_failed" in r.getMessage() for r in caplog.records) == 1
