"""A card deck's pictures, decoded: what training and the simulated camera paste onto the felt.

Where a deck's files are is the data's business (controller.datapaths.deck_files: the repository's
data/decks, or $SMART_TABLE_DECKS); this only reads them, the same way for every caller.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from controller.datapaths import deck_files


def read_deck(deck: str) -> dict[str, np.ndarray]:
    """code -> BGRA image for the 52 cards plus 'back' of the deck named `deck` (or the folder it
    names). Raises FileNotFoundError naming the folder or the file that is missing or unreadable."""
    return {code: decode_card(f.read_bytes(), f) for code, f in deck_files(deck).items()}


def decode_card(data: bytes, f: Path) -> np.ndarray:
    """One card file's bytes as a BGRA image; FileNotFoundError naming the file if it is no picture."""
    img = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise FileNotFoundError(f"deck {f.parent}: cannot read {f.name}")
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGRA)
    if img.shape[2] == 3:
        return cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
    return img
