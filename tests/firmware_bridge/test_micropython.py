"""The firmware on real MicroPython: the WebAssembly port of MicroPython 1.27 runs the firmware's
own files (panelproto.py, panelfw.py) through micropython/check_firmware.py, and the frames it
encodes must be byte-for-byte what the host encodes.

Needs Node.js; the MicroPython package comes from the npm registry into a cache folder on first
use. Without node or the package the test is skipped (mpy-cross still checks the syntax).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from firmware_bridge.firmware import panelfw
from firmware_bridge.firmware import panelproto as proto

HERE = Path(__file__).parent / "micropython"
PACKAGE = "@micropython/micropython-webassembly-pyscript"
VERSION = "1.27.0"


def micropython_modules() -> Path:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: MicroPython (WebAssembly) cannot run here")
    cache = Path(
        os.environ.get(
            "SMART_TABLE_MPY_CACHE", Path.home() / ".cache" / "smart-table" / f"micropython-wasm-{VERSION}"
        )
    )
    modules = cache / "node_modules"
    if not (modules / PACKAGE / "micropython.mjs").exists():
        npm = shutil.which("npm")
        if npm is None:
            pytest.skip("npm is not installed: cannot fetch the MicroPython WebAssembly port")
        cache.mkdir(parents=True, exist_ok=True)
        try:
            subprocess.run(
                [npm, "install", "--prefix", str(cache), "--no-save", "--silent", f"{PACKAGE}@{VERSION}"],
                check=True,
                capture_output=True,
                timeout=240,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            pytest.skip(f"could not install {PACKAGE}: {exc}")
    return modules


def test_firmware_runs_on_micropython_and_speaks_the_same_bytes():
    modules = micropython_modules()
    proc = subprocess.run(
        ["node", str(HERE / "run.mjs"), str(Path(panelfw.__file__).parent), str(HERE / "check_firmware.py")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NODE_PATH": str(modules)},
    )
    assert proc.returncode == 0, proc.stderr + proc.stdout
    lines = proc.stdout.splitlines()
    assert lines[-1].startswith("OK ") and int(lines[-1].split()[1]) > 400, proc.stdout
    vectors = {
        line.split()[1]: bytes.fromhex(line.split()[2]) for line in lines if line.startswith("VECTOR ")
    }
    scene = proto.scene_payload(
        [(255, 0, 0, 2, 300, 0), (0, 0, 255, 1, 0, 0), (0, 200, 255, 5, 450, 600)], "MISDEAL\nseat 2"
    )
    expected = {
        "scene": proto.encode_frame(proto.SCENE, 513, scene),
        "hello": proto.encode_frame(proto.HELLO, 1, proto.hello_payload((1, 0, 0), 70000, 24, 3)),
        "heartbeat": proto.encode_frame(
            proto.HEARTBEAT, 65535, proto.panel_heartbeat_payload(7, 123456, 9, 2, True)
        ),
        "button": proto.encode_frame(proto.BUTTON, 9, proto.button_payload(1, 7)),
        "nak": proto.encode_frame(proto.NAK, 10, proto.nak_payload(513, proto.NAK_STALE_SEQ)),
        "fw_hello_after_offline": proto.encode_frame(
            proto.HELLO, 1, proto.hello_payload(panelfw.FW_VERSION, 1, 12, 3)
        ),
    }
    assert vectors == expected
    (frame,) = proto.FrameDecoder().feed(vectors["scene"])
    assert proto.parse_scene(frame.payload)[1] == "MISDEAL\nseat 2"
