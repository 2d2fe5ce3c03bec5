"""`smart-table`: one console script, one sub-command group per package.

Each package owns its commands in its own `cli` module with a `register(subparsers)` function, so
the packages stay independent and importing the CLI stays cheap: heavy imports (OpenCV, nfcpy,
aiomqtt) happen inside the command handlers, never at registration.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Modules that add top-level commands. Order is the order of `smart-table --help`.
COMMAND_MODULES = (
    "controller.rules.cli",  # rules replay, hands replay/export
    "controller.registry.cli",  # register ...
    "controller.service.cli",  # run, top
    "vision.cli",  # vision enroll/detect/calibrate
    "firmware_bridge.cli",  # panel ...
    "controller.floor.cli",  # floor
    "controller.doctor",  # doctor: an installed table's checks, one line each with the fix
    "controller.homeassistant",  # homeassistant: MQTT discovery for Home Assistant
)
# Packages that sit on top of the controller add their command modules as entry points of this group
# (pyproject.toml: the simulated table's commands), listed after the ones above by entry-point name.
COMMAND_GROUP = "smart_table.commands"


def command_modules() -> list[str]:
    """COMMAND_MODULES, then the modules registered in COMMAND_GROUP (sorted by entry-point name)."""
    from importlib.metadata import entry_points

    added = [ep.value for ep in sorted(entry_points(group=COMMAND_GROUP), key=lambda ep: ep.name)]
    return [*COMMAND_MODULES, *(m for m in added if m not in COMMAND_MODULES)]


# Every command exits with one of these (issue 18); `smart-table --help` and README.md list them.
EXIT_OK = 0  # it did what was asked; every check passed
EXIT_FAILED = 1  # it ran, and a check failed (a hand differs, a scenario step failed, a doctor check)
EXIT_USAGE = 2  # bad usage or bad input: an unknown option, a missing or unreadable file, a bad config
EXIT_CODES = """exit codes:
  0  success: it did what was asked, every check passed
  1  it ran and a check failed (a hand that differs, a scenario step, a doctor check, a broker unreachable)
  2  bad usage or bad input (an unknown option, a missing or unreadable file, a bad configuration)
  130  interrupted (Ctrl-C)"""


def version() -> str:
    """The installed distribution's version (pyproject.toml's), or the source tree's when not installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("smart-table")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        return str(tomllib.loads(pyproject.read_text())["project"]["version"])


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="smart-table",
        description="Smart poker table controller: sees the felt, rules on misdeals and the dead button, "
        "shows rulings on the LED panel and publishes them over MQTT.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"smart-table {version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules():
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(handler(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `smart-table ... | head` closes our stdout early; that is not an error.
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
