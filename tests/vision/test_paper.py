"""Close-up photos of one card: its print (pips, foil specks) is not taken for many tiny cards.

On such a photo the card covers most of the picture, so the felt stage takes the card for the
surface and the specks of its print for objects; the card size measured from those is a few
pixels. The cards of one deck are one size: felt-stage cards many times narrower than a verified
card-shaped paper they lie on are its print. (Photos: vision.real_photos.real_photos_dir(); skipped
where none is found.)"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.detect import Detector, _card_dims
from vision.real_photos import load_labels, real_photos_dir

SOURCE = "roboflow_blackjack_cc_by"
# label-complete close-ups of one gold-foil card, on which the foil specks came out as 14-38 cards
# 8-10 px wide (verifier trained without this source)
PHOTOS = ["20231029_204840.jpg", "20231029_220348.jpg", "20231029_220454.jpg"]


@pytest.fixture(scope="module")
def photos():
    root = real_photos_dir()
    if root is None or not (root / SOURCE / "labels.json").is_file():
        pytest.skip(f"real photographs of {SOURCE} not found")
    labels = load_labels(root / SOURCE)
    return [(cv2.imread(str(root / SOURCE / n), cv2.IMREAD_COLOR), labels[n]) for n in PHOTOS]


def test_no_tiny_cards_on_a_close_up_card(photos):
    det = Detector()
    for frame, label in photos:
        (x0, y0, x1, y1) = label["cards"][0]["box"]
        card_w = min(x1 - x0, y1 - y0)
        res = det.detect(frame)
        widths = [_card_dims(np.array(c.corners))[0] for c in res.cards]
        assert all(w > 0.25 * card_w for w in widths), widths
