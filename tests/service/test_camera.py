"""The camera in the service: the venue's enrolled deck is used for reading, a deck file that
cannot be used is reported by name while the table goes on reading with the built-in recogniser,
and the first card after READY is seen like any other (the detector is warmed up while starting)."""

from __future__ import annotations

import asyncio

import pytest

from controller.service.app import TableService
from controller.service.config import ConfigError, parse_config
from controller.service.sources import Unavailable
from hil.camera import SimulatedCamera
from tests.service.conftest import table_config
from vision.read import enroll_deck

SEATS = [{"type": "seat", "seat": s, "player": f"P{s}", "stack": 10000} for s in (1, 2, 4, 5)]


def camera_config(tmp_path, **devices):
    return table_config(
        tmp_path,
        devices={"camera": "sim", "camera_fps": 1, "sim_width": 960, "sim_height": 540, **devices},
    )


async def flash_first_card(service: TableService, card: str) -> tuple[int, list[dict]]:
    """Deal the hand's first card face up in front of its seat: (that seat, the camera's lines)."""
    for line in [*SEATS, {"type": "level", "sb": 50, "bb": 100}]:
        await service.inject(line)
    hand = next(o for o in await service.inject({"type": "hand_start"}) if o["type"] == "hand")
    cam: SimulatedCamera = service.camera.sim
    cam.deal_to(hand["first_card"], card=card, face_up=True)
    frame, _ = await asyncio.to_thread(cam.frame)
    for _ in range(4):
        await service.push_frame(frame)
    for _ in range(100):
        seen = [x.line for x in service.log.lines(("in",)) if x.source == "camera"]
        if seen:
            return hand["first_card"], seen
        await asyncio.sleep(0.05)
    return hand["first_card"], []


async def test_the_enrolled_deck_reads_the_flashed_card(tmp_path):
    from hil.scene import deck_dir

    model, _ = enroll_deck(deck_dir("anglo_poker"))  # the deck the simulated camera deals
    model.save(tmp_path / "venue.deck")
    cfg = camera_config(tmp_path, deck=str(tmp_path / "venue.deck"))
    async with TableService(cfg) as service:
        assert service.camera.detector.model is not None
        seat, seen = await flash_first_card(service, "Qc")
        assert service.health.part("camera").status == "ok"
    assert seen == [{"type": "deal", "seat": seat, "card": "Qc"}]


async def test_a_damaged_deck_file_is_named_and_the_table_reads_on(tmp_path):
    bad = tmp_path / "venue.deck"
    bad.write_bytes(b"this is not a deck model")
    cfg = camera_config(tmp_path, deck=str(bad))
    async with TableService(cfg) as service:
        assert service.camera.detector.model is None  # the built-in recogniser
        seat, seen = await flash_first_card(service, "Kd")
        camera = service.health.part("camera")
        assert camera.status == "degraded"
        assert "devices.deck" in camera.detail and "venue.deck" in camera.detail
        assert "built-in" in camera.detail
    # the flashed card still became a deal line dealt face up, so the misdeal is still called; the
    # built-in reader names the card only when it reads it surely enough for a ruling (vision/tracker.py
    # MIN_HOLE_CONFIDENCE), and never names another
    assert len(seen) == 1 and seen[0]["type"] == "deal" and seen[0]["seat"] == seat
    assert seen[0].get("card") == "Kd" or seen[0].get("face") == "up", seen[0]


def test_a_missing_deck_file_is_a_config_error_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match=r"devices\.deck: file .*nope\.deck.* does not exist"):
        parse_config({"devices": {"deck": str(tmp_path / "nope.deck")}}, "t.toml")


async def test_pushing_a_frame_to_a_camera_that_takes_none_says_so_at_once(tmp_path):
    cfg = table_config(tmp_path, devices={"camera": "none"})
    async with TableService(cfg) as service:
        frame, _ = SimulatedCamera(width=640, height=360).frame()
        with pytest.raises(Unavailable, match=r"camera 'none' takes no pushed frames \(disabled"):
            await asyncio.wait_for(service.push_frame(frame), 5)
