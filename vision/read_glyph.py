"""Small trained classifiers of the built-in reader: the corner index's rank glyph and suit symbols.

Inputs are crops of the card's ink (how dark each pixel is, whatever its colour) around one glyph
or symbol, scaled to a fixed size, plus the crop's aspect ratio. Each classifier is a two-layer
perceptron (numpy only) whose weights live in `read_glyphs.npz` next to this file, made by
`python -m vision.read_train --real` (make train-vision-glyphs) from synthetic cards
(`vision.read_synth`: outline and Hershey fonts, drawn suit shapes), the two GPL decks and the index
crops of the real photos; `loso/read_glyphs_without_<source>.npz` left that source out
(`use_weights` switches to one). If the file is missing the reader falls back to its rules.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

RANK_SIZE = (12, 18)  # w, h of a rank glyph crop
SUIT_SIZE = (12, 12)
RANK_CLASSES = "23456789TJQKA"
SUIT_CLASSES = "cdhs"
WEIGHTS = Path(__file__).with_name("read_glyphs.npz")


def percentile_u8(a: np.ndarray, q: float) -> float:
    """np.percentile(a, q) (linear interpolation) of a uint8 array, from its histogram: the
    same value, several times faster on the small images the readers look at."""
    flat = np.ascontiguousarray(a).ravel()
    n = flat.size
    cum = np.cumsum(np.bincount(flat, minlength=256))
    pos = q / 100.0 * (n - 1)
    lo = int(np.floor(pos))
    v_lo = int(np.searchsorted(cum, lo + 1))
    v_hi = int(np.searchsorted(cum, min(lo + 2, n)))
    return float(v_lo + (pos - lo) * (v_hi - v_lo))


def darkness(canon: np.ndarray) -> np.ndarray:
    """0 (paper) .. 1 (ink) from the darkest channel: red and black ink alike, light cancelled."""
    m8 = np.minimum(np.minimum(canon[:, :, 0], canon[:, :, 1]), canon[:, :, 2])
    white = percentile_u8(m8[::3, ::3], 95) + 1.0
    return np.clip(1.0 - m8.astype(np.float32) / white, 0.0, 1.0)


def crop_features(dark: np.ndarray, mask: np.ndarray, size: tuple[int, int]) -> np.ndarray | None:
    """The darkness around the glyph `mask` (same shape as dark), scaled to `size`, contrast
    stretched, and the log aspect ratio."""
    ys, xs = np.nonzero(mask)
    if len(xs) < 4:
        return None
    y0, y1, x0, x1 = ys.min(), ys.max() + 1, xs.min(), xs.max() + 1
    crop = dark[y0:y1, x0:x1] * (
        cv2.dilate(mask[y0:y1, x0:x1].astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    )
    interp = cv2.INTER_AREA if crop.shape[0] >= size[1] else cv2.INTER_LINEAR
    g = cv2.resize(crop.astype(np.float32), size, interpolation=interp)
    g = g / (float(g.max()) + 1e-3)
    aspect = np.log((x1 - x0) / (y1 - y0))
    return np.concatenate([g.ravel(), [aspect]]).astype(np.float32)


class MLP:
    def __init__(self, w1, b1, w2, b2, mean, std):
        self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2
        self.mean, self.std = mean, std

    def log_probs(self, x: np.ndarray) -> np.ndarray:
        x = (np.atleast_2d(x) - self.mean) / self.std
        h = np.maximum(x @ self.w1 + self.b1, 0.0)
        z = h @ self.w2 + self.b2
        z = z - z.max(axis=1, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


class Ensemble:
    """Several perceptrons trained alike from different starts: their probabilities averaged
    (one alone is overconfident on an index style it never saw)."""

    def __init__(self, members: list[MLP]):
        self.members = members

    def log_probs(self, x: np.ndarray) -> np.ndarray:
        p = np.mean([np.exp(m.log_probs(x)) for m in self.members], axis=0)
        return np.log(p + 1e-9)


_weights = WEIGHTS  # the file models() loads (use_weights changes it)


def use_weights(path: str | Path | None) -> None:
    """Read with the glyph classifiers of `path` from now on (None: the shipped ones): the
    benchmark measures each real-photo source with the ones trained without it."""
    global _weights
    _weights = WEIGHTS if path is None else Path(path)
    models.cache_clear()


@lru_cache(maxsize=1)
def models() -> dict[str, Ensemble] | None:
    if not _weights.exists():
        return None
    out = {}
    keys = ("w1", "b1", "w2", "b2", "mean", "std")
    with np.load(_weights, allow_pickle=False) as z:
        for name in ("rank", "suit"):
            n = int(z[f"{name}_members"]) if f"{name}_members" in z else 1
            out[name] = Ensemble(
                [
                    MLP(*(z[f"{name}{i}_{k}" if n > 1 else f"{name}_{k}"].astype(np.float32) for k in keys))
                    for i in range(n)
                ]
            )
    return out


def rank_log_probs(feat: np.ndarray) -> dict[str, float] | None:
    m = models()
    if m is None:
        return None
    lp = m["rank"].log_probs(feat)[0]
    return {r: float(v) for r, v in zip(RANK_CLASSES, lp, strict=True)}


def suit_log_probs(feats: list[np.ndarray]) -> np.ndarray | None:
    """(n, 4) log probabilities of c, d, h, s for each symbol crop."""
    m = models()
    if m is None or not feats:
        return None
    return m["suit"].log_probs(np.stack(feats))
