"""Where the data the demo and the tests read lives: one answer for every caller.

The repository carries what `make demo` and `make test` need in `data/` (card decks, PHH hands, the
venue rulebooks, a sample of real photos), so a clone alone runs. A `../shared` folder beside the
repository (as the project's CI has it) may add more: the full set of real photos, table textures.
`$SMART_TABLE_DATA` names another folder laid out like `data/` and is looked in first; the card decks
alone can come from `$SMART_TABLE_DECKS` (`decks_root`).

Order: $SMART_TABLE_DATA, then the repository's `data/`, then the `data/` of the clone the running
virtual environment lives in (docs/install.md installs with `pip install .` into `/opt/smart-table/.venv`:
the package then runs from site-packages, away from the clone's `data/`), then `../shared/data/` and
`../shared/`.
The repository's copy comes before `../shared` so that what the tests see does not depend on what
lies beside the clone; `prefer_larger=True` asks for the copy with the most files instead (the full
photo set for figures, when it is there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "data"
SHARED = REPO.parent / "shared"


class DataNotFound(FileNotFoundError):
    """A data folder or file is in none of the places looked in; the message lists them."""


def roots() -> list[Path]:
    """The folders searched, in order (they need not exist)."""
    out: list[Path] = []
    env = os.environ.get("SMART_TABLE_DATA")
    if env:
        out.append(Path(env))
    out.append(DATA)
    beside_venv = Path(sys.prefix).parent / "data"
    if beside_venv != DATA:
        out.append(beside_venv)
    out += [SHARED / "data", SHARED]
    return out


def candidates(name: str) -> list[Path]:
    """Every existing copy of `name` (a path relative to a data root, e.g. "decks/tango"), in search order."""
    seen: list[Path] = []
    for root in roots():
        path = root / name
        if path.exists() and path.resolve() not in [p.resolve() for p in seen]:
            seen.append(path)
    return seen


def find(name: str, *, prefer_larger: bool = False) -> Path:
    """The copy of `name` to use. Raises DataNotFound naming every place looked in."""
    found = candidates(name)
    if not found:
        looked = ", ".join(str(r / name) for r in roots())
        raise DataNotFound(
            f"data not found: {name} (looked in {looked}; set SMART_TABLE_DATA to a data folder)"
        )
    if prefer_larger and len(found) > 1:
        return max(found, key=_file_count)  # max keeps the first of equals: search order breaks ties
    return found[0]


def find_or_none(name: str, *, prefer_larger: bool = False) -> Path | None:
    """`find`, but None where nothing is found (for a test's skip condition or an optional extra)."""
    try:
        return find(name, prefer_larger=prefer_larger)
    except DataNotFound:
        return None


def phh_files(subset: str = "pluribus") -> list[Path]:
    """The sample hand histories, sorted (160 Pluribus hands in the repository's copy)."""
    return sorted(find(f"phh/{subset}").glob("*/*.phh"))


def decks_root() -> Path:
    """The folder holding one sub-folder per card deck: $SMART_TABLE_DECKS, else the data's "decks"
    (the repository's data/decks)."""
    env = os.environ.get("SMART_TABLE_DECKS")
    if env:
        return Path(env)
    return find_or_none("decks") or DATA / "decks"


def deck_dir(deck: str) -> Path:
    """A deck's folder: `deck` itself when it names a folder, else the deck of that name under decks_root()."""
    p = Path(deck)
    if p.is_dir():
        return p
    return decks_root() / deck


DECK_IMAGE_EXTS = (".png", ".jpg", ".jpeg")


def deck_files(deck: str) -> dict[str, Path]:
    """card code (and "back") -> image file of a deck, in ALL_CODES order. Raises FileNotFoundError
    naming the folder, or the first card without a picture."""
    from controller.rules.cards import ALL_CODES

    d = deck_dir(deck)
    if not d.is_dir():
        raise FileNotFoundError(f"deck folder not found: {d} (set SMART_TABLE_DECKS to the decks folder)")
    out: dict[str, Path] = {}
    for code in (*ALL_CODES, "back"):
        f = next((d / f"{code}{ext}" for ext in DECK_IMAGE_EXTS if (d / f"{code}{ext}").exists()), None)
        if f is None:
            raise FileNotFoundError(f"deck {d}: no image for {code}")
        out[code] = f
    return out


def _file_count(path: Path) -> int:
    return sum(1 for p in path.rglob("*") if p.is_file()) if path.is_dir() else 1
