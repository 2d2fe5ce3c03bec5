"""Train the index network (`vision/index_net.py`); writes vision/index_net.onnx and its folds.

    python -m vision.index_net_train [--synthetic 60] [--deck-cards 30] [--epochs 8] [--seed 1] [--quick]
    make train-index-net        (the `train` extra: torch, CPU; about 45 minutes on 2 cores)

Training corners: cards drawn in code (`vision.read_synth`: outline and Hershey fonts, drawn suits),
the Aisleriot decks whose indices are English and two-coloured (`vision.aisleriot_decks.READER_DECKS`;
never the held-out or the excluded ones, nor the benchmark's 'drawn'), each through the simulated
camera of `vision.read_synth` and then made smaller still, warped from a slightly wrong outline and
JPEG-compressed (cards 25-100 px wide on real tables); and the corners of the labelled cards the
detector finds on the real photos (`vision.train_real.labelled_cards`), each cut as found and
through outlines moved a little. Leave-one-source-out: `loso/index_net_without_<source>.onnx` never
saw that source's photos; the shipped `index_net.onnx` saw all three. After training, the reader's
confidence maps are refitted on reads by the models that never saw each source
(`vision.train_real.fit_confidence`). Deterministic for a seed up to torch's own arithmetic.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.index_net import PATCH, WEIGHTS, IndexNet, patches
from vision.read_glyph import RANK_CLASSES, SUIT_CLASSES
from vision.small_net_train import conv_block, export_checked, fit, torch_missing

CODES = [r + s for r in RANK_CLASSES for s in SUIT_CLASSES]
REAL_WEIGHT = 2.0  # a real corner counts this many synthetic ones
REAL_VIEWS = 6  # each real card cut this many times (as found, then through moved outlines)
OUTLINE_JITTER = 0.02  # of the card's width: how far each corner of a real card's outline is moved


# -- data ----------------------------------------------------------------------------------------
def degrade(canon: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A simulated camera's canonical card made harder: seen smaller (down to a third), warped from
    an outline a few percent off, JPEG-compressed."""
    s = rng.uniform(0.35, 1.2)
    if s < 1:
        small = cv2.resize(
            canon, (max(8, round(100 * s)), max(8, round(140 * s))), interpolation=cv2.INTER_AREA
        )
        canon = cv2.resize(small, (100, 140), interpolation=cv2.INTER_LINEAR)
    m = cv2.getRotationMatrix2D((50, 70), rng.normal(0, 1.5), rng.uniform(0.94, 1.06))
    m[:, 2] += rng.normal(0, 2.0, 2)
    canon = cv2.warpAffine(canon, m, (100, 140), borderMode=cv2.BORDER_REPLICATE)
    if rng.random() < 0.5:
        _ok, enc = cv2.imencode(".jpg", canon, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 95))])
        canon = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return canon


def synthetic_patches(per_code: int, deck_cards: int, seed: int, decks: list[Path], log=print):
    """(patches N x 64 x 32 x 3 uint8, rank labels, suit labels) of cards drawn in code and of the
    decks' cards, both corners of each."""
    from vision.read_synth import deck_card, synthetic_card

    rng = np.random.default_rng(seed)
    images = []
    for folder in decks:
        images.append({c: cv2.imread(str(folder / f"{c}.png"), cv2.IMREAD_UNCHANGED) for c in CODES})
    jobs = [(c, None) for _ in range(per_code) for c in CODES]
    jobs += [(c, im) for im in images for _ in range(deck_cards) for c in CODES if im[c] is not None]
    xs, rs, ss = [], [], []
    t0 = time.time()
    for code, im in jobs:
        canon = synthetic_card(code, rng) if im is None else deck_card(im[code], rng)
        for p in patches(degrade(canon, rng)):
            xs.append(p)
            rs.append(RANK_CLASSES.index(code[0]))
            ss.append(SUIT_CLASSES.index(code[1]))
    log(
        f"  {len(xs)} synthetic corners from {len(jobs)} cards ({len(decks)} decks), {time.time() - t0:.0f} s"
    )
    return np.array(xs), np.array(rs), np.array(ss)


def real_patches(source: str, verifier_path: str | None, seed: int, views: int = REAL_VIEWS, log=print):
    """The corners in view of the labelled cards the detector finds on one source's photos."""
    from vision.detect import warp_card
    from vision.read import _quarter_turned, turn_quarter
    from vision.train_real import labelled_cards

    rng = np.random.default_rng(seed)
    xs, rs, ss = [], [], []
    n = 0
    for frame, corners, covering, touching, code in labelled_cards(source, verifier_path):
        n += 1
        width = float(np.linalg.norm(corners[1] - corners[0]))
        for v in range(views):
            moved = corners if v == 0 else corners + rng.normal(0, OUTLINE_JITTER * width, (4, 2))
            canon, visible, own = warp_card(frame, moved, covering, touching)
            if visible.mean() > 250 and own.mean() > 250 and _quarter_turned(canon):
                canon = turn_quarter(canon)
            for p in patches(canon, visible):
                xs.append(p)
                rs.append(RANK_CLASSES.index(code[0]))
                ss.append(SUIT_CLASSES.index(code[1]))
    log(f"  real {source}: {len(xs)} corners of {n} cards")
    w, h = PATCH[2], PATCH[3]
    return np.array(xs).reshape(-1, h, w, 3), np.array(rs, int), np.array(ss, int)


# -- the network ---------------------------------------------------------------------------------
def build_model(width: int = 16):
    import torch.nn as nn

    cbr = conv_block
    w = width
    _x, _y, pw, ph = PATCH
    feat = 6 * w * (ph // 8) * (pw // 8)
    return nn.Sequential(
        cbr(3, w), cbr(w, w), nn.MaxPool2d(2),
        cbr(w, 2 * w), cbr(2 * w, 2 * w), nn.MaxPool2d(2),
        cbr(2 * w, 4 * w), cbr(4 * w, 4 * w), nn.MaxPool2d(2),
        cbr(4 * w, 6 * w), nn.Flatten(), nn.Dropout(0.3),
        nn.Linear(feat, len(RANK_CLASSES) + len(SUIT_CLASSES)),
    )  # fmt: skip


def train_net(x, r, s, weight, epochs: int, seed: int, width: int = 16, log=print):
    """Cross-entropy on rank and suit, each sample weighted; colours and brightness jittered."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    model = build_model(width)
    nr = len(RANK_CLASSES)

    def batch_loss(out, b):
        wt = torch.from_numpy(weight[b].astype(np.float32))
        loss = F.cross_entropy(out[:, :nr], torch.from_numpy(r[b]), reduction="none")
        loss = loss + F.cross_entropy(out[:, nr:], torch.from_numpy(s[b]), reduction="none")
        return (loss * wt).sum() / wt.sum()

    return fit(model, x, batch_loss, epochs, seed, batch=128, log=log)


def export(model, path: Path) -> None:
    """ONNX for OpenCV's DNN module, checked against torch on random corners."""
    _x, _y, pw, ph = PATCH
    export_checked(model, (3, ph, pw), path, ("corner", "logits"), lambda f, b: IndexNet(f).model.forward(b))


def train_folds(out_dir: Path, synthetic, epochs: int, seed: int, width: int = 16, log=print) -> None:
    """The shipped network (every source) and one per real-photo source left out."""
    from vision.real_photos import SOURCES, real_photos_dir

    out_dir = Path(out_dir)
    fold_dir = out_dir / "loso"
    real = {}
    if real_photos_dir() is not None:
        for src in SOURCES:
            verifier = fold_dir / f"quad_verifier_without_{src}.npz"
            real[src] = real_patches(src, str(verifier) if verifier.is_file() else None, seed, log=log)
    xs, rs, ss = synthetic
    for held in (*real, None):
        used = [src for src in real if src != held]
        x = np.concatenate([xs, *(real[u][0] for u in used)])
        r = np.concatenate([rs, *(real[u][1] for u in used)])
        s = np.concatenate([ss, *(real[u][2] for u in used)])
        w = np.concatenate([np.ones(len(xs))] + [np.full(len(real[u][0]), REAL_WEIGHT) for u in used])
        path = out_dir / "index_net.onnx" if held is None else fold_dir / f"index_net_without_{held}.onnx"
        log(f"  {path.name}: {len(x)} corners (synthetic + {', '.join(used) or 'no real source'})")
        export(train_net(x, r, s, w, epochs, seed, width, log=log), path)
        log(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--synthetic", type=int, default=60, help="cards drawn in code per code")
    ap.add_argument("--deck-cards", type=int, default=30, help="camera views per card of each deck")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out-dir", default=str(WEIGHTS.parent))
    ap.add_argument("--no-refit", action="store_true", help="leave the confidence maps as they are")
    ap.add_argument(
        "--quick", action="store_true", help="a tiny network end to end (tests): no decks, no real photos"
    )
    args = ap.parse_args(argv)
    if torch_missing("vision index-net-train"):
        return 2
    cv2.setNumThreads(1)
    out_dir = Path(args.out_dir)
    if args.quick:
        x, r, s = synthetic_patches(2, 0, args.seed, [])
        export(train_net(x, r, s, np.ones(len(x)), 1, args.seed, width=4), out_dir / "index_net.onnx")
        return 0
    from vision.aisleriot_decks import READER_DECKS, render_decks

    decks = render_decks(names=list(READER_DECKS))
    synthetic = synthetic_patches(args.synthetic, args.deck_cards, args.seed, decks)
    train_folds(out_dir, synthetic, args.epochs, args.seed)
    if not args.no_refit:
        from vision.train_real import fit_confidence

        fit_confidence(out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
