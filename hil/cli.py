"""Commands of the simulated table: `smart-table hil ...`, `smart-table sim`, `smart-table demo`.

The `hil` group collects sub-commands from several modules (each with `register(hil_subparsers)`),
so the simulated camera, NFC reader, panel and scenario runner stay in their own files.
"""

from __future__ import annotations

import argparse

from hil import nfc_cli, scenario_cli, sim_cli

HIL_COMMAND_MODULES = (
    nfc_cli,  # hil nfc tap ...
    scenario_cli,  # hil run SCENARIO...
)


def register(subparsers: argparse._SubParsersAction) -> None:
    hil = subparsers.add_parser("hil", help="hardware in the loop: simulated sensors and scenarios")
    hil_sub = hil.add_subparsers(dest="hil_command", metavar="HIL_COMMAND")
    hil.set_defaults(handler=lambda args: hil.print_help() or 2)
    for module in HIL_COMMAND_MODULES:
        module.register(hil_sub)
    sim_cli.register(subparsers)  # sim, demo
