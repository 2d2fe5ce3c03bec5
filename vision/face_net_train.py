"""Train the face network (`vision/face_net.py`); writes vision/face_net.onnx.

    python -m vision.face_net_train [--views 3] [--backs 3000] [--epochs 12] [--seed 1] [--quick]
    make train-face-net        (the `train` extra: torch, CPU; about 4 minutes on 2 cores)

Faces: every card of the Aisleriot training decks (`vision.aisleriot_decks`, role `train`; never the
held-out bellot and neoclassical, never the excluded themes) and cards drawn in code
(`vision.read_synth`). Backs: the training decks' own backs, and backs drawn here in the ways backs
are printed -- checkers, diamond lattices, stripes, plaids, dot grids, nested frames, a surface photo
(../shared/data/textures, CC0), a plain colour with an emblem -- pale on white as often as bold, with
or without a white border. Every card goes through the simulated camera of `vision.read_synth`
(small, blurred, noisy, lit unevenly, turned half round at random) and `vision.index_net_train.degrade`
(smaller still, an outline a few percent off, JPEG), and nearly half of them are partly covered by
another card, painted out as the detector paints it (up to 70 % of it, as under a hole-card pair).
No real photograph and no held-out deck is trained on: the benchmark measures on them. `--val-decks` keeps some training decks out and prints
how the network does on them. Deterministic for a seed up to torch's own arithmetic.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.face_net import BACK_SURE, FACE_SURE, SIZE, WEIGHTS, FaceNet, blob, card_input
from vision.small_net_train import conv_block, export_checked, fit, torch_missing

CARD_W, CARD_H = 400, 560  # px: backs are drawn at the size the simulated camera starts from
COVERED_SHARE = 0.45  # of the cards, partly covered by another (the under card of a hole-card pair)


# -- backs drawn in code ----------------------------------------------------------------------
def _colour(rng: np.random.Generator, pale: bool) -> np.ndarray:
    """A BGR ink: any hue; pale ones light and soft, as on white-ground backs."""
    hsv = np.uint8([[[rng.integers(0, 180), rng.integers(40, 256), rng.integers(40, 230)]]])
    if pale:
        hsv[0, 0, 1] = rng.integers(40, 160)
        hsv[0, 0, 2] = rng.integers(150, 250)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def _rotated(xx, yy, angle):
    c, s = math.cos(angle), math.sin(angle)
    return xx * c + yy * s, -xx * s + yy * c


def _pattern(rng: np.random.Generator, textures: list[np.ndarray], h: int, w: int) -> np.ndarray:
    """One back pattern, h x w BGR float32."""
    kinds = ["checker", "lattice", "stripes", "plaid", "dots", "frames", "emblem", "noise"]
    if textures:
        kinds.append("texture")
    kind = kinds[int(rng.integers(len(kinds)))]
    pale = rng.random() < 0.5
    ground = np.full(3, rng.uniform(225, 255), np.float32) if pale else _colour(rng, False)
    ink = _colour(rng, pale)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    p = float(rng.uniform(8, 60))  # the pattern's period, px at 400 px wide
    angle = float(rng.choice([0.0, math.pi / 4, rng.uniform(0, math.pi)]))
    u, v = _rotated(xx, yy, angle)
    if kind == "checker":
        m = ((np.floor(u / p) + np.floor(v / p)) % 2).astype(np.float32)
    elif kind == "lattice":
        t = rng.uniform(0.05, 0.3)
        a, b = _rotated(xx, yy, math.pi / 4 + rng.normal(0, 0.3))
        m = ((np.abs((a / p) % 1 - 0.5) < t / 2) | (np.abs((b / p) % 1 - 0.5) < t / 2)).astype(np.float32)
        if rng.random() < 0.5:  # harlequin: the lattice's diamonds filled on alternate cells
            m = np.maximum(m, ((np.floor(a / p) + np.floor(b / p)) % 2) * rng.uniform(0.3, 1))
    elif kind == "stripes":
        m = (np.sin(2 * math.pi * u / p) > rng.uniform(-0.6, 0.6)).astype(np.float32)
    elif kind == "plaid":
        m = np.zeros((h, w), np.float32)
        img = np.empty((h, w, 3), np.float32)
        img[:] = ground
        for _ in range(int(rng.integers(2, 5))):
            a, _b = _rotated(xx, yy, float(rng.choice([angle, angle + math.pi / 2])))
            band = (np.sin(2 * math.pi * a / rng.uniform(6, 50)) > rng.uniform(0.3, 0.9)).astype(np.float32)
            alpha = rng.uniform(0.3, 0.9)
            img = img * (1 - alpha * band[..., None]) + _colour(rng, pale) * alpha * band[..., None]
        return img
    elif kind == "dots":
        r = p * rng.uniform(0.15, 0.4)
        shift = (np.floor(v / p) % 2) * p / 2 * (rng.random() < 0.5)
        m = ((((u + shift) % p) - p / 2) ** 2 + ((v % p) - p / 2) ** 2 < r * r).astype(np.float32)
    elif kind == "frames":
        d = np.minimum(np.minimum(xx, w - 1 - xx), np.minimum(yy, h - 1 - yy))
        m = ((d / rng.uniform(8, 40)) % 1 < rng.uniform(0.2, 0.6)).astype(np.float32)
    elif kind == "emblem":
        m = np.zeros((h, w), np.float32)
        for _ in range(int(rng.integers(1, 4))):
            cx, cy = w / 2 + rng.normal(0, w / 10), h / 2 + rng.normal(0, h / 10)
            ax = (int(rng.uniform(w / 10, w / 2.5)), int(rng.uniform(h / 10, h / 2.5)))
            cv2.ellipse(m, (int(cx), int(cy)), ax, float(rng.uniform(0, 180)), 0, 360, 1.0,
                        -1 if rng.random() < 0.6 else int(rng.integers(4, 20)))  # fmt: skip
    elif kind == "noise":
        small = rng.random((int(rng.integers(3, 12)), int(rng.integers(3, 12)))).astype(np.float32)
        m = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
        m = np.clip((m - m.min()) / (np.ptp(m) + 1e-6), 0, 1)
    else:  # a surface photo, recoloured now and then
        tex = textures[int(rng.integers(len(textures)))]
        th, tw = tex.shape[:2]
        s = rng.uniform(0.3, 1.0)
        cw, ch = max(8, int(min(tw, th * w / h) * s)), max(8, int(min(th, tw * h / w) * s))
        x0, y0 = int(rng.integers(0, tw - cw + 1)), int(rng.integers(0, th - ch + 1))
        img = cv2.resize(tex[y0 : y0 + ch, x0 : x0 + cw], (w, h)).astype(np.float32)
        if rng.random() < 0.4:
            g = img.mean(axis=2, keepdims=True) / 255.0
            img = ground * (1 - g) + ink * g
        return img
    return ground * (1 - m[..., None]) + ink * m[..., None]


def drawn_back(rng: np.random.Generator, textures: list[np.ndarray]) -> np.ndarray:
    """A whole back, CARD_H x CARD_W BGR float32: a pattern, often inside a white border and a line."""
    card = np.full((CARD_H, CARD_W, 3), rng.uniform(225, 255), np.float32)
    b = int(rng.uniform(0.03, 0.1) * CARD_W) if rng.random() < 0.6 else 0
    card[b : CARD_H - b, b : CARD_W - b] = _pattern(rng, textures, CARD_H - 2 * b, CARD_W - 2 * b)
    if b and rng.random() < 0.4:
        g = int(rng.uniform(0.02, 0.05) * CARD_W)
        cv2.rectangle(card, (b + g, b + g), (CARD_W - b - g, CARD_H - b - g),
                      tuple(float(c) for c in _colour(rng, False)), int(rng.integers(3, 12)))  # fmt: skip
    if rng.random() < 0.3:
        card = cv2.GaussianBlur(card, (0, 0), rng.uniform(0.5, 2.0))
    return card


# -- the examples -----------------------------------------------------------------------------
def covering_mask(rng: np.random.Generator) -> np.ndarray:
    """The canonical card's own part in view (255) with another card lying over a side of it."""
    from vision.read import CANON_H, CANON_W

    own = np.full((CANON_H, CANON_W), 255, np.uint8)
    w, h = CANON_W * rng.uniform(0.9, 1.1), CANON_H * rng.uniform(0.9, 1.1)
    ang = rng.uniform(-0.6, 0.6)
    c, s = math.cos(ang), math.sin(ang)
    rect = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]]) @ np.array(
        [[c, s], [-s, c]]
    )
    side = rng.integers(4)
    reach = rng.uniform(0.15, 0.7)  # how far into the card the other one lies
    centre = {
        0: (CANON_W * (reach - 0.5) - w / 2 + CANON_W / 2, CANON_H / 2 + rng.normal(0, 20)),
        1: (CANON_W * (1.5 - reach) + w / 2 - CANON_W / 2, CANON_H / 2 + rng.normal(0, 20)),
        2: (CANON_W / 2 + rng.normal(0, 15), CANON_H * (reach - 0.5) - h / 2 + CANON_H / 2),
        3: (CANON_W / 2 + rng.normal(0, 15), CANON_H * (1.5 - reach) + h / 2 - CANON_H / 2),
    }[int(side)]
    cv2.fillConvexPoly(own, np.round(rect + np.array(centre)).astype(np.int32), 0)
    return own


QUARTER_SHARE = 0.2  # of the cards, warped a quarter turn off (a card the detector saw sideways)
TINT_SHARE = 0.3  # ... printed on tinted paper or lit by a coloured lamp (gold-foil decks, warm bulbs)
GLARE_SHARE = 0.2  # ... with a lamp's glare on them


def vary(canon: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """What real tables do to faces and backs alike, so that none of it tells one from the other."""
    from vision.read import turn_quarter

    if rng.random() < QUARTER_SHARE:
        canon = turn_quarter(canon)
    f = canon.astype(np.float32)
    if rng.random() < TINT_SHARE:
        tint = (
            cv2.cvtColor(np.uint8([[[rng.integers(0, 180), rng.integers(30, 140), 255]]]), cv2.COLOR_HSV2BGR)[
                0, 0
            ].astype(np.float32)
            / 255.0
        )
        if rng.random() < 0.5:  # gold foil: a yellow ground, shaded across the card
            tint = np.float32([rng.uniform(0.35, 0.6), rng.uniform(0.7, 0.85), rng.uniform(0.85, 1.0)])
        yy, xx = np.mgrid[0 : f.shape[0], 0 : f.shape[1]].astype(np.float32)
        shade = (
            1
            + rng.uniform(-0.25, 0.25) * (xx / f.shape[1] - 0.5)
            + rng.uniform(-0.25, 0.25) * (yy / f.shape[0] - 0.5)
        )
        f = f * tint * shade[..., None]
    if rng.random() < GLARE_SHARE:
        glare = np.zeros(f.shape[:2], np.float32)
        cx, cy = rng.uniform(0, f.shape[1]), rng.uniform(0, f.shape[0])
        ax = (int(rng.uniform(5, 40)), int(rng.uniform(5, 40)))
        cv2.ellipse(glare, (int(cx), int(cy)), ax, float(rng.uniform(0, 180)), 0, 360, 1.0, -1)
        glare = cv2.GaussianBlur(glare, (0, 0), rng.uniform(2, 8)) * rng.uniform(0.3, 0.9)
        f = f + (255 - f) * glare[..., None]
    return np.clip(f, 0, 255).astype(np.uint8)


def examples(faces: list[np.ndarray], backs: list[np.ndarray], drawn: int, views: int, back_views: int,
             synthetic: int, seed: int, textures: list[np.ndarray], log=print):  # fmt: skip
    """(inputs N x H x W x 3 uint8, labels 1 = back)."""
    from vision.index_net_train import degrade
    from vision.read_glyph import RANK_CLASSES, SUIT_CLASSES
    from vision.read_synth import camera_view, deck_card, synthetic_card

    rng = np.random.default_rng(seed)
    xs, ys = [], []
    t0 = time.time()

    def add(canon: np.ndarray, label: int) -> None:
        canon = degrade(vary(canon, rng), rng)
        own = covering_mask(rng) if rng.random() < COVERED_SHARE else None
        xs.append(card_input(canon, own))
        ys.append(label)

    for im, court in faces:
        for _ in range(views * (2 if court else 1)):  # pictures fill a court: the faces most like a back
            add(deck_card(im, rng), 0)
    codes = [r + s for r in RANK_CLASSES for s in SUIT_CLASSES]
    for _ in range(synthetic):
        add(synthetic_card(codes[int(rng.integers(len(codes)))], rng), 0)
    for im in backs:
        for _ in range(back_views):
            add(deck_card(im, rng), 1)
    for _ in range(drawn):
        add(camera_view(drawn_back(rng, textures), rng), 1)
    log(f"  {len(xs)} cards ({len(xs) - sum(ys)} faces, {sum(ys)} backs), {time.time() - t0:.0f} s")
    return np.array(xs), np.array(ys, np.float32)


def deck_images(names: list[str]) -> tuple[list[tuple[np.ndarray, bool]], list[np.ndarray]]:
    """Faces (BGRA as rendered, and whether a court) and backs of the named Aisleriot decks."""
    from vision.aisleriot_decks import render_decks

    faces, backs = [], []
    for folder in render_decks(names=names):
        for f in sorted(folder.glob("*.png")):
            im = cv2.imread(str(f), cv2.IMREAD_UNCHANGED)
            if f.stem == "back":
                backs.append(im)
            else:
                faces.append((im, f.stem[0] in "JQK"))
    return faces, backs


# -- the network ------------------------------------------------------------------------------
def build_model(width: int = 16):
    import torch.nn as nn

    cbr = conv_block
    w = width
    sw, sh = SIZE
    feat = 4 * w * (sh // 8) * (sw // 8)
    return nn.Sequential(
        cbr(3, w), nn.MaxPool2d(2),
        cbr(w, 2 * w), nn.MaxPool2d(2),
        cbr(2 * w, 3 * w), nn.MaxPool2d(2),
        cbr(3 * w, 4 * w), nn.Flatten(), nn.Dropout(0.3),
        nn.Linear(feat, 1),
    )  # fmt: skip


def train_net(x: np.ndarray, y: np.ndarray, epochs: int, seed: int, width: int = 16, log=print):
    """Binary cross-entropy, the two classes weighted equal; colours and brightness jittered."""
    import torch
    import torch.nn.functional as F

    torch.manual_seed(seed)
    model = build_model(width)
    pos = float(y.mean())
    weight = np.where(y > 0.5, 0.5 / max(pos, 1e-6), 0.5 / max(1 - pos, 1e-6)).astype(np.float32)

    def batch_loss(out, b):
        return F.binary_cross_entropy_with_logits(
            out.squeeze(1), torch.from_numpy(y[b]), weight=torch.from_numpy(weight[b])
        )

    return fit(model, x, batch_loss, epochs, seed, batch=64, log=log)


def export(model, path: Path) -> None:
    """ONNX for OpenCV's DNN module, checked against torch on random cards."""
    sw, sh = SIZE
    export_checked(model, (3, sh, sw), path, ("card", "back_logit"), lambda f, b: FaceNet(f).model.forward(b))


def report(path: Path, x: np.ndarray, y: np.ndarray, what: str, log=print) -> None:
    """How the exported network does on held-back examples, at the threshold the reader uses."""
    net = FaceNet(path)
    p = []
    for i in range(0, len(x), 256):
        out = net.model.forward(blob(list(x[i : i + 256]))).ravel()
        p.extend(1 / (1 + np.exp(-np.clip(out, -30, 30))))
    p = np.array(p)
    backs, faces = p[y > 0.5], p[y < 0.5]
    log(
        f"  {what}: backs called back {np.mean(backs >= BACK_SURE):.3f} of {len(backs)}, "
        f"faces called back {np.mean(faces >= BACK_SURE):.4f} of {len(faces)} (P(back) >= {BACK_SURE}); "
        f"backs called face {np.mean(backs <= FACE_SURE):.4f}, faces called face {np.mean(faces <= FACE_SURE):.3f} "
        f"(P(back) <= {FACE_SURE})"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--views", type=int, default=3, help="camera views of each deck face")
    ap.add_argument("--back-views", type=int, default=60, help="camera views of each deck's back")
    ap.add_argument("--backs", type=int, default=3000, help="backs drawn in code")
    ap.add_argument("--synthetic", type=int, default=1000, help="faces drawn in code")
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--val-decks", nargs="*", default=[], help="training decks kept out and reported on")
    ap.add_argument("--out", default=str(WEIGHTS))
    ap.add_argument("--quick", action="store_true", help="a tiny network end to end (tests): no decks")
    args = ap.parse_args(argv)
    if torch_missing("vision face-net-train"):
        return 2
    cv2.setNumThreads(1)
    out = Path(args.out)
    if args.quick:
        x, y = examples([], [], 40, 0, 0, 40, args.seed, [])
        export(train_net(x, y, 1, args.seed, width=4), out)
        report(out, x, y, "training cards")
        return 0
    from vision.aisleriot_decks import decks_with_role
    from vision.train import load_textures

    names = [n for n in decks_with_role("train") if n not in args.val_decks]
    faces, backs = deck_images(names)
    textures = load_textures()
    x, y = examples(
        faces, backs, args.backs, args.views, args.back_views, args.synthetic, args.seed, textures
    )
    export(train_net(x, y, args.epochs, args.seed), out)
    print(f"wrote {out}")
    if args.val_decks:
        vf, vb = deck_images(args.val_decks)
        vx, vy = examples(vf, vb, 0, 2, 100, 0, args.seed + 1, textures)
        report(out, vx, vy, f"kept-out decks {', '.join(args.val_decks)}")
    vx, vy = examples([], [], 600, 0, 0, 600, args.seed + 2, textures)
    report(out, vx, vy, "fresh drawn backs and drawn faces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
