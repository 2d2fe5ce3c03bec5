"""`smart-table floor --config venue.toml`: run the venue's floor service (clock, seating, results, page)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "floor",
        help="run the venue's floor: the clock, balancing, event-wide places and the director's web page",
        description="One service per venue: sends each level to every table, places busted players across "
        "the event, proposes balancing and breaking moves, and serves the director's page.",
    )
    p.add_argument("--config", required=True, help="the floor's venue.toml")
    p.add_argument("--port", type=int, default=None, help="web page port (default: web.port)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import dataclasses
    import logging
    import signal

    from controller.floor.config import FloorConfigError, load_floor_config
    from controller.floor.service import FloorService

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stderr)
    try:
        cfg = load_floor_config(args.config)
    except FloorConfigError as exc:
        print(f"smart-table floor: {exc}", file=sys.stderr)
        return 2
    if args.port is not None:
        cfg = dataclasses.replace(cfg, web_port=args.port)

    try:
        FloorService.check(cfg)
    except FloorConfigError as exc:
        print(f"smart-table floor: {exc}", file=sys.stderr)
        return 2

    async def main() -> None:
        service = FloorService(cfg)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        print(
            f"floor: http://{cfg.web_bind}:{cfg.web_port}/  (venue {cfg.venue}, event {cfg.event})",
            file=sys.stderr,
        )
        await service.run(stop)

    asyncio.run(main())
    return 0
