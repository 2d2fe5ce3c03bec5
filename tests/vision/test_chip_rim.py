"""vision.chip_rim: a chip's rim insert is no card, a card is never a chip's insert."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from hil.scene import random_scene, render
from vision.chip_rim import in_a_chip_rim
from vision.real_photos import load_labels, real_photos_dir


def _labelled_outlines(source: str):
    """(photo, four corners) of every labelled card of the repository's sample of a source."""
    root = real_photos_dir()
    if root is None or not (root / source / "labels.json").is_file():
        pytest.skip(f"real photographs of {source} not found")
    labels = load_labels(root / source)
    for name, lab in sorted(labels.items()):
        frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
        if frame is None:
            continue
        for card in lab["cards"]:
            outline = card.get("polygon") or [
                [card["box"][0], card["box"][1]],
                [card["box"][2], card["box"][1]],
                [card["box"][2], card["box"][3]],
                [card["box"][0], card["box"][3]],
            ]
            corners = cv2.boxPoints(cv2.minAreaRect(np.asarray(outline, np.float32)))
            yield name, frame, corners


@pytest.mark.parametrize("source", ["edje_pinochle_train", "roboflow_blackjack_cc_by"])
def test_no_labelled_card_of_a_real_photo_is_taken_for_a_chip_s_insert(source):
    # cards on wood, carpet, a drum pad (edje IMG_2456: a card on a round pad of one colour, the pad
    # 4.5 times its area), among chips (roboflow), gold foil
    outlines = list(_labelled_outlines(source))
    assert len(outlines) >= 40
    taken = [name for name, frame, corners in outlines if in_a_chip_rim(frame, corners)]
    assert taken == []


def test_no_rendered_card_is_taken_for_a_chip_s_insert():
    # rendered tables with chips and the button among the cards (a development range of seeds)
    checked = 0
    for seed in range(7100, 7104):
        frame, truth = render(random_scene(seed, deck="tango"), 1280, 720, seed)
        for card in truth["cards"]:
            if card["visible"] > 0.5:
                checked += 1
                assert not in_a_chip_rim(frame, np.asarray(card["corners"], np.float32)), (seed, card["code"])
    assert checked >= 20


def test_a_pale_block_set_into_a_drawn_chip_s_rim_is_one_and_a_card_beside_the_chip_is_not():
    # a blue chip 80 px across on a brown table, six white inserts 22 x 12 px reaching its edge (a
    # real chip is 3-4.5 inserts across); a card (60 x 84 px: bigger than a chip) with a corner over it
    frame = np.full((480, 640, 3), (60, 90, 130), np.uint8)
    centre = (300, 240)
    cv2.circle(frame, centre, 40, (200, 80, 20), -1)
    inserts = []
    for k in range(6):
        a = k * np.pi / 3
        box = cv2.boxPoints(
            ((centre[0] + 30 * np.cos(a), centre[1] + 30 * np.sin(a)), (22, 12), np.degrees(a))
        )
        cv2.fillConvexPoly(frame, np.round(box).astype(np.int32), (235, 235, 235))
        inserts.append(box)
    card = np.float32([[335, 150], [395, 150], [395, 234], [335, 234]])
    cv2.fillConvexPoly(frame, card.astype(np.int32), (245, 245, 245))
    assert all(in_a_chip_rim(frame, box) for box in inserts)
    assert not in_a_chip_rim(frame, card)


def test_the_detector_looks_for_chips_only_round_unread_cards_off_the_table(monkeypatch):
    # a dealt table's face-down cards lie among the felt and other cards: no chip test for them (it
    # costs about a millisecond a card); a chip's insert on a desk is looked at, and dropped
    import vision.detect as detect

    looked = []
    real = detect.in_a_chip_rim
    monkeypatch.setattr(
        detect, "in_a_chip_rim", lambda frame, corners: looked.append(1) or real(frame, corners)
    )
    det = detect.Detector()
    frame, _truth = render(random_scene(7100, deck="tango"), 1920, 1080, 7100)
    res = det.detect(frame)
    assert sum(c.face == "down" for c in res.cards) >= 2
    assert looked == []
    root = real_photos_dir()
    name = "PXL_20231031_181614858.jpg"  # a black chip on green felt, an insert taken for a card before
    if root is None or not (root / "roboflow_blackjack_cc_by" / name).is_file():
        pytest.skip(f"real photograph {name} not found")
    res = det.detect(cv2.imread(str(root / "roboflow_blackjack_cc_by" / name), cv2.IMREAD_COLOR))
    assert looked and res.cards == []
