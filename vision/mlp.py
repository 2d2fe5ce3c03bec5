"""The Adam step shared by the project's small numpy perceptrons (the card verifier in vision/train.py,
the glyph classifiers in vision/read_train.py): training needs no framework, only this update."""

from __future__ import annotations

import numpy as np


def adam_step(
    params: dict[str, np.ndarray],
    grads: dict[str, np.ndarray],
    m: dict[str, np.ndarray],
    v: dict[str, np.ndarray],
    step: int,
    lr: float,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
) -> None:
    """One bias-corrected Adam update of every parameter in place (`step` counts from 1)."""
    for k in params:
        m[k] = b1 * m[k] + (1 - b1) * grads[k]
        v[k] = b2 * v[k] + (1 - b2) * grads[k] ** 2
        mh = m[k] / (1 - b1**step)
        vh = v[k] / (1 - b2**step)
        params[k] -= (lr * mh / (np.sqrt(vh) + eps)).astype(params[k].dtype)
