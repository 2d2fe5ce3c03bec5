"""From per-frame observations to table events (../shared/spec/table-events.md input lines).

Pure: no I/O and no clock; time comes in with each update. A card counts only once it has been
seen in `debounce_frames` consecutive frames, so a card that flickers for a frame (a hand passing,
a reflection) makes no event. Each card is followed from frame to frame by position, so its
identity is read once (the detector's tracking memo) and its events are emitted once:

- a new face-down card in a seat zone: {"type":"deal","seat":s}, in the order cards arrived;
- a new face-up card in a seat zone: {"type":"deal","seat":s,"card":c} (exposed as it was dealt:
  the dealer's exposure); {"type":"deal","seat":s,"face":"up"} when its reading is not sure;
- a dealt card turned face up while the deal goes on: {"type":"expose",...,"by":"dealer"}; once
  the deal is over (a board card, a fold, or every seat holding two cards for `deal_quiet_s`), a
  card turned up in its seat zone is the player's: {"type":"expose",...,"by":"player"};
- hole cards turned up after the river, or by two seats at once before it (an all-in), are a
  showdown: {"type":"show","seat":s,"cards":[...]};
- new board cards: one {"type":"board","cards":[...]} per group that lands together (a flop);
- a face-down card landing on the layout's burn spot before a board card: {"type":"burn"}, told
  just before that board card's line (a pile that merely shifts is no burn);
- a face-up card put on the muck or the burn spot before the board: {"type":"boxed","card":c};
- a seat's hole cards gone from its zone while a face-down card lands on the muck (or off every
  zone): {"type":"fold_seen","seat":s};
- chips arriving in a seat's betting area (layout `bets`): {"type":"chips_seen","seat":s};
- the button seen in front of a new seat: {"type":"button_seen","seat":s}.

A reading whose confidence is below `min_confidence` is never given as a card code, however often it
is read the same (a still camera reads a misread card the same way every frame): a code is given only
when `debounce_frames` frames in a row read it at or above the threshold (`min_hole_confidence`, higher,
for a hole card: its code goes into rulings). A face-up card not read so
within the read wait (`debounce_frames` + `read_wait_frames`) still counts without its code (a `deal`
without `card`, an `expose` without `card`, a `board` with `count`: the exposure needs only that a
card was face up); the table says nothing false about which card it was.

A code is in a deck once, so a code is not given for a card when another card of the hand already
had it, when another card on the table reads the same now, or when two cards of one group (a flop, a
tabled hand) read the same: one of them is misread and which is not known (the card then counts
without its code). Nor is a card named again under another code than the one it was given this
hand (flashed in full view, read otherwise once half covered): one of its readings is wrong. A
`show` is two hole cards of one seat, both face up and both named so; anything less (one card
turned, one unread) gives no `show` line at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from vision.layout import Layout

# A face-up reading below this is not trusted as a card code. The built-in reader's confidence is
# calibrated (vision/confidence.py: the share of such reads that were right on real photos), so
# below 0.5 a code is more likely wrong than right; a code must also be read the same in
# `debounce_frames` frames in a row before it is given.
MIN_CONFIDENCE = 0.5
# A hole card's code needs more: it goes into rulings the LED ring shows and the director sees (the
# replaced exposed card of cool_mule:5.j, a player's exposure, a showdown), and a hole card lies turned
# toward its seat, so its corner is read less well than a board card's. At 0.9 a code is right nine
# times in ten on real photos (vision/read_confidence.json); below it the card counts without its code,
# which is all an exposure misdeal needs (issue 14: a 0.64 reading of a flashed Ac named As).
MIN_HOLE_CONFIDENCE = 0.9
# Two cards whose centres lie closer than this share of a card's width are one card seen twice: a hole
# card dealt over the first lies half a card off it (hil.scene.seat_card_pose), so there is room.
TWIN_SHARE = 0.25


@dataclass(eq=False)  # a track is itself: compared by identity
class _Track:
    id: int
    center: np.ndarray
    face: str
    code: str | None
    first_seen: float
    streak: int = 1  # consecutive frames seen
    missing: int = 0
    confirmed: bool = False
    silent: bool = False  # on the table before reset_hand(): never emits
    zone: tuple | None = None
    up_streak: int = 0  # consecutive frames seen face up with the same code
    up_frames: int = 0  # consecutive frames seen face up, read or not
    exposed: bool = False
    initial_face: str = "down"
    sure: str | None = None  # the code once read the same in `debounce` frames in a row
    sure_confidence: float = 0.0  # the lowest confidence of the readings that made it sure
    low: float = 1.0  # the lowest confidence of the current streak of readings
    hole_seat: int | None = None  # the seat it was dealt to
    left_seat: bool = False  # followed out of its seat zone
    home: np.ndarray | None = None  # a board card: where it was first confirmed


@dataclass
class _TurnUp:
    """Hole cards of one seat turned face up, waiting to be told apart: showdown or exposure."""

    seat: int
    since: float
    cards: list[_Track] = field(default_factory=list)


class Tracker:
    """`update(detections_or_frame, t) -> list[dict]` of protocol input lines; `reset_hand()` per hand."""

    def __init__(
        self,
        layout: Layout,
        debounce_frames: int = 3,
        detector=None,
        forget_after: int = 5,
        min_confidence: float = MIN_CONFIDENCE,
        min_hole_confidence: float = MIN_HOLE_CONFIDENCE,
        deal_quiet_s: float = 1.0,
        show_wait_s: float = 2.0,
        read_wait_frames: int | None = None,
        fold_window_s: float = 2.0,
    ) -> None:
        self.layout = layout
        self.debounce = max(1, int(debounce_frames))
        self.forget_after = forget_after
        self.min_confidence = min_confidence
        self.min_hole_confidence = min_hole_confidence
        self.deal_quiet_s = deal_quiet_s
        self.show_wait_s = show_wait_s
        # a face-up card not read surely within this many more frames counts without its code
        self.read_wait = self.debounce * 2 if read_wait_frames is None else read_wait_frames
        self.fold_window_s = fold_window_s
        if (
            detector is not None
            and not layout.card_width_known
            and getattr(detector, "layout", None) is layout
        ):
            detector.layout = None  # a guessed card size would override the one the detector measures
        self._detector = detector
        self._tracks: list[_Track] = []
        self._next_id = 1
        self._board_pending: list[_Track] = []
        self._board_quiet = 0
        self._button_seat: int | None = None
        self._button_candidate: int | None = None
        self._button_streak = 0
        self._chips: dict[int, dict] = {}  # seat -> {"raw", "streak", "stable", "high"}
        self._t = 0.0
        self._new_hand()

    # -- public ------------------------------------------------------------------------------
    def reset_hand(self) -> None:
        """A new hand: cards still on the felt are old news; the button is reported again."""
        for tr in self._tracks:
            tr.silent = True
        self._board_pending.clear()
        self._button_seat = None
        for st in self._chips.values():
            st["high"] = st["stable"]  # chips already out are not this hand's bets
        self._new_hand()

    def update(self, frame_or_detections, t: float) -> list[dict]:
        det = self._detections(frame_or_detections)
        self._t = t
        events: list[dict] = []
        self._match(self._trusted(det["cards"]), t)
        events += self._card_events(t)
        events += self._turn_up_events(t)
        events += self._fold_events(t)
        events += self._board_events()
        events += self._chip_events(det.get("chips") or [], det["cards"])
        events += self._button_events(det.get("button"))
        return events

    # -- per hand ------------------------------------------------------------------------------
    def _new_hand(self) -> None:
        self._hole: dict[int, list[_Track]] = {}  # seat -> its dealt cards
        self._lost: list[_Track] = []  # this hand's confirmed cards lost from view
        self._board_tracks: list[_Track] = []  # this hand's board cards, where last seen
        self._folded: set[int] = set()
        self._turn_ups: dict[int, _TurnUp] = {}
        self._showed: set[int] = set()
        self._muck_arrivals: list[float] = []  # when face-down cards landed on the muck, unexplained
        self._gone_since: dict[int, float] = {}
        self._board_cards = 0
        self._burn_pending = False
        self._last_deal_t: float | None = None
        self._deal_over = False
        self._given: dict[str, _Track] = {}  # card code -> the card it was given for, this hand

    # -- stages ------------------------------------------------------------------------------
    def _detections(self, x) -> dict:
        if isinstance(x, np.ndarray):
            if self._detector is None:
                from vision.detect import Detector

                lay = self.layout if self.layout.card_width_known else None
                self._detector = Detector(layout=lay, track=True)
            x = self._detector.detect(x)
        if hasattr(x, "to_dict"):
            discs = getattr(x, "discs", None) or []
            x = x.to_dict()
            x["chips"] = [d for d in discs if d.get("kind", "chip") == "chip"]
        if not isinstance(x, dict) or not isinstance(x.get("cards"), list):
            raise ValueError("tracker.update needs a frame, a DetectionResult or its dict with 'cards'")
        return x

    def _trusted(self, cards: list[dict]) -> list[dict]:
        """The cards with every reading below the confidence threshold marked `unsure`: such a
        reading is no reading (`_observe_face`)."""
        out = []
        for c in cards:
            if c.get("code") and float(c.get("confidence", 1.0)) < self.min_confidence:
                c = {**c, "unsure": True}
            out.append(c)
        return out

    def _card_width(self) -> float:
        """A card's width in pixels: the layout's, or the detector's measure where the layout does not
        know it."""
        if not self.layout.card_width_known and getattr(self._detector, "card_width_hint", None):
            return float(self._detector.card_width_hint)
        return self.layout.card_width_px()

    def _match_distance(self) -> float:
        return 0.45 * self._card_width()

    def _match(self, cards: list[dict], t: float) -> None:
        seen: set[int] = set()
        pairs = []
        match_dist = self._match_distance()
        for i, c in enumerate(cards):
            p = np.asarray(c["center"], dtype=np.float64)
            for tr in self._tracks:
                d = float(np.linalg.norm(tr.center - p))
                if d < match_dist:
                    pairs.append((d, i, tr))
        pairs.sort(key=lambda e: e[0])
        used_cards: set[int] = set()
        for _, i, tr in pairs:
            if i in used_cards or tr.id in seen:
                continue
            used_cards.add(i)
            seen.add(tr.id)
            c = cards[i]
            tr.center = np.asarray(c["center"], dtype=np.float64)
            tr.streak += 1
            tr.missing = 0
            self._observe_face(tr, c)
        for tr in self._tracks:
            if tr.id not in seen:
                tr.missing += 1
                tr.streak = 0
                tr.up_streak = 0
                tr.up_frames = 0
        # unconfirmed tracks vanish at the first miss (a flicker); confirmed ones after a while
        kept = []
        for tr in self._tracks:
            if (tr.confirmed and tr.missing <= self.forget_after) or (not tr.confirmed and tr.missing == 0):
                kept.append(tr)
            elif tr.confirmed and not tr.silent and tr.zone is not None:
                self._lost.append(tr)  # hidden a while (a hand over it, a misdetection): it may come back
        self._tracks = kept
        for i, c in enumerate(cards):
            if i in used_cards:
                continue
            tr = _Track(self._next_id, np.asarray(c["center"], dtype=np.float64), c["face"], c.get("code"), t)
            self._next_id += 1
            self._observe_face(tr, c, first=True)
            self._tracks.append(tr)

    def _observe_face(self, tr: _Track, c: dict, first: bool = False) -> None:
        code = c.get("code")
        if c["face"] == "up":
            tr.up_frames = 1 if first or tr.face != "up" else tr.up_frames + 1
        else:
            tr.up_frames = 0
        if c["face"] == "up" and code and not c.get("unsure"):
            conf = float(c.get("confidence", 1.0))
            if first or tr.code != code or tr.face != "up":
                tr.up_streak, tr.low = 1, conf
            else:
                tr.up_streak, tr.low = tr.up_streak + 1, min(tr.low, conf)
            tr.code = code
            if tr.up_streak >= self.debounce and (tr.sure != code or tr.low > tr.sure_confidence):
                tr.sure, tr.sure_confidence = code, tr.low
        else:
            # unread, or read below the calibrated confidence: no reading at all. On a still table a
            # misread is as steady as a good read (the same picture gives the same code), so reading
            # it the same many times over proves nothing (issue 12)
            tr.up_streak = 0
        if not tr.confirmed:
            tr.face = c["face"]
            if c["face"] == "up" and not code:
                tr.code = None
        elif c["face"] == "up":
            tr.face = "up"

    @staticmethod
    def _read_surely(tr: _Track) -> bool:
        return tr.sure is not None

    def _up_settled(self, tr: _Track) -> bool:
        """Face up long enough: read surely, or waited long enough that it stays unread."""
        return self._read_surely(tr) or tr.up_frames >= self.debounce + self.read_wait

    def _card_events(self, t: float) -> list[dict]:
        events = []
        fresh = []
        for tr in self._tracks:
            if tr.silent:
                tr.confirmed = tr.confirmed or tr.streak >= self.debounce
                continue
            if not tr.confirmed and tr.streak >= self.debounce:
                if tr.face == "up" and not self._up_settled(tr):
                    continue  # face up but not read steadily yet: wait
                tr.confirmed = True
                tr.zone = self.layout.zone_at(tuple(tr.center))
                fresh.append(tr)
            elif tr.confirmed and tr.hole_seat is not None and tr.missing == 0:
                self._follow_hole_card(tr)
        fresh.sort(key=lambda tr: (tr.first_seen, tr.id))
        dealt_now: set[int] = set()  # seats given a face-down card in this frame
        for tr in fresh:
            tr.initial_face = tr.face
            if self._came_back(tr):
                continue
            if tr.zone is not None and tr.zone[0] == "seat" and self._twin(tr, fresh):
                # A card found where another card in view lies, a quarter of a card off at most, is
                # that card seen twice (an overlapping pair found as one card face down and a part
                # of it face up): no card lies on another so exactly that both show. Counted, it
                # is a card flashed that never was, or a third card (issue 14). Silent.
                tr.silent = True
                continue
            if tr.zone is not None and tr.zone[0] == "seat" and tr.face == "down":
                if tr.zone[1] in dealt_now:
                    # A dealer lays one card at a time: two face-down cards confirmed at one seat in one
                    # frame are one card the detector split in two (an overlapping pair seen as three),
                    # and counting both would rule a false wrong_card_count misdeal (issue 14). Silent.
                    tr.silent = True
                    continue
                dealt_now.add(tr.zone[1])
            if tr.zone is None:
                if tr.face == "down":
                    self._muck_arrivals.append(t)  # tossed toward the middle
                continue
            kind, seat = tr.zone
            code = self._name(tr)
            if kind == "seat":
                tr.hole_seat = seat
                self._hole.setdefault(seat, []).append(tr)
                self._last_deal_t = t
                if tr.face == "up":
                    tr.exposed = True
                    # unread: still a card dealt face up, which is all an exposure misdeal needs
                    events.append(
                        {"type": "deal", "seat": seat, "card": code}
                        if code
                        else {"type": "deal", "seat": seat, "face": "up"}
                    )
                else:
                    events.append({"type": "deal", "seat": seat})
            elif kind == "board" and tr.face == "up":
                if self._off_the_board_row(tr):
                    tr.silent = True
                    continue
                self._board_tracks.append(tr)
                self._board_pending.append(tr)
                self._board_quiet = 0
            elif kind == "burn" and tr.face == "down":
                # told with the board card it came before: a burn pile that shifts, or is seen as
                # one more card, with no board card after it is no burn
                self._burn_pending = True
            elif kind in ("muck", "burn") and tr.face == "up":
                if code and self._board_cards == 0:
                    events.append({"type": "boxed", "card": code})
            elif kind == "muck":
                self._muck_arrivals.append(t)
        return events

    def _off_the_board_row(self, tr: _Track) -> bool:
        """Board cards lie side by side in one row, never on one another: a card found on top of
        one of this hand's board cards is that card seen split or shifted, and one well off the
        row the first cards made is something else taken for a card (a pot chip, a shadow)."""
        card_w = self._card_width()
        homes = [b.home for b in self._board_tracks if b.home is not None]
        if any(float(np.linalg.norm(h - tr.center)) < 0.8 * card_w for h in homes):
            return True
        if len(homes) >= 2:
            pts = np.array(homes)
            mean = pts.mean(axis=0)
            _, _, vt = np.linalg.svd(pts - mean)
            normal = np.array([-vt[0][1], vt[0][0]])
            if abs(float((tr.center - mean) @ normal)) > 0.5 * card_w:
                return True
        tr.home = tr.center.copy()
        return False

    def _twin(self, tr: _Track, fresh: list[_Track]) -> bool:
        """A card already counted, in view now, lies within TWIN_SHARE of a card's width of this one's
        centre (a card confirmed in this same frame is not one already counted: two new pieces of one card
        split are the `dealt_now` rule's)."""
        reach = TWIN_SHARE * self._card_width()
        return any(
            o is not tr
            and o.confirmed
            and o.missing == 0
            and not any(o is f for f in fresh)
            and float(np.linalg.norm(o.center - tr.center)) < reach
            for o in self._tracks
        )

    def _came_back(self, tr: _Track) -> bool:
        """A card found again where one of this hand's cards was lost, in the same zone, is that
        card (uncovered, or seen again after a misdetection): no new deal, board card or burn."""
        reach = 1.5 * self._match_distance()
        missing = [o for o in self._tracks if o.confirmed and not o.silent and o.missing > 0]
        for old in [*missing, *self._lost]:
            if old.zone != tr.zone or float(np.linalg.norm(old.center - tr.center)) > reach:
                continue
            if old.hole_seat is not None and old.hole_seat in self._folded:
                continue
            if old in self._lost:
                self._lost.remove(old)
            else:
                self._tracks.remove(old)  # moved too far in one frame to be followed: this is it
            tr.hole_seat, tr.initial_face, tr.left_seat = old.hole_seat, old.initial_face, False
            tr.exposed = old.exposed
            if old.hole_seat is not None:
                cards = self._hole.get(old.hole_seat, [])
                cards[cards.index(old)] = tr
            if tr.hole_seat is not None and tr.face == "up" and not tr.exposed:
                self._follow_hole_card(tr)  # it was turned up while hidden
            return True
        return False

    def _deal_is_over(self, t: float) -> bool:
        if self._deal_over:
            return True
        if (
            self._board_cards
            or self._folded
            or (
                self._hole
                and self._last_deal_t is not None
                and t - self._last_deal_t >= self.deal_quiet_s
                and all(len(cards) >= 2 for cards in self._hole.values())
            )
        ):
            self._deal_over = True
        return self._deal_over

    def _follow_hole_card(self, tr: _Track) -> None:
        """A dealt card followed: turned face up where it lies, or moved out of its seat zone."""
        zone = self.layout.zone_at(tuple(tr.center))
        if zone != ("seat", tr.hole_seat):
            if not tr.left_seat and tr.face == "down" and (zone is None or zone[0] == "muck"):
                self._muck_arrivals.append(self._t)  # slid face down toward the middle
            tr.left_seat = True
            return
        if tr.exposed or tr.initial_face != "down" or tr.face != "up" or not self._up_settled(tr):
            return
        tr.exposed = True
        seat = tr.hole_seat
        if seat in self._showed or seat in self._folded:
            return
        pending = self._turn_ups.get(seat)
        if pending is None:
            pending = self._turn_ups[seat] = _TurnUp(seat, self._t)
        pending.cards.append(tr)

    def _turn_up_events(self, t: float) -> list[dict]:
        """Turned-up hole cards: a dealer's flash during the deal, a showdown, or a player's exposure."""
        events: list[dict] = []
        for seat in sorted(self._turn_ups, key=lambda s: self._turn_ups[s].since):
            pending = self._turn_ups[seat]
            if not self._deal_is_over(t):
                # the dealer turned a card over while dealing (bluff_street:33.a.6 counts it as dealt exposed)
                for tr in pending.cards:
                    events.append(self._expose_line(seat, tr, "dealer"))
                del self._turn_ups[seat]
                continue
            live = [tr for tr in self._hole.get(seat, []) if tr in self._tracks]
            all_up = bool(live) and all(tr.face == "up" and self._up_settled(tr) for tr in live)
            waited = t - pending.since >= self.show_wait_s
            others = [s for s in self._turn_ups if s != seat] or self._showed
            showdown = self._board_cards >= 5 or bool(others)
            if showdown and (all_up or waited):
                # every card of the hand now face up, in the order dealt (one dealt face up too); a
                # show is two cards read surely, neither a code some other card of the hand was
                # given: one card up, one unread, or a code already out says nothing
                if len(live) == 2 and all_up:
                    cards = self._names(live, whole=True)
                    if None not in cards:
                        events.append({"type": "show", "seat": seat, "cards": cards})
                self._showed.add(seat)
                del self._turn_ups[seat]
            elif waited:
                for tr in pending.cards:
                    events.append(self._expose_line(seat, tr, "player"))
                del self._turn_ups[seat]
        return events

    def _expose_line(self, seat: int, tr: _Track, by: str) -> dict:
        line = {"type": "expose", "seat": seat, "by": by}
        code = self._name(tr)
        if code:
            line["card"] = code
        return line

    def _names(self, cards: list[_Track], whole: bool = False) -> list[str | None]:
        """The codes to give for cards seen together (a flop, a tabled hand), each None where it is
        not sure: unread, read the same as another card of the group or of the table, or already
        given for another card this hand. One card code is in a deck once: two cards read the same
        means at least one misread, and which one is not known, so neither is named. Given codes
        are remembered; with `whole`, only when every card of the group is named."""
        codes = [self._nameable(tr) for tr in cards]
        out = [c if c is not None and codes.count(c) == 1 else None for c in codes]
        if whole and None in out:
            return out
        for tr, c in zip(cards, out, strict=True):
            if c is not None:
                self._given[c] = tr
        return out

    def _name(self, tr: _Track) -> str | None:
        return self._names([tr])[0]

    def _hole_threshold(self) -> float:
        """The confidence a hole card's code needs. `min_hole_confidence` is on the built-in reader's
        calibrated scale. A venue's enrolled deck (`Detector.model`) reads on a scale of its own, its
        templates and the built-in reader weighed together (`Detector._enrolled_reading`: agreeing,
        0.99; disagreeing, their odds): on a hole card too small for the index network the built-in
        reader's rules read another code at 0.4-0.6, and a right template code comes to 0.84-0.9 (the
        simulated table's flashed hole cards), so there the general threshold holds. On edje's deck
        enrolled from photos, codes read at 0.5 or more were right 243 of 268 times, at 0.95 or
        more 237 of 239 (bench/bench_enroll_real.py)."""
        if getattr(self._detector, "model", None) is not None:
            return self.min_confidence
        return self.min_hole_confidence

    def _nameable(self, tr: _Track) -> str | None:
        code = tr.sure
        if code is None:
            return None
        hole = tr.hole_seat is not None or (tr.zone is not None and tr.zone[0] == "seat")
        if hole and tr.sure_confidence < self._hole_threshold():
            return None  # a hole card read, but not surely enough to name it in a ruling
        owner = self._given.get(code)
        if owner is not None and owner is not tr:
            return None  # the code went out for another card of this hand: one of them is misread
        if any(owner is tr and given != code for given, owner in self._given.items()):
            # this card went out under another code (flashed in full view, read otherwise once the
            # next card half covered it: atlasnye's 4s a 4c at showdown): one reading is wrong
            return None
        for other in self._tracks:
            if other is not tr and not other.silent and other.sure == code and other.missing == 0:
                return None  # another card on the table reads the same now
        return code

    def _fold_events(self, t: float) -> list[dict]:
        """A seat folds when its cards leave its zone and a face-down card lands on the muck (or
        toward the middle) close in time: cards merely hidden by a hand never make a fold."""
        events: list[dict] = []
        self._muck_arrivals = [a for a in self._muck_arrivals if t - a <= self.fold_window_s]
        for seat in sorted(self._hole):
            if seat in self._folded:
                continue
            cards = self._hole[seat]
            gone = all(tr not in self._tracks or tr.missing >= self.debounce or tr.left_seat for tr in cards)
            if not gone:
                self._gone_since.pop(seat, None)
                continue
            since = self._gone_since.setdefault(seat, t)
            arrival = next((a for a in self._muck_arrivals if a >= since - self.fold_window_s), None)
            if arrival is None:
                continue
            self._muck_arrivals.remove(arrival)
            self._folded.add(seat)
            self._turn_ups.pop(seat, None)
            events.append({"type": "fold_seen", "seat": seat})
        return events

    def _board_events(self) -> list[dict]:
        if not self._board_pending:
            return []
        self._board_quiet += 1
        if self._board_quiet <= max(1, self.debounce - 1):
            return []  # wait a moment: the rest of a flop may still be landing
        if any(
            not tr.confirmed
            and not tr.silent
            and tr.streak >= self.debounce
            and tr.face == "up"
            and self.layout.zone_at(tuple(tr.center)) == ("board", None)
            for tr in self._tracks
        ):
            return []  # a card of the group is there but not read yet: the flop is one line
        group = sorted(self._board_pending, key=lambda tr: tr.center[0])
        self._board_pending = []
        self._board_cards += len(group)
        codes = [c for c in self._names(group) if c]
        line: dict = {"type": "board", "cards": codes}
        if len(codes) < len(group):
            line["count"] = len(group)  # cards seen, some not read surely
        burn = [{"type": "burn"}] if self._burn_pending else []
        self._burn_pending = False
        return [*burn, line]

    def _chip_events(self, chips: list, cards: list[dict]) -> list[dict]:
        """Chips in each seat's betting area, counted per frame; a count that rises above what the
        area held since it was last empty, and holds for the debounce, is a push forward.

        Nobody bets onto the muck, the burn spot or the board: a round thing there, or beside a
        card lying on the muck or burn pile (a corner of a messy pile), is not a chip."""
        if not self.layout.bets:
            return []
        piles = [
            np.asarray(c["center"], dtype=np.float64)
            for c in cards
            if (self.layout.zone_at(tuple(c["center"])) or ("",))[0] in ("muck", "burn")
        ]
        near = (
            0.8 * self.layout.card_width_px()
            if self.layout.card_width_known
            else 2.0 * self._match_distance()
        )
        counts: dict[int, int] = dict.fromkeys(self.layout.bets, 0)
        for chip in chips:
            center = tuple(chip["center"] if isinstance(chip, dict) else chip.center)
            seat = self.layout.bet_zone_at(center)
            if seat is None or self.layout.zone_at(center) in (
                ("muck", None),
                ("burn", None),
                ("board", None),
            ):
                continue
            if any(float(np.linalg.norm(p - center)) < near for p in piles):
                continue
            counts[seat] += 1
        events = []
        for seat in sorted(counts):
            st = self._chips.setdefault(seat, {"raw": 0, "streak": 0, "stable": 0, "high": 0})
            n = counts[seat]
            st["streak"] = st["streak"] + 1 if n == st["raw"] else 1
            st["raw"] = n
            if st["streak"] < self.debounce or n == st["stable"]:
                continue
            st["stable"] = n
            if n == 0:
                st["high"] = 0  # the bets were gathered into the pot
            elif n > st["high"]:
                st["high"] = n
                events.append({"type": "chips_seen", "seat": seat})
        return events

    def _button_events(self, button) -> list[dict]:
        if not button:
            self._button_streak = 0
            return []
        center = button["center"] if isinstance(button, dict) else button.center
        z = self.layout.zone_at(tuple(center))
        seat = z[1] if z and z[0] == "seat" else self.layout.nearest_seat(tuple(center))
        if seat == self._button_candidate:
            self._button_streak += 1
        else:
            self._button_candidate, self._button_streak = seat, 1
        if self._button_streak >= self.debounce and seat != self._button_seat:
            self._button_seat = seat
            return [{"type": "button_seen", "seat": seat}]
        return []
