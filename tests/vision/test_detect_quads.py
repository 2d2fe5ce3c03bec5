"""The proposer of `vision.detect_quads` on cards a tilted phone camera sees as trapezoids.

Why: a card photographed at a slant fills its min-area rectangle only ~0.85, below the rectangle
tests meant for chips and scraps; on the Edje phone photos such cards were not proposed at all and
so never found, on a plain black cloth too. These pictures are built from a GPL deck's card image
warped to a known quadrilateral, so the truth is exact.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from controller.datapaths import deck_dir
from vision import detect_quads as dq


def _card_image() -> tuple[np.ndarray, np.ndarray]:
    """The card's colours and its alpha (the rounded corners are transparent)."""
    img = cv2.imread(str(deck_dir("tango") / "9s.png"), cv2.IMREAD_UNCHANGED)
    assert img is not None and img.shape[2] == 4, "the tango deck ships with the repository"
    return img[:, :, :3], img[:, :, 3]


def _scene(quad: np.ndarray, background: int = 25, size=(640, 480)) -> np.ndarray:
    """A card warped onto `quad` (corners clockwise from top-left) on a plain dark cloth."""
    card, alpha = _card_image()
    h, w = card.shape[:2]
    src = np.float32([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]])
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    frame = np.full((size[1], size[0], 3), background, np.uint8)
    mask = cv2.warpPerspective(alpha, m, size)
    warped = cv2.warpPerspective(card, m, size)
    frame[mask > 127] = warped[mask > 127]
    return frame


def _best_match(props, quad: np.ndarray) -> float:
    """Worst corner error (px) of the proposal closest to `quad`, whatever its corner order."""
    best = np.inf
    for q, _fill, _cue in props:
        for k in range(4):
            err = np.linalg.norm(np.roll(q, k, axis=0) - quad, axis=1).max()
            best = min(best, err)
    return best


@pytest.mark.parametrize(
    "quad",
    [
        # top side 0.78 of the bottom: the camera tilted towards the far edge of the table
        np.float32([[262, 120], [378, 120], [410, 300], [230, 300]]),
        # the same trapezoid turned by about 35 degrees
        np.float32([[300, 90], [395, 150], [310, 310], [170, 215]]),
    ],
)
def test_a_card_seen_at_a_slant_is_proposed_with_its_own_corners(quad):
    frame = _scene(quad)
    cnt = quad.reshape(-1, 1, 2)
    (_, _), (rw, rh), _ = cv2.minAreaRect(cnt)
    assert cv2.contourArea(cnt) / (rw * rh) < dq.MIN_HULL_FILL, "the test card must be a real trapezoid"
    work, scale = dq.work_picture(frame)
    props, truncated = dq.propose(work)
    assert not truncated
    # rounded corners cut inside the true ones; the fitted sides meet where the card's would
    assert _best_match(props, quad * scale) < 6.0


def test_a_wedge_is_no_card_proposal():
    """Opposite sides 1:3 is no card under any camera a table would have."""
    frame = np.full((480, 640, 3), 25, np.uint8)
    wedge = np.int32([[280, 100], [330, 100], [420, 360], [190, 360]])
    cv2.fillConvexPoly(frame, wedge, (235, 235, 235))
    work, scale = dq.work_picture(frame)
    props, _ = dq.propose(work)
    assert _best_match(props, wedge.astype(np.float32) * scale) > 20.0


def test_a_slanted_card_is_found_by_the_detector():
    from vision.detect import Detector

    quad = np.float32([[262, 120], [378, 120], [410, 300], [230, 300]])
    result = Detector().detect(_scene(quad))
    ups = [c for c in result.cards if c.face == "up"]
    assert len(ups) == 1, [c.corners for c in result.cards]
    got = np.asarray(ups[0].corners, np.float32)
    err = min(np.linalg.norm(np.roll(got, k, axis=0) - quad, axis=1).max() for k in range(4))
    assert err < 10.0


def test_a_tracked_tables_proposals_where_it_changed_are_those_of_the_whole_picture():
    """A tracked table looks for outlines only in a window round what changed (a card dealt):
    the proposals reaching into the change are the whole picture's, and the window is a small part
    of the picture (the time a dealt card costs; issue 12: the flash-to-LED p99). The felt round
    the change, cut off by the window's edge, is no card."""
    quad = np.float32([[700, 300], [790, 300], [790, 426], [700, 426]])
    frame = _scene(quad, size=(1280, 720))
    cv2.rectangle(frame, (100, 100), (190, 226), (235, 235, 235), -1)  # a card already there
    work, scale = dq.work_picture(frame)
    q = quad * scale
    region = (
        int(q[:, 0].min()) - 10,
        int(q[:, 1].min()) - 10,
        int(q[:, 0].max()) + 10,
        int(q[:, 1].max()) + 10,
    )
    window = dq.search_window(work.shape, region)
    assert window is not None
    assert (window[2] - window[0]) * (window[3] - window[1]) < 0.25 * work.shape[0] * work.shape[1]
    whole, _ = dq.propose(work)
    near = [p for p in whole if dq._quad_meets(p[0], region)]
    windowed, _ = dq.propose(work, region=region)
    # the same outlines, each within a few pixels (LSD ranks its segments over the picture it sees)
    assert near and len(windowed) == len(near)
    for p, _fill, _cue in near:
        assert _best_match(windowed, p) < 6.0
    assert _best_match(windowed, q) < 6.0
    assert _best_match(windowed, np.float32([[100, 100], [190, 100], [190, 226], [100, 226]]) * scale) > 100


def test_a_card_on_a_pale_counter_is_found_by_its_edge_not_by_the_frame_printed_on_it():
    """Many decks print a frame round the pips. On a pale counter, where the card's own edge is
    faint, the verifier was surer of that crisp inner rectangle than of the card, and the card was
    reported as three pieces of its face (roboflow IMG_5918-Small, the real photo the repository
    carries: an 8c on a grey counter). The card round a printed frame, with paper between, stands."""
    from pathlib import Path

    from vision.detect import Detector
    from vision.real_photos import _box_of, iou, load_labels

    folder = Path(__file__).resolve().parents[2] / "data" / "real_photos" / "roboflow_blackjack_cc_by"
    label = load_labels(folder)["IMG_5918-Small.jpg"]["cards"][0]
    frame = cv2.imread(str(folder / "IMG_5918-Small.jpg"))
    cards = Detector().detect(frame).cards
    assert len(cards) == 1, [c.code for c in cards]
    assert iou(_box_of(cards[0]), label["box"]) >= 0.7
    assert cards[0].code == label["code"] == "8c"


def test_a_card_with_a_shadow_across_it_is_found_whole_not_as_a_patch_of_its_paper():
    """foltys test51 (the real photo the repository carries): a 7d on a pale table, a phone's shadow
    across its lower half. The verifier was surer (0.92) of a patch of the card's paper between the
    shadow's edge and two pips than of the card (0.72), so the card was dropped for it and the felt
    stage then took its seven pips for face-down cards. A mark inside a card, no lighter than the
    paper round it, is print: the card stands, and its pips are no cards."""
    from pathlib import Path

    from vision.detect import Detector

    folder = Path(__file__).resolve().parents[2] / "data" / "real_photos" / "foltys_single_cards"
    cards = Detector().detect(cv2.imread(str(folder / "test51.jpg"))).cards
    assert len(cards) == 1, [(c.face, c.code) for c in cards]
    from vision.polygons import area

    assert area(np.float32(cards[0].corners)) > 0.1 * 1200 * 1600  # the card (19 % of it), not a pip
    assert cards[0].face == "up"


def test_a_pip_is_print_but_a_card_on_a_sheet_or_in_a_box_is_not():
    """What the printed-mark rule must tell apart: a red pip on a card's white paper (print), and a
    small white card inside a card-shaped outline of something darker (a printed box on the felt, a
    tray): lighter than round it, a card of its own."""
    outer = np.float32([[100, 100], [400, 100], [400, 520], [100, 520]])
    pip = np.float32([[230, 280], [270, 280], [270, 330], [230, 330]])
    assert dq.printed_mark_of(pip, outer)
    card_on_white = np.full((640, 640, 3), 60, np.uint8)
    cv2.fillConvexPoly(card_on_white, np.int32(outer), (230, 230, 230))
    cv2.fillConvexPoly(card_on_white, np.int32(pip), (40, 40, 200))
    assert not dq.lighter_than_round(card_on_white, pip, outer)  # ink on paper
    small_card = np.float32([[220, 270], [280, 270], [280, 354], [220, 354]])
    felt_box = np.full((640, 640, 3), 60, np.uint8)
    cv2.rectangle(felt_box, (100, 100), (400, 520), (200, 200, 200), 2)
    cv2.fillConvexPoly(felt_box, np.int32(small_card), (230, 230, 230))
    assert dq.printed_mark_of(small_card, outer)  # the size alone would take it for print...
    assert dq.lighter_than_round(felt_box, small_card, outer)  # ... but it is paper on the felt
    assert not dq.printed_mark_of(small_card, np.float32([[200, 250], [300, 250], [300, 380], [200, 380]]))


def test_neither_the_top_card_of_a_pair_nor_a_card_on_a_counter_is_a_printed_frame():
    """What the printed-frame rule must not take for a card's print: the top card of an
    overlapping pair inside the pair's joint outline (it lies along its sides), and a card inside
    a card-shaped patch of speckled stone (no paper between)."""
    card = np.float32([[300, 200], [390, 200], [390, 326], [300, 326]])
    pair = np.float32([[300, 200], [430, 200], [430, 346], [300, 346]])
    assert not dq.printed_frame_of(card, pair)
    frame_on_card = np.float32([[318, 222], [372, 222], [372, 304], [318, 304]])
    assert dq.printed_frame_of(frame_on_card, card)
    rng = np.random.default_rng(3)
    stone = rng.integers(90, 200, (480, 640, 1), dtype=np.uint8).repeat(3, axis=2)
    cv2.fillConvexPoly(stone, np.int32(card), (235, 235, 235))
    patch = np.float32([[270, 170], [420, 170], [420, 356], [270, 356]])
    assert dq.printed_frame_of(card, patch)  # the shape alone would take it...
    assert not dq.paper_between(stone, card, patch)  # ... the stone round it is no card's margin
    printed = stone.copy()
    cv2.rectangle(printed, (318, 222), (372, 304), (40, 40, 40), 1)
    assert dq.paper_between(printed, frame_on_card, card)
