"""A real Mosquitto of our own on a free port of 127.0.0.1, for tests and benchmarks.

The tables of a venue talk to Mosquitto; tests of outages and the service benchmark start one
the same way: its own config, data and log in a work folder, killed and restarted at will.
"""

from __future__ import annotations

import getpass
import shutil
import socket
import subprocess
import time
from pathlib import Path

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def installed() -> bool:
    return Path(MOSQUITTO).is_file()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 5.0, proc: subprocess.Popen | None = None) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the process listening on {port} exited with status {proc.returncode}")
        time.sleep(0.02)
    raise TimeoutError(f"nothing listens on port {port}")


class Mosquitto:
    """`start()`, `kill()` (an outage) and `start()` again; `extra` is appended to its config."""

    def __init__(self, workdir: Path, extra: str = "", persistence: bool = True) -> None:
        self.port = free_port()
        self.workdir = Path(workdir)
        self.conf = self.workdir / "mosquitto.conf"
        self.log = self.workdir / "broker.log"
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\n"
            # started as root, Mosquitto would drop to its own user and lose access to these files
            + f"user {getpass.getuser()}\n"
            + ("allow_anonymous true\n" if "allow_anonymous" not in extra else "")
            + (
                f"persistence true\npersistence_location {self.workdir}/\nautosave_interval 1\n"
                if persistence
                else "persistence false\n"
            )
            + "log_dest stderr\nlog_type error\nlog_type warning\n"
            + extra
        )
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [MOSQUITTO, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=log
            )
        try:
            wait_port(self.port, 10.0, self.proc)
        except (RuntimeError, TimeoutError) as exc:
            self.kill()
            raise RuntimeError(
                f"mosquitto did not start: {exc}; its log: {self.log.read_text()[-2000:]}"
            ) from None

    def kill(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def __enter__(self) -> Mosquitto:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()
