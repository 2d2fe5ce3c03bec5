"""Commands of the simulated table: `smart-table hil ...`, `smart-table sim`, `smart-table demo`.

The `hil` group collects sub-commands from several modules (each with `register(hil_subparsers)`),
so the simulated camera, NFC reader, panel and scenario runner stay in their own files.
"""

from __future__ import annotations

import argparse
import importlib

HIL_COMMAND_MODULES = (
    "hil.nfc_cli",  # hil nfc tap ...
    "hil.scenario_cli",  # hil run SCENARIO...
)


def register(subparsers: argparse._SubParsersAction) -> None:
    hil = subparsers.add_parser("hil", help="hardware in the loop: simulated sensors and scenarios")
    hil_sub = hil.add_subparsers(dest="hil_command", metavar="HIL_COMMAND")
    hil.set_defaults(handler=lambda args: hil.print_help() or 2)
    for name in HIL_COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name and name.startswith(exc.name):
                continue
            raise
        module.register(hil_sub)
    try:
        top = importlib.import_module("hil.sim_cli")
    except ModuleNotFoundError as exc:
        if not (exc.name and "hil.sim_cli".startswith(exc.name)):
            raise
    else:
        top.register(subparsers)  # sim, demo
