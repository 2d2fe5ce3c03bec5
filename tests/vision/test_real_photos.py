"""The detector and the built-in reader on a fixed sample of real photographs. The shipped verifier
learnt from the real photos too (`vision train --real`), so each source is measured with the fold
verifier and confidence map trained without it (vision/loso/, leave-one-source-out); where that is
missing, with the shipped ones. The floors are a little below what this sample measured when they
were set (docs/vision.md); a change that loses cards on real tables fails.

Photos: `vision.real_photos.real_photos_dir()` ($SMART_TABLE_REAL_PHOTOS, ../shared/data/real_photos,
or tests/data/real_photos in the repository); skipped, saying so, where none is found. Needs the
SAMPLE files named below from each source folder, with that folder's labels.json. The index network
is switched to its fold too (vision/loso/index_net_without_<source>.onnx).
"""

from __future__ import annotations

import json

import cv2
import pytest

from vision.detect import Detector
from vision.detect_quads import WEIGHTS
from vision.index_net import use_weights as use_index_weights
from vision.read_glyph import use_weights as use_glyph_weights
from vision.real_photos import RealScore, add, load_labels, real_photos_dir, score_image

# 8 photos per source, spread evenly over the full sorted list (vision.real_photos.sample(names, 8))
SAMPLE = {
    "edje_pinochle_train": [
        "IMG_2385.jpg",
        "IMG_2508.jpg",
        "IMG_2581.jpg",
        "IMG_2612.jpg",
        "IMG_2635.jpg",
        "IMG_2665.jpg",
        "cam_image10.jpg",
        "cam_image9.jpg",
    ],
    "roboflow_blackjack_cc_by": [
        "20231029_204733.jpg",
        "20231029_220741.jpg",
        "IMG_3022.jpg",
        "IMG_3196.jpg",
        "IMG_3321.jpg",
        "IMG_5752-Small.jpg",
        "IMG_5918-Small.jpg",
        "PXL_20231031_181614858.jpg",
    ],
    "foltys_single_cards": [
        "test30.jpg",
        "test33.jpg",
        "test36.jpg",
        "test39.jpg",
        "test42.jpg",
        "test45.jpg",
        "test48.jpg",
        "test51.jpg",
    ],
}
# source: (card recall floor, built-in reading floor over the cards found)
FLOORS = {  # a margin under what this sample measured (10 s budget, busy machine, the leave-one-out folds)
    # 2026-12-06, after the index network (vision/index_net.py, its fold) read the corners first (issue 12).
    # Reading is over the cards found
    "edje_pinochle_train": (0.7, 0.6),  # 0.789 (15 of 19); read 0.733 (11 of 15; 9 before the face network
    # read the courts the paper test had called face down, 7 before the index network)
    "roboflow_blackjack_cc_by": (0.75, 0.8),  # 0.844 (27 of 32); read 0.889 (24 of 27; 20 before the
    # index was read a quarter turn round on cards a squeezed photo made look wider than long, 18 before that)
    "foltys_single_cards": (0.85, 0.65),  # 0.875 (7 of 8: test51's "card" is an 89 x 100 px mark,
    # which counted as the card found until a pip could not be the close-up's one card); read 1.000 (7 of 7)
}

# source: at most this many found face-up cards called face down (a real face hidden from the table:
# the paper test and the face network, vision/face_net.py). Measured 2026-12-06 on this sample: edje 0
# of 15, roboflow 1 of 27, foltys 1 of 8 (test51: the mark taken for its card, no longer matched); the paper
# test alone 2, 1, 0. The first face network, trained without tints and quarter turns, hid many more.
HIDDEN_CEILING = {"edje_pinochle_train": 1, "roboflow_blackjack_cc_by": 2, "foltys_single_cards": 1}


def _score(source: str) -> RealScore:
    root = real_photos_dir()
    if root is None or not (root / source / "labels.json").is_file():
        pytest.skip(
            f"real photographs of {source} not found (../shared/data/real_photos or tests/data/real_photos)"
        )
    labels = load_labels(root / source)
    names = SAMPLE[source]
    missing = [n for n in names if n not in labels or not (root / source / n).is_file()]
    if missing:
        pytest.skip(f"{root / source}: sample photos missing: {', '.join(missing)}")
    # a roomy budget: on a busy machine even CPU time stretches, and the figures must not depend on it.
    # cam_image9 takes 2.3-4.6 s of CPU here; at 3 s, under pytest here, its two cards were left unread (the budget reached)
    fold = WEIGHTS.parent / "loso"
    verifier = fold / f"quad_verifier_without_{source}.npz"
    calibration = fold / f"read_confidence_without_{source}.json"
    det = Detector(
        budget_ms=10_000,
        verifier_path=str(verifier) if verifier.is_file() else None,
        calibration=str(calibration) if calibration.is_file() else None,
    )
    glyphs = fold / f"read_glyphs_without_{source}.npz"
    use_glyph_weights(glyphs if glyphs.is_file() else None)
    index = fold / f"index_net_without_{source}.onnx"
    use_index_weights(index if index.is_file() else None)
    try:
        total = RealScore()
        for name in names:
            frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
            assert frame is not None, name
            det.card_width_hint = None
            add(total, score_image(det.detect(frame), labels[name]))
    finally:
        use_glyph_weights(None)
        use_index_weights(None)
    return total


@pytest.mark.parametrize("source", sorted(FLOORS))
def test_cards_found_and_read_on_real_photos(source):
    s = _score(source)
    recall_floor, read_floor = FLOORS[source]
    assert s.labelled > 0
    assert s.recall >= recall_floor, f"{source}: recall {s.recall:.3f} ({s.found} of {s.labelled})"
    assert s.reading_accuracy >= read_floor, (
        f"{source}: built-in reading {s.reading_accuracy:.3f} ({s.read_right} of {s.up_found})"
    )
    assert s.up_called_down <= HIDDEN_CEILING[source], (
        f"{source}: {s.up_called_down} face-up cards called face down of {s.found - s.down_found}"
    )


def test_no_chip_on_the_real_photos_is_taken_for_the_button():
    root = real_photos_dir()
    source = "roboflow_blackjack_cc_by"
    if root is None or not (root / source / "labels.json").is_file():
        pytest.skip("real photographs with chips (roboflow_blackjack_cc_by) not found")
    labels = load_labels(root / source)
    names = [n for n in sorted(labels) if labels[n].get("other_objects")]
    det = Detector(budget_ms=None)
    total = RealScore()
    for name in names:
        frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        det.card_width_hint = None
        add(total, score_image(det.detect(frame), labels[name]))
    assert total.chips > 0
    assert total.chips_as_button == 0


def test_index_crops_cut_from_real_photos_carry_the_labelled_ranks():
    """The glyph classifiers learn from the corner indices of the cards found on real photos
    (vision.train_real.glyph_samples): each crop must be labelled with its own card's rank and suit.
    A crop paired with the wrong card (a detection matched to another label, a corner of a card
    underneath) would teach the classifiers wrong; the classifiers trained without this source
    read most of these crops as labelled, which they could not if the pairing were off."""
    from vision.read_glyph import RANK_CLASSES, models
    from vision.train_real import glyph_samples

    source = "foltys_single_cards"
    root = real_photos_dir()
    if root is None or not (root / source / "labels.json").is_file():
        pytest.skip(f"real photographs of {source} not found")
    fold = WEIGHTS.parent / "loso"
    rx, ry, sx, sy = glyph_samples(
        source,
        str(fold / f"quad_verifier_without_{source}.npz"),
        views=2,
        names=SAMPLE[source],
        log=lambda *_: None,
    )
    assert len(rx) >= 8 and len(sx) >= 8  # (8 photos of one card each; both corners, 2 views)
    labelled = {
        RANK_CLASSES.index(load_labels(root / source)[n]["cards"][0]["code"][0]) for n in SAMPLE[source]
    }
    assert set(ry.tolist()) <= labelled
    glyphs = fold / f"read_glyphs_without_{source}.npz"
    use_glyph_weights(glyphs if glyphs.is_file() else None)
    try:
        m = models()
        rank_right = float((m["rank"].log_probs(rx).argmax(axis=1) == ry).mean())
        suit_right = float((m["suit"].log_probs(sx).argmax(axis=1) == sy).mean())
    finally:
        use_glyph_weights(None)
    assert rank_right >= 0.6, f"rank crops read as labelled: {rank_right:.2f}"
    assert suit_right >= 0.7, f"suit crops read as labelled: {suit_right:.2f}"


def test_a_card_under_another_is_matched_by_its_part_in_view():
    """The real photos' labels box what the annotator saw: a card half under another is labelled by
    its strip in view, while the detector reports the whole outline. Matched by the whole outline
    the pair scores one card of two; matched by the part in view (`match(visible=True)`, the bench's
    "part in view" line) both count -- and a card nothing covers is still judged by its outline."""
    from types import SimpleNamespace

    from vision.real_photos import match, visible_boxes

    def card(x0, y0, x1, y1, occluded=False):
        return SimpleNamespace(corners=[[x0, y0], [x1, y0], [x1, y1], [x0, y1]], occluded=occluded, face="up")

    top = card(130, 100, 230, 240)
    under = card(100, 100, 200, 240, occluded=True)  # all but its left 30 px lies under `top`
    labels = [{"box": [130, 100, 230, 240]}, {"box": [100, 100, 130, 240]}]  # the strip in view
    boxes = visible_boxes([top, under])
    assert boxes[0] == (130.0, 100.0, 230.0, 240.0)
    assert abs(boxes[1][2] - 130) <= 2 and boxes[1][0] == 100.0
    assert sorted(match([top, under], labels)) == [(0, 0)]
    assert sorted(match([top, under], labels, visible=True)) == [(0, 0), (1, 1)]
    elsewhere = [{"box": [400, 100, 450, 240]}]  # a label far from both: no match either way
    assert match([top, under], elsewhere, visible=True) == []


def test_a_card_reaching_beyond_the_picture_is_matched_by_its_part_in_the_picture():
    """A card cut by the photo's edge is labelled by the box of its part in the photo; the detector
    reports its whole outline, reaching beyond the edge (a card two thirds out of view has a box
    IoU of 0.33 with its label). Given the picture's size, `match` compares the part in the
    picture; a card whose part in the picture is not the label's still does not match."""
    from types import SimpleNamespace

    from vision.real_photos import match

    cut = SimpleNamespace(corners=[[540, 100], [840, 100], [840, 240], [540, 240]], occluded=False, face="up")
    label = [{"box": [540, 100, 640, 240]}]  # the photo is 640 wide: a third of the card is in it
    assert match([cut], label) == []
    assert match([cut], label, picture=(640, 480)) == [(0, 0)]
    assert match([cut], label, visible=True, picture=(640, 480)) == [(0, 0)]
    assert match([cut], [{"box": [440, 100, 540, 240]}], picture=(640, 480)) == []


def test_a_pip_is_not_the_card_of_a_close_up_without_boxes():
    """foltys_single_cards labels one card per close-up, without a box: a detection the size of a
    pip on it (test46: 33 x 46 px of 1200 x 1600, the card itself missed) is not that card found."""
    from types import SimpleNamespace

    from vision.real_photos import match

    def card(x0, y0, x1, y1, face="up"):
        return SimpleNamespace(corners=[[x0, y0], [x1, y0], [x1, y1], [x0, y1]], occluded=False, face=face)

    one = [{"code": "5c"}]
    pip = card(454, 522, 487, 568)
    whole = card(310, 400, 910, 1290)
    assert match([pip], one, image_size=(1200, 1600)) == []
    assert match([pip, whole], one, image_size=(1200, 1600)) == [(1, 0)]
    assert match([pip], one) == [(0, 0)]  # no size known: the one detection, as before
    label = {"cards": one, "labels_complete": True, "size": [1200, 1600]}
    scored = score_image(SimpleNamespace(cards=[pip], button=None, ms=1.0), label)
    assert (scored.found, scored.false_checked) == (0, 1)


def test_the_label_errata_correct_only_the_codes_they_name(tmp_path):
    """A code a photo plainly contradicts is scored as the card shown (vision.real_photos
    .LABEL_ERRATA); every other label, and the labels as published, stay as they are."""
    from vision.real_photos import LABEL_ERRATA

    source = tmp_path / "roboflow_blackjack_cc_by"
    source.mkdir()
    published = {
        "IMG_3373.jpg": {"cards": [{"code": "5h"}] * 14 + [{"code": "4c"}, {"code": "4c"}]},
        "IMG_3022.jpg": {"cards": [{"code": "8s"}]},  # a copy already put right: left alone
    }
    (source / "labels.json").write_text(json.dumps(published))
    labels = load_labels(source)
    assert [c["code"] for c in labels["IMG_3373.jpg"]["cards"][13:]] == ["5h", "4c", "Th"]
    assert labels["IMG_3022.jpg"]["cards"][0]["code"] == "8s"
    assert load_labels(source, errata=False)["IMG_3373.jpg"]["cards"][15]["code"] == "4c"
    assert LABEL_ERRATA["roboflow_blackjack_cc_by"][("IMG_3373.jpg", 15)] == ("4c", "Th")
