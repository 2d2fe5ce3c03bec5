"""A small ONNX network run by OpenCV's DNN module: what the card network and the index network share.

OpenCV's DNN needs no torch and no download, and installs on a Raspberry Pi from the registry with
opencv-python-headless (already a dependency). One `cv2.dnn.Net` is not safe to share between
threads (the service reads frames in one and detects in others), so each thread gets its own,
read from the same bytes; a file that is not a network is refused naming it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import cv2
import numpy as np


class OnnxModel:
    def __init__(self, path: str | Path, what: str = "network") -> None:
        self.path = Path(path)
        self.what = what
        self._bytes = self.path.read_bytes()
        self._local = threading.local()
        self.net()  # fail now on a bad file, not on the first frame

    def net(self):
        net = getattr(self._local, "net", None)
        if net is None:
            try:
                net = cv2.dnn.readNetFromONNX(np.frombuffer(self._bytes, np.uint8))
            except cv2.error as exc:
                raise ValueError(f"{self.path}: not a {self.what} (ONNX): {str(exc).strip()[-200:]}") from exc
            self._local.net = net
        return net

    def forward(self, blob: np.ndarray) -> np.ndarray:
        """The network's output for an N x C x H x W float32 blob."""
        net = self.net()
        net.setInput(blob)
        return net.forward()


def blob(images: list[np.ndarray]) -> np.ndarray:
    """N x 3 x H x W float32 of BGR crops, as the small networks were trained: (BGR - 127.5) / 255."""
    return cv2.dnn.blobFromImages(images, 1 / 255.0, swapRB=False, mean=(127.5, 127.5, 127.5))
