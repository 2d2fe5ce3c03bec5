"""Record what a real table publishes for three hands and a misdeal (the fixture of
tests/service/test_table_view.py): every MQTT message under its prefix, in the order a subscriber got
them, in table_messages.jsonl, and the table's answers to `cmd/replay` since 0 in
table_messages.replay.json. From the repository root:

    .venv/bin/python tests/service/data/record_table_messages.py
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from bench.gen_session import generate  # noqa: E402
from controller.service.app import TableService  # noqa: E402
from tests.service.conftest import table_config  # noqa: E402
from tests.service.mqtt_helpers import Recorder  # noqa: E402


def published(rec: Recorder, suffix: str, number: int) -> bool:
    return any(json.loads(p).get("ruling_seq") == number for t, p, _ in rec.messages if t.endswith(suffix))


async def main(out: Path) -> None:
    lines = [json.loads(x) for x in generate(hands=3, seats=6, profile="cool_mule", seed=11)][1:]
    lines[0]["name"] = "Ann"  # a display name, which only the service knows
    lines += [{"type": "hand_start"}, {"type": "deal", "seat": 5, "card": "Kd"}]  # a flash: misdeal
    with tempfile.TemporaryDirectory() as d:
        async with TableService(table_config(Path(d))) as service:  # noqa: SIM117 (the recorder needs its port)
            async with Recorder(service.broker.port, service.topics.prefix) as rec:
                for line in lines:
                    await service.inject(line)
                n = service.ruling_no
                await rec.wait_for(lambda r: published(r, "/rulings", n) and published(r, "/state", n))
                replay = {s: service.replay(s, 0) for s in ("events", "rulings")}
    with out.open("w") as f:
        for t, p, _ in rec.messages:
            f.write(json.dumps({"topic": t, "payload": p.decode()}) + "\n")
    out.with_suffix(".replay.json").write_text(json.dumps(replay, indent=0) + "\n")


if __name__ == "__main__":
    asyncio.run(main(HERE / "table_messages.jsonl"))
