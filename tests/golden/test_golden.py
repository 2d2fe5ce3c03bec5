"""Byte-identity of the engine's and the CLIs' outputs against the golden record (tests/golden/golden.json).

A failure names the item whose bytes changed: an `in` item means the seeded input itself changed (the
session generator or a mutator), an `out`/CLI item that the same input now gives other output. Only the
temporary output folder's path in `hands export`'s stdout is normalised (record.py); nothing else is.
Regenerate with tests/golden/make_golden.py only for a change of output that is meant.
"""

from __future__ import annotations

import json

import pytest

from tests.golden.record import GOLDEN, digest, items

EXPECTED = json.loads(GOLDEN.read_text())
ITEMS = dict(items())


def test_the_record_covers_every_item():
    assert sorted(EXPECTED) == sorted(ITEMS)


@pytest.mark.parametrize("name", list(ITEMS))
def test_item_is_byte_identical(name):
    assert digest(ITEMS[name]()) == EXPECTED[name], f"golden item {name} changed"
