"""More decks for training: GNOME Aisleriot's SVG card themes (Debian's gnome-cards-data), cut into cards.

    python -m vision.aisleriot_decks [--out build/decks] [--svg-dir /usr/share/aisleriot/cards]

Two decks in data/decks (tango, anglo_poker) are too few for a detector or a reader that must work on
decks it never saw. Aisleriot ships about thirty themes; each SVG is a sheet of 13 columns (ace, 2-10,
J, Q, K) by 5 rows (clubs, diamonds, hearts, spades, then two jokers and the back), so every theme is
cut the same way. Rendered with `rsvg-convert` (Debian's librsvg2-bin) where it is installed, else with
cairosvg (the `train` extra). Where no themes are installed, the package is fetched with
`apt-get download gnome-cards-data` (no root needed) and unpacked beside the output.

Each theme has a role (DECKS): `train` decks teach the detector and the reader; `held_out` decks are
never trained on, so a benchmark can measure on decks the models never saw; `excluded` ones are not
used at all: the themes that look like they share their artwork with KDE's card decks (Debian's
kdegames-card-data), which outside tests use, and themes that are not French-suited. The output
folders are laid out like data/decks (`As.png` ... `back.png`, with the theme's LICENSE.txt), so
`vision.decks.read_deck(folder)` reads them. Nothing here runs at service time and nothing it writes
is committed.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "build" / "decks"
SVG_DIR = Path("/usr/share/aisleriot/cards")
SUIT_ROWS = "cdhs"  # the sheet's rows, top down
RANK_COLUMNS = "A23456789TJQK"
SHEET_WIDTH = 13 * 250  # px: cards about 250 px wide, like data/decks

# role, and why where it is not plain training
DECKS: dict[str, tuple[str, str]] = {
    "anglo": ("train", ""),
    "anglo_bitmap": ("train", ""),
    "anglo_modern": ("train", ""),
    "anglo_modern_4_color": ("train", "four colours: detection only, not the reader"),
    "anglo_poker": ("train", "also in data/decks"),
    "atlasnye": ("train", ""),
    "atlasnye_skat": ("train", "four colours: detection only, not the reader"),
    "berlin": ("train", "German indices (B, D, K): detection only"),
    "gnomangelo": ("train", ""),
    "gnomangelo_bitmap": ("train", ""),
    "guyenne-classic": ("train", ""),
    "lattmann": ("train", "German indices: detection only"),
    "orell": ("train", ""),
    "plastic": ("train", ""),
    "rheinland": ("train", "German indices: detection only"),
    "simplistic": ("train", ""),
    "tango": ("train", "also in data/decks"),
    "tango_nuevo": ("train", ""),
    "bellot": ("held_out", "a benchmark deck nothing is trained on"),
    "neoclassical": ("held_out", "a benchmark deck nothing is trained on"),
    "neoclassical_4_color": ("held_out", "neoclassical's artwork"),
    "ancient_french": ("excluded", "artwork shared with a KDE deck (svg-ancient-french)"),
    "dondorf": ("excluded", "artwork shared with a KDE deck (svg-dondorf)"),
    "ornamental": ("excluded", "artwork shared with a KDE deck (svg-nicu-ornamental)"),
    "paris": ("excluded", "artwork shared with a KDE deck (svg-gm-paris)"),
    "tigullio": ("excluded", "artwork shared with a KDE deck (svg-tigullio-international)"),
    "slavic_costumes": ("excluded", "Russian indices"),
    "Атласные": ("excluded", "a copy of atlasnye with Russian indices"),
    "swiss-xvii": ("excluded", "Swiss suits"),
    "tarocco": ("excluded", "a tarot deck"),
}
# decks whose corner indices are English (A, K, Q, J) in two colours: what the built-in reader learns from
READER_DECKS = tuple(
    n for n, (role, why) in DECKS.items() if role == "train" and "only" not in why and "four" not in why
)


def decks_with_role(role: str) -> list[str]:
    return [n for n, (r, _why) in DECKS.items() if r == role]


def find_svg_dir(out: Path) -> Path:
    """The folder of Aisleriot's themes: installed, or unpacked from the downloaded package."""
    if any(SVG_DIR.glob("*.svgz")):
        return SVG_DIR
    unpacked = out / "_gnome-cards-data" / "usr" / "share" / "aisleriot" / "cards"
    if any(unpacked.glob("*.svgz")):
        return unpacked
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        raise RuntimeError(f"no Aisleriot themes in {SVG_DIR} and no apt-get to fetch gnome-cards-data")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["apt-get", "download", "gnome-cards-data"], cwd=tmp, check=True, capture_output=True)
        deb = next(Path(tmp).glob("gnome-cards-data*.deb"))
        subprocess.run(["dpkg-deb", "-x", str(deb), str(out / "_gnome-cards-data")], check=True)
    return unpacked


def render_sheet(svgz: Path, width: int = SHEET_WIDTH) -> np.ndarray:
    """The theme's whole sheet as BGRA."""
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "deck.svg"
        svg.write_bytes(gzip.decompress(svgz.read_bytes()))
        png = Path(tmp) / "deck.png"
        if shutil.which("rsvg-convert"):
            subprocess.run(["rsvg-convert", "-w", str(width), str(svg), "-o", str(png)], check=True)
        else:
            import cairosvg  # the `train` extra

            cairosvg.svg2png(url=str(svg), write_to=str(png), output_width=width)
        img = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim != 3 or img.shape[2] != 4:
        raise RuntimeError(f"{svgz.name}: the sheet did not render")
    return img


def cut_cards(sheet: np.ndarray) -> dict[str, np.ndarray]:
    """code -> BGRA card cut from the 13 x 5 sheet (each cell trimmed to its opaque part)."""
    h, w = sheet.shape[:2]
    cw, ch = w / 13, h / 5
    out: dict[str, np.ndarray] = {}

    def cell(r: int, c: int) -> np.ndarray:
        t = sheet[round(r * ch) : round((r + 1) * ch), round(c * cw) : round((c + 1) * cw)]
        ys, xs = np.nonzero(t[:, :, 3] > 8)
        return np.ascontiguousarray(t[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1])

    for r, suit in enumerate(SUIT_ROWS):
        for c, rank in enumerate(RANK_COLUMNS):
            out[rank + suit] = cell(r, c)
    out["back"] = cell(4, 2)
    return out


def render_decks(out: Path = DEFAULT_OUT, names: list[str] | None = None, log=print) -> list[Path]:
    """Renders the named themes (default: every train and held-out one) into out/<name>/; returns
    the folders. A folder already complete is kept."""
    names = names or decks_with_role("train") + decks_with_role("held_out")
    out.mkdir(parents=True, exist_ok=True)
    svg_dir = find_svg_dir(out)
    licence = _licence_text(svg_dir)
    folders = []
    for name in names:
        if DECKS.get(name, ("excluded", ""))[0] == "excluded":
            raise ValueError(f"{name}: not used ({DECKS.get(name, ('', 'unknown theme'))[1]})")
        folder = out / name
        if len(list(folder.glob("*.png"))) == 53:
            folders.append(folder)
            continue
        folder.mkdir(parents=True, exist_ok=True)
        for code, img in cut_cards(render_sheet(svg_dir / f"{name}.svgz")).items():
            cv2.imwrite(str(folder / f"{code}.png"), img)
        (folder / "LICENSE.txt").write_text(
            f"Card images cut from the SVG theme {name}.svgz of Debian's gnome-cards-data (source package\n"
            f"aisleriot, upstream https://wiki.gnome.org/Apps/Aisleriot) by vision/aisleriot_decks.py.\n\n"
            + licence,
            encoding="utf-8",
        )
        log(f"  {name}: 53 cards -> {folder}")
        folders.append(folder)
    return folders


def deck_folders(role: str, out: Path = DEFAULT_OUT) -> list[Path]:
    """The rendered folders of the decks with this role (rendering any that are missing)."""
    return render_decks(out, decks_with_role(role), log=lambda *_a: None)


def _licence_text(svg_dir: Path) -> str:
    doc = svg_dir.parents[1] / "doc" / "gnome-cards-data" / "copyright"
    if doc.is_file():
        return doc.read_text(encoding="utf-8", errors="replace")
    return "GPL-3+ (Debian's gnome-cards-data, /usr/share/doc/gnome-cards-data/copyright)\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("names", nargs="*", help="themes (default: every train and held-out one)")
    args = ap.parse_args(argv)
    try:
        folders = render_decks(Path(args.out), args.names or None)
    except (RuntimeError, ValueError, subprocess.CalledProcessError, OSError) as exc:
        print(f"aisleriot decks: {exc}", file=sys.stderr)
        return 2
    print(f"{len(folders)} decks in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
