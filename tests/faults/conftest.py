"""The fault suite's broker: a real Mosquitto of its own on a free port, sized for floods."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.mqtt.mosquitto import Mosquitto
from controller.mqtt.mosquitto import installed as mosquitto_installed
from tests.faults.harness import FLOOD_BROKER


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    if not mosquitto_installed():
        pytest.skip("mosquitto is not installed")
    (tmp_path / "broker").mkdir()
    mosquitto = Mosquitto(tmp_path / "broker", extra=FLOOD_BROKER)
    mosquitto.start()
    yield mosquitto
    mosquitto.kill()
