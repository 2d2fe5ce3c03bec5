"""`smart-table vision enroll|detect|calibrate` (contract: ../shared/spec/vision-cli.md).

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

    p = sub.add_parser("detect", help="cards and dealer button in images, one JSON object per image")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument(
        "--deck", metavar="MODEL_FILE", help="deck model from `vision enroll` (else built-in reader)"
    )
    p.add_argument("--json", action="store_true", help="JSON lines on stdout (the default output)")
    p.add_argument(
        "--overlay", metavar="OUT.png", help="draw what was seen; with several images, OUT-<n>.png per image"
    )
    p.add_argument("--layout", metavar="LAYOUT.toml", help="table layout to draw zones (and learn card size)")
    p.add_argument("--seats", type=int, default=None, help="draw the default simulated layout with N seats")
    p.set_defaults(handler=cmd_detect)

    p = sub.add_parser("calibrate", help="table layout from a picture showing the four ArUco table markers")
    p.add_argument("image", metavar="IMAGE")
    p.add_argument("--seats", type=int, required=True)
    p.add_argument("--out", required=True, metavar="LAYOUT.toml")
    p.add_argument(
        "--overlay", metavar="CHECK.png", help="draw the seat, board and muck zones on the picture"
    )
    p.add_argument("--table-width-mm", type=float, default=1600.0)
    p.add_argument("--table-height-mm", type=float, default=900.0)
    p.set_defaults(handler=cmd_calibrate)

    p = sub.add_parser("train", help="train the card verifier on synthetic composites (vision/train.py)")
    p.add_argument("--composites", type=int, default=1000, help="synthetic pictures to learn from")
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--decks", nargs="*", default=["tango", "anglo_poker"], help="never 'drawn' (held out)")
    p.add_argument("--out", default=None, metavar="WEIGHTS.npz", help="default: the package's own weights")
    p.add_argument("--quick", action="store_true", help="a tiny model end to end (about a minute at most)")
    p.set_defaults(handler=cmd_train)


def _err(msg: str) -> None:
    print(f"smart-table vision: {msg}", file=sys.stderr)


def cmd_enroll(args) -> int:
    from vision.read import DeckModelError, enroll_deck

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
    return 0


def _overlay_path(base: str, i: int, n: int) -> str:
    if n == 1:
        return base
    p = Path(base)
    return str(p.with_name(f"{p.stem}-{i + 1}{p.suffix or '.png'}"))


def cmd_detect(args) -> int:
    import cv2

    from vision.detect import Detector
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
        detector = Detector(args.deck, layout=layout)
    except DeckModelError as exc:
        _err(f"detect: {exc}")
        return 2
    processed = 0
    for i, path in enumerate(args.images):
        frame = None
        try:
            if Path(path).is_file():
                frame = cv2.imread(path, cv2.IMREAD_COLOR)
            err = (
                None
                if frame is not None
                else ("no such file" if not Path(path).exists() else "not a readable image")
            )
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
    from vision.layout import LayoutError, save_layout

    table = (args.table_width_mm, args.table_height_mm)
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


def cmd_train(args) -> int:
    from vision.train import main as train_main

    argv = ["--composites", str(args.composites), "--seed", str(args.seed), "--decks", *args.decks]
    if args.out:
        argv += ["--out", args.out]
    if args.quick:
        argv.append("--quick")
    return train_main(argv)
