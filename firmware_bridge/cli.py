"""`smart-table panel ...`: render the panel to a picture, run a simulated panel, drive a panel.

panel render --signal misdeal -o misdeal.png    one signal of the language, as a picture
panel render --all docs/panel                   every signal (the pictures of docs/panel.md)
panel render --lines events.jsonl -o now.png    what the panel shows after these lines
panel render --scene scene.json -o scene.png    a scene given as JSON (Scene.to_dict form)
panel sim [--seats N]                           a simulated panel on a pty; prints its port
panel drive --port PORT [FILE|-]                fold table-event lines into scenes and show them;
                                                panel buttons come out as lines on stdout
panel status --port PORT                        handshake and print the panel's health
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def register(subparsers: argparse._SubParsersAction) -> None:
    panel = subparsers.add_parser("panel", help="LED panel: render pictures, simulate, drive over serial")
    sub = panel.add_subparsers(dest="panel_command", metavar="PANEL_COMMAND")
    panel.set_defaults(handler=lambda args: panel.print_help() or 2)

    render = sub.add_parser("render", help="draw the table rim as the panel lights it, to a PNG")
    what = render.add_mutually_exclusive_group(required=True)
    what.add_argument("--signal", metavar="NAME", help="one signal of the language (see --list)")
    what.add_argument("--all", metavar="DIR", help="write one PNG per signal into DIR")
    what.add_argument("--lines", metavar="FILE", help="table-event lines (JSONL, - for stdin) to fold first")
    what.add_argument("--scene", metavar="FILE", help="a scene as JSON")
    what.add_argument("--list", action="store_true", help="list the signal names")
    render.add_argument("--seats", type=int, default=10)
    render.add_argument("--leds-per-seat", type=int, default=8)
    render.add_argument("-o", "--output", metavar="PNG", help="picture to write (default: NAME.png)")
    render.set_defaults(handler=_render)

    sim = sub.add_parser("sim", help="run a simulated panel (the real firmware) on a pseudo-terminal")
    sim.add_argument("--seats", type=int, default=10)
    sim.add_argument("--baudrate", type=int, default=115200)
    sim.add_argument("--png", metavar="PATH", help="re-render this picture whenever the panel changes")
    sim.set_defaults(handler=_sim)

    drive = sub.add_parser("drive", help="show table-event lines on a panel; print its button events")
    drive.add_argument("--port", required=True, help="serial device, pty or pyserial URL")
    drive.add_argument("--seats", type=int, default=10)
    drive.add_argument("--baudrate", type=int, default=115200)
    drive.add_argument("file", nargs="?", default="-", help="JSONL input (default: stdin)")
    drive.set_defaults(handler=_drive)

    status = sub.add_parser("status", help="handshake with a panel and print its health as JSON")
    status.add_argument("--port", required=True)
    status.add_argument("--seats", type=int, default=10)
    status.add_argument("--baudrate", type=int, default=115200)
    status.add_argument("--timeout", type=float, default=3.0)
    status.set_defaults(handler=_status)


def _read_lines(source: str) -> list[tuple[int, Any]]:
    """(line number, parsed JSON) for every non-blank, non-comment line; raises ValueError naming the line."""
    text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        raw = raw.strip()
        if not raw or raw.startswith("#"):
            continue
        try:
            out.append((number, json.loads(raw)))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{source}:{number}: not JSON: {exc.msg} at column {exc.colno}") from None
    return out


def signal_picture(name: str, leds_per_seat: int = 8) -> dict[str, Any]:
    """What the picture of one catalogue signal (or `offline`) shows: title, status text, seat labels and
    every LED's RGB colour, from the firmware's own code. docs/panel/index.json keeps these beside the
    PNGs, so a test can tell a stale picture from one whose text OpenCV merely draws a little differently."""
    from firmware_bridge import catalog
    from firmware_bridge.render import offline_segments, scene_labels, scene_segments
    from firmware_bridge.signals import SignalState

    if name == catalog.OFFLINE:
        segments, text = offline_segments(catalog.SEATS, leds_per_seat)
        title, labels = "offline (no heartbeat from the table computer)", None
    else:
        _, lines = catalog.SIGNALS[name]
        state = SignalState(catalog.SEATS)
        for line in lines:
            state.apply(line)
        segments, text = scene_segments(state.scene, leds_per_seat), state.scene.text
        title, labels = name, scene_labels(state.scene)
    return {
        "title": title,
        "text": text,
        "labels": labels,
        "leds": [[list(p) for p in seat] for seat in segments],
    }


def render_signal(name: str, path: str | Path, leds_per_seat: int = 8) -> Path:
    """Render one catalogue signal (or `offline`) to `path`."""
    return _draw_picture(signal_picture(name, leds_per_seat), path)


def _draw_picture(pic: dict[str, Any], path: str | Path) -> Path:
    from firmware_bridge.render import render_rim

    return render_rim(pic["leds"], pic["text"], path, labels=pic["labels"], title=pic["title"])


def _render(args: argparse.Namespace) -> int:
    from firmware_bridge import catalog

    names = [*catalog.SIGNALS, catalog.OFFLINE]
    if args.list:
        for name in names:
            print(name)
        return 0
    if args.signal is not None:
        if args.signal not in names:
            print(f"error: unknown signal {args.signal!r}; one of: {', '.join(names)}", file=sys.stderr)
            return 2
        out = render_signal(args.signal, args.output or f"{args.signal}.png", args.leds_per_seat)
        print(out)
        return 0
    if args.all is not None:
        index = []
        for name in names:
            pic = signal_picture(name, args.leds_per_seat)
            print(_draw_picture(pic, Path(args.all) / f"{name}.png"))
            index.append(f"{json.dumps(name)}: {json.dumps(pic)}")
        index_path = Path(args.all) / "index.json"
        index_path.write_text("{\n" + ",\n".join(index) + "\n}\n", encoding="utf-8")  # a line a picture
        print(index_path)
        return 0
    from firmware_bridge.render import render_scene
    from firmware_bridge.scene import Scene, SceneError
    from firmware_bridge.signals import SignalState

    try:
        if args.scene is not None:
            scene = Scene.from_dict(json.loads(Path(args.scene).read_text(encoding="utf-8")))
        else:
            state = SignalState(args.seats)
            for number, line in _read_lines(args.lines):
                if state.apply(line) is None and state.last_error:
                    print(f"warning: {args.lines}:{number}: {state.last_error}", file=sys.stderr)
                    state.last_error = None
            scene = state.scene
    except (OSError, ValueError, SceneError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(render_scene(scene, args.output or "panel.png", leds_per_seat=args.leds_per_seat))
    return 0


def _sim(args: argparse.Namespace) -> int:
    import asyncio

    from controller import devices

    try:  # the simulated panel is a device like any other (registered as `panel.sim`);
        # Any: beyond devices.PanelLink, this command uses the simulator's own wait_for/render_png/log_path
        link: Any = devices.open_panel("sim", devices.PanelOptions(seats=args.seats, baudrate=args.baudrate))
    except devices.DeviceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    async def run() -> None:
        async with link as panel:
            print(f"panel port: {panel.port}", flush=True)
            print(f"firmware log: {panel.log_path}", flush=True)
            last = None
            while True:
                state = await panel.wait_for(lambda s, last=last: s != last, timeout=3600)
                last = state
                print(json.dumps({k: state.get(k) for k in ("mode", "boot_counter", "text")}), flush=True)
                if args.png:
                    await asyncio.sleep(0.06)
                    panel.render_png(args.png)

    asyncio.run(run())
    return 0


def _drive(args: argparse.Namespace) -> int:
    import asyncio

    from firmware_bridge.bridge import PanelBridge
    from firmware_bridge.signals import SignalState

    try:
        lines = _read_lines(args.file)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    async def run() -> int:
        state = SignalState(args.seats)
        async with PanelBridge(args.port, args.seats, baudrate=args.baudrate) as bridge:

            async def forward() -> None:
                async for event in bridge.events():
                    print(json.dumps(event), flush=True)

            forwarder = asyncio.create_task(forward())
            await bridge.wait_connected(5.0)
            for number, line in lines:
                scene = state.apply(line)
                if scene is None:
                    if state.last_error:
                        print(f"warning: {args.file}:{number}: {state.last_error}", file=sys.stderr)
                        state.last_error = None
                    continue
                if not await bridge.show(scene):
                    print(f"warning: {args.file}:{number}: panel did not acknowledge", file=sys.stderr)
            forwarder.cancel()
            print(json.dumps(bridge.health), file=sys.stderr)
            return 0 if bridge.health["connected"] else 1

    return asyncio.run(run())


def _status(args: argparse.Namespace) -> int:
    import asyncio

    from firmware_bridge.bridge import PanelBridge

    async def run() -> int:
        async with PanelBridge(args.port, args.seats, baudrate=args.baudrate) as bridge:
            ok = await bridge.wait_connected(args.timeout)
            print(json.dumps(bridge.health, indent=2))
            return 0 if ok else 1

    return asyncio.run(run())
