"""`smart-table hil run SCENARIO...`: run scenarios on the simulated table, pass/fail per step.

    smart-table hil run cool_mule_misdeals bar_league_dead_button
    smart-table hil run --all            # every scenario shipped in hil/scenarios/
    smart-table hil run my-table.yaml --artifacts out/

Exit status 0 when every step of every scenario passed, 1 when one failed (the message names the
step and what was seen instead), 2 for an unusable scenario file or option.
"""

from __future__ import annotations

import argparse


def register(hil_subparsers: argparse._SubParsersAction) -> None:
    from hil.sim_cli import add_sim_options

    run = hil_subparsers.add_parser(
        "run",
        help="run scenario files on the simulated table; pass/fail per step",
        description="Run scenarios (hil/scenarios/*.yaml or files) on the simulated table and report "
        "pass/fail per step. Each leaves an artifacts folder with an HTML report.",
    )
    run.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="shipped scenario names or YAML files")
    run.add_argument("--all", action="store_true", help="every shipped scenario")
    run.add_argument("--check", action="store_true", help="only validate the scenario files, run nothing")
    add_sim_options(run)
    run.set_defaults(handler=cmd_run, no_live=True)


def cmd_run(args: argparse.Namespace) -> int:
    import sys

    from hil.scenario import ScenarioError, load, shipped
    from hil.sim_cli import run_cli

    names = list(args.scenarios)
    if args.all:
        names += [str(p) for p in shipped()]
    if not names:
        print(
            "error: name at least one scenario, or --all (shipped: "
            + ", ".join(p.stem for p in shipped())
            + ")",
            file=sys.stderr,
        )
        return 2
    if args.check:
        bad = 0
        for name in names:
            try:
                sc = load(name)
                print(f"ok {sc.source}: {sc.name} ({sc.profile}, {len(sc.steps)} steps)")
            except ScenarioError as exc:
                print(f"error: {exc}", file=sys.stderr)
                bad += 1
        return 2 if bad else 0
    return run_cli(names, args)
