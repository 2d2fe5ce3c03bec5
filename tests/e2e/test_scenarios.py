"""Every shipped scenario on the whole simulated table, against a real Mosquitto.

The scenarios run a few at a time in one event loop (each is mostly waiting on the camera's frames
and the broker), then each gets its own test so a failure names its scenario, step and what was seen.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from hil.scenario import ScenarioResult, load, shipped
from hil.sim import SimSettings, SimTable, run_scenario

SCENARIOS = [p.stem for p in shipped() if p.stem != "demo"]  # the demo runs through the CLI (test_demo.py)
AT_ONCE = 3


async def _run(name: str, broker: str, root: Path, gate: asyncio.Semaphore) -> ScenarioResult:
    scenario = load(name)
    settings = SimSettings(external_broker=broker, captures=name == SCENARIOS[0], step_timeout=10.0)
    async with gate, SimTable(scenario, settings, root / name) as sim:
        result = await run_scenario(sim, scenario)
        await sim.captured()
        sim.write_artifacts(result)
        return result


@pytest.fixture(scope="module")
def results(
    mosquitto: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, ScenarioResult | BaseException]:
    root = tmp_path_factory.mktemp("sim-artifacts")

    async def main() -> dict[str, ScenarioResult | BaseException]:
        gate = asyncio.Semaphore(AT_ONCE)
        outcomes = await asyncio.gather(
            *(_run(n, mosquitto, root, gate) for n in SCENARIOS), return_exceptions=True
        )
        return dict(zip(SCENARIOS, outcomes, strict=True))

    return asyncio.run(main())


@pytest.mark.timeout(400)
@pytest.mark.parametrize("name", SCENARIOS)
def test_shipped_scenario_passes_on_the_simulated_table(results, name):
    outcome = results[name]
    if isinstance(outcome, BaseException):
        raise outcome
    assert outcome.passed, outcome.summary()
    assert outcome.steps and all(s.status == "passed" for s in outcome.steps)
    artifacts = Path(outcome.artifacts or "")
    rulings = [json.loads(x) for x in (artifacts / "rulings.jsonl").read_text().splitlines()]
    assert any(r["type"] == "hand" for r in rulings)
    summary = json.loads((artifacts / "summary.json").read_text())
    assert summary["passed"] is True and summary["broker"].startswith("external 127.0.0.1:")


def test_the_camera_saw_every_card_of_the_clean_hand(results):
    """The deals the engine ruled on came from the vision pipeline, not from the scenario."""
    outcome = results["cool_mule_misdeals"]
    assert not isinstance(outcome, BaseException)
    events = [
        json.loads(x) for x in (Path(outcome.artifacts or "") / "events.jsonl").read_text().splitlines()
    ]
    deals = [e for e in events if e["type"] == "deal"]
    assert deals and all(e["source"] == "camera" for e in deals)
    assert [e["seat"] for e in deals[:10]] == [2, 3, 4, 5, 1] * 2
    checkins = [e for e in events if e["type"] == "checkin"]
    assert {c["player"] for c in checkins if c["accepted"]} == {"P1", "P2", "P3", "P4", "P5"}
    assert all(c["source"] == "nfc" for c in checkins)
    # Each part of the table spoke through its real path.
    sources = {(e["type"], e["source"]) for e in events}
    assert {
        ("seat", "nfc"),
        ("hand_start", "panel"),
        ("button", "director"),
        ("hand_end", "director"),
        ("expose", "camera"),
        ("board", "camera"),
        ("button_seen", "camera"),
    } <= sources
    assert not any(e["type"] == "seat" and e["source"] != "nfc" for e in events)
