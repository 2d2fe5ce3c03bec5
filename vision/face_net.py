"""The face network: is a card we found lying face up or face down?

Why: the readers' own test (`vision.read.face_up_score`) calls a card face up when a broad share of
it is plain white paper. A back printed in a pale pattern on white -- a fine blue checker, a lattice,
a thin plaid -- has as much white as a face, and every such card was reported face up (the held-out
neoclassical deck: face up/down 0.47), which on a table means a false exposed card and a false
misdeal. What tells a back from a face is the layout, not the ink: a face has an index in two
opposite corners and pips or a picture placed about its middle on plain paper; a back repeats one
pattern edge to edge, or is one picture filling a frame. A small convolutional network looks at the
whole card at half the canonical size and says how likely it is a back.

How it is used (`vision.read`): the paper test still decides first. A card it calls face up is
called face down when this network is sure it is a back (`P(back) >= BACK_SURE`), even where the
index network was sure of an index (it never saw a back, and is sure of codes on some patterned
ones); a card it calls face down for want of
white (a gold-foil face, a court whose picture fills the card) is face up when the network is sure
it is a face (`P(back) <= FACE_SURE`), and read where it can be. Where the network hesitates the paper test stands,
and it is not asked of a card less than FACE_NET_MIN_SEEN in view. Trained by `vision.face_net_train` on the faces and backs of
the Aisleriot training decks and on backs drawn in code (checkers, lattices, stripes, plaids, dots,
frames, surface photos), each through the simulated camera, partly covered; never on the held-out
decks or on the real photographs, which measure it. Run by OpenCV's DNN module; weights
`face_net.onnx`, about 0.2 MB.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.onnx_model import OnnxModel, blob

WEIGHTS = Path(__file__).with_name("face_net.onnx")
SIZE = (50, 70)  # width, height: the canonical 100 x 140 card at half size
BACK_SURE = 0.9  # P(back) at which a card the paper test calls face up is called face down
FACE_SURE = 0.05  # P(back) at or under which a card the paper test calls face down is face up
FACE_NET_MIN_SEEN = 0.35  # share of the card in view below which the network is not asked: it learnt
# from cards at least 30 % in view (vision.face_net_train.covering_mask), and a sliver of a face can
# look like anything
MASKED = 127  # what a covered part of the card is painted before the network looks (zero after scaling)


def card_input(canon: np.ndarray, own: np.ndarray | None = None) -> np.ndarray:
    """The card as the network sees it: half size, the parts another card covers painted grey."""
    small = cv2.resize(canon, SIZE, interpolation=cv2.INTER_AREA)
    if own is not None and own.min() < 128:
        hidden = cv2.resize(own, SIZE, interpolation=cv2.INTER_AREA) < 128
        small = small.copy()
        small[hidden] = MASKED
    return small


class FaceNet:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else WEIGHTS
        self.model = OnnxModel(self.path, "face network")

    def back_probability(self, canon: np.ndarray, own: np.ndarray | None = None) -> float:
        """How likely the card is a back, 0..1."""
        logit = float(self.model.forward(blob([card_input(canon, own)])).ravel()[0])
        return float(1.0 / (1.0 + np.exp(-np.clip(logit, -30, 30))))


_weights: Path | None = WEIGHTS  # the file model() loads (use_weights changes it)


def use_weights(path: str | Path | bool | None) -> None:
    """Judge faces with the network at `path` from now on (None: the shipped one; False: none, the
    paper test alone): the benchmark measures before and after."""
    global _weights
    _weights = WEIGHTS if path is None else None if path is False else Path(path)
    model.cache_clear()


@lru_cache(maxsize=1)
def model() -> FaceNet | None:
    """The face network in use, or None where its file is missing (the paper test decides alone)."""
    if _weights is None or not _weights.is_file():
        return None
    return FaceNet(_weights)
