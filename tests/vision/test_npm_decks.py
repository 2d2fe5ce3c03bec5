"""The npm registry's SVG decks, rendered for the benchmark (vision.npm_decks): every card under
its own code, cut as a printed card is. (Fetching needs the registry; these tests do not.)"""

from __future__ import annotations

import numpy as np

from vision.npm_decks import back_from_tile, card_code, rounded


def test_the_packages_file_names_become_the_cards_codes():
    # a card written under the wrong code would make the benchmark count right readings wrong
    names = [f"{r}{s}" for r in range(1, 14) for s in "cdhs"]
    codes = [card_code(n) for n in names]
    assert len(set(codes)) == 52 and None not in codes
    assert card_code("10h") == "Th" and card_code("1s") == "As" and card_code("13d") == "Kd"
    assert card_code("11c") == "Jc" and card_code("12h") == "Qh" and card_code("7c") == "7c"
    assert card_code("back") == "back"
    assert card_code("joker") is None and card_code("14c") is None and card_code("0d") is None


def test_a_rendered_card_has_round_corners_and_a_tiled_back():
    face = np.full((349, 250, 4), 255, np.uint8)
    cut = rounded(face)
    assert cut[0, 0, 3] == 0 and cut[-1, -1, 3] == 0  # the corners show the felt
    assert cut[174, 125, 3] == 255 and cut[0, 125, 3] == 255 and cut[174, 0, 3] == 255
    tile = np.zeros((80, 80, 4), np.uint8)
    tile[:, :] = (0x56, 0x34, 0x12, 255)
    tile[30:50, 30:50] = (255, 255, 255, 255)
    back = back_from_tile(tile, (349, 250))
    assert back.shape == (349, 250, 4)
    inner = back[20:-20, 20:-20, :3].reshape(-1, 3)
    assert (inner == [0x56, 0x34, 0x12]).all(axis=1).mean() > 0.5  # the pattern's colour (BGR) fills it
    assert (back[2, 100:150, :3] == 255).all()  # inside a white border
