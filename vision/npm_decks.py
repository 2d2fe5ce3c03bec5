"""Card decks published as SVG files on the npm registry, rendered to card images for the benchmark.

    python -m vision.npm_decks [--out build/decks] [names...]

Why: a deck the benchmark reads must be one nothing was trained or tuned on, and the Aisleriot
themes left over (vision.aisleriot_decks) share their artwork with the KDE decks the outside tests
use. A deck drawn in a third style, by another hand, says more about decks never seen than a third
Aisleriot theme would. Each deck here is a registry package (fetched with `npm pack`, the registry
being the one place this machine may download from, and only when the deck is first rendered):
its SVG cards are rendered with cairosvg (the `train` extra) to about 250 px wide, like
data/decks, given the rounded corners a printed card has, and written to out/<name>/ with the
package's licence. Nothing trains on them; their role is `held_out`.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "build" / "decks"
CARD_WIDTH = 250  # px, like data/decks
CORNER_RADIUS = 12  # px at CARD_WIDTH: a printed card's rounded corner

# name -> (npm package, version, why it is here)
DECKS: dict[str, tuple[str, str, str]] = {
    "aguilar": (
        "@younestouati/playing-cards-standard-deck",
        "3.0.0",
        "Chris Aguilar's vectorized playing cards (LGPL-3.0), via responsive-playing-cards: a benchmark deck nothing is trained on",
    ),
}
_RANKS = {"1": "A", "10": "T", "11": "J", "12": "Q", "13": "K"}


def card_code(stem: str) -> str | None:
    """The project's code for one of the package's file names (`10h` -> Th, `1s` -> As, `back`),
    None for a card the deck does not use (a joker)."""
    if stem == "back":
        return "back"
    m = re.fullmatch(r"(\d{1,2})([cdhs])", stem)
    if m is None:
        return None
    rank = _RANKS.get(m.group(1), m.group(1))
    return rank + m.group(2) if rank in "A23456789TJQK" else None


def rounded(card: np.ndarray, radius: int = CORNER_RADIUS) -> np.ndarray:
    """The BGRA card with its corners cut round (transparent), as a printed card's are."""
    h, w = card.shape[:2]
    m = np.zeros((h, w), np.uint8)
    cv2.rectangle(m, (radius, 0), (w - 1 - radius, h - 1), 255, -1)
    cv2.rectangle(m, (0, radius), (w - 1, h - 1 - radius), 255, -1)
    for cx, cy in (
        (radius, radius),
        (w - 1 - radius, radius),
        (radius, h - 1 - radius),
        (w - 1 - radius, h - 1 - radius),
    ):
        cv2.circle(m, (cx, cy), radius, 255, -1)
    out = card.copy()
    out[:, :, 3] = np.minimum(out[:, :, 3], m)
    return out


def _render_svg(svg: bytes, width: int, height: int | None = None) -> np.ndarray:
    import cairosvg  # the `train` extra

    png = cairosvg.svg2png(bytestring=svg, output_width=width, output_height=height)
    img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim != 3:
        raise RuntimeError("an SVG card did not render")
    return img if img.shape[2] == 4 else cv2.cvtColor(img, cv2.COLOR_BGR2BGRA)  # (opaque: no alpha written)


def render_back(svg: bytes, face_shape: tuple[int, int]) -> np.ndarray:
    """The package's back is a pattern tile with no size of its own: drawn at its own 80 px and
    repeated over a card the faces' size (back_from_tile)."""
    sized = re.sub(rb"<svg ", b"<svg width='80' height='80' ", svg, count=1)
    return back_from_tile(_render_svg(sized, 80, 80), face_shape)


def back_from_tile(tile: np.ndarray, face_shape: tuple[int, int]) -> np.ndarray:
    """A BGRA card back of `face_shape` (height, width): the tile repeated, inside a white border."""
    h, w = face_shape
    th, tw = tile.shape[:2]
    back = np.tile(tile[:, :, :3], (h // th + 1, w // tw + 1, 1))[:h, :w]
    card = np.dstack([back, np.full((h, w), 255, np.uint8)])
    cv2.rectangle(card, (0, 0), (w - 1, h - 1), (255, 255, 255, 255), 10)
    return card


def fetch(package: str, version: str, into: Path) -> Path:
    """The package's files, unpacked into `into`/package (npm pack; kept for the next run)."""
    unpacked = into / "package"
    if unpacked.is_dir():
        return unpacked
    if not shutil.which("npm"):
        raise RuntimeError(f"npm is not installed: cannot fetch {package}")
    into.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            ["npm", "pack", f"{package}@{version}"], cwd=tmp, check=True, capture_output=True, timeout=300
        )
        tgz = next(Path(tmp).glob("*.tgz"))
        with tarfile.open(tgz) as tar:
            tar.extractall(into, filter="data")
    return unpacked


def render_decks(out: Path = DEFAULT_OUT, names: list[str] | None = None, log=print) -> list[Path]:
    """Renders the named decks (default: all) into out/<name>/; returns the folders. A folder
    already complete (53 images) is kept."""
    folders = []
    for name in names or list(DECKS):
        if name not in DECKS:
            raise ValueError(f"{name}: not an npm deck (known: {', '.join(DECKS)})")
        package, version, why = DECKS[name]
        folder = out / name
        if len(list(folder.glob("*.png"))) == 53:
            folders.append(folder)
            continue
        pkg = fetch(package, version, out / f"_npm_{name}")
        svgs = {card_code(p.stem): p for p in (pkg / "cards").glob("*.svg")}
        svgs.pop(None, None)
        if len(svgs) != 53:
            raise RuntimeError(f"{package}: {len(svgs)} cards found in cards/, 53 expected")
        folder.mkdir(parents=True, exist_ok=True)
        shape = None
        for code, path in sorted(svgs.items()):
            if code == "back":
                continue
            face = rounded(_render_svg(path.read_bytes(), CARD_WIDTH))
            shape = face.shape[:2]
            cv2.imwrite(str(folder / f"{code}.png"), face)
        cv2.imwrite(str(folder / "back.png"), rounded(render_back(svgs["back"].read_bytes(), shape)))
        licence = pkg / "LICENSE"
        (folder / "LICENSE.txt").write_text(
            f"Card images rendered from the npm package {package}@{version} by vision/npm_decks.py: {why}.\n\n"
            + (licence.read_text(encoding="utf-8", errors="replace") if licence.is_file() else ""),
            encoding="utf-8",
        )
        log(f"  {name}: 53 cards -> {folder}")
        folders.append(folder)
    return folders


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("names", nargs="*", help=f"decks (default: all of {', '.join(DECKS)})")
    args = ap.parse_args(argv)
    try:
        folders = render_decks(Path(args.out), args.names or None)
    except (
        RuntimeError,
        ValueError,
        subprocess.CalledProcessError,
        subprocess.TimeoutExpired,
        OSError,
    ) as exc:
        print(f"npm decks: {exc}", file=sys.stderr)
        return 2
    print(f"{len(folders)} decks in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
