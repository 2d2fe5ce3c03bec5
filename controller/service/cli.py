"""`smart-table run` (the table service) and `smart-table top` (a live view of a table over MQTT)."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run",
        help="run the table service (camera, NFC, panel, rules engine, MQTT, event log)",
        description="Run the table service. Without --config it runs the simulated table with an "
        "embedded MQTT broker (the zero-setup demo).",
    )
    run.add_argument("--config", metavar="FILE", help="table.toml (default: the simulated table)")
    run.add_argument("--fresh", action="store_true", help="archive the event log and start a new one")
    run.add_argument("--check", action="store_true", help="validate the configuration and exit")
    run.add_argument("--log-level", help="override service.log_level")
    run.set_defaults(handler=_run)

    top = subparsers.add_parser(
        "top",
        help="live terminal view of a table from its MQTT topics",
        description="Show a table live: seats, button, blinds, phase, last rulings, panel, health. "
        "Broker and table come from --config, or from the options.",
    )
    top.add_argument("--config", metavar="FILE", help="the table's table.toml (broker, venue, table id)")
    top.add_argument("--host", help="broker host (default: the config's, or 127.0.0.1)")
    top.add_argument("--port", type=int, help="broker port")
    top.add_argument("--venue", help="venue topic level")
    top.add_argument("--table", help="table id topic level")
    top.add_argument("--username", help="broker user name")
    top.add_argument("--password-file", help="file holding the broker password")
    top.add_argument("--once", action="store_true", help="print one view after --wait seconds and exit")
    top.add_argument("--wait", type=float, default=1.0, help="seconds to collect before --once prints")
    top.set_defaults(handler=_top)


def _setup_logging(level: str) -> None:
    import logging

    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s level=%(levelname)s logger=%(name)s %(message)s",
        stream=sys.stderr,
    )


def _run(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from controller.service.app import ServiceError, TableService, archive_log
    from controller.service.config import load_config_reporting
    from controller.service.memory import limit_heap_growth

    cfg = load_config_reporting(args.config)
    if cfg is None:
        return 2
    if args.check:
        print(
            f"{cfg.source}: ok (table {cfg.table.venue}/{cfg.table.id}, {cfg.table.seats} seats, "
            f"profile {cfg.table.profile})"
        )
        return 0
    _setup_logging(args.log_level or cfg.service.log_level)
    limit_heap_growth()
    if args.fresh:
        archived = archive_log(cfg)
        if archived:
            print(f"event log archived as {archived}", file=sys.stderr)

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            async with TableService(cfg):
                await stop.wait()
        except ServiceError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0

    return asyncio.run(main())


def _top(args: argparse.Namespace) -> int:
    from controller.service.top import TopOptions, run_top

    try:
        options = TopOptions.from_args(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return run_top(options)
