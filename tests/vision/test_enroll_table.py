"""Enrolling a venue's deck from the table's own camera: the deck laid out face up in rows."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from controller.rules.cards import ALL_CODES
from hil.scene import laid_out_deck, random_scene, render
from vision.detect import Detector
from vision.enroll_table import enrol_from_photos, parse_order, rows_order, write_cards
from vision.evaluate import Score, score_frame
from vision.read import enroll_deck, load_model

from .conftest import run_cli


@pytest.fixture(scope="module")
def drawn_layout():
    """The held-out drawn deck laid in four rows, one suit a row (spades, hearts, diamonds, clubs)."""
    frame, truth = render(laid_out_deck("drawn", rows_order("shdc"), "green", seed=3), 1920, 1080, seed=3)
    return frame, truth


def _code_at(truth: dict, center) -> str:
    return min(truth["cards"], key=lambda t: np.hypot(*np.subtract(t["center"], center)))["code"]


def test_rows_name_every_card_and_the_model_made_reads_the_deck_in_play(drawn_layout, tmp_path):
    """--rows: each card gets its code from where it lies; the deck enrolled from the camera's own
    picture reads the deck at play as well as one enrolled from its card images (mid-hand tables
    the enrolment never saw)."""
    frame, truth = drawn_layout
    got = enrol_from_photos([frame], rows_order("shdc"))
    assert got.problems == [] and got.complete
    assert sorted(c for c in got.cards if c != "back") == sorted(ALL_CODES)
    for card in got.found:  # each picture is of the card its place names
        assert _code_at(truth, card.center) == rows_order("shdc")[card.row * 13 + card.place]
    write_cards(got, tmp_path / "cards")
    model, _ = enroll_deck(tmp_path / "cards")
    model.save(tmp_path / "table.deck")
    det = Detector(str(tmp_path / "table.deck"))
    s = Score()
    for seed in (7101, 7102, 7103):
        scene, scene_truth = render(random_scene(seed, deck="drawn"), 1920, 1080, seed)
        s.add(score_frame(det.detect(scene), scene_truth))
    assert s.up_index_seen >= 10
    assert s.read_right_index_seen >= s.up_index_seen - 1


def test_the_builtin_reader_names_a_standard_deck_laid_in_any_order(drawn_layout):
    """No order given: the built-in reader names each card, and every name is the card's."""
    frame, truth = drawn_layout
    got = enrol_from_photos([frame])
    assert got.complete, got.problems
    for card in got.found:
        assert card.code == _code_at(truth, card.center)


def test_a_card_short_or_a_card_in_the_wrong_place_is_named_and_no_deck_is_made(tmp_path):
    """51 cards for an order of 52: a problem, and the deck is not complete. Two cards swapped: the
    built-in reader, sure of each, says which places to check."""
    codes = rows_order("shdc")
    short = [c for c in codes if c != "7h"]
    frame, _ = render(laid_out_deck("drawn", short, "blue", seed=4), 1920, 1080, seed=4)
    got = enrol_from_photos([frame], codes)
    assert not got.complete
    assert any("found 51 cards face up, the order names 52" in p for p in got.problems)
    swapped = list(codes)
    i, j = swapped.index("4d"), swapped.index("9c")
    swapped[i], swapped[j] = swapped[j], swapped[i]
    frame, _ = render(laid_out_deck("drawn", swapped, "blue", seed=5), 1920, 1080, seed=5)
    got = enrol_from_photos([frame], codes)
    notes = " | ".join(got.warnings)
    assert "row 3 card 4: the order says 4d, the built-in reader is sure it is 9c" in notes
    assert "row 4 card 9: the order says 9c, the built-in reader is sure it is 4d" in notes


def test_a_code_read_twice_is_a_problem_for_both_places():
    """Two cards the reader is sure are the same: one of them is misread or another deck's, and
    neither picture is taken."""
    codes = rows_order("shdc")
    twice = ["As" if c == "Ks" else c for c in codes]
    frame, _ = render(laid_out_deck("drawn", twice, "grey", seed=6), 1920, 1080, seed=6)
    got = enrol_from_photos([frame])
    assert "As read twice: photo 1 row 1 card 1, photo 1 row 1 card 13" in got.problems
    assert "As" not in got.cards and not got.complete
    assert any(p.startswith("missing: ") and "As" in p and "Ks" in p for p in got.problems)


def test_orders_are_read_strictly_and_name_what_is_wrong():
    assert rows_order("SHDC")[:2] == ["As", "2s"] and rows_order("shdc")[-1] == "Kc"
    with pytest.raises(ValueError, match="each of the four suits"):
        rows_order("shd")
    assert parse_order("As, 10h Td") == ["As", "Th", "Td"]
    with pytest.raises(ValueError, match="'1s' is not a card code"):
        parse_order("As 1s")
    with pytest.raises(ValueError, match="named twice: As"):
        parse_order("As Kd As")


def _cli(*args: str):
    return run_cli("vision", "enroll-table", *args)


def test_enroll_table_command_writes_the_cards_and_a_model_or_says_what_is_wrong(drawn_layout, tmp_path):
    frame, _ = drawn_layout
    photo = tmp_path / "deck.png"
    cv2.imwrite(str(photo), frame)
    out, cards = tmp_path / "venue.deck", tmp_path / "cards"
    overlay = tmp_path / "check.png"
    r = _cli(
        str(photo), "--rows", "shdc", "--cards", str(cards), "--out", str(out), "--overlay", str(overlay)
    )
    assert r.returncode == 0, r.stderr
    assert "enrolled 52 cards" in r.stderr
    drawn = cv2.imread(str(overlay))  # every card outlined in green, none orange ('?': no code)
    assert drawn.shape == frame.shape
    green = (drawn[:, :, 1] > 200) & (drawn[:, :, 0] < 30) & (drawn[:, :, 2] < 30)
    orange = (drawn[:, :, 2] > 230) & (np.abs(drawn[:, :, 1].astype(int) - 140) < 20) & (drawn[:, :, 0] < 30)
    assert green.sum() > 52 * 200 and orange.sum() == 0
    assert {p.stem for p in cards.glob("*.png")} >= set(ALL_CODES)
    model = load_model(out)
    assert model.codes == list(ALL_CODES)
    # the installer is told of the codes the built-in reader misreads on this deck's own pictures
    # exactly when there are some, as `vision enroll` tells them
    told = [ln for ln in r.stderr.splitlines() if "reads some of this deck's cards as another code" in ln]
    assert len(told) == (1 if model.builtin_misreads else 0), r.stderr
    assert all(code in told[0] for code in model.builtin_misreads)
    # a wrong suit list, a photo that is not one: named, nothing written
    r = _cli(str(photo), "--rows", "shd", "--cards", str(tmp_path / "c2"), "--out", str(tmp_path / "m2"))
    assert r.returncode == 2 and "each of the four suits" in r.stderr
    bad = tmp_path / "notes.png"
    bad.write_text("not a picture")
    r = _cli(str(bad), "--cards", str(tmp_path / "c3"), "--out", str(tmp_path / "m3"))
    assert r.returncode == 2 and "notes.png" in r.stderr
    assert not (tmp_path / "m2").exists() and not (tmp_path / "m3").exists()
    # an order one card short: the cards are written to be looked at, no model
    r = _cli(
        str(photo),
        "--order",
        " ".join(rows_order("shdc")[:51]),
        "--cards",
        str(tmp_path / "c4"),
        "--out",
        str(tmp_path / "m4"),
        "--overlay",
        str(tmp_path / "short.png"),
    )
    assert r.returncode == 1
    assert "found 52 cards face up, the order names 51" in r.stderr and "no model written" in r.stderr
    assert not (tmp_path / "m4").exists()
    assert len(list((tmp_path / "c4").glob("unread-1-*.png"))) == 52
    drawn = cv2.imread(str(tmp_path / "short.png"))  # no card placed: every outline orange
    orange = (drawn[:, :, 2] > 230) & (np.abs(drawn[:, :, 1].astype(int) - 140) < 20) & (drawn[:, :, 0] < 30)
    assert orange.sum() > 52 * 200


def test_a_deck_laid_out_in_two_photos_is_read_in_turn():
    """A camera that sees less of the table: half the deck a photo, rows continuing across them."""
    codes = rows_order("cdhs")
    photos = [
        render(laid_out_deck("drawn", half, "teal", seed=7 + k), 1920, 1080, seed=7 + k)[0]
        for k, half in enumerate((codes[:26], codes[26:]))
    ]
    got = enrol_from_photos(photos, codes)
    assert got.complete, got.problems
    assert [c.photo for c in got.found].count(1) == 26
    first_of_second = next(c for c in got.found if c.photo == 1 and c.row == 0 and c.place == 0)
    assert first_of_second.code == "Ah"  # the built-in reader agrees with the place: hearts start photo 2


def test_enroll_table_takes_its_still_from_a_camera(drawn_layout, tmp_path):
    """The still taken by the camera the service will read (here a recorded one: a video of the
    laid-out deck), after its first frames let the exposure settle; a camera that cannot open is
    named and nothing is written."""
    frame, _ = drawn_layout
    video = tmp_path / "table.mp4"
    writer = cv2.VideoWriter(
        str(video), cv2.VideoWriter_fourcc(*"mp4v"), 10, (frame.shape[1], frame.shape[0])
    )
    assert writer.isOpened()
    for _ in range(14):
        writer.write(frame)
    writer.release()
    r = _cli(
        f"video:{video}?fast",
        "--rows",
        "shdc",
        "--cards",
        str(tmp_path / "cards"),
        "--out",
        str(tmp_path / "v.deck"),
    )
    assert r.returncode == 0, r.stderr
    assert load_model(tmp_path / "v.deck").codes == list(ALL_CODES)
    r = _cli(
        "v4l2:/dev/video97", "--rows", "shdc", "--cards", str(tmp_path / "c2"), "--out", str(tmp_path / "m2")
    )
    assert r.returncode == 2 and "/dev/video97" in r.stderr
    # a device path names a camera, though it exists (a Pi's /dev/video0): opened, not read as a picture
    r = _cli("/dev/null", "--rows", "shdc", "--cards", str(tmp_path / "c3"), "--out", str(tmp_path / "m3"))
    assert r.returncode == 2 and "/dev/null: cannot open" in r.stderr
    assert not (tmp_path / "m2").exists() and not (tmp_path / "c2").exists()
