"""`smart-table vision enroll|detect|calibrate|track` (contract: ../shared/spec/vision-cli.md).

OpenCV is imported inside the handlers so `smart-table --help` stays fast.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    vision = subparsers.add_parser("vision", help="camera: enrol a deck, detect cards and button, calibrate")
    sub = vision.add_subparsers(dest="vision_command", metavar="VISION_COMMAND")
    vision.set_defaults(handler=lambda args: vision.print_help() or 2)

    p = sub.add_parser("enroll", help="learn a deck from one image per card (As.png, Td.jpg, ..., back.png)")
    p.add_argument("deck_dir", metavar="DECK_DIR")
    p.add_argument("--out", required=True, metavar="MODEL_FILE")
    p.set_defaults(handler=cmd_enroll)

    p = sub.add_parser(
        "enroll-table",
        help="learn a deck from photos of it laid out face up on the table, taken by the table's camera",
    )
    p.add_argument(
        "photos",
        nargs="+",
        metavar="PHOTO",
        help="the deck in rows, face up, each card whole: image files, or a camera (v4l2:/dev/video0, "
        "picamera2:0, video:FILE) whose frame is taken now",
    )
    p.add_argument("--out", required=True, metavar="MODEL_FILE")
    p.add_argument(
        "--cards",
        required=True,
        metavar="DIR",
        help="where each card's picture is written (As.png ...; unread-*.png for cards given no code): "
        "rename or add pictures there and `vision enroll DIR` makes the model by hand",
    )
    how = p.add_mutually_exclusive_group()
    how.add_argument(
        "--rows",
        metavar="SUITS",
        help="one suit a row, ace to king, rows top to bottom in this suit order (e.g. shdc); "
        "without --rows or --order the built-in reader names the cards (standard indices only)",
    )
    how.add_argument(
        "--order", metavar="CODES", help="the codes in reading order, rows top to bottom, photos in turn"
    )
    p.add_argument(
        "--back", metavar="IMAGE", help="a photo of the deck's back (else a face-down card laid out)"
    )
    p.add_argument(
        "--overlay",
        metavar="OUT.png",
        help="draw each card's outline and the code it was enrolled as ('?': none); OUT-1.png, ... per photo",
    )
    p.set_defaults(handler=cmd_enroll_table)

    p = sub.add_parser("detect", help="cards and dealer button in images, one JSON object per image")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument(
        "--deck", metavar="MODEL_FILE", help="deck model from `vision enroll` (else built-in reader)"
    )
    p.add_argument("--json", action="store_true", help="JSON lines on stdout (the default output)")
    p.add_argument(
        "--overlay", metavar="OUT.png", help="draw what was seen; with several images, OUT-<n>.png per image"
    )
    p.add_argument(
        "--layout",
        metavar="LAYOUT",
        help="table layout (TOML, or the spec's JSON pixel form) to draw zones (and learn card size)",
    )
    p.add_argument("--seats", type=int, default=None, help="draw the default simulated layout with N seats")
    p.add_argument(
        "--budget-ms",
        type=_budget_ms,
        default=None,
        metavar="MS",
        help="CPU milliseconds an image may cost before detection stops and reports what it found "
        "(default 2000 for photographs: the camera's frames get 500; 0: no bound)",
    )
    p.set_defaults(handler=cmd_detect)

    p = sub.add_parser("calibrate", help="table layout from a picture showing the four ArUco table markers")
    p.add_argument("image", metavar="IMAGE")
    p.add_argument("--seats", type=int, required=True)
    p.add_argument(
        "--out", required=True, metavar="LAYOUT.toml", help="a .json name writes the spec's JSON pixel form"
    )
    p.add_argument(
        "--overlay", metavar="CHECK.png", help="draw the seat, board and muck zones on the picture"
    )
    p.add_argument("--table-width-mm", type=float, default=1600.0)
    p.add_argument("--table-height-mm", type=float, default=900.0)
    p.set_defaults(handler=cmd_calibrate)

    _register_track(sub)
    p = sub.add_parser("train", help="train the card verifier on synthetic composites (vision/train.py)")
    p.add_argument("--composites", type=int, default=1000, help="synthetic pictures to learn from")
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--decks", nargs="*", default=["tango", "anglo_poker"], help="never 'drawn' (held out)")
    p.add_argument("--out", default=None, metavar="WEIGHTS.npz", help="default: the package's own weights")
    p.add_argument("--quick", action="store_true", help="a tiny model end to end (about a minute at most)")
    p.add_argument(
        "--real",
        action="store_true",
        help="also learn from ../shared/data/real_photos, leave-one-source-out (vision/train_real.py)",
    )
    p.add_argument("--out-dir", default=None, help="with --real: where the models go (default: the package)")
    p.set_defaults(handler=cmd_train)


def _budget_ms(text: str) -> float:
    """`--budget-ms`: CPU milliseconds, 0 for no bound (argparse names the option on a bad value)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be 0 (no bound) or a positive number of ms, not {text!r}")
    return value


def _err(msg: str) -> None:
    print(f"smart-table vision: {msg}", file=sys.stderr)


def cmd_enroll(args) -> int:
    from vision.image_header import ImageHeaderError, ImageTooLargeError, check_image
    from vision.read import DeckModelError, enroll_deck

    folder = Path(args.deck_dir)
    for f in sorted(folder.iterdir()) if folder.is_dir() else []:
        if f.is_file() and f.suffix.lower() in {".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp"}:
            try:
                check_image(f)  # the pixel budget, from the header, before any card is decoded
            except ImageTooLargeError as exc:
                _err(f"enroll: {f}: {exc}")
                return 2
            except (ImageHeaderError, OSError):
                pass  # unreadable: enroll_deck names it with every other problem of the folder
    try:
        model, warnings = enroll_deck(args.deck_dir)
    except DeckModelError as exc:
        _err(f"enroll: {exc}")
        return 2
    for w in warnings:
        _err(f"enroll: {args.deck_dir}: {w}")
    try:
        model.save(args.out)
    except OSError as exc:
        _err(f"enroll: cannot write {args.out}: {exc.strerror or exc}")
        return 2
    back = "with back" if model.back is not None else "no back image"
    print(f"enrolled 52 cards ({back}) from {args.deck_dir} -> {args.out}", file=sys.stderr)
    _enrolment_notes(model)
    return 0


def _enrolment_notes(model) -> None:
    """What the installer should know of a deck just enrolled: the look-alike suits its own pictures
    alone settle, and the codes the built-in reader may not overrule its pictures with."""
    from vision.read import LOOK_ALIKE_PAIRS

    for pair in LOOK_ALIKE_PAIRS:
        if pair not in model.trusted_pairs:
            names = " from ".join(
                {"c": "clubs", "s": "spades", "h": "hearts", "d": "diamonds"}[s] for s in pair
            )
            print(
                f"note: this deck draws its suits unlike most: the built-in suit classifier does not tell "
                f"its {names}, so the deck's own pictures alone settle those look-alikes (e.g. 7{pair[0]}/7{pair[1]})",
                file=sys.stderr,
            )
    if model.builtin_misreads:
        print(
            "note: the built-in reader reads some of this deck's cards as another code "
            f"({', '.join(model.builtin_misreads)}): where it reads one of those, the deck's own pictures decide",
            file=sys.stderr,
        )


def cmd_enroll_table(args) -> int:
    import cv2

    from vision.enroll_table import draw_enrolment, enrol_from_photos, parse_order, rows_order, write_cards
    from vision.image_header import ImageHeaderError, check_image
    from vision.read import DeckModelError, card_from_image, enroll_deck
    from vision.sources import CAMERA_KINDS, FrameSourceError, grab_frame

    try:
        order = rows_order(args.rows) if args.rows else parse_order(args.order) if args.order else None
    except ValueError as exc:
        _err(f"enroll-table: {exc}")
        return 2
    frames = []
    for path in args.photos + ([args.back] if args.back else []):
        if path.startswith(CAMERA_KINDS) and not Path(path).is_file():
            try:  # a camera: the still is taken now, by the camera the service will read
                frames.append(grab_frame(path))
            except FrameSourceError as exc:
                _err(f"enroll-table: {exc}")
                return 2
            continue
        try:
            check_image(path)  # the pixel budget, from the header, before decoding
            frame = cv2.imread(path, cv2.IMREAD_COLOR)
        except (ImageHeaderError, OSError) as exc:
            _err(f"enroll-table: {path}: {exc}")
            return 2
        if frame is None:
            _err(f"enroll-table: {path}: not an image this build can read")
            return 2
        frames.append(frame)
    back = frames.pop() if args.back else None
    got = enrol_from_photos(frames, order)
    if back is not None:
        try:
            got.cards["back"] = card_from_image(back)
        except DeckModelError as exc:
            _err(f"enroll-table: {args.back}: {exc}")
            return 2
    try:
        names = write_cards(got, args.cards)
        for k, frame in enumerate(frames) if args.overlay else ():
            path = _overlay_path(args.overlay, k, len(frames))
            if not cv2.imwrite(path, draw_enrolment(frame, got, k)):
                raise OSError(f"cannot write {path}")
    except OSError as exc:
        _err(f"enroll-table: {exc}")
        return 2
    up = sum(c.face == "up" for c in got.found)
    print(
        f"found {len(got.found)} cards ({up} face up) on {len(frames)} photo(s); "
        f"{len(names)} pictures in {args.cards}",
        file=sys.stderr,
    )
    for w in got.warnings:
        _err(f"enroll-table: note: {w}")
    if not got.complete:
        for p in got.problems:
            _err(f"enroll-table: {p}")
        _err(
            f"enroll-table: no model written; fix the layout and run again, or fix {args.cards} and run `vision enroll {args.cards} --out {args.out}`"
        )
        return 1
    try:
        model, _ = enroll_deck(args.cards)
        model.save(args.out)
    except DeckModelError as exc:
        _err(f"enroll-table: {exc}")
        return 1
    except OSError as exc:
        _err(f"enroll-table: cannot write {args.out}: {exc.strerror or exc}")
        return 2
    print(
        f"enrolled 52 cards ({'with back' if model.back is not None else 'no back image'}) -> {args.out}",
        file=sys.stderr,
    )
    _enrolment_notes(model)
    return 0


def _overlay_path(base: str, i: int, n: int) -> str:
    if n == 1:
        return base
    p = Path(base)
    return str(p.with_name(f"{p.stem}-{i + 1}{p.suffix or '.png'}"))


def cmd_detect(args) -> int:
    import cv2

    from vision.detect import STILL_BUDGET_MS, Detector
    from vision.image_header import ImageHeaderError, check_image
    from vision.read import DeckModelError

    layout = None
    if args.layout:
        from vision.layout import LayoutError, load_layout

        try:
            layout = load_layout(args.layout)
        except LayoutError as exc:
            _err(f"detect: {exc}")
            return 2
    try:
        # a JSON layout without card_width_px only guesses the card size: the detector measures it
        known = layout is not None and layout.card_width_known
        budget = STILL_BUDGET_MS if args.budget_ms is None else args.budget_ms or None
        detector = Detector(args.deck, layout=layout if known else None, budget_ms=budget)
    except DeckModelError as exc:
        _err(f"detect: {exc}")
        return 2
    processed = 0
    for i, path in enumerate(args.images):
        frame = None
        try:
            if Path(path).is_file():
                check_image(path)  # the pixel budget, from the header, before decoding
                frame = cv2.imread(path, cv2.IMREAD_COLOR)
            err = (
                None
                if frame is not None
                else ("no such file" if not Path(path).exists() else "not a readable image")
            )
        except ImageHeaderError as exc:
            err = str(exc)
        except (cv2.error, OSError) as exc:
            err = f"cannot read image: {exc}"
        if err is None and (frame.shape[0] < 16 or frame.shape[1] < 16):
            err = f"image too small ({frame.shape[1]}x{frame.shape[0]})"
        if err is not None:
            print(json.dumps({"image": path, "error": err}), flush=True)
            _err(f"detect: {path}: {err}")
            continue
        detector.card_width_hint = None  # each image may come from another camera or distance
        try:
            result = detector.detect(frame)
        except (cv2.error, ValueError) as exc:
            print(json.dumps({"image": path, "error": f"detection failed: {exc}"}), flush=True)
            continue
        processed += 1
        print(json.dumps(result.to_dict(path)), flush=True)
        if args.overlay:
            from vision.overlay import draw_overlay

            lay = layout
            if lay is None and args.seats:
                from vision.layout import default_layout

                lay = default_layout(args.seats, frame.shape[1], frame.shape[0])
            out = _overlay_path(args.overlay, i, len(args.images))
            if not cv2.imwrite(out, draw_overlay(frame, result, lay)):
                _err(f"detect: cannot write overlay {out}")
    return 0 if processed else 2


def cmd_calibrate(args) -> int:
    import cv2

    from vision.calibrate import CalibrationError, calibrate
    from vision.image_header import ImageHeaderError, check_image
    from vision.layout import LayoutError, save_layout

    table = (args.table_width_mm, args.table_height_mm)
    try:
        if Path(args.image).is_file():
            check_image(args.image)  # the pixel budget, from the header, before decoding
    except (ImageHeaderError, OSError) as exc:
        _err(f"calibrate: {args.image}: {exc}")
        return 2
    frame = cv2.imread(args.image, cv2.IMREAD_COLOR) if Path(args.image).is_file() else None
    if frame is None:
        _err(
            f"calibrate: {args.image}: {'no such file' if not Path(args.image).exists() else 'not a readable image'}"
        )
        return 2
    t0 = time.perf_counter()
    try:
        layout = calibrate(frame, args.seats, table)
    except (CalibrationError, LayoutError) as exc:
        _err(f"calibrate: {args.image}: {exc}")
        return 2
    try:
        save_layout(layout, args.out)
    except OSError as exc:
        _err(f"calibrate: cannot write {args.out}: {exc.strerror or exc}")
        return 2
    if args.overlay:
        from vision.overlay import draw_layout

        out = frame.copy()
        draw_layout(out, layout, max(1, round(frame.shape[1] / 900)))
        if not cv2.imwrite(args.overlay, out):
            _err(f"calibrate: cannot write overlay {args.overlay}")
            return 2
    ms = (time.perf_counter() - t0) * 1000
    print(f"calibrated {args.seats} seats from {args.image} -> {args.out} ({ms:.0f} ms)", file=sys.stderr)
    return 0


# -- track -------------------------------------------------------------------------------------
def _register_track(sub) -> None:
    from controller.service.config import DevicesConfig

    service = DevicesConfig()
    p = sub.add_parser(
        "track",
        help="table-event lines (deal, board, fold_seen, ...) from a sequence of frames, a folder or a video",
    )
    p.add_argument(
        "frames", nargs="+", metavar="FRAME", help="image files in order, one folder, or one video"
    )
    p.add_argument(
        "--layout", required=True, metavar="LAYOUT", help="layout file: TOML, or the spec's JSON pixel form"
    )
    p.add_argument(
        "--deck", metavar="MODEL_FILE", help="deck model from `vision enroll` (else built-in reader)"
    )
    p.add_argument("--fps", type=float, default=10.0, help="the frames' rate (default 10)")
    p.add_argument(
        "--debounce",
        type=int,
        default=service.camera_debounce_frames,
        metavar="N",
        help=f"frames a card must be seen in (default {service.camera_debounce_frames}, as the service)",
    )
    p.add_argument(
        "--min-confidence",
        type=float,
        default=None,
        metavar="C",
        help="readings below this are not given as card codes, hole cards' and board cards' alike "
        "(default: the tracker's, 0.5 for the board and 0.9 for hole cards)",
    )
    p.set_defaults(handler=cmd_track)


def _fit_layout(layout, width: int, height: int, where: str):
    """The layout for frames of this size: a TOML layout made for another resolution of the same
    camera is scaled; another shape of picture cannot be the same camera."""
    import numpy as np

    from vision.layout import LayoutError

    if layout.pixel_form or tuple(layout.image_size) == (width, height):
        return layout
    iw, ih = layout.image_size
    if abs(iw / ih - width / height) > 0.01 * (iw / ih):
        raise LayoutError(
            f"{where}: fields 'image_width'/'image_height' are {iw}x{ih}, the frames are {width}x{height}"
        )
    scale = np.diag([iw / width, ih / height, 1.0])
    layout.homography = layout.homography @ scale
    layout.image_size = (width, height)
    return layout


def cmd_track(args) -> int:
    from vision.detect import Detector
    from vision.layout import LayoutError, load_layout
    from vision.read import DeckModelError
    from vision.sources import FrameSourceError, read_ahead, read_frames
    from vision.tracker import Tracker

    if not args.fps > 0:
        _err(f"track: --fps must be above 0, got {args.fps}")
        return 2
    if args.debounce < 1:
        _err(f"track: --debounce must be at least 1, got {args.debounce}")
        return 2
    try:
        layout = load_layout(args.layout)
    except LayoutError as exc:
        _err(f"track: {exc}")
        return 2
    try:
        detector = Detector(args.deck, layout=layout if layout.card_width_known else None, track=True)
    except DeckModelError as exc:
        _err(f"track: {exc}")
        return 2
    options = (
        {}
        if args.min_confidence is None
        else {"min_confidence": args.min_confidence, "min_hole_confidence": args.min_confidence}
    )
    tracker = Tracker(layout, debounce_frames=args.debounce, detector=detector, **options)
    processed = 0
    fitted = False
    try:
        for index, name, frame, why in read_ahead(read_frames(args.frames)):
            if frame is None:
                _err(f"track: {name}: {why} (frame {index} skipped)")
                continue
            if not fitted:
                try:
                    _fit_layout(layout, frame.shape[1], frame.shape[0], args.layout)
                except LayoutError as exc:
                    _err(f"track: {exc}")
                    return 2
                fitted = True
            for line in tracker.update(frame, index / args.fps):
                print(json.dumps({**line, "frame": index}), flush=True)
            processed += 1
    except FrameSourceError as exc:
        _err(f"track: {exc}")
        return 2
    if not processed:
        _err("track: no frame could be read")
        return 2
    return 0


def cmd_train(args) -> int:
    from vision.train import main as train_main

    argv = ["--composites", str(args.composites), "--seed", str(args.seed), "--decks", *args.decks]
    if args.out:
        argv += ["--out", args.out]
    if args.quick:
        argv.append("--quick")
    if args.real:
        argv.append("--real")
    if args.out_dir:
        argv += ["--out-dir", args.out_dir]
    return train_main(argv)
