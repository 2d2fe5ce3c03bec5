"""Regenerate tests/golden/golden.json: the sha256 of every golden item (see record.py for the items).

    .venv/bin/python tests/golden/make_golden.py

Run it only when an output is meant to change, and say in the commit which items changed and why.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.golden.record import GOLDEN, record


def main() -> int:
    old = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
    new = record()
    GOLDEN.write_text(json.dumps(new, indent=1) + "\n")
    changed = sorted(k for k in new if old.get(k) != new[k])
    print(f"{len(new)} items written to {GOLDEN}; changed: {', '.join(changed) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
