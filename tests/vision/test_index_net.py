"""The index network (vision/index_net.py): it reads the corners of a deck it never saw, looks only
at corners no other card covers, loads without any network access, is refused by name when its file
is bad, and the built-in reader falls back to its rules where the network is not sure or not there.
Training end to end needs torch (the `train` extra)."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from hil.decks.drawn import make_deck
from vision import index_net
from vision.index_net import PATCH, WEIGHTS, IndexNet, patches
from vision.read import INDEX_SURE, BuiltinReader
from vision.read_synth import deck_card


def _drawn_cards(n_per_code: int = 1, seed: int = 5):
    """Camera views of the benchmark's held-out deck (hil/decks/drawn.py), which no model trained on."""
    rng = np.random.default_rng(seed)
    deck = make_deck()
    codes = [c for c in deck if c != "back"]
    return [(code, deck_card(deck[code], rng)) for _ in range(n_per_code) for code in codes]


def test_the_network_reads_a_deck_it_never_saw():
    net = IndexNet()
    cards = _drawn_cards()
    right = sure = sure_right = 0
    for code, canon in cards:
        got, p = net.code(canon)
        right += got == code
        if p >= INDEX_SURE:
            sure += 1
            sure_right += got == code
    assert right / len(cards) >= 0.85, f"{right} of {len(cards)}"
    # where it is sure, it is right (the reader takes its code only then)
    assert sure >= len(cards) // 2 and sure_right / sure >= 0.95, f"{sure_right} of {sure} sure"


def test_only_corners_in_view_are_looked_at():
    canon = np.full((140, 100, 3), 230, np.uint8)
    visible = np.full((140, 100), 255, np.uint8)
    assert len(patches(canon, visible)) == 2
    visible[:50, :30] = 0  # another card lies on the top-left corner
    got = patches(canon, visible)
    assert len(got) == 1 and got[0].shape == (PATCH[3], PATCH[2], 3)
    visible[-50:, -30:] = 0  # ... and on the bottom-right one
    assert patches(canon, visible) == [] and IndexNet().read(canon, visible) is None


def test_shipped_network_loads_without_network(monkeypatch):
    def no_network(*a, **k):
        raise AssertionError("the index network tried to reach the network")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    assert WEIGHTS.stat().st_size < 2_000_000
    rank, suit = IndexNet().read(np.full((140, 100, 3), 200, np.uint8))
    assert rank.shape == (13,) and suit.shape == (4,)
    assert np.exp(rank).sum() == pytest.approx(1.0, abs=1e-3)


def test_a_bad_weights_file_is_refused_naming_it(tmp_path):
    bad = tmp_path / "index_net.onnx"
    bad.write_bytes(b"\x00not onnx")
    with pytest.raises(ValueError, match=r"index_net\.onnx"):
        IndexNet(bad)


def test_the_rules_read_where_the_network_is_not_sure_or_not_there(tmp_path, monkeypatch):
    reader = BuiltinReader()
    ruled = []
    real = BuiltinReader._read_once
    monkeypatch.setattr(BuiltinReader, "_read_once", lambda self, *a: ruled.append(1) or real(self, *a))
    visible = np.full((140, 100), 255, np.uint8)
    net = IndexNet()
    cards = _drawn_cards(seed=9)
    code, canon = next((c, k) for c, k in cards if net.code(k)[1] >= INDEX_SURE and net.code(k)[0] == c)
    assert reader.identify(canon, visible)[0] == code and not ruled  # sure: the network's code
    blank = np.full((140, 100, 3), 235, np.uint8)  # no index at all: the network is not sure
    assert net.code(blank)[1] < INDEX_SURE
    reader.identify(blank, visible)
    assert len(ruled) == 1
    index_net.use_weights(tmp_path / "missing.onnx")
    try:
        assert index_net.model() is None
        reader.identify(canon, visible)  # no network: the rules read
        assert len(ruled) == 2
    finally:
        index_net.use_weights(None)
    assert index_net.model() is not None


def test_quick_training_writes_a_network_the_reader_loads(tmp_path):
    pytest.importorskip("torch", reason="training the index network needs torch: pip install -e '.[train]'")
    from vision.index_net_train import main

    assert main(["--quick", "--out-dir", str(tmp_path)]) == 0
    net = IndexNet(tmp_path / "index_net.onnx")
    rank, suit = net.read(np.full((140, 100, 3), 220, np.uint8))
    assert rank.shape == (13,) and suit.shape == (4,)
