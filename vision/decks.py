"""A card deck's pictures, decoded: what training and the simulated camera paste onto the felt.

Where a deck's files are is the data's business (controller.datapaths.deck_files: the repository's
data/decks, or $SMART_TABLE_DECKS); this only reads them, the same way for every caller.
"""

from __future__ import annotations

import cv2
import numpy as np

from controller.datapaths import deck_files


def read_deck(deck: str) -> dict[str, np.ndarray]:
    """code -> BGRA image for the 52 cards plus 'back' of the deck named `deck` (or the folder it
    names). Raises FileNotFoundError naming the folder or the file that is missing or unreadable."""
    out: dict[str, np.ndarray] = {}
    for code, f in deck_files(deck).items():
        img = cv2.imread(str(f), cv2.IMREAD_UNCHANGED)
        if img is None:
            raise FileNotFoundError(f"deck {f.parent}: cannot read {f.name}")
        if img.ndim == 2:
            img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGRA)
        elif img.shape[2] == 3:
            img = cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)
        out[code] = img
    return out
