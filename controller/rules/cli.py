"""`smart-table rules replay`: the engine on a file of protocol lines, exactly as the spec says.

Also registers `smart-table hands ...` (PHH replay and export) from `controller.rules.hands_cli`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import BinaryIO

from controller.rules.profile import DEFAULT_PROFILE, PROFILE_NAMES


def register(subparsers: argparse._SubParsersAction) -> None:
    rules = subparsers.add_parser("rules", help="the rules engine: replay protocol lines, show profiles")
    rules_sub = rules.add_subparsers(dest="rules_command", metavar="RULES_COMMAND")
    rules.set_defaults(handler=lambda args: rules.print_help() or 2)

    replay = rules_sub.add_parser(
        "replay",
        help="read input lines (JSON Lines) and write the engine's output lines",
        description="Reads table-event input lines from FILE (or standard input) and writes the output "
        "lines to standard output, flushing after each input line.",
    )
    replay.add_argument("file", nargs="?", default="-", metavar="FILE|-")
    replay.add_argument("--profile", default=DEFAULT_PROFILE, help=f"rulebook: {', '.join(PROFILE_NAMES)}")
    replay.add_argument("--seats", type=int, default=10, help="table size (default 10)")
    replay.add_argument(
        "--pretty", action="store_true", help="print the rulings as readable text instead of JSON"
    )
    replay.set_defaults(handler=_replay)

    show = rules_sub.add_parser("profile", help="print a rule profile with every citation")
    show.add_argument("name", help=f"one of {', '.join(PROFILE_NAMES)} or a .toml path")
    show.set_defaults(handler=_show_profile)

    from controller.rules import hands_cli

    hands_cli.register(subparsers)


def _replay(args: argparse.Namespace) -> int:
    from controller.rules.engine import TableEngine, dumps
    from controller.rules.errors import ProfileError
    from controller.rules.pretty import describe

    if args.profile not in PROFILE_NAMES and not args.profile.endswith(".toml"):
        print(
            f"smart-table rules replay: unknown profile {args.profile!r} (one of {', '.join(PROFILE_NAMES)})",
            file=sys.stderr,
        )
        return 2
    if not 2 <= args.seats <= 23:
        print(f"smart-table rules replay: --seats must be 2..23, got {args.seats}", file=sys.stderr)
        return 2
    try:
        engine = TableEngine(args.profile, args.seats)
    except ProfileError as exc:
        print(f"smart-table rules replay: {exc}", file=sys.stderr)
        return 2
    if args.file == "-":
        stream = sys.stdin.buffer
    else:
        try:
            stream = open(args.file, "rb")  # noqa: SIM115
        except OSError as exc:
            print(f"smart-table rules replay: cannot read {args.file}: {exc.strerror}", file=sys.stderr)
            return 2
    out = getattr(sys.stdout, "buffer", None)
    with stream:
        for number, text in input_lines(stream):
            lines = engine.feed(text, number) if isinstance(text, str) else [text]
            for line in lines:
                shown = describe(line, engine) if args.pretty else dumps(line)
                # UTF-8 whatever the locale; an engine message can never make the write fail
                data = (shown + "\n").encode("utf-8", "backslashreplace")
                if out is not None:
                    out.write(data)
                else:
                    sys.stdout.write(data.decode("utf-8"))
            if lines:
                (out or sys.stdout).flush()
    return 0


LONGEST_LINE = 1 << 20  # bytes; a protocol line is under 200


def input_lines(stream: BinaryIO) -> Iterator[tuple[int, str | dict]]:
    """Numbered lines of a JSON Lines byte stream, read the same from a file and from a pipe.

    Lines end at LF only (JSON Lines); a CR before it is dropped and a bare CR elsewhere is what JSON
    makes of it (white space between tokens). A UTF-8 byte order mark before the first line is skipped.
    A line that is not UTF-8 or is longer than LONGEST_LINE comes out as its `error` line instead.
    """
    number = 0
    while True:
        raw = stream.readline(LONGEST_LINE + 1)
        if not raw:
            return
        number += 1
        if len(raw) > LONGEST_LINE and not raw.endswith(b"\n"):
            while (rest := stream.readline(LONGEST_LINE)) and not rest.endswith(b"\n"):
                pass  # the rest of the long line, unread
            yield number, _error(number, f"line longer than {LONGEST_LINE} bytes, not read")
            continue
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield (
                number,
                _error(number, f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at column {exc.start + 1}"),
            )
            continue
        yield number, text


def _error(number: int, message: str) -> dict:
    return {"type": "error", "line": number, "message": message}


def _show_profile(args: argparse.Namespace) -> int:
    from controller.rules.borrowed import lender, venue_title
    from controller.rules.errors import ProfileError
    from controller.rules.profile import load_profile

    try:
        profile = load_profile(args.name)
    except ProfileError as exc:
        print(f"smart-table rules profile: {exc}", file=sys.stderr)
        return 2
    print(f"{profile.name}: {profile.title}  ({profile.source})")
    for section, settings in profile.settings.items():
        print(f"[{section}]")
        for key, setting in settings.items():
            note = f"  # {setting.note}" if setting.note else ""
            lent = lender(setting.rule, profile.name)
            rule = f"{setting.rule}, borrowed from {venue_title(lent)}" if lent else setting.rule
            print(f"  {key} = {setting.value!r}  ({rule}){note}")
    return 0
