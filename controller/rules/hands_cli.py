"""`smart-table hands replay FILE.phh ...` and `smart-table hands export EVENTLOG.jsonl --out DIR`.

replay: each PHH hand through the rules engine; prints the final stacks and whether they equal the
file's `finishing_stacks` (with --json one object per hand and line). Exit 0 when every hand agrees or
the only differences are files whose finishing stacks split a chip (not whole numbers); 1 otherwise;
2 for unusable arguments.

export: a table's recorded input lines (JSON Lines, as `smart-table rules replay` reads them) played
through the engine and written as one PHH file per finished hand.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from controller.rules.profile import DEFAULT_PROFILE, PROFILE_NAMES


def register(subparsers: argparse._SubParsersAction) -> None:
    hands = subparsers.add_parser(
        "hands", help="poker hand histories (PHH): replay against the engine, export"
    )
    sub = hands.add_subparsers(dest="hands_command", metavar="HANDS_COMMAND")
    hands.set_defaults(handler=lambda args: hands.print_help() or 2)

    replay = sub.add_parser(
        "replay",
        help="replay PHH files through the rules engine and compare final stacks",
        description="Replays No-Limit Hold'em PHH files through the rules engine and compares the final "
        "stacks with each file's finishing_stacks.",
    )
    replay.add_argument("files", nargs="+", metavar="FILE.phh")
    replay.add_argument("--json", action="store_true", help="one JSON object per hand and line")
    replay.add_argument("--profile", default=DEFAULT_PROFILE, help=f"rulebook: {', '.join(PROFILE_NAMES)}")
    replay.set_defaults(handler=_replay)

    export = sub.add_parser(
        "export",
        help="write a table's recorded hands as PHH files",
        description="Plays a table's event log (JSON Lines of protocol input lines) through the engine and "
        "writes each finished hand as DIR/hand-<number>.phh.",
    )
    export.add_argument("eventlog", metavar="EVENTLOG.jsonl")
    export.add_argument("--out", required=True, metavar="DIR")
    export.add_argument("--profile", default=DEFAULT_PROFILE, help="rulebook when the log has no table line")
    export.add_argument("--seats", type=int, default=10, help="table size when the log has no table line")
    export.set_defaults(handler=_export)


def _replay(args: argparse.Namespace) -> int:
    from controller.rules.phh import PhhError, load, replay

    if args.profile not in PROFILE_NAMES:
        print(f"smart-table hands replay: unknown profile {args.profile!r}", file=sys.stderr)
        return 2
    agree = fractional = differ = unusable = unreadable = 0
    for path in args.files:
        try:
            result = replay(load(path), args.profile)
        except Exception as exc:  # one bad file is reported and the batch goes on
            if not isinstance(exc, PhhError):
                exc = PhhError(f"{path}: cannot replay ({type(exc).__name__}: {exc})")
            unusable += 1
            unreadable += not Path(path).is_file()  # bad input: exit 2, as every command (issue 18)
            if args.json:
                print(json.dumps({"file": path, "error": str(exc), "match": False}), flush=True)
            else:
                print(f"cannot replay {exc}", file=sys.stderr)
            continue
        if result.match:
            agree += 1
        elif result.fractional:
            fractional += 1
        else:
            differ += 1
        if args.json:
            print(json.dumps(result.as_json()), flush=True)
            continue
        status = (
            "agrees"
            if result.match
            else ("differs: the file splits an odd chip fractionally" if result.fractional else "DIFFERS")
        )
        print(f"{path}: final {result.final_stacks} finishing {result.finishing_stacks} {status}")
        for error in result.errors:
            print(f"  {error}")
    total = len(args.files)
    summary = (
        f"{total} hands: {agree} agree, {fractional} differ only by a fractional odd chip in the file, "
        f"{differ} differ, {unusable} unusable"
    )
    print(summary, file=sys.stderr if args.json else sys.stdout)
    if unreadable:
        return 2
    return 0 if differ == 0 and unusable == 0 else 1


def _export(args: argparse.Namespace) -> int:
    from controller.rules.errors import ProfileError
    from controller.rules.phh import export_event_log

    try:
        text = Path(args.eventlog).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        print(f"smart-table hands export: cannot read {args.eventlog}: {exc.strerror}", file=sys.stderr)
        return 2
    lines: list[dict | str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            lines.append("")
            continue
        try:
            ev = json.loads(stripped)
        except json.JSONDecodeError as exc:
            print(f"{args.eventlog}:{number}: skipped, malformed JSON: {exc.msg}", file=sys.stderr)
            lines.append("")
            continue
        lines.append(ev if isinstance(ev, dict) else stripped)
    try:
        hands = export_event_log(lines, args.profile, args.seats)
    except ProfileError as exc:
        print(f"smart-table hands export: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for number, phh in hands:
            (out / f"hand-{number}.phh").write_text(phh, encoding="utf-8")
    except OSError as exc:
        print(f"smart-table hands export: cannot write to {out}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"{len(hands)} hands written to {out}")
    return 0
