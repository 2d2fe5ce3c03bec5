"""`smart-table sim [SCENARIO]` and `smart-table demo`: the whole simulated table, watched live.

    smart-table sim                     # the default scenario (hil/scenarios/demo.yaml)
    smart-table sim cool_mule_misdeals  # a shipped scenario, or a path to a YAML file
    smart-table demo                    # the default scenario, quick settings, a summary at the end

Both run the real table service with the simulated camera, NFC reader, LED panel and a broker,
show a live view in the terminal (rich) and leave an artifacts folder with the event log, the
rulings, the panel and camera pictures at each ruling and an HTML report.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

from controller.mqtt.table_view import ALERT_TYPES  # the rulings a director is alerted to


def add_sim_options(p: argparse.ArgumentParser) -> None:
    """Options shared by `sim`, `demo` and `hil run`."""
    p.add_argument(
        "--artifacts",
        metavar="DIR",
        help="folder for the run's artifacts (default ./sim-artifacts/<scenario>-<timestamp>)",
    )
    p.add_argument(
        "--broker",
        choices=("auto", "mosquitto", "embedded"),
        default="auto",
        help="auto: a private Mosquitto when /usr/sbin/mosquitto exists, else the embedded broker",
    )
    p.add_argument("--width", type=int, default=640, help="rendered camera frame width (default 640)")
    p.add_argument("--height", type=int, default=360, help="rendered camera frame height (default 360)")
    p.add_argument("--fps", type=float, default=25.0, help="camera frames per second, at most (default 25)")
    p.add_argument(
        "--debounce",
        type=int,
        default=2,
        help="frames a card must be seen before the tracker reports it (default 2)",
    )
    p.add_argument("--deck", default="anglo_poker", help="card images: a deck folder name or path")
    p.add_argument("--seed", type=int, default=0, help="rendering seed (default 0)")
    p.add_argument(
        "--step-timeout",
        type=float,
        default=6.0,
        metavar="SECONDS",
        help="how long a step may take to show what it expects (default 6)",
    )
    p.add_argument("--no-captures", action="store_true", help="no pictures at each ruling (faster)")
    p.add_argument("--no-live", action="store_true", help="plain progress lines instead of the live view")


def settings_from(args: argparse.Namespace) -> Any:
    from hil.sim import SimSettings

    problems = []
    if not (160 <= args.width <= 4096 and 120 <= args.height <= 4096):
        problems.append(f"--width/--height: {args.width}x{args.height} is not a usable frame size")
    if not 0 < args.fps <= 120:
        problems.append(f"--fps: must be in (0, 120], got {args.fps}")
    if not 1 <= args.debounce <= 30:
        problems.append(f"--debounce: must be 1..30 frames, got {args.debounce}")
    if not 0.5 <= args.step_timeout <= 120:
        problems.append(f"--step-timeout: must be 0.5..120 seconds, got {args.step_timeout}")
    if problems:
        raise ValueError("; ".join(problems))
    return SimSettings(
        width=args.width,
        height=args.height,
        fps=args.fps,
        debounce=args.debounce,
        deck=args.deck,
        seed=args.seed,
        broker=args.broker,
        step_timeout=args.step_timeout,
        captures=not args.no_captures,
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    sim = subparsers.add_parser(
        "sim",
        help="run the whole table simulated (camera, NFC, panel, broker) through a scenario",
        description="Run the real table service with a simulated camera (rendered frames through the real "
        "vision pipeline), NFC reader, LED panel firmware on a pseudo-terminal and an MQTT broker, "
        "driven by a scenario file; leaves an artifacts folder with an HTML report.",
    )
    sim.add_argument(
        "scenario",
        nargs="?",
        default=None,
        help="a shipped scenario name (see --list) or a YAML file; default: demo",
    )
    sim.add_argument("--list", action="store_true", help="list the shipped scenarios and exit")
    add_sim_options(sim)
    sim.set_defaults(handler=cmd_sim)
    demo = subparsers.add_parser(
        "demo",
        help="the default scenario through the simulated table, with a summary (under a minute)",
        description="What a newcomer runs first: the default scenario through `smart-table sim`.",
    )
    add_sim_options(demo)
    demo.set_defaults(handler=cmd_demo)


def cmd_sim(args: argparse.Namespace) -> int:
    from hil.scenario import DEFAULT_SCENARIO, shipped

    if args.list:
        print_scenario_list(shipped())
        return 0
    return run_cli([args.scenario or DEFAULT_SCENARIO], args)


def print_scenario_list(paths: list[Path]) -> None:
    """`sim --list`: each shipped scenario's name to type, its rulebook, and what it shows."""
    import textwrap

    from hil.scenario import ScenarioError, load

    for path in paths:
        try:
            sc = load(path)
        except ScenarioError as exc:  # a broken shipped file is named, the list goes on
            print(f"{path.stem}\n    (cannot be read: {exc})\n")
            continue
        print(f"{path.stem}  ({sc.profile}, {sc.seats} seats, {len(sc.steps)} steps)")
        about = sc.name + (": " + " ".join(sc.description.split()) if sc.description else "")
        print(textwrap.fill(about, width=100, initial_indent="    ", subsequent_indent="    ") + "\n")


def cmd_demo(args: argparse.Namespace) -> int:
    from hil.scenario import DEFAULT_SCENARIO

    return run_cli([DEFAULT_SCENARIO], args, demo=True)


def run_cli(names: list[str], args: argparse.Namespace, demo: bool = False) -> int:
    """Load every scenario first (a bad file stops before anything starts), then run them in turn."""
    from rich.console import Console

    from hil.scenario import ScenarioError, load
    from hil.sim import SimError

    console = Console(highlight=False, soft_wrap=True)
    try:
        settings = settings_from(args)
        scenarios = [load(n) for n in names]
    except (ScenarioError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    live = not args.no_live and console.is_terminal
    failed = 0
    for scenario in scenarios:
        artifacts = Path(args.artifacts) if args.artifacts and len(scenarios) == 1 else None
        if args.artifacts and len(scenarios) > 1:
            artifacts = Path(args.artifacts) / f"{scenario.slug}-{time.strftime('%Y%m%d-%H%M%S')}"
        try:
            result = asyncio.run(run_one(scenario, settings, artifacts, console, live))
        except SimError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # a part that would not start: say which, not a traceback
            print(
                f"error: the simulated table could not run {scenario.slug}: {type(exc).__name__}: {exc}",
                file=sys.stderr,
            )
            return 2
        print_result(console, result, demo=demo)
        if result.error == INTERRUPTED:
            return 130
        failed += not result.passed
    if len(scenarios) > 1:
        console.print(f"{len(scenarios) - failed} passed, {failed} failed")
    return 1 if failed else 0


async def run_one(scenario: Any, settings: Any, artifacts: Path | None, console: Any, live: bool) -> Any:
    from hil.scenario import ScenarioResult
    from hil.sim import SimTable

    t0 = time.monotonic()
    sim = SimTable(scenario, settings, artifacts)
    if not live:
        console.print(
            f"[bold]{scenario.name}[/] ({scenario.profile}): starting the simulated table in {sim.artifacts}"
        )
    async with sim:
        printed = 0

        def plain_progress() -> None:
            nonlocal printed
            for r in sim.progress.steps[printed:]:
                if r.status == "not run":
                    break
                console.print(_step_line(r))
                printed += 1

        if live:
            from rich.live import Live

            with Live(_view(sim), console=console, refresh_per_second=6, transient=False) as view:

                async def refresh() -> None:
                    while True:
                        view.update(_view(sim))
                        await asyncio.sleep(0.2)

                task = asyncio.create_task(refresh())
                try:
                    result: ScenarioResult = await _interruptible(sim, scenario, None)
                finally:
                    task.cancel()
                view.update(_view(sim))
        else:
            result = await _interruptible(sim, scenario, plain_progress)
        result.seconds = time.monotonic() - t0
        await sim.captured()
        sim.write_artifacts(result)
    return result


INTERRUPTED = "interrupted (Ctrl-C): the steps after the last one shown were not run"


async def _interruptible(sim: Any, scenario: Any, progress: Any) -> Any:
    """Ctrl-C (or SIGTERM) stops the scenario cleanly: the table shuts down and the artifacts so far are
    written, instead of an interrupt landing in a worker thread."""
    import signal

    from hil.scenario import ScenarioResult
    from hil.sim import run_scenario

    loop = asyncio.get_running_loop()
    runner = asyncio.create_task(run_scenario(sim, scenario, progress))
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        runner.cancel()

    signals = (signal.SIGINT, signal.SIGTERM)
    for sig in signals:
        loop.add_signal_handler(sig, interrupt)
    try:
        return await runner
    except asyncio.CancelledError:
        if not interrupted:
            raise
        return ScenarioResult(scenario, sim.progress.steps, artifacts=str(sim.artifacts), error=INTERRUPTED)
    finally:
        for sig in signals:
            loop.remove_signal_handler(sig)


def _step_line(r: Any) -> str:
    mark = {"passed": "[green]PASS[/]", "failed": "[red]FAIL[/]"}.get(r.status, "[dim]----[/]")
    text = f"{mark} {r.step.index:>3} {r.step.title}"
    if r.message:
        text += f"\n         [red]{r.message}[/]"
    return text


def _view(sim: Any) -> Any:
    """The live view: steps, the panel as the players see it, the latest rulings, the parts."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    from controller.sentences import sentence

    p = sim.progress
    head = Table.grid(padding=(0, 2))
    head.add_row(
        f"[bold]{p.scenario}[/]",
        f"rulebook [bold]{p.profile}[/]",
        f"broker {p.broker}",
        f"{time.monotonic() - p.started:5.1f} s",
    )
    steps = Table(show_header=False, box=None, padding=(0, 1))
    lo = max(0, p.current - 8)
    for r in p.steps[lo : lo + 12]:
        colour = {"passed": "green", "failed": "red"}.get(r.status, "dim")
        now = ">" if r.step.index - 1 == p.current and r.status == "not run" else " "
        steps.add_row(now, f"[{colour}]{r.status:7}[/]", f"{r.step.index:>3}", r.step.title)
    panel_text = "?"
    try:
        shown = sim.panel_shown()
        panel_text = shown.get("text") or ""
    except Exception:
        pass
    rulings = Table(show_header=False, box=None, padding=(0, 1), expand=True)
    rulings.add_column(overflow="fold")  # wrapped to the terminal, never cut
    obs = sim.observer
    seen = obs.rulings if obs is not None else []
    names = _names(sim)
    if len(seen) > LIVE_RULINGS:
        rulings.add_row(f"[dim]... {len(seen) - LIVE_RULINGS} earlier rulings (all in the report)[/]")
    for r in seen[-LIVE_RULINGS:]:
        colour = "red" if r.get("type") in ALERT_TYPES or r.get("type") == "error" else "white"
        rulings.add_row(Text(sentence(r, names, p.profile), style=colour))
    parts = []
    try:
        for name, part in sim.service.health.as_dict().items():
            if isinstance(part, dict):
                colour = "green" if part.get("status") in ("ok", "disabled") else "yellow"
                parts.append(f"[{colour}]{name}[/]")
    except Exception:
        pass
    foot = f"camera frames {sim.frames_pushed}   parts: {' '.join(parts)}   artifacts: {p.artifacts}"
    body = Table.grid(padding=(0, 2))
    body.add_row(Panel(steps, title="steps"), Panel(panel_text or " ", title="LED panel display", width=22))
    return Group(head, body, Panel(rulings, title="rulings on MQTT"), foot)


LIVE_RULINGS = 6  # the newest rulings in the live view; the count of older ones is shown
SUMMARY_ALERTS = 10  # alerts printed in the summary; the rest are counted, and all are in the report


def _names(sim: Any) -> dict[int, str]:
    """Who sits where, for the sentences: the scenario's players, then the table's own state."""
    from controller.sentences import names_by_seat

    names = {pl.seat: pl.name for pl in getattr(sim.scenario, "players", ()) if pl.seat}
    try:
        names.update(names_by_seat(sim.service.view.snapshot().get("seats", [])))
    except Exception:  # the view is best effort: a table still starting has no state yet
        pass
    return names


def print_result(console: Any, result: Any, demo: bool = False) -> None:
    from rich.markup import escape

    from controller.sentences import sentence

    colour = "green" if result.passed else "red"
    console.print(f"[{colour}]{result.summary()}[/]")
    rulings = [r for s in result.steps for r in s.rulings]
    if demo or result.passed:
        kinds: dict[str, int] = {}
        for r in rulings:
            kinds[str(r.get("type"))] = kinds.get(str(r.get("type")), 0) + 1
        console.print(
            f"  {len(rulings)} rulings published: " + ", ".join(f"{k} x{n}" for k, n in sorted(kinds.items()))
        )
        alerts = [r for r in rulings if r.get("type") in ("misdeal", "button_misplaced", "dead_hand")]
        names = {pl.seat: pl.name for pl in result.scenario.players if pl.seat}
        profile = result.scenario.profile
        for r in alerts[:SUMMARY_ALERTS]:
            console.print(f"  - {escape(sentence(r, names, profile))}")
        if len(alerts) > SUMMARY_ALERTS:
            console.print(f"  ... and {len(alerts) - SUMMARY_ALERTS} more alerts (all in report.html)")
    if result.artifacts:
        console.print(f"  artifacts: {result.artifacts}/  (open {result.artifacts}/report.html)")
