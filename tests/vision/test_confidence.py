"""The built-in reader's confidence map (vision/confidence.py): a monotone fit that says how often a
read with that raw score is right, applied by the detector to built-in reads only."""

from __future__ import annotations

import numpy as np
import pytest

from vision import confidence
from vision.confidence import Calibrator, fit_isotonic


def test_isotonic_fit_follows_the_observed_rate_and_never_falls():
    rng = np.random.default_rng(4)
    raw = rng.uniform(0, 1, 4000)
    truth = rng.uniform(0, 1, 4000) < 0.2 + 0.6 * raw**2  # an overconfident scorer
    cal = Calibrator(fit_isotonic(raw, truth))
    probes = np.linspace(0.02, 0.98, 25)
    got = np.array([cal(float(x)) for x in probes])
    assert np.all(np.diff(got) >= 0)
    assert np.abs(got - (0.2 + 0.6 * probes**2)).max() < 0.12
    # reliability: reads mapped to about p are right about p of the time
    mapped = np.array([cal(float(x)) for x in raw])
    for lo, hi in ((0.2, 0.4), (0.4, 0.6), (0.6, 0.8)):
        sel = (mapped >= lo) & (mapped < hi)
        assert sel.sum() > 100
        assert abs(truth[sel].mean() - mapped[sel].mean()) < 0.05


def test_empty_fit_leaves_the_raw_score_and_a_broken_table_is_named(tmp_path):
    assert Calibrator(fit_isotonic([], []))(0.7) == 0.7
    bad = tmp_path / "c.json"
    bad.write_text('{"edges": [0.5], "rates": []}')
    with pytest.raises(ValueError, match=r"c\.json"):
        confidence.load(str(bad))


def test_detector_applies_the_map_to_built_in_reads_only(tmp_path):
    from vision.detect import Detector

    path = tmp_path / "half.json"
    confidence.save({"edges": [1.0], "rates": [0.5]}, path)  # every read: right half the time
    det = Detector(calibration=str(path))
    raw = Detector(calibration=False)
    assert det.calibrate(0.93) == 0.5 and raw.calibrate is None


def test_equal_raw_scores_are_one_step():
    """The reader's raw scores are coarse (0.6, 0.9, ...): reads with the same score get one rate."""
    raw = [0.6] * 10 + [0.9] * 10
    right = [0] * 4 + [1] * 6 + [1] * 9 + [0]
    cal = Calibrator(fit_isotonic(raw, right))
    assert cal(0.6) == pytest.approx((6 + 2 * 15 / 20) / 12)
    assert cal(0.9) > cal(0.6)


def test_reads_by_the_rules_alone_use_their_own_map(tmp_path):
    """Where the index network takes the cards it is sure of, the rules' remaining reads are the hard
    ones and the main map rates them low; a card too small to ask the network is read by the rules
    alone, and its rate comes from the `rules_alone` map (fitted on reads without the network).
    The shipped map has one (what it does for 25 px pip cards: tests/vision/test_read.py)."""
    table = {"edges": [1.0], "rates": [0.4], "rules_alone": {"edges": [1.0], "rates": [0.9]}}
    cal = Calibrator(table)
    assert cal(0.7) == 0.4 and cal(0.7, rules_alone=True) == 0.9
    assert Calibrator({"edges": [1.0], "rates": [0.4]})(0.7, rules_alone=True) == 0.4  # no second map
    bad = tmp_path / "c.json"
    bad.write_text('{"edges": [1.0], "rates": [0.4], "rules_alone": [1, 2]}')
    with pytest.raises(ValueError, match=r"c\.json"):
        confidence.load(str(bad))
    shipped = confidence.load()
    assert shipped is not None and shipped.alone is not None
    assert all(np.diff(shipped.alone.rates) >= 0)
