"""The published `state` before and after issue 13's one fold: the service's own fold of the lines
merged with the engine's snapshot (controller/service/snapshot.py as of commit 29edcb7, read from git)
against the engine's snapshot alone (TableState), compared byte for byte after every line of seeded
sessions of all five profiles, as generated and mutated (lines dropped, repeated, swapped: the error
paths), entered and observed. Prints the count of states compared and every kind of difference.

    .venv/bin/python bench/state_golden.py [HANDS]
"""

from __future__ import annotations

import importlib.util
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.gen_session import generate  # noqa: E402
from controller.rules.engine import TableEngine  # noqa: E402
from controller.service.snapshot import TableState  # noqa: E402

BEFORE = "29edcb7"
PROFILES = ("bluff_street", "cool_mule", "bar_league", "dragons_den", "corner_pocket")


def old_module():
    text = subprocess.run(
        ["git", "show", f"{BEFORE}:controller/service/snapshot.py"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    path = Path(tempfile.mkdtemp()) / "old_snapshot.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("old_snapshot", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def mutate(lines: list[str], rng: random.Random) -> list[str]:
    out: list[str] = []
    for line in lines:
        r = rng.random()
        if r < 0.01:
            continue
        out.append(line)
        if r > 0.99:
            out.append(line)
        elif r > 0.98 and len(out) > 1:
            out[-1], out[-2] = out[-2], out[-1]
    return out


def main(hands: int) -> int:
    old = old_module()
    diffs: dict[tuple, list] = {}
    total = 0
    for profile in PROFILES:
        for actions in ("entered", "observed"):
            for variant in ("as generated", "mutated"):
                lines = generate(hands=hands, seats=9, profile=profile, seed=3)
                if variant == "mutated":
                    lines = mutate(lines, random.Random(5))
                engine = TableEngine(profile, 9, actions=actions)
                view, new = old.TableView(9), TableState(engine.snapshot)
                for n, text in enumerate(lines, 1):
                    line = json.loads(text)
                    if actions == "observed" and line.get("type") == "table":
                        line = {**line, "actions": "observed"}
                        text = json.dumps(line)
                    outs = engine.feed(text, n)
                    if not any(o.get("type") == "error" for o in outs):
                        view.apply_input(line)
                        new.apply_input(line)
                    for o in outs:
                        view.apply_output(o)
                        new.apply_output(o)
                    before = json.dumps(old.merge_engine_snapshot(view.snapshot(), engine.snapshot()))
                    after = json.dumps(new.snapshot())
                    total += 1
                    if before != after:
                        a, b = json.loads(before), json.loads(after)
                        keys = tuple(sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))) or (
                            "key order",
                        )
                        d = diffs.setdefault((profile, actions, variant, keys), [0, None])
                        d[0] += 1
                        d[1] = d[1] or (n, text, {k: (a.get(k), b.get(k)) for k in keys if k in a or k in b})
    print(f"states compared: {total}, differing: {sum(c for c, _ in diffs.values())}")
    for key, (count, example) in diffs.items():
        print(" ", key, count, "first:", str(example)[:400])
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 200))
