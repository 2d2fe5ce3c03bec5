"""Train the card verifier of `vision.detect_quads` on synthetic composites; writes quad_verifier.npz.

    python -m vision.train [--composites 1000] [--seed 2] [--out vision/quad_verifier.npz] [--quick]
    make train-vision          (the same, on one core, niced)

Without --real no real photograph is used. With --real (`vision.train_real`) the proposals on the
real photos join in, and each real-photo source also gets a verifier trained without it
(vision/loso/), which is what its benchmark figures are measured with; the shipped weights are
trained on all three sources. A composite is a background (a texture of ../shared/data/textures -- wood,
stone, tiles, brick, plaster, plastic -- or felt of any colour, any brightness, pale tables too)
with 0-7 cards pasted on it: faces and backs of the two GPL decks of ../shared/data/decks, cards
drawn in code (`vision.read_synth`) and backs drawn here, 25-260 px wide, any rotation, perspective
and stretch (photos squeezed to a square), overlapping in fans and piles, partly covered by hands,
with chips, paper of the wrong shape and printed lines as distractors; then uneven light, shadows,
glare, blur, noise and JPEG. The proposals `detect_quads.propose` makes on it are the training set
(a proposal is a card when it matches a card that lies in full view, IoU >= 0.75, and not one when
it matches none, IoU < 0.4), so the verifier learns exactly the mistakes the proposer makes. The
held-out `drawn` deck of the benchmark is never used. Needs numpy and OpenCV only (no torch).
Because the GPL decks' pictures go into it, the weights file is under their licence (see
../shared/data/decks).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.detect_quads import WEIGHTS, features_batch, propose, work_picture
from vision.mlp import adam_step
from vision.polygons import iou as polygon_iou
from vision.read_synth import rounded_card_mask

ROOT = Path(__file__).resolve().parents[1]
SKIN = ((90, 120, 190), (60, 90, 150), (120, 160, 220), (40, 60, 100))


def textures_dir() -> Path | None:
    for c in (ROOT.parent / "shared" / "data" / "textures", ROOT / "data" / "textures"):
        if (c / "index.csv").is_file():
            return c
    return None


def load_textures(limit: int | None = None) -> list[np.ndarray]:
    d = textures_dir()
    out: list[np.ndarray] = []
    if d is None:
        return out
    with open(d / "index.csv", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            img = cv2.imread(str(d / row["file"]), cv2.IMREAD_COLOR)
            if img is not None:
                out.append(img)
            if limit and len(out) >= limit:
                break
    return out


def load_card_images(decks: list[str]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Faces and backs (BGR uint8, any size) of the named decks that are there."""
    from vision.decks import read_deck

    faces, backs = [], []
    for name in decks:
        if name == "drawn":
            raise ValueError("the 'drawn' deck is the benchmark's held-out deck: never train on it")
        try:
            deck = read_deck(name)
        except (FileNotFoundError, OSError):
            continue
        for code, img in deck.items():
            bgr = _flatten(img)
            (backs if code == "back" else faces).append(bgr)
    return faces, backs


def _flatten(img: np.ndarray) -> np.ndarray:
    if img.ndim == 3 and img.shape[2] == 4:
        a = img[:, :, 3:4].astype(np.float32) / 255.0
        img = (img[:, :, :3] * a + 255.0 * (1 - a)).astype(np.uint8)
    return img


def drawn_back(rng: np.random.Generator) -> np.ndarray:
    """A card back: a colour with a lattice, dots or rings, a white border or none."""
    w, h = 250, 350
    base = rng.uniform(20, 200, 3)
    img = np.full((h, w, 3), base, np.float32)
    other = np.clip(base + rng.uniform(-90, 90, 3), 0, 255)
    step = int(rng.integers(8, 30))
    kind = rng.integers(0, 3)
    for k in range(-h, w + h, step):
        if kind == 0:
            cv2.line(img, (k, 0), (k + h, h), other.tolist(), int(rng.integers(1, 4)))
            cv2.line(img, (k, 0), (k - h, h), other.tolist(), int(rng.integers(1, 4)))
        elif kind == 1 and 0 <= k < w:
            for y in range(0, h, step):
                cv2.circle(img, (k, y), step // 3, other.tolist(), -1)
        elif kind == 2 and k % (2 * step) == 0:
            cv2.circle(img, (w // 2, h // 2), abs(k), other.tolist(), 2)
    if rng.random() < 0.6:
        b = int(rng.integers(8, 25))
        white = np.full((h, w, 3), 245, np.float32)
        white[b:-b, b:-b] = img[b:-b, b:-b]
        img = white
    return np.clip(img, 0, 255).astype(np.uint8)


def synthetic_face(rng: np.random.Generator) -> np.ndarray:
    from vision.read_synth import RANKS, SUITS, make_card

    code = RANKS[rng.integers(13)] + SUITS[rng.integers(4)]
    return np.clip(make_card(code, rng), 0, 255).astype(np.uint8)


def background(rng: np.random.Generator, textures: list[np.ndarray], w: int, h: int) -> np.ndarray:
    r = rng.random()
    if textures and r < 0.6:
        t = textures[rng.integers(len(textures))]
        f = rng.uniform(0.5, 2.5)
        t = cv2.resize(t, None, fx=f, fy=f, interpolation=cv2.INTER_LINEAR)
        reps = (math.ceil(h / t.shape[0]) + 1, math.ceil(w / t.shape[1]) + 1, 1)
        t = np.tile(t, reps)
        y0, x0 = rng.integers(0, t.shape[0] - h + 1), rng.integers(0, t.shape[1] - w + 1)
        bg = t[y0 : y0 + h, x0 : x0 + w].astype(np.float32)
        bg = bg * rng.uniform(0.5, 1.5) * rng.uniform(0.85, 1.15, 3) + rng.uniform(-30, 40)
    else:  # felt or a plain table of any colour, pale ones included
        col = rng.uniform(0, 255, 3) if r < 0.85 else np.full(3, rng.uniform(170, 250))
        bg = np.empty((h, w, 3), np.float32)
        bg[:] = col
        bg += cv2.GaussianBlur(rng.normal(0, rng.uniform(2, 14), (h, w, 1)).astype(np.float32), (0, 0), 1.0)[
            :, :, None
        ]
    if rng.random() < 0.3:  # printed table lines, a betting line, an arc
        col = rng.uniform(0, 255, 3).tolist()
        for _ in range(rng.integers(1, 4)):
            if rng.random() < 0.5:
                p = rng.integers(0, [w, h], size=(2, 2))
                cv2.line(
                    bg, tuple(int(v) for v in p[0]), tuple(int(v) for v in p[1]), col, int(rng.integers(1, 6))
                )
            else:
                c = (int(rng.integers(0, w)), int(rng.integers(0, h)))
                cv2.ellipse(bg, c, (int(rng.integers(50, w)), int(rng.integers(30, h))), 0, 0, 360, col, 3)
    return bg


def _card_alpha(w: int, h: int, rng: np.random.Generator) -> np.ndarray:
    return rounded_card_mask(w, h, int(rng.uniform(0.03, 0.09) * w))


def _paste(canvas, cover, img, alpha, quad, layer):
    h, w = img.shape[:2]
    src = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    m = cv2.getPerspectiveTransform(src, quad.astype(np.float32))
    size = (canvas.shape[1], canvas.shape[0])
    warped = cv2.warpPerspective(img.astype(np.float32), m, size, flags=cv2.INTER_AREA)
    a = cv2.warpPerspective(alpha, m, size, flags=cv2.INTER_LINEAR).astype(np.float32)[:, :, None] / 255
    canvas *= 1 - a
    canvas += warped * a
    cover[a[:, :, 0] > 0.5] = layer


def composite(rng: np.random.Generator, faces, backs, textures, w: int | None = None, h: int | None = None):
    """A synthetic picture and its cards: [(quad 4x2, fraction in view)]."""
    if w is None:
        w = int(rng.integers(400, 961))
        h = int(w * rng.uniform(0.55, 1.35))
    canvas = background(rng, textures, w, h)
    cover = np.zeros((h, w), np.int32)  # which card (1-based) is on top at each pixel
    quads: list[np.ndarray] = []
    stretch = rng.uniform(0.75, 1.33) if rng.random() < 0.3 else 1.0  # photos squeezed to a square
    n = int(rng.integers(0, 8))
    cw = float(np.exp(rng.uniform(np.log(25), np.log(min(260, 0.5 * min(w, h))))))
    prev = None
    for k in range(n):
        kind = rng.random()
        if kind < 0.45 and faces:
            img = faces[rng.integers(len(faces))]
        elif kind < 0.7:
            img = synthetic_face(rng)
        elif kind < 0.85 and backs:
            img = backs[rng.integers(len(backs))]
        else:
            img = drawn_back(rng)
        cwk = cw * rng.uniform(0.85, 1.15)
        chk = cwk * rng.uniform(1.36, 1.44)
        if prev is not None and rng.random() < 0.4:  # a fan, a hole-card pair, a pile
            c = prev + rng.normal(0, 0.45 * cwk, 2)
        else:
            c = rng.uniform([0.1 * w, 0.1 * h], [0.9 * w, 0.9 * h])
        prev = c
        t = rng.uniform(0, 2 * math.pi)
        rect = np.array([[-cwk / 2, -chk / 2], [cwk / 2, -chk / 2], [cwk / 2, chk / 2], [-cwk / 2, chk / 2]])
        rot = np.array([[math.cos(t), math.sin(t)], [-math.sin(t), math.cos(t)]])
        quad = rect @ rot + rng.normal(0, 0.04 * cwk, (4, 2))  # perspective
        quad[:, 1] *= stretch
        quad += c
        _paste(canvas, cover, img, _card_alpha(img.shape[1], img.shape[0], rng), quad, k + 1)
        quads.append(quad)
    add_distractors(rng, canvas, cover, quads, cw)
    img = camera(rng, canvas)
    cards = []
    for k, q in enumerate(quads):
        m = np.zeros((h, w), np.uint8)
        cv2.fillConvexPoly(m, np.round(q).astype(np.int32), 1)
        area = max(1, int(m.sum()))
        seen = int(((cover == k + 1) & (m > 0)).sum())
        inside = float(m.sum()) / max(1.0, cv2.contourArea(q.astype(np.float32)))
        cards.append((q, seen / area * min(1.0, inside)))
    return img, cards


def add_distractors(rng: np.random.Generator, canvas, cover, quads, cw: float) -> None:
    """Chips (rows of touching ones, white too), paper of another shape and a hand over a card, painted
    onto `canvas` and marked -1 in `cover` (they hide what lies under them)."""
    h, w = cover.shape
    for _ in range(int(rng.integers(0, 5))):
        r = rng.random()
        centre = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        col = rng.uniform(0, 255, 3).tolist()
        if r < 0.4:  # a chip, or a row of touching chips (white ones too): the gaps are not cards
            rad = max(4, int(cw * rng.uniform(0.2, 0.45)))
            step = np.array([math.cos(rng.uniform(0, math.pi)), math.sin(rng.uniform(0, math.pi))]) * 2 * rad
            if rng.random() < 0.4:
                col = [float(rng.uniform(215, 245))] * 3
            for j in range(int(rng.integers(1, 5))):
                cj = (int(centre[0] + j * step[0]), int(centre[1] + j * step[1]))
                cv2.circle(canvas, cj, rad, col, -1, cv2.LINE_AA)
                for a in range(0, 360, 45):
                    cv2.ellipse(
                        canvas, cj, (rad, rad), a, 0, 15, rng.uniform(0, 255, 3).tolist(), max(1, rad // 4)
                    )
                cv2.circle(cover, cj, rad, -1, -1)
        elif r < 0.7:
            sw, sh = cw * rng.uniform(0.6, 2.0), cw * rng.uniform(0.3, 2.5)
            if 0.5 < min(sw, sh) / max(sw, sh) < 0.93:
                sh = sw
            box = cv2.boxPoints((centre, (sw, sh), float(rng.uniform(0, 180))))
            pale = np.full(3, rng.uniform(150, 255)).tolist() if rng.random() < 0.6 else col
            cv2.fillConvexPoly(canvas, np.round(box).astype(np.int32), pale, cv2.LINE_AA)
            cv2.fillConvexPoly(cover, np.round(box).astype(np.int32), -1)
        elif quads:
            q = quads[rng.integers(len(quads))]
            p = q[rng.integers(4)]
            axes = (int(cw * rng.uniform(0.3, 0.8)), int(cw * rng.uniform(0.6, 1.5)))
            cv2.ellipse(
                canvas,
                (int(p[0]), int(p[1])),
                axes,
                float(rng.uniform(0, 180)),
                0,
                360,
                SKIN[rng.integers(len(SKIN))],
                -1,
                cv2.LINE_AA,
            )
            cv2.ellipse(cover, (int(p[0]), int(p[1])), axes, 0, 0, 360, -1, -1)


def camera(rng: np.random.Generator, canvas) -> np.ndarray:
    """Uneven light, a shadow, glare, blur, noise and JPEG: the float canvas as a camera gives it."""
    h, w = canvas.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    la = rng.uniform(0, 2 * math.pi)
    grad = 1 + rng.uniform(0, 0.5) * ((xx / w - 0.5) * math.cos(la) + (yy / h - 0.5) * math.sin(la))
    canvas *= (grad * rng.uniform(0.6, 1.2))[:, :, None] * rng.uniform(0.85, 1.15, 3)
    if rng.random() < 0.3:
        pts = rng.integers(0, [w, h], size=(int(rng.integers(3, 6)), 2)).astype(np.int32)
        sh = np.ones((h, w), np.float32)
        cv2.fillPoly(sh, [cv2.convexHull(pts)], float(rng.uniform(0.4, 0.8)))
        canvas *= cv2.GaussianBlur(sh, (0, 0), rng.uniform(3, 25))[:, :, None]
    if rng.random() < 0.25:
        gx, gy, gs = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(20, 0.4 * w)
        canvas += (rng.uniform(60, 160) * np.exp(-((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * gs * gs)))[
            :, :, None
        ]
    canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.3, 1.8))
    canvas += rng.normal(0, rng.uniform(1, 8), canvas.shape).astype(np.float32)
    img = np.clip(canvas, 0, 255).astype(np.uint8)
    _ok, enc = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 96))])
    img = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return img


def samples(rng, faces, backs, textures):
    """(features, label) of the proposals on one composite, plus jittered true outlines."""
    img, cards = composite(rng, faces, backs, textures)
    work, scale = work_picture(img)
    props, _ = propose(work)
    qs, ys = [], []
    for q, _fill, _cue in props:
        full = q / scale
        best, whole = 0.0, False
        for tq, seen in cards:
            v = polygon_iou(full, tq)
            if v > best:
                best, whole = v, seen > 0.9
        if best >= 0.75 and whole:
            qs.append(q)
            ys.append(1)
        elif best < 0.4:
            qs.append(q)
            ys.append(0)
    for tq, seen in cards:
        if seen > 0.9 and rng.random() < 0.5:
            noise = rng.normal(0, 0.02 * np.linalg.norm(tq[1] - tq[0]) * scale, (4, 2))
            qs.append((tq * scale + noise).astype(np.float32))
            ys.append(1)
    xs = list(features_batch(work, qs)) if qs else []
    return xs, ys


def build_set(n: int, seed: int, decks: list[str], log=print):
    rng = np.random.default_rng(seed)
    faces, backs = load_card_images(decks)
    textures = load_textures()
    log(f"  {len(faces)} deck faces, {len(backs)} deck backs, {len(textures)} textures; {n} composites")
    xs, ys = [], []
    t0 = time.time()
    for k in range(n):
        x, y = samples(rng, faces, backs, textures)
        xs += x
        ys += y
        if (k + 1) % max(1, n // 10) == 0:
            log(f"  {k + 1}/{n} composites, {len(ys)} samples ({sum(ys)} cards), {time.time() - t0:.0f} s")
    return np.stack(xs).astype(np.float32), np.array(ys, np.float32)


def fit_mlp(x, y, hidden: int, epochs: int, seed: int, log=print, sample_weight=None) -> dict:
    """One hidden layer (ReLU), logistic output, Adam on the cross-entropy with balanced classes
    (`sample_weight`: how much each sample counts besides, e.g. real photos more than composites)."""
    rng = np.random.default_rng(seed)
    mean = x.mean(axis=0)
    std = x.std(axis=0) + 1e-3
    z = (x - mean) / std
    d = z.shape[1]
    params = {
        "w1": (rng.normal(0, 1, (d, hidden)) * math.sqrt(2 / d)).astype(np.float32),
        "b1": np.zeros(hidden, np.float32),
        "w2": (rng.normal(0, 1, (hidden, 1)) * math.sqrt(1 / hidden)).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    pos = max(1.0, float(y.sum()))
    neg = max(1.0, float(len(y) - y.sum()))
    weight = np.where(y > 0.5, 0.5 * len(y) / pos, 0.5 * len(y) / neg).astype(np.float32)
    if sample_weight is not None:
        weight = weight * np.asarray(sample_weight, np.float32) / float(np.mean(sample_weight))
    lr, b1, b2, eps, l2 = 2e-3, 0.9, 0.999, 1e-8, 1e-4
    step = 0
    batch = 256
    for ep in range(epochs):
        order = rng.permutation(len(y))
        for s in range(0, len(y), batch):
            idx = order[s : s + batch]
            xb, yb, wb = z[idx], y[idx], weight[idx]
            h_pre = xb @ params["w1"] + params["b1"]
            h = np.maximum(h_pre, 0)
            logit = (h @ params["w2"] + params["b2"]).ravel()
            p = 1 / (1 + np.exp(-np.clip(logit, -30, 30)))
            g = ((p - yb) * wb / len(idx))[:, None]
            grads = {"w2": h.T @ g + l2 * params["w2"], "b2": g.sum(axis=0)}
            gh = (g @ params["w2"].T) * (h_pre > 0)
            grads["w1"] = xb.T @ gh + l2 * params["w1"]
            grads["b1"] = gh.sum(axis=0)
            step += 1
            adam_step(params, grads, m, v2, step, lr, b1, b2, eps)
        lr *= 0.8
        log(f"  epoch {ep + 1}/{epochs}")
    params.update(mean=mean.astype(np.float32), std=std.astype(np.float32))
    return params


def predict(params: dict, x: np.ndarray) -> np.ndarray:
    z = (x - params["mean"]) / params["std"]
    h = np.maximum(z @ params["w1"] + params["b1"], 0)
    return 1 / (1 + np.exp(-np.clip((h @ params["w2"] + params["b2"]).ravel(), -30, 30)))


def train(
    out: Path, composites: int, seed: int, decks: list[str], hidden: int = 32, epochs: int = 8, log=print
) -> dict:
    """Build the synthetic set, fit, report held-out synthetic accuracy, save; returns the figures."""
    cv2.setNumThreads(1)
    t0 = time.time()
    x, y = build_set(composites, seed, decks, log)
    n_val = max(1, len(y) // 10)
    params = fit_mlp(x[n_val:], y[n_val:], hidden, epochs, seed, log)
    p = predict(params, x[:n_val])
    yv = y[:n_val] > 0.5
    acc = float(((p >= 0.5) == yv).mean())
    recall = float((p[yv] >= 0.5).mean()) if yv.any() else float("nan")
    # how often a card outranks a non-card (area under the ROC curve): independent of the threshold
    pos, neg = p[yv], p[~yv]
    auc = float((pos[:, None] > neg[None, :]).mean()) if len(pos) and len(neg) else float("nan")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(out, **params, seed=np.array(seed), composites=np.array(composites))
    figures = {
        "samples": len(y),
        "cards": int(y.sum()),
        "val_accuracy": acc,
        "val_card_recall": recall,
        "val_auc": auc,
        "seconds": time.time() - t0,
    }
    log(
        f"wrote {out}: {len(y)} samples ({int(y.sum())} cards); held-out synthetic accuracy {acc:.3f}, "
        f"card recall {recall:.3f}, AUC {auc:.3f}; {figures['seconds']:.0f} s"
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--composites", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--decks", nargs="*", default=["tango", "anglo_poker"], help="never 'drawn' (held out)")
    ap.add_argument("--out", default=str(WEIGHTS))
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--quick", action="store_true", help="a tiny model end to end (tests): 80 composites")
    ap.add_argument(
        "--real",
        action="store_true",
        help="also learn from the real photos, leave-one-source-out (vision/train_real.py); "
        "writes the verifier and read_confidence.json to --out-dir, plus each fold's",
    )
    ap.add_argument("--out-dir", default=str(WEIGHTS.parent), help="with --real: where the models go")
    args = ap.parse_args(argv)
    if args.quick:
        args.composites, args.hidden, args.epochs = 80, 16, 30
    try:
        if args.real:
            from vision.train_real import train_all

            cv2.setNumThreads(1)
            synth = build_set(args.composites, args.seed, args.decks)
            train_all(Path(args.out_dir), synth, args.hidden, args.epochs, args.seed)
            return 0
        train(Path(args.out), args.composites, args.seed, args.decks, args.hidden, args.epochs)
    except ValueError as exc:
        print(f"vision train: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
