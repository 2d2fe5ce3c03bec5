"""What the trainers of the small card-crop networks share (`vision.index_net_train`,
`vision.face_net_train`): the convolution block, the colour jitter of a batch, and the ONNX export
checked against torch through the very loader the service uses. torch (the `train` extra) is imported
only when a function runs, so the service never needs it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import numpy as np


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
