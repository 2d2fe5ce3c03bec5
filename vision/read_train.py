"""Train the built-in reader's glyph classifiers; writes read_glyphs.npz.

    .venv/bin/python -m vision.read_train [--cards 80] [--seed 1] [--decks tango anglo_poker] [--out FILE] [--real]
    make train-vision-glyphs      (with the outline fonts of the `train` extra and --real)

Training cards come from `vision.read_synth` (rank glyphs in outline fonts where the `train` extra
is installed and in OpenCV's Hershey fonts, suit shapes drawn in code, a simulated camera) and, by
default, camera views of the two GPL decks (tango, anglo_poker). With `--real`, also the corner
index crops of the cards found on the real photos (vision/train_real.py: glyph_samples), leave one
source out: each `loso/read_glyphs_without_<source>.npz` never saw that source, and the confidence
maps are refitted on reads by those models. The held-out
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
from vision.read import _ink, _pips, _quarter_turned, _read_index, turn_quarter
from vision.read_glyph import RANK_CLASSES, SUIT_CLASSES, WEIGHTS, darkness
from vision.read_synth import deck_card, synthetic_card, ttf_fonts

CODES = [r + s for r in RANK_CLASSES for s in SUIT_CLASSES]
RANK_HIDDEN, SUIT_HIDDEN = 96, 64  # hidden units of the rank and suit perceptrons
REAL_GLYPH_WEIGHT = 4.0  # a crop from a real photo counts this many synthetic ones (10 measured no better)


def _deck_images(deck: str) -> dict[str, np.ndarray]:
    if deck == "drawn":
        raise SystemExit("the 'drawn' deck is the benchmark's held-out deck: never trained on")
    from controller.datapaths import deck_dir

    folder = deck_dir(deck)
    return {c: cv2.imread(str(folder / f"{c}.png"), cv2.IMREAD_UNCHANGED) for c in CODES}


def card_crops(
    canon: np.ndarray, code: str, visible: np.ndarray | None = None
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(rank features, suit features) that the built-in reader cuts from one card: its two corner
    indices (with `visible`, those in view, after the reader's quarter-turn check) and, on a pip
    card, the first three pips (with `visible`, only when all of the card is in view)."""
    if visible is not None and visible.mean() > 250 and _quarter_turned(canon):
        canon = turn_quarter(canon)
    ink, red = _ink(canon)
    dark = darkness(canon)
    ranks, suits = [], []
    for rot in (False, True):
        flip = (lambda a: np.ascontiguousarray(a[::-1, ::-1])) if rot else (lambda a: a)
        if visible is not None and flip(visible)[2:44, 2:24].mean() <= 250:
            continue  # (the reader's own test: this corner is under another card)
        idx = _read_index(flip(ink), flip(red), flip(ink), flip(dark))
        if idx is None:
            continue
        if idx["rank_feat"] is not None:
            ranks.append(idx["rank_feat"])
        if idx["suit_feat"] is not None:
            suits.append(idx["suit_feat"])
    if code[0] not in "JQK" and (visible is None or visible.mean() > 250):
        suits += _pips(ink, red, canon, dark)["feats"][:3]
    return ranks, suits


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
        ranks, suits = card_crops(canon, code)
        rx += ranks
        sx += suits
        ry += [RANK_CLASSES.index(code[0])] * len(ranks)
        sy += [SUIT_CLASSES.index(code[1])] * len(suits)
    return np.array(rx), np.array(ry), np.array(sx), np.array(sy)


def train_mlp(
    x, y, classes: int, hidden: int, seed: int, epochs: int = 40, lr: float = 2e-3, sample_weight=None
):
    """Two-layer perceptron, softmax cross-entropy (each sample weighted by `sample_weight`, mean 1),
    Adam; returns the weights as a dict."""
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
    sw = np.ones(len(x), np.float32) if sample_weight is None else np.asarray(sample_weight, np.float32)
    sw = sw / sw.mean()
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
            p *= sw[b, None] / len(b)
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


def train_glyphs(
    rank, suit, rank_check, suit_check, members: int, seed: int, weights=(None, None), log=print
):
    """The weights file's arrays: `members` perceptrons each for rank and suit, from (features,
    labels) pairs; `weights`: per-sample weights of rank and suit (None: all alike); the checks are
    held-out synthetic (features, labels) whose accuracy is printed."""
    out = {}
    for name, (x, y), (vx, vy), w, classes, hidden in (
        ("rank", rank, rank_check, weights[0], len(RANK_CLASSES), RANK_HIDDEN),
        ("suit", suit, suit_check, weights[1], len(SUIT_CLASSES), SUIT_HIDDEN),
    ):
        out[f"{name}_members"] = np.array(members)
        for i in range(members):
            params = train_mlp(x, y, classes, hidden, seed + 100 * i, sample_weight=w)
            log(
                f"{name} {i}: train {accuracy(params, x, y):.3f} held-out synthetic {accuracy(params, vx, vy):.3f}"
            )
            out.update({f"{name}{i}_{k}": a.astype(np.float16) for k, a in params.items()})
    return out


def _pooled(synthetic, real: list):
    """(rank (x, y), suit (x, y), (rank weights, suit weights)): synthetic and real crops in one
    set, a real crop weighted REAL_GLYPH_WEIGHT."""
    parts = [synthetic, *real]
    weight = [1.0] + [REAL_GLYPH_WEIGHT] * len(real)

    def pool(i):
        return np.concatenate([p[i] for p in parts if len(p[i])])

    def weights(i):
        return np.concatenate(
            [np.full(len(p[i]), k) for p, k in zip(parts, weight, strict=True) if len(p[i])]
        )

    return (pool(0), pool(1)), (pool(2), pool(3)), (weights(1), weights(3))


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
    ap.add_argument(
        "--real",
        action="store_true",
        help="also learn from the real photos, leave-one-source-out: writes loso/read_glyphs_without_<source>.npz "
        "beside --out and refits the confidence maps (vision/train_real.py)",
    )
    args = ap.parse_args()
    t0 = time.time()
    if not ttf_fonts():
        print("note: no outline fonts (pip install -e '.[train]'): rank glyphs in the Hershey fonts only")
    rx, ry, sx, sy = samples(args.cards, args.seed, tuple(args.decks), args.deck_cards)
    check = samples(max(4, args.cards // 10), args.seed + 1000)
    n = 52 * (args.cards + args.deck_cards * len(args.decks))
    print(f"{len(rx)} rank and {len(sx)} suit crops from {n} cards ({time.time() - t0:.0f} s)")
    synthetic = (rx, ry, sx, sy)
    if not args.real:
        out = train_glyphs((rx, ry), (sx, sy), check[:2], check[2:], args.members, args.seed)
        np.savez_compressed(args.out, **out)
        print(f"wrote {args.out} ({Path(args.out).stat().st_size} bytes, {time.time() - t0:.0f} s)")
        return 0
    from vision.real_photos import SOURCES
    from vision.train_real import fit_confidence, glyph_samples

    out_dir = Path(args.out).parent
    real = {s: glyph_samples(s, str(out_dir / "loso" / f"quad_verifier_without_{s}.npz")) for s in SOURCES}
    for held in (*SOURCES, None):
        used = [s for s in SOURCES if s != held]
        path = Path(args.out) if held is None else out_dir / "loso" / f"read_glyphs_without_{held}.npz"
        rank, suit, w = _pooled(synthetic, [real[s] for s in used])
        out = train_glyphs(rank, suit, check[:2], check[2:], args.members, args.seed, w)
        out["real_sources"] = np.array(sorted(used))
        np.savez_compressed(path, **out)
        print(f"wrote {path} (synthetic + {', '.join(used)}; {time.time() - t0:.0f} s)")
    fit_confidence(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
