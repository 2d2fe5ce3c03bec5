"""Table layout: default zones, TOML files, ArUco calibration."""

from __future__ import annotations

import json
import math

import cv2
import numpy as np
import pytest

from hil.scene import CardPlacement, TableScene, render, seat_card_pose
from vision.calibrate import CalibrationError, calibrate
from vision.layout import LayoutError, default_layout, dumps_layout, load_layout, save_layout

from .conftest import H, W, run_cli


def test_default_layout_seats_run_clockwise():
    lay = default_layout(8, W, H)
    angles = []
    for s in range(1, 9):
        a = lay.to_image([lay.seat_anchors[s]])[0]
        assert lay.zone_at(tuple(a)) == ("seat", s)
        angles.append(math.atan2(a[1] - H / 2, a[0] - W / 2))
    # on screen (y down) clockwise means the angle grows, seat 1 just left of the bottom centre
    steps = [(angles[(i + 1) % 8] - angles[i]) % (2 * math.pi) for i in range(8)]
    assert all(0 < st < math.pi for st in steps)
    first = lay.to_image([lay.seat_anchors[1]])[0]
    assert first[1] > H / 2 and first[0] < W / 2
    assert lay.zone_at((W / 2, H / 2)) == ("board", None)
    assert lay.card_width_px() == pytest.approx(63 / 1600 * W, rel=0.01)


def test_layout_round_trip(tmp_path):
    lay = default_layout(6, W, H)
    p = tmp_path / "layout.toml"
    save_layout(lay, p)
    back = load_layout(p)
    assert back.seats == 6 and back.image_size == (W, H)
    assert np.allclose(back.homography, lay.homography)
    for s in range(1, 7):
        assert np.allclose(back.seat_zones[s], lay.seat_zones[s], atol=0.01)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("seats = 6", "seats = 7"), "seats = 7 but"),
        (lambda t: t.replace("homography = [", "homography = [[1, 2], "), "homography"),
        (lambda t: t.replace("[board]", "[boardx]"), "missing field 'board'"),
        (lambda t: t + "\n[[seat\n", "not valid TOML"),
        (lambda t: t.replace("number = 3", "number = 2"), "appears twice"),
    ],
)
def test_bad_layout_files_are_named(tmp_path, edit, message):
    p = tmp_path / "bad.toml"
    p.write_text(edit(dumps_layout(default_layout(6, W, H))))
    with pytest.raises(LayoutError, match=message) as exc:
        load_layout(p)
    assert "bad.toml" in str(exc.value)


def _marker_scene(perspective: float):
    scene = TableScene(seats=6, markers=True)
    scene.camera.perspective = perspective
    c, a = seat_card_pose(6, 2, 0)
    scene.cards.append(CardPlacement(c, a, "As", True, seat=2, zone="seat"))
    return scene, c


def test_calibration_maps_the_camera_to_the_table():
    scene, card_mm = _marker_scene(0.04)
    frame, truth = render(scene, W, H, seed=1)
    lay = calibrate(frame, 6)
    seen_mm = lay.to_table([truth["cards"][0]["center"]])[0]
    assert np.linalg.norm(seen_mm - card_mm) < 8.0  # within 8 mm on the table
    assert lay.zone_at(tuple(truth["cards"][0]["center"])) == ("seat", 2)


def test_calibration_without_markers_says_which_are_missing():
    frame, _ = render(TableScene(), W, H, seed=0)
    with pytest.raises(CalibrationError, match=r"missing \[0, 1, 2, 3\]"):
        calibrate(frame, 6)


def test_calibrate_command(tmp_path):
    scene, _ = _marker_scene(0.02)
    frame, _ = render(scene, W, H, seed=2)
    img = tmp_path / "table.png"
    cv2.imwrite(str(img), frame)
    out, check = tmp_path / "layout.toml", tmp_path / "check.png"
    r = run_cli("vision", "calibrate", str(img), "--seats", "6", "--out", str(out), "--overlay", str(check))
    assert r.returncode == 0, r.stderr
    assert load_layout(out).seats == 6
    assert cv2.imread(str(check)) is not None
    plain = tmp_path / "plain.png"
    cv2.imwrite(str(plain), render(TableScene(), W, H, seed=0)[0])
    r = run_cli("vision", "calibrate", str(plain), "--seats", "6", "--out", str(tmp_path / "x.toml"))
    assert r.returncode == 2 and "missing" in r.stderr


def test_json_pixel_form_has_the_same_zones_as_the_toml(tmp_path):
    lay = default_layout(6, W, H)
    save_layout(lay, tmp_path / "layout.json")
    back = load_layout(tmp_path / "layout.json")
    assert back.pixel_form and back.seats == 6 and back.card_width_known
    assert back.card_width_px() == pytest.approx(lay.card_width_px(), rel=0.01)
    rng = np.random.default_rng(0)
    for x, y in rng.uniform((0, 0), (W, H), (300, 2)):
        assert back.zone_at((x, y)) == lay.zone_at((x, y))
        assert back.bet_zone_at((x, y)) == lay.bet_zone_at((x, y))
    # the older TOML files, without bets or a burn spot, still load
    text = dumps_layout(lay)
    old = "\n".join(ln for ln in text.splitlines() if not ln.startswith("bet = "))
    old = old.replace("[burn]\npolygon", "# no burn\nburn_polygon")
    (tmp_path / "old.toml").write_text(old)
    plain = load_layout(tmp_path / "old.toml")
    assert plain.bets == {} and plain.burn is None and plain.seats == 6


def test_json_layout_without_card_width_leaves_the_size_to_the_detector(tmp_path):
    lay = default_layout(4, W, H)
    save_layout(lay, tmp_path / "l.json")
    data = json.loads((tmp_path / "l.json").read_text())
    del data["card_width_px"], data["bets"], data["burn"]
    (tmp_path / "l.json").write_text(json.dumps(data))
    back = load_layout(tmp_path / "l.json")
    assert not back.card_width_known and back.bets == {} and back.burn is None
    assert back.zone_at(tuple(lay.to_image([lay.seat_anchors[3]])[0])) == ("seat", 3)


def test_detect_and_calibrate_take_the_json_form(tmp_path):
    scene, _ = _marker_scene(0.02)
    frame, truth = render(scene, W, H, seed=2)
    img = tmp_path / "table.png"
    cv2.imwrite(str(img), frame)
    out = tmp_path / "layout.json"
    r = run_cli("vision", "calibrate", str(img), "--seats", "6", "--out", str(out))
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert sorted(data["seats"]) == [str(s) for s in range(1, 7)] and len(data["bets"]) == 6
    assert load_layout(out).zone_at(tuple(truth["cards"][0]["center"])) == ("seat", 2)
    r = run_cli("vision", "detect", str(img), "--layout", str(out), "--json")
    assert r.returncode == 0, r.stderr
    found = json.loads(r.stdout)["cards"]  # (the white ArUco squares are found too)
    cx, cy = truth["cards"][0]["center"]
    assert any(math.hypot(c["center"][0] - cx, c["center"][1] - cy) < 5 and c["face"] == "up" for c in found)
    (tmp_path / "bad.json").write_text('{"seats": {"1": [[0, 0], [1, 1], [2, 0]]}, "board": [], "muck": []}')
    r = run_cli("vision", "detect", str(img), "--layout", str(tmp_path / "bad.json"), "--json")
    assert r.returncode == 2 and "bad.json" in r.stderr and "'seats'" in r.stderr
