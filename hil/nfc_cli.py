"""`smart-table hil nfc tap PLAYER`: tap a simulated player card on a simulated reader.

The reader is `sim:<dir>`: a spool directory watched by the table service or a desk command
running `--reader sim:<dir>` in another process (default /tmp/smart-table-nfc, env
SMART_TABLE_NFC_READER). `--udp host:port` instead emulates the card as a Type 3 tag on nfcpy's
UDP link for `--duration` seconds (readers use `--reader udp:host:port`).
"""

from __future__ import annotations

import argparse
import os
import sys

DEFAULT_SIM_READER = "sim:/tmp/smart-table-nfc"


def _default_reader() -> str:
    env = os.environ.get("SMART_TABLE_NFC_READER", "")
    return env if env.startswith("sim:") else DEFAULT_SIM_READER


def register(hil_subparsers: argparse._SubParsersAction) -> None:
    nfc = hil_subparsers.add_parser("nfc", help="simulated NFC reader and player cards")
    sub = nfc.add_subparsers(dest="nfc_command", metavar="NFC_COMMAND")
    nfc.set_defaults(handler=lambda args: nfc.print_help() or 2)
    tap = sub.add_parser("tap", help="tap a simulated player card (or a blank card) on a simulated reader")
    tap.add_argument("player", nargs="?", help="player ID whose issued card to tap (omit with --blank)")
    tap.add_argument(
        "--reader", default=_default_reader(), help=f"sim:<spool dir> (default {DEFAULT_SIM_READER})"
    )
    tap.add_argument("--db", default=os.environ.get("SMART_TABLE_REGISTRY", "registry.sqlite3"))
    tap.add_argument("--keys", default=os.environ.get("SMART_TABLE_VENUE_KEYS", "venue-keys.toml"))
    tap.add_argument("--blank", action="store_true", help="a blank NTAG (for `register write-card`)")
    tap.add_argument("--uid", help="present the player's record on this tag UID instead (a copied card)")
    tap.add_argument("--model", default="ntag215", choices=("ntag213", "ntag215", "ntag216", "ntag424"))
    tap.add_argument("--dwell", type=float, default=1.5, help="seconds the card stays on the reader")
    tap.add_argument("--udp", metavar="HOST:PORT", help="emulate a Type 3 tag on nfcpy's UDP link instead")
    tap.add_argument("--duration", type=float, default=10.0, help="with --udp: seconds to serve")
    tap.set_defaults(handler=cmd_tap)


def _err(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 1


def cmd_tap(args: argparse.Namespace) -> int:
    from controller.registry.errors import RegistryError, SecretFileError
    from hil.nfc import SimulatedNtag, SimulatedNtag424, player_card, spool_tap

    uid = None
    if args.uid:
        try:
            uid = bytes.fromhex(args.uid)
        except ValueError:
            return _err(f"--uid {args.uid!r} is not hex")
    if args.udp:
        host, _, port = args.udp.rpartition(":")
        if not port.isdigit():
            return _err(f"--udp {args.udp!r}: write HOST:PORT")
        return _tap_udp(args, host or "localhost", int(port), uid)
    if not args.reader.startswith("sim:") or "/" not in args.reader:
        return _err(f"--reader {args.reader!r}: a simulated reader in another process is sim:<directory>")
    try:
        if args.blank:
            uid7 = uid if uid and len(uid) == 7 else None
            tag = SimulatedNtag424(uid7) if args.model == "ntag424" else SimulatedNtag(args.model, uid7)
        else:
            if not args.player:
                return _err("name the player whose card to tap, or use --blank")
            registry, keys = _open(args)
            try:
                tag = player_card(registry, keys, args.player, uid=uid, model=args.model)
            finally:
                registry.close()
    except (RegistryError, SecretFileError, ValueError) as exc:
        return _err(str(exc))
    spool_tap(args.reader[4:], tag, dwell=args.dwell)
    who = "blank card" if args.blank else f"{args.player}'s card"
    print(f"tapped {who} (UID {tag.uid.hex()}) on {args.reader} for {args.dwell:.1f} s")
    return 0


def _open(args: argparse.Namespace):  # -> tuple[Registry, VenueKeys]
    from controller.registry.keys import load_keys
    from controller.registry.registry import Registry

    keys = load_keys(args.keys)
    return Registry.open(args.db), keys


def _tap_udp(args: argparse.Namespace, host: str, port: int, uid: bytes | None) -> int:
    from controller.registry.card import encode_card
    from controller.registry.errors import RegistryError, SecretFileError
    from hil.nfc import Type3Emulator

    try:
        if args.blank:
            emulator = Type3Emulator(b"", idm=uid, host=host, port=port)
        else:
            registry, keys = _open(args)
            try:
                card = registry.active_card(args.player) if args.player else None
                if card is None:
                    return _err(f"{args.player} has no active card")
                emulator = Type3Emulator(b"", idm=uid or card.uid, host=host, port=port)
                emulator.load_message(encode_card(card.uid, args.player, keys))
            finally:
                registry.close()
    except (RegistryError, SecretFileError, ValueError) as exc:
        return _err(str(exc))
    print(
        f"emulating Type 3 tag {emulator.uid.hex()} on udp:{host}:{port} for {args.duration:.0f} s",
        flush=True,
    )
    try:
        emulator.serve(duration=args.duration)
    except OSError as exc:
        return _err(f"udp:{host}:{port}: {exc}")
    return 0
