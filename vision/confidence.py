"""Calibrated confidence of the built-in reader: its raw score mapped to how often a code read
with that score is right on real photographs.

Why: the reader's own score (margins between glyph log-odds, pip fits) is not a probability; on real
photos a code read at 0.9 was right 0.71-0.75 of the time. The map is an isotonic (monotone step)
fit of right/wrong against the raw score, made by `vision.train_real` on real photos: for the
figures of one source, on the other two sources only (leave-one-source-out); the shipped
`read_confidence.json` on all three. Without the file the raw score is used as it is.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

CALIBRATION = Path(__file__).with_name("read_confidence.json")
PRIOR = 2.0  # pseudo-reads pulling a small step of the fit towards the overall rate


def fit_isotonic(raw, right) -> dict:
    """Pool-adjacent-violators fit of P(right | raw score): steps (upper edge, rate), non-decreasing."""
    raw = np.asarray(raw, float)
    right = np.asarray(right, float)
    if len(raw) == 0:
        return {"edges": [], "rates": [], "n": 0}
    order = np.argsort(raw, kind="stable")
    raw, right = raw[order], right[order]
    overall = float(right.mean())
    blocks: list[list[float]] = []  # [sum right, count, upper edge]
    xs, start = np.unique(raw, return_index=True)  # equal scores are one step (the reader's are coarse)
    sums = np.add.reduceat(right, start)
    counts = np.diff(np.append(start, len(raw)))
    for x, y, n0 in zip(xs, sums, counts, strict=True):
        blocks.append([float(y), float(n0), float(x)])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, n, e = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += n
            blocks[-1][2] = e
    rates = [(s + PRIOR * overall) / (n + PRIOR) for s, n, _e in blocks]
    rates = list(np.maximum.accumulate(rates))  # the prior must not undo the monotone order
    return {"edges": [float(e) for _s, _n, e in blocks], "rates": [float(r) for r in rates], "n": len(raw)}


class Calibrator:
    """raw score -> calibrated probability that the code is right (a step function). A table may
    hold a second map, `rules_alone`, for reads where the reader's rules worked without the index
    network being asked (a card too small for it): the main map is fitted on reads where the
    network took the cards it was sure of, so the rules' share of it is the harder cards, and
    would undersell the rules' reads of the cards it never looked at."""

    def __init__(self, table: dict) -> None:
        self.edges = np.asarray(table.get("edges", []), float)
        self.rates = np.asarray(table.get("rates", []), float)
        if len(self.edges) != len(self.rates):
            raise ValueError("calibration table: edges and rates differ in length")
        alone = table.get("rules_alone")
        if alone is not None and not isinstance(alone, dict):
            raise ValueError("calibration table: 'rules_alone' is not a map")
        self.alone = Calibrator(alone) if alone else None

    def __call__(self, raw: float, rules_alone: bool = False) -> float:
        if rules_alone and self.alone is not None:
            return self.alone(raw)
        if not len(self.edges):
            return float(raw)
        k = int(np.searchsorted(self.edges, raw, side="left"))
        return float(min(0.99, self.rates[min(k, len(self.rates) - 1)]))


def calibrated(read, calibrate: Calibrator | None) -> float:
    """A built-in reading's confidence (`read`, a vision.read.ReadResult) as `calibrate` maps it: its
    raw score where it read no code or there is no map."""
    if read.code is None or calibrate is None:
        return read.confidence
    return calibrate(read.confidence, rules_alone=read.rules_alone)


def save(table: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")


@lru_cache(maxsize=4)
def load(path: str | None = None) -> Calibrator | None:
    """The calibration at `path` (default: the shipped one), or None when there is none."""
    p = Path(path) if path else CALIBRATION
    if not p.is_file():
        return None
    try:
        return Calibrator(json.loads(p.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{p}: unusable confidence calibration ({exc})") from exc
