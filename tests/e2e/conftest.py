"""A real Mosquitto for the whole-table runs: started by the tests on a free port of 127.0.0.1."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

MOSQUITTO = shutil.which("mosquitto") or "/usr/sbin/mosquitto"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """host:port of a Mosquitto of our own (the e2e suite needs the real broker, as CI has it)."""
    if not Path(MOSQUITTO).is_file():
        pytest.fail(f"mosquitto not found at {MOSQUITTO}: install it (apt-get install mosquitto)")
    workdir = tmp_path_factory.mktemp("mosquitto")
    port = free_port()
    conf = workdir / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                    f"log_dest file {workdir}/mosquitto.log\n")
    proc = subprocess.Popen([MOSQUITTO, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if proc.poll() is not None:
            pytest.fail(f"mosquitto exited: {proc.stderr.read().decode(errors='replace') if proc.stderr else ''}")
        time.sleep(0.02)
    else:
        proc.kill()
        pytest.fail(f"mosquitto did not listen on 127.0.0.1:{port}")
    yield f"127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
