"""Detection on rendered frames: every card, face up or down, the lower hole card, chips vs button."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import pytest

from hil.scene import (
    FELTS,
    CardPlacement,
    Chip,
    DealerButton,
    TableScene,
    board_card_pose,
    button_pose,
    chip_pose,
    random_scene,
    render,
    seat_card_pose,
)
from vision.detect import Detector
from vision.evaluate import Score, _outline_error, score_frame
from vision.layout import CARD_SIZE_MM
from vision.real_photos import match

from .conftest import H, W


def _pair(scene: TableScene, seat: int, codes=("As", "Kd"), up=(False, False)) -> None:
    for i, code in enumerate(codes):
        c, a = seat_card_pose(scene.seats, seat, i)
        scene.cards.append(CardPlacement(c, a, code, face_up=up[i], seat=seat, zone="seat"))


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


def test_random_tables_every_card_found(detector):
    total = Score()
    for seed, deck in [(11, "anglo_poker"), (12, "tango"), (13, "anglo_poker"), (14, "tango")]:
        frame, truth = render(random_scene(seed, deck=deck), W, H, seed)
        total.add(score_frame(detector.detect(frame), truth))
    assert total.true_cards > 30
    assert total.recall >= 0.95, total.mistakes
    assert total.precision >= 0.95, total.mistakes
    assert total.face_accuracy >= 0.95, total.mistakes
    assert total.chips_as_button == 0


@pytest.mark.parametrize("felt", ["green", "blue", "red", "grey", "black"])
def test_overlapping_pair_is_two_cards_on_any_felt(detector, felt):
    scene = TableScene(seats=6, felt=FELTS[felt], deck="tango" if felt == "red" else "anglo_poker")
    _pair(scene, 2)
    _pair(scene, 5, codes=("7c", "8h"), up=(True, False))
    frame, truth = render(scene, W, H, seed=3)
    res = detector.detect(frame)
    s = score_frame(res, truth)
    assert s.found == 4 and s.false_cards == 0, s.mistakes
    assert s.face_right == 4, s.mistakes


def test_white_chips_are_not_the_button_nor_cards(detector):
    scene = TableScene(seats=6)
    for seat in range(1, 7):
        for k in range(2):
            scene.chips.append(Chip(chip_pose(6, seat, k * 2), "white"))
    frame, _truth = render(scene, W, H, seed=5)
    res = detector.detect(frame)
    assert res.button is None
    assert res.cards == []


@pytest.mark.parametrize(
    ("colour", "label"),
    [((238, 238, 236), "DEALER"), ((238, 238, 236), "D"), ((40, 180, 220), "DEALER"), ((150, 60, 30), "D")],
)
def test_button_found_among_chips(detector, colour, label):
    scene = TableScene(seats=6)
    for seat in range(1, 7):
        scene.chips.append(Chip(chip_pose(6, seat, 0), "white"))
        scene.chips.append(Chip(chip_pose(6, seat, 2), "red"))
    text = (245, 245, 245) if sum(colour) < 360 else (20, 20, 20)
    scene.button = DealerButton(button_pose(6, 4), colour=colour, text_colour=text, label=label, angle_deg=33)
    _pair(scene, 4)
    frame, truth = render(scene, W, H, seed=9)
    res = detector.detect(frame)
    assert res.button is not None
    assert (
        np.linalg.norm(np.array(res.button.center) - truth["button"]["center"])
        < truth["button"]["radius"] / 2
    )
    assert res.button.radius == pytest.approx(truth["button"]["radius"], rel=0.2)


def test_board_cards_side_by_side(detector):
    scene = TableScene(seats=6)
    for i, code in enumerate(["2c", "Jd", "Qh", "9s", "Ac"]):
        c, a = board_card_pose(i)
        scene.cards.append(CardPlacement(c, a, code, True, zone="board"))
    frame, truth = render(scene, W, H, seed=2)
    s = score_frame(detector.detect(frame), truth)
    assert s.found == 5 and s.false_cards == 0, s.mistakes


def test_result_json_fields(detector):
    frame, _ = render(random_scene(21), W, H, 21)
    d = detector.detect(frame).to_dict("x.png")
    assert set(d) >= {"image", "width", "height", "cards", "button", "ms"}
    for c in d["cards"]:
        assert c["face"] in ("up", "down")
        assert len(c["corners"]) == 4
        assert c["code"] is None or len(c["code"]) == 2
        if c["face"] == "down":
            assert c["code"] is None


def test_bad_frames(detector):
    with pytest.raises(ValueError, match="empty frame"):
        detector.detect(np.zeros((0, 0, 3), np.uint8))
    gray = np.full((240, 320), 90, np.uint8)  # a grey frame with nothing on it
    res = detector.detect(gray)
    assert res.cards == [] and res.button is None


def _outline_errors(res, cards: list[dict], cw: float) -> list[float]:
    """For each true card: the largest corner distance to the nearest detected outline, in card widths."""
    out = []
    for t in cards:
        tc = np.array(t["center"])
        best = min(res.cards, key=lambda c: float(np.linalg.norm(np.array(c.center) - tc)), default=None)
        out.append(9.9 if best is None else _outline_error(best.corners, t["corners"]) / cw)
    return out


@pytest.mark.parametrize("felt", ["green", "grey", "blue"])
def test_touching_board_cards_are_two_cards_with_their_own_outlines(felt):
    # two board cards laid edge to edge (one slightly turned): one blob, two card widths long.
    # Side by side two cards are 1.43 long to 1 wide, the shape of one card turned: the table's
    # layout (or the camera's earlier frames) tells the card size that settles it
    from vision.layout import default_layout

    detector = Detector(layout=default_layout(6, W, H))
    scene = TableScene(seats=6, felt=FELTS[felt], deck="tango")
    w = CARD_SIZE_MM[0]
    scene.cards.append(CardPlacement((-w / 2, 0.0), 2.0, "6s", True, zone="board"))
    scene.cards.append(CardPlacement((w / 2 + 0.5, 1.0), -1.5, "5d", True, zone="board"))
    frame, truth = render(scene, W, H, seed=7)
    res = detector.detect(frame)
    s = score_frame(res, truth)
    assert s.found == 2 and s.false_cards == 0, s.mistakes
    assert max(_outline_errors(res, truth["cards"], truth["card_width_px"])) < 0.12


@pytest.mark.parametrize("seed", [7, 9, 12, 13])
def test_a_board_laid_edge_to_edge_is_five_cards(seed):
    # a self-dealt board is often laid card against card: one blob five cards long whose corners show
    # only at its two ends. Its middle card is two places from either end; it was found as its two end
    # cards and the one beside one end (4 of 5 on these tables, 3 of 5 on others). A table mid-hand,
    # its five board cards moved edge to edge, each a degree or two off straight
    scene = random_scene(seed, deck="tango")
    board = [c for c in scene.cards if c.zone == "board"]
    assert len(board) == 5
    rng = np.random.default_rng(seed)
    for i, card in enumerate(board):
        card.center = ((i - 2) * CARD_SIZE_MM[0], 0.0)
        card.angle_deg = float(rng.normal(0, 1.5))
    frame, truth = render(scene, W, H, seed)
    res = Detector(budget_ms=10_000).detect(frame)  # (the frame alone: no layout, no earlier frame)
    read = {c.code for c in res.cards}
    assert {c.code for c in board} <= read, (sorted(c.code for c in board), sorted(filter(None, read)))
    s = score_frame(res, truth)
    assert s.false_cards == 0, s.mistakes


@pytest.mark.parametrize(
    ("seed", "deck"),
    [(3, "anglo_poker"), (13, "anglo_poker"), (24, "anglo_poker"), (5, "tango"), (6, "tango"), (13, "tango")],
)
def test_overlapping_pairs_are_split_along_the_right_edges(seed, deck):
    # tables whose hole-card pairs make nearly square blobs: two landscape cards one above the other
    # fill such a blob about as well as the true pair; the edge where one card lies on the other
    # tells them apart. A new camera each time: the card size is found on the frame alone.
    # (a budget no frame meets here: these ~300 ms CPU frames, the first of a process paying its
    # one-time costs too, came within reach of the 500 ms one on a busy machine and were cut short)
    frame, truth = render(random_scene(seed, deck=deck), W, H, seed)
    res = Detector(budget_ms=10_000).detect(frame)
    s = score_frame(res, truth)
    assert s.recall == 1.0 and s.false_cards == 0, (s.mistakes, res.truncated)
    errors = _outline_errors(res, [t for t in truth["cards"] if t["visible"] >= 0.1], truth["card_width_px"])
    assert max(errors) < 0.25, errors


def _synthetic_card(blur: float = 1.0):
    """A white card (70 x 98 px, turned 20 degrees) with a black frame line inside, on grey felt."""
    img = np.full((260, 260), 70, np.uint8)
    ang = np.radians(20)
    u, v = np.array([np.cos(ang), np.sin(ang)]), np.array([-np.sin(ang), np.cos(ang)])
    c = np.array([130.0, 130.0])
    true = np.array([c - 35 * u - 49 * v, c + 35 * u - 49 * v, c + 35 * u + 49 * v, c - 35 * u + 49 * v])
    big = np.full((1040, 1040), 70, np.uint8)
    cv2.fillConvexPoly(big, np.round(true * 4).astype(np.int32), 240)
    inner = np.array([c - 29 * u - 43 * v, c + 29 * u - 43 * v, c + 29 * u + 43 * v, c - 29 * u + 43 * v])
    cv2.polylines(big, [np.round(inner * 4).astype(np.int32)], True, 20, 4)
    img = cv2.resize(big, (260, 260), interpolation=cv2.INTER_AREA)
    img = cv2.GaussianBlur(img, (0, 0), blur)
    # resize by 4 with INTER_AREA puts the drawn pixel boundary k at (k - 1.5) / 4 in the small picture
    return img, true - 1.5 / 4


def test_refined_corners_sit_on_the_rim_not_a_blur_width_outside():
    from vision.detect import _refine_corners

    img, true = _synthetic_card(blur=1.2)
    start = true.mean(axis=0) + (true - true.mean(axis=0)) * 0.97 + [1.5, -1.0]  # small and off
    out, n = _refine_corners(img, start, [], 5.0)
    assert n == 4
    assert np.abs(out - true).max() < 0.35, out - true


def test_a_side_under_another_card_is_put_at_the_card_size():
    from vision.detect import _refine_corners

    img, true = _synthetic_card()
    # another card lies along the right-hand long side: that side's rim is not looked at
    u = (true[1] - true[0]) / np.linalg.norm(true[1] - true[0])
    other = np.array([true[1] - u * 10, true[1] + u * 60, true[2] + u * 60, true[2] - u * 10])
    start = true.mean(axis=0) + (true - true.mean(axis=0)) * 0.96
    out, n = _refine_corners(img, start, [other], 5.0, size=(70.0, 98.0))
    assert n == 3
    assert np.abs(out - true).max() < 0.5, out - true


def test_outlines_are_precise_on_random_tables(detector):
    # mean worst-corner error over every found card, hole-card pairs and board rows included
    total = Score()
    for seed, deck in [(31, "anglo_poker"), (32, "tango"), (33, "anglo_poker"), (34, "tango")]:
        frame, truth = render(random_scene(seed, deck=deck), W, H, seed)
        total.add(score_frame(detector.detect(frame), truth))
    assert total.mean_outline_error < 0.035, total.mean_outline_error


def test_a_card_side_steps_one_way_ink_steps_both_ways():
    # a side along a card's rim is an edge stepping the same way all along; a side running through
    # printed pips meets edges that step either way, and counts only the larger share
    from vision.detect import _consistent_hits, _side_samples

    rim = np.full((120, 120), 60, np.uint8)
    rim[:, 60:] = 230
    ink = rim.copy()
    for y0 in range(0, 120, 20):  # every other stretch the dark ink lies on the other side
        ink[y0 : y0 + 10, 40:60] = 230
        ink[y0 : y0 + 10, 60:80] = 60
    q = np.array([[60.0, 10.0], [100.0, 10.0], [100.0, 110.0], [60.0, 110.0]])
    hits = []
    for img in (rim, ink):
        grads = (cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3))
        side = _side_samples(q, grads)
        left = side[3] == 3  # the side from (60, 110) up to (60, 10)
        hits.append((_consistent_hits(side, left), int((side[1] & left).sum())))
    (rim_hits, rim_any), (ink_hits, ink_any) = hits
    assert rim_hits == rim_any > 40
    assert ink_hits < 0.65 * ink_any


def test_red_backs_on_red_felt_are_found(detector):
    # the tango back is red like the felt: only its printed border and highlight stand out, and the
    # mask found of it is a piece of a card, or two pieces parted by the highlight's edge
    from hil.scene import random_camera

    total = Score()
    for seed in range(6):
        rng = np.random.default_rng(seed)
        scene = TableScene(seats=6, felt=FELTS["red"], deck="tango", camera=random_camera(rng))
        for i, code in enumerate(["2c", "Jd", "Qh"]):
            c, a = board_card_pose(i)
            scene.cards.append(CardPlacement((c[0] + 3 * i, c[1]), a, code, True, zone="board"))
        for seat in range(1, 7):
            for k in range(2 if seat % 2 else 1):
                c, a = seat_card_pose(6, seat, k, scene.table_size, rng)
                scene.cards.append(CardPlacement(c, a, "As", face_up=False, seat=seat, zone="seat"))
        frame, truth = render(scene, W, H, seed)
        total.add(score_frame(Detector().detect(frame), truth))
    assert total.recall >= 0.97, total.mistakes  # 0.90 before the border counted as the card's
    assert total.false_cards == 0, total.mistakes


# five seats' hole-card pairs, the second card of each half over the first (centre mm, angle): a
# table the bench's self-dealt hands showed (issue 14). At 640x360 every blob is a pair whose
# outline is one card long and a card and a bit wide, which a single card 1.4 times too big fits
# as well: the frame's sides alone named that size and each pair came out one card
_PAIRS_ONLY = [
    ("Th", 4, (297.3, -303.4), -146.0),
    ("7s", 5, (619.1, -12.7), -88.6),
    ("Qd", 1, (-308.2, 310.8), -151.0),
    ("Kc", 2, (-622.1, 22.0), 93.0),
    ("Qc", 3, (-327.5, -298.1), -25.5),
    ("6c", 4, (323.4, -285.9), -140.3),
    ("Kd", 5, (620.0, 11.5), 103.7),
    ("8d", 1, (-322.4, 279.3), -139.8),
    ("Kh", 2, (-615.1, -29.5), 93.5),
    ("7c", 3, (-295.5, -306.1), -24.4),
]


def _pairs_only_frame(n: int = len(_PAIRS_ONLY), seed: int = 3):
    scene = TableScene(seats=6)
    for code, seat, c, a in _PAIRS_ONLY[:n]:
        scene.cards.append(CardPlacement(c, a, code, face_up=False, seat=seat, zone="seat"))
    return render(scene, 640, 360, seed)


@pytest.mark.parametrize("seed", [0, 3, 15])
def test_a_table_of_pairs_only_is_two_cards_a_seat_with_the_layouts_card_size(seed):
    from vision.layout import default_layout

    frame, truth = _pairs_only_frame(seed=seed)
    res = Detector(layout=default_layout(6, 640, 360)).detect(frame)
    s = score_frame(res, truth)
    assert s.found == 10 and s.false_cards == 0, s.mistakes


def test_pairs_dealt_after_single_cards_keep_the_size_learnt_from_them():
    # no layout: the size the first round of the deal showed holds when the second round turns
    # every seat's card into a pair
    det = Detector(track=True)
    for n in (5, 10):
        frame, truth = _pairs_only_frame(n)
        s = score_frame(det.detect(frame), truth)
        assert s.found == n and s.false_cards == 0, (n, s.mistakes)


def test_a_pair_the_verifier_takes_for_one_big_card_hides_no_card_at_a_calibrated_table(monkeypatch):
    """bench/bench_observed.py (bar_league, seed 14, frame 32576): the verifier took a hole-card pair's
    near-square outline, two cards wide, for one card it was 0.97 sure of; as the cards of one deck are
    one size, every real card then looked too small to keep and 7 of 9 vanished for 12 frames (a false
    fold, two late deals: a false wrong_card_count misdeal). A layout that knows the card size keeps
    them: a verified card of another size is no card of this deck."""
    import vision.detect as detect
    from vision.detect_quads import Quad
    from vision.layout import default_layout

    frame, truth = _pairs_only_frame(seed=3)
    layout = default_layout(6, 640, 360)
    pair = np.array([c["corners"] for c in truth["cards"] if c["seat"] == 5], float).reshape(-1, 2)
    half = 1.05 * layout.card_width_px()  # the square round the pair, 2.1 cards wide (50 px at 24)
    square = Quad(pair.mean(axis=0) + half * np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]), 0.97, "test")
    real = detect.find_cards

    def with_the_square(*args, **kwargs):  # the only card the verifier is sure of, as on that frame
        quads, cut = real(*args, **kwargs)
        return [q for q in quads if q.score < detect.REPLACE_SURE] + [square], cut

    monkeypatch.setattr(detect, "find_cards", with_the_square)
    s = score_frame(Detector(layout=layout).detect(frame), truth)
    assert s.found == 10 and s.false_cards == 0, s.mistakes


def test_a_black_card_shaped_thing_is_no_face_down_card_but_a_lone_face_down_card_is():
    # a phone's black screen or a coaster the size of a card, lying alone on the felt: the felt
    # stage finds a card-sized object with no face, which the verifier is sure is no card. A real
    # card lying face down alone (a burn card, a fold) is still found
    scene = TableScene(seats=6, felt=FELTS["green"], deck="tango")
    for i, code in enumerate(["As", "Kd", "7c"]):
        c, a = board_card_pose(i)
        scene.cards.append(CardPlacement(c, a, code, True, zone="board"))
    c, a = board_card_pose(4)
    scene.cards.append(CardPlacement(c, a, "2h", False, zone="board"))
    frame, truth = render(scene, W, H, seed=3)
    cw = truth["card_width_px"]
    box = cv2.boxPoints(((0.7 * W, 0.78 * H), (cw, 1.4 * cw), 20)).astype(np.int32)
    cv2.fillPoly(frame, [box], (20, 20, 20))
    s = score_frame(Detector().detect(frame), truth)
    assert s.found == 4 and s.false_cards == 0, s.mistakes


def test_a_sure_outline_is_reported_though_a_false_find_touches_it():
    # a white card on a white bed sheet (roboflow IMG_3022): the felt stage finds a false card-sized
    # patch that overlaps the real card's edge, and the verifier is sure of the real card. The card
    # is reported; an unsure outline touching found cards (the gap between two cards) is not
    from vision.detect import CardObs
    from vision.detect_quads import Quad

    scene = TableScene(seats=6, felt=FELTS["green"], deck="tango")
    c, a = board_card_pose(2)
    scene.cards.append(CardPlacement(c, a, "9h", True, zone="board"))
    frame, truth = render(scene, W, H, seed=3)
    card = np.array(truth["cards"][0]["corners"], float)
    width = float(np.linalg.norm(card[1] - card[0]))
    patch = card + np.array([0.8 * width, 0.0])  # a fifth of it over the card's right side
    false_find = CardObs("down", None, 0.5, tuple(patch.mean(axis=0)), [tuple(p) for p in patch])

    added = Detector()._quad_cards(frame, [Quad(card, 0.99, "test")], [false_find])
    assert [(o.face, o.code) for o in added] == [("up", "9h")]
    assert Detector()._quad_cards(frame, [Quad(card, 0.7, "test")], [false_find]) == []
    covered = card + np.array([0.3 * width, 0.0])  # most of it is a found card: that one stands
    hidden = CardObs("down", None, 0.5, tuple(covered.mean(axis=0)), [tuple(p) for p in covered])
    assert Detector()._quad_cards(frame, [Quad(card, 0.99, "test")], [hidden]) == []


def test_one_chip_on_a_verified_card_is_a_card_protector_two_make_a_row_of_chips():
    # a card-shaped outline round touching chips has two or more chip-sized discs on it; a player's
    # protector is one chip laid on the hole cards, anywhere on them, and the cards are still there
    from vision.detect import _chip_row

    w, ln = 100.0, 140.0
    card = np.array([[0, 0], [w, 0], [w, ln], [0, ln]], float)
    chip = 0.62 * w / 2
    quarter, three_quarters = (
        {"center": (50.0, 35.0), "radius": chip},
        {"center": (50.0, 105.0), "radius": chip},
    )
    assert not _chip_row(card, [quarter])
    assert _chip_row(card, [quarter, three_quarters])
    beside = {"center": (50.0, 200.0), "radius": chip}  # a chip off the card counts for nothing
    assert not _chip_row(card, [quarter, beside])


def test_a_card_on_a_wrinkled_sheet_whose_fold_the_felt_stage_takes_for_a_chip_on_it_is_found():
    # roboflow IMG_3013: a Ks alone on a pale green bed sheet; the felt stage finds round blobs in the
    # sheet's wrinkles, one of them on the card a quarter of its width off its centre, and the
    # verified card was dropped as a row of chips: no card at all in the photo
    res, want = _detect_real_photo("roboflow_blackjack_cc_by", "IMG_3013.jpg")
    assert [(res.cards[i].face, res.cards[i].code) for i, _j in match(res.cards, want)] == [("up", "Ks")]


def test_a_round_thing_on_a_verified_card_is_a_chip_only_when_chip_sized_and_off_centre():
    # a card-shaped outline round two touching chips is no card; a round pip printed on a card
    # (the felt stage takes a big diamond or heart for a disc on a close-up photo, roboflow
    # 20231029_220348) and the card itself taken for a round blob (a white card on a pale sheet,
    # roboflow IMG_2925) do not make a real card disappear. A chip is 39 mm across, a card 63 mm wide.
    from vision.detect import _chip_on_card

    w, ln = 100.0, 140.0
    card = np.array([[0, 0], [w, 0], [w, ln], [0, ln]], float)  # centre (50, 70)
    chip = 0.62 * w
    assert _chip_on_card(card, {"center": (50.0, 35.0), "radius": chip / 2})  # a quarter along
    assert _chip_on_card(card, {"center": (50.0, 105.0), "radius": chip / 2})
    assert not _chip_on_card(card, {"center": (50.0, 30.0), "radius": 0.38 * w / 2})  # a pip
    assert not _chip_on_card(card, {"center": (52.0, 68.0), "radius": 1.1 * w / 2})  # the card itself
    assert _chip_on_card(card, {"center": (52.0, 68.0), "radius": 2.0 * w / 2})  # a stack far wider


def _detect_real_photo(source: str, name: str, fold_readers: bool = False):
    """(result, labelled cards) of one real photograph, read by the models of the fold that never saw
    its source (vision/loso), with a budget no photo meets; the test is skipped where it is missing.
    With `fold_readers`, the glyph classifiers and the index network are the fold's too, as in
    `bench/bench_vision.py --loso` (else the shipped ones, which saw every source)."""
    from vision.detect_quads import WEIGHTS
    from vision.index_net import use_weights as use_index_weights
    from vision.read_glyph import use_weights as use_glyph_weights
    from vision.real_photos import load_labels, real_photos_dir

    root = real_photos_dir()
    if root is None or not (root / source / name).is_file():
        pytest.skip(f"real photograph {source}/{name} not found")
    fold = WEIGHTS.parent / "loso"
    det = Detector(
        budget_ms=10_000,
        verifier_path=str(fold / f"quad_verifier_without_{source}.npz"),
        calibration=str(fold / f"read_confidence_without_{source}.json"),
    )
    if fold_readers:
        use_glyph_weights(fold / f"read_glyphs_without_{source}.npz")
        use_index_weights(fold / f"index_net_without_{source}.onnx")
    try:
        res = det.detect(cv2.imread(str(root / source / name), cv2.IMREAD_COLOR))
    finally:
        if fold_readers:
            use_glyph_weights(None)
            use_index_weights(None)
    return res, load_labels(root / source)[name]["cards"]


def test_a_card_the_verifier_is_sure_of_replaces_unsure_finds_of_the_felt_stage_there():
    # edje IMG_2576: a 9s and a Qs on a brown carpet by a green box; the felt stage, at a wrong card
    # size, fitted big outlines across both cards and the carpet and read none of them; the verifier
    # was sure (1.0) of each card's own outline, which those unread finds kept out; the 9s's lay on a
    # find that the Qs's replaced first
    res, want = _detect_real_photo("edje_pinochle_train", "IMG_2576.jpg", fold_readers=True)
    found = {want[j]["code"]: res.cards[i].code for i, j in match(res.cards, want)}
    assert found == {"Qs": "Qs", "9s": "9s"}


def test_a_verified_outline_read_surely_replaces_an_unread_find_and_keeps_the_back_of_its_pair():
    # a hole-card pair, the top card shown (7h): the felt stage fitted the shown card too big and read
    # nothing; the verifier's outline of it reads 7h surely and takes that find's place, while the
    # face-down card under it (a third to two thirds of it covered, as pairs lie) stays a card
    from vision.detect import CardObs
    from vision.detect_quads import Quad

    scene = TableScene(seats=6, felt=FELTS["green"], deck="tango")
    _pair(scene, 2, codes=("Kd", "7h"), up=(False, True))
    frame, truth = render(scene, W, H, seed=5)
    back, shown = (np.array(t["corners"], float) for t in truth["cards"])
    centre = shown.mean(axis=0)
    too_big = centre + 1.35 * (shown - centre)
    unread = CardObs("up", None, 0.2, tuple(centre), [tuple(p) for p in too_big])
    down = CardObs("down", None, 0.95, tuple(back.mean(axis=0)), [tuple(p) for p in back])

    out = Detector()._verified_over_unsure(frame, [Quad(shown, 0.99, "test")], [unread, down])
    assert [(o.face, o.code) for o in out] == [("down", None), ("up", "7h")]
    assert out[1].confidence >= 0.9
    # a find read more likely right than wrong is no unsure find: nothing is read again there
    read = CardObs("up", "7h", 0.6, tuple(centre), [tuple(p) for p in too_big])
    assert Detector()._verified_over_unsure(frame, [Quad(shown, 0.99, "test")], [read, down]) == [read, down]


def test_a_card_filling_a_photo_with_round_pips_is_found():
    # roboflow 20231029_220348: one 2 of diamonds filling the photo on a dark cloth; the felt stage
    # took a diamond pip for a disc and the verified card lying over it was dropped as a chip row
    source, name = "roboflow_blackjack_cc_by", "20231029_220348.jpg"
    res, labels = _detect_real_photo(source, name)
    assert len(match(res.cards, labels)) == 1, [(c.face, c.corners) for c in res.cards]


def test_strips_of_one_card_are_its_pieces_but_two_crossed_cards_are_not():
    # the felt stage cut an 8 of diamonds on wood in thirds at a wrong card size (roboflow
    # IMG_5923); a hole-card pair crossed at right angles is a near-square outline the verifier
    # sometimes vouches for as one card, and each of its two cards is about half of it
    from vision.detect import _pieces_of

    w, ln = 100.0, 140.0
    card = np.array([[0, 0], [w, 0], [w, ln], [0, ln]], float)
    strips = [
        np.array([[0, y], [w, y], [w, y + ln / 3], [0, y + ln / 3]], float) for y in (0, ln / 3, 2 * ln / 3)
    ]
    assert _pieces_of(card, strips)
    square = np.array([[0, 0], [ln, 0], [ln, ln], [0, ln]], float)
    upright = np.array([[20, 0], [20 + w, 0], [20 + w, ln], [20, ln]], float)
    across = np.array([[0, 20], [ln, 20], [ln, 20 + w], [0, 20 + w]], float)
    assert not _pieces_of(square, [upright, across])


def test_cards_of_a_sure_cards_own_size_lying_partly_on_it_are_its_misplaced_copies():
    # one clean card on wood whose blob grain and shadow made bigger was explained by four cards of
    # the right size, one on each corner of it (roboflow IMG_5961); the joint outline of a hole-card
    # pair, which the verifier sometimes vouches for, is wider than either of its cards
    from vision.detect import _copies_of

    w, ln = 100.0, 140.0
    card = np.array([[0, 0], [w, 0], [w, ln], [0, ln]], float)
    corners = [card + np.array([dx, dy]) for dx in (-40, 40) for dy in (-50, 50)]
    assert _copies_of(card, corners)
    pair = np.array([[0, 0], [1.5 * w, 0], [1.5 * w, ln], [0, ln]], float)
    assert not _copies_of(pair, [card, card + np.array([0.5 * w, 0])])


def test_four_cards_on_wood_are_not_taken_for_four_copies_at_the_wrong_places():
    # edje cam_image37: Ac, Kh, Ks and Ad apart on dark wood grain. The felt stage explained the
    # grain round them by four card-sized outlines astride the cards (two of the four found); the
    # verifier was sure of each card's own outline
    source, name = "edje_pinochle_train", "cam_image37.jpg"
    res, labels = _detect_real_photo(source, name)
    assert len(match(res.cards, labels)) == 4, [(c.code, c.corners) for c in res.cards]


def test_a_card_under_a_found_card_on_wood_is_found_by_its_strip_in_view():
    # edje IMG_2681: a nine of spades half under a ten of diamonds on wood grain. The grain made
    # the pair's foreground ragged and only the ten was found; what is left of the foreground once
    # the ten is taken out is the nine's strip in view, and a card of the ten's size lying under
    # the ten explains it (`_card_under`)
    source, name = "edje_pinochle_train", "IMG_2681.jpg"
    res, labels = _detect_real_photo(source, name)
    found = {labels[j]["code"]: res.cards[i] for i, j in match(res.cards, labels)}
    assert set(found) == {"9s", "Td"}, [(c.code, c.corners) for c in res.cards]
    assert found["9s"].occluded and found["9s"].code == "9s"


def test_a_strip_left_beside_a_card_is_a_card_under_it_only_where_one_of_its_size_fits():
    from vision.detect import _card_under

    h, w, ln = 300, 100, 140
    top = np.array([[100, 80], [200, 80], [200, 220], [100, 220]], float)
    taken = np.zeros((h, h), np.uint8)
    cv2.fillConvexPoly(taken, top.astype(np.int32), 255)
    strip = np.zeros((h, h), bool)
    strip[80:220, 200:240] = True  # the 40 px of a card in view to the right of the one on top
    under = _card_under(strip, [top], taken, (w, ln))
    assert under is not None
    assert np.allclose(sorted(under[:, 0]), [140, 140, 240, 240], atol=1)
    blob = np.zeros((h, h), bool)
    cv2.circle(blob.view(np.uint8), (225, 150), 22, 1, -1)  # a chip beside the card
    assert _card_under(blob, [top], taken, (w, ln)) is None


def test_a_card_alone_in_a_clean_blob_is_not_doubted_but_one_in_ragged_grain_is():
    # a lone felt-stage card the verifier doubts is dropped when it shows no face (wood grain, a
    # phone's screen); a dark back on dark felt is doubted too (anglo's navy lattice on purple felt,
    # 0.014: the first hole card dealt to a seat went unseen), but its blob is the card itself (and
    # it is printed and a back to the face network: the black card-shaped thing of the test above
    # has a clean blob too)
    from vision.detect import _fills_its_blob, _Rect

    card = np.array([[100, 100], [163, 100], [163, 188], [100, 188]], float)
    rect = _Rect(card, votes=4, coverage=1.0)
    clean = card.reshape(-1, 1, 2).astype(np.int32)
    assert _fills_its_blob(rect, [(clean, [rect])])
    rng = np.random.default_rng(1)
    ragged = np.zeros((300, 300), np.uint8)
    cv2.fillConvexPoly(ragged, card.astype(np.int32), 255)
    for _ in range(12):  # grain streaks joined to it
        y = int(rng.integers(90, 200))
        cv2.line(ragged, (40, y), (260, y + int(rng.integers(-10, 10))), 255, 3)
    contours, _ = cv2.findContours(ragged, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    blob = max(contours, key=cv2.contourArea)
    assert not _fills_its_blob(rect, [(blob, [rect])])
    assert not _fills_its_blob(rect, [(clean, [rect, _Rect(card + 40, 4, 1.0)])])  # not alone in it


def test_a_false_card_across_cards_laid_edge_to_edge_gives_way_to_them():
    from vision.detect import _across_cards

    w, ln = 100.0, 140.0
    row = [np.array([[0, y], [ln, y], [ln, y + w], [0, y + w]], float) for y in (0, w, 2 * w)]  # landscape
    strip = np.array([[20, 10], [20 + w, 10], [20 + w, 10 + ln], [20, 10 + ln]], float)  # upright, across two
    assert _across_cards(strip, row)
    assert not _across_cards(strip, row[:1])  # one card under it: a card half under another stays
    aside = np.array([[ln + 5, 0], [ln + 5 + w, 0], [ln + 5 + w, ln], [ln + 5, ln]], float)
    assert not _across_cards(aside, row)


@pytest.mark.parametrize(
    ("name", "found_at_least"),
    [
        ("IMG_5923-Small.jpg", 1),  # an 8 of diamonds on wood the felt stage cut in thirds (0 before)
        # ten cards edge to edge in columns on a counter, cut across (4 before), the photo's edge
        # across the last two (found by their part in view since vision.edge_cards: 8 before)
        ("IMG_3301.jpg", 10),
    ],
)
def test_cards_the_felt_stage_cut_wrong_are_found_whole(name, found_at_least):
    source = "roboflow_blackjack_cc_by"
    res, labels = _detect_real_photo(source, name)
    pairs = match(res.cards, labels, picture=(res.width, res.height))
    assert len(pairs) >= found_at_least, [(c.face, c.code) for c in res.cards]
    assert len(res.cards) - len(pairs) <= 1  # not the strips besides


def test_card_sets_are_scored_from_pieces_exactly_as_pixel_by_pixel():
    # the felt stage's search over sets of candidate cards counts pixels per piece of the window;
    # a set's union, its spill past the grown blob and the least any one card shows alone must be
    # the very counts a pass over the pixels gives (else the chosen reading of a blob changes)
    import itertools

    from vision.detect import _combo_counts

    rng = np.random.default_rng(3)
    blob = np.zeros((120, 160), np.uint8)
    cv2.rectangle(blob, (20, 15), (70, 90), 1, -1)
    cv2.rectangle(blob, (60, 30), (130, 100), 1, -1)
    grown = cv2.dilate(blob, np.ones((3, 3), np.uint8))
    off = np.array([5.0, 7.0])
    cands = []
    for _ in range(6):
        x, y = rng.uniform(10, 100), rng.uniform(5, 50)
        cands.append(np.array([[x, y], [x + 45, y + 4], [x + 41, y + 66], [x - 4, y + 62]]) + off)
    masks = []
    for q in cands:
        m = np.zeros_like(blob)
        cv2.fillConvexPoly(m, np.round(q - off).astype(np.int32), 1)
        masks.append(m.astype(bool))
    got = _combo_counts(cands, blob, grown, off, 3)
    for k in (1, 2, 3):
        want_combos = list(itertools.combinations(range(len(cands)), k))
        assert [c for c, *_ in got[k]] == want_combos
        for combo, inter, spill, least in got[k]:
            union = np.logical_or.reduce([masks[i] for i in combo])
            assert inter == int((union & (blob > 0)).sum())
            assert spill == int((union & (grown == 0)).sum())
            if k > 1:
                alone = [
                    int(
                        (
                            masks[i] & (blob > 0) & ~np.logical_or.reduce([masks[j] for j in combo if j != i])
                        ).sum()
                    )
                    for i in combo
                ]
                assert least == min(alone)


def test_a_fan_of_overlapping_cards_is_cut_at_the_whole_cards_size():
    # edje IMG_2586: two fans on carpet; the cards under others showed strips of a card, which the
    # verifier vouched for too, and the felt stage took their width for the frame's card size
    source, name = "edje_pinochle_train", "IMG_2586.jpg"
    res, labels = _detect_real_photo(source, name)
    pairs = match(res.cards, labels)
    assert len(pairs) == len(labels) == 4, [(c.face, c.code) for c in res.cards]
    assert all(res.cards[i].code == labels[j]["code"] for i, j in pairs)


@pytest.mark.parametrize(
    "name",
    [
        # the felt stage cut a laptop's edge into a row of small overlapping "cards", each of which the
        # verifier gives < 0.02; a doubtful card was dropped only when it lay alone (4 false cards before)
        "PXL_20231031_181555902.jpg",
        # the verifier vouched for a 15 px square on a chip's rim, a card nobody could read (1 before)
        "PXL_20231031_181435849.jpg",
        # chips' rim inserts, 16-59 px long, taken for face-down cards until a "card" set into the
        # rim of a round blob of one colour many times its area was known for a chip's
        # (vision.chip_rim): 2, 1 and 1 before
        "PXL_20231031_181449755.jpg",
        "PXL_20231031_181515705-MP.jpg",
        "PXL_20231031_181614858.jpg",
    ],
)
def test_no_card_is_found_on_a_photo_of_chips(name):
    # roboflow: chips on a wooden desk, no card, labels complete
    source = "roboflow_blackjack_cc_by"
    res, labels = _detect_real_photo(source, name)
    assert labels == []
    assert res.cards == [], [(c.face, c.corners) for c in res.cards]


def test_an_enrolled_deck_s_look_alike_suits_are_settled_by_the_builtin_reader(tmp_path):
    """A venue that enrols its deck must not read worse than one that does not. The enrolled
    templates compare whole pictures, and on the drawn deck (nothing was tuned on it) a club and a
    spade of one rank differ by a few pixels per pip: they called these clubs spades in a dead heat
    (0.50-0.51), where the built-in reader was sure of the club (0.99). Scenes 7025, 7038, 7053 of the
    benchmark's generator (a development range: the benchmark reports seeds from 5000)."""
    from hil.decks.drawn import write_deck
    from vision.read import enroll_deck

    write_deck(tmp_path / "drawn")
    model, _ = enroll_deck(tmp_path / "drawn")
    model.save(tmp_path / "drawn.deck")
    det = Detector(str(tmp_path / "drawn.deck"), budget_ms=None)  # (a frame cut short reads less: speed)
    for seed, code in ((7025, "7c"), (7038, "7c"), (7053, "Tc")):
        frame, truth = render(random_scene(seed, deck="drawn"), 1920, 1080, seed)
        result = det.detect(frame)
        true = next(t for t in truth["cards"] if t["code"] == code and t["face"] == "up")
        card = min(result.cards, key=lambda c: np.hypot(*np.subtract(c.center, true["center"])))
        assert np.hypot(*np.subtract(card.center, true["center"])) < 0.35 * truth["card_width_px"]
        assert (card.code, seed) == (code, seed)
        assert card.confidence >= 0.9


def test_a_deck_s_codes_the_builtin_reader_misreads_on_its_own_cards_are_never_overruled(tmp_path):
    """The built-in reader at its surest overrules an enrolled deck's templates (a venue's deck under
    the bar's light is read better so), but a deck may draw its indices or suits unlike the decks it
    learnt (a German B for a jack, a club like a spade): enrolment reads the deck's own pictures and
    keeps the codes it surely misreads them as (`DeckModel.builtin_misreads`), which it may then
    not give. Here the held-out drawn deck with its club and spade shapes swapped: every club and
    spade is such a code, and on rendered tables of it the templates' clubs and spades stand."""
    from vision.read import enroll_deck

    from .conftest import write_swapped_deck

    folder = tmp_path / "swapped"
    write_swapped_deck(folder)
    model, _ = enroll_deck(folder)
    clubs_spades = {r + s for r in "23456789TJQKA" for s in "cs"}
    assert len(set(model.builtin_misreads) & clubs_spades) >= 20, model.builtin_misreads
    assert set(model.builtin_misreads) <= clubs_spades, model.builtin_misreads
    # no time budget: on a machine slowed by the rest of the suite, a 1080p frame of an enrolled
    # deck (both readers on every card) was cut short and a card left unread
    det = Detector(budget_ms=None)
    det.model = model

    def clubs_and_spades_read() -> list[bool]:
        out = []
        for seed in range(7100, 7104):
            frame, truth = render(random_scene(seed, deck=str(folder)), 1920, 1080, seed)
            res = det.detect(frame)
            for t in truth["cards"]:
                if t["face"] != "up" or t["code"][1] not in "cs" or t["visible"] < 0.9:
                    continue
                card = min(res.cards, key=lambda c: np.hypot(*np.subtract(c.center, t["center"])))
                near = np.hypot(*np.subtract(card.center, t["center"])) < 0.35 * truth["card_width_px"]
                out.append(near and card.code == t["code"])
        return out

    guarded = clubs_and_spades_read()
    assert len(guarded) >= 6 and all(guarded), guarded
    model.builtin_misreads = ()  # as if enrolment had not looked: the built-in reader overrules them
    assert sum(clubs_and_spades_read()) <= len(guarded) // 2


def test_an_enrolled_deck_read_under_other_light_is_settled_by_a_sure_builtin_reader(monkeypatch):
    """edje's one pinochle deck, enrolled as `vision enroll-table` would (each card's picture cut
    out of the first sample photo showing it apart) and read on the sample's other photos, taken
    with other cameras, light and backgrounds: the templates alone read fewer right than with the
    built-in reader weighed in (overruling them where it is at its surest, or fairly sure on a deck
    of the standard indices it learnt, settling them where they are unsure), and the confidence says
    which codes to trust: those read at 0.9 or more are right at least nine times in ten (16 of 16
    here), and most wrong codes are read under it."""
    from pathlib import Path

    import vision.detect as detect
    from bench.bench_enroll_real import detector, enrol_from_labels
    from vision.index_net import use_weights as use_index_weights
    from vision.read_glyph import use_weights as use_glyph_weights
    from vision.real_photos import load_labels

    source = "edje_pinochle_train"
    root = Path(detect.__file__).resolve().parents[1] / "data" / "real_photos"  # the repository's sample
    labels = load_labels(root / source)
    fold = Path(detect.__file__).resolve().parent / "loso"
    use_glyph_weights(fold / f"read_glyphs_without_{source}.npz")
    use_index_weights(fold / f"index_net_without_{source}.onnx")
    reads = {}
    try:
        model, used, _missing = enrol_from_labels(root, source, labels)
        for alone in (False, True):
            if alone:  # the templates alone: the built-in reader never overrules them
                monkeypatch.setattr(detect, "ENROLLED_UNSURE", 0.0)
                monkeypatch.setattr(detect, "BUILTIN_SURE", 2.0)
                monkeypatch.setattr(detect, "BUILTIN_TRUSTED", 2.0)
            det = detector(source, budget_ms=None)
            det.model = model
            reads[alone] = []
            for name in sorted(set(labels) - used):
                frame = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
                det.card_width_hint = None
                res = det.detect(frame)
                for i, j in match(res.cards, labels[name]["cards"], image_size=labels[name].get("size")):
                    code = labels[name]["cards"][j].get("code")
                    if code and res.cards[i].face == "up":
                        reads[alone].append((res.cards[i].code == code, res.cards[i].confidence))
    finally:
        use_glyph_weights(None)
        use_index_weights(None)
    total = len(reads[False])
    right = {alone: sum(ok for ok, _c in got) for alone, got in reads.items()}
    assert total >= 20
    assert right[True] < right[False]
    # (the built-in reader trusted from BUILTIN_TRUSTED on this deck of standard indices: 17 -> 20 of 21)
    assert right[False] >= 0.9 * total, (right, total)
    sure = [ok for ok, c in reads[False] if c >= 0.9]
    wrong_unsure = [c < 0.9 for ok, c in reads[False] if not ok]
    assert len(sure) >= 0.6 * total and sum(sure) >= 0.9 * len(sure), (sum(sure), len(sure))
    assert sum(wrong_unsure) > len(wrong_unsure) / 2, reads[False]


def test_a_close_up_s_felt_is_not_the_cards_own_white():
    # edje IMG_2612: five cards on a close-up, each longer than the felt's median window; inside a
    # card that window's "felt" was the card's own white, its paper no object (four found, three
    # read right). The window now spans FELT_CARDS card lengths where the cards are that long.
    res, labels = _detect_real_photo("edje_pinochle_train", "IMG_2612.jpg")
    pairs = match(res.cards, labels)
    assert len(pairs) == len(labels) == 5, [(c.face, c.code) for c in res.cards]
    assert [res.cards[i].code for i, j in pairs] == [labels[j]["code"] for i, j in pairs]


def test_a_card_partly_beyond_the_picture_s_edge_is_read_by_its_part_in_view():
    # the warp of a card reaching beyond the picture smears the picture's last row over its hidden
    # part; judged and read as a whole card, a cut nine of clubs read 5c, a nine of spades 6s, and
    # the right codes of cut cards came at 0.45, under what a ruling needs. Read by its part in
    # view (`warp_card`'s `visible`), on the code-drawn deck nothing was tuned on: 11 of these 15
    # cut cards are read right at 0.9 or more (before: 3), none wrongly so (seeds 0-39: 27 of 46
    # against 16, one look-alike suit read wrong at 0.9 against none)
    from vision.evaluate import view_cut_through_a_card

    right = sure_wrong = total = 0
    for seed in (9, 10, 16, 23, 26, 39):
        frame, truth = render(random_scene(seed, deck="drawn"), 1920, 1080, seed)
        picture, cut = view_cut_through_a_card(frame, truth, seed)
        res = Detector(budget_ms=None).detect(picture)  # a fresh camera each, and no cut for speed
        reach = 0.35 * truth["card_width_px"]
        for t in cut:
            centre = t["corners"].mean(axis=0)
            near = [c for c in res.cards if np.hypot(*(np.asarray(c.center) - centre)) < reach]
            total += 1
            if near and near[0].confidence >= 0.9:
                right += near[0].code == t["code"]
                sure_wrong += near[0].code != t["code"]
    assert total >= 12
    assert right >= 10, (right, total)
    assert sure_wrong == 0


class _SlowCore(Detector):
    """A detector whose frame runs out of time once it has read `allowance` cards: what a core too
    slow for a crowded table sees on every frame, without the test depending on this machine's speed."""

    allowance = 4

    def detect(self, frame):
        self.reads_now = 0
        return super().detect(frame)

    def _read(self, *args, **kwargs):
        self.reads_now += 1
        return super()._read(*args, **kwargs)

    def _out_of_time(self) -> bool:
        if self.reads_now >= self.allowance:
            self._truncated = True
            return True
        return False


def test_a_crowded_table_read_a_few_cards_a_frame_is_read_whole_over_the_next_frames():
    # roboflow IMG_3310: 26 cards laid out, found by the verified proposals. Reading four a frame,
    # a tracked table recalls the cards read on the frames before and reads the next four (right
    # codes after each frame: 4, 8, 12, 16, 20, 24, 26, 26); before, the cards the verifier adds
    # were never recalled and every frame read the same first four (4, 4, 4, ...)
    from vision.detect_quads import WEIGHTS
    from vision.real_photos import load_labels, real_photos_dir

    source, name = "roboflow_blackjack_cc_by", "IMG_3310.jpg"
    root = real_photos_dir()
    if root is None or not (root / source / name).is_file():
        pytest.skip(f"real photograph {source}/{name} not found")
    fold = WEIGHTS.parent / "loso"
    det = _SlowCore(
        track=True,
        budget_ms=None,
        verifier_path=str(fold / f"quad_verifier_without_{source}.npz"),
        calibration=str(fold / f"read_confidence_without_{source}.json"),
    )
    photo = cv2.imread(str(root / source / name), cv2.IMREAD_COLOR)
    labels = load_labels(root / source)[name]["cards"]
    rng = np.random.default_rng(1)
    right = []
    for _ in range(8):
        noisy = np.clip(photo.astype(np.int16) + rng.integers(-3, 4, photo.shape), 0, 255).astype(np.uint8)
        res = det.detect(noisy)  # the camera's next frame: the same table, new sensor noise
        pairs = match(res.cards, labels)
        right.append(sum(res.cards[i].code == labels[j]["code"] for i, j in pairs))
    assert right[0] <= 5  # four read on the first frame (one of them may be a card the felt stage gave)
    assert right[-1] >= 20, right
    assert all(b >= a - 1 for a, b in itertools.pairwise(right)), right  # kept, not read anew each frame
