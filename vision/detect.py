"""Find every card (face up or down, overlapped or not) and the dealer button in one frame.

How it works, and why:
- Work on a copy about 960 px wide: cards are still ~35 px there and everything is cheap.
- The felt is whatever colour covers most of the table, lit unevenly: a coarse median of the frame
  (windows several cards wide) gives the felt as the camera sees it at each point; anything that
  differs enough from it is an object. Soft shadows only darken the felt a little and stay felt.
- A blob of objects is split into cards with the card's known shape: every convex right-angle
  corner of its outline proposes a card rectangle of the card's size; proposals that lie inside the
  blob and are backed by several corners are kept. That finds the lower of two overlapping hole
  cards from the two or three corners it shows.
- What no card explains is looked at as discs: chips (edge spots round the rim) and the dealer
  button (a plain rim, lettering in the middle) are told apart by those marks, not by colour.
- Each card is warped straight from the full-resolution frame for face up/down and reading.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import time
from dataclasses import dataclass, field
from functools import lru_cache

import cv2
import numpy as np

from vision.cardnet import CardNet, load_cardnet
from vision.cardnet import refine as refine_net_corners
from vision.chip_rim import in_a_chip_rim
from vision.confidence import calibrated
from vision.confidence import load as load_calibration
from vision.detect_quads import (
    CHANGE_CELL,
    WINDOW_SHARE,
    Quad,
    _box_meets,
    canonical_order,
    card_probability,
    change_map,
    changed_region,
    clockwise,
    find_cards,
    load_verifier,
    work_picture,
)
from vision.edge_cards import MIN_IN_VIEW, SIZE_SPAN, card_beyond_edge
from vision.polygons import area as polygon_area
from vision.polygons import intersection_area, share_of_smaller
from vision.polygons import iou as polygon_iou
from vision.read import (
    BUILTIN_SURE,
    BUILTIN_TRUSTED,
    LOOK_ALIKE_MARGIN,
    BuiltinReader,
    DeckModel,
    ReadResult,
    judge_face,
    load_model,
    network_down,
)

DEBUG = False
SUPPORT_WEIGHT = 0.3
INNER_WEIGHT = 0.3
MIN_OWN = 0.15  # of a card's area: less than that in view and nobody could tell it is there
# a card proposed beside another in a blob (the next card of a row, no corner of its own in view) must
# lie this much inside the blob (one proposed at a corner of the outline, 0.88)
NEIGHBOUR_COVER = 0.93
# ... and a row is walked this many cards in from a card proposed at a corner: five board cards laid
# edge to edge put their middle card two from either end (a chip on one end: four from the other)
ROW_HOPS = 4
EDGE_OUTER = 0.6
WALLED_AREA = 1.25  # of a card: a blob taken for one card that is this much bigger is looked at again
EDGE_STRONG = 80  # |dx|+|dy| of a 3x3 Sobel on 8-bit grey: a printed line, not felt grain or a shadow
_LOG_SCALE = 45.0
_LOG_LUT = np.round(_LOG_SCALE * np.log(np.arange(256) + 12.0)).astype(np.uint8)
_LOG_BRIGHT = round(_LOG_SCALE * np.log(1.3))  # brighter than the felt by 30 %: an object
_LOG_DARK = round(_LOG_SCALE * np.log(0.6))  # darker than a soft shadow
_LOG_CHROMA = round(_LOG_SCALE * 0.2)  # a channel 20 % off the others, relative to the felt
CARD_ASPECT = 88.0 / 63.0
PRIOR_SPAN = 0.15  # a card width measured this far from the known one is another size
PRIOR_SHARE = 0.4  # ... and the known one stands when this share of as many sides agree with it
BUDGET_MS = 500.0  # CPU ms: a frame's detection stops here, whatever is on it, and reports what it found
# a photograph given to `vision detect` is not a camera frame (nothing waits for the next one): still
# bounded, but loose enough that a slower or busier machine than this one reads the same cards
STILL_BUDGET_MS = 4 * BUDGET_MS
MAX_PIXELS = 3840 * 2160 * 1.1  # a bigger picture is thinned by a stride before any other work
SEARCH_SHARE = 0.7  # ... and the felt stage's searches until this share: the rest is for reading
COMBO_CHECK = 32  # _split_blob looks at the clock after this many proposals or combinations of cards
SIZE_SHARE = 0.25  # ... of the budget: the last-resort search over card sizes stops here (blobs and reading need the rest)
FELT_MARGIN = 0.06  # of the picture's long side: a tracked table's changed part is grown so (about a card)
QUAD_SHARE = 0.4  # of the budget: the proposal+verifier stage may use this much, the felt stage the rest
DROP_BELOW = 0.02  # a lone felt-stage card the verifier gives less than this is not a card
REPLACE_MARGIN = 0.75  # a verified card this much more likely replaces the felt-stage cards under it
REPLACE_SURE = 0.95  # ... if the verifier is at least this sure of it
SIZE_SURE = 0.8  # verified cards this likely give the frame's card size (over the outlines' sides)
SMALL_SHARE = 0.5  # of the sure cards' width: narrower than that (perspective never halves it) is no card
KNOWN_SIZE_SPAN = (0.6, 1.6)  # a verified card's width over a calibrated layout's card width, to be one
PAPER_SHARE = 0.25  # felt-stage cards narrower than this share of a verified card they lie on are its print
# a verified card touching found cards is added, when the verifier is sure of it, unless this share
# of it is already a found card: a false felt-stage card touching it (a white card on a white sheet)
# no longer hides it (edje, the development source: recall 0.801 -> 0.835 with this stop's other
# changes; a share of 0.1, tried with the first form of this rule, gave 0.816)
ADD_OVERLAP = 0.3
# a felt-stage disc on a verified card is no chip when narrower than this share of the card's width
# (a chip is 39 mm across, a card 63 mm wide: 0.62; a round pip is 0.3-0.45), nor when centred on the
# card (within DISC_CARD_OFF of its width) and at most DISC_CARD_SIZE of it wide: the card itself
# taken for a round blob
CHIP_MIN_SHARE = 0.5
DISC_CARD_OFF = 0.2
CHIP_ROW = 2  # chips on a verified card that make it a row of touching chips (one is a card protector)
DISC_CARD_SIZE = 1.4
# felt-stage cards under a card the verifier is sure of are pieces of it (the felt stage cut it in
# strips at a wrong card size), not cards of their own, when each lies on it and is smaller than this
# share of it: two overlapping cards of one deck are each about half their joint outline or more
PIECE_AREA = 0.4
# felt-stage cards of a sure verified card's own size (width and length within this share) that lie
# partly on it are misplaced copies of it (a blob grown by a shadow or the grain round one card,
# explained by four overlapping cards at the right size, each on a corner of it): one card of one
# deck cannot cover half of another of the same size without being seen as two by the verifier
COPY_SIZE = 0.15
# of the band round an unread card: felt or other cards, and it lies on the table (no chip insert)
FELT_AROUND = 0.8
# a card cut by the picture's edge (vision.edge_cards) is kept where the part in view is read
# surely: calibrated, right nine times in ten; at most this many such outlines are read a frame
EDGE_SURE = 0.9
EDGE_READS = 12
# a verified outline where only unsure cards were found is read (at most this many a frame) and
# replaces them when read surely (`Detector._verified_over_unsure`)
SURE_OVER_UNSURE_READS = 8
# ... the face-up ones, and the face-down ones it covers this much of: a face-down card beside it is
# kept (a hole-card pair with one card shown; the renderer's pairs cover 0.18-0.72 of each other)
DROP_COVER = 0.75
SAME_OUTLINE = 0.6  # polygon IoU over which two outlines are one card's
SAME_CARD = 0.6  # ... it replaces a card found there whose part in view it covers this much of,
REREAD_BELOW = 0.5  # ... read another code at most this surely (more likely wrong than right)
# ... and where its paper is grey: the least saturated quarter of its part in view (HSV saturation,
# 0-255) at most this much over the other face-up cards' (one light), or this at most with none
PAPER_SAT_OVER = 40.0
PAPER_SAT = 80.0
# a card under found cards that no stage found is looked for in the foreground left once they are
# taken out, opened by this share of a card's width (grain and a shadow's rim go, a card's strip in
# view stays); the strip must lie in a card of the found cards' size, its hidden part under them and
# its part in view the strip, each by UNDER_FIT at least; the strip may be this much over a card
UNDER_TRIM = 0.08
UNDER_FIT = 0.75
UNDER_SLACK = 0.1
# the felt's median window (Detector._felt_of), where the cards are longer than it, spans this many
# card lengths: what a 1080p table's 9 cells already span (about 2.4 of its 52 px cards)
FELT_CARDS = 2.4
# verified cards this long for their width (88/63 = 1.4, a little perspective either way) are whole
# ones: in a fan the verifier vouches for the cards under others too, as narrow strips of their full
# length, whose median width is a strip's
WHOLE_ASPECT = (1.25, 1.6)
# ... and when the outlines' sides measure the cards under this share of the whole ones' width (a
# tilted camera changes a card's width across the picture by less), the whole cards' size stands
WHOLE_SHARE = 0.75
# a felt-stage card the verifier is sure is none, lying across two or more cards it is sure of that
# cover this share of it between them (cards laid edge to edge, cut at the wrong size or turned the
# wrong way), is dropped: those cards are what is there
ACROSS_SHARE = 0.75
# a lone felt-stage card the verifier doubts is dropped when its read is this unsure (chosen on
# roboflow: precision 0.632 -> 0.643 with no recall lost)
DOUBTFUL_CONF = 0.2
BLOB_FILL = 0.9  # ... unless it is its whole blob, this much by IoU (a clean card outline, not grain)
PRINTED_STD = 12.0  # grey levels: a printed back spreads this much or more, a flat black thing 3-4 (noise)
QUAD_ADD = 0.5  # a verified card the felt stage did not find is added when the verifier is this sure
NET_ACCEPT = (
    0.3  # the card network's centre heat: at least this and its card is looked at (vision/cardnet.py)
)
NET_ADD = (
    0.5  # ... and a card nothing else found is added when its heat or the verifier's probability is this
)
NET_OVERLAP = 0.3  # a network card overlapping a found card by this share of the smaller is that card
# px: a card only a later stage finds (the network, or the verifier with no felt-stage card under
# it) that is narrower (a chip's edge spot, a pip) is nothing anyone could read
ADDED_MIN_WIDTH = 16.0
NET_SIZE_SPAN = 0.25  # the cards of one deck are one size and shape: with two or more cards found, a network
# card whose width or length-to-width ratio is off theirs (median) by more than this share is none (a chip)
# A J, Q or K is told apart by the letter of its index alone. On a card this narrow (full px) the letter
# is about 4 px tall and the three letters blur into one shape: the rank read is a guess, and its
# confidence says so (see _court_too_small).
COURT_MIN_WIDTH = 30.0
SMALL_COURT_CONFIDENCE = 0.3
# an enrolled reading less sure than this (DeckModel.read: 0.5 + 2.5 x the templates' margin, so the
# margin vision.read.LOOK_ALIKE_MARGIN) is settled by the built-in reader when it is at least
# SETTLES_ENROLLED sure, calibrated, of one of the templates' likeliest codes (Detector._settled_by_builtin)
ENROLLED_UNSURE = 0.5 + 2.5 * LOOK_ALIKE_MARGIN
SETTLES_ENROLLED = 0.9
AGREED = 0.99  # the confidence of a code the enrolled templates and the built-in reader both read (_enrolled_reading)
CANON_W, CANON_H = 100, 140  # canonical card warp for face and reading
# tracked frames: compared with the last frame looked at in full on a picture 480-960 px wide
# (halvings of the frame, 4K sampled down to 960 first: about 1 ms); where nothing there is off by more than
# STILL_LEVEL in a channel at more than STILL_POINTS points, nothing moved and that frame's finds
# stand. A card of the smallest size (25 px) still covers ~6x8 points there, and a card moved by one
# pixel changes its whole rim by a quarter of its contrast; sensor noise is averaged away
STILL_LEVEL = 24
STILL_POINTS = 4
# a tracked card's earlier read stands while it has not moved and none of these places across it
# (fractions of its half-sides from its centre) changed by more than LOOK_CHANGED grey levels
# (averaged over 5x5 px and the three channels; sensor noise averages to a level or two)
SIGNATURE_PLACES = (
    (0, 0), (0.5, 0.5), (-0.5, 0.5), (0.5, -0.5), (-0.5, -0.5), (0, 0.6), (0, -0.6),
    (0.7, 0.78), (-0.7, 0.78), (0.7, -0.78), (-0.7, -0.78),
)  # fmt: skip
LOOK_CHANGED = 25.0
# a tracked frame where something moved looks for cards' outlines again only round what changed
# (vision.detect_quads.changed_region); past this share of the picture, everywhere
CHANGE_MAX_SHARE = 0.5


@dataclass
class CardObs:
    face: str  # 'up' | 'down'
    code: str | None
    confidence: float
    center: tuple[float, float]
    corners: list[tuple[float, float]]  # clockwise, pixels
    occluded: bool = False  # another card lies on part of it

    def to_dict(self) -> dict:
        return {
            "face": self.face,
            "code": self.code,
            "confidence": round(float(self.confidence), 3),
            "center": [round(float(self.center[0]), 1), round(float(self.center[1]), 1)],
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners],
        }


@dataclass
class ButtonObs:
    center: tuple[float, float]
    radius: float
    confidence: float

    def to_dict(self) -> dict:
        return {
            "center": [round(float(self.center[0]), 1), round(float(self.center[1]), 1)],
            "radius": round(float(self.radius), 1),
            "confidence": round(float(self.confidence), 3),
        }


@dataclass
class DetectionResult:
    width: int
    height: int
    cards: list[CardObs] = field(default_factory=list)
    button: ButtonObs | None = None
    discs: list[dict] = field(default_factory=list)  # chips and other round things, for overlays
    ms: float = 0.0
    truncated: bool = False  # the time budget ran out: what was found until then

    def to_dict(self, image: str | None = None) -> dict:
        d: dict = {} if image is None else {"image": image}
        d.update(
            {
                "width": self.width,
                "height": self.height,
                "cards": [c.to_dict() for c in self.cards],
                "button": self.button.to_dict() if self.button else None,
                "ms": round(self.ms, 2),
            }
        )
        if self.truncated:
            d["truncated"] = True
        return d


@dataclass
class _Rect:
    corners: np.ndarray  # 4x2 work px, clockwise
    votes: int
    coverage: float
    order: int = 0  # higher = on top


class _OutOfTime(Exception):
    """The frame's time budget is spent (raised inside the felt stage's searches)."""


class Detector:
    """Cards and button in a BGR frame. `track=True` reuses reads of cards that have not moved.

    `budget_ms` bounds a frame's cost: the stages look at the clock between steps and, once it is
    spent, report what they found with `truncated` set (None: no bound)."""

    def __init__(
        self,
        deck_model_path: str | None = None,
        *,
        layout=None,
        track: bool = False,
        work_width: int = 960,
        budget_ms: float | None = BUDGET_MS,
        verifier_path: str | None = None,
        calibration: str | bool | None = None,
        cardnet: str | bool | None = None,
    ) -> None:
        self.model: DeckModel | None = load_model(deck_model_path) if deck_model_path else None
        self.verifier = load_verifier(verifier_path)
        # the card detector network (vision/cardnet.py), an extra stage that adds the cards it sees and
        # the others missed: off by default (None or False: on rendered and real tables it has not yet
        # paid for its ~35 ms a frame, docs/vision.md), True the shipped one, a path that file
        self.cardnet: CardNet | None = (
            None if cardnet in (None, False) else load_cardnet(None if cardnet is True else cardnet)
        )
        # the built-in reader's raw score -> how often such a read is right (vision/confidence.py);
        # False: the raw score (to fit a calibration), a path: that map, None: the shipped one
        self.calibrate = None if calibration is False else load_calibration(calibration or None)
        self.budget_ms = budget_ms
        self._felt_card: float | None = None  # a whole card's length on the felt stage's picture
        self._deadline: float | None = None
        self._search_deadline: float | None = None
        self._size_deadline: float | None = None
        self._truncated = False
        self._quad_widths: list[float] = []
        self._sure_widths: list[float] = []
        self._whole_widths: list[float] = []  # ... of those, the ones shaped like a whole card (WHOLE_ASPECT)
        self._aspect = CARD_ASPECT  # length over width of this frame's cards
        self._sure_aspect = CARD_ASPECT
        self._sized_by_quads = False  # this frame's card size is the verified cards' (see _card_width)
        self._doubtful: set[int] = set()  # ids of felt-stage cards the verifier doubts
        self._quad_memo: tuple | None = None  # (thumbnail, verified cards) of the last frame
        self._felt_memo: tuple | None = None  # (felt, mask, strong edges) of the quad memo's frame
        self._still: tuple | None = None  # (small picture, result) of the last frame looked at in full
        self._rim_memo: dict[tuple, bool] = {}  # tracking: unread cards' outlines -> chip inserts or not
        self.builtin = BuiltinReader()
        self.layout = layout
        self.track = track
        self.work_width = work_width
        # (corners full px, face, code, conf, look signature, refined) of the last frame's cards
        self._memo: list[tuple] = []
        self._last_memo: list[tuple] = []  # ... while a frame is looked at, the one before's
        self._memo_now: list[tuple] = []  # ... and this frame's, so far
        self.card_width_hint: float | None = None  # full-res px, learnt from frames
        self._blob_memo: list = []
        self._disc_memo: list = []
        self._full_size: list = []  # (centre, width, length) full px of cards measured whole lately

    # -- public ------------------------------------------------------------------------------
    def detect(self, frame_bgr: np.ndarray) -> DetectionResult:
        t0 = time.perf_counter()
        c0 = time.thread_time()  # the budget is this thread's CPU time: a busy machine does not cut it
        budget = self.budget_ms / 1000.0 if self.budget_ms else None
        self._deadline = c0 + budget if budget else None
        # the felt stage's searches stop earlier, so the cards found still get read
        self._search_deadline = c0 + SEARCH_SHARE * budget if budget else None
        self._size_deadline = c0 + SIZE_SHARE * budget if budget else None
        self._truncated = False
        self._doubtful, self._clean_blob = set(), set()
        frame = _as_bgr(frame_bgr)
        h, w = frame.shape[:2]
        stride = 1
        while h * w / (stride * stride) > MAX_PIXELS:  # pixel budget, checked before any heavy work
            stride += 1
        if stride > 1:
            frame = np.ascontiguousarray(frame[::stride, ::stride])
        quads, qwork, net, at_edge = [], None, [], []
        region, refreshed = None, False  # where a tracked table changed (proposal work px)
        still_key = None
        if self.track:
            still_key = _still_picture(frame)
            same = self._still_frame(still_key)
            if same is not None:
                same.ms = (time.perf_counter() - t0) * 1000
                return same
        # reads of the last frame looked at in full, recalled for cards that have not moved (every
        # stage's: the felt stage's and the cards the verifier adds); this frame's, for the next
        self._last_memo, self._memo_now = self._memo, []
        if self.verifier is not None:
            qwork = work_picture(frame)
            thumb = cv2.resize(qwork[0], (48, 27), interpolation=cv2.INTER_AREA).astype(np.int16)
            last = self._quad_memo
            if self.track and last is not None and np.abs(last[0] - thumb).max() < 10:
                quads, net = last[1], last[2]  # the same table as a frame ago: its verified cards again
                at_edge = last[4]
            else:
                quad_deadline = c0 + QUAD_SHARE * budget if budget else None
                cmap = change_map(qwork[0]) if self.track else None
                region = self._changed(last, cmap, qwork[0].shape)
                if region == ():  # nothing changed that a card could be made of
                    quads, cut, at_edge = last[1], False, last[4]
                else:
                    quads, cut = find_cards(
                        frame, self.verifier, quad_deadline, work=qwork, region=region,
                        previous=last[1] if region is not None else [], late=self._search_deadline,
                        at_edge=at_edge,
                    )  # fmt: skip
                    if region is not None:  # outside the change, the outlines at the edge are as they were
                        at_edge += [c for c in last[4] if not _box_meets(cv2.boundingRect(c), region)]
                net = self._net_cards(frame, qwork) if self.cardnet is not None else []
                self._truncated |= cut
                if self.track and not cut:
                    self._quad_memo = (thumb, quads, net, cmap, at_edge)
                    refreshed = True
        if quads and self.layout is not None and self.layout.card_width_known:
            # a calibrated table knows its deck's card size: a "card" the verifier vouches for at
            # another size is not one of them (an overlapping hole-card pair's near-square outline,
            # 2x a card wide, which would otherwise make every real card look too small to keep)
            known = self.layout.card_width_px() / stride
            lo, hi = KNOWN_SIZE_SPAN
            quads = [q for q in quads if lo <= _card_dims(q.corners)[0] / known <= hi]
            net = [q for q in net if lo <= _card_dims(q.corners)[0] / known <= hi]
        dims = [_card_dims(q.corners) for q in quads]
        self._quad_widths = [w for w, _l in dims]
        sure_dims = [d for d, q in zip(dims, quads, strict=True) if q.score >= SIZE_SURE]
        self._sure_widths = [w for w, _l in sure_dims]
        self._whole_dims = [(w, ln) for w, ln in sure_dims if WHOLE_ASPECT[0] <= ln / w <= WHOLE_ASPECT[1]]
        self._whole_widths = [w for w, _ln in self._whole_dims]
        # a photo squeezed to a square (dataset exports) makes cards 2.4 long to 1 wide: the felt
        # stage, looking for 1.4, then split every card into halves
        self._sure_aspect = float(np.median([ln / w for w, ln in sure_dims])) if sure_dims else CARD_ASPECT
        work, scale = self._work_image(frame)
        # the felt's window knows the cards' length where the verifier is sure of two whole ones
        whole_lengths = [ln for w_, ln in sure_dims if WHOLE_ASPECT[0] <= ln / w_ <= WHOLE_ASPECT[1]]
        self._felt_card = scale * float(np.median(whole_lengths)) if len(whole_lengths) >= 2 else None
        window = self._felt_window(region, qwork, work.shape, scale)
        mask, gray = self._foreground(work, window)
        if refreshed:
            self._felt_memo = (self._felt, mask, self._strong)
        self._work = work
        rects, leftovers, card_w = self._cards(mask, gray, scale)
        if self.verifier is not None and rects:
            rects, leftovers = self._verified(rects, leftovers, quads, qwork, scale)
        button, discs = self._discs(frame, mask, leftovers, rects, scale, card_w)
        # a verified card where the felt stage saw round things (a row of touching chips) is not one,
        # unless the verifier is sure, or the round things are the card itself or its print (on a
        # surface that is not felt, a white card on a pale bed sheet, the felt stage takes a card it
        # could not split for a round blob centred on it), or there is only one (`_chip_row`)
        sure = [q for q in quads if q.score >= REPLACE_SURE]
        quads = [q for q in quads if any(q is t for t in sure) or not _chip_row(q.corners, discs)]
        on_cards = [
            q for q in quads if any(q is t for t in sure) or any(_on_disc(q.corners, d) for d in discs)
        ]
        if on_cards:
            button = _button_off_cards(button, discs, on_cards)
        # verified cards clear of every felt-stage card are read first: on a cluttered photo the felt
        # stage's many doubtful finds would otherwise spend the budget and leave them unread
        felt_polys = [r.corners / scale for r in rects]
        clear = [q for q in quads if not any(_overlap(q.corners, p) for p in felt_polys)]
        first = self._quad_cards(frame, clear, [])
        cards = self._describe(frame, rects, scale)
        if self._doubtful:
            cards = [
                c
                for c, r in zip(cards, rects, strict=True)
                if not (
                    id(r) in self._doubtful
                    and (c.face == "down" or c.code is None or c.confidence < DOUBTFUL_CONF)
                    and not (c.face == "down" and id(r) in self._clean_blob and self._surely_a_back(frame, c))
                )
            ]
        cards += first
        cards += self._quad_cards(frame, [q for q in quads if not any(q is c for c in clear)], cards)
        cards += self._net_only_cards(frame, net, cards, discs)
        if not self._out_of_time():
            cards += self._cards_under(frame, cards, mask, scale, discs)
        cards = self._verified_over_unsure(frame, quads, cards)
        if at_edge and qwork is not None:
            cards = self._cards_cut_by_edge(frame, at_edge, qwork, cards, card_w / scale, stride)
        cards = self._without_chip_inserts(frame, cards, mask, scale)
        if stride > 1:
            _scale_result(cards, button, discs, stride)
        if self.track:
            self._memo = self._memo_now
        res = DetectionResult(w, h, cards, button, discs, truncated=self._truncated)
        # a frame cut short is never the reference: the next one is looked at again (and reads the rest)
        self._still = None if self._truncated or still_key is None else (still_key, copy.deepcopy(res))
        res.ms = (time.perf_counter() - t0) * 1000
        return res

    def _still_frame(self, key: np.ndarray) -> DetectionResult | None:
        """The finds of the last frame looked at in full, when this one shows the same table (see
        STILL_LEVEL), else None. Compared with that frame, not the one before, so that slow changes
        (a card pushed a pixel a frame, light fading) add up and are seen."""
        if self._still is None or self._still[0].shape != key.shape:
            return None
        diff = cv2.absdiff(key, self._still[0]).reshape(key.shape[0], -1)
        moved = cv2.countNonZero(cv2.threshold(diff, STILL_LEVEL, 255, cv2.THRESH_BINARY)[1])
        if moved > STILL_POINTS:
            return None
        return copy.deepcopy(self._still[1])

    def _out_of_time(self) -> bool:
        if self._deadline is not None and time.thread_time() > self._deadline:
            self._truncated = True
            return True
        return False

    def _verified(self, rects, leftovers, quads, qwork, scale):
        """The felt stage's cards, judged by the verifier. Dropped: one it is sure is not a card,
        lying clear of any other card or touching only others it is as sure of, that the reader then
        finds face down or cannot read (a patch
        of wood grain, a pip taken for a small card, a phone's black screen; see `detect`; a lone
        card drawn on the felt gets >= 0.79 from it, 121 of 121 on rendered tables), and any that a verified whole
        card overlaps when that one is far more card-like (a card the felt
        stage cut wrong, or two cards taken for one); the verified card then takes their place. So do
        the felt-stage pieces of a card it is sure of (`_pieces_of`) and its misplaced copies
        (`_copies_of`), and a felt-stage card it is sure
        is none that lies across cards it is sure of (`_across_cards`)."""
        polys = [r.corners / scale for r in rects]
        p = card_probability(self.verifier, qwork, polys)
        keep = [True] * len(rects)
        self._doubtful, self._clean_blob = set(), set()
        alone = [
            not any(j != i and _overlap(polys[i], polys[j]) for j in range(len(polys)))
            for i in range(len(polys))
        ]
        for i, r in enumerate(rects):
            near_quad = any(_overlap(polys[i], q.corners) for q in quads)
            # alone, or overlapping only felt-stage cards the verifier is as sure are none (a
            # laptop's edge or a cup's rim cut into a row of small "cards", roboflow PXL_*)
            lonely = alone[i] or all(
                p[j] < DROP_BELOW for j in range(len(polys)) if j != i and _overlap(polys[i], polys[j])
            )
            if lonely and not near_quad and p[i] < DROP_BELOW:
                self._doubtful.add(id(r))  # dropped if it also shows no face or an unreadable one
                if _fills_its_blob(r, leftovers):
                    self._clean_blob.add(id(r))
        for q in quads:
            under = [i for i in range(len(rects)) if share_of_smaller(polys[i], q.corners) > 0.3]
            same = [i for i in under if polygon_iou(polys[i], q.corners) > 0.6]
            if same:
                # both stages found this card; the others under it are cards it lies on. When the
                # frame's size came from the verified cards (a close-up photo), the felt stage's fit
                # of a lone card is a few pixels off all round and misreads the index (6h read 5h):
                # the verified outline stands
                if self._sized_by_quads and q.score >= REPLACE_SURE and alone[same[0]]:
                    keep[same[0]] = False
                continue
            qw = _card_dims(q.corners)[0]
            if under and all(_card_dims(polys[i])[0] < PAPER_SHARE * qw for i in under):
                # the felt stage took the print of one big card (pips, foil specks) for cards: the
                # cards of one deck are one size, and these lie on a card-shaped paper the
                # verifier vouches for that is many times wider
                for i in under:
                    keep[i] = False
                continue
            # pieces of this card, or misplaced copies of it at its own size: none the verifier
            # takes for a card itself (SIZE_SURE)
            found = [polys[i] for i in under]
            if (
                under
                and q.score >= REPLACE_SURE
                and all(p[i] < SIZE_SURE for i in under)
                and (_pieces_of(q.corners, found) or _copies_of(q.corners, found))
            ):
                for i in under:
                    keep[i] = False
                continue
            if any(_overlap(polys[i], polys[j]) for i in under for j in range(len(polys)) if i != j):
                continue  # overlapping cards (a hole-card pair): the felt stage's own kind of find
            if under and q.score >= REPLACE_SURE and all(p[i] < q.score - REPLACE_MARGIN for i in under):
                for i in under:
                    keep[i] = False
        # a felt-stage card the verifier is sure is none, lying across cards it is sure of
        sure_q = [q.corners for q in quads if q.score >= REPLACE_SURE]
        for i in range(len(rects)):
            if keep[i] and p[i] < DROP_BELOW and _across_cards(polys[i], sure_q):
                keep[i] = False
        # the cards of one deck are one size: a felt-stage "card" far smaller than the cards the
        # verifier is sure of (a speck of a foil or grain texture, a pip) is none
        sure_w = [_card_dims(q)[0] for q in sure_q]
        if sure_w:
            small = SMALL_SHARE * float(np.median(sure_w))
            for i in range(len(rects)):
                if _card_dims(polys[i])[0] < small:
                    keep[i] = False
        if all(keep):
            return rects, leftovers
        dropped = {id(r) for r, k in zip(rects, keep, strict=True) if not k}
        rects = [r for r, k in zip(rects, keep, strict=True) if k]
        leftovers = [(c, [r for r in found if id(r) not in dropped]) for c, found in leftovers]
        return rects, leftovers

    def _surely_a_back(self, frame: np.ndarray, card: CardObs) -> bool:
        """Whether a face-down card shows a card's back: printed (its grey levels spread PRINTED_STD
        or more, where a phone's black screen or a coaster is one flat colour under the sensor's
        noise) and one the face network is sure of (`vision.read.network_down`)."""
        canon, visible, _own = warp_card(frame, np.asarray(card.corners, np.float64), [], [])
        if float(cv2.cvtColor(canon, cv2.COLOR_BGR2GRAY).std()) < PRINTED_STD:
            return False
        return network_down(canon, visible) is not None

    def _cards_under(
        self, frame, cards: list[CardObs], mask: np.ndarray, scale: float, discs
    ) -> list[CardObs]:
        """Cards lying under found cards that no stage found: what is left of the foreground next to
        a found card, once every found card is taken out, as the strip in view of a card of the
        found cards' size whose hidden part lies under them (`_card_under`). On wood or a patterned
        cloth the foreground of a hole-card pair is ragged with grain and shadow, and its lower card
        was lost where the top one was verified alone (edje: a nine under an ace on wood)."""
        whole = [np.asarray(c.corners, np.float64) * scale for c in cards if not c.occluded]
        if not whole:
            return []
        dims = np.median([_card_dims(q) for q in whole], axis=0)
        found = [np.asarray(c.corners, np.float64) * scale for c in cards]
        taken = np.zeros_like(mask)
        for q in found:
            cv2.fillConvexPoly(taken, np.round(q).astype(np.int32), 255)
        grow = max(3, int(UNDER_TRIM * float(dims[0]) + 0.5) | 1)
        left = cv2.bitwise_and(mask, cv2.bitwise_not(cv2.dilate(taken, np.ones((3, 3), np.uint8))))
        left = cv2.morphologyEx(left, cv2.MORPH_OPEN, np.ones((grow, grow), np.uint8))
        n, labels, stats, centres = cv2.connectedComponentsWithStats(left)
        card_area = float(dims[0] * dims[1])
        out: list[CardObs] = []
        for k in range(1, n):
            if not MIN_OWN * card_area <= stats[k, cv2.CC_STAT_AREA] <= 0.9 * card_area:
                continue
            if any(
                d.get("kind") != "card"
                and np.hypot(*(np.asarray(d["center"]) * scale - centres[k])) < float(d["radius"]) * scale
                for d in discs
            ):
                continue  # a chip or the button (not a card the disc search took for a round blob)
            # looked at in a window round the strip a card's length wide each way: the picture is big
            x, y, bw, bh = stats[k, :4]
            reach = int(dims[1]) + grow
            x0, y0 = max(0, x - reach), max(0, y - reach)
            x1, y1 = min(mask.shape[1], x + bw + reach), min(mask.shape[0], y + bh + reach)
            strip = labels[y0:y1, x0:x1] == k
            near = cv2.dilate(taken[y0:y1, x0:x1], np.ones((grow, grow), np.uint8))
            offset = np.array([x0, y0], np.float64)
            under = _card_under(strip, [q - offset for q in found], near, dims)
            if under is None:
                continue
            under = under + offset
            corners = _canonical_order(under / scale)
            covering = [q / scale for q in found if _overlap(q / scale, corners)]
            face, code, conf = self._read(frame, corners, covering, [])
            if face == "down" or code is None or conf < DOUBTFUL_CONF:
                continue  # a shadow's or the grain's strip shows no index (nor does a back's: not told apart)
            out.append(
                CardObs(face, code, conf, tuple(corners.mean(axis=0)), [tuple(p) for p in corners], True)
            )
            found.append(under)
            cv2.fillConvexPoly(taken, np.round(under).astype(np.int32), 255)
        return out

    def _without_chip_inserts(
        self, frame: np.ndarray, cards: list[CardObs], mask: np.ndarray, scale: float
    ) -> list[CardObs]:
        """The cards but those unread that are set into a chip's rim: its inserts (vision.chip_rim; a
        card read face up showed its index). A card the felt (`mask`'s background) and other cards
        mostly surround lies on the table, not in a chip; tracking, an outline where it lay a frame
        ago keeps its verdict (about 1 ms a card otherwise, on every frame something moved in)."""
        verdicts: dict[tuple, bool] = {}
        kept = []
        table = None  # the felt and the cards found: what a card on the table lies among
        for c in cards:
            if c.code is not None:
                kept.append(c)
                continue
            if table is None:
                table = (mask == 0).astype(np.uint8)
                for other in cards:
                    q = np.round(np.asarray(other.corners, np.float64) * scale).astype(np.int32)
                    cv2.fillConvexPoly(table, q, 1)
            key = tuple(np.round(np.asarray(c.corners, np.float64) / 2).astype(int).ravel())
            insert = self._rim_memo.get(key) if self.track else None
            if insert is None:
                on_table = _on_the_table(table, np.asarray(c.corners, np.float64) * scale)
                insert = not on_table and in_a_chip_rim(frame, c.corners)
            verdicts[key] = insert
            if not insert:
                kept.append(c)
        if self.track:
            self._rim_memo = verdicts
        return kept

    def _quad_cards(self, frame: np.ndarray, quads, cards: list[CardObs]) -> list[CardObs]:
        """Verified whole cards the felt stage did not find, read like the others."""
        out: list[CardObs] = []
        have = [np.asarray(c.corners, np.float64) for c in cards]
        for q in quads:
            if q.score < QUAD_ADD or _card_dims(q.corners)[0] < ADDED_MIN_WIDTH:
                continue
            touching = [share_of_smaller(q.corners, o) for o in have if _overlap(q.corners, o)]
            if touching and (q.score < REPLACE_SURE or max(touching) > ADD_OVERLAP):
                continue  # (an unsure outline touching found cards is often the gap between them)
            out.append(self._added_card(frame, q.corners))
            have.append(np.asarray(out[-1].corners, np.float64))
        return out

    def _verified_over_unsure(self, frame: np.ndarray, quads, cards: list[CardObs]) -> list[CardObs]:
        """`cards` with the outlines the verifier vouches for (QUAD_ADD, its bar for adding a card; the
        surest first) that lie where only unsure cards were found (unread, or read under REREAD_BELOW):
        read, and where read face up at EDGE_SURE or surer, in place of those cards. The sure reading
        is the evidence, as for a cut card (`_cards_cut_by_edge`), whose outline no verifier sees."""
        found = [np.asarray(c.corners, np.float64) for c in cards]
        drop: set[int] = set()
        added: list[CardObs] = []
        added_outlines: list[np.ndarray] = []
        reads = 0
        for q in quads:
            if reads >= SURE_OVER_UNSURE_READS or self._out_of_time():
                break
            if q.score < QUAD_ADD or _card_dims(q.corners)[0] < ADDED_MIN_WIDTH:
                continue
            if any(polygon_iou(q.corners, o) > SAME_OUTLINE for o in added_outlines):
                continue  # (a card this stage has added already; the other of a pair is not)
            # (what an earlier one replaced is gone)
            over = [i for i in _lying_on(q.corners, found) if i not in drop]
            if not over or any(
                cards[i].code is not None and cards[i].confidence >= REREAD_BELOW for i in over
            ):
                continue
            if any(polygon_iou(q.corners, found[i]) > SAME_OUTLINE for i in over):
                continue  # (the same card, found already)
            reads += 1
            card = self._added_card(frame, q.corners)
            if card.face == "up" and card.code is not None and card.confidence >= EDGE_SURE:
                drop.update(
                    i
                    for i in over
                    if cards[i].face == "up"
                    or intersection_area(q.corners, found[i]) >= DROP_COVER * polygon_area(found[i])
                )
                added.append(card)
                added_outlines.append(np.asarray(card.corners, np.float64))
        if not added:
            return cards
        return [c for i, c in enumerate(cards) if i not in drop] + added

    def _cards_cut_by_edge(
        self,
        frame: np.ndarray,
        outlines: list[np.ndarray],
        qwork,
        cards: list[CardObs],
        felt_width: float,
        stride: int = 1,
    ) -> list[CardObs]:
        """`cards` with the cards the picture's edge cuts (`vision.edge_cards`), from the outlines
        reaching the border (proposal work px): one is kept where the reader reads a corner index
        in the part in view at EDGE_SURE or surer, on paper as grey as the other cards'
        (`_paper_saturation`: the index network, taught card corners only, was as sure of a code on
        a blue book's cover or a brown cushion as on a card). Where no card was found it is added;
        it replaces the one card found there that reaches the edge and was not read that surely
        (the felt stage fits a cut card's part in view as a smaller whole card, and misreads it),
        unless that card was read another code more likely than not (a pair cut by the edge: the
        outline in view is both cards', and the one under shows its index too).
        The deck's size is a calibrated layout's, else the whole cards' the verifier is sure of,
        else the felt stage's."""
        work, qscale = qwork
        if self.layout is not None and self.layout.card_width_known:
            width = self.layout.card_width_px() / stride
            length = width * CARD_ASPECT
        elif self._whole_dims:
            width = float(np.median([w for w, _l in self._whole_dims]))
            length = float(np.median([ln for _w, ln in self._whole_dims]))
        else:
            width, length = felt_width, felt_width * self._aspect
        size = (work.shape[1], work.shape[0])
        # the least of a card that may be in view (a card half the deck's size, MIN_IN_VIEW of it);
        # several cues give one outline: each box is looked at once
        least = MIN_IN_VIEW * (SIZE_SPAN[0] * qscale) ** 2 * width * length
        cands: list[np.ndarray] = []
        boxes: set = set()
        for c in outlines:
            box = tuple(v // 2 for v in cv2.boundingRect(c))
            if box in boxes or cv2.contourArea(c) < least:
                continue
            boxes.add(box)
            for q in card_beyond_edge(c, size, width * qscale, length * qscale):
                q = q / qscale
                if not any(polygon_iou(q, o) > SAME_OUTLINE for o in cands):
                    cands.append(q)
        if not cands:
            return cards
        have = [np.asarray(c.corners, np.float64) for c in cards]
        ups = [_paper_saturation(frame, np.asarray(c.corners)) for c in cards if c.face == "up"][:EDGE_READS]
        most = (float(np.median(ups)) + PAPER_SAT_OVER) if ups else PAPER_SAT
        out = list(cards)
        replaceable = [_unsure_at_edge(c, frame.shape) for c in cards]
        reads = 0
        for q in cands:
            if reads >= EDGE_READS or self._out_of_time():
                break
            over = _lying_on(q, have)
            if over and (len(over) > 1 or over[0] >= len(cards) or not replaceable[over[0]]):
                continue
            if over:
                seen = _in_picture(have[over[0]], frame.shape)
                if intersection_area(q, seen) < SAME_CARD * polygon_area(seen):
                    continue  # (a card beside it, or the part in view of another card)
            if _paper_saturation(frame, q) > most:
                continue
            reads += 1
            card = self._added_card(frame, q)
            if card.face == "up" and card.code is not None and card.confidence >= EDGE_SURE:
                if over:
                    was = cards[over[0]]
                    if was.code not in (None, card.code) and was.confidence >= REREAD_BELOW:
                        continue  # another code it more likely than not is: two cards there (a pair)
                    out[over[0]], have[over[0]], replaceable[over[0]] = card, q, False
                else:
                    out.append(card)
                    have.append(q)
        return out

    def _added_card(self, frame: np.ndarray, outline: np.ndarray) -> CardObs:
        """A card a later stage adds (nothing lies on it), read like the others while time is left,
        else only face up or down. Tracking, a card that has not moved since the last frame keeps
        its reading there (`_recall`), as the felt stage's do: where a slow core runs out of time on
        every frame of a crowded table, each frame reads the cards the last left unread, not again
        the same first few (a Pi-speed budget read 2, 6, 12, 13, 22, 15 of 28 on six frames)."""
        corners = _canonical_order(outline.astype(np.float64))
        sig = _signature(frame, corners) if self.track else None
        hit = self._recall(corners, sig) if self.track else None
        if hit is not None:
            face, code, conf, _refined = hit
        elif self._out_of_time():
            face, code, conf = self._face_only(frame, corners)
            sig = None if sig is None else sig + 1e6  # never recalled: read it next frame
        else:
            face, code, conf = self._read(frame, corners, [], [])
        if self.track:
            self._memo_now.append((corners, face, code, conf, sig, corners))
        return CardObs(face, code, conf, tuple(corners.mean(axis=0)), [tuple(p) for p in corners])

    def _net_cards(self, frame: np.ndarray, qwork) -> list[Quad]:
        """The network's cards (NET_ACCEPT or surer), their corners put on the rim; each scored by
        the network's heat or the verifier's probability, whichever is higher."""
        found = [c for c in self.cardnet.find(frame) if c.score >= NET_ACCEPT]
        if not found:
            return []
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        corners = [refine_net_corners(gray, c.corners) for c in found]
        p = (
            card_probability(self.verifier, qwork, corners)
            if self.verifier is not None
            else [0.0] * len(found)
        )
        out = [
            Quad(q.astype(np.float32), max(c.score, float(v)), "net")
            for q, c, v in zip(corners, found, p, strict=True)
        ]
        return sorted(out, key=lambda q: -q.score)

    def _net_only_cards(
        self, frame: np.ndarray, net: list[Quad], cards: list[CardObs], discs
    ) -> list[CardObs]:
        """The network's cards that neither stage found (a card on wood grain, in a fan, on a pale
        counter), read like the others; one lying on a chip or the button is not a card."""
        out: list[CardObs] = []
        have = [np.asarray(c.corners, np.float64) for c in cards]
        dims = [_card_dims(c) for c in have]
        width = float(np.median([w for w, _l in dims])) if len(dims) >= 2 else None
        aspect = float(np.median([ln / w for w, ln in dims])) if len(dims) >= 2 else None
        for q in net:
            w, ln = _card_dims(q.corners)
            if q.score < NET_ADD or w < ADDED_MIN_WIDTH:
                continue
            if width is not None and (
                abs(w / width - 1) > NET_SIZE_SPAN or abs(ln / w / aspect - 1) > NET_SIZE_SPAN
            ):
                continue
            if any(_on_disc(q.corners, d) for d in discs):
                continue
            if any(_overlap(q.corners, o) and share_of_smaller(q.corners, o) > NET_OVERLAP for o in have):
                continue
            out.append(self._added_card(frame, q.corners))
            have.append(np.asarray(out[-1].corners, np.float64))
        return out

    @staticmethod
    def _changed(last, cmap, shape) -> tuple[int, int, int, int] | tuple | None:
        """Where a tracked table's picture changed since the cards were last looked for (work px):
        the whole picture (None) for the first frame, another camera size or a change over more
        than CHANGE_MAX_SHARE of it; () where nothing changed."""
        if last is None or cmap is None or last[3].shape != cmap.shape:
            return None
        region = changed_region(last[3], cmap, CHANGE_CELL)
        if region is None:
            return ()
        x0, y0, x1, y1 = region
        if (min(x1, shape[1]) - x0) * (min(y1, shape[0]) - y0) > CHANGE_MAX_SHARE * shape[0] * shape[1]:
            return None
        return region

    def _face_only(self, frame: np.ndarray, corners: np.ndarray):
        """Face up or down without reading (the budget is spent): the cheap paper test."""
        dst = np.float32([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]])
        m = cv2.getPerspectiveTransform(corners.astype(np.float32), dst)
        canon = cv2.warpPerspective(frame, m, (CANON_W, CANON_H), borderMode=cv2.BORDER_REPLICATE)
        down = judge_face(canon, np.full((CANON_H, CANON_W), 255, np.uint8))
        return ("up" if down is None else "down"), None, 0.5

    @staticmethod
    def to_json(result: DetectionResult, image: str | None = None) -> str:
        return json.dumps(result.to_dict(image), separators=(", ", ": "))

    # -- stages ------------------------------------------------------------------------------
    def _work_image(self, frame: np.ndarray) -> tuple[np.ndarray, float]:
        h, w = frame.shape[:2]
        # judged by area, so a portrait photo is shrunk as a landscape one of as many pixels is (a
        # 16:9 frame the same as judging by its width)
        f = math.sqrt(h * w / (self.work_width * self.work_width * 9 / 16))
        if f <= 1.25:
            return frame, 1.0
        k = max(1, round(f))
        if k in (2, 4) and w % k == 0 and h % k == 0:
            small = frame
            while k > 1:  # halving with INTER_AREA is a fast exact path
                small = cv2.resize(
                    small, (small.shape[1] // 2, small.shape[0] // 2), interpolation=cv2.INTER_AREA
                )
                k //= 2
            return small, small.shape[1] / w
        size = (max(1, round(w / f)), max(1, round(h / f)))
        return cv2.resize(frame, size, interpolation=cv2.INTER_LINEAR), size[0] / w

    def _felt_window(self, region, qwork, shape, scale: float) -> tuple[int, int, int, int] | None:
        """Where the felt stage looks again on a tracked table (felt work px): the part round what
        changed since the last frame it looked at in full, grown by FELT_MARGIN of the picture so
        a card there is seen whole; None (the whole picture) for a first frame, another picture
        size or a change over most of it."""
        memo = self._felt_memo
        if region is None or qwork is None or memo is None or memo[1].shape != shape[:2]:
            return None
        h, w = shape[:2]
        if region == ():
            return (0, 0, 0, 0)  # nothing changed
        k = scale / qwork[1]
        grow = _felt_margin(shape)
        x0, y0 = max(int(region[0] * k) - grow, 0), max(int(region[1] * k) - grow, 0)
        x1, y1 = min(int(region[2] * k + 1) + grow, w), min(int(region[3] * k + 1) + grow, h)
        if (x1 - x0) * (y1 - y0) > WINDOW_SHARE * w * h:
            return None
        return x0, y0, x1, y1

    def _foreground(self, work: np.ndarray, window=None) -> tuple[np.ndarray, np.ndarray]:
        """(object mask, grey) of the felt stage's picture. With `window` (x0, y0, x1, y1, a tracked
        table's changed part, `_felt_window`), the mask of the last frame looked at in full with
        that part worked out again on the felt found then (a dealt card: 9-14 -> ~3 ms at 720p)."""
        gray = cv2.cvtColor(work, cv2.COLOR_BGR2GRAY)
        if window is None:
            self._felt = self._felt_of(work, self._felt_card)
            mask, self._strong = self._objects(work, self._felt, gray)
            return mask, gray
        self._felt, mask, strong = self._felt_memo
        mask, self._strong = mask.copy(), strong.copy()
        x0, y0, x1, y1 = window
        if x1 <= x0 or y1 <= y0:
            return mask, gray
        h, w = gray.shape
        # worked out on a wider crop, so what crosses the window's edge is seen as a whole
        grow = _felt_margin(gray.shape)
        cx0, cy0, cx1, cy1 = max(x0 - grow, 0), max(y0 - grow, 0), min(x1 + grow, w), min(y1 + grow, h)
        part, part_strong = self._objects(
            work[cy0:cy1, cx0:cx1], self._felt[cy0:cy1, cx0:cx1], gray[cy0:cy1, cx0:cx1]
        )
        mask[y0:y1, x0:x1] = part[y0 - cy0 : y1 - cy0, x0 - cx0 : x1 - cx0]
        self._strong[y0:y1, x0:x1] = part_strong[y0 - cy0 : y1 - cy0, x0 - cx0 : x1 - cx0]
        return mask, gray

    @staticmethod
    def _felt_of(work: np.ndarray, card_length: float | None = None) -> np.ndarray:
        """The felt's colour at every pixel: a median over coarse cells, averaged over the cells
        that look like felt so objects do not leak into it. Where the cards are known to be
        longer than the median's window (`card_length`, work px: a close-up), the window is made
        FELT_CARDS cards long: inside a card longer than the window the median was the card's own
        white, and its paper no object, only its pips (roboflow IMG_3261's cards at the edge)."""
        h, w = work.shape[:2]
        gw = max(16, w // 14)
        gh = max(9, round(gw * h / w))
        cells = cv2.resize(work, (gw, gh), interpolation=cv2.INTER_AREA)
        k = 9 if min(gw, gh) > 18 else 5
        if card_length and card_length * gw / w >= k:
            k = max(k, min(math.ceil(FELT_CARDS * card_length * gw / w) | 1, (min(gw, gh) - 1) | 1))
        bg0 = cv2.medianBlur(cells, k)
        # refine: average only cells that look like felt, so objects do not leak into the felt
        d = cv2.absdiff(cells, bg0).astype(np.int16).sum(axis=2)
        felt = (d < 40).astype(np.float32)
        num = cv2.blur(cells.astype(np.float32) * felt[:, :, None], (5, 5))
        den = cv2.blur(felt, (5, 5))[:, :, None]
        bg = np.where(den > 0.15, num / np.maximum(den, 1e-3), bg0.astype(np.float32))
        return cv2.resize(np.clip(bg, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_LINEAR)

    @staticmethod
    def _objects(work: np.ndarray, bg_up: np.ndarray, gray: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(object mask, strong edges) of a picture against its felt."""
        # ratio to the local felt, in logs so it is all 8/16-bit integer work: lighting cancels, and
        # brightness (mean of the channels) and colour (a channel off that mean) are judged apart
        d = cv2.subtract(cv2.LUT(work, _LOG_LUT), cv2.LUT(bg_up, _LOG_LUT), dtype=cv2.CV_16S)
        b, g, r = cv2.split(d)
        total = cv2.add(cv2.add(b, g), r)  # 3 x log brightness ratio
        chroma = None
        for c in (b, g, r):
            off = cv2.absdiff(cv2.multiply(c, 3), total)
            chroma = off if chroma is None else cv2.max(chroma, off)
        mask = cv2.bitwise_or(
            cv2.bitwise_or(
                cv2.compare(total, 3 * _LOG_BRIGHT, cv2.CMP_GT), cv2.compare(total, 3 * _LOG_DARK, cv2.CMP_LT)
            ),
            cv2.compare(chroma, 3 * _LOG_CHROMA, cv2.CMP_GT),
        )
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
        # a card back the colour of the felt shows only its printed border: strong edges close that
        # outline, and whatever they enclose is object (the edges themselves are not added)
        gx = cv2.convertScaleAbs(cv2.Sobel(gray, cv2.CV_16S, 1, 0, ksize=3))
        gy = cv2.convertScaleAbs(cv2.Sobel(gray, cv2.CV_16S, 0, 1, ksize=3))
        strong = cv2.compare(cv2.add(gx, gy), EDGE_STRONG, cv2.CMP_GT)
        closed = cv2.bitwise_or(mask, strong)
        outside = cv2.copyMakeBorder(closed, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
        cv2.floodFill(outside, None, (0, 0), 255)
        enclosed = cv2.bitwise_not(outside[1:-1, 1:-1])  # enclosed and not yet object
        holes = cv2.morphologyEx(enclosed, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
        if cv2.countNonZero(holes):
            # a line printed across the back (a highlight's edge) parts it in two: the edges between
            # two such pieces, and the border round them (the rim, a few pixels), are the card too
            walls = cv2.bitwise_or(closed, enclosed)
            holes = cv2.bitwise_and(
                cv2.morphologyEx(holes, cv2.MORPH_CLOSE, np.ones((7, 7), np.uint8)), walls
            )
            holes = cv2.bitwise_or(
                holes, cv2.bitwise_and(cv2.dilate(holes, np.ones((5, 5), np.uint8)), walls)
            )
            mask = cv2.bitwise_or(mask, holes)
        # ink on a card (pips, index) that is darker than the paper but not darker than the felt
        # leaves holes in the card, some touching its rim through a pixel or two: whatever the
        # objects enclose once such gaps are closed is object too, however small
        k3 = np.ones((3, 3), np.uint8)
        grown = cv2.dilate(mask, k3)
        outside = cv2.copyMakeBorder(grown, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
        cv2.floodFill(outside, None, (0, 0), 255)
        inside = cv2.bitwise_or(grown, cv2.bitwise_not(outside[1:-1, 1:-1]))
        mask = cv2.bitwise_or(mask, cv2.erode(inside, k3))
        return mask, strong

    def _cards(self, mask: np.ndarray, gray: np.ndarray, scale: float):
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        min_area = 60.0
        blobs = [c for c in contours if cv2.contourArea(c) >= min_area]
        cw = self._card_width(blobs, mask, gray, scale)
        ch = cw * self._aspect
        rects: list[_Rect] = []
        leftovers = []
        edges = None
        mags: list = []  # the gradient magnitude, worked out once a frame when needed
        memo = []
        for c in blobs:
            area = cv2.contourArea(c)
            if area < 0.35 * cw * ch:
                leftovers.append((c, []))
                continue
            if self._search_deadline is not None and time.thread_time() > self._search_deadline:
                self._truncated = True
                break
            box = cv2.boundingRect(c)
            found = self._blob_recall(box, area, cw) if self.track else None
            if found is None:
                if edges is None:
                    edges = (
                        cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3),
                        cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3),
                    )
                try:
                    found = _split_blob(c, cw, ch, mask, edges, deadline=self._search_deadline)
                except _OutOfTime:
                    self._truncated = True
                    break
                # nothing found, or one card where the blob is more than a card: a card back the
                # colour of the felt, seen again with its printed border as walls
                if not found or (len(found) == 1 and area > WALLED_AREA * cw * ch):
                    walled = _walled(c, cw, mask, self._strong, 1.0)
                    try:
                        again = (
                            _split_blob(walled[0], cw, ch, walled[1], edges, deadline=self._search_deadline)
                            if walled
                            else []
                        )
                    except _OutOfTime:
                        self._truncated, again = True, []
                    if len(again) > len(found):
                        found = again
                # overlapping cards are always in one blob
                _order_overlaps(found, gray, self._work, mags, edges)
            memo.append((box, area, cw, found))
            rects.extend(found)
            leftovers.append((c, found))
        self._blob_memo = memo
        return rects, leftovers, cw

    def _card_width(self, blobs, mask: np.ndarray, gray: np.ndarray, scale: float) -> float:
        """Card width in work pixels. Measured on every frame from the outlines (the sides between
        two sharp corners, cheap); the size found on earlier frames of the same camera or the layout
        settle a frame that shows too little; a search over sizes is the last resort."""
        est = _size_from_outlines(blobs, mask.shape)
        hint = self.card_width_hint * scale if self.card_width_hint else None
        # a tracking detector sees one camera's frames one after the other: the size of the last
        # frames is as good a guide as a layout's (a detector that is not tracking may be given
        # pictures from anywhere, one after the other)
        prior = (
            self.layout.card_width_px() * scale if self.layout is not None else hint if self.track else None
        )
        # whole cards the verifier is sure of tell the size better than the sides of the outlines,
        # which on a close-up are a pip's or an index's (a 430 px card measured 9 px wide: the felt
        # stage then split the card into pips until the budget ran out, and reported nothing)
        sure = float(np.median(self._sure_widths)) * scale if self._sure_widths else None
        # the outlines' sides of overlapping cards in a fan are a strip's: whole cards the verifier is
        # sure of, far wider than that, give the size (edje IMG_2586: two of four cards found at it)
        whole = float(np.median(self._whole_widths)) * scale if self._whole_widths else None
        self._aspect = CARD_ASPECT
        self._sized_by_quads = False
        measured_only = hint is None and prior is None and est is not None  # nothing but this frame
        if measured_only and sure is not None and est[0] < SMALL_SHARE * sure:
            # less than half as wide as the verified cards (perspective never halves a card): the
            # outlines measured the print, and the verified cards' shape stands, squeezed photos
            # (2.4 long to 1 wide, which the felt stage would split into halves) included
            self._aspect = self._sure_aspect
            self._sized_by_quads = True
            return sure
        if measured_only and whole is not None and est[0] < WHOLE_SHARE * whole:
            self._sized_by_quads = True
            return whole
        if est is not None and prior is not None and abs(est[0] / prior - 1) > PRIOR_SPAN:
            # the sides disagree with the size the layout or the last frames gave: when enough of
            # them agree with that size too, it stands (refined by them). A table showing only
            # overlapping hole-card pairs has outlines one card long and a card and a bit wide,
            # which a single card 1.4 times too big explains just as well.
            own = _size_from_outlines(blobs, mask.shape, near=prior)
            if own is not None and own[1] >= max(3, PRIOR_SHARE * est[1]):
                est = own
        if est is not None and est[1] >= 6:
            cw = est[0]
        elif self.layout is not None:
            cw = self.layout.card_width_px() * scale
        elif hint is not None:
            cw = hint
        elif est is not None and est[1] >= 3:
            cw = est[0]
        elif whole is not None:
            # cards the verifier is sure of, shaped like a whole card: in a fan the cards under the
            # others are vouched for too, as narrow strips of their full length
            cw = whole
        elif self._quad_widths:  # whole cards the verifier vouched for: their size, no search
            cw = float(np.median(self._quad_widths)) * scale
        elif blobs:  # one or two clean blobs (maybe two touching cards) or none: the size that explains most
            cw = _size_by_fit(blobs, mask, gray, self._size_deadline, None)
            self._out_of_time()
        else:
            return 12.0
        if (est is not None and est[1] >= 6) or (hint is None and blobs):
            self.card_width_hint = float(cw / scale)  # the same camera next frame
        return float(cw)

    def _disc_recall(self, disc: dict) -> float | None:
        """Button score of a disc that has not moved since the last frame."""
        for c, r, score in self._disc_memo:
            if (
                abs(r - disc["radius"]) < 1.5
                and max(abs(c[0] - disc["center"][0]), abs(c[1] - disc["center"][1])) < 1.5
            ):
                return score
        return None

    def _blob_recall(self, box, area: float, cw: float):
        """Cards of a blob that has not moved since the last frame (same box within 1 px, same area)."""
        for b, a, w, found in self._blob_memo:
            if (
                abs(w - cw) < 0.03 * cw  # the size measured on each frame jitters a little
                and abs(a - area) <= 0.02 * area
                and max(abs(b[i] - box[i]) for i in range(4)) <= 1
            ):
                return [_Rect(r.corners.copy(), r.votes, r.coverage, r.order) for r in found]
        return None

    def _describe(self, frame: np.ndarray, rects: list[_Rect], scale: float) -> list[CardObs]:
        full_polys = [r.corners / scale for r in rects]
        reach = 2.0 / scale + 1.0
        lo = np.array([q.min(axis=0) for q in full_polys]).reshape(-1, 2) - (reach + 3.0)
        hi = np.array([q.max(axis=0) for q in full_polys]).reshape(-1, 2) + (reach + 3.0)
        gray_full = None
        slots: list = [None] * len(rects)
        todo = []
        for i, r in enumerate(rects):
            corners = _canonical_order(full_polys[i])
            # cards within reach of this one (boxes first: cheap), overlapping it, lying on it
            cand = np.flatnonzero(np.all((lo <= hi[i]) & (hi >= lo[i]), axis=1))
            grown = _grown(full_polys[i], reach + 3.0)
            near_j = [j for j in cand if j != i and _overlap(grown, full_polys[j])]
            touch_j = [j for j in near_j if _overlap(full_polys[i], full_polys[j])]
            covering = [full_polys[j] for j in touch_j if rects[j].order > r.order]
            touching = [full_polys[j] for j in touch_j]
            near = [full_polys[j] for j in near_j]
            sig = _signature(frame, corners) if self.track else None
            hit = self._recall(corners, sig) if self.track else None
            if hit is not None:
                face, code, conf, refined = hit
                slots[i] = (corners, face, code, conf, sig, refined, bool(covering))
            else:
                todo.append((i, corners, covering, touching, near, sig))
        # cards clear of the others first: their four sides give the card's size on this frame,
        # which puts the sides of the others that no felt borders
        todo.sort(key=lambda e: bool(e[4]))
        measured = []
        for i, corners, covering, touching, near, sig in todo:
            if gray_full is None:
                gray_full = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
            if self._out_of_time():  # budget spent: outline as found, face without reading
                face, code, conf = self._face_only(frame, corners)
                unread = None if sig is None else sig + 1e6  # never recalled: read it next frame
                slots[i] = (corners, face, code, conf, unread, corners, bool(covering))
                continue
            size = None
            if near:
                size = self._local_size(measured, corners)
            refined, n_sides = _refine_corners(gray_full, corners, near, reach, size)
            if not near and n_sides == 4:
                measured.append((refined.mean(axis=0), *_card_dims(refined)))
            face, code, conf = self._read(frame, refined, covering, touching)
            slots[i] = (corners, face, code, conf, sig, refined, bool(covering))
        if len(measured) >= 2 and self.track:  # pictures from anywhere teach nothing about the next
            self._full_size = measured
        out = []
        for _key, face, code, conf, _sig, corners, occluded in slots:
            out.append(
                CardObs(
                    face,
                    code,
                    conf,
                    tuple(corners.mean(axis=0)),
                    [tuple(p) for p in corners],
                    occluded=occluded,
                )
            )
        if self.track:
            self._memo_now += [
                (key, face, code, conf, sig, corners) for key, face, code, conf, sig, corners, _ in slots
            ]
        return out

    def _local_size(self, measured: list, corners: np.ndarray) -> tuple[float, float] | None:
        """Card width and length (full px) near a card, from the cards measured whole on this frame
        (or the last frame that had some): the nearest few, as the camera's perspective changes the
        size across the picture."""
        pool = measured if len(measured) >= 2 else self._full_size
        if not pool:
            return None
        c = corners.mean(axis=0)
        ranked = sorted(pool, key=lambda e: float(np.linalg.norm(e[0] - c)))[:3]
        w = float(np.median([e[1] for e in ranked]))
        h = float(np.median([e[2] for e in ranked]))
        own_w, own_h = _card_dims(corners)
        if abs(w / own_w - 1) > 0.08 or abs(h / own_h - 1) > 0.08:
            return None  # another camera or distance: the card's own size
        return w, h

    def _recall(self, corners: np.ndarray, sig: np.ndarray):
        """The earlier read of a card that has not moved and still looks the same (not turned over)."""
        tol = max(2.0, 0.04 * np.linalg.norm(corners[1] - corners[0]))
        for c, face, code, conf, old_sig, refined in self._last_memo:
            if np.abs(old_sig - sig).reshape(-1, 3).mean(axis=1).max() > LOOK_CHANGED:
                continue  # a part of it looks different: turned over, swapped, or covered anew
            d = np.abs(c - corners).max()
            d_rot = np.abs(np.roll(c, 2, axis=0) - corners).max()
            if min(d, d_rot) < tol:
                return face, code, conf, refined
        return None

    def _read(self, frame: np.ndarray, corners: np.ndarray, covering: list[np.ndarray], touching=()):
        canon, visible, own = warp_card(frame, corners, covering, touching)
        if self.model is not None:
            res: ReadResult = self.model.read(canon, visible, own)
            if res.face != "up":
                return res.face, res.code, res.confidence
            return res.face, *self._enrolled_reading(res, canon, visible, own, corners)
        res, conf = self._builtin_reading(canon, visible, own, corners)
        if _court_too_small(res.code, corners):
            conf = min(conf, SMALL_COURT_CONFIDENCE)
        return res.face, res.code, conf

    def _builtin_reading(self, canon, visible, own, corners) -> tuple[ReadResult, float]:
        """The built-in reader's reading of a warped card and its confidence, calibrated (where a
        code was read and a calibration is loaded)."""
        res = self.builtin.read(canon, visible, own, seen_width=_card_dims(corners)[0])
        return res, calibrated(res, self.calibrate)

    def _enrolled_reading(self, res: ReadResult, canon, visible, own, corners) -> tuple[str | None, float]:
        """The code of a face-up card the enrolled deck's templates read (`res`), with the built-in
        reader's reading of it weighed in, and how sure the two make it.

        Where the built-in reader overrules the templates (_settled_by_builtin), its code at its own
        calibrated confidence. Where the two agree, AGREED, however unsure each was alone: reading by
        unrelated means (whole pictures as enrolled; corner indices as many decks print them), they
        agreed on a wrong code once in 808 cards (rendered held-out decks 0 of 606; edje's pinochle
        deck enrolled from photos and read under other light 1 of 202). Where they read two codes and
        the templates' stands, its odds against the built-in reader's, but never more than t:
        min(t, t (1 - b) / (t (1 - b) + b (1 - t))), t the templates' own score (0.5 + 2.5 x their
        margin: how much better the best template fits than the next, not how often it is right), b
        the built-in reader's calibrated confidence; disagreeing with it, the templates were right 7
        of 54 times on edje, 14 of 17 rendered. (The odds alone take a third code for impossible: a
        rival the built-in reader doubted, b 0.2, made the templates' code 0.86-0.93 sure, on edje
        right 2 of 6 times. t (1 - b), the templates right only where the built-in reader is wrong,
        left the simulated table's small board cards unnamed, 0.3-0.45, that they read right.)"""
        seen, sure = self._builtin_reading(canon, visible, own, corners)
        settled = self._settled_by_builtin(res, seen, sure)
        if settled is not None:
            return settled
        code, t = res.code, res.confidence
        if code is None or seen.face != "up" or seen.code is None:
            return code, t
        if seen.code == code:
            return code, AGREED
        # never surer than the templates alone: the odds take a third code for impossible, and a
        # rival the built-in reader doubted (b 0.2) made the templates' code 0.86-0.93 sure, on
        # edje right 2 of 6 times
        odds_for, odds_against = t * (1 - sure), sure * (1 - t)
        return code, round(min(t, odds_for / max(odds_for + odds_against, 1e-9)), 3)

    def _settled_by_builtin(self, res: ReadResult, seen: ReadResult, conf: float) -> tuple[str, float] | None:
        """The built-in reader's code and calibrated confidence (`seen`, `conf`) where it overrules
        the enrolled deck's templates (`res`, the enrolled reading of a face-up card); else None.
        It does so for a code the deck holds that is not one it reads another of this deck's own
        pictures as (`DeckModel.builtin_misreads`): where it is at its surest (BUILTIN_SURE,
        calibrated); on a deck of the standard indices it learnt (`DeckModel.standard_indices`: it
        read none of the deck's own pictures surely wrong) where it is fairly sure (BUILTIN_TRUSTED);
        or where it is sure (SETTLES_ENROLLED), the templates are unsure (under ENROLLED_UNSURE) and
        rank that code among the deck's likeliest (`res.candidates`). Below its surest, two suits of
        one colour of the same rank only where the built-in reader knows this deck's shapes of them
        (`DeckModel.trusted_pairs`: on a deck that draws its clubs like spades it would overrule the
        templates' right answer).

        The templates compare whole pictures, as enrolled: where a club and a spade of one rank
        differ in a few pixels of each pip (the drawn deck's 7c, Tc, 5c read as spades in a dead
        heat, 0.50-0.51; neoclassical's 3d, 2d as hearts), and where the light, the camera or the
        background is not the enrolment's, the built-in reader, which learnt from many decks and
        real photos, is the surer. edje's one pinochle deck enrolled from one photo of each card and
        read on its other photos (bench/bench_enroll_real.py): templates alone 0.698, with the
        unsure settled 0.757, with the surest built-in reading standing 0.83, trusted from
        BUILTIN_TRUSTED on this deck of standard indices 0.911 (built-in alone 0.92); rendered
        held-out decks unchanged (bellot, whose 8s it reads as 10s, is no deck of standard indices:
        there it read 5 of 7 of its disagreements with the templates wrong at 0.93) (docs/vision.md)."""
        code = res.code
        other = seen.code
        model = self.model
        if other is None or seen.face != "up" or other == code or other not in model.codes:
            return None
        if other in getattr(model, "builtin_misreads", ()):
            return None  # it reads one of this deck's own cards as that code
        if conf >= BUILTIN_SURE:
            return other, conf
        if code is None:
            return None
        look_alike = other[0] == code[0] and (other[1] in "hd") == (code[1] in "hd")
        if look_alike and not any({other[1], code[1]} == set(p) for p in getattr(model, "trusted_pairs", ())):
            return None  # suits this deck draws unlike most (DeckModel.trusted_pairs)
        if conf >= BUILTIN_TRUSTED and getattr(model, "standard_indices", False):
            return other, conf  # a deck of the indices it learnt: trusted where fairly sure
        if res.confidence >= ENROLLED_UNSURE or other not in res.candidates:
            return None
        return (other, conf) if conf >= SETTLES_ENROLLED else None

    def _discs(self, frame, mask, leftovers, rects, scale, card_w):
        discs = []
        rmin, rmax = 0.18 * card_w, 0.75 * card_w
        for contour, found in leftovers:
            x, y, bw, bh = cv2.boundingRect(contour)
            if bw < 2 * rmin or bh < 2 * rmin:
                continue
            roi = np.zeros((bh + 4, bw + 4), np.uint8)
            cv2.drawContours(roi, [contour - [x - 2, y - 2]], -1, 255, -1)
            for r in found:
                cv2.fillConvexPoly(roi, np.round(r.corners - [x - 2, y - 2]).astype(np.int32), 0)
                cv2.polylines(roi, [np.round(r.corners - [x - 2, y - 2]).astype(np.int32)], True, 0, 2)
            for _ in range(6):
                dt = cv2.distanceTransform(roi, cv2.DIST_L2, 3)
                _, rad, _, loc = cv2.minMaxLoc(dt)
                if rad < rmin:
                    break
                cx, cy = loc
                cv2.circle(roi, (cx, cy), int(rad + 2), 0, -1)
                if rad > rmax:
                    continue
                discs.append(
                    {"center": ((cx + x - 2) / scale, (cy + y - 2) / scale), "radius": (rad + 0.5) / scale}
                )
        best = None
        memo = []
        for d in discs:
            score = self._disc_recall(d) if self.track else None
            if score is None:
                score = 0.0 if self._out_of_time() else _button_score(frame, d["center"], d["radius"])
            memo.append((d["center"], d["radius"], score))
            d["button_score"] = round(score, 3)
            d["kind"] = "chip"
            if score > 0.5 and (best is None or score > best["button_score"]):
                best = d
        self._disc_memo = memo
        if best is None:
            return None, discs
        best["kind"] = "button"
        return ButtonObs(best["center"], best["radius"], min(0.99, best["button_score"])), discs


# -- helpers ----------------------------------------------------------------------------------
def _felt_margin(shape) -> int:
    """Pixels a tracked table's changed part is grown by (FELT_MARGIN of the picture, about a card)."""
    return max(16, round(FELT_MARGIN * max(shape[:2])))


def _scale_result(cards: list[CardObs], button, discs: list[dict], k: int) -> None:
    """Coordinates found on a frame thinned by stride k, back in the frame's own pixels."""
    for c in cards:
        c.center = (c.center[0] * k, c.center[1] * k)
        c.corners = [(x * k, y * k) for x, y in c.corners]
    if button is not None:
        button.center = (button.center[0] * k, button.center[1] * k)
        button.radius *= k
    for d in discs:
        d["center"] = (d["center"][0] * k, d["center"][1] * k)
        d["radius"] *= k


def _side_edges(gray: np.ndarray, corners: np.ndarray, others: list[np.ndarray], reach: float) -> list:
    """Where each side of a card borders the felt, the card's rim found in the full-resolution
    picture: per side an array of edge points (None where too little of the side is free or sharp).

    Across each side the outermost strong step is taken (a printed frame line just inside the card
    must not win) and put at its gradient's peak to a fraction of a pixel: a threshold on the step
    alone would sit a blur's width outside the rim."""
    c = corners.mean(axis=0)
    out: list = [None] * 4
    offs = np.arange(-reach, reach + 0.01, 0.5, dtype=np.float32)
    sides = []  # (side, base points, outward normal) of the sides with enough free rim
    for k in range(4):
        a, b = corners[k], corners[(k + 1) % 4]
        t = _unit(b - a)
        n = np.array([t[1], -t[0]])
        if np.dot(a - c, n) < 0:
            n = -n  # outward
        base = a + (b - a) * _SIDE_TS[:, None]
        if others:
            outside = base + n * (reach + 2)
            free = np.ones(len(base), bool)
            for q in others:
                free &= ~_inside_rect(q, outside, -1.0) & ~_inside_rect(q, base - n * 2, -1.0)
            base = base[free]
        if len(base) >= 5:
            sides.append((k, base, n))
    if not sides:
        return out
    # one remap for all sides' profiles (each row is one profile across the rim, as before)
    pts = np.concatenate([base[:, None, :] + offs[None, :, None] * n[None, None, :] for _, base, n in sides])
    prof_all = cv2.remap(
        gray,
        pts[:, :, 0].astype(np.float32),
        pts[:, :, 1].astype(np.float32),
        cv2.INTER_LINEAR,
        borderMode=cv2.BORDER_REPLICATE,
    ).astype(np.float32)
    d = np.abs(np.diff(prof_all, axis=1))
    peak = d.max(axis=1, keepdims=True)
    last = d.shape[1] - 1
    j = last - np.argmax((d >= EDGE_OUTER * peak)[:, ::-1], axis=1)
    rows = np.arange(len(d))
    for _ in range(4):  # from the outermost strong step inwards to its gradient's peak
        up = (j > 0) & (d[rows, np.maximum(j - 1, 0)] > d[rows, j])
        if not up.any():
            break
        j = j - up
    dl = d[rows, np.maximum(j - 1, 0)]
    dr = d[rows, np.minimum(j + 1, last)]
    dc = d[rows, j]
    den = dl - 2 * dc + dr
    sub = np.where(
        (j > 0) & (j < last) & (den < -1e-6), 0.5 * (dl - dr) / np.where(den < -1e-6, den, -1), 0.0
    )
    strong_all = peak[:, 0] > 6
    pos_all = (offs[j] + offs[np.minimum(j + 1, len(offs) - 1)]) / 2 + 0.5 * np.clip(sub, -0.5, 0.5)
    r0 = 0
    for k, base, n in sides:
        r1 = r0 + len(base)
        strong, pos = strong_all[r0:r1], pos_all[r0:r1]
        r0 = r1
        if strong.sum() >= 5:
            out[k] = base[strong] + pos[strong][:, None] * n
    return out


_SIDE_TS = np.linspace(0.12, 0.88, 14)


def _refine_corners(
    gray: np.ndarray,
    corners: np.ndarray,
    others: list[np.ndarray],
    reach: float,
    size: tuple[float, float] | None = None,
) -> tuple[np.ndarray, int]:
    """Corners to a fraction of a pixel: each side where it borders the felt is found in the
    full-resolution picture (_side_edges), a line is fitted, lines are intersected. A side with no
    rim in view (under or against another card) is put parallel to the opposite side at the card's
    size (`size`: width, length in full px near this card; the card's own size without it), so the
    card keeps its shape; a side with neither is left where it was. Returns the corners and how
    many sides were found in the picture (0: the corners as they came)."""
    edges = _side_edges(gray, corners, others, reach)
    lines = []
    for e in edges:
        if e is None:
            lines.append(None)
            continue
        vx, vy, x0, y0 = cv2.fitLine(e.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    n_found = sum(ln is not None for ln in lines)
    if not n_found:
        return corners, 0
    span = [float(np.linalg.norm(corners[(k + 1) % 4] - corners[k])) for k in range(4)]
    c0 = corners.mean(axis=0)
    for k in range(4):
        if lines[k] is not None:
            continue
        a, b = corners[k], corners[(k + 1) % 4]
        opp = lines[(k + 2) % 4]
        if opp is None:
            lines[k] = (a, _unit(b - a))
            continue
        # the side's length is the distance between the other two sides: sides 0/2 are one kind
        if size is not None:
            dist = size[0] if span[(k + 1) % 4] < span[k] else size[1]
        else:
            dist = span[(k + 1) % 4]
        p, d = opp
        n = np.array([-d[1], d[0]])
        if np.dot(c0 - p, n) < 0:
            n = -n  # towards the card
        lines[k] = (p + dist * n, d)
    out = corners.copy()
    for k in range(4):
        (p1, d1), (p2, d2) = lines[(k - 1) % 4], lines[k]  # the sides meeting at corner k
        den = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(den) < 1e-3:
            return corners, 0
        s = ((p2[0] - p1[0]) * d2[1] - (p2[1] - p1[1]) * d2[0]) / den
        out[k] = p1 + s * d1
    if np.abs(out - corners).max() > reach + 1.5:
        return corners, 0
    # a card keeps its size: a refinement that stretched or shrank a side is not trusted (the size
    # measured on the cards around is the better guide: the blob's own is a little small)
    for k in range(4):
        a = np.linalg.norm(out[(k + 1) % 4] - out[k])
        want = span[k] if size is None else (size[0] if span[k] < span[k - 1] else size[1])
        if abs(a - want) > 0.05 * want + 1.0:
            return corners, 0
    return out, n_found


def _court_too_small(code: str | None, corners: np.ndarray) -> bool:
    """A court card read by the built-in reader on a card too narrow for its index letter to tell J,
    Q and K apart. Measured on rendered 640x360 tables (cards 25 px wide): courts read at 0.5 or more
    were right 6 times in 20, pip cards 185 in 186 (the pips are counted, not read); at 37 px courts
    were right 32 in 39. The rank is then no reading at all: the tracker counts the card face up
    without naming it, which is all an exposure needs (issue 14)."""
    return code is not None and code[0] in "JQK" and _card_dims(corners)[0] < COURT_MIN_WIDTH


def _in_picture(q: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The part of a convex outline inside a picture of `shape`, as a polygon."""
    h, w = shape[:2]
    box = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    poly = cv2.intersectConvexConvex(np.asarray(q, np.float32), box.astype(np.float32))[1]
    return box[:0] if poly is None else poly.reshape(-1, 2).astype(np.float64)


def _unsure_at_edge(card: CardObs, shape: tuple[int, ...]) -> bool:
    """A card on top of the others whose outline reaches the picture's border, not read surely (no
    code, or under EDGE_SURE): one the cut-card stage may put right."""
    if getattr(card, "occluded", False) or (card.code is not None and card.confidence >= EDGE_SURE):
        return False
    q = np.asarray(card.corners, np.float64)
    h, w = shape[:2]
    return bool(
        (q[:, 0] <= 2).any() or (q[:, 1] <= 2).any() or (q[:, 0] >= w - 3).any() or (q[:, 1] >= h - 3).any()
    )


def _paper_saturation(frame: np.ndarray, corners: np.ndarray) -> float:
    """The saturation (HSV, 0-255) a quarter of an outline's part in view stays under: a card's
    paper is grey whatever ink is on it, a coloured surface is not. Looked at on a crop thinned to
    about 64 px, so a 4K card costs what a small one does."""
    h, w = frame.shape[:2]
    q = np.asarray(corners, np.float64).reshape(-1, 2)
    x0, y0 = (max(int(v), 0) for v in q.min(axis=0))
    x1, y1 = min(int(q[:, 0].max()) + 1, w), min(int(q[:, 1].max()) + 1, h)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return 255.0
    step = max(1, max(x1 - x0, y1 - y0) // 64)
    crop = np.ascontiguousarray(frame[y0:y1:step, x0:x1:step])
    inside = np.zeros(crop.shape[:2], np.uint8)
    cv2.fillConvexPoly(inside, np.round((q - [x0, y0]) / step).astype(np.int32), 1)
    sat = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV)[:, :, 1][inside > 0]
    return float(np.percentile(sat, 25)) if sat.size else 255.0


def _card_dims(q: np.ndarray) -> tuple[float, float]:
    """Width and length of a card outline: the means of its short and of its long sides."""
    a = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[3] - q[2])) / 2
    b = (np.linalg.norm(q[2] - q[1]) + np.linalg.norm(q[0] - q[3])) / 2
    return (float(a), float(b)) if a <= b else (float(b), float(a))


def _grown(q: np.ndarray, by: float) -> np.ndarray:
    """A card outline pushed out by `by` pixels on every side (corners moved along the diagonals)."""
    c = q.mean(axis=0)
    u, v = _unit(q[1] - q[0]), _unit(q[3] - q[0])
    out = q.copy()
    for k in range(4):
        d = q[k] - c
        out[k] = q[k] + by * (np.sign(np.dot(d, u)) * u + np.sign(np.dot(d, v)) * v)
    return out


def _signature(frame: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Averaged colours at a few places across a card, its corners included: when the card is
    turned over or swapped, those in view change. Compared place by place (`LOOK_CHANGED`): the
    lower card of a hole-card pair shows only a few of them, and a change there is what a flash is."""
    c = corners.mean(axis=0)
    u, v = (corners[1] - corners[0]) / 2, (corners[3] - corners[0]) / 2
    h, w = frame.shape[:2]
    out = []
    for a, b in SIGNATURE_PLACES:
        x, y = (c + a * u + b * v).round().astype(int)
        x, y = min(max(x, 2), w - 3), min(max(y, 2), h - 3)
        out.append(frame[y - 2 : y + 3, x - 2 : x + 3].reshape(-1, 3).mean(axis=0))
    return np.concatenate(out)


def _still_picture(frame: np.ndarray) -> np.ndarray:
    """The frame small (480-960 px wide) and cheap, for telling whether anything moved: halvings
    (INTER_AREA's exact and fast case, which also averages sensor noise away); a frame of 4K or more
    is first sampled down to about 1000 px (a quarter of 4K), cards there being 50 px and up."""
    h, w = frame.shape[:2]
    small = frame
    if w >= 3840:
        step = w // 1920 * 2
        small = cv2.resize(frame, (w // step, max(1, h // step)), interpolation=cv2.INTER_NEAREST)
    while small.shape[1] >= 960 and small.shape[0] >= 2:
        small = cv2.resize(small, (small.shape[1] // 2, small.shape[0] // 2), interpolation=cv2.INTER_AREA)
    return small


def _as_bgr(frame: np.ndarray) -> np.ndarray:
    if frame is None or not isinstance(frame, np.ndarray) or frame.size == 0:
        raise ValueError("empty frame")
    if frame.ndim == 2:
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    if frame.shape[2] == 4:
        return cv2.cvtColor(frame, cv2.COLOR_BGRA2BGR)
    if frame.dtype != np.uint8:
        frame = np.clip(frame, 0, 255).astype(np.uint8)
    return frame


def _corner_side_lengths(contour: np.ndarray, eps: float = 1.5, long_min: float = 7.0) -> list[float]:
    """Lengths of the outline's straight sides that run from one sharp convex right-angle corner to
    the next (rounded corners are bridged by intersecting the long sides): whole card sides."""
    poly = cv2.approxPolyDP(contour, eps, True).reshape(-1, 2).astype(np.float64)
    n = len(poly)
    if n < 4:
        return []
    signed = 0.5 * np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
    orient = 1.0 if signed > 0 else -1.0
    seg = np.roll(poly, -1, axis=0) - poly
    seg_len = np.linalg.norm(seg, axis=1)
    longs = [i for i in range(n) if seg_len[i] >= long_min]
    if len(longs) < 2:
        return []
    corners = {}
    for j, i in enumerate(longs):
        k = longs[(j + 1) % len(longs)]
        if (k - i) % n > 3:
            continue
        d1, d2 = seg[i] / seg_len[i], seg[k] / seg_len[k]
        cross = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(float(np.dot(d1, d2))) > 0.2 or cross * orient < 0:
            continue
        a0, b0 = poly[i], poly[k]
        t = ((b0[0] - a0[0]) * d2[1] - (b0[1] - a0[1]) * d2[0]) / cross
        corners[k] = a0 + t * d1  # the sharp corner where side k starts
    out = []
    for j, i in enumerate(longs):
        k = longs[(j + 1) % len(longs)]
        if i in corners and k in corners:
            out.append(float(np.linalg.norm(corners[k] - corners[i])))
    return out


def _size_from_outlines(blobs, shape, near: float | None = None) -> tuple[float, int] | None:
    """Card width (work px) that most whole sides of the outlines agree with, as a width or as a
    length, and how many sides agree; None without evidence. A width that explains both the short
    and the long sides wins over one that only explains one kind (two cards side by side make a
    side two widths long, which a width of one card length would explain as its length).
    `near`: only widths within PRIOR_SPAN of it are considered (a size known from the layout or
    earlier frames, refined by this frame's sides)."""
    lengths = []
    for c in blobs:
        if cv2.contourArea(c) < 150:
            continue
        bx, by, bw, bh = cv2.boundingRect(c)
        if bx <= 1 or by <= 1 or bx + bw >= shape[1] - 1 or by + bh >= shape[0] - 1:
            continue  # cut by the frame edge
        lengths += _corner_side_lengths(c)
    ln = np.array([v for v in lengths if v >= 8.0])
    if not len(ln):
        return None
    best = None
    for cw in np.unique(np.round(np.concatenate([ln, ln / CARD_ASPECT]), 1)):
        if cw < 8.0 or (near is not None and abs(cw / near - 1) > PRIOR_SPAN):
            continue
        as_w = np.abs(ln / cw - 1) < 0.045
        as_h = np.abs(ln / (cw * CARD_ASPECT) - 1) < 0.045
        n = int((as_w | as_h).sum())
        score = n if as_w.any() and as_h.any() else n / 2
        if best is None or score > best[0] + 1e-9:
            est = float(np.median(np.concatenate([ln[as_w], ln[as_h & ~as_w] / CARD_ASPECT])))
            best = (score, est, n)
    return None if best is None else (best[1], best[2])


def _size_by_fit(
    blobs, mask: np.ndarray, gray: np.ndarray, deadline: float | None = None, fallback: float | None = None
) -> float:
    """Card width when no blob is one clean card (a board row, pairs only): try the sizes the
    outlines suggest (straight sides, blob widths) and keep the one whose cards explain the blobs best."""
    guesses = []
    for c in blobs:
        if cv2.contourArea(c) < 150:
            continue
        (_, _), (a, b), _ = cv2.minAreaRect(c)
        guesses += [min(a, b), min(a, b) / CARD_ASPECT]
        poly = cv2.approxPolyDP(c, 0.02 * cv2.arcLength(c, True), True).reshape(-1, 2)
        for i in range(len(poly)):
            e = float(np.linalg.norm(poly[i] - poly[i - 1]))
            guesses += [e, e / CARD_ASPECT]
    guesses = sorted(g for g in guesses if 12.0 <= g <= 0.5 * mask.shape[0])
    if not guesses:
        return 12.0
    # group guesses within 6 % and try the best supported few
    groups: list[list[float]] = []
    for g in guesses:
        if groups and g <= groups[-1][0] * 1.06:
            groups[-1].append(g)
        else:
            groups.append([g])
    tries = [float(np.median(gr)) for gr in sorted(groups, key=len, reverse=True)[:6]]
    edges = (cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3), cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3))
    big = [c for c in blobs if cv2.contourArea(c) >= 150]
    total = sum(cv2.contourArea(c) for c in big) or 1.0
    scores = {}
    for cw in tries:
        ch = cw * CARD_ASPECT
        explained = 0.0
        for c in big:
            if cv2.contourArea(c) < 0.35 * cw * ch:
                continue
            try:
                found = _split_blob(c, cw, ch, mask, edges, deadline=deadline)
            except _OutOfTime:
                if fallback is not None:
                    return fallback
                return max(scores, key=scores.get) if scores else tries[0]
            if not found:
                continue
            m = np.zeros(mask.shape, np.uint8)
            for r in found:
                cv2.fillConvexPoly(m, np.round(r.corners).astype(np.int32), 1)
            blob = np.zeros(mask.shape, np.uint8)
            cv2.drawContours(blob, [c], -1, 1, -1)
            inter = float((m & blob).sum())
            explained += inter - 3.0 * float(m.sum() - inter)
        scores[cw] = explained / total
    # smaller cards tile a blob without spilling too: the largest size that explains nearly as much wins
    top = max(scores.values())
    return max(cw for cw, sc in scores.items() if sc >= top - 0.08)


def _unit(v):
    n = math.sqrt(float(v[0]) * float(v[0]) + float(v[1]) * float(v[1]))
    return v / n if n > 1e-9 else v


def _split_blob(
    contour: np.ndarray,
    cw: float,
    ch: float,
    mask: np.ndarray,
    edges: np.ndarray,
    deadline: float | None = None,
) -> list[_Rect]:
    """Cards in one blob: card-sized rectangles proposed at convex right-angle corners of its outline."""
    area = cv2.contourArea(contour)
    (cx, cy), (a, b), ang = cv2.minAreaRect(contour)
    s, lng = min(a, b), max(a, b)
    if area / max(a * b, 1) > 0.88 and 0.8 < s / cw < 1.2 and 0.8 < lng / ch < 1.2:
        box = cv2.boxPoints(((cx, cy), (a, b), ang))
        return [_Rect(_clockwise(box), 4, 1.0)]
    x, y, bw, bh = cv2.boundingRect(contour)
    pad = int(0.5 * cw) + 2  # a proposal that reaches further out spills too much anyway
    x0, y0 = max(x - pad, 0), max(y - pad, 0)
    x1, y1 = min(x + bw + pad, mask.shape[1]), min(y + bh + pad, mask.shape[0])
    blob = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.drawContours(blob, [contour - [x0, y0]], -1, 1, -1)
    off = np.array([x0, y0], np.float64)
    poly = cv2.approxPolyDP(contour, max(1.0, 0.045 * cw), True).reshape(-1, 2).astype(np.float64)
    n = len(poly)
    if n < 3:
        return []
    signed = 0.5 * np.sum(poly[:, 0] * np.roll(poly[:, 1], -1) - np.roll(poly[:, 0], -1) * poly[:, 1])
    orient = 1.0 if signed > 0 else -1.0
    props: list[np.ndarray] = []
    convex_pts = []
    for i in range(n):
        e1, e2 = poly[i - 1] - poly[i], poly[(i + 1) % n] - poly[i]
        if (e2[0] * e1[1] - e2[1] * e1[0]) * orient >= 0:
            convex_pts.append(poly[i])
    # long sides of the outline, in order; a rounded or blurred corner leaves short bits between them
    seg_len = np.linalg.norm(np.roll(poly, -1, axis=0) - poly, axis=1)
    longs = [i for i in range(n) if seg_len[i] >= 0.22 * cw]
    for j, i in enumerate(longs):
        k = longs[(j + 1) % len(longs)]
        if len(longs) < 2 or (k - i) % n > 3:  # too much outline between them to be one corner
            continue
        a0, a1 = poly[i], poly[(i + 1) % n]  # side before the corner
        b0, b1 = poly[k], poly[(k + 1) % n]  # side after it
        d1, d2 = _unit(a1 - a0), _unit(b1 - b0)
        cross = d1[0] * d2[1] - d1[1] * d2[0]
        if abs(float(np.dot(d1, d2))) > 0.34 or cross * orient < 0:  # not a convex right angle
            continue
        den = d1[0] * d2[1] - d1[1] * d2[0]
        t = ((b0[0] - a0[0]) * d2[1] - (b0[1] - a0[1]) * d2[0]) / den
        p = a0 + t * d1  # where the two sides meet: the card's sharp corner
        u1, u2 = -d1, d2  # directions along the two sides, away from the corner
        bis = _unit(u1 + u2)
        perp = np.array([-bis[1], bis[0]])
        v1 = _unit(bis + perp) if np.dot(bis + perp, u1) > np.dot(bis - perp, u1) else _unit(bis - perp)
        v2 = _unit(bis - perp) if np.dot(bis - perp, u2) > np.dot(bis + perp, u2) else _unit(bis + perp)
        convex_pts.append(p)
        for la, lb in ((cw, ch), (ch, cw)):
            props.append(np.array([p, p + la * v1, p + la * v1 + lb * v2, p + lb * v2]))
    # score proposals: share of the rectangle inside the blob
    scored = []
    card_area = cw * ch
    for n_seen, q in enumerate(props):
        if n_seen % COMBO_CHECK == COMBO_CHECK - 1 and deadline is not None and time.thread_time() > deadline:
            raise _OutOfTime
        inside, tot = _pixels_in_blob(q, blob, off)
        if tot < 0.5 * card_area:
            continue
        cov = inside / tot
        if cov >= 0.88:
            scored.append((q, cov))
    # merge duplicates (same card proposed from several corners) into votes
    # (each group's centre kept in one array: a cluttered blob gives thousands of proposals, and
    # comparing each with every group one by one cost 200 ms, past the frame's budget)
    groups: list[list] = []
    group_centres = np.empty((len(scored), 2))
    for n_seen, (q, cov) in enumerate(scored):
        if n_seen % COMBO_CHECK == COMBO_CHECK - 1 and deadline is not None and time.thread_time() > deadline:
            raise _OutOfTime
        c = q.mean(axis=0)
        near_groups = np.flatnonzero(np.linalg.norm(group_centres[: len(groups)] - c, axis=1) < 0.25 * cw)
        for gi in near_groups:
            if _axis_diff(groups[gi][0][0], q) < 12:
                groups[gi].append((q, cov))
                break
        else:
            group_centres[len(groups)] = c
            groups.append([(q, cov)])
    cands = [_mean_rect([e[0] for e in g]) for g in groups]
    votes = [len(g) for g in groups]
    # cards inside a row (board cards side by side) show no corner: try neighbours of each proposal
    # (the centres as one array: a textured photo can give hundreds of proposals, and comparing each
    # new one with every other one by one cost seconds, past the frame's budget)
    # A neighbour's neighbour is tried too, on the way it was found (a row is walked from its end
    # inwards, ROW_HOPS cards at most): five board cards laid edge to edge show corners only at the
    # two ends, and the middle card is two places from either (such a row was found as its two end
    # cards and the one beside one end: 3 of 5). Both ways from every neighbour filled the
    # candidates kept below with the row's ends proposed over and over.
    centres = [c.mean(axis=0) for c in cands]
    ways: list[tuple[tuple[int, ...], int]] = [((1, -1), 0)] * len(cands)  # (which way on, hops so far)
    k = 0
    while k < len(cands):
        if deadline is not None and time.thread_time() > deadline:
            raise _OutOfTime
        q, (signs, hops) = cands[k], ways[k]
        k += 1
        if hops >= ROW_HOPS:
            continue
        e_w = q[1] - q[0] if np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[3] - q[0]) else q[3] - q[0]
        u = _unit(e_w)
        for sign in signs:
            for gap in (0.05, 0.15, 0.3):
                sq = q + sign * u * cw * (1 + gap)
                if _coverage(sq, blob, off) >= NEIGHBOUR_COVER and bool(
                    np.all(np.linalg.norm(np.asarray(centres) - sq.mean(axis=0), axis=1) > 0.25 * cw)
                ):
                    cands.append(sq)
                    centres.append(sq.mean(axis=0))
                    votes.append(0)
                    ways.append(((sign,), hops + 1))
                    break
    if not cands:
        return []
    order = sorted(range(len(cands)), key=lambda i: -votes[i])[:12]
    cands = [cands[i] for i in order]
    votes = [votes[i] for i in order]
    # the set of cards whose union best matches the blob (bitsets as Python ints: fast OR and popcount)
    blob_bits = int.from_bytes(np.packbits(blob.ravel()).tobytes(), "big")
    blob_area = blob_bits.bit_count()
    # the mask can miss a pixel or two of a card's rim (a border the colour of the felt, blur): a
    # card spills out of its blob only beyond that
    grown = cv2.dilate(blob, np.ones((3, 3), np.uint8))
    bb = (blob_bits, int.from_bytes(np.packbits(grown.ravel()).tobytes(), "big"))
    near = _crop_near(blob, grown, off, pad - 8)
    # a true card puts its corners on corners of the outline; a wrong reading of a pair does not
    vx = np.array(convex_pts).reshape(-1, 2)
    cornered = [
        int(sum(np.min(np.linalg.norm(vx - c, axis=1)) < 0.15 * cw for c in q)) if len(vx) else 0
        for q in cands
    ]
    kmax = min(len(cands), 5, max(1, int(blob_area / (0.55 * card_area)) + 1))
    counts = _combo_counts(cands, blob, grown, off, kmax)
    scored_combos = []
    for k in range(1, kmax + 1):
        if deadline is not None and time.thread_time() > deadline:
            raise _OutOfTime
        for combo, inter, spill, least in counts[k]:
            if k > 1 and least < MIN_OWN * card_area:
                continue  # a card under the others with hardly anything of its own in view
            # explain the blob without spilling out of it; chips touching the cards stay unexplained
            fit = (inter - 3 * spill) / max(blob_area, 1)
            scored_combos.append((fit - 0.05 * k + 0.015 * sum(cornered[i] for i in combo) / k, combo))
    scored_combos.sort(key=lambda e: -e[0])
    # the few best readings are put on the outline (a card proposed from a corner where two cards
    # meet is a little off) and then judged by the picture: every visible side of every card must
    # be an edge, above all the sides that run inside the blob (where one card lies on another)
    dist = cv2.distanceTransform(blob, cv2.DIST_L2, 3)
    support_cache: dict = {}
    drawn: dict = {}  # pose -> its bits, for every _refine of this blob (same window, same card size)
    best_score, best, best_rects = -1.0, (), []
    for base, combo in scored_combos[:8]:
        if base < scored_combos[0][0] - 0.15:
            break  # too far behind for the picture to make up for it
        if deadline is not None and time.thread_time() > deadline:
            raise _OutOfTime
        rects = [_clockwise(cands[i]) for i in combo]
        if len(rects) > 1:
            rects = _refine(rects, near, cw, ch, seen=drawn)
        fit, least_own = _fit(rects, blob, bb, off)
        if least_own < MIN_OWN * card_area:
            continue
        support, inner = _combo_support(rects, edges, dist, off, support_cache)
        corner_bonus = 0.015 * sum(cornered[i] for i in combo) / len(combo)
        score = fit - 0.05 * len(combo) + corner_bonus + SUPPORT_WEIGHT * support
        if inner is not None:
            score += INNER_WEIGHT * (inner - 0.5)
        if DEBUG:
            print(
                "combo",
                combo,
                round(base, 3),
                round(fit, 3),
                round(support, 3),
                inner and round(inner, 3),
                round(score, 3),
            )
        if score > best_score:
            best_score, best, best_rects = score, combo, rects
    if best_score < 0.25 + SUPPORT_WEIGHT * 0.3:
        return []
    if len(best_rects) > 1:  # the reading is settled: now to the pixel, on the blob as it is
        best_rects = _refine(best_rects, near, cw, ch, ring=1.0, seen=drawn)
    return [_Rect(q, votes[i], 1.0) for q, i in zip(best_rects, best, strict=True)]


def _combo_counts(cands, blob: np.ndarray, grown: np.ndarray, off: np.ndarray, kmax: int) -> dict:
    """For every set of up to `kmax` of the candidate cards (k -> [(combo, blob pixels the union
    covers, pixels it spills beyond the grown blob, least blob pixels one card covers alone), ...],
    in itertools.combinations order): the pixels are grouped by which candidates cover them (a dozen
    cards cut the window into a few hundred such pieces), so each set is a sum over pieces, not a
    pass over the window's pixels (1585 sets of up to five cards on a cluttered blob cost 250 ms)."""
    sig = np.zeros(blob.shape, np.int32)
    m = np.zeros_like(blob)
    for i, q in enumerate(cands):
        m[:] = 0
        cv2.fillConvexPoly(m, np.round(q - off).astype(np.int32), 1)
        sig |= m.astype(np.int32) << i
    bins = 1 << len(cands)
    flat = sig.ravel()
    in_blob = np.bincount(flat, weights=blob.ravel(), minlength=bins)
    outside = np.bincount(flat, weights=(grown.ravel() == 0), minlength=bins)
    pieces = np.flatnonzero((in_blob > 0) | (outside > 0))
    pieces = pieces[pieces > 0]
    sigs, own_in, out = pieces[None, :], in_blob[pieces].astype(np.int64), outside[pieces].astype(np.int64)
    result: dict = {}
    for k in range(1, kmax + 1):
        combos = list(itertools.combinations(range(len(cands)), k))
        masks = np.array([sum(1 << i for i in c) for c in combos], np.int64)[:, None]
        covered_by = sigs & masks  # which of the set's cards cover each piece
        hit = (covered_by != 0).astype(np.int64)
        inter = hit @ own_in
        spill = hit @ out
        if k > 1:
            alone = np.stack(
                [(covered_by == (1 << i)).astype(np.int64) @ own_in for i in range(len(cands))], axis=1
            )
            member = ((masks >> np.arange(len(cands))[None, :]) & 1).astype(bool)
            least = np.where(member, alone, np.iinfo(np.int64).max).min(axis=1)
        else:
            least = np.full(len(combos), 1 << 30, np.int64)
        result[k] = [
            (c, int(a), int(b), int(e)) for c, a, b, e in zip(combos, inter, spill, least, strict=True)
        ]
    return result


def _walled(contour, cw: float, mask: np.ndarray, strong: np.ndarray, gain: float):
    """The blob seen again with the picture's strong edges as walls: part of a card back the colour
    of the felt lies between the back's printed border and what was found of it. Whatever mask and
    edges enclose round the blob, less the walls' outer pixel (an edge is strong a pixel either side
    of it), as (outline, mask) when that is more than `gain` times the blob, else None."""
    x, y, bw, bh = cv2.boundingRect(contour)
    pad = int(0.3 * cw) + 3
    x0, y0 = max(x - pad, 0), max(y - pad, 0)
    x1, y1 = min(x + bw + pad, mask.shape[1]), min(y + bh + pad, mask.shape[0])
    k3 = np.ones((3, 3), np.uint8)
    walls = cv2.dilate(cv2.bitwise_or(mask[y0:y1, x0:x1], strong[y0:y1, x0:x1]), k3)
    outside = cv2.copyMakeBorder(walls, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    cv2.floodFill(outside, None, (0, 0), 255)
    inside = cv2.erode(cv2.bitwise_or(walls, cv2.bitwise_not(outside[1:-1, 1:-1])), np.ones((5, 5), np.uint8))
    win = cv2.bitwise_or(inside, mask[y0:y1, x0:x1])
    contours, _ = cv2.findContours(win, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    inner = tuple(float(v) for v in contour[0, 0] - [x0, y0])
    for c in contours:
        if cv2.pointPolygonTest(c, inner, False) >= 0:
            if cv2.contourArea(c) < gain * cv2.contourArea(contour):
                return None
            comp = np.zeros_like(win)
            cv2.drawContours(comp, [c], -1, 255, -1)
            own = np.zeros_like(win)
            cv2.drawContours(own, [contour - [x0, y0]], -1, 255, -1)
            if (
                cv2.countNonZero(cv2.bitwise_and(comp, cv2.bitwise_and(mask[y0:y1, x0:x1], ~own)))
                > 0.05 * cw * cw
            ):
                return None  # the walls reach another object (the next card of a board row)
            local = np.zeros_like(mask)
            local[y0:y1, x0:x1] = comp
            return c + np.array([x0, y0], np.int32), local
    return None


def _fit(rects, blob: np.ndarray, bb: tuple[int, int], off: np.ndarray) -> tuple[float, int]:
    """How well the cards' union explains the blob (inside minus three times what spills out), and
    the least blob area any one card covers on its own."""
    blob_bits, grown_bits = bb
    bits = []
    for q in rects:
        m = np.zeros_like(blob)
        cv2.fillConvexPoly(m, np.round(q - off).astype(np.int32), 1)
        bits.append(int.from_bytes(np.packbits(m.ravel()).tobytes(), "big"))
    u = 0
    for b in bits:
        u |= b
    inter = (u & blob_bits).bit_count()
    spill = u.bit_count() - (u & grown_bits).bit_count()
    return (inter - 3 * spill) / max(blob_bits.bit_count(), 1), _least_own(bits, blob_bits)


def _least_own(bits: list[int], blob_bits: int) -> int:
    """The least blob area (pixels) that one of the cards covers and none of the others does."""
    if len(bits) < 2:
        return 1 << 30
    least = 1 << 30
    for i, b in enumerate(bits):
        others = 0
        for j, o in enumerate(bits):
            if j != i:
                others |= o
        least = min(least, (b & blob_bits & ~others).bit_count())
    return least


def _combo_support(rects, edges, dist: np.ndarray, off: np.ndarray, cache: dict | None = None):
    """Best over stacking orders: share of the visible card sides on edges of the picture, and the
    same over the visible sides that run inside the blob (None when no side does). `cache` (one
    per blob: the same edges, dist and off) keeps what was worked out for a card already seen in
    another combination."""
    cache = {} if cache is None else cache
    keys = [q.tobytes() for q in rects]
    h, w = dist.shape
    sides, inner_pts = [], []
    for q, key in zip(rects, keys, strict=True):
        hit = cache.get(key)
        if hit is None:
            side = _side_samples(q, edges)
            pts = side[0]
            x = np.clip(np.round(pts[:, 0] - off[0]).astype(int), 0, w - 1)
            y = np.clip(np.round(pts[:, 1] - off[1]).astype(int), 0, h - 1)
            hit = cache[key] = (side, dist[y, x] > 2.5)
        sides.append(hit[0])
        inner_pts.append(hit[1])
    covered = {}
    for i in range(len(rects)):
        for j in range(len(rects)):
            if i != j:
                pair = (keys[i], keys[j])
                cov = cache.get(pair)
                if cov is None:
                    cov = cache[pair] = _inside_rect(rects[j], sides[i][0], 1.5)
                covered[(i, j)] = cov
    best, best_key = (0.0, None), -1.0
    orders = itertools.permutations(range(len(rects))) if len(rects) <= 3 else [tuple(range(len(rects)))]
    for order in orders:  # order[0] is on top
        seen = hit = iseen = ihit = 0
        for z, i in enumerate(order):
            flags = sides[i][1]
            visible = np.ones(len(flags), bool)
            for j in order[:z]:
                visible &= ~covered[(i, j)]
            seen += int(visible.sum())
            hit += _consistent_hits(sides[i], visible)
            vi = visible & inner_pts[i]
            iseen += int(vi.sum())
            ihit += _consistent_hits(sides[i], vi)
        sup = hit / max(seen, 1)
        inner = ihit / iseen if iseen >= 6 else None
        key = sup + (INNER_WEIGHT * (inner - 0.5) if inner is not None else 0.0)
        if key > best_key:
            best_key, best = key, (sup, inner)
    return best


def _pose_corners(cx: float, cy: float, theta: float, w: float, h: float) -> list[tuple[float, float]]:
    """The four corners of a w x h card centred at (cx, cy), turned by theta, as plain floats (cheap:
    the refinement draws thousands of poses a frame)."""
    ux, uy = math.cos(theta) * w / 2, math.sin(theta) * w / 2
    vx, vy = -math.sin(theta) * h / 2, math.cos(theta) * h / 2
    return [
        (cx - ux - vx, cy - uy - vy),
        (cx + ux - vx, cy + uy - vy),
        (cx + ux + vx, cy + uy + vy),
        (cx - ux + vx, cy - uy + vy),
    ]


def _rect_from_pose(c, theta: float, w: float, h: float) -> np.ndarray:
    return np.array(_pose_corners(float(c[0]), float(c[1]), theta, w, h))


def _pose_pixels(pose, cw: float, ch: float, ox: float, oy: float) -> np.ndarray:
    """The pose's corners less (ox, oy), rounded to int32 pixels (as np.round: to even)."""
    corners = _pose_corners(float(pose[0]), float(pose[1]), float(pose[2]), cw, ch)
    return np.array([(round(x - ox), round(y - oy)) for x, y in corners], np.int32)


def _crop_near(blob: np.ndarray, grown: np.ndarray, off: np.ndarray, margin: int):
    """The blob window cut down to the blob and a few pixels round it (where refined cards move),
    as (blob bits, grown blob bits, blob array, offset)."""
    m = max(int(margin), 0)
    h, w = blob.shape
    b = blob[m : h - m, m : w - m] if m and h > 2 * m and w > 2 * m else blob
    g = grown[m : h - m, m : w - m] if b is not blob else grown
    o = off + (m if b is not blob else 0)
    bits = int.from_bytes(np.packbits(b.ravel()).tobytes(), "big")
    return bits, int.from_bytes(np.packbits(g.ravel()).tobytes(), "big"), b, o


def _refine(rects: list[np.ndarray], near, cw: float, ch: float, ring: float = 0.0, seen: dict | None = None):
    """Nudge each card (position, angle) so the cards' union fits the blob best: corners at junctions
    of two cards give slightly wrong directions, this puts each card back on its own outline.
    Spill within a pixel of the blob costs `ring` (the mask may miss a card's rim), beyond it 3.
    `seen`: poses drawn already (by another call on the same `near`, cw and ch), kept across calls."""
    blob_bits, grown_bits, blob, off = near
    area = max(blob_bits.bit_count(), 1)
    poses = []
    for q in rects:
        e = q[1] - q[0] if np.linalg.norm(q[1] - q[0]) < np.linalg.norm(q[3] - q[0]) else q[3] - q[0]
        c = q.mean(axis=0)
        poses.append((float(c[0]), float(c[1]), math.atan2(e[1], e[0])))
    buf = np.zeros_like(blob)
    ox, oy = float(off[0]), float(off[1])
    seen = {} if seen is None else seen  # the descent comes back to poses it has drawn

    def bits_of(pose):
        key = (round(pose[0], 3), round(pose[1], 3), round(pose[2], 5))
        b = seen.get(key)
        if b is None:
            buf[:] = 0
            cv2.fillConvexPoly(buf, _pose_pixels(pose, cw, ch, ox, oy), 1)
            b = seen[key] = int.from_bytes(np.packbits(buf).tobytes(), "big")
        return b

    def fit(u):
        inter = (u & blob_bits).bit_count()
        near = (u & grown_bits).bit_count()
        return (inter - ring * (near - inter) - 3 * (u.bit_count() - near)) / area

    bits = [bits_of(p) for p in poses]
    u = 0
    for b in bits:
        u |= b
    best = fit(u)
    r3, r1 = math.radians(3), math.radians(1)
    steps = [(0, 0, r3), (0, 0, -r3), (1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, r1), (0, 0, -r1)]
    for _ in range(6):
        improved = False
        for k in range(len(poses)):
            others = 0
            for j, b in enumerate(bits):
                if j != k:
                    others |= b
            for dx, dy, dt in steps:
                cand = (poses[k][0] + dx, poses[k][1] + dy, poses[k][2] + dt)
                b = bits_of(cand)
                score = fit(others | b)
                if score > best + 1e-4:
                    best, poses[k], bits[k], improved = score, cand, b, True
        if not improved:
            break
    # a card's width axis is the short side
    return [_clockwise(_rect_from_pose(p[:2], p[2], cw, ch)) for p in poses]


def _consistent_hits(side, sel: np.ndarray) -> int:
    """Edge points among `sel`, counting on each side of the card only the edges that step the
    same way across it (a card's rim does; the ink of pips it runs through steps both ways)."""
    _, flags, sign, which = side
    on = flags & sel
    counts = np.bincount(which[on] * 3 + sign[on], minlength=12).reshape(4, 3)  # side x (neg, pos, line)
    return int(counts[:, :2].max(axis=1).sum() + counts[:, 2].sum())


@lru_cache(maxsize=512)
def _spread(n: int) -> np.ndarray:
    """n points from 8 % to 92 % along a side (read only: shared)."""
    v = np.linspace(0.08, 0.92, n)
    v.flags.writeable = False
    return v


def _side_samples(q: np.ndarray, grads) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Points along a rectangle's sides, whether the picture has an edge there across the side,
    which way that edge steps (1: brighter along the normal, 0: darker, 2: a thin line, both) and
    which side each point is on."""
    gx, gy = grads
    h, w = gx.shape
    q = np.asarray(q, np.float64)
    d = np.roll(q, -1, axis=0) - q  # side k runs from corner k to corner k+1
    lens = np.sqrt(d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1])
    ns = [max(int(v / 1.5), 4) for v in lens.tolist()]
    units = np.where(lens[:, None] > 1e-9, d / np.where(lens > 1e-9, lens, 1.0)[:, None], d)
    s = np.concatenate([_spread(n) for n in ns])
    p = np.repeat(q, ns, axis=0) + np.repeat(d, ns, axis=0) * s[:, None]
    t = np.repeat(units, ns, axis=0)
    which = np.repeat(np.arange(4), ns)
    nrm = np.stack([-t[:, 1], t[:, 0]], axis=1)
    # the side is known to about a pixel: look one pixel either way across it
    pp = p[None] + np.array([-1.0, 0.0, 1.0])[:, None, None] * nrm[None]
    x = np.clip(np.round(pp[..., 0]).astype(int), 0, w - 1)
    y = np.clip(np.round(pp[..., 1]).astype(int), 0, h - 1)
    gxs, gys = gx[y, x], gy[y, x]
    gs = gxs * nrm[None, :, 0] + gys * nrm[None, :, 1]
    gn = np.abs(gs)
    gt = np.abs(gxs * t[None, :, 0] + gys * t[None, :, 1])
    k = np.argmax(gn, axis=0)
    best_n = np.take_along_axis(gn, k[None], axis=0)[0]
    best_t = np.take_along_axis(gt, k[None], axis=0)[0]
    sign = np.take_along_axis(gs, k[None], axis=0)[0] > 0
    # a thin dark or light line along the side (a card's printed rim lying on another card) steps
    # both ways within the pixel either side: it counts whichever way the side's other edges step
    line = (gs[0] * gs[2] < 0) & (gn[0] > 60) & (gn[2] > 60)
    sign = np.where(line, 2, sign.astype(np.int8))
    return p, (best_n > 60) & (best_n > 1.5 * best_t), sign, which


def _inside_rect(q: np.ndarray, pts: np.ndarray, margin: float) -> np.ndarray:
    """Which points lie inside the convex quadrilateral q by more than `margin` px."""
    if not len(pts):
        return np.ones(0, bool)
    qq = [(float(x), float(y)) for x, y in q]
    cx, cy = sum(p[0] for p in qq) / 4, sum(p[1] for p in qq) / 4
    nrm = np.empty((2, 4))
    base = np.empty(4)
    for k in range(4):
        (x0, y0), (x1, y1) = qq[k], qq[(k + 1) % 4]
        nx, ny = y1 - y0, x0 - x1
        n = math.sqrt(nx * nx + ny * ny)
        if n > 1e-9:
            nx, ny = nx / n, ny / n
        if (cx - x0) * nx + (cy - y0) * ny < 0:
            nx, ny = -nx, -ny
        nrm[0, k], nrm[1, k], base[k] = nx, ny, x0 * nx + y0 * ny + margin
    return np.all(pts @ nrm > base, axis=1)


def _pixels_in_blob(q: np.ndarray, blob: np.ndarray, off: np.ndarray) -> tuple[int, int]:
    """(pixels of the quadrilateral q inside the blob, its pixels in the blob's window). Drawn in its
    own box only: the blob's whole window for each of hundreds of proposals cost 60 ms, and for each
    neighbour a row's walk tries it doubled the worst photos' time (roboflow p99 1.1 -> 2.3 s)."""
    pts = np.round(q - off).astype(np.int32)
    x0, y0 = max(int(pts[:, 0].min()), 0), max(int(pts[:, 1].min()), 0)
    x1, y1 = min(int(pts[:, 0].max()) + 1, blob.shape[1]), min(int(pts[:, 1].max()) + 1, blob.shape[0])
    if x1 <= x0 or y1 <= y0:
        return 0, 0
    m = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(m, pts - np.int32([x0, y0]), 1)
    return cv2.countNonZero(m & blob[y0:y1, x0:x1]), cv2.countNonZero(m)


def _coverage(q: np.ndarray, blob: np.ndarray, off: np.ndarray) -> float:
    """Share of the rectangle q (inside the blob's window) that lies in the blob."""
    inside, tot = _pixels_in_blob(q, blob, off)
    return inside / tot if tot else 0.0


def _mean_rect(rects: list[np.ndarray]) -> np.ndarray:
    """Average of rectangles proposed for the same card, corners matched up first."""
    ref = _clockwise(rects[0])
    acc = [ref]
    for q in rects[1:]:
        q = _clockwise(q)
        k = min(range(4), key=lambda k: float(np.abs(np.roll(q, -k, axis=0) - ref).sum()))
        acc.append(np.roll(q, -k, axis=0))
    return np.mean(acc, axis=0)


def _axis_diff(q1: np.ndarray, q2: np.ndarray) -> float:
    """Angle between the long axes of two rectangles, degrees in [0, 90]."""

    def axis(q):
        e1, e2 = q[1] - q[0], q[3] - q[0]
        v = e1 if np.linalg.norm(e1) > np.linalg.norm(e2) else e2
        return math.degrees(math.atan2(v[1], v[0])) % 180

    d = abs(axis(q1) - axis(q2)) % 180
    return min(d, 180 - d)


_clockwise = clockwise  # the names the rest of this module and its tests use


def warp_card(frame: np.ndarray, corners: np.ndarray, covering=(), touching=()):
    """(canon, visible, own): the card warped upright to CANON_W x CANON_H, where no card on top
    of it lies and the picture shows it (255: a card partly beyond the picture's edge is read and
    judged by its part in view) and where no card touching it lies at all (the face is judged only
    there)."""
    dst = np.float32([[0, 0], [CANON_W, 0], [CANON_W, CANON_H], [0, CANON_H]])
    outline = np.asarray(corners, np.float32)
    m = cv2.getPerspectiveTransform(outline, dst)
    canon = cv2.warpPerspective(
        frame, m, (CANON_W, CANON_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    h, w = frame.shape[:2]
    if outline.min() < 0 or outline[:, 0].max() > w or outline[:, 1].max() > h:
        # (warped like the picture, not its corners projected: a far corner can fall behind the card's plane)
        shown = np.full((h, w), 255, np.uint8)
        visible = cv2.warpPerspective(
            shown,
            m,
            (CANON_W, CANON_H),
            flags=cv2.INTER_NEAREST,
            borderMode=cv2.BORDER_CONSTANT,
            borderValue=0,
        )
    else:
        visible = np.full((CANON_H, CANON_W), 255, np.uint8)
    for poly in covering:
        q = cv2.perspectiveTransform(poly.reshape(-1, 1, 2).astype(np.float32), m).reshape(-1, 2)
        cv2.fillConvexPoly(visible, np.round(q).astype(np.int32), 0)
    own = visible.copy()
    for poly in touching:
        q = cv2.perspectiveTransform(poly.reshape(-1, 1, 2).astype(np.float32), m).reshape(-1, 2)
        cv2.fillConvexPoly(own, np.round(q).astype(np.int32), 0)
    return canon, visible, own


_canonical_order = canonical_order


def _on_disc(q: np.ndarray, disc: dict) -> bool:
    """Whether a disc's centre lies inside the outline q (full px)."""
    c = (float(disc["center"][0]), float(disc["center"][1]))
    return cv2.pointPolygonTest(q.astype(np.float32).reshape(-1, 1, 2), c, False) >= 0


def _pieces_of(card: np.ndarray, found: list[np.ndarray]) -> bool:
    """Whether the felt-stage cards `found` are pieces of one card the verifier vouches for (a card
    cut in strips at a wrong card size: roboflow IMG_5923, an 8 of diamonds on wood cut in thirds),
    not cards of their own: each lies on it and is under PIECE_AREA of it. Two crossed or overlapping
    cards, which the verifier sometimes takes for one square card, are each about half of it."""
    whole = polygon_area(card)
    return all(polygon_area(f) < PIECE_AREA * whole and share_of_smaller(f, card) > 0.85 for f in found)


def _card_under(strip: np.ndarray, found: list[np.ndarray], taken: np.ndarray, dims) -> np.ndarray | None:
    """The outline (work px) of a card of size `dims` (width, length) whose part in view is `strip`
    (a boolean mask) and whose other part lies under the found cards (`taken`, their mask), or None
    where no such card explains it. Tried along the axes of the found card the strip borders most
    and of the strip's own rectangle: the card's sides away from that card lie on the strip's far
    edges."""
    ys, xs = np.nonzero(strip)
    pts = np.stack([xs, ys], axis=1).astype(np.float64)
    near = cv2.dilate(strip.astype(np.uint8), np.ones((7, 7), np.uint8)) > 0
    touch = [int(near[_outline_mask(q, taken.shape)].sum()) for q in found]
    if not touch or max(touch) == 0:
        return None
    top = found[int(np.argmax(touch))]
    angles = [_long_axis_angle(top)]
    (_, _), (rw, rh), ra = cv2.minAreaRect(pts.astype(np.float32))
    angles.append(math.radians(ra + (90.0 if rw < rh else 0.0)))
    w, ln = float(dims[0]), float(dims[1])
    centre = top.mean(axis=0)
    strip_area = float(len(pts))
    best, best_score = None, UNDER_FIT
    for a in angles:
        v = np.array([math.cos(a), math.sin(a)])  # along the card's length
        u = np.array([-v[1], v[0]])
        pu, pv = pts @ u, pts @ v
        if np.ptp(pu) > (1 + UNDER_SLACK) * w or np.ptp(pv) > (1 + UNDER_SLACK) * ln:
            continue
        cu, cv_ = float(centre @ u), float(centre @ v)
        # the sides away from the card on top lie on the strip's far edges
        u0 = float(pu.max()) - w if cu < float(pu.mean()) else float(pu.min())
        v0 = float(pv.max()) - ln if cv_ < float(pv.mean()) else float(pv.min())
        quad = np.array(
            [u0 * u + v0 * v, (u0 + w) * u + v0 * v, (u0 + w) * u + (v0 + ln) * v, u0 * u + (v0 + ln) * v]
        )
        card = _outline_mask(quad, strip.shape)
        inside = float((strip & card).sum()) / strip_area
        hidden = card & ~strip
        under = float((hidden & (taken > 0)).sum()) / max(1.0, float(hidden.sum()))
        in_view = float((card & ~(taken > 0)).sum())
        fit = float((strip & card).sum()) / max(1.0, in_view + strip_area - float((strip & card).sum()))
        score = min(inside, under, fit)
        if score > best_score:
            best, best_score = quad, score
    return best


def _on_the_table(table: np.ndarray, q: np.ndarray) -> bool:
    """Whether the felt or other cards (`table` 1) make up at least FELT_AROUND of a band a fifth of
    the card's width wide round outline `q` (work px): a card lying on the table, not in a chip."""
    w = _card_dims(q)[0]
    band = max(2, int(0.2 * w + 0.5))
    x0, y0 = np.floor(q.min(axis=0)).astype(int) - band - 1
    x1, y1 = np.ceil(q.max(axis=0)).astype(int) + band + 2
    x0, y0 = max(x0, 0), max(y0, 0)
    x1, y1 = min(x1, table.shape[1]), min(y1, table.shape[0])
    if x1 - x0 < 2 or y1 - y0 < 2:
        return False
    card = np.zeros((y1 - y0, x1 - x0), np.uint8)
    cv2.fillConvexPoly(card, np.round(q - [x0, y0]).astype(np.int32), 1)
    ring = cv2.dilate(card, np.ones((2 * band + 1, 2 * band + 1), np.uint8)) > card
    if not ring.any():
        return False
    return float(table[y0:y1, x0:x1][ring].mean()) >= FELT_AROUND


def _outline_mask(q: np.ndarray, shape) -> np.ndarray:
    """The mask (boolean) of one outline on a picture of `shape`."""
    m = np.zeros(shape[:2], np.uint8)
    cv2.fillConvexPoly(m, np.round(q).astype(np.int32), 1)
    return m > 0


def _long_axis_angle(q: np.ndarray) -> float:
    """The direction (radians) of an outline's long sides."""
    a, b = q[1] - q[0], q[2] - q[1]
    side = a if np.linalg.norm(a) >= np.linalg.norm(b) else b
    return math.atan2(float(side[1]), float(side[0]))


def _fills_its_blob(rect: _Rect, leftovers) -> bool:
    """Whether a felt-stage card alone in its blob is that whole blob (IoU >= BLOB_FILL): a card on
    felt the verifier doubts (anglo's dark blue lattice on dark purple felt, 0.014: the first hole card
    dealt to a seat went unseen) is still a card where its blob is a clean card outline; the grain of
    wood or a cloth's folds, which the doubt is for, make ragged blobs."""
    for contour, found in leftovers:
        if len(found) == 1 and found[0] is rect:
            x, y, w, h = cv2.boundingRect(contour)
            blob = np.zeros((h + 2, w + 2), np.uint8)
            cv2.drawContours(blob, [contour - [x - 1, y - 1]], -1, 1, -1)
            card = _outline_mask(rect.corners - [x - 1, y - 1], blob.shape)
            inter = int((card & (blob > 0)).sum())
            union = int((card | (blob > 0)).sum())
            return union > 0 and inter / union >= BLOB_FILL
    return False


def _copies_of(card: np.ndarray, found: list[np.ndarray]) -> bool:
    """Whether the felt-stage cards `found`, which lie partly on a card the verifier is sure of and
    are not that card (see `_verified`), are misplaced copies of it: each of its size (COPY_SIZE).
    One clean card on wood whose blob the grain and its shadow made bigger was explained by four such
    cards, each on one corner of it (roboflow IMG_5961, IMG_5976). The joint outline of a hole-card
    pair, which the verifier sometimes takes for one card, is wider than either card, so its two
    cards are no copies of it."""
    w, ln = _card_dims(card)
    return all(
        abs(fw / w - 1) <= COPY_SIZE and abs(fl / ln - 1) <= COPY_SIZE
        for fw, fl in (_card_dims(f) for f in found)
    )


def _across_cards(found: np.ndarray, sure: list[np.ndarray]) -> bool:
    """Whether a felt-stage card lies across two or more cards the verifier is sure of, which
    between them cover most of it (cards laid edge to edge, cut at the wrong size or turned the
    wrong way): those cards are what is there."""
    own = polygon_area(found)
    shares = [intersection_area(found, q) / own for q in sure if _overlap(found, q)] if own > 0 else []
    shares = [v for v in shares if v > 0.05]
    return len(shares) >= 2 and sum(shares) >= ACROSS_SHARE


def _lying_on(q: np.ndarray, outlines: list[np.ndarray]) -> list[int]:
    """Which of `outlines` the outline q overlaps by more than ADD_OVERLAP of the smaller of the two:
    the found cards a later stage's card would lie on (less than that is a card beside it)."""
    return [i for i, o in enumerate(outlines) if _overlap(q, o) and share_of_smaller(q, o) > ADD_OVERLAP]


def _chip_row(q: np.ndarray, discs: list[dict]) -> bool:
    """Whether the verified card q is the outline of a row of touching chips: CHIP_ROW discs or
    more on it that can be chips. One chip on a card is a card protector (a player's chip laid on
    the hole cards), and a single blob the felt stage took for a disc on a card on a bed sheet's
    wrinkles was one too: with one, the card stays (roboflow IMG_3013, a Ks on a pale sheet)."""
    return sum(_on_disc(q, d) and _chip_on_card(q, d) for d in discs) >= CHIP_ROW


def _chip_on_card(q: np.ndarray, disc: dict) -> bool:
    """Whether a disc the felt stage found on the verified card q can be a chip (then q, a card-shaped
    outline round touching chips, is no card). Not when it is far narrower than a chip beside that
    card (a chip is 0.6 of a card's width: this is a round pip printed on it), nor when it is the card
    itself taken for a round blob, centred on it and about as wide (two touching chips that make a
    card-shaped outline meet at its centre, each centred a quarter of the way along it)."""
    w, _ln = _card_dims(q)
    size = 2 * float(disc["radius"])
    if size < CHIP_MIN_SHARE * w:
        return False
    centre = np.asarray(q, np.float64).mean(axis=0)
    off = float(np.linalg.norm(centre - np.asarray(disc["center"], np.float64)))
    return not (off < DISC_CARD_OFF * w and size <= DISC_CARD_SIZE * w)


def _button_off_cards(button, discs: list[dict], cards) -> ButtonObs | None:
    """The button again, among the discs that do not lie on one of these (verified) cards."""
    best = None
    for d in discs:
        if any(_on_disc(q.corners, d) for q in cards):
            d["kind"] = "card"
            continue
        d["kind"] = "chip"
        if d.get("button_score", 0.0) > 0.5 and (best is None or d["button_score"] > best["button_score"]):
            best = d
    if best is None:
        return None
    best["kind"] = "button"
    if button is not None and tuple(button.center) == tuple(best["center"]):
        return button
    return ButtonObs(best["center"], best["radius"], min(0.99, best["button_score"]))


def _overlap(a: np.ndarray, b: np.ndarray) -> bool:
    return intersection_area(a, b) > 1.0


def _order_overlaps(
    rects: list[_Rect], gray: np.ndarray, work: np.ndarray, mags: list | None = None, grads=None
) -> None:
    """Decide which of two overlapping cards is on top.

    The overlap looks like the card on top (a white face over a back, or the reverse); when both
    look alike (two backs, two faces) the top card's outline shows as an edge across the other.
    `mags`: a list holding the gradient magnitude of `gray` once worked out (shared by the blobs of a
    frame), `grads` its 3x3 Sobel derivatives (CV_32F) when already at hand."""
    if len(rects) < 2:
        return
    mag = None
    for i in range(len(rects)):
        for j in range(i + 1, len(rects)):
            a, b = rects[i].corners, rects[j].corners
            if not _overlap(a, b):
                continue
            top_i = _top_by_looks(a, b, work)
            if top_i is None:
                if mag is None and mags:
                    mag = mags[0]
                if mag is None:
                    if grads is None:
                        grads = (
                            cv2.Sobel(gray, cv2.CV_32F, 1, 0, ksize=3),
                            cv2.Sobel(gray, cv2.CV_32F, 0, 1, ksize=3),
                        )
                    mag = cv2.magnitude(*grads)
                    if mags is not None:
                        mags.append(mag)
                top_i = _edge_strength_inside(a, b, mag) >= _edge_strength_inside(b, a, mag)
            if top_i:
                rects[i].order = max(rects[i].order, rects[j].order + 1)
            else:
                rects[j].order = max(rects[j].order, rects[i].order + 1)


def _top_by_looks(a: np.ndarray, b: np.ndarray, work: np.ndarray) -> bool | None:
    """True if a is on top, False if b is, None if the overlap looks like both."""
    pts = np.vstack([a, b])
    x0, y0 = np.floor(pts.min(axis=0)).astype(int)
    x1, y1 = np.ceil(pts.max(axis=0)).astype(int) + 1
    h, w = work.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 - x0 < 3 or y1 - y0 < 3:
        return None
    ma = np.zeros((y1 - y0, x1 - x0), np.uint8)
    mb = np.zeros_like(ma)
    cv2.fillConvexPoly(ma, np.round(a - [x0, y0]).astype(np.int32), 1)
    cv2.fillConvexPoly(mb, np.round(b - [x0, y0]).astype(np.int32), 1)
    k = np.ones((3, 3), np.uint8)
    ma, mb = cv2.erode(ma, k), cv2.erode(mb, k)
    both = (ma & mb).astype(bool)
    only_a = (ma & (1 - mb)).astype(bool)
    only_b = (mb & (1 - ma)).astype(bool)
    if both.sum() < 10 or only_a.sum() < 10 or only_b.sum() < 10:
        return None
    roi = work[y0:y1, x0:x1].astype(np.float32)
    ca, cb, cab = roi[only_a].mean(axis=0), roi[only_b].mean(axis=0), roi[both].mean(axis=0)
    if np.abs(ca - cb).sum() < 60:  # the two cards look alike
        return None
    return bool(np.abs(cab - ca).sum() < np.abs(cab - cb).sum())


def _edge_strength_inside(a: np.ndarray, b: np.ndarray, mag: np.ndarray) -> float:
    """Mean gradient along a's outline where it runs inside b (away from b's own outline)."""
    pts = np.concatenate(
        [
            a[k]
            + (a[(k + 1) % 4] - a[k])
            * np.linspace(0.05, 0.95, max(int(np.linalg.norm(a[(k + 1) % 4] - a[k])), 2))[:, None]
            for k in range(4)
        ]
    )
    pts = pts[_inside_rect(b, pts, 2.5)]  # inside b by more than 2.5 px
    if not len(pts):
        return 0.0
    h, w = mag.shape
    x = np.clip(np.round(pts[:, 0]).astype(int), 1, w - 2)
    y = np.clip(np.round(pts[:, 1]).astype(int), 1, h - 2)
    local = np.maximum.reduce([mag[y + dy, x + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)])
    return float(local.mean())


def _button_score(frame: np.ndarray, center, radius: float) -> float:
    """How much a disc looks like the dealer button: an even rim and lettering in the middle.

    Chips carry edge spots round the rim (strong colour changes with angle); the button's rim is
    plain. The button carries DEALER or D in the middle; a chip's middle is plain or a thin ring.
    """
    r = float(radius)
    n_ang, n_rad = 72, 24
    polar = cv2.warpPolar(
        frame,
        (n_rad, n_ang),
        (float(center[0]), float(center[1])),
        r,
        cv2.WARP_POLAR_LINEAR + cv2.INTER_LINEAR,
    )
    pf = polar.astype(np.float32)
    rim = pf[:, int(n_rad * 0.72) : int(n_rad * 0.9)].mean(axis=1)  # per angle colour
    rim_var = float(np.sqrt(((rim - rim.mean(axis=0)) ** 2).sum(axis=1)).mean())
    inner = pf[:, : int(n_rad * 0.55)].reshape(-1, 3)
    disc_level = float(np.median(inner.sum(axis=1)))
    gray_in = inner.sum(axis=1)
    dev = np.abs(gray_in - disc_level)
    text_frac = float((dev > 120).mean())
    rim_score = max(0.0, 1.0 - rim_var / 30.0)
    text_score = min(1.0, text_frac / 0.06)
    return rim_score * text_score
