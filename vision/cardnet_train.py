"""Train the card detector network (`vision/cardnet.py`) on synthetic scenes; writes vision/cardnet.onnx.

    python -m vision.cardnet_train [--scenes 9000] [--steps 12000] [--seed 7] [--quick]
    python -m vision.cardnet_train --real      (then: the real photos too, leave-one-source-out)
    make train-cardnet          (the `train` extra: torch, CPU; about an hour on 2 cores, both steps)

Steps: (1) the decks: Aisleriot's themes cut into cards (`vision.aisleriot_decks`, the `train` decks
only; the held-out ones and those sharing artwork with KDE's decks are never used), (2) scenes
(`vision.cardnet_scenes`) rendered in two processes and cached in build/cardnet/ (each shrunk so
its cards are 7-140 px on their short side, the sizes the network looks for), (3) a small
encoder-decoder (depthwise-separable convolutions, about 120 k weights) trained on random 256 x 256
crops, turned and flipped, colours jittered, (4) export to ONNX (opset 17) for OpenCV's DNN module,
checked against torch on a held-out scene. No real photograph is used in these steps. `--real` then
goes on from that network (`finetune`), half of each batch from the real photos' labelled cards
(`vision.cardnet_real`): `cardnet.onnx` learns from both sources with boxes, and
`loso/cardnet_without_<source>.onnx` leaves one out, so that `bench/bench_vision.py --loso` measures
each source on a network that never saw it.

Losses: CenterNet's focal loss on the centre heat (cards less than a quarter in view, or cut by the
crop, are neither taught as cards nor as background), L1 on the centre offset, log lengths and
doubled angles near each centre, and the cover mask's cross-entropy.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import queue
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import cv2
import numpy as np

from vision.cardnet import (
    CHANNELS,
    HEAT,
    L_COS,
    L_LOG,
    L_SIN,
    MASK,
    OFF_X,
    OFF_Y,
    S_COS,
    S_LOG,
    S_SIN,
    SIZE_RANGE,
    STRIDE,
    WEIGHTS,
    CardNet,
    axes,
    card_short_side,
    decode,
    merge,
    pad32,
)
from vision.polygons import iou as quad_iou

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "build" / "cardnet"
CROP = 256
POS_SEEN = 0.3  # a card this much in view is one to find ...
IGNORE_SEEN = 0.05  # ... less than that is not there; between, neither taught as card nor as background


# -- data ----------------------------------------------------------------------------------------
def _make_scenes(args: tuple[int, int, int]) -> list[dict]:
    """Scenes seed .. seed+n-1 (one process), each shrunk to its training size."""
    seed, n, quick = args
    from vision.aisleriot_decks import deck_folders
    from vision.cardnet_scenes import CardPool, scene
    from vision.train import load_textures

    cv2.setNumThreads(1)
    folders = [ROOT / "data" / "decks" / "tango"] if quick else deck_folders("train")
    pool = CardPool.load(folders)
    textures = load_textures(limit=8 if quick else None)
    out = []
    for k in range(n):
        rng = np.random.default_rng([seed, k])
        s = scene(rng, pool, textures)
        out.append(_shrink(s, rng))
    return out


def _shrink(s, rng: np.random.Generator) -> dict:
    """A scene scaled so that its cards' short side is log-uniform over SIZE_RANGE, stored compactly."""
    shorts = [card_short_side(q) for q, v in zip(s.quads, s.seen, strict=True) if v >= POS_SEEN]
    f = 1.0
    if shorts:
        want = math.exp(rng.uniform(math.log(SIZE_RANGE[0]), math.log(SIZE_RANGE[1] * 0.9)))
        f = min(1.6, want / float(np.median(shorts)))
    else:
        f = rng.uniform(0.3, 1.0)
    h, w = s.image.shape[:2]
    size = (max(32, round(w * f)), max(32, round(h * f)))
    fx, fy = size[0] / w, size[1] / h
    img = cv2.resize(s.image, size, interpolation=cv2.INTER_AREA if f < 1 else cv2.INTER_LINEAR)
    cover = cv2.resize(s.cover.astype(np.int16), size, interpolation=cv2.INTER_NEAREST)
    quads = np.array([q * [fx, fy] for q in s.quads], np.float32).reshape(-1, 4, 2)
    ok, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 94])
    ok2, png = cv2.imencode(".png", np.clip(cover, -1, 254).astype(np.int16).astype(np.uint8))
    assert ok and ok2
    return {
        "jpg": jpg.tobytes(),
        "cover": png.tobytes(),
        "quads": quads,
        "seen": np.array(s.seen, np.float32),
    }


def build_scenes(n: int, seed: int, quick: bool = False, workers: int = 2, log=print) -> list[dict]:
    """n scenes, cached in build/cardnet/ (the same n and seed are not rendered twice; --quick's are
    not kept)."""
    path = CACHE / f"scenes-{seed}-{n}.npz"
    if not quick and path.is_file():
        with np.load(path, allow_pickle=True) as z:
            return list(z["scenes"])
    t0 = time.time()
    chunk = max(1, min(250, n // (workers * 4) or 1))
    jobs = [(seed * 1_000_003 + s, min(chunk, n - s), int(quick)) for s in range(0, n, chunk)]
    out: list[dict] = []
    if workers > 1:
        with ProcessPoolExecutor(workers) as ex:
            for part in ex.map(_make_scenes, jobs):
                out += part
                log(f"  {len(out)}/{n} scenes, {time.time() - t0:.0f} s")
    else:
        for job in jobs:
            out += _make_scenes(job)
    if not quick:
        CACHE.mkdir(parents=True, exist_ok=True)
        np.savez(path, scenes=np.array(out, dtype=object))
    return out


def _decode_scene(d: dict) -> tuple[np.ndarray, np.ndarray]:
    img = cv2.imdecode(np.frombuffer(d["jpg"], np.uint8), cv2.IMREAD_COLOR)
    cover = cv2.imdecode(np.frombuffer(d["cover"], np.uint8), cv2.IMREAD_UNCHANGED).astype(np.int16)
    cover[cover == 255] = -1
    return img, cover


def _known(d: dict, shape) -> np.ndarray | None:
    """Where a real photo's labels can be trusted to say there is no card (None: everywhere)."""
    if d.get("known") is None:
        return None
    return cv2.imdecode(np.frombuffer(d["known"], np.uint8), cv2.IMREAD_GRAYSCALE)


def sample(d: dict, rng: np.random.Generator, crop: int = CROP):
    """One training crop of a scene: (image 3 x crop x crop float32, targets CHANNELS x g x g,
    weights 4 x g x g: heat, axes, offset, mask)."""
    img, cover = _decode_scene(d)
    quads, seen = d["quads"], d["seen"]
    h, w = img.shape[:2]
    z = rng.uniform(0.85, 1.18)  # a little more scale jitter
    win = crop / z
    pos = [k for k in range(len(quads)) if seen[k] >= POS_SEEN]
    if pos and rng.random() < 0.75:
        c = quads[pos[int(rng.integers(len(pos)))]].mean(axis=0) + rng.uniform(-0.4, 0.4, 2) * win
    else:
        c = rng.uniform([0, 0], [w, h])
    # the window stays inside the picture where the picture is bigger than it (the edges repeated
    # as padding are nothing a camera shows)
    x0 = float(np.clip(c[0] - win / 2, min(0.0, w - win), max(0.0, w - win)))
    y0 = float(np.clip(c[1] - win / 2, min(0.0, h - win), max(0.0, h - win)))
    if w < win:
        x0 = (w - win) * rng.uniform(0, 1)
    if h < win:
        y0 = (h - win) * rng.uniform(0, 1)
    a = np.float32([[z, 0, -x0 * z], [0, z, -y0 * z]])
    # a quarter turn, a flip: cards look the same any way round
    turn = int(rng.integers(4))
    flip = bool(rng.random() < 0.5)
    m3 = np.vstack([a, [0, 0, 1]])
    for _ in range(turn):
        m3 = np.float32([[0, 1, 0], [-1, 0, crop], [0, 0, 1]]) @ m3
    if flip:
        m3 = np.float32([[-1, 0, crop], [0, 1, 0], [0, 0, 1]]) @ m3
    m = m3[:2]
    x = cv2.warpAffine(img, m, (crop, crop), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    cv = cv2.warpAffine(
        cover, m, (crop, crop), flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT, borderValue=0
    )
    known = _known(d, img.shape)
    if known is not None:
        known = cv2.warpAffine(known, m, (crop, crop), flags=cv2.INTER_NEAREST, borderValue=0)
    x = _colour_jitter(x, rng)
    q = [(np.c_[qq, np.ones(4)] @ m3[:2].T) for qq in quads]
    t, wts = targets(q, seen, cv, crop, d.get("regress"), known, bool(d.get("mask_known", True)))
    x = (x.astype(np.float32) - 127.5) / 255.0
    return x.transpose(2, 0, 1), t, wts


def _colour_jitter(x: np.ndarray, rng) -> np.ndarray:
    if rng.random() < 0.1:
        g = cv2.cvtColor(x, cv2.COLOR_BGR2GRAY)
        return cv2.cvtColor(g, cv2.COLOR_GRAY2BGR)
    f = x.astype(np.float32) * rng.uniform(0.7, 1.3, 3) + rng.uniform(-25, 25)
    if rng.random() < 0.3:
        f = 128 + (f - 128) * rng.uniform(0.6, 1.3)
    return np.clip(f, 0, 255).astype(np.uint8)


def targets(quads, seen, cover: np.ndarray, crop: int, regress=None, known=None, mask_known: bool = True):
    """The maps a crop teaches (see the module's docstring). Real photos (`vision.cardnet_real`) add
    `regress` (per card: is its outline known, or only its box), `known` (where no label means no
    card: 255) and `mask_known` (whether the labels give each card's area)."""
    g = crop // STRIDE
    t = np.zeros((CHANNELS, g, g), np.float32)
    wts = np.zeros((4, g, g), np.float32)  # heat, axes, offset, mask
    wts[0] = 1.0
    best = np.zeros((g, g), np.float32)  # the heat of the card whose regression a cell teaches
    counts = np.bincount(np.clip(cover.ravel(), 0, None), minlength=len(quads) + 1)
    yy, xx = np.mgrid[0:g, 0:g].astype(np.float32) + 0.5
    for k, q in enumerate(quads):
        area = abs(cv2.contourArea(q.astype(np.float32)))
        if area < 4:
            continue
        in_view = counts[k + 1] / area
        c, lv, sv = axes(q)
        cg = c / STRIDE
        short = 2 * np.linalg.norm(sv)
        sigma = max(0.7, 0.15 * short / STRIDE)
        inside = 0 <= c[0] < crop and 0 <= c[1] < crop
        # centred on the cell the centre falls in, which is taught as 1 (CenterNet): the offset says where in it
        cell = np.floor(cg) + 0.5
        d2 = (xx - cell[0]) ** 2 + (yy - cell[1]) ** 2
        gauss = np.exp(-d2 / (2 * sigma * sigma))
        if seen[k] >= POS_SEEN and in_view >= 0.25 and inside:
            t[HEAT] = np.maximum(t[HEAT], gauss)
            near = (gauss >= 0.3) & (gauss > best)
            if near.any():
                best[near] = gauss[near]
                if regress is None or regress[k]:
                    for base, v in ((L_LOG, lv), (S_LOG, sv)):
                        t[base][near] = math.log(max(np.linalg.norm(v), 0.5) / STRIDE)
                        ang = 2 * math.atan2(v[1], v[0])
                        t[base + 1][near] = math.cos(ang)
                        t[base + 2][near] = math.sin(ang)
                    # every card counts alike, however many cells its centre covers
                    wts[1][near] = gauss[near] / float(gauss[near].sum())
                else:
                    wts[1][near] = 0.0
                # the offset is read at the peak only: taught on the cell and its 8 neighbours
                close = near & (np.abs(xx - cell[0]) <= 1) & (np.abs(yy - cell[1]) <= 1)
                t[OFF_X][close] = cg[0] - xx[close]
                t[OFF_Y][close] = cg[1] - yy[close]
                wts[2][close] = 1.0 / max(1, int(close.sum()))
        elif in_view >= IGNORE_SEEN or (seen[k] >= IGNORE_SEEN and inside):
            wts[0][gauss >= 0.1] = 0.0  # neither card nor background
    t[HEAT] = np.maximum(t[HEAT], 0)
    onto = cv2.resize((cover > 0).astype(np.float32), (g, g), interpolation=cv2.INTER_AREA)
    t[MASK] = onto
    wts[3] = 1.0 if mask_known else 0.0
    if known is not None:
        trusted = cv2.resize((known > 0).astype(np.float32), (g, g), interpolation=cv2.INTER_AREA) > 0.99
        wts[0] *= np.maximum(
            trusted, t[HEAT] > 0.01
        )  # near a labelled card, the labels say where its centre is
    return t, wts


def _train_step(model, opt, sched, batches):
    """One batch forward and back, the optimiser and the schedule a step on: the loss terms."""
    import torch

    x, t, w = (torch.from_numpy(a) for a in batches.next())
    heat, reg, mask = losses(model(x), t, w)
    loss = heat + reg + 0.5 * mask
    opt.zero_grad()
    loss.backward()
    opt.step()
    sched.step()
    return heat, reg, mask


class Batches:
    """Training batches made in a background thread while torch computes."""

    def __init__(self, scenes: list[dict], batch: int, seed: int, depth: int = 3, real=None, real_share=0.5):
        self.scenes, self.batch = scenes, batch
        self.real, self.real_share = real or [], real_share
        self.rng = np.random.default_rng(seed)
        self.q: queue.Queue = queue.Queue(depth)
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop:
            xs, ts, ws = [], [], []
            for _ in range(self.batch):
                pool = self.real if self.real and self.rng.random() < self.real_share else self.scenes
                d = pool[int(self.rng.integers(len(pool)))]
                x, t, w = sample(d, self.rng)
                xs.append(x)
                ts.append(t)
                ws.append(w)
            self.q.put((np.stack(xs), np.stack(ts), np.stack(ws)))

    def next(self):
        return self.q.get()

    def close(self):
        self.stop = True
        try:
            while True:
                self.q.get_nowait()
        except queue.Empty:
            pass


# -- the network ---------------------------------------------------------------------------------
def build_model(widths=(16, 24, 48, 80, 128), neck: int = 48):
    import torch.nn as nn
    import torch.nn.functional as F

    def cbr(ci, co, s=1, k=3, g=1):
        return nn.Sequential(
            nn.Conv2d(ci, co, k, s, k // 2, groups=g, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True)
        )

    class Block(nn.Module):
        """Depthwise 3 x 3 then pointwise, with a shortcut where the shape allows."""

        def __init__(self, ci, co, st=1):
            super().__init__()
            self.dw = cbr(ci, ci, st, 3, ci)
            self.pw = cbr(ci, co, 1, 1)
            self.res = st == 1 and ci == co

        def forward(self, x):
            y = self.pw(self.dw(x))
            return x + y if self.res else y

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            w = widths
            self.stem = cbr(3, w[0], 2)
            self.s4 = nn.Sequential(Block(w[0], w[1], 2), Block(w[1], w[1]))
            self.s8 = nn.Sequential(Block(w[1], w[2], 2), Block(w[2], w[2]))
            self.s16 = nn.Sequential(Block(w[2], w[3], 2), Block(w[3], w[3]), Block(w[3], w[3]))
            self.s32 = nn.Sequential(Block(w[3], w[4], 2), Block(w[4], w[4]), Block(w[4], w[4]))
            c = neck
            self.l32, self.l16, self.l8, self.l4 = (cbr(ci, c, k=1) for ci in (w[4], w[3], w[2], w[1]))
            self.m16, self.m8, self.m4 = Block(c, c), Block(c, c), Block(c, c)
            self.head = nn.Sequential(cbr(c, c), nn.Conv2d(c, CHANNELS, 1))
            self.head[-1].bias.data[HEAT] = -4.0  # start sure there is no card (CenterNet's prior)

        def forward(self, x):
            x4 = self.s4(self.stem(x))
            x8 = self.s8(x4)
            x16 = self.s16(x8)
            x32 = self.s32(x16)
            y = self.l32(x32)
            y = self.m16(F.interpolate(y, scale_factor=2.0, mode="nearest") + self.l16(x16))
            y = self.m8(F.interpolate(y, scale_factor=2.0, mode="nearest") + self.l8(x8))
            y = self.m4(F.interpolate(y, scale_factor=2.0, mode="nearest") + self.l4(x4))
            return self.head(y)

    return Net()


def losses(out, t, w):
    import torch
    import torch.nn.functional as F

    heat_logit = out[:, HEAT]
    p = torch.sigmoid(heat_logit).clamp(1e-4, 1 - 1e-4)
    y = t[:, HEAT]
    is_pos = (y >= 0.999).float()
    # CenterNet's focal loss: the cells next to a centre are punished less for looking like one
    pos_l = -((1 - p) ** 2) * torch.log(p) * is_pos
    neg_l = -((1 - y) ** 4) * (p**2) * torch.log(1 - p) * (1 - is_pos)
    n_pos = is_pos.sum().clamp(min=1.0)
    heat = ((pos_l + neg_l) * w[:, 0]).sum() / n_pos
    cards = w[:, 2].sum().clamp(min=1.0)  # each card's offset weights add up to 1, its axes' too
    reg = 0.0
    for ch, wi in (
        (OFF_X, 2),
        (OFF_Y, 2),
        (L_LOG, 1),
        (S_LOG, 1),
        (L_COS, 1),
        (L_SIN, 1),
        (S_COS, 1),
        (S_SIN, 1),
    ):
        reg = reg + ((out[:, ch] - t[:, ch]).abs() * w[:, wi]).sum() / cards
    mw = w[:, 3]
    mask = (
        F.binary_cross_entropy_with_logits(out[:, MASK], t[:, MASK], reduction="none") * mw
    ).sum() / mw.sum().clamp(min=1.0)
    return heat, reg, mask


def train(
    out: Path = WEIGHTS,
    scenes: int = 9000,
    steps: int = 12000,
    seed: int = 7,
    batch: int = 16,
    lr: float = 3e-3,
    quick: bool = False,
    resume: bool = False,
    log=print,
) -> dict:
    import torch

    torch.manual_seed(seed)
    threads = int(os.environ.get("CARDNET_THREADS", "2"))
    torch.set_num_threads(threads)
    t0 = time.time()
    data = build_scenes(scenes, seed, quick=quick, workers=1 if quick else threads, log=log)
    n_val = max(2, len(data) // 30)
    val, train_set = data[:n_val], data[n_val:]
    log(f"  {len(train_set)} training scenes, {len(val)} held out; {time.time() - t0:.0f} s")
    model = build_model((8, 12, 16, 24, 32), 16) if quick else build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.05)
    ckpt = CACHE / f"checkpoint-{'quick-' if quick else ''}{seed}.pt"
    start = 0
    if resume and ckpt.is_file():
        state = torch.load(ckpt, weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        sched.load_state_dict(state["sched"])
        start = state["step"]
        log(f"  resumed at step {start}")
    batches = Batches(train_set, batch, seed + start)
    model.train()
    run = np.zeros(3)
    try:
        for step in range(start, steps):
            heat, reg, mask = _train_step(model, opt, sched, batches)
            run = 0.98 * run + 0.02 * np.array([heat.item(), reg.item(), mask.item()])
            if (step + 1) % 500 == 0 and not quick:
                CACHE.mkdir(parents=True, exist_ok=True)
                state = {"model": model.state_dict(), "opt": opt.state_dict(), "sched": sched.state_dict()}
                torch.save({**state, "step": step + 1}, ckpt)
            if (step + 1) % max(1, steps // 40) == 0:
                log(
                    f"  step {step + 1}/{steps}: heat {run[0]:.3f} reg {run[1]:.3f} mask {run[2]:.3f}; {time.time() - t0:.0f} s"
                )
    finally:
        batches.close()
    model.eval()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    export(model, out)
    figures = evaluate(CardNet(out), val)
    figures["seconds"] = time.time() - t0
    figures["scenes"] = len(train_set)
    log(
        f"wrote {out} ({out.stat().st_size // 1024} kB): held-out synthetic scenes: recall {figures['recall']:.3f}, "
        f"precision {figures['precision']:.3f} ({figures['cards']} cards); {figures['seconds']:.0f} s"
    )
    return figures


def finetune(
    init: Path,
    sources: list[str],
    out: Path,
    synthetic: list[dict],
    steps: int,
    seed: int,
    batch: int = 16,
    lr: float = 1e-3,
    log=print,
) -> None:
    """The synthetic network (checkpoint `init`) taught the real photos of `sources` too: half of each
    batch real crops (`vision.cardnet_real`), half synthetic, so it keeps what the scenes taught."""
    import torch

    from vision import cardnet_real

    torch.manual_seed(seed)
    torch.set_num_threads(int(os.environ.get("CARDNET_THREADS", "2")))
    model = build_model()
    model.load_state_dict(torch.load(init, weights_only=False)["model"])
    rng = np.random.default_rng(seed)
    real = [it for s in sources for it in cardnet_real.items(s, rng)]
    log(f"  {out.name}: {len(real)} real crops' pictures from {', '.join(sources) or 'no source'}")
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    batches = Batches(synthetic, batch, seed, real=real, real_share=0.5 if real else 0.0)
    model.train()
    t0 = time.time()
    try:
        for step in range(steps):
            heat, reg, _mask = _train_step(model, opt, sched, batches)
            if (step + 1) % max(1, steps // 10) == 0:
                log(
                    f"  {out.name} step {step + 1}/{steps}: heat {heat.item():.3f} reg {reg.item():.3f}; {time.time() - t0:.0f} s"
                )
    finally:
        batches.close()
    model.eval()
    out.parent.mkdir(parents=True, exist_ok=True)
    export(model, out)


def train_folds(out_dir: Path, init: Path, steps: int, seed: int, scenes: int, log=print) -> None:
    """The shipped network (out_dir/cardnet.onnx, every source with labels) and one per source left
    out (out_dir/loso/cardnet_without_<source>.onnx): a source's figures come from the one that never
    saw it. foltys_single_cards has no boxes and teaches nothing, so its fold is the shipped one."""
    from vision.real_photos import SOURCES

    synthetic = build_scenes(scenes, seed, log=log)
    trainable = [s for s in SOURCES if s != "foltys_single_cards"]
    for held in (*trainable, None):
        used = [s for s in trainable if s != held]
        path = out_dir / "cardnet.onnx" if held is None else out_dir / "loso" / f"cardnet_without_{held}.onnx"
        finetune(init, used, path, synthetic, steps, seed, log=log)
        log(f"wrote {path}")


def export(model, path: Path) -> None:
    """ONNX for OpenCV's DNN module, checked against torch on a random picture."""
    import torch

    x = torch.randn(1, 3, 96, 160)
    buf = io.BytesIO()
    torch.onnx.export(
        model,
        x,
        buf,
        opset_version=17,
        input_names=["image"],
        output_names=["maps"],
        dynamic_axes={"image": {2: "h", 3: "w"}, "maps": {2: "gh", 3: "gw"}},
        dynamo=False,
    )
    path.write_bytes(buf.getvalue())
    net = cv2.dnn.readNetFromONNX(str(path))
    net.setInput(x.numpy())
    got = net.forward()
    with torch.no_grad():
        want = model(x).numpy()
    err = float(np.abs(got - want).max())
    if err > 1e-2:
        raise RuntimeError(f"the exported network differs from torch's by {err:.4f}")


def evaluate(net: CardNet, scenes: list[dict]) -> dict:
    """Recall and precision (quad IoU >= 0.5) over the held-out scenes at their training size."""
    found = cards = dets = right = 0
    for d in scenes:
        img, _cover = _decode_scene(d)
        truth = [q for q, s in zip(d["quads"], d["seen"], strict=True) if s >= 0.5]
        maybe = [q for q, s in zip(d["quads"], d["seen"], strict=True) if IGNORE_SEEN <= s < 0.5]
        got = merge(decode(net.outputs(pad32(img)), img.shape[1], img.shape[0]))
        cards += len(truth)
        used = set()
        for g in got:
            ious = [quad_iou(g.corners, q) for q in truth]
            j = int(np.argmax(ious)) if ious else -1
            if j >= 0 and ious[j] >= 0.5 and j not in used:
                used.add(j)
                right += 1
                dets += 1
            elif not any(quad_iou(g.corners, q) >= 0.3 for q in maybe):
                dets += 1
        found += len(used)
    return {
        "recall": found / max(cards, 1),
        "precision": right / max(dets, 1),
        "cards": cards,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", type=int, default=9000)
    ap.add_argument("--steps", type=int, default=12000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--out", default=str(WEIGHTS))
    ap.add_argument(
        "--resume", action="store_true", help="go on from build/cardnet's checkpoint of this seed"
    )
    ap.add_argument(
        "--real",
        action="store_true",
        help="teach the trained synthetic network (build/cardnet's checkpoint of this seed) the real photos "
        "too, leave-one-source-out: writes cardnet.onnx and loso/cardnet_without_<source>.onnx to --out-dir",
    )
    ap.add_argument("--real-steps", type=int, default=2500)
    ap.add_argument("--out-dir", default=str(WEIGHTS.parent))
    ap.add_argument(
        "--quick", action="store_true", help="a tiny network end to end (tests): 40 scenes, 60 steps"
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.scenes, args.steps, args.batch = 40, 60, 4
    try:
        import torch  # noqa: F401
    except ImportError:
        print("vision cardnet-train: needs torch (pip install -e '.[train]')", file=sys.stderr)
        return 2
    if args.real:
        init = CACHE / f"checkpoint-{args.seed}.pt"
        if not init.is_file():
            print(
                f"vision cardnet-train --real: no synthetic network to start from ({init}): train it first",
                file=sys.stderr,
            )
            return 2
        train_folds(Path(args.out_dir), init, args.real_steps, args.seed, args.scenes)
        return 0
    train(Path(args.out), args.scenes, args.steps, args.seed, args.batch, args.lr, args.quick, args.resume)
    return 0


if __name__ == "__main__":
    sys.exit(main())
