"""What the trainers of the small card-crop networks share (`vision.index_net_train`,
`vision.face_net_train`): the convolution block, the colour jitter of a batch, the training loop, and
the ONNX export checked against torch through the very loader the service uses. torch (the `train` extra) is imported
only when a function runs, so the service never needs it.
"""

from __future__ import annotations

import io
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def torch_missing(command: str) -> bool:
    """True, having said so on stderr, when the `train` extra (torch) is not installed."""
    try:
        import torch  # noqa: F401
    except ImportError:
        import sys

        print(f"{command}: needs torch (pip install -e '.[train]')", file=sys.stderr)
        return True
    return False


def conv_block(i: int, o: int):
    """3x3 convolution, batch norm, ReLU."""
    import torch.nn as nn

    return nn.Sequential(nn.Conv2d(i, o, 3, 1, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))


def jittered_batch(x: np.ndarray, rng: np.random.Generator):
    """N x H x W x 3 uint8 crops as the N x 3 x H x W tensor the network is fed, each crop's colours
    scaled (0.75-1.25 a channel) and its brightness moved (+-20): lamps and cameras differ."""
    import torch

    xb = x.astype(np.float32) * rng.uniform(0.75, 1.25, (len(x), 1, 1, 3))
    xb += rng.uniform(-20, 20, (len(x), 1, 1, 1))
    return torch.from_numpy((np.clip(xb, 0, 255) - 127.5) / 255.0).permute(0, 3, 1, 2).float()


def fit(model, x: np.ndarray, batch_loss: Callable, epochs: int, seed: int, batch: int, log=print):
    """AdamW with a one-cycle schedule over `epochs` passes of `x` (N x H x W x 3 uint8) in shuffled
    batches, each jittered (`jittered_batch`); `batch_loss(out, b)` is the loss of the network's output
    for the examples at indices b. Returns the model in eval mode. Threads: $INDEX_NET_THREADS (2)."""
    import torch

    torch.set_num_threads(int(os.environ.get("INDEX_NET_THREADS", "2")))
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    steps = max(1, epochs * (len(x) // batch))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    rng = np.random.default_rng(seed)
    t0 = time.time()
    step = 0
    model.train()
    for ep in range(epochs):
        order = rng.permutation(len(x))
        for i in range(0, len(order) - batch + 1, batch):
            b = order[i : i + batch]
            loss = batch_loss(model(jittered_batch(x[b], rng)), b)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step < steps - 1:
                sched.step()
            step += 1
        log(f"    epoch {ep + 1}/{epochs}: loss {loss.item():.3f}, {time.time() - t0:.0f} s")
    model.eval()
    return model


def export_checked(
    model,
    shape: tuple[int, int, int],
    path: Path,
    names: tuple[str, str],
    forward: Callable[[Path, np.ndarray], np.ndarray],
) -> None:
    """Writes `model` as ONNX (opset 17, any batch size) to `path`, then runs three random inputs of
    `shape` (C, H, W) through `forward(path, blob)` -- the service's own loader -- and refuses a file
    whose answers differ from torch's."""
    import torch

    x = torch.randn(3, *shape)
    buf = io.BytesIO()
    inp, out = names
    torch.onnx.export(
        model, x, buf, opset_version=17, input_names=[inp], output_names=[out],
        dynamic_axes={inp: {0: "n"}, out: {0: "n"}}, dynamo=False,
    )  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    got = forward(path, x.numpy())
    with torch.no_grad():
        want = model(x).numpy()
    if float(np.abs(got - want).max()) > 1e-2:
        raise RuntimeError(f"{path}: the exported network differs from torch's")
