"""`smart-table vision ...` run as a user would, checked against ../shared/spec/vision-cli.md."""

from __future__ import annotations

import json
import shutil

import cv2
import numpy as np

from hil.scene import deck_dir, random_scene, render

from .conftest import H, W, run_cli, write_swapped_deck


def _frames(tmp_path, n=2):
    paths = []
    truths = []
    for i in range(n):
        frame, truth = render(random_scene(40 + i, deck="tango"), W, H, seed=i)
        p = tmp_path / f"frame_{i:04d}.png"
        cv2.imwrite(str(p), frame)
        paths.append(str(p))
        truths.append(truth)
    return paths, truths


def test_enroll_then_detect_json_lines(tmp_path):
    model = tmp_path / "venue.deck"
    r = run_cli("vision", "enroll", str(deck_dir("tango")), "--out", str(model))
    assert r.returncode == 0, r.stderr
    assert model.exists()
    assert "note:" not in r.stderr  # the built-in suit classifier knows tango's suits
    paths, truths = _frames(tmp_path)
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"\x89PNG not really")
    r = run_cli("vision", "detect", paths[0], str(bad), paths[1], "--deck", str(model), "--json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["image"] for x in lines] == [paths[0], str(bad), paths[1]]
    assert "error" in lines[1] and "broken.png" in r.stderr
    for out, truth in zip([lines[0], lines[2]], truths, strict=True):
        assert (out["width"], out["height"]) == (W, H)
        assert isinstance(out["ms"], float)
        assert len(out["cards"]) >= 0.9 * sum(1 for c in truth["cards"] if c["visible"] > 0.1)
        for c in out["cards"]:
            assert set(c) >= {"face", "code", "confidence", "center", "corners"}
            assert c["face"] in ("up", "down") and len(c["corners"]) == 4
        up_truth = {c["code"] for c in truth["cards"] if c["face"] == "up" and c["visible"] > 0.99}
        read = {c["code"] for c in out["cards"] if c["face"] == "up"}
        assert len(up_truth & read) >= 0.9 * len(up_truth)
        if truth["button"]:
            assert out["button"] is not None and set(out["button"]) >= {"center", "radius", "confidence"}


def test_enroll_says_when_the_deck_draws_its_suits_unlike_most(tmp_path):
    # the installer learns that this deck's club/spade look-alikes rest on its own pictures alone
    write_swapped_deck(tmp_path / "deck")
    r = run_cli("vision", "enroll", str(tmp_path / "deck"), "--out", str(tmp_path / "venue.deck"))
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("note:")]
    assert len(notes) == 2 and "clubs from spades" in notes[0], r.stderr
    # ... and that the built-in reader, which reads its clubs as spades, does not overrule them there
    assert "reads some of this deck's cards as another code" in notes[1] and "7c" in notes[1], r.stderr
    r = run_cli("vision", "enroll", str(deck_dir("tango")), "--out", str(tmp_path / "tango.deck"))
    assert r.returncode == 0 and "note:" not in r.stderr, r.stderr


def test_detect_overlay_is_written(tmp_path):
    paths, _ = _frames(tmp_path, 1)
    out = tmp_path / "seen.png"
    r = run_cli("vision", "detect", paths[0], "--json", "--overlay", str(out), "--seats", "6")
    assert r.returncode == 0, r.stderr
    img = cv2.imread(str(out))
    assert img is not None and img.shape[:2] == (H, W)
    assert not np.array_equal(img, cv2.imread(paths[0]))


def test_detect_budget_bounds_an_image_and_says_it_was_cut(tmp_path):
    """`--budget-ms` bounds a photograph's cost: cut short, the line says so (`truncated`) and keeps
    the contract's fields; 0 lifts the bound; a bad value names the option."""
    paths, truths = _frames(tmp_path, 1)
    cut = run_cli("vision", "detect", paths[0], "--json", "--budget-ms", "1")
    whole = run_cli("vision", "detect", paths[0], "--json", "--budget-ms", "0")
    assert cut.returncode == 0 and whole.returncode == 0, cut.stderr + whole.stderr
    cut_line, whole_line = json.loads(cut.stdout), json.loads(whole.stdout)
    assert cut_line["truncated"] is True and "truncated" not in whole_line
    assert set(cut_line) >= {"image", "width", "height", "cards", "button", "ms"}
    up = {c["code"] for c in truths[0]["cards"] if c["face"] == "up" and c["visible"] > 0.99}
    read_whole = up & {c["code"] for c in whole_line["cards"]}
    read_cut = up & {c["code"] for c in cut_line["cards"]}
    assert len(read_whole) >= 0.9 * len(up) and len(read_cut) < len(read_whole)
    bad = run_cli("vision", "detect", paths[0], "--json", "--budget-ms", "-5")
    assert bad.returncode == 2 and "--budget-ms" in bad.stderr and not bad.stdout


def test_detect_nothing_readable_exits_nonzero(tmp_path):
    r = run_cli("vision", "detect", str(tmp_path / "missing.png"), "--json")
    assert r.returncode != 0
    assert json.loads(r.stdout.splitlines()[0]) == {
        "image": str(tmp_path / "missing.png"),
        "error": "no such file",
    }


def test_detect_with_corrupt_model_exits_2(tmp_path):
    paths, _ = _frames(tmp_path, 1)
    model = tmp_path / "bad.deck"
    model.write_text("nope")
    r = run_cli("vision", "detect", paths[0], "--deck", str(model), "--json")
    assert r.returncode == 2
    assert "bad.deck" in r.stderr


def test_enroll_bad_folder_names_the_cards(tmp_path):
    for f in deck_dir("anglo_poker").glob("*.png"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "Qs.png").unlink()
    (tmp_path / "7h.png").write_text("x")
    r = run_cli("vision", "enroll", str(tmp_path), "--out", str(tmp_path / "m.deck"))
    assert r.returncode == 2
    assert "Qs" in r.stderr and "7h.png" in r.stderr
    assert not (tmp_path / "m.deck").exists()
