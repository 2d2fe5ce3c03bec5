"""Train the built-in reader's glyph classifiers; writes read_glyphs.npz.

    .venv/bin/python -m vision.read_train [--cards 80] [--seed 1] [--decks tango anglo_poker] [--out FILE]

Training cards come from `vision.read_synth` (Hershey fonts, suit shapes drawn in code, a simulated
camera) and, by default, camera views of the two GPL decks (tango, anglo_poker). The held-out
'drawn' deck is refused, so the benchmark's headline built-in figure is on a deck the classifiers
never saw; for the GPL decks, train with `--decks` naming only the other one (leave one deck out).
The crops are cut by the reader's own code (`_read_index`, `_pips`), so the classifiers learn what
the reader will hand them, segmentation mistakes included. Deterministic for a seed.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.mlp import adam_step
from vision.read import _ink, _pips, _read_index
from vision.read_glyph import RANK_CLASSES, SUIT_CLASSES, WEIGHTS, darkness
from vision.read_synth import deck_card, synthetic_card

CODES = [r + s for r in RANK_CLASSES for s in SUIT_CLASSES]


def _deck_images(deck: str) -> dict[str, np.ndarray]:
    if deck == "drawn":
        raise SystemExit("the 'drawn' deck is the benchmark's held-out deck: never trained on")
    from controller.datapaths import deck_dir

    folder = deck_dir(deck)
    return {c: cv2.imread(str(folder / f"{c}.png"), cv2.IMREAD_UNCHANGED) for c in CODES}


def samples(cards_per_code: int, seed: int, decks: tuple[str, ...] = (), deck_cards: int = 0):
    """(rank features, rank labels, suit features, suit labels) from synthetic cards and, if asked,
    from the cards of real decks put through the same simulated camera."""
    rng = np.random.default_rng(seed)
    rx, ry, sx, sy = [], [], [], []
    images = [_deck_images(d) for d in decks]
    jobs = [(code, None) for _ in range(cards_per_code) for code in CODES]
    jobs += [(code, im[code]) for im in images for _ in range(deck_cards) for code in CODES]
    for code, image in jobs:
        canon = synthetic_card(code, rng) if image is None else deck_card(image, rng)
        ink, red = _ink(canon)
        dark = darkness(canon)
        for rot in (False, True):
            flip = (lambda a: np.ascontiguousarray(a[::-1, ::-1])) if rot else (lambda a: a)
            idx = _read_index(flip(ink), flip(red), flip(ink), flip(dark))
            if idx is None:
                continue
            if idx["rank_feat"] is not None:
                rx.append(idx["rank_feat"])
                ry.append(RANK_CLASSES.index(code[0]))
            if idx["suit_feat"] is not None:
                sx.append(idx["suit_feat"])
                sy.append(SUIT_CLASSES.index(code[1]))
        if code[0] not in "JQK":
            pips = _pips(ink, red, canon, dark)
            for f in pips["feats"][:3]:
                sx.append(f)
                sy.append(SUIT_CLASSES.index(code[1]))
    return np.array(rx), np.array(ry), np.array(sx), np.array(sy)


def train_mlp(x, y, classes: int, hidden: int, seed: int, epochs: int = 40, lr: float = 2e-3):
    """Two-layer perceptron, softmax cross-entropy, Adam; returns the weights as a dict."""
    rng = np.random.default_rng(seed)
    mean, std = x.mean(axis=0), x.std(axis=0) + 0.05
    xn = ((x - mean) / std).astype(np.float32)
    d = x.shape[1]
    params = {
        "w1": rng.normal(0, np.sqrt(2 / d), (d, hidden)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": rng.normal(0, np.sqrt(1 / hidden), (hidden, classes)).astype(np.float32),
        "b2": np.zeros(classes, np.float32),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    step, batch, decay = 0, 128, 1e-4
    for epoch in range(epochs):
        order = rng.permutation(len(xn))
        rate = lr * (0.5 * (1 + np.cos(np.pi * epoch / epochs)))
        for i in range(0, len(order), batch):
            b = order[i : i + batch]
            xb, yb = xn[b], y[b]
            xb = xb + rng.normal(0, 0.1, xb.shape).astype(np.float32)
            h = np.maximum(xb @ params["w1"] + params["b1"], 0)
            z = h @ params["w2"] + params["b2"]
            z -= z.max(axis=1, keepdims=True)
            p = np.exp(z)
            p /= p.sum(axis=1, keepdims=True)
            p[np.arange(len(b)), yb] -= 1
            p /= len(b)
            grads = {"w2": h.T @ p + decay * params["w2"], "b2": p.sum(axis=0)}
            dh = (p @ params["w2"].T) * (h > 0)
            grads["w1"] = xb.T @ dh + decay * params["w1"]
            grads["b1"] = dh.sum(axis=0)
            step += 1
            adam_step(params, grads, m, v, step, rate)
    params["mean"], params["std"] = mean.astype(np.float32), std.astype(np.float32)
    return params


def accuracy(params, x, y) -> float:
    h = np.maximum(((x - params["mean"]) / params["std"]) @ params["w1"] + params["b1"], 0)
    return float(((h @ params["w2"] + params["b2"]).argmax(axis=1) == y).mean())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cards", type=int, default=80, help="synthetic cards per code")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(WEIGHTS))
    ap.add_argument(
        "--decks",
        nargs="*",
        default=["tango", "anglo_poker"],
        help="real decks to train on too (never 'drawn')",
    )
    ap.add_argument("--deck-cards", type=int, default=25, help="camera views per card of each real deck")
    ap.add_argument("--members", type=int, default=3, help="perceptrons per classifier, averaged")
    args = ap.parse_args()
    t0 = time.time()
    rx, ry, sx, sy = samples(args.cards, args.seed, tuple(args.decks), args.deck_cards)
    vx_r, vy_r, vx_s, vy_s = samples(max(4, args.cards // 10), args.seed + 1000)
    n = 52 * (args.cards + args.deck_cards * len(args.decks))
    print(f"{len(rx)} rank and {len(sx)} suit crops from {n} cards ({time.time() - t0:.0f} s)")
    out = {}
    for name, (x, y, vx, vy, classes, hidden) in {
        "rank": (rx, ry, vx_r, vy_r, len(RANK_CLASSES), 96),
        "suit": (sx, sy, vx_s, vy_s, len(SUIT_CLASSES), 64),
    }.items():
        out[f"{name}_members"] = np.array(args.members)
        for i in range(args.members):
            params = train_mlp(x, y, classes, hidden, args.seed + 100 * i)
            print(
                f"{name} {i}: train {accuracy(params, x, y):.3f} held-out synthetic {accuracy(params, vx, vy):.3f}"
            )
            out.update({f"{name}{i}_{k}": a.astype(np.float16) for k, a in params.items()})
    np.savez_compressed(args.out, **out)
    print(f"wrote {args.out} ({Path(args.out).stat().st_size} bytes, {time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
