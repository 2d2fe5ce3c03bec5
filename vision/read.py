"""Face up or down, and which card: from a card warped upright to CANON_W x CANON_H pixels.

Face: a card's face is mostly plain white paper; a back is a pattern. After an erosion that wipes
out thin lines, a face keeps large white areas and a back keeps almost none.

Two readers:
- `DeckModel` (from `vision enroll`): the venue's own 52 cards as templates; the card (and its
  corner index) is matched by normalised correlation, in both upright orientations, over the part
  of the card that is not covered by another card. Near perfect for that deck.
- `BuiltinReader`: no deck enrolled. Colour (red/black) from the ink of the corner index; rank
  from the number of pips for 2-10 and A, from "is there a picture" for J/Q/K, and from the corner
  index's rank glyph (which picture cards and covered cards need); suit from the index's suit symbol
  and the pips. Glyph and suit symbol are told by two small classifiers (`vision.read_glyph`,
  weights in read_glyphs.npz, made by `python -m vision.read_train --real` from synthetic cards
  written in outline and Hershey fonts with suit shapes drawn in code, the two GPL decks and the
  real photos' index crops; never the held-out 'drawn' deck); an index the classifier is sure is a
  J, Q or K makes a court card even where no picture was seen (line-art courts). Without the
  weights file it falls back to Hershey glyph templates and shape rules.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from controller.rules.cards import ALL_CODES, RANKS, SUITS  # noqa: F401  (RANKS: re-exported)
from vision.detect_quads import canonical_order
from vision.face_net import BACK_SURE, FACE_NET_MIN_SEEN, FACE_SURE
from vision.face_net import model as face_model
from vision.index_net import averaged, averaged_code, best_code, code_probability, corners_in
from vision.index_net import model as index_model
from vision.read_glyph import (
    RANK_SIZE,
    SUIT_CLASSES,
    SUIT_SIZE,
    crop_features,
    darkness,
    percentile_u8,
    rank_log_probs,
    suit_log_probs,
)
from vision.read_glyph import models as glyph_models

CANON_W, CANON_H = 100, 140
MODEL_VERSION = 1
T_W, T_H = 30, 42  # whole-card template size
F_W, F_H = 50, 70  # finer whole-card template, to tell look-alikes apart (3c/3s)
BIGIDX = 1.5  # a corner suit symbol this much bigger than the pips is read alone (pips blur first)
MATCH_FLOOR = 0.3  # enrolled: a card matching none of the deck's pictures better than this is none of them
LOOK_ALIKE_MARGIN = 0.08  # enrolled: closer than this between same-rank suits of one colour ...
LOOK_ALIKE_VOTE = 2.0  # ... the suit classifier overrules when this sure (summed log-odds)
LOOK_ALIKE_PAIRS = ("cs", "hd")  # same-colour suits
LOOK_ALIKE_BLUR = (0.0, 1.0)  # px: the enrolled pictures the classifier is checked on, sharp and blurred
# the built-in reader this sure (calibrated) of a code of an enrolled deck outranks the deck's templates
# (vision.detect.Detector._settled_by_builtin), unless it read one of the deck's own pictures as that
# code this surely (`builtin_misreads`, worked out at enrolment)
BUILTIN_SURE = 0.95
# ... and on a deck whose own pictures it reads without a sure misread (no `builtin_misreads`: the
# standard indices it learnt), this sure of a code the templates did not read: calibrated, right at
# least three times in four, where the templates' disagreeing score is no probability at all
BUILTIN_TRUSTED = 0.75
INDEX_CANDIDATES = 5  # enrolled: this many best whole-card matches have their corner index compared
# enrolled: a best whole-card match under this and the card is matched a quarter turn round too.
# Through the simulated camera (vision.read_synth, half the views degraded), the right card upright
# matched at 0.76 at worst and a card on its side at 0.62 at best, on tango, anglo_poker and three
# Aisleriot train themes; only the cost depends on it (the better way round stands)
TURN_MATCH = 0.7
COURT_RULE = 0.3  # weight of the court letter's shape rule (hole / narrow) next to the glyph score
INDEX_RED = 0.19  # redness of the index's darkest pixels above which the card is red
INDEX_RED_WEIGHT = 12.0  # log-odds per unit of redness, against the suit symbols' shapes (_index_colour)
INDEX_INK = (2, 2, 24, 46)  # x0, y0, x1, y1 where the index's ink is looked at for its colour
EDGE = 0.5  # a piece of the index box's top/left edge smaller than this share of the biggest is not ink
IDX_BOX = (0, 0, 26, 46)  # x0, y0, x1, y1 of the corner index in the canonical card
INDEX_FAINT = 0.22  # darkness (0 paper .. 1 ink) above which pale index printing counts as ink
MIRROR_TOL = 0.07  # of the card size: how far a pip's mirror partner may lie from the exact mirror place
IDX_SEARCH = (1, 1, 32, 64)  # where the built-in reader looks for the index's rank and suit symbol


class DeckModelError(ValueError):
    """A deck model file or deck folder that cannot be used (message names it)."""


@dataclass
class ReadResult:
    face: str
    code: str | None
    confidence: float
    # the built-in reader's rules read it without the index network being asked (a card too small for
    # it, or no network): its score is calibrated by the rules' own map (vision.confidence)
    rules_alone: bool = False
    # an enrolled reading: the deck's codes its templates matched best, best first (INDEX_CANDIDATES)
    candidates: tuple[str, ...] = ()


# -- face ------------------------------------------------------------------------------------
WHITE_GAIN = 1.5  # at most this much is a channel raised to make the card's paper white


def white_mask(canon: np.ndarray) -> np.ndarray:
    """Plain paper: bright and unsaturated once the light's tint is taken out (each channel raised
    towards the brightest's 95th percentile, by at most WHITE_GAIN: a warm lamp tints paper beige,
    while a red or blue back stays coloured)."""
    white = np.array([percentile_u8(canon[::2, ::2, i], 95) for i in range(3)], np.float32) + 1.0
    gain = np.clip(white.max() / white, 1.0, WHITE_GAIN)
    if gain.max() > 1.02:
        canon = np.clip(canon.astype(np.float32) * gain, 0, 255).astype(np.uint8)
    hsv = cv2.cvtColor(canon, cv2.COLOR_BGR2HSV)
    v, s = hsv[:, :, 2], hsv[:, :, 1]
    p95 = percentile_u8(v[4:-4, 4:-4], 95)
    return ((v > 0.72 * p95) & (s < 70) & (p95 > 60)).astype(np.uint8)


def face_up_score(canon: np.ndarray, visible: np.ndarray) -> float:
    """0..1; above 0.5 means face up. Share of the visible card that is broad plain white."""
    white = white_mask(canon)
    eroded = cv2.erode(white, np.ones((7, 7), np.uint8))
    vis = visible[4:-4, 4:-4] > 0
    if vis.sum() < 400:
        vis = np.ones_like(vis)
    frac = float(eroded[4:-4, 4:-4][vis].mean())
    return float(min(1.0, frac / 0.2))


def paper_down(canon: np.ndarray, own: np.ndarray) -> ReadResult | None:
    """A face-down ReadResult when little of the card is plain paper (the paper test), else None."""
    up = face_up_score(canon, own)
    return ReadResult("down", None, 1.0 - up / 2) if up < 0.5 else None


def _back_probability(canon: np.ndarray, own: np.ndarray, visible: np.ndarray | None = None) -> float | None:
    """The face network's P(back), or None where there is no network or the card is mostly hidden.
    It looks at the card where no other card lies (`own`); where that is too little of it, at the
    part no card lies on (`visible`, by the stacking order): the top card of a hole-card pair laid
    almost square on the other has only a third of itself clear of it, and a pale back on top was
    called face up on some frames and face down on others, which the tracker took for a card dealt
    face up (`neoclassical` through vision track)."""
    net = face_model()
    if net is None:
        return None
    if own.mean() < FACE_NET_MIN_SEEN * 255:
        if visible is None or visible.mean() < FACE_NET_MIN_SEEN * 255:
            return None
        own = visible
    return net.back_probability(canon, own)


def network_down(canon: np.ndarray, own: np.ndarray, visible: np.ndarray | None = None) -> ReadResult | None:
    """A face-down ReadResult when the face network is sure the card is a back (a pale pattern on
    white passes the paper test: `vision.face_net`), else None."""
    back = _back_probability(canon, own, visible)
    return (
        ReadResult("down", None, round(min(0.99, back), 3))
        if back is not None and back >= BACK_SURE
        else None
    )


def network_face(canon: np.ndarray, own: np.ndarray, visible: np.ndarray | None = None) -> bool:
    """Whether the face network is sure the card is a face (P(back) <= FACE_SURE): a face the paper
    test calls face down for want of white -- a gold-foil card, a court whose picture fills it -- is
    face up when this holds, read where it can be (an enrolled deck: when it matches one of its cards)."""
    back = _back_probability(canon, own, visible)
    return back is not None and back <= FACE_SURE


def judge_face(canon: np.ndarray, own: np.ndarray, visible: np.ndarray | None = None) -> ReadResult | None:
    """A face-down ReadResult when the card is a back, else None (face up): the paper test, then
    the face network."""
    return paper_down(canon, own) or network_down(canon, own, visible)


def _ncc(a: np.ndarray, b: np.ndarray, w: np.ndarray | None = None) -> float:
    """Normalised correlation of two arrays (optionally weighted)."""
    a = a.astype(np.float32).ravel()
    b = b.astype(np.float32).ravel()
    if w is not None:
        w = w.astype(np.float32).ravel()
        if w.sum() < 10:
            return 0.0
        ma, mb = (a * w).sum() / w.sum(), (b * w).sum() / w.sum()
        da, db = (a - ma) * w, (b - mb) * w
        return float(
            (da * (b - mb)).sum() / (math.sqrt((da * (a - ma)).sum() * (db * (b - mb)).sum()) + 1e-6)
        )
    a = a - a.mean()
    b = b - b.mean()
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-6))


def _normalise(canon: np.ndarray) -> np.ndarray:
    """Lighting-independent colour: each channel divided by the card's white level."""
    f = canon.astype(np.float32)
    white = np.array([percentile_u8(canon[:, :, i], 95) for i in range(3)], np.float32) + 1.0
    return np.clip(f / white, 0, 1.2)


# -- enrolled deck ----------------------------------------------------------------------------
class DeckModel:
    """Templates of one deck: whole card (small) and corner index (sharper), plus the back if given."""

    def __init__(
        self,
        codes: list[str],
        full: np.ndarray,
        index: np.ndarray,
        back: np.ndarray | None,
        name: str = "",
        fine: np.ndarray | None = None,
        trusted_pairs: tuple[str, ...] = LOOK_ALIKE_PAIRS,
        builtin_misreads: tuple[str, ...] | None = (),
    ):
        self.codes = codes
        # the codes the built-in reader, at its surest, read one of this deck's other cards as
        # (`builtin_misreads`, worked out at enrolment): it may not overrule the templates with them
        # (None: not worked out, a model enrolled before they were -- none known, and no deck of
        # standard indices either)
        self.builtin_misreads = tuple(builtin_misreads or ())
        self.misreads_known = builtin_misreads is not None
        # the same-colour suit pairs whose look-alikes the built-in suit classifier may settle: those
        # it tells apart on this deck's own cards (`suit_pairs_told_apart`, worked out at enrolment)
        self.trusted_pairs = tuple(trusted_pairs)
        self.fine = None if fine is None else fine.astype(np.float32)  # (52, F_H, F_W, 3)
        self.full = full.astype(np.float32)  # (52, T_H, T_W, 3)
        self.index = index.astype(np.float32)  # (52, ih, iw, 3)
        self.back = None if back is None else back.astype(np.float32)
        self.name = name
        f = self.full.reshape(len(codes), -1)
        self._full_flat, self._full_sq = f, f * f  # for correlations weighted by what is in view
        f = f - f.mean(axis=1, keepdims=True)
        self._full_n = f / (np.linalg.norm(f, axis=1, keepdims=True) + 1e-6)
        self._idx_cache: list[list[np.ndarray] | None] = [None] * len(codes)
        self._fine_cache: list[list[np.ndarray] | None] = [None] * len(codes)

    @staticmethod
    def fine_features(canon: np.ndarray) -> np.ndarray:
        return cv2.GaussianBlur(
            cv2.resize(_normalise(canon), (F_W, F_H), interpolation=cv2.INTER_AREA), (3, 3), 0
        )

    @staticmethod
    def features(canon: np.ndarray, n: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Whole card (small) and corner index; `n` is the card already normalised, if at hand."""
        n = _normalise(canon) if n is None else n
        full = cv2.resize(n, (T_W, T_H), interpolation=cv2.INTER_AREA)
        x0, y0, x1, y1 = IDX_BOX
        index = cv2.GaussianBlur(n[y0:y1, x0:x1], (3, 3), 0)
        return full, index

    def read(self, canon: np.ndarray, visible: np.ndarray, own: np.ndarray | None = None) -> ReadResult:
        norm = _normalise(canon)
        if self.back is not None:
            full, _ = self.features(canon, norm)
            vis_small = cv2.resize(visible, (T_W, T_H), interpolation=cv2.INTER_AREA) > 128
            w = np.repeat(vis_small[:, :, None], 3, axis=2)
            back_sim = max(_ncc(full, self.back, w), _ncc(full, self.back[::-1, ::-1], w))
            # like the back and no paper to speak of; or more like the back than like any of the
            # faces: a back printed in a pale pattern on white passes the paper test, and its match
            # with the back (0.4-0.6 where part of it is hidden) stays under 0.6 (docs/vision.md).
            # Both under MATCH_FLOOR, it is like neither (a face half under a back, warped whole)
            if (back_sim > 0.6 and face_up_score(canon, visible if own is None else own) < 0.9) or (
                back_sim > MATCH_FLOOR and back_sim > self._face_similarity(full, w)
            ):
                return ReadResult("down", None, min(0.99, 0.5 + back_sim / 2))
        face = visible if own is None else own
        down = judge_face(canon, face, visible)
        if down is not None and not network_face(canon, face, visible):
            return down
        best, second, code, ranked = self._match(canon, face, norm)
        if best < TURN_MATCH:
            # no card of the deck matches well: the card may have been warped on its side (see
            # _quarter_turn); the better of the two ways round stands
            side, side_face = _quarter_turn(canon, face)
            turned = self._match(side, side_face)
            if turned[0] > best:
                best, second, code, ranked = turned
        if down is not None and best <= MATCH_FLOOR:
            return down  # the network saw a face, but it is none of this deck's
        conf = max(0.0, min(0.99, 0.5 + (best - second) * 2.5)) if best > MATCH_FLOOR else 0.2
        return ReadResult("up", code if best > MATCH_FLOOR else None, conf, candidates=ranked)

    def _face_similarity(self, full: np.ndarray, w: np.ndarray) -> float:
        """The best whole-card correlation of the card (what `w` leaves in view) with any of the
        deck's faces, either way up."""
        turned = np.ascontiguousarray(full[::-1, ::-1])
        return float(max(self._masked_ncc(full, w).max(), self._masked_ncc(turned, w[::-1, ::-1]).max()))

    def _index_templates(self, k: int) -> list[np.ndarray]:
        """Card k's corner index as enrolled and blurred as a camera might see it (made once)."""
        if self._idx_cache[k] is None:
            self._idx_cache[k] = [
                np.ascontiguousarray(t[4:-4, 3:-3]) for t in _blurred(self.index[k], (0.0, 1.0, 2.0))
            ]
        return self._idx_cache[k]

    def _fine_templates(self, k: int) -> list[np.ndarray]:
        if self._fine_cache[k] is None:
            self._fine_cache[k] = [
                np.ascontiguousarray(t[2:-2, 2:-2]) for t in _blurred(self.fine[k], (0.0, 0.6, 1.2, 1.8))
            ]
        return self._fine_cache[k]

    def _masked_ncc(self, full: np.ndarray, w: np.ndarray) -> np.ndarray:
        """Weighted normalised correlation of `full` with every whole-card template at once."""
        a, w = full.ravel().astype(np.float32), w.ravel().astype(np.float32)
        sw = float(w.sum())
        if sw < 10:
            return np.zeros(len(self.codes))
        ma = float((a * w).sum()) / sw
        da = (a - ma) * w
        var_a = float((da * (a - ma)).sum())
        tw = self._full_flat @ w
        mb = tw / sw
        num = self._full_flat @ da - mb * float(da.sum())
        var_b = self._full_sq @ w - mb * mb * sw
        return num / (np.sqrt(np.maximum(var_a * var_b, 0.0)) + 1e-6)

    def _match(
        self, canon: np.ndarray, visible: np.ndarray, norm: np.ndarray | None = None
    ) -> tuple[float, float, str, tuple[str, ...]]:
        """(best score, runner-up's score, code, the codes matched best, best first)."""
        norm = _normalise(canon) if norm is None else norm
        # the whole card, in both upright orientations (the better one counts)
        s_full = np.full(len(self.codes), -1.0)
        s_rot = []  # the whole-card scores of each way up
        corners = []  # the corner indices in view, each turned to the top-left
        for rot in (False, True):
            img = np.ascontiguousarray(canon[::-1, ::-1] if rot else canon)
            n_img = np.ascontiguousarray(norm[::-1, ::-1] if rot else norm)
            vis = np.ascontiguousarray(visible[::-1, ::-1] if rot else visible)
            full, _index = self.features(img, n_img)
            vis_small = cv2.resize(vis, (T_W, T_H), interpolation=cv2.INTER_AREA) > 128
            if vis_small.mean() > 0.97:
                f = full.ravel() - full.mean()
                s = self._full_n @ (f / (np.linalg.norm(f) + 1e-6))
            else:
                s = self._masked_ncc(full, np.repeat(vis_small[:, :, None], 3, axis=2))
            s_full = np.maximum(s_full, s)
            s_rot.append(s)
            x0, y0, x1, y1 = IDX_BOX
            if vis[y0:y1, x0:x1].mean() > 200:
                search = np.ascontiguousarray(n_img[0 : y1 + 6, 0 : x1 + 6])
                corners.append(cv2.GaussianBlur(search, (3, 3), 0))
        scores = s_full
        if corners:
            # the corner index decides between look-alikes (3c/3s, 6h/6d) whichever way up the
            # card lies (both corners carry it): searched over a few pixels of shift because the
            # card's outline is only known to a pixel or two
            cand = np.argsort(-s_full)[:INDEX_CANDIDATES]
            scores = s_full * 0.5
            # how blurred the camera saw the index (so do we blur the templates): judged on the
            # two best candidates, then used for the others
            blur = [None] * len(corners)
            idx_best = dict.fromkeys((int(k) for k in cand), -1.0)
            for j, search in enumerate(corners):
                top = -1.0
                for k in cand[:2]:
                    for b, t in enumerate(self._index_templates(int(k))):
                        v = float(cv2.matchTemplate(search, t, cv2.TM_CCOEFF_NORMED).max())
                        idx_best[int(k)] = max(idx_best[int(k)], v)
                        if v > top:
                            top, blur[j] = v, b
                for k in cand[2:]:
                    t = self._index_templates(int(k))[blur[j]]
                    v = float(cv2.matchTemplate(search, t, cv2.TM_CCOEFF_NORMED).max())
                    idx_best[int(k)] = max(idx_best[int(k)], v)
            for k, v in idx_best.items():
                scores[k] = 0.4 * s_full[k] + 0.6 * v
        order = np.argsort(-scores)
        if self.fine is not None and visible.mean() > 250 and scores[order[0]] - scores[order[2]] < 0.25:
            # close call between look-alikes: compare the whole card finely, allowing a small shift
            # each candidate in the way up its whole card matched best (a look-alike differs in
            # the pips, not in which way up it lies); how blurred the camera saw the card judged
            # on the two best, as for the index
            obs_by_rot = {}
            fine, blur, top = {}, 0, -1.0
            for j, k in enumerate(int(k) for k in order[:3]):
                rot = bool(s_rot[1][k] > s_rot[0][k])
                if rot not in obs_by_rot:
                    n_img = np.ascontiguousarray(norm[::-1, ::-1] if rot else norm)
                    fine_obs = cv2.GaussianBlur(
                        cv2.resize(n_img, (F_W, F_H), interpolation=cv2.INTER_AREA), (3, 3), 0
                    )
                    obs_by_rot[rot] = cv2.copyMakeBorder(fine_obs, 3, 3, 3, 3, cv2.BORDER_REPLICATE)
                temps = list(enumerate(self._fine_templates(k)))
                for b, t in temps if j < 2 else [temps[blur]]:
                    v = float(cv2.matchTemplate(obs_by_rot[rot], t, cv2.TM_CCOEFF_NORMED).max())
                    fine[k] = max(fine.get(k, -1.0), v)
                    if j < 2 and v > top:
                        top, blur = v, b
            # the fine whole card (pip shapes) and the corner index (rank) decide together
            both = {k: 0.5 * fine[k] + 0.5 * float(scores[k]) for k in fine}
            ranked = sorted(both, key=lambda k: -both[k])
            best, second = ranked[0], ranked[1]
            margin = both[best] - both[second]
            best, second, margin = self._look_alike(canon, visible, best, second, margin)
            return float(scores[best]), float(scores[best]) - margin, self.codes[best], self._ranked(order)
        best, second = int(order[0]), int(order[1])
        margin = float(scores[best] - scores[second])
        best, second, margin = self._look_alike(canon, visible, best, second, margin)
        return float(scores[best]), float(scores[best]) - margin, self.codes[best], self._ranked(order)

    def _ranked(self, order: np.ndarray) -> tuple[str, ...]:
        return tuple(self.codes[int(k)] for k in order[:INDEX_CANDIDATES])

    def _look_alike(self, canon, visible, best: int, second: int, margin: float):
        """Same rank, suits of one colour (7c/7s, 6h/6d) and a close call: the shapes of the suit
        symbols in view decide, told by the built-in reader's suit classifier (a blurred club fits a
        sharp spade template about as well as a sharp club one)."""
        a, b = self.codes[best], self.codes[second]
        if a[0] != b[0] or _is_red(a) != _is_red(b) or margin > LOOK_ALIKE_MARGIN:
            return best, second, margin
        if not any(set(pair) == {a[1], b[1]} for pair in self.trusted_pairs):
            return best, second, margin  # the classifier does not know this deck's shapes
        vote = suit_vote(canon, visible, a[1], b[1])
        if vote < -LOOK_ALIKE_VOTE:
            return second, best, margin
        return best, second, margin

    @property
    def standard_indices(self) -> bool:
        """A deck the built-in reader reads on its own pictures without a sure misread: the standard
        indices it learnt (Detector._settled_by_builtin trusts it there from BUILTIN_TRUSTED)."""
        return self.misreads_known and not self.builtin_misreads

    # -- files ---------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        with open(path, "wb") as fh:
            np.savez_compressed(
                fh,
                version=np.array(MODEL_VERSION),
                kind=np.array("smart-table-deck"),
                name=np.array(self.name),
                codes=np.array(self.codes),
                full=self.full.astype(np.float16),
                index=self.index.astype(np.float16),
                fine=self.fine.astype(np.float16) if self.fine is not None else np.zeros((0,), np.float16),
                back=self.back.astype(np.float16) if self.back is not None else np.zeros((0,), np.float16),
                trusted_pairs=np.array(self.trusted_pairs, dtype="<U2"),
                # (not written where never worked out: loaded again, still unknown)
                **(
                    {"builtin_misreads": np.array(self.builtin_misreads, dtype="<U2")}
                    if self.misreads_known
                    else {}
                ),
            )


def _blurred(t: np.ndarray, sigmas: tuple[float, ...]):
    """A template as sharp as enrolled and as blurred as a camera might see it (a blurred club
    looks more like a sharp spade than like a sharp club)."""
    for sg in sigmas:
        yield t if sg == 0 else cv2.GaussianBlur(t, (0, 0), sg)


def load_model(path: str | Path) -> DeckModel:
    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as z:
            if "kind" not in z or str(z["kind"]) != "smart-table-deck":
                raise DeckModelError(
                    f"{p}: not a smart-table deck model (made by `smart-table vision enroll`)"
                )
            if int(z["version"]) != MODEL_VERSION:
                raise DeckModelError(f"{p}: deck model version {int(z['version'])}, expected {MODEL_VERSION}")
            codes = [str(c) for c in z["codes"]]
            full, index, back = z["full"], z["index"], z["back"]
            fine = z["fine"] if "fine" in z else np.zeros((0,))
            name = str(z["name"])
            # (a model enrolled before the pairs were checked lets the classifier settle both)
            pairs = tuple(str(p) for p in z["trusted_pairs"]) if "trusted_pairs" in z else LOOK_ALIKE_PAIRS
            # (a model enrolled before they were worked out: none known)
            misreads = tuple(str(c) for c in z["builtin_misreads"]) if "builtin_misreads" in z else None
    except DeckModelError:
        raise
    except FileNotFoundError as exc:
        raise DeckModelError(f"{p}: no such deck model file") from exc
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise DeckModelError(f"{p}: unreadable deck model ({exc.__class__.__name__}: {exc})") from exc
    if sorted(codes) != sorted(ALL_CODES) or full.shape != (52, T_H, T_W, 3):
        raise DeckModelError(f"{p}: deck model is incomplete or damaged")
    if fine.size and fine.shape != (52, F_H, F_W, 3):
        raise DeckModelError(f"{p}: deck model is damaged (fine templates)")
    if any(pair not in LOOK_ALIKE_PAIRS for pair in pairs):
        raise DeckModelError(f"{p}: deck model is damaged (trusted suit pairs {list(pairs)})")
    if any(code not in ALL_CODES for code in misreads or ()):
        raise DeckModelError(f"{p}: deck model is damaged (built-in misreads {list(misreads)})")
    return DeckModel(
        codes, full, index, back if back.size else None, name, fine if fine.size else None, pairs, misreads
    )


def card_from_image(img: np.ndarray) -> np.ndarray:
    """A straight-on picture or scan of one card -> canonical upright BGR card (CANON_W x CANON_H)."""
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.shape[2] == 4:
        a = img[:, :, 3]
        ys, xs = np.nonzero(a > 128)
        if len(xs) == 0:
            raise DeckModelError("image is fully transparent")
        alpha = a[:, :, None].astype(np.float32) / 255.0
        img = (img[:, :, :3] * alpha + 255 * (1 - alpha)).astype(np.uint8)
        img = img[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    else:
        img = _crop_card(img)
    if img.shape[1] > img.shape[0]:
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
    return cv2.resize(img, (CANON_W, CANON_H), interpolation=cv2.INTER_AREA)


def _crop_card(img: np.ndarray) -> np.ndarray:
    """If the picture shows the card on a background, cut the card out; a full-frame scan is kept."""
    h, w = img.shape[:2]
    border = np.concatenate([img[0], img[-1], img[:, 0], img[:, -1]]).astype(np.float32)
    ref = np.median(border, axis=0)
    diff = np.abs(img.astype(np.float32) - ref).sum(axis=2)
    mask = (diff > 60).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    cs, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not cs:
        return img
    c = max(cs, key=cv2.contourArea)
    if cv2.contourArea(c) < 0.2 * h * w:
        return img
    rect = cv2.minAreaRect(c)
    box = cv2.boxPoints(rect)
    q = canonical_order(box).astype(np.float32)
    cw, ch = int(np.linalg.norm(q[1] - q[0])), int(np.linalg.norm(q[3] - q[0]))
    m = cv2.getPerspectiveTransform(q, np.float32([[0, 0], [cw, 0], [cw, ch], [0, ch]]))
    return cv2.warpPerspective(img, m, (cw, ch))


def enroll_deck(deck_dir: str | Path) -> tuple[DeckModel, list[str]]:
    """Build a DeckModel from a folder of 52 card images (+ optional back). Returns (model, warnings).

    Raises DeckModelError listing every missing, unreadable or duplicate card by name.
    """
    d = Path(deck_dir)
    if not d.is_dir():
        raise DeckModelError(f"{d}: not a folder")
    exts = {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}
    by_code: dict[str, list[Path]] = {}
    warnings = []
    for f in sorted(d.iterdir()):
        if not f.is_file():
            continue
        if f.suffix.lower() not in exts:
            if f.suffix.lower() not in {".txt", ".md", ""}:
                warnings.append(f"ignored {f.name}: not an image")
            continue
        stem = f.stem
        code = stem[0].upper() + stem[1:].lower() if len(stem) == 2 else stem.lower()
        if code == "10" or (len(stem) == 3 and stem[:2] == "10"):
            code = "T" + stem[-1].lower()
        if code not in ALL_CODES and code != "back":
            warnings.append(f"ignored {f.name}: not a card code")
            continue
        by_code.setdefault(code, []).append(f)
    problems = []
    missing = [c for c in ALL_CODES if c not in by_code]
    if missing:
        problems.append("missing: " + ", ".join(missing))
    dups = [f"{c} ({', '.join(p.name for p in fs)})" for c, fs in by_code.items() if len(fs) > 1]
    if dups:
        problems.append("duplicate: " + "; ".join(dups))
    canons: dict[str, np.ndarray] = {}
    unreadable = []
    for code, fs in by_code.items():
        img = cv2.imread(str(fs[0]), cv2.IMREAD_UNCHANGED)
        if img is None or img.size == 0:
            unreadable.append(fs[0].name)
            continue
        try:
            canons[code] = card_from_image(img)
        except DeckModelError as exc:
            unreadable.append(f"{fs[0].name} ({exc})")
    if unreadable:
        problems.append("unreadable: " + ", ".join(sorted(unreadable)))
    if problems:
        raise DeckModelError(f"{d}: " + "; ".join(problems))
    full, index = zip(*(DeckModel.features(canons[c]) for c in ALL_CODES), strict=True)
    back = DeckModel.features(canons["back"])[0] if "back" in canons else None
    fine = np.stack([DeckModel.fine_features(canons[c]) for c in ALL_CODES])
    pairs = suit_pairs_told_apart(canons)
    misreads = builtin_misreads(canons)
    model = DeckModel(list(ALL_CODES), np.stack(full), np.stack(index), back, d.name, fine, pairs, misreads)
    return model, warnings


def suit_pairs_told_apart(canons: dict[str, np.ndarray]) -> tuple[str, ...]:
    """The same-colour suit pairs ("cs", "hd") that the built-in suit classifier tells apart on every
    card of a deck (the enrolled pictures, sharp and blurred as a camera sees them): only for those
    may it overrule the deck's own templates on a close call (`DeckModel._look_alike`). It learnt
    the usual suit shapes; some decks draw them otherwise (Aisleriot's plastic: a club it takes for
    a spade on all 26 clubs and spades, sharp or blurred; orell's spades, tango_nuevo's four
    colours), and there it turned every right template match of a club into a spade."""
    seen = np.full((CANON_H, CANON_W), 255, np.uint8)

    def kept(code: str, canon: np.ndarray, sigma: float, pair: str) -> bool:
        """The classifier would not overrule this card of the deck's own (the override's bar)."""
        card = canon if sigma == 0 else cv2.GaussianBlur(canon, (0, 0), sigma)
        vote = suit_vote(card, seen, pair[0], pair[1])
        return (vote if code[1] == pair[0] else -vote) >= -LOOK_ALIKE_VOTE

    return tuple(
        pair
        for pair in LOOK_ALIKE_PAIRS
        if all(
            kept(code, canon, sigma, pair)
            for code, canon in canons.items()
            if code != "back" and code[1] in pair
            for sigma in LOOK_ALIKE_BLUR
        )
    )


def builtin_misreads(canons: dict[str, np.ndarray], calibration: str | None = None) -> tuple[str, ...]:
    """The codes the built-in reader, at its surest (BUILTIN_SURE, calibrated by the shipped map),
    reads one of a deck's other cards as, on the enrolled pictures (sharp and blurred as a camera
    sees them): a deck with its own index letters or suit shapes (a German B for a jack, a club
    drawn like a spade) that it reads surely and wrong. Only to those codes may it not overrule
    the deck's templates; to all others it may, where it is that sure (`Detector._settled_by_builtin`).
    `calibration`: the confidence map's file (None: the shipped one)."""
    from vision.confidence import calibrated
    from vision.confidence import load as load_calibration

    calibrate = load_calibration(calibration)
    reader = BuiltinReader()
    seen = np.full((CANON_H, CANON_W), 255, np.uint8)
    wrong: set[str] = set()
    for code, canon in canons.items():
        if code == "back":
            continue
        for sigma in LOOK_ALIKE_BLUR:
            card = canon if sigma == 0 else cv2.GaussianBlur(canon, (0, 0), sigma)
            res = reader.read(card, seen)
            if (
                res.face == "up"
                and res.code not in (None, code)
                and calibrated(res, calibrate) >= BUILTIN_SURE
            ):
                wrong.add(res.code)
    return tuple(sorted(wrong))


# -- built-in reader --------------------------------------------------------------------------
def suit_vote(canon: np.ndarray, visible: np.ndarray, a: str, b: str) -> float:
    """Summed log-odds of suit a against suit b over the suit symbols in view (index symbols of
    the corners in view, and the pips of a fully visible card); 0 without the classifiers."""
    if glyph_models() is None:
        return 0.0
    ink, red = _ink(canon)
    dark = darkness(canon)
    feats = []
    for rot in (False, True):
        flip = (lambda x: np.ascontiguousarray(x[::-1, ::-1])) if rot else (lambda x: x)
        if flip(visible)[2:44, 2:24].mean() > 250:
            one = _read_index(flip(ink), flip(red), flip(ink), flip(dark), rank=False)
            if one is not None and one["suit_feat"] is not None:
                feats.append(one["suit_feat"])
    if visible.mean() > 250:
        pips = _pips(ink, red, canon, dark)
        if not pips["picture"]:
            feats += pips["feats"]
    lp = suit_log_probs(feats)
    if lp is None:
        return 0.0
    return float(np.clip(lp[:, SUITS.index(a)] - lp[:, SUITS.index(b)], -4.0, 4.0).sum())


GLYPH_W, GLYPH_H = 16, 22
RANK_TEXT = {
    "A": "A",
    "2": "2",
    "3": "3",
    "4": "4",
    "5": "5",
    "6": "6",
    "7": "7",
    "8": "8",
    "9": "9",
    "T": "10",
    "J": "J",
    "Q": "Q",
    "K": "K",
}


def _glyph_norm(binary: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(binary)
    if len(xs) == 0:
        return np.zeros((GLYPH_H, GLYPH_W), np.float32)
    crop = binary[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1].astype(np.float32)
    g = cv2.resize(crop, (GLYPH_W, GLYPH_H), interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(g, (3, 3), 0)


@lru_cache(maxsize=1)
def _rank_templates() -> list[tuple[str, np.ndarray, float]]:
    """(rank, normalised glyph, aspect) drawn with OpenCV's own Hershey fonts at several weights."""
    out = []
    fonts = [
        cv2.FONT_HERSHEY_SIMPLEX,
        cv2.FONT_HERSHEY_DUPLEX,
        cv2.FONT_HERSHEY_COMPLEX,
        cv2.FONT_HERSHEY_TRIPLEX,
        cv2.FONT_HERSHEY_PLAIN,
    ]
    for rank, text in RANK_TEXT.items():
        for font in fonts:
            for thick in (2, 4, 6):
                img = np.zeros((120, 160), np.uint8)
                scale = 3.0 if font != cv2.FONT_HERSHEY_PLAIN else 6.0
                cv2.putText(img, text, (10, 100), font, scale, 255, thick, cv2.LINE_AA)
                b = img > 127
                ys, xs = np.nonzero(b)
                aspect = (xs.max() - xs.min() + 1) / (ys.max() - ys.min() + 1)
                out.append((rank, _glyph_norm(b), float(aspect)))
    return out


TURN_INK = 2.0  # ink at the corners where no index is printed this many times that where it is: turned
CORNER = (2, 2, 20, 30)  # x0, y0, x1, y1 of where the index's ink lies, in the canonical card


def _quarter_turned(canon: np.ndarray) -> bool:
    """Is the card warped a quarter turn off? Standard faces print the index at the top-left and
    bottom-right corners and leave the two others blank; turned, it is the other way round."""
    ink, _ = _ink(canon)
    x0, y0, x1, y1 = CORNER
    h, w = ink.shape
    at = ink[y0:y1, x0:x1].mean() + ink[h - y1 : h - y0, w - x1 : w - x0].mean()
    off = ink[y0:y1, w - x1 : w - x0].mean() + ink[h - y1 : h - y0, x0:x1].mean()
    return bool(off > TURN_INK * at + 0.02)


def _is_red(code: str) -> bool:
    return code[1] in "hd"


def _pips_gainsay(canon: np.ndarray, visible: np.ndarray, own: np.ndarray | None, code: str) -> bool:
    """Do the pips of a number card in full view say that `code`, the index network's sure reading,
    is wrong? Two or more pips of the other colour do: the network reads the corner's small suit
    symbol, and under warm, dim light a maroon diamond there looks as dark as a spade (it was sure of
    2s, 6s, 8s, Ts for diamonds, roboflow IMG_3322, IMG_3326), where the pips are many times bigger
    and their colour plain (the same test, PIP_RED, as the rules' own colour). So do pips that lie
    where another rank's layout puts them (`_rank_the_pips_settle`): a narrow serif "10" read as a 9.
    Aces and court cards are left to the network: an ace has one pip, a court's picture is no pips."""
    if code[0] not in "23456789T" or visible.mean() <= 250 or (own is not None and own.mean() <= 250):
        return False
    ink, red = _ink(canon)
    pips = _pips(ink, red, canon)
    if pips["n"] < 2 or pips["picture"]:
        return False
    settled = _rank_the_pips_settle(pips)
    return pips["red"] != _is_red(code) or (settled is not None and settled != code[0])


def _rank_the_pips_settle(pips: dict) -> str | None:
    """The rank of a number card whose pips (all of them: a card in full view) lie where the standard
    layout of their count puts them, to within PIP_FIT (`pip_layout_misfit`); else None. Counted pips
    go wrong by running together, blurring away or hiding under another card, and each of those also
    moves them off the layout, so the count is believed only where it fits."""
    n = pips["n"]
    if pips["picture"] or not 2 <= n <= 10:
        return None
    if any(pw > PIP_SIZE[0] or ph > PIP_SIZE[1] for pw, ph in pips["sizes"]):
        return None  # pips run together (plastic's ten of clubs: two blobs, half the card wide)
    return RANK_OF_PIPS[n] if pip_layout_misfit(pips["centres"]) < PIP_FIT else None


def pip_layout_misfit(centres) -> float:
    """How far pip centres (fractions of the card's width and length) lie from the standard layout of
    their count: the farthest of each pip from its nearest place and each place from its nearest
    pip, either way up. Decks print the pip field larger or smaller (tango's columns stand at 0.35
    and 0.64 of the width, the layouts' at 0.3 and 0.7), so the pips are first stretched, along each
    axis the layout spans, to the layout's extent: the arrangement is standard, its size is not."""
    seen = np.array(centres, np.float64).reshape(-1, 2)
    if len(seen) not in PIP_LAYOUTS:
        return np.inf
    worst = np.inf
    for layout in (np.array(PIP_LAYOUTS[len(seen)]), 1.0 - np.array(PIP_LAYOUTS[len(seen)])):
        fitted = seen.copy()
        for axis in (0, 1):
            lo, hi = layout[:, axis].min(), layout[:, axis].max()
            s_lo, s_hi = seen[:, axis].min(), seen[:, axis].max()
            if hi - lo > 1e-6 and s_hi - s_lo > 1e-6:
                fitted[:, axis] = lo + (seen[:, axis] - s_lo) * (hi - lo) / (s_hi - s_lo)
        dist = np.linalg.norm(fitted[:, None, :] - layout[None, :, :], axis=2)
        worst = min(worst, max(float(dist.min(axis=1).max()), float(dist.min(axis=0).max())))
    return worst


def _code_the_clear_corner_settles(corners: list, own: np.ndarray | None) -> tuple[str, float] | None:
    """The code of the one corner no other card touches, where the network reads the card's two
    corners (`corners`, IndexNet.read_corners: both in view) as two cards and is sure of that
    corner's; None otherwise. With the two corners' probabilities of it averaged, as for the
    middle's rule (_code_the_middle_settles): never as sure as a code both corners read.

    A card that another touches is judged on top of it when their stacking is not clear, and the
    corner the other card lies on is then read as the other card's index: a drawn Ts with an 8h
    on its far corner (the network sure of Ts alone, 0.87 of 8h at the other corner), read a 7s
    by the rules, whose pip count the other card's pips upset too."""
    if len(corners) != 2 or own is None:
        return None
    clear = corners_in(own)
    if sum(clear) != 1:
        return None
    codes = [best_code(*c) for c in corners]
    if codes[0][0] == codes[1][0]:
        return None
    code, sure = codes[clear.index(True)]
    if sure < INDEX_SURE:
        return None
    return code, _either_corner_chance(corners, code)


def _court_suit_the_network_reads(corners: list, by_rules: str) -> str:
    """The rules' court card (`by_rules`) with the suit the index network reads (`corners`), where
    the network, unsure of the code, is sure of the suit and it is the other suit of the rules'
    colour; else `by_rules` as it is. A court's suit is printed only in its corner index (its
    middle is a picture, no pips), where the rules' glyph classifier weighs a symbol cut out of
    it and the network looks at the whole corner: on bellot's tiny index symbols the network was
    sure of the diamond the rules took for a heart (Qd read Qh), while unsure of the letter."""
    got = averaged(corners)
    if by_rules[0] not in "JQK" or got is None:
        return by_rules
    suit_log_probs = got[1]
    s = int(suit_log_probs.argmax())
    network_s = by_rules[0] + SUIT_CLASSES[s]
    if (
        np.exp(suit_log_probs[s]) < INDEX_SURE
        or network_s == by_rules
        or _is_red(network_s) != _is_red(by_rules)
    ):
        return by_rules
    return network_s


def _code_the_middle_settles(
    corners: list, averaged: tuple[str, float], canon: np.ndarray, visible: np.ndarray
) -> tuple[str, float] | None:
    """The code the two corners' readings (`corners`, IndexNet.read_corners) and the card's middle
    settle on where the network, the corners averaged (`averaged`, their code and score), is not
    sure; None where they settle nothing. With its raw score:

    - the two corners read as two different cards, the network sure of each: the one whose kind
      the middle shows (a court's picture, or pips of its colour, not pips that settle another rank:
      `_rank_the_pips_settle`), at the chance that it is the
      card's -- the two corners' probabilities of it averaged, either corner may be the one that
      is not the card's own. One corner is often not the card's index: another card's corner lies
      on it (a card under it the detector did not find), or the outline is off and cuts it.
      Averaged, the network was unsure of either, and the rules, who read both corners too, read
      a 10 of diamonds as a 7 (edje IMG_2462: Td at 1.00 in one corner, a 9d at 0.68 in the other).
    - both corners read the same court and the middle is a picture: that court, at the network's
      own averaged score. The rules tell J, Q and K apart by the letter's shape alone (a hole, a
      narrow glyph: 0.39-0.7), and on edje's pinochle courts they read a Js the network read in
      both corners (0.79, 0.82) as a Ks."""
    if len(corners) != 2 or visible.mean() <= 250:
        return None
    codes = [best_code(*c) for c in corners]
    alike = codes[0][0] == codes[1][0]
    if alike and codes[0][0][0] not in "JQK":
        return None
    ink, red = _ink(canon)
    middle = _pips(ink, red, canon)
    if alike:
        return averaged if middle["picture"] else None  # (corners alike: their average's code)

    settled = _rank_the_pips_settle(middle)

    def shown(code: str) -> bool:
        if middle["picture"]:
            return code[0] in "JQK"
        if settled is not None and settled != code[0]:
            return False  # (pips that fit another rank's layout: not this card, whichever corner it is)
        return code[0] not in "JQK" and (middle["n"] < 1 or middle["red"] == _is_red(code))

    fits = [code for code, sure in codes if sure >= INDEX_SURE and shown(code)]
    if len(fits) != 1:
        return None
    return fits[0], _either_corner_chance(corners, fits[0])


def _either_corner_chance(corners: list, code: str) -> float:
    """The chance that `code` is the card's where the two corners (IndexNet.read_corners) read as
    two cards and either may be the one that is not the card's own: their probabilities of it
    averaged (about 0.5-0.75 for a code one corner is sure of)."""
    return float(np.mean([code_probability(c, code) for c in corners]))


def turn_quarter(canon: np.ndarray) -> np.ndarray:
    """The canonical card turned a quarter round and brought back to CANON_W x CANON_H: the card
    warped with its other pair of sides taken for the long ones."""
    return cv2.resize(cv2.rotate(canon, cv2.ROTATE_90_CLOCKWISE), (CANON_W, CANON_H))


def _quarter_turn(canon: np.ndarray, visible: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The card and its visible mask warped the other way round: its top and bottom sides taken for
    its long ones. A card's outline cannot tell which of its sides are the long ones when the picture
    is squeezed across them (a photo resized to a square, as photo sets often are: a portrait card on
    a 4:3 or 16:9 photo squeezed to 640 x 640 can look wider than long; a steep camera does the same
    less), and a card warped on its side shows its index at the two corners where none is printed.
    The half-turn does not matter: the index network reads both printed corners."""
    return turn_quarter(canon), _turn_mask(visible)


def _turn_mask(mask: np.ndarray) -> np.ndarray:
    """A card's mask (visible, own) turned as turn_quarter turns the card, kept two-valued."""
    return cv2.resize(
        cv2.rotate(mask, cv2.ROTATE_90_CLOCKWISE), (CANON_W, CANON_H), interpolation=cv2.INTER_NEAREST
    )


class BuiltinReader:
    """Reads standard-index cards of decks it has never seen (see module docstring)."""

    def read(
        self,
        canon: np.ndarray,
        visible: np.ndarray,
        own: np.ndarray | None = None,
        seen_width: float | None = None,
    ) -> ReadResult:
        """`seen_width`: the card's width in the picture's pixels, where known (see INDEX_NET_MIN_WIDTH)."""
        face = visible if own is None else own
        down = paper_down(canon, face)
        if down is not None:
            if not network_face(canon, face, visible):
                return down
            code, conf, asked = self._identify_card(canon, visible, own, seen_width)
            # too little white for the paper test, a face for the network: face up, read or not. A
            # gold-foil face is often not read, and it was called face down for that, so a card
            # flashed from a gold deck was never seen exposed (real photos: faces called face down
            # 15 -> 9 of 898, no back called up; docs/vision.md)
            return ReadResult("up", code, conf, rules_alone=not asked)
        code, conf, asked = self._identify_card(canon, visible, own, seen_width)
        # the face network sure of a back outranks a sure index read: the index network never saw
        # a back, and on pale patterned ones (plaids, checkers, lattices) it was sure of a Kd or a
        # 4c where there is none -- a hole card reported face up, with a code (Aisleriot's atlasnye:
        # 38 of 86 backs on 12 rendered tables). No face, real or rendered, was lost by it
        down = network_down(canon, face, visible)
        if down is not None:
            return down
        return ReadResult("up", code, conf, rules_alone=not asked)

    def identify(
        self,
        canon: np.ndarray,
        visible: np.ndarray,
        own: np.ndarray | None = None,
        seen_width: float | None = None,
    ) -> tuple[str | None, float]:
        """The card's code and a confidence; (None, conf) when it cannot be read.

        Pale index printing counts as ink first (thin letters blurred light grey); on a very small
        card the blur makes pale blotches of everything, and when that leaves the card unread it
        is read again with the ink test alone.
        """
        code, conf, _asked = self._identify_card(canon, visible, own, seen_width)
        return code, conf

    def _identify_card(self, canon, visible, own, seen_width) -> tuple[str | None, float, bool]:
        """identify(), and whether the index network was asked."""
        if visible.mean() > 250 and (own is None or own.mean() > 250) and _quarter_turned(canon):
            # a card seen about as wide as long (steep perspective, a stretched picture) may have
            # been warped a quarter turn off: its index then lies at the other two corners
            canon = turn_quarter(canon)
        net = index_model() if seen_width is None or seen_width >= INDEX_NET_MIN_WIDTH else None
        code, sideways, shown = None, net is not None, None
        if net is not None:
            # the index network, when sure of rank and suit, reads the corner without cutting it
            # into glyphs (vision/index_net.py); otherwise the rules below read the card
            corners = net.read_corners(canon, visible)
            code, sure = averaged_code(corners)
            if code is not None and sure >= INDEX_SURE:
                if not _pips_gainsay(canon, visible, own, code):
                    return code, round(min(0.99, sure), 3), True
                # (the pips say the network saw the wrong colour or count: the rules below read the card)
                code, sideways = None, False
            elif code is not None:
                shown = _code_the_clear_corner_settles(corners, own) or _code_the_middle_settles(
                    corners, (code, sure), canon, visible
                )
                if shown is not None:
                    code, sure = shown
        by_rules, conf = self._read_once(canon, visible, own)
        if code is not None and by_rules == code:
            # two readings that share nothing (the network's look at the corner; the rules' glyphs,
            # colour and pips) agree: either being wrong is not enough to make the code wrong. On
            # held-out decks the unsure network and the rules agreeing were right 68 times of 69,
            # where the rules' own score (a pip count: 0.6) kept the code from the table
            conf = round(min(0.99, 1 - (1 - conf) * (1 - sure)), 3)
        elif shown is not None:
            by_rules, conf = code, round(sure, 3)
        else:
            code = None
            if net is not None and by_rules is not None:
                by_rules = _court_suit_the_network_reads(corners, by_rules)
        # the network sure of the card a quarter turn round outweighs the card as warped unless the
        # two readings agreeing on it that way are surer still: a clean bellot 2s (network 0.82,
        # rules 0.9 upright: 0.98) was a 3s at 0.905 sideways, which vision track put on the board;
        # tango's Jd on its side, read Kh both ways upright (0.87 and 0.39: 0.92), is a Jd at 0.998
        turned = self._sure_a_quarter_turn_round(net, canon, visible, own) if sideways else None
        if turned is not None and (code is None or turned[1] > conf):
            return turned
        return by_rules, conf, net is not None

    def _sure_a_quarter_turn_round(self, net, canon, visible, own) -> tuple[str, float, bool] | None:
        """_identify_card's answer from the index network reading the card a quarter turn round,
        where it is sure of it that way; else None."""
        side, side_visible = _quarter_turn(canon, visible)
        turned, turned_sure = net.code(side, side_visible)
        if turned is not None and turned_sure >= INDEX_SURE:
            # no doubt about the index a quarter turn round, where the card's own way up left
            # the network unsure: the picture squeezed one way (a photo stretched to a square,
            # a steep camera) made the card's long side look the shorter, so it was warped on
            # its side (see _quarter_turn). The network can be as sure of a court's picture
            # seen sideways, so the rules, reading the card so turned, must not see the other
            # colour (where they read nothing -- gold foil, no white paper -- the code stands)
            side_own = None if own is None else _turn_mask(own)
            by_rules, _ = self._read_once(side, side_visible, side_own)
            if by_rules is None or _is_red(by_rules) == _is_red(turned):
                return turned, round(min(0.99, turned_sure), 3), True
        return None

    def _read_once(self, canon, visible, own) -> tuple[str | None, float]:
        code, conf = self._identify(canon, visible, own, pale=True)
        if code is None:
            code, conf = self._identify(canon, visible, own, pale=False)
        return code, conf

    def _identify(
        self, canon: np.ndarray, visible: np.ndarray, own: np.ndarray | None, pale: bool
    ) -> tuple[str | None, float]:
        ink, red = _ink(canon)
        dark = darkness(canon) if glyph_models() is not None else None
        ink_light = ink
        full_visible = visible.mean() > 250
        # index: whichever corner is visible
        # index: every corner in view votes (the two corners of one card agree; a blurred or
        # half-shaded one is outvoted or at least averaged)
        seen = []
        for rot in (False, True):
            v = visible[::-1, ::-1] if rot else visible
            if v[2:44, 2:24].mean() > 250:
                i = ink_light[::-1, ::-1] if rot else ink_light
                r = red[::-1, ::-1] if rot else red
                st = ink[::-1, ::-1] if rot else ink
                d = np.ascontiguousarray(dark[::-1, ::-1]) if rot else dark
                one = _read_index(
                    np.ascontiguousarray(i), np.ascontiguousarray(r), np.ascontiguousarray(st), d, pale=pale
                )
                if one is not None:
                    one["red_share"] = _index_redness(canon[::-1, ::-1] if rot else canon, one["rank_mask"])
                    seen.append(one)
        idx = _merge_indices(seen)
        pips = _pips(ink, red, canon, dark) if full_visible else None
        if pips is not None and not pips["picture"] and _sure_court(idx, dark is not None):
            # a picture drawn in thin pale lines (a line-art court) is not seen as one: its pieces
            # are counted as pips; the index letter, when the classifier is sure, says otherwise
            pips = dict(pips, picture=True)
        part, stacked_red = None, None
        if pips is None and visible.mean() > 60:
            # a half-hidden card: the pips in view (away from the covering card's edge)
            seen_px = cv2.erode((visible > 128).astype(np.uint8), np.ones((9, 9), np.uint8))
            part = _pips(ink & seen_px, red, canon, dark)
            part["seen"] = seen_px
        touched = own is not None and own.mean() < 250  # another card touches this one
        if pips is not None and not pips["picture"] and touched and idx is not None:
            # another card touches this one and the stacking says it lies below; if it lies on
            # top instead, the pips counted are partly its own or partly hidden. Then the pips
            # away from it are read as a half-hidden card's (see _own_pips_fit_better).
            seen_px = cv2.erode((own > 128).astype(np.uint8), np.ones((9, 9), np.uint8))
            alt = _pips(ink, red, canon, dark, keep=seen_px)
            alt["seen"] = seen_px
            if not alt["picture"] and _own_pips_fit_better(pips, alt, _edge_across(canon, own)):
                pips, part = None, alt
                stacked_red = alt["red"] if alt["n"] > 0 else None
        # colour
        is_red = stacked_red
        if is_red is not None:
            pass
        elif pips is not None and pips["n"] > 0 and not pips["picture"]:
            is_red = pips["redness"] > (PIP_RED_TOUCHED if touched else PIP_RED)
        elif idx is not None:
            is_red = _index_colour(idx, dark is not None)
        if is_red is None:
            return None, 0.2
        idx_suits = idx["suits"] if idx else []
        shapes = (pips["contours"] if pips and not pips["picture"] else []) + idx_suits
        if part is not None and not part["picture"]:
            shapes = part["contours"] + idx_suits
        if idx_suits and pips and pips["contours"] and not pips["picture"]:
            # a blurred small pip loses its shape first: corner symbols much bigger than the
            # pips (some decks print a large one under the rank) are trusted alone
            pip_area = float(np.median([cv2.contourArea(c) for c in pips["contours"]]))
            if min(cv2.contourArea(c) for c in idx_suits) > BIGIDX * pip_area:
                shapes = idx_suits
        only_index = all(any(c is i for i in idx_suits) for c in shapes)
        suit, suit_conf = _suit_from_shapes(shapes, is_red, only_index)
        if dark is not None:
            feats = idx["suit_feats"] if idx else []
            if pips is not None and not pips["picture"]:
                feats = feats + pips["feats"]
            elif part is not None and not part["picture"]:
                feats = feats + part["feats"]
            lp = suit_log_probs(feats)
            if lp is not None:
                # each symbol votes for one of the two suits of the card's colour
                a, b = ("h", "d") if is_red else ("c", "s")
                diff = lp[:, SUITS.index(a)] - lp[:, SUITS.index(b)]
                vote = float(np.clip(diff, -4.0, 4.0).sum())
                suit = a if vote > 0 else b
                suit_conf = min(1.0, 0.5 + abs(vote) / 8)
        # rank
        glyph_scores = idx["rank_scores"] if idx else None
        rank, rank_conf = None, 0.0
        if pips is not None and pips["picture"]:
            if idx is not None:
                # letter shape rule (hole / narrow) and the drawn-font match vote together
                jqk = {
                    r: glyph_scores.get(r, 0.0) + (COURT_RULE if r == idx["court"] else 0.0) for r in "JQK"
                }
                rank, rank_conf = max(jqk, key=jqk.get), 0.7
                if dark is not None:
                    # how sure: the glyph classifier's own best rank and the letter rule agreeing
                    # with the rank chosen, or not (a score the calibration can tell apart)
                    top = max(glyph_scores, key=glyph_scores.get)
                    rank_conf = 0.6 + 0.1 * (top == rank) + 0.1 * (idx["court"] == rank)
        elif pips is not None and 1 <= pips["n"] <= 10:
            rank = RANK_OF_PIPS[pips["n"]]
            rank_conf = 0.9
            top = max(glyph_scores, key=glyph_scores.get) if glyph_scores else None
            if dark is not None and glyph_scores:
                # the classifier's log-odds: the pip count and the index's best rank agree, or not
                rank_conf = 0.9 if top == rank else (0.75 if pips["n"] == 1 else 0.6)
            elif glyph_scores and glyph_scores.get(rank, 0) < 0.3 and pips["n"] != 1:
                rank_conf = 0.6  # (drawn-font correlations, without the classifier)
            if (
                top in PIP_COUNT
                and PIP_COUNT[top] > pips["n"] > 1  # (an ace's one big pip is no undercount)
                and glyph_scores[top] > GLYPH_SURE
                and glyph_scores.get(rank, -9.0) < GLYPH_SURE - GLYPH_GAP
                and _rank_the_pips_settle(pips) is None  # (pips that fit their layout are all there)
            ):
                # fewer pips than the index, which is sure, says: pips hidden under another card
                # or the card's edge, or big pips run together; far more common than extra pips
                rank, rank_conf = top, 0.6
        if rank is None and part is not None and idx is not None:
            rank = _rank_from_visible_pips(part, glyph_scores)
            rank_conf = 0.5
        if rank is None and glyph_scores:
            rank = max(glyph_scores, key=glyph_scores.get)
            rank_conf = 0.5
        if rank is None:
            return None, 0.2
        return rank + suit, round(min(0.99, rank_conf * (0.5 + suit_conf / 2)), 3)


INDEX_SURE = (
    0.9  # the index network's rank and suit probabilities multiplied: at least this and its code stands
)
# a card narrower than this (px in the picture) is read by the rules alone: the index network learnt
# mostly from cards 40-100 px wide (vision.read_synth's camera 55-100 px, shrunk by as much as a third by
# vision.index_net_train.degrade), and on the simulator's 25 px hole cards it was sure of a 3 for a 2,
# an 8 for a 6, clubs for spades (tests/vision/test_read.py), where the rules count the pips right
INDEX_NET_MIN_WIDTH = 35.0
GLYPH_SURE = -0.1  # log-prob of the index's best rank above which the glyph is taken as sure ...
GLYPH_GAP = 2.0  # ... against a rank this much less likely
PIP_COUNT = {r: n for n, r in enumerate("A23456789T", start=1)}
RANK_OF_PIPS = {n: r for r, n in PIP_COUNT.items()}
# pips each of which lies this close to a place of the standard layout of their count, and each place
# with a pip this close (in card widths and lengths, the pips stretched to the layout's extent first:
# `pip_layout_misfit`), are all the card's: their count is its rank. Chosen on eight training decks
# (tango, Aisleriot's anglo, plastic, orell, gnomangelo, lattmann, simplistic, berlin; 200 rendered
# tables, 608 number cards in full view): 584 fit under it, none counted wrong; nine in ten of those
# counted right fit under 0.014, and the nearest miscount (a nine's pips run into six) fits at 0.101
PIP_FIT = 0.04
# a pip wider or longer than this share of the card is pips run together: the widest single pip of
# the training decks' twos and threes is 0.26 of the card's width and 0.18 of its length, plastic's
# ten of clubs, its pips run into two blobs, 0.5 and 0.4
PIP_SIZE = (0.4, 0.3)
STACK_DOUBT = 0.3  # how much better the pips away from a touching card must fit to be believed
EDGE_ON_TOP = 0.75  # share of a touching card's outline across this one showing an edge: it is on top
GLYPH_WEIGHT = 0.5  # a half-hidden card: the glyph's log-odds (overconfident on a deck never seen) against the pips in view

# the usual places of the pips (x, y as fractions of the card) of A and 2..10
PIP_LAYOUTS = {
    1: [(0.5, 0.5)],
    2: [(0.5, 0.2), (0.5, 0.8)],
    3: [(0.5, 0.2), (0.5, 0.5), (0.5, 0.8)],
    4: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.8), (0.7, 0.8)],
    5: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.5), (0.3, 0.8), (0.7, 0.8)],
    6: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    7: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)],
    8: [(0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.5, 0.65), (0.3, 0.8), (0.7, 0.8)],
    9: [(0.3, 0.2), (0.7, 0.2), (0.3, 0.4), (0.7, 0.4), (0.5, 0.5), (0.3, 0.6), (0.7, 0.6), (0.3, 0.8), (0.7, 0.8)],
    10: [
        (0.3, 0.2), (0.7, 0.2), (0.5, 0.3), (0.3, 0.4), (0.7, 0.4),
        (0.3, 0.6), (0.7, 0.6), (0.5, 0.7), (0.3, 0.8), (0.7, 0.8),
    ],
}  # fmt: skip


def _sure_court(idx: dict | None, classifier: bool) -> bool:
    """The corner index's glyph classifier is sure (GLYPH_SURE) that the rank is J, Q or K. On the
    real photos, with the classifiers that never saw the source, such a reading was right 52 of 52
    times (edje) and 58 of 58 (roboflow)."""
    if idx is None or not classifier or not idx["rank_scores"]:
        return False
    scores = idx["rank_scores"]
    top = max(scores, key=scores.get)
    return top in "JQK" and scores[top] > GLYPH_SURE


def _best_layout_fit(part: dict, glyph_scores: dict | None) -> tuple[str | None, float]:
    """(rank, score): the pips in view (`part["seen"]` where the card can be seen, None for all
    of it) against how many of each rank's usual pips would be in view and where, plus the index
    glyph's weighted log-odds."""
    seen = part.get("seen")
    glyph = glyph_scores or {}
    obs = np.array(part["centres"], np.float64).reshape(-1, 2)
    best, best_score = None, -1e9
    for n, layout in PIP_LAYOUTS.items():
        rank = RANK_OF_PIPS[n]
        fit = -1e9
        for pts in (np.array(layout), 1.0 - np.array(layout)):
            exp = pts
            if seen is not None:
                h, w = seen.shape
                xs = np.clip((pts[:, 0] * w).astype(int), 0, w - 1)
                ys = np.clip((pts[:, 1] * h).astype(int), 0, h - 1)
                exp = pts[seen[ys, xs] > 0]
            cost = abs(len(exp) - len(obs))
            if len(exp) and len(obs):
                dist = np.linalg.norm(obs[:, None, :] - exp[None, :, :], axis=2)
                cost += 3.0 * float(dist.min(axis=1).mean())
            fit = max(fit, -cost)
        score = fit + GLYPH_WEIGHT * glyph.get(rank, 0.0)
        if score > best_score:
            best, best_score = rank, score
    return best, best_score


def _rank_from_visible_pips(part: dict, glyph_scores: dict | None) -> str | None:
    """Rank of a half-hidden card: the pips in view compared with how many of each rank's usual
    pips would be in view, the index glyph settling what the count leaves open (a court card's
    picture shows as a picture)."""
    if part["picture"]:
        glyph = glyph_scores or {}
        return max("JQK", key=lambda r: glyph.get(r, -9.0))
    return _best_layout_fit(part, glyph_scores)[0]


def _own_pips_fit_better(whole: dict, own: dict, edge: float | None) -> bool:
    """A card that another touches: does that card lie on top after all, hiding some pips or
    adding its own? Yes when its edge shows across this card (`edge`, from `_edge_across`), or
    when the pips away from it (`own`, with its "seen" mask) fit some rank's layout clearly better
    than every pip counted (`whole`): layout alone, the index glyph being what is in doubt on a
    deck never seen. (Some decks' white-on-white overlaps show no edge: the layout decides.)"""
    if edge is not None and edge >= EDGE_ON_TOP:
        return True
    _, s_whole = _best_layout_fit({"centres": whole["centres"]}, None)
    _, s_own = _best_layout_fit(own, None)
    return s_own > s_whole + STACK_DOUBT


def _edge_across(canon: np.ndarray, own: np.ndarray) -> float | None:
    """Share of the touching card's outline inside this card (the edge of `own`) along which the
    picture shows an edge: high when that card lies on top (its edge is in view), low when it lies
    below (hidden under this card). None when too little of its outline crosses the card."""
    m = (own > 128).astype(np.uint8)
    line = cv2.morphologyEx(m, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8)) > 0
    line[:6], line[-6:], line[:, :6], line[:, -6:] = False, False, False, False
    if line.sum() < 15:
        return None
    edges = cv2.Canny(cv2.cvtColor(canon, cv2.COLOR_BGR2GRAY), 30, 90)
    near = cv2.dilate(edges, np.ones((5, 5), np.uint8)) > 0
    return float(near[line].mean())


def _ink(canon: np.ndarray, level: float = 0.6) -> tuple[np.ndarray, np.ndarray]:
    """Printed pixels (not paper) and which of them are red."""
    hsv = cv2.cvtColor(canon, cv2.COLOR_BGR2HSV)
    h, s, v = hsv[:, :, 0], hsv[:, :, 1], hsv[:, :, 2]
    p95 = percentile_u8(v, 95)
    ink = (v < level * p95) | (s > 90)
    red = (s > 80) & ((h < 10) | (h > 165)) & (v > 0.3 * p95)
    return ink.astype(np.uint8), red.astype(np.uint8)


def _read_index(
    ink: np.ndarray,
    red: np.ndarray,
    strict: np.ndarray | None = None,
    dark: np.ndarray | None = None,
    rank: bool = True,
    pale: bool = True,
) -> dict | None:
    """The corner index's rank glyph and suit symbol (`rank=False`: the suit symbol alone, the
    rank glyph only found, not told); `pale`: pale printing counts as ink (see _pale_glyphs)."""
    x0, y0, x1, y1 = IDX_SEARCH
    region = ink[y0:y1, x0:x1].copy()
    if dark is not None and pale:
        region |= _pale_glyphs(dark[y0:y1, x0:x1], region)
    n, labels, stats, _cents = cv2.connectedComponentsWithStats(region, connectivity=8)

    def usable(k):
        x, y, w, h, a = stats[k]
        if a < 6 or w <= 2 or h <= 2:
            return False
        if x + w >= region.shape[1] or y + h >= region.shape[0]:
            return False  # cut by the search box: a pip or the picture, not the index
        return not ((x == 0 or y == 0) and (h > 0.8 * region.shape[0] or w > 0.8 * region.shape[1]))

    comps = [k for k in range(1, n) if usable(k)]
    if not comps:
        return None
    # felt or shadow caught in the card's rounded corner: small, touching the top or left edge
    biggest = max(stats[k, cv2.CC_STAT_AREA] for k in comps)
    comps = [
        k
        for k in comps
        if not (
            (stats[k, cv2.CC_STAT_LEFT] == 0 or stats[k, cv2.CC_STAT_TOP] == 0)
            and stats[k, cv2.CC_STAT_AREA] < EDGE * biggest
        )
    ] or comps
    comps.sort(key=lambda k: stats[k, cv2.CC_STAT_TOP])
    top = stats[comps[0], cv2.CC_STAT_TOP]
    th = stats[comps[0], cv2.CC_STAT_HEIGHT]
    rank_parts = [k for k in comps if stats[k, cv2.CC_STAT_TOP] < top + th * 0.5]
    rx0 = min(stats[k, cv2.CC_STAT_LEFT] for k in rank_parts)
    rx1 = max(stats[k, cv2.CC_STAT_LEFT] + stats[k, cv2.CC_STAT_WIDTH] for k in rank_parts)
    rank_area = sum(stats[k, cv2.CC_STAT_AREA] for k in rank_parts)
    # the suit symbol: the next thing below the rank, under it, of a comparable size (a narrow
    # J's symbol may stick out on either side)
    tol = max(0.3 * (rx1 - rx0), 0.5 * th)
    below = [
        k
        for k in comps
        if k not in rank_parts
        and stats[k, cv2.CC_STAT_TOP] > top + th * 0.6
        and rx0 - tol <= _cents[k][0] <= rx1 + tol
        and 0.2 * rank_area <= stats[k, cv2.CC_STAT_AREA] <= 6.0 * rank_area
    ]
    below.sort(key=lambda k: stats[k, cv2.CC_STAT_TOP])
    rank_mask = np.isin(labels, rank_parts)
    merged_suit = None
    if not below and len(rank_parts) == 1:
        rank_mask, merged_suit = _split_merged_index(rank_mask, top, th)
    rank_scores = rank_feat = None
    if not rank:
        rank_scores = {}
    elif dark is not None:
        rank_feat = crop_features(dark[y0:y1, x0:x1], rank_mask, RANK_SIZE)
        lp = rank_log_probs(rank_feat) if rank_feat is not None else None
        if lp is not None:
            rank_scores = {r: max(v, -6.0) for r, v in lp.items()}
    if rank_scores is None:
        rank_scores = _rank_scores(rank_mask)
    suit = None
    suit_feat = None
    if below or merged_suit is not None:
        symbol = labels == below[0] if below else merged_suit
        cs, _ = cv2.findContours(symbol.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        if cs and cv2.contourArea(max(cs, key=cv2.contourArea)) > 8:
            suit = max(cs, key=cv2.contourArea)
            if dark is not None:
                suit_feat = crop_features(dark[y0:y1, x0:x1], symbol, SUIT_SIZE)
    core = rank_mask if strict is None else rank_mask & (strict[y0:y1, x0:x1] > 0)
    if not core.any():
        core = rank_mask
    red_share = float(red[y0:y1, x0:x1][core].mean())
    return {
        "rank_scores": rank_scores,
        "suit": suit,
        "red": red_share > 0.35,
        "red_share": red_share,
        "court": _court_rank(rank_mask) if rank else None,
        "rank_feat": rank_feat,
        "suit_feat": suit_feat,
        "rank_mask": rank_mask,
    }


def _pale_glyphs(dark: np.ndarray, ink: np.ndarray) -> np.ndarray:
    """Pale printing that the ink test misses (a thin index letter that the camera's blur turns
    light grey): the things darker than INDEX_FAINT made mostly of pixels that are not ink, away
    from the box's top and left edges (where the card's border and felt lie)."""
    faint = np.zeros_like(ink)
    faint[3:, 3:] = dark[3:, 3:] > INDEX_FAINT
    n, labels = cv2.connectedComponents(faint, connectivity=8)
    if n < 2:
        return faint
    area = np.bincount(labels.ravel(), minlength=n)
    sure = np.bincount(labels.ravel(), weights=(ink > 0).ravel().astype(np.float64), minlength=n)
    pale = sure < 0.5 * area
    pale[0] = False
    return pale[labels].astype(np.uint8)


def _split_merged_index(mask: np.ndarray, top: int, th: int) -> tuple[np.ndarray, np.ndarray | None]:
    """A rank glyph and the suit symbol under it printed so close that blur joins them (a narrow
    J over its club): cut at the narrowest row when the part below is much wider than the part
    above. Returns (rank mask, suit mask or None)."""
    rows = mask[top : top + th].sum(axis=1)
    lo, hi = int(0.35 * th), int(0.75 * th)
    if hi - lo < 2:
        return mask, None
    r = lo + int(np.argmin(rows[lo:hi]))
    upper, lower = mask[: top + r], mask[top + r :]
    cols_up, cols_low = np.nonzero(upper.any(axis=0))[0], np.nonzero(lower.any(axis=0))[0]
    if len(cols_up) == 0 or len(cols_low) == 0:
        return mask, None
    w_up, w_low = cols_up[-1] - cols_up[0] + 1, cols_low[-1] - cols_low[0] + 1
    if w_low < 1.4 * w_up or rows[r] > 0.5 * rows[r:].max() or th - r < 0.5 * w_low:
        return mask, None
    rank = mask.copy()
    rank[top + r :] = False
    suit = mask.copy()
    suit[: top + r + 1] = False
    return rank, suit


def _index_redness(canon: np.ndarray, glyph: np.ndarray | None = None) -> float:
    """How red the darkest pixels of the corner index are: red minus the other two channels,
    relative to brightness. A small blurred red letter is too pale for a saturation test, but
    its darkest pixels stay red; black ink under a tinted light stays near zero. With the rank
    glyph's own pixels known (`glyph`, a mask of IDX_SEARCH), only they count: an outline a few
    pixels too big brings felt into the corner, and red felt is the darkest red there."""
    if glyph is not None and glyph.sum() >= 6:
        x0, y0, x1, y1 = IDX_SEARCH
        px = canon[y0:y1, x0:x1][glyph].astype(np.float32)
        b, g, r = px[:, 0], px[:, 1], px[:, 2]
        v = (b + g + r) / 3
        darkest = v <= np.percentile(v, 40)
        return float(((r - (b + g) / 2) / (v + 1.0))[darkest].mean())
    x0, y0, x1, y1 = INDEX_INK
    b, g, r = (canon[y0:y1, x0:x1, i].astype(np.float32) for i in range(3))
    v = (b + g + r) / 3
    darkest = v <= np.percentile(v, 15)
    return float(((r - (b + g) / 2) / (v + 1.0))[darkest].mean())


def _index_colour(idx: dict, shapes: bool) -> bool:
    """Red or black from the corner index alone (a court card, or no pips in view): the rank
    glyph's redness and the suit symbols' shapes (a heart or diamond against a club or spade)
    vote together. Redness alone took about one black court card in five for red on the real
    photos (a small black letter beside the picture's red, JPEG's coarse colour); the shapes do
    not depend on the light's colour. `shapes`: the glyph classifiers are loaded."""
    vote = INDEX_RED_WEIGHT * (idx["red_share"] - INDEX_RED)
    lp = suit_log_probs(idx["suit_feats"]) if shapes else None
    if lp is not None:
        lp = np.clip(lp, -4.0, 4.0).sum(axis=0)
        red = max(lp[SUITS.index("d")], lp[SUITS.index("h")])
        vote += float(red - max(lp[SUITS.index("c")], lp[SUITS.index("s")]))
    return vote > 0


def _merge_indices(seen: list[dict]) -> dict | None:
    """One reading from the corner indices in view: glyph scores and redness averaged, suit
    symbols pooled, the court letter rule kept where the corners agree."""
    if not seen:
        return None
    ranks = set().union(*(i["rank_scores"] for i in seen))
    scores = {r: float(np.mean([i["rank_scores"].get(r, 0.0) for i in seen])) for r in ranks}
    red_share = float(np.mean([i["red_share"] for i in seen]))
    courts = {i["court"] for i in seen}
    return {
        "rank_scores": scores,
        "suits": [i["suit"] for i in seen if i["suit"] is not None],
        "suit_feats": [i["suit_feat"] for i in seen if i.get("suit_feat") is not None],
        "suit": next((i["suit"] for i in seen if i["suit"] is not None), None),
        "red": red_share > INDEX_RED,
        "red_share": red_share,
        "court": courts.pop() if len(courts) == 1 else None,
    }


def _court_rank(rank_mask: np.ndarray) -> str | None:
    """J, Q or K from the shape of the index letter: a Q encloses a hole; a J is narrow; a K is not."""
    m = rank_mask.astype(np.uint8)
    ys, xs = np.nonzero(m)
    if len(xs) < 6:
        return None
    crop = m[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    big = cv2.resize(crop, None, fx=3, fy=3, interpolation=cv2.INTER_NEAREST)
    contours, hierarchy = cv2.findContours(big, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    holes = 0
    if hierarchy is not None:
        for c, h in zip(contours, hierarchy[0], strict=True):
            if h[3] >= 0 and cv2.contourArea(c) > 0.02 * big.size:
                holes += 1
    if holes:
        return "Q"
    aspect = crop.shape[1] / crop.shape[0]
    return "J" if aspect < 0.62 else "K"


@lru_cache(maxsize=1)
def _rank_matrix() -> tuple[list[str], np.ndarray, np.ndarray]:
    """The drawn glyphs as one matrix of zero-mean unit vectors, for all correlations at once."""
    ranks, vecs, aspects = [], [], []
    for rank, t, aspect in _rank_templates():
        v = t.ravel().astype(np.float32)
        v = v - v.mean()
        vecs.append(v / (np.linalg.norm(v) + 1e-6))
        ranks.append(rank)
        aspects.append(aspect)
    return ranks, np.stack(vecs), np.log(np.array(aspects, np.float32))


def _rank_scores(rank_mask: np.ndarray) -> dict[str, float]:
    g = _glyph_norm(rank_mask).ravel()
    ys, xs = np.nonzero(rank_mask)
    aspect = (xs.max() - xs.min() + 1) / (ys.max() - ys.min() + 1)
    ranks, mat, log_aspects = _rank_matrix()
    g = g - g.mean()
    s = mat @ (g / (np.linalg.norm(g) + 1e-6)) - 0.5 * np.abs(math.log(aspect) - log_aspects)
    scores: dict[str, float] = {}
    for rank, v in zip(ranks, s.tolist(), strict=True):
        if v > scores.get(rank, -9.0):
            scores[rank] = v
    return scores


def _shape_stats(contour: np.ndarray) -> tuple[float, float]:
    """Solidity (area / convex hull area) and the deepest notch relative to the symbol's size."""
    area = cv2.contourArea(contour)
    hull_area = cv2.contourArea(cv2.convexHull(contour))
    solidity = area / hull_area if hull_area > 0 else 1.0
    _, _, bw, bh = cv2.boundingRect(contour)
    depth = 0.0
    try:
        hull_idx = cv2.convexHull(contour, returnPoints=False)
        defects = cv2.convexityDefects(contour, hull_idx)
        if defects is not None and defects.size:  # OpenCV 5.1 answers an empty array, not None
            depth = float(defects.reshape(-1, 4)[:, 3].max()) / 256.0 / max(bw, bh, 1)
    except cv2.error:  # self-intersecting outline of a tiny symbol
        pass
    return solidity, depth


def _suit_from_shapes(shapes: list, is_red: bool, only_index: bool = False) -> tuple[str, float]:
    """Suit from pip/index symbols of a known colour.

    Heart or diamond: a heart has a notch (a deep concavity) where its lobes meet, a diamond none.
    Club or spade: a club's three lobes leave its outline much less solid than a spade's.
    """
    if not shapes:
        return ("h" if is_red else "s"), 0.3
    stats = [_shape_stats(c) for c in shapes if cv2.contourArea(c) > 12]
    if not stats:
        return ("h" if is_red else "s"), 0.3
    if is_red:
        votes = [d >= 0.055 for _, d in stats]
        suit = "h" if sum(votes) * 2 >= len(votes) else "d"
        agree = max(sum(votes), len(votes) - sum(votes)) / len(votes)
    else:
        sol = float(np.median([s for s, _ in stats]))
        limit = 0.93 if only_index else 0.885  # the index symbol is bolder than a pip
        suit = "c" if sol < limit else "s"
        agree = min(1.0, 0.5 + abs(sol - limit) * 10)
    return suit, agree


# share of the pips' ink that is saturated red above which they are red: dark red pips under warm
# light or JPEG's coarse colour keep only a fifth of their pixels past the saturation test, black
# ones almost none (edje, the development source: 2 of 142 number cards wrong at 0.1-0.15, 4 at 0.35)
PIP_RED = 0.15
# where another card touches this one, some of the pips' ink may be the other card's red edge: the
# old, stricter share holds (a rendered 6c under a 6d read red at 0.15)
PIP_RED_TOUCHED = 0.35
PICTURE_V = 90  # a pixel darker than this (of 255, the card's white balanced) shows no colour


def _white_balanced(canon: np.ndarray) -> np.ndarray:
    """The card with each channel scaled so that its paper is white (the 95th percentile)."""
    white = np.array([percentile_u8(canon[::2, ::2, i], 95) for i in range(3)], np.float32) + 1.0
    return np.clip(canon.astype(np.float32) * (255.0 / white), 0, 255).astype(np.uint8)


def _pips(
    ink: np.ndarray,
    red: np.ndarray,
    canon: np.ndarray,
    dark: np.ndarray | None = None,
    keep: np.ndarray | None = None,
) -> dict:
    """Count the pips in the middle of the card; notice a picture (J, Q, K). With `keep`, only
    pips whose centre lies in it count (whole pips, not pieces cut at its edge)."""
    h, w = ink.shape
    x0, x1, y0, y1 = int(0.16 * w), int(0.84 * w), int(0.07 * h), int(0.93 * h)
    region = ink[y0:y1, x0:x1].copy()
    n, labels, stats, cents = cv2.connectedComponentsWithStats(region, connectivity=8)
    comps = [k for k in range(1, n) if stats[k, cv2.CC_STAT_AREA] >= 12]
    areas = [stats[k, cv2.CC_STAT_AREA] for k in comps]
    # a picture (J, Q, K) is printed in several colours; pips are red or black only
    # (colours judged against the card's own white: a bluish or warm light tints black ink, which
    # then passes a plain saturation test; and too dark a pixel has no colour to speak of)
    hsv = cv2.cvtColor(_white_balanced(canon)[y0:y1, x0:x1], cv2.COLOR_BGR2HSV)
    inked = region > 0
    hue, sat, val = hsv[:, :, 0][inked], hsv[:, :, 1][inked], hsv[:, :, 2][inked]
    colourful = (
        float(((sat > 80) & (hue > 14) & (hue < 165) & (val > PICTURE_V)).mean()) if inked.any() else 0.0
    )
    picture = colourful > 0.1
    if not comps:
        return {
            "n": 0,
            "red": None,
            "picture": picture,
            "contours": [],
            "centres": [],
            "sizes": [],
            "feats": [],
        }
    big = max(areas)
    med = float(np.median([a for a in areas if a > 0.25 * big]))
    pip_ids = [k for k in comps if 0.4 * med <= stats[k, cv2.CC_STAT_AREA] <= 2.2 * med]
    # keep pips whose centre is well inside the middle area
    cx0, cx1 = 0.04 * region.shape[1], 0.96 * region.shape[1]
    pip_ids = [k for k in pip_ids if cx0 < cents[k][0] < cx1]

    # index symbols near the corners are not pips (some decks print a second small suit there)
    def in_corner(k):
        fx, fy = (cents[k][0] + x0) / w, (cents[k][1] + y0) / h
        return (fx < 0.26 or fx > 0.74) and (fy < 0.4 or fy > 0.6)

    # ... but one with a partner at its mirror place across the card's middle line is a pip: pips
    # are laid out left-right symmetric, the two corner indices only point-symmetric (standard
    # faces print their outer pip columns that close to the edge)
    def mirrored(k):
        fx, fy = (cents[k][0] + x0) / w, (cents[k][1] + y0) / h
        a = stats[k, cv2.CC_STAT_AREA]
        for j in pip_ids:
            gx, gy = (cents[j][0] + x0) / w, (cents[j][1] + y0) / h
            near = abs(gx - (1 - fx)) < MIRROR_TOL and abs(gy - fy) < MIRROR_TOL
            if j != k and near and 0.6 <= stats[j, cv2.CC_STAT_AREA] / a <= 1.6:
                return True
        return False

    # (with `keep`, part of the card is hidden: a partner may be hidden too, so the plain rule)
    pip_ids = [k for k in pip_ids if not in_corner(k) or (keep is None and mirrored(k))]
    if keep is not None:
        pip_ids = [k for k in pip_ids if keep[int(cents[k][1]) + y0, int(cents[k][0]) + x0] > 0]
    if len(pip_ids) > 10:
        picture = True
    redness = float(red[y0:y1, x0:x1][region > 0].mean()) if region.any() else 0.0
    if keep is not None and pip_ids:  # the colour of the pips that count, not of what is cut away
        redness = float(red[y0:y1, x0:x1][np.isin(labels, pip_ids)].mean())
    contours, feats = [], []
    for k in pip_ids[:6]:
        cs, _ = cv2.findContours((labels == k).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        if cs:
            contours.append(max(cs, key=cv2.contourArea))
        if dark is not None:
            f = crop_features(dark[y0:y1, x0:x1], labels == k, SUIT_SIZE)
            if f is not None:
                feats.append(f)
    centres = [((cents[k][0] + x0) / w, (cents[k][1] + y0) / h) for k in pip_ids]
    sizes = [(stats[k, cv2.CC_STAT_WIDTH] / w, stats[k, cv2.CC_STAT_HEIGHT] / h) for k in pip_ids]
    return {
        "n": len(pip_ids),
        "red": redness > PIP_RED,
        "redness": redness,
        "picture": picture,
        "contours": contours,
        "centres": centres,
        "sizes": sizes,
        "feats": feats,
    }
