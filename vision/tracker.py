"""From per-frame observations to table events (../shared/spec/table-events.md input lines).

Pure: no I/O and no clock; time comes in with each update. A card counts only once it has been
seen in `debounce_frames` consecutive frames, so a card that flickers for a frame (a hand passing,
a reflection) makes no event. Each card is followed from frame to frame by position, so its
identity is read once (the detector's tracking memo) and its events are emitted once:

- a new face-down card in a seat zone: {"type":"deal","seat":s}, in the order cards arrived;
- a new face-up card in a seat zone: {"type":"deal","seat":s,"card":c} (exposed as it was dealt);
- a dealt card that turns face up: {"type":"expose","seat":s,"card":c,"by":"dealer"};
- new board cards: one {"type":"board","cards":[...]} per group that lands together (a flop);
- the button seen in front of a new seat: {"type":"button_seen","seat":s}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from vision.layout import Layout


@dataclass
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
    exposed: bool = False
    initial_face: str = "down"


class Tracker:
    """`update(detections_or_frame, t) -> list[dict]` of protocol input lines; `reset_hand()` per hand."""

    def __init__(
        self, layout: Layout, debounce_frames: int = 3, detector=None, forget_after: int = 5
    ) -> None:
        self.layout = layout
        self.debounce = max(1, int(debounce_frames))
        self.forget_after = forget_after
        self._detector = detector
        self._tracks: list[_Track] = []
        self._next_id = 1
        self._board_pending: list[_Track] = []
        self._board_quiet = 0
        self._button_seat: int | None = None
        self._button_candidate: int | None = None
        self._button_streak = 0
        self._match_dist = 0.45 * layout.card_width_px()

    # -- public ------------------------------------------------------------------------------
    def reset_hand(self) -> None:
        """A new hand: cards still on the felt are old news; the button is reported again."""
        for tr in self._tracks:
            tr.silent = True
        self._board_pending.clear()
        self._button_seat = None

    def update(self, frame_or_detections, t: float) -> list[dict]:
        det = self._detections(frame_or_detections)
        events: list[dict] = []
        self._match(det["cards"], t)
        events += self._card_events()
        events += self._board_events()
        events += self._button_events(det.get("button"))
        return events

    # -- stages ------------------------------------------------------------------------------
    def _detections(self, x) -> dict:
        if isinstance(x, np.ndarray):
            if self._detector is None:
                from vision.detect import Detector

                self._detector = Detector(layout=self.layout, track=True)
            x = self._detector.detect(x)
        if hasattr(x, "to_dict"):
            x = x.to_dict()
        if not isinstance(x, dict) or not isinstance(x.get("cards"), list):
            raise ValueError("tracker.update needs a frame, a DetectionResult or its dict with 'cards'")
        return x

    def _match(self, cards: list[dict], t: float) -> None:
        seen: set[int] = set()
        pairs = []
        for i, c in enumerate(cards):
            p = np.asarray(c["center"], dtype=np.float64)
            for tr in self._tracks:
                d = float(np.linalg.norm(tr.center - p))
                if d < self._match_dist:
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
        # unconfirmed tracks vanish at the first miss (a flicker); confirmed ones after a while
        self._tracks = [
            tr
            for tr in self._tracks
            if (tr.confirmed and tr.missing <= self.forget_after) or (not tr.confirmed and tr.missing == 0)
        ]
        for i, c in enumerate(cards):
            if i in used_cards:
                continue
            tr = _Track(self._next_id, np.asarray(c["center"], dtype=np.float64), c["face"], c.get("code"), t)
            self._next_id += 1
            self._observe_face(tr, c, first=True)
            self._tracks.append(tr)

    @staticmethod
    def _observe_face(tr: _Track, c: dict, first: bool = False) -> None:
        code = c.get("code")
        if c["face"] == "up" and code:
            tr.up_streak = 1 if first or tr.code != code or tr.face != "up" else tr.up_streak + 1
            tr.code = code
        else:
            tr.up_streak = 0
        if not tr.confirmed:
            tr.face = c["face"]
        elif c["face"] == "up" and code:
            tr.face = "up"

    def _card_events(self) -> list[dict]:
        events = []
        fresh = []
        for tr in self._tracks:
            if tr.silent:
                tr.confirmed = tr.confirmed or tr.streak >= self.debounce
                continue
            if not tr.confirmed and tr.streak >= self.debounce:
                if tr.face == "up" and tr.up_streak < self.debounce:
                    continue  # face up but not read steadily yet: wait
                tr.confirmed = True
                tr.zone = self.layout.zone_at(tuple(tr.center))
                fresh.append(tr)
            elif (
                tr.confirmed
                and not tr.exposed
                and tr.zone
                and tr.zone[0] == "seat"
                and (
                    tr.face == "up"
                    and tr.up_streak >= self.debounce
                    and tr.code
                    and tr.initial_face == "down"
                )
            ):
                tr.exposed = True
                events.append({"type": "expose", "seat": tr.zone[1], "card": tr.code, "by": "dealer"})
        fresh.sort(key=lambda tr: (tr.first_seen, tr.id))
        for tr in fresh:
            tr.initial_face = tr.face
            if tr.zone is None:
                continue
            kind, seat = tr.zone
            if kind == "seat":
                if tr.face == "up":
                    tr.exposed = True
                    events.append({"type": "deal", "seat": seat, "card": tr.code})
                else:
                    events.append({"type": "deal", "seat": seat})
            elif kind == "board" and tr.face == "up":
                self._board_pending.append(tr)
                self._board_quiet = 0
        return events

    def _board_events(self) -> list[dict]:
        if not self._board_pending:
            return []
        self._board_quiet += 1
        if self._board_quiet <= max(1, self.debounce - 1):
            return []  # wait a moment: the rest of a flop may still be landing
        group = sorted(self._board_pending, key=lambda tr: tr.center[0])
        self._board_pending = []
        return [{"type": "board", "cards": [tr.code for tr in group]}]

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
