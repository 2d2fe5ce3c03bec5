"""`smart-table rules replay` exactly as the spec's CLI section says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.rules.tablekit import SPEC_INPUT as SPEC_LINES
from tests.rules.tablekit import SPEC_OUTPUT

SPEC_INPUT = "".join(json.dumps(line) + "\n" for line in SPEC_LINES)


def smart_table(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "controller.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_spec_example_from_a_file(tmp_path: Path):
    f = tmp_path / "session.jsonl"
    f.write_text(SPEC_INPUT)
    r = smart_table("rules", "replay", str(f))
    assert r.returncode == 0, r.stderr
    assert [json.loads(line) for line in r.stdout.splitlines()] == SPEC_OUTPUT


def test_standard_input_and_profile_options():
    body = "\n".join(SPEC_INPUT.splitlines()[1:])  # no table line: --profile and --seats decide
    r = smart_table("rules", "replay", "--profile", "corner_pocket", "--seats", "6", "-", stdin=body)
    assert r.returncode == 0
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert lines[1] == {"type": "misdeal", "reason": "first_cards_exposed", "rule": "corner_pocket:Dealing.E"}


def test_default_profile_is_bluff_street_and_rejections_keep_exit_status_zero():
    r = smart_table(
        "rules",
        "replay",
        "-",
        stdin='{"type":"seat","seat":1,"player":"A"}\nnot json\n{"type":"seat","seat":11,"player":"B"}\n',
    )
    assert r.returncode == 0
    errors = [json.loads(x) for x in r.stdout.splitlines()]
    assert [e["line"] for e in errors] == [2, 3]
    assert "does not exist at a 10-seat table" in errors[1]["message"]  # --seats defaults to 10


def test_unusable_arguments_and_unreadable_file_exit_2(tmp_path: Path):
    assert smart_table("rules", "replay", str(tmp_path / "missing.jsonl")).returncode == 2
    assert smart_table("rules", "replay", "--profile", "vegas", "-", stdin="").returncode == 2
    assert smart_table("rules", "replay", "--seats", "1", "-", stdin="").returncode == 2
    assert smart_table("rules", "replay", "--seats", "ten", "-", stdin="").returncode == 2


def test_pretty_output_reads_as_a_ruling():
    r = smart_table("rules", "replay", "--pretty", "-", stdin=SPEC_INPUT)
    assert "MISDEAL" in r.stdout and "cool_mule:5.g" in r.stdout
