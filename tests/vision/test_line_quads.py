"""Card proposals from straight sides (`vision.line_quads`), where no outline closes.

Why: on real photos a shadow across a card splits its outline in two, and a white card on pale paper
has no region of its own; the Edje photos had 47 cards clear of any other that no outline cue
proposed. Built from a GPL deck's card image warped to a known quadrilateral, so the truth is exact.
"""

from __future__ import annotations

import threading

import cv2
import numpy as np

from vision import detect_quads as dq
from vision.line_quads import _joined, line_quads

from .test_detect_quads import _best_match, _card_image


def _shadowed_card_on_wood(quad: np.ndarray, size=(640, 480)) -> np.ndarray:
    """A card on a grained, lit-from-one-side brown surface, an arm's shadow across card and surface."""
    rng = np.random.default_rng(4)
    w, h = size
    grain = cv2.resize(rng.normal(0, 14, (h // 8, 4)).astype(np.float32), (w, h))
    light = np.linspace(0.75, 1.1, w, dtype=np.float32)[None, :]
    base = np.stack([90 + grain, 140 + grain, 190 + grain], axis=2) * light[..., None]
    frame = np.clip(base, 0, 255).astype(np.uint8)
    card, alpha = _card_image()
    ch, cw = card.shape[:2]
    m = cv2.getPerspectiveTransform(np.float32([[0, 0], [cw - 1, 0], [cw - 1, ch - 1], [0, ch - 1]]), quad)
    mask = cv2.warpPerspective(alpha, m, size) > 127
    frame[mask] = cv2.warpPerspective(card, m, size)[mask]
    shadow = np.zeros((h, w), np.uint8)
    cv2.fillPoly(shadow, [np.int32([[0, 250], [w, 150], [w, h], [0, h]])], 1)
    shadow = cv2.GaussianBlur(shadow.astype(np.float32), (31, 31), 0)
    return np.clip(frame * (1 - 0.55 * shadow[..., None]), 0, 255).astype(np.uint8)


QUAD = np.float32([[250, 90], [390, 110], [365, 305], [225, 285]])


def test_a_card_the_shadow_cuts_in_two_is_proposed_from_its_sides():
    frame = _shadowed_card_on_wood(QUAD)
    quads = line_quads(frame, dq.ASPECT, dq.MIN_SHORT)
    assert quads, "no pair of sides proposed"
    assert _best_match([(dq.order_corners(q), s, c) for q, s, c in quads], QUAD) < 6
    # and through the proposer, among the outline cues' proposals
    props, _ = dq.propose(frame)
    assert _best_match(props, QUAD) < 6


def test_pieces_of_one_side_are_joined_and_parallel_sides_are_not():
    pieces = np.float64([[10, 10, 60, 11], [66, 11.1, 120, 12], [10, 40, 120, 41]])
    joined = _joined(pieces)
    assert len(joined) == 2
    lengths = sorted(np.hypot(joined[:, 2] - joined[:, 0], joined[:, 3] - joined[:, 1]))
    assert lengths[0] > 105 and lengths[1] > 105  # 10..120 both: the gap of 6 px closed


def test_two_long_lines_close_together_are_no_card():
    frame = np.full((480, 640, 3), 60, np.uint8)
    cv2.line(frame, (40, 100), (600, 100), (230, 230, 230), 3)  # a table's edge and a ruler
    cv2.line(frame, (40, 130), (600, 130), (230, 230, 230), 3)
    # 30 px apart over 560 px: a strip 0.05 wide to 1 long is no card, whatever the squeeze
    assert line_quads(frame, dq.ASPECT, dq.MIN_SHORT) == []


def test_detector_threads_looking_at_once_get_what_one_alone_gets():
    # the service runs a detector per camera in worker threads; one LSD object shared by them
    # crashed the process (a segmentation fault in OpenCV), so each picture gets its own
    frame = _shadowed_card_on_wood(QUAD)
    want = [q.tolist() for q, _s, _c in line_quads(frame, dq.ASPECT, dq.MIN_SHORT)]
    differ = []

    def look():
        for _ in range(60):
            got = [q.tolist() for q, _s, _c in line_quads(frame, dq.ASPECT, dq.MIN_SHORT)]
            differ.append(got != want)

    threads = [threading.Thread(target=look) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(differ) == 240 and not any(differ)


def test_a_card_a_shadow_leaves_only_two_sides_of_is_proposed_from_its_corner():
    """foltys test46 (the real photo the repository carries): a 5c on a pale table, a hand's shadow
    over its lower half, in which the card's left side is as grey as the table's: no outline closes
    and no pair of opposite sides is whole. Its right side and its bottom still meet at a corner,
    and the card is found there -- one card, face up -- where nothing was found before."""
    from pathlib import Path

    from vision.detect import Detector
    from vision.polygons import area

    folder = Path(__file__).resolve().parents[2] / "data" / "real_photos" / "foltys_single_cards"
    frame = cv2.imread(str(folder / "test46.jpg"))
    work, _scale = dq.work_picture(frame)
    corners = [q for q, _s, cue in line_quads(work, dq.ASPECT, dq.MIN_SHORT) if cue == "corner"]
    assert corners, "no corner proposed"
    cards = Detector().detect(frame).cards
    assert len(cards) == 1 and cards[0].face == "up", [(c.face, c.code) for c in cards]
    assert area(np.float32(cards[0].corners)) > 0.1 * 1200 * 1600  # the card (18 % of the photo)


def test_the_sides_of_a_card_found_whole_make_no_corner_proposals():
    """Two sides meeting at a corner propose a card only where no opposite side explains them: the
    sides of a card found by its pairs, and the frame printed round a court's picture, meet at
    corners that would cut it into pieces (roboflow's gold-foil photos, four false cards each)."""
    frame = np.full((480, 640, 3), 50, np.uint8)
    cv2.fillConvexPoly(frame, np.int32([[200, 100], [350, 100], [350, 310], [200, 310]]), (230, 230, 230))
    cv2.rectangle(frame, (225, 135), (325, 275), (40, 40, 40), 2)  # a court's frame
    cues = [cue for _q, _s, cue in line_quads(frame, dq.ASPECT, dq.MIN_SHORT)]
    assert "lines" in cues and "corner" not in cues
