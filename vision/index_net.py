"""The index network: a card's rank and suit read from the picture of its corner index, in one look.

Why: the built-in reader's rules cut the corner index into a rank glyph and a suit symbol, then
classify each piece (`vision.read_glyph`); on real photographs the cutting is what fails most (a
blurred 10 whose digits run together, a J touching its suit symbol, pale thin letters, a pip
reaching into the corner). A small convolutional network that looks at the whole corner -- rank,
suit and whatever lies around them -- needs no cutting. Trained (`vision.index_net_train`) on
corners of synthetic cards (outline and Hershey fonts), of Aisleriot's decks through a simulated
camera, and, leave-one-source-out, of the cards found on the real photographs.

How it is used (`vision.read.BuiltinReader`): the corners in view (the top-left one, and the
bottom-right one turned half round) are each looked at and their log-probabilities averaged; when
the network is sure of both rank and suit (the product of their probabilities at least
`vision.read.INDEX_SURE`) its code stands, else the rules read the card as before. Run by OpenCV's
DNN module (`vision.onnx_model`); weights `index_net.onnx` (and `loso/index_net_without_<source>.onnx`
for the benchmark), about 0.5 MB.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from vision.onnx_model import OnnxModel, blob
from vision.read_glyph import RANK_CLASSES, SUIT_CLASSES

WEIGHTS = Path(__file__).with_name("index_net.onnx")
PATCH = (1, 1, 32, 64)  # x, y, width, height of the corner looked at, in the canonical 100 x 140 card
CORNER_SEEN = (2, 2, 24, 44)  # x0, y0, x1, y1: the reader's own test that a corner lies in view


def patches(canon: np.ndarray, visible: np.ndarray | None = None) -> list[np.ndarray]:
    """The corner patches in view: top-left, and bottom-right turned half round (an index is printed
    in both); with `visible`, only those no other card covers."""
    x, y, w, h = PATCH
    shown = corners_in(visible) if visible is not None else [True, True]
    out = []
    for turned in (False, True):
        if shown[turned]:
            c = np.ascontiguousarray(canon[::-1, ::-1]) if turned else canon
            out.append(np.ascontiguousarray(c[y : y + h, x : x + w]))
    return out


def corners_in(mask: np.ndarray) -> list[bool]:
    """Whether each corner index (top-left, bottom-right: patches' order) lies where `mask` is set,
    by the reader's own test (CORNER_SEEN)."""
    x0, y0, x1, y1 = CORNER_SEEN
    return [
        bool((mask[::-1, ::-1] if turned else mask)[y0:y1, x0:x1].mean() > 250) for turned in (False, True)
    ]


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


class IndexNet:
    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else WEIGHTS
        self.model = OnnxModel(self.path, "index network")

    def read_corners(
        self, canon: np.ndarray, visible: np.ndarray | None = None
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Each corner in view read alone: [(rank log-probabilities (13, RANK_CLASSES order), suit
        log-probabilities (4, SUIT_CLASSES order)), ...], top-left first; [] when none is in view."""
        ps = patches(canon, visible)
        if not ps:
            return []
        out = self.model.forward(blob(ps))
        nr = len(RANK_CLASSES)
        return [(log_softmax(o[:nr]), log_softmax(o[nr : nr + len(SUIT_CLASSES)])) for o in out]

    def read(self, canon: np.ndarray, visible: np.ndarray | None = None):
        """(rank log-probabilities, suit log-probabilities) of the card, its corners in view
        averaged (read_corners); None when no corner is in view."""
        return averaged(self.read_corners(canon, visible))

    def code(self, canon: np.ndarray, visible: np.ndarray | None = None) -> tuple[str | None, float]:
        """The code the network reads and how sure it is of it (rank and suit probabilities
        multiplied); (None, 0.0) with no corner in view."""
        return averaged_code(self.read_corners(canon, visible))


def averaged(corners: list[tuple[np.ndarray, np.ndarray]]):
    """The corners' readings (read_corners) averaged, or None for no corner."""
    if not corners:
        return None
    return np.mean([r for r, _ in corners], axis=0), np.mean([s for _, s in corners], axis=0)


def averaged_code(corners: list[tuple[np.ndarray, np.ndarray]]) -> tuple[str | None, float]:
    """IndexNet.code of corners already read: the code of their average and how sure it is."""
    got = averaged(corners)
    return (None, 0.0) if got is None else best_code(*got)


def best_code(rank_log_probs: np.ndarray, suit_log_probs: np.ndarray) -> tuple[str, float]:
    """The likeliest code and its probability (the rank's and the suit's multiplied)."""
    r, s = int(rank_log_probs.argmax()), int(suit_log_probs.argmax())
    return RANK_CLASSES[r] + SUIT_CLASSES[s], float(np.exp(rank_log_probs[r] + suit_log_probs[s]))


def code_probability(corner: tuple[np.ndarray, np.ndarray], code: str) -> float:
    """How likely one corner's reading (read_corners) makes `code`."""
    lr, ls = corner
    return float(np.exp(lr[RANK_CLASSES.index(code[0])] + ls[SUIT_CLASSES.index(code[1])]))


_weights: Path | None = WEIGHTS  # the file model() loads (use_weights changes it)


def use_weights(path: str | Path | bool | None) -> None:
    """Read with the index network at `path` from now on (None: the shipped one; False: none, the
    rules alone): the benchmark measures each real-photo source with the one trained without it."""
    global _weights
    _weights = WEIGHTS if path is None else None if path is False else Path(path)
    model.cache_clear()


@lru_cache(maxsize=1)
def model() -> IndexNet | None:
    """The index network in use, or None where its file is missing (the rules read alone)."""
    if _weights is None or not _weights.is_file():
        return None
    return IndexNet(_weights)
