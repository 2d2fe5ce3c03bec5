"""A real Mosquitto for the whole-table runs: started by the tests on a free port of 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from controller.mqtt.mosquitto import MOSQUITTO, Mosquitto, installed


@pytest.fixture(scope="session")
def mosquitto(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """host:port of a Mosquitto of our own (the e2e suite needs the real broker, as CI has it)."""
    if not installed():
        pytest.fail(f"mosquitto not found at {MOSQUITTO}: install it (apt-get install mosquitto)")
    with Mosquitto(tmp_path_factory.mktemp("mosquitto"), persistence=False) as broker:
        yield f"127.0.0.1:{broker.port}"
