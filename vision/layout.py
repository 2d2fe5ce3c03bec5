"""Table layout: where the seats, the board, the muck, the bets and the burn spot are.

Table coordinates are millimetres with the origin at the table's centre, x to the right and y
towards the bottom of the camera image, so that an increasing angle runs clockwise as seen from
above. A homography maps image pixels to table millimetres; the default layout (no calibration)
is a plain scale of the simulated camera's frame, a calibrated one comes from ArUco markers.

Seats are numbered clockwise 1..N; seat 1 sits just left of the bottom centre of the image.

A layout is read from the project's TOML file or from the JSON form of ../shared/spec/vision-cli.md
("Track a sequence of frames"): polygons in pixels of the frames, for a camera nobody calibrated
with markers. The JSON form is held as a layout whose "table" is the image itself (identity
homography), so every zone test works the same way on both.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from controller.tomlfile import TomlFileError, parse_toml, read_text

CARD_SIZE_MM = (63.0, 88.0)  # poker size
SIM_TABLE_MM = (1600.0, 900.0)  # what the simulated camera sees, 16:9
# Seat zones are wedges of the table ellipse between these fractions of its half-axes.
SEAT_INNER, SEAT_OUTER = 0.52, 1.08
SEAT_CARD_RADIUS = 0.78  # where a seat's hole cards land
BOARD_HALF = (215.0, 72.0)
MUCK_RECT = (-140.0, -215.0, 140.0, -100.0)  # x0, y0, x1, y1 (above the board)
# A seat's betting area: the part of its wedge between these fractions, nearer the middle than
# its cards and chip stack, over the middle BET_SPAN of the wedge's angle.
BET_INNER, BET_OUTER, BET_SPAN = 0.40, 0.52, 0.7
BET_RADIUS = 0.46  # where the simulated players push their bets
BURN_RECT = (-330.0, -100.0, -235.0, 100.0)  # left of the board, where the burn cards go
# ArUco marker centres used by `vision calibrate`, as fractions of the half table size.
MARKER_FRACTION = 0.9
MARKER_IDS = (0, 1, 2, 3)  # top-left, top-right, bottom-right, bottom-left


class LayoutError(ValueError):
    """A layout file that cannot be used; the message names the file and the field."""


@dataclass
class Layout:
    seats: int
    table_size: tuple[float, float]
    image_size: tuple[int, int]
    homography: np.ndarray  # 3x3, image px -> table mm
    seat_zones: dict[int, np.ndarray]  # seat -> polygon (k, 2) in table mm
    seat_anchors: dict[int, tuple[float, float]]  # where the seat's cards are dealt
    board: np.ndarray
    muck: np.ndarray
    card_size: tuple[float, float] = CARD_SIZE_MM
    markers: dict[int, tuple[float, float]] = field(default_factory=dict)
    bets: dict[int, np.ndarray] = field(default_factory=dict)  # seat -> its betting area (optional)
    burn: np.ndarray | None = None  # where burn cards are put (optional)
    # False for a pixel layout that gave no card_width_px: card_width_px() is then only a guess
    # from the zone sizes, and the detector measures the cards itself.
    card_width_known: bool = True
    pixel_form: bool = False  # read from the JSON form: "table" coordinates are image pixels

    # -- coordinate maps -------------------------------------------------------------------
    @property
    def inverse(self) -> np.ndarray:
        return np.linalg.inv(self.homography)

    def to_table(self, pts_px) -> np.ndarray:
        return _apply(self.homography, pts_px)

    def to_image(self, pts_mm) -> np.ndarray:
        return _apply(self.inverse, pts_mm)

    def card_width_px(self, at_px=None) -> float:
        """Apparent card width in pixels near `at_px` (image centre by default)."""
        if at_px is None:
            at_px = (self.image_size[0] / 2, self.image_size[1] / 2)
        c = self.to_table([at_px])[0]
        a = self.to_image([c, c + np.array([self.card_size[0], 0.0]), c + np.array([0.0, self.card_size[0]])])
        return float((np.linalg.norm(a[1] - a[0]) + np.linalg.norm(a[2] - a[0])) / 2)

    # -- zones -----------------------------------------------------------------------------
    def zone_at(self, point_px) -> tuple[str, int | None] | None:
        """('seat', n), ('board', None), ('muck', None) or None for a pixel position."""
        p = self.to_table([point_px])[0]
        return self.zone_at_table(p)

    def zone_at_table(self, p) -> tuple[str, int | None] | None:
        pt = (float(p[0]), float(p[1]))
        if _inside(self.board, pt):
            return ("board", None)
        if self.burn is not None and _inside(self.burn, pt):
            return ("burn", None)
        if _inside(self.muck, pt):
            return ("muck", None)
        for seat, poly in self.seat_zones.items():
            if _inside(poly, pt):
                return ("seat", seat)
        return None

    def bet_zone_at(self, point_px) -> int | None:
        """The seat whose betting area holds this pixel position, or None."""
        if not self.bets:
            return None
        p = self.to_table([point_px])[0]
        pt = (float(p[0]), float(p[1]))
        for seat, poly in self.bets.items():
            if _inside(poly, pt):
                return seat
        return None

    def nearest_seat(self, point_px) -> int:
        p = self.to_table([point_px])[0]
        return min(self.seat_anchors, key=lambda s: math.dist(p, self.seat_anchors[s]))


def _apply(h: np.ndarray, pts) -> np.ndarray:
    a = np.asarray(pts, dtype=np.float64).reshape(-1, 2)
    q = np.hstack([a, np.ones((len(a), 1))]) @ h.T
    return q[:, :2] / q[:, 2:3]


def _inside(poly: np.ndarray, pt: tuple[float, float]) -> bool:
    import cv2

    return cv2.pointPolygonTest(poly.astype(np.float32).reshape(-1, 1, 2), pt, False) >= 0


def seat_angle(seat: int, seats: int) -> float:
    """Angle (radians, clockwise from the +x axis) of a seat's centre line."""
    return math.pi / 2 + (seat - 0.5) * 2 * math.pi / seats


def _ellipse_point(table_size, angle: float, frac: float) -> tuple[float, float]:
    return (frac * table_size[0] / 2 * math.cos(angle), frac * table_size[1] / 2 * math.sin(angle))


def table_zones(seats: int, table_size=SIM_TABLE_MM):
    """Seat wedges, anchors, board and muck polygons for a table of this size (table mm)."""
    if not 2 <= seats <= 12:
        raise LayoutError(f"seats must be 2..12, got {seats}")
    step = 2 * math.pi / seats
    zones, anchors = {}, {}
    for s in range(1, seats + 1):
        mid = seat_angle(s, seats)
        a0, a1 = mid - step / 2, mid + step / 2
        arc = [a0 + (a1 - a0) * k / 8 for k in range(9)]
        pts = [_ellipse_point(table_size, a, SEAT_OUTER) for a in arc]
        pts += [_ellipse_point(table_size, a, SEAT_INNER) for a in reversed(arc)]
        zones[s] = np.array(pts)
        anchors[s] = _ellipse_point(table_size, mid, SEAT_CARD_RADIUS)
    bw, bh = BOARD_HALF
    board = np.array([[-bw, -bh], [bw, -bh], [bw, bh], [-bw, bh]], dtype=np.float64)
    x0, y0, x1, y1 = MUCK_RECT
    muck = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)
    return zones, anchors, board, muck


def bet_zones(seats: int, table_size=SIM_TABLE_MM) -> dict[int, np.ndarray]:
    """Each seat's betting area (table mm): between its cards and the board."""
    step = 2 * math.pi / seats
    out = {}
    for s in range(1, seats + 1):
        mid = seat_angle(s, seats)
        a0, a1 = mid - BET_SPAN * step / 2, mid + BET_SPAN * step / 2
        arc = [a0 + (a1 - a0) * k / 8 for k in range(9)]
        pts = [_ellipse_point(table_size, a, BET_OUTER) for a in arc]
        pts += [_ellipse_point(table_size, a, BET_INNER) for a in reversed(arc)]
        out[s] = np.array(pts)
    return out


def burn_zone() -> np.ndarray:
    x0, y0, x1, y1 = BURN_RECT
    return np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], dtype=np.float64)


def marker_points(table_size=SIM_TABLE_MM) -> dict[int, tuple[float, float]]:
    """Where the four calibration markers' centres sit on the table (mm)."""
    hx, hy = table_size[0] / 2 * MARKER_FRACTION, table_size[1] / 2 * MARKER_FRACTION
    pts = [(-hx, -hy), (hx, -hy), (hx, hy), (-hx, hy)]
    return dict(zip(MARKER_IDS, pts, strict=True))


def scale_homography(width: int, height: int, table_size=SIM_TABLE_MM) -> np.ndarray:
    """Image px -> table mm for a camera that sees exactly the table rectangle, straight down."""
    sx, sy = table_size[0] / width, table_size[1] / height
    return np.array([[sx, 0, -table_size[0] / 2], [0, sy, -table_size[1] / 2], [0, 0, 1]], dtype=np.float64)


def build_layout(
    seats: int, width: int, height: int, homography: np.ndarray, table_size=SIM_TABLE_MM
) -> Layout:
    zones, anchors, board, muck = table_zones(seats, table_size)
    return Layout(
        seats=seats,
        table_size=(float(table_size[0]), float(table_size[1])),
        image_size=(int(width), int(height)),
        homography=np.asarray(homography, dtype=np.float64),
        seat_zones=zones,
        seat_anchors=anchors,
        board=board,
        muck=muck,
        markers=marker_points(table_size),
        bets=bet_zones(seats, table_size),
        burn=burn_zone(),
    )


def default_layout(seats: int, width: int, height: int) -> Layout:
    """The simulated table's layout: works without calibration for frames of the sim camera."""
    return build_layout(seats, width, height, scale_homography(width, height))


# -- TOML ------------------------------------------------------------------------------------
def _fmt_pts(pts) -> str:
    return (
        "[" + ", ".join(f"[{float(x):.2f}, {float(y):.2f}]" for x, y in np.asarray(pts).reshape(-1, 2)) + "]"
    )


def dumps_layout(layout: Layout) -> str:
    h = layout.homography / layout.homography[2, 2]
    lines = [
        "# smart-table table layout (vision). Table coordinates in mm, origin at the table centre,",
        "# y towards the bottom of the image; seats numbered clockwise. homography maps image px -> table mm.",
        "version = 1",
        f"seats = {layout.seats}",
        f"table_width_mm = {layout.table_size[0]:.1f}",
        f"table_height_mm = {layout.table_size[1]:.1f}",
        f"image_width = {layout.image_size[0]}",
        f"image_height = {layout.image_size[1]}",
        f"card_width_mm = {layout.card_size[0]:.1f}",
        f"card_height_mm = {layout.card_size[1]:.1f}",
        "homography = [" + ", ".join("[" + ", ".join(f"{v:.10g}" for v in row) + "]" for row in h) + "]",
        "",
        "[board]",
        f"polygon = {_fmt_pts(layout.board)}",
        "",
        "[muck]",
        f"polygon = {_fmt_pts(layout.muck)}",
    ]
    if layout.burn is not None:
        lines += ["", "[burn]", f"polygon = {_fmt_pts(layout.burn)}"]
    for s in sorted(layout.seat_zones):
        lines += [
            "",
            "[[seat]]",
            f"number = {s}",
            f"anchor = [{layout.seat_anchors[s][0]:.2f}, {layout.seat_anchors[s][1]:.2f}]",
            f"polygon = {_fmt_pts(layout.seat_zones[s])}",
        ]
        if s in layout.bets:
            lines.append(f"bet = {_fmt_pts(layout.bets[s])}  # the seat's betting area")
    return "\n".join(lines) + "\n"


def dumps_layout_json(layout: Layout) -> str:
    """The JSON form of ../shared/spec/vision-cli.md: every zone as a polygon in image pixels."""

    def px(poly) -> list[list[float]]:
        return [[round(float(x), 1), round(float(y), 1)] for x, y in layout.to_image(poly)]

    data: dict = {
        "seats": {str(s): px(layout.seat_zones[s]) for s in sorted(layout.seat_zones)},
        "board": px(layout.board),
        "muck": px(layout.muck),
    }
    if layout.bets:
        data["bets"] = {str(s): px(layout.bets[s]) for s in sorted(layout.bets)}
    if layout.burn is not None:
        data["burn"] = px(layout.burn)
    if layout.card_width_known:
        data["card_width_px"] = round(layout.card_width_px(), 1)
    return json.dumps(data) + "\n"


def save_layout(layout: Layout, path: str | Path) -> None:
    """Write the layout: the JSON pixel form for a `.json` path, else the project's TOML."""
    p = Path(path)
    text = dumps_layout_json(layout) if p.suffix.lower() == ".json" else dumps_layout(layout)
    p.write_text(text, encoding="utf-8")


def _poly(value, where: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise LayoutError(f"{where}: not a list of [x, y] points") from exc
    if arr.ndim != 2 or arr.shape[1] != 2 or len(arr) < 3:
        raise LayoutError(f"{where}: need at least 3 [x, y] points")
    if not np.isfinite(arr).all():
        raise LayoutError(f"{where}: points must be finite numbers")
    return arr


def load_layout(path: str | Path) -> Layout:
    """Read a layout file, TOML or the spec's JSON form (told by its first character); every
    problem is a LayoutError naming the file and field."""
    p = Path(path)
    try:
        text = read_text(p)
        if text.lstrip().startswith("{"):
            return _load_json_layout(p, text)
        data = parse_toml(text, str(p))
    except TomlFileError as exc:
        raise LayoutError(str(exc)) from None

    def need(key, kind):
        if key not in data:
            raise LayoutError(f"{p}: missing field '{key}'")
        v = data[key]
        if not isinstance(v, kind) or isinstance(v, bool):
            raise LayoutError(
                f"{p}: field '{key}' must be {kind.__name__ if isinstance(kind, type) else 'a number'}"
            )
        return v

    seats = need("seats", int)
    tw, th = float(need("table_width_mm", (int, float))), float(need("table_height_mm", (int, float)))
    iw, ih = need("image_width", int), need("image_height", int)
    try:
        h = np.asarray(need("homography", list), dtype=np.float64)
    except ValueError as exc:
        raise LayoutError(f"{p}: field 'homography' must be a 3x3 list of numbers") from exc
    if h.shape != (3, 3) or not np.isfinite(h).all() or abs(np.linalg.det(h)) < 1e-12:
        raise LayoutError(f"{p}: field 'homography' must be an invertible 3x3 matrix")
    board = _poly(need("board", dict).get("polygon"), f"{p}: [board] polygon")
    muck = _poly(need("muck", dict).get("polygon"), f"{p}: [muck] polygon")
    burn = None
    if "burn" in data:
        burn = _poly(
            data["burn"].get("polygon") if isinstance(data["burn"], dict) else None, f"{p}: [burn] polygon"
        )
    zones, anchors, bets = {}, {}, {}
    for i, entry in enumerate(need("seat", list)):
        if not isinstance(entry, dict) or not isinstance(entry.get("number"), int):
            raise LayoutError(f"{p}: [[seat]] #{i + 1}: missing integer 'number'")
        n = entry["number"]
        if n in zones:
            raise LayoutError(f"{p}: [[seat]] number {n} appears twice")
        zones[n] = _poly(entry.get("polygon"), f"{p}: seat {n} polygon")
        if entry.get("bet") is not None:
            bets[n] = _poly(entry["bet"], f"{p}: seat {n} bet")
        anchor = entry.get("anchor")
        if anchor is None:
            anchor = zones[n].mean(axis=0)
        anchors[n] = (float(anchor[0]), float(anchor[1]))
    if sorted(zones) != list(range(1, seats + 1)):
        raise LayoutError(f"{p}: seats = {seats} but [[seat]] numbers are {sorted(zones)}")
    return Layout(
        seats=seats,
        table_size=(tw, th),
        image_size=(iw, ih),
        homography=h,
        seat_zones=zones,
        seat_anchors=anchors,
        board=board,
        muck=muck,
        card_size=(
            float(data.get("card_width_mm", CARD_SIZE_MM[0])),
            float(data.get("card_height_mm", CARD_SIZE_MM[1])),
        ),
        markers=marker_points((tw, th)),
        bets=bets,
        burn=burn,
    )


def _load_json_layout(p: Path, text: str) -> Layout:
    """The spec's JSON form: pixel polygons for seats, board, muck, optional bets and burn spot."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LayoutError(f"{p}: not valid JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise LayoutError(f"{p}: expected a JSON object with 'seats', 'board' and 'muck'")
    for key in ("seats", "board", "muck"):
        if key not in data:
            raise LayoutError(f"{p}: missing field '{key}'")

    def seat_map(key: str) -> dict[int, np.ndarray]:
        value = data[key]
        if not isinstance(value, dict) or not value:
            raise LayoutError(f"{p}: field '{key}' must be an object of seat number -> polygon")
        out = {}
        for name, poly in value.items():
            try:
                n = int(name)
            except ValueError:
                raise LayoutError(f"{p}: field '{key}': {name!r} is not a seat number") from None
            out[n] = _poly(poly, f"{p}: field '{key}' seat {n}")
        return out

    zones = seat_map("seats")
    seats = len(zones)
    if sorted(zones) != list(range(1, seats + 1)) or seats < 2:
        raise LayoutError(f"{p}: field 'seats': seats must be numbered 1..N (N >= 2), got {sorted(zones)}")
    bets = seat_map("bets") if data.get("bets") is not None else {}
    for n in bets:
        if n not in zones:
            raise LayoutError(f"{p}: field 'bets': seat {n} is not in 'seats'")
    board = _poly(data["board"], f"{p}: field 'board'")
    muck = _poly(data["muck"], f"{p}: field 'muck'")
    burn = _poly(data["burn"], f"{p}: field 'burn'") if data.get("burn") is not None else None
    cw = data.get("card_width_px")
    if cw is not None and (isinstance(cw, bool) or not isinstance(cw, (int, float)) or not 4 <= cw <= 2000):
        raise LayoutError(f"{p}: field 'card_width_px' must be a number of pixels (4..2000), got {cw!r}")
    known = cw is not None
    if cw is None:
        # A guess for matching cards from frame to frame; the detector measures the real size.
        cw = float(np.median([math.sqrt(_area(z)) for z in zones.values()])) / 3.0
    polys = [*zones.values(), *bets.values(), board, muck, *([burn] if burn is not None else [])]
    top = np.max(np.vstack(polys), axis=0)
    return Layout(
        seats=seats,
        table_size=(float(top[0]), float(top[1])),
        image_size=(math.ceil(top[0]), math.ceil(top[1])),
        homography=np.eye(3),
        seat_zones=zones,
        seat_anchors={n: tuple(float(v) for v in z.mean(axis=0)) for n, z in zones.items()},
        board=board,
        muck=muck,
        card_size=(float(cw), float(cw) * CARD_SIZE_MM[1] / CARD_SIZE_MM[0]),
        bets=bets,
        burn=burn,
        card_width_known=known,
        pixel_form=True,
    )


def _area(poly: np.ndarray) -> float:
    import cv2

    return abs(float(cv2.contourArea(poly.astype(np.float32).reshape(-1, 1, 2))))
