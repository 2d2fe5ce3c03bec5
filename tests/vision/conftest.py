"""Shared fixtures: enrolled deck models (built once per session) and a small render size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from hil.scene import deck_dir
from vision.read import enroll_deck

REPO = Path(__file__).resolve().parents[2]
SMART_TABLE = REPO / ".venv" / "bin" / "smart-table"
W, H = 1280, 720


@pytest.fixture(scope="session", autouse=True)
def _no_time_budget_unless_asked():
    """What a detector finds and reads here must not depend on this machine's speed, which moved by
    a third within one day (and the rest of the suite running beside slows it more): a 1080p frame
    of an enrolled deck, both readers on every card, was cut short and left a card unread. So a
    Detector made here without `budget_ms` has none. The budget is tested where a test asks for it
    (tests/vision/test_budget.py); the service's end-to-end tests run with the real one."""
    from vision.detect import Detector

    defaults = Detector.__init__.__kwdefaults__
    before = defaults["budget_ms"]
    defaults["budget_ms"] = None
    yield
    defaults["budget_ms"] = before


@pytest.fixture(scope="session", autouse=True)
def _warm_detector() -> None:
    """The process's one-time costs (OpenCV's first calls, the readers' lazy tables, the networks)
    paid once before the tests, as the service pays them before READY (vision.warmup): else the
    first test to detect pays them inside the frame's 500 ms CPU budget and, on a busy machine, can
    have its frame cut short."""
    from vision.detect import Detector
    from vision.warmup import warm_up

    warm_up(Detector())


@pytest.fixture(scope="session")
def tango_model(tmp_path_factory) -> str:
    model, _ = enroll_deck(deck_dir("tango"))
    path = tmp_path_factory.mktemp("models") / "tango.deck"
    model.save(path)
    return str(path)


@pytest.fixture(scope="session")
def anglo_model(tmp_path_factory) -> str:
    model, _ = enroll_deck(deck_dir("anglo_poker"))
    path = tmp_path_factory.mktemp("models") / "anglo.deck"
    model.save(path)
    return str(path)


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    exe = [str(SMART_TABLE)] if SMART_TABLE.exists() else [sys.executable, "-m", "controller.cli"]
    return subprocess.run([*exe, *args], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def write_swapped_deck(folder) -> None:
    """The held-out drawn deck with its club and spade shapes swapped (a club printed where the spade
    goes): a deck drawing its suits unlike the ones the built-in suit classifier learnt."""
    import cv2

    from hil.decks.drawn import make_deck

    cards = make_deck()
    swap = {"c": "s", "s": "c"}
    folder.mkdir(parents=True, exist_ok=True)
    for code in cards:
        shown = code if code == "back" or code[1] not in swap else code[0] + swap[code[1]]
        cv2.imwrite(str(folder / f"{code}.png"), cards[shown])


def both_corners_reading(code: str, p: float) -> list:
    """What a stand-in index network's read_corners gives: two corners read alike, `code` at
    probability `p` (the rank p, the suit sure)."""
    import numpy as np

    from vision.read_glyph import RANK_CLASSES, SUIT_CLASSES

    ranks, suits = np.full(13, np.log((1 - p) / 12)), np.full(4, np.log(1e-6))
    ranks[RANK_CLASSES.index(code[0])], suits[SUIT_CLASSES.index(code[1])] = np.log(p), 0.0
    return [(ranks, suits), (ranks, suits)]
