"""`vision train --quick`: the verifier's training runs end to end on synthetic composites and the
Detector uses what it wrote; the benchmark's held-out deck is refused."""

from __future__ import annotations

import numpy as np

from vision.detect import Detector
from vision.detect_quads import QuadVerifier
from vision.train import composite, load_card_images, load_textures, train

from .conftest import run_cli


def test_quick_training_writes_a_verifier_the_detector_uses(tmp_path):
    out = tmp_path / "v.npz"
    figures = train(out, composites=80, seed=3, decks=["tango"], hidden=16, epochs=30, log=lambda *_: None)
    assert out.is_file()
    assert figures["samples"] > 50 and figures["cards"] > 5
    # on synthetic composites it never trained on, a card outranks a non-card far more often than not
    assert figures["val_auc"] > 0.75, figures
    QuadVerifier(out)
    det = Detector(verifier_path=str(out), budget_ms=5000)  # the budget is not under test here
    rng = np.random.default_rng(11)
    faces, backs = load_card_images(["tango"])
    img, _cards = composite(rng, faces, backs, load_textures(limit=4), 640, 480)
    res = det.detect(img)
    assert res.width == 640 and not res.truncated


def test_training_on_the_held_out_deck_is_refused(tmp_path):
    r = run_cli("vision", "train", "--quick", "--decks", "drawn", "--out", str(tmp_path / "v.npz"))
    assert r.returncode == 2 and "held-out" in r.stderr
    assert not (tmp_path / "v.npz").exists()
