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
    assert _best_match([(dq.order_corners(q), s, "lines") for q, s in quads], QUAD) < 6
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
    want = [q.tolist() for q, _ in line_quads(frame, dq.ASPECT, dq.MIN_SHORT)]
    differ = []

    def look():
        for _ in range(60):
            got = [q.tolist() for q, _ in line_quads(frame, dq.ASPECT, dq.MIN_SHORT)]
            differ.append(got != want)

    threads = [threading.Thread(target=look) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(differ) == 240 and not any(differ)
