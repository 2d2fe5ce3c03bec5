"""Enrol a venue's deck from the table's own camera: the deck laid out face up on the felt.

Why: `vision enroll` learns a deck from one picture per card, named by hand (As.png, Td.png...).
An installer with a Pi over a bar's table has no scanner and no afternoon to spare; the camera is
already there, and pictures taken by it, under the venue's lights, at the size the camera sees a
card, are what the deck's templates will be matched against all evening.

How: the deck is laid face up in rows (a photo or several). Each card is found by the detector
and warped straight from the full picture (vision.detect.warp_card: the same canonical card the
reader sees at play). Its code comes either from where it lies (`order`: the codes in reading
order, rows top to bottom, each left to right; `rows_order("shdc")` for one suit a row, A to K), or,
without an order, from the built-in reader, which must be sure of it (`min_confidence`,
calibrated). A face-down card, if any, gives the back. Every card a code cannot be given to surely,
every code found twice and every code missing is named with its photo, row and place, and no model
is made from a deck that has one: a deck enrolled wrong reads wrong all evening.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from controller.rules.cards import ALL_CODES, RANKS
from vision.detect_quads import canonical_order

# the built-in reader's calibrated confidence a card's code needs when no order names it (the hole
# cards' bar, vision.tracker.MIN_HOLE_CONFIDENCE: right nine times in ten on real photos); a code
# read twice is caught besides, and the installer sees every code given in the cards folder
MIN_CONFIDENCE = 0.9
# a card found face down is the deck's back only when the reader is this sure; less sure, it is a
# face the reader misjudged (a held-out deck's 10 of hearts was called down at 0.5), laid face up
SURE_BACK = 0.9
# cards whose centres lie less than this share of a card's length apart, top to bottom, are one row
ROW_SHARE = 0.5
# tight_outline: the window round a card, as a share of its length each way, and how far the fitted
# rectangle's area may be from the deck's card size on the photo (either way) to be the card
OUTLINE_PAD = 0.2
OUTLINE_AREA = 1.3


@dataclass
class TableCard:
    """One card found on an enrolment photo."""

    photo: int  # index of the photo (0-based)
    row: int  # 0-based, top to bottom in its photo
    place: int  # 0-based, left to right in its row
    face: str  # 'up' or 'down'
    code: str | None  # what the built-in reader read (None: nothing)
    confidence: float
    canon: np.ndarray  # the card warped straight (CANON_W x CANON_H, BGR)
    center: tuple[float, float]
    corners: list
    given: str | None = None  # the code (or 'back') its picture was enrolled as, if any

    def where(self) -> str:
        return f"photo {self.photo + 1} row {self.row + 1} card {self.place + 1}"


@dataclass
class Enrolment:
    """What the photos gave: a picture for each code found (and 'back'), and every problem."""

    cards: dict[str, np.ndarray] = field(default_factory=dict)
    found: list[TableCard] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the deck cannot be enrolled while any
    warnings: list[str] = field(default_factory=list)  # worth a look, not in the way

    @property
    def complete(self) -> bool:
        return not self.problems and all(c in self.cards for c in ALL_CODES)


def rows_order(suits: str) -> list[str]:
    """The codes of a deck laid one suit a row, in the order `suits` names them (e.g. 'shdc'), each
    row from the ace to the king."""
    s = suits.strip().lower()
    if sorted(s) != sorted("cdhs"):
        raise ValueError(f"rows {suits!r}: name each of the four suits c, d, h, s once (e.g. shdc)")
    ranks = "A" + "".join(r for r in RANKS if r != "A")
    return [r + suit for suit in s for r in ranks]


def parse_order(text: str) -> list[str]:
    """Codes in reading order from text ('As 2s 3s ...', commas or spaces; 10 for T)."""
    codes = []
    for raw in text.replace(",", " ").split():
        t = raw.strip()
        t = "T" + t[2:] if t[:2] == "10" else t
        code = t[:1].upper() + t[1:].lower()
        if code not in ALL_CODES:
            raise ValueError(f"order: {raw!r} is not a card code (As, Td, 10h, ...)")
        codes.append(code)
    dup = sorted({c for c in codes if codes.count(c) > 1})
    if dup:
        raise ValueError("order: named twice: " + ", ".join(dup))
    return codes


def reading_order(cards: list[TableCard]) -> list[TableCard]:
    """The cards of one photo in reading order, with their row and place set: rows top to bottom
    (a card whose centre lies within ROW_SHARE of a card's length of the row's is in it: a row laid
    by hand is not straight), each left to right."""
    if not cards:
        return []
    length = float(np.median([_length(c.corners) for c in cards]))
    rows: list[list[TableCard]] = []
    for c in sorted(cards, key=lambda c: c.center[1]):
        if rows and abs(c.center[1] - np.mean([r.center[1] for r in rows[-1]])) < ROW_SHARE * length:
            rows[-1].append(c)
        else:
            rows.append([c])
    out = []
    for i, row in enumerate(rows):
        for j, c in enumerate(sorted(row, key=lambda c: c.center[0])):
            c.row, c.place = i, j
            out.append(c)
    return out


def cards_on(frame: np.ndarray, photo: int, detector) -> list[TableCard]:
    """Every card the detector finds on one photo, warped straight, in reading order."""
    from vision.detect import warp_card

    result = detector.detect(frame)
    outlines = [np.asarray(c.corners, np.float64) for c in result.cards]
    # the cards of one deck are one size: the size most outlines give is the card's
    card_area = (
        float(np.median([cv2.contourArea(q.astype(np.float32)) for q in outlines])) if outlines else 0.0
    )
    found = []
    for c, q in zip(result.cards, outlines, strict=True):
        corners = tight_outline(frame, q, card_area)
        canon, _visible, _own = warp_card(frame, corners, [], [])
        centre = tuple(float(v) for v in corners.mean(axis=0))
        found.append(
            TableCard(photo, 0, 0, c.face, c.code, float(c.confidence), canon, centre, corners.tolist())
        )
    return reading_order(found)


def tight_outline(frame: np.ndarray, corners: np.ndarray, card_area: float | None = None) -> np.ndarray:
    """The card's outline fitted to its own pixels, where it lies alone on the felt; else `corners`.

    The detector's outline is good to a few pixels, enough to read a card; a template made from
    it is not: a rim of felt on one side, the index cut on the other, and every match after is off
    by as much (the drawn deck enrolled from such outlines read 0.71 of the benchmark's cards
    against 0.99 from its card images). A card laid for enrolment lies alone: the smallest
    rectangle round the paper that differs from the felt round it (Otsu's threshold on the
    difference, in a window a fifth of a card bigger each way) is the card, to a pixel, when it
    is a card's size (`card_area`, the deck's on this photo; else the outline's own): the
    detector's outline may be off by more than its size (a 7s taken with half its neighbour)."""
    q = np.asarray(corners, np.float64)
    pad = round(OUTLINE_PAD * _length(q)) + 2
    h, w = frame.shape[:2]
    x0, y0 = max(int(q[:, 0].min()) - pad, 0), max(int(q[:, 1].min()) - pad, 0)
    x1, y1 = min(int(q[:, 0].max()) + pad + 1, w), min(int(q[:, 1].max()) + pad + 1, h)
    win = frame[y0:y1, x0:x1]
    if win.size == 0 or min(win.shape[:2]) < 8:
        return q
    rim = np.concatenate([win[0], win[-1], win[:, 0], win[:, -1]]).astype(np.float32)
    off = win.astype(np.float32) - np.median(rim, axis=0)
    # lighter than the felt first: a card's face is paper, and its shadow, darker than the felt,
    # is then no part of it; a card no lighter than the felt round it by its difference either way
    area = card_area or cv2.contourArea(q.astype(np.float32))
    box = _paper_box(off.max(axis=2), q, (x0, y0), area)
    if box is None:
        box = _paper_box(np.abs(off).sum(axis=2), q, (x0, y0), area)
    if box is None:
        return q
    return canonical_order(box)  # clockwise from a short side: warped upright, as the detector's


def enrol_from_photos(
    frames: list[np.ndarray],
    order: list[str] | None = None,
    detector=None,
    min_confidence: float = MIN_CONFIDENCE,
) -> Enrolment:
    """The deck's pictures from photos of it laid out face up (see the module docstring)."""
    if detector is None:
        from vision.detect import Detector

        # no time budget: a frame of 52 cards takes about 0.6 s to read whole, and an enrolment is
        # done once, where a card left unread at the budget would be a card missing
        detector = Detector(budget_ms=None)
    out = Enrolment()
    for k, frame in enumerate(frames):
        out.found.extend(cards_on(frame, k, detector))
    down = [c for c in out.found if c.face == "down" and c.confidence >= SURE_BACK]
    up = [c for c in out.found if not any(c is d for d in down)]
    if down:
        back = max(down, key=lambda c: c.confidence)
        out.cards["back"], back.given = back.canon, "back"
        if len(down) > 1:
            out.warnings.append(
                f"{len(down)} cards face down ({', '.join(c.where() for c in down)}): the back is taken from "
                f"{max(down, key=lambda c: c.confidence).where()}"
            )
    if order is not None:
        _by_order(out, up, order)
    else:
        _by_reading(out, up, min_confidence)
    missing = [c for c in ALL_CODES if c not in out.cards]
    if missing and not any(p.startswith("found ") for p in out.problems):
        out.problems.append("missing: " + ", ".join(missing))
    return out


def _by_order(out: Enrolment, up: list[TableCard], order: list[str]) -> None:
    """Codes by place: the nth card face up in reading order (photos in turn) is order[n]. The
    built-in reader, where sure of another code, is noted: a card laid in the wrong place."""
    if len(up) != len(order):
        out.problems.append(
            f"found {len(up)} cards face up, the order names {len(order)}: every card must show whole, "
            "a finger's width from the others"
        )
        return
    for card, code in zip(up, order, strict=True):
        out.cards[code], card.given = card.canon, code
        if card.code is not None and card.code != code and card.confidence >= MIN_CONFIDENCE:
            out.warnings.append(
                f"{card.where()}: the order says {code}, the built-in reader is sure it is {card.code} "
                f"({card.confidence:.2f}): check the layout (a deck with its own index letters may be right)"
            )


def _by_reading(out: Enrolment, up: list[TableCard], min_confidence: float) -> None:
    """Codes by the built-in reader, where it is sure; a code read twice is a problem for both."""
    by_code: dict[str, list[TableCard]] = {}
    for card in up:
        if card.code is None or card.confidence < min_confidence:
            read = "not read" if card.code is None else f"read {card.code} at only {card.confidence:.2f}"
            out.problems.append(f"{card.where()}: {read} (lay the deck in order and give --rows or --order)")
            continue
        by_code.setdefault(card.code, []).append(card)
    for code, cards in by_code.items():
        if len(cards) > 1:
            out.problems.append(f"{code} read twice: " + ", ".join(c.where() for c in cards))
            continue
        out.cards[code], cards[0].given = cards[0].canon, code


def _length(corners) -> float:
    q = np.asarray(corners, np.float64)
    sides = [float(np.linalg.norm(q[(i + 1) % 4] - q[i])) for i in range(4)]
    return max(sides)


def _paper_box(diff: np.ndarray, q: np.ndarray, origin, card_area: float) -> np.ndarray | None:
    """The smallest rectangle round the part of `diff` (a window's difference from its felt) that
    Otsu's threshold sets apart and the card's centre lies in, in frame pixels; None where that part
    touches the window's edge (the card is not alone) or is not `card_area` (within OUTLINE_AREA)."""
    x0, y0 = origin
    d = cv2.GaussianBlur(np.clip(diff, 0, 255).astype(np.uint8), (3, 3), 0)
    _t, mask = cv2.threshold(d, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, labels, stats, _c = cv2.connectedComponentsWithStats(mask, connectivity=8)
    if n < 2:
        return None
    centre = np.round(q.mean(axis=0) - (x0, y0)).astype(int)
    cy, cx = min(max(centre[1], 0), mask.shape[0] - 1), min(max(centre[0], 0), mask.shape[1] - 1)
    k = labels[cy, cx] or 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    ys, xs = np.nonzero(labels == k)
    if xs.min() == 0 or ys.min() == 0 or xs.max() == mask.shape[1] - 1 or ys.max() == mask.shape[0] - 1:
        return None
    rect = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
    if not (1 / OUTLINE_AREA <= rect[1][0] * rect[1][1] / max(card_area, 1.0) <= OUTLINE_AREA):
        return None
    return cv2.boxPoints(rect).astype(np.float64) + np.array([x0, y0], np.float64)


def write_cards(enrolment: Enrolment, folder) -> list[str]:
    """Each picture as `vision enroll` reads a deck folder (As.png, ..., back.png), and each card
    that got no code as unread-<photo>-<row>-<card>.png, to be looked at and renamed. The names
    written, in order."""
    d = Path(folder)
    d.mkdir(parents=True, exist_ok=True)
    names = [_write(d, f"{code}.png", canon) for code, canon in enrolment.cards.items()]
    for card in enrolment.found:
        if card.given is None and not (card.face == "down" and card.confidence >= SURE_BACK):
            names.append(
                _write(d, f"unread-{card.photo + 1}-{card.row + 1}-{card.place + 1}.png", card.canon)
            )
    return names


def _write(folder: Path, name: str, picture: np.ndarray) -> str:
    if not cv2.imwrite(str(folder / name), picture):
        raise OSError(f"cannot write {folder / name}")
    return name


def draw_enrolment(frame: np.ndarray, enrolment: Enrolment, photo: int) -> np.ndarray:
    """One photo with what enrolment made of it, for the installer to check by looking: each card's
    fitted outline, green with the code its picture was enrolled as, orange with '?' where it got
    none (the problems name it by row and place)."""
    from vision.overlay import DOWN, UP, Labels

    out = frame.copy()
    t = max(1, round(frame.shape[1] / 900))
    labels = Labels(out, t)
    for card in enrolment.found:
        if card.photo != photo:
            continue
        colour = UP if card.given else DOWN
        pts = np.round(np.asarray(card.corners)).astype(np.int32)
        cv2.polylines(out, [pts], True, colour, 2 * t, cv2.LINE_AA)
        text = card.given or "?"
        labels.put(text, (int(card.center[0]) - 12 * t, int(card.center[1]) + 5 * t), colour, outline=True)
    return out
