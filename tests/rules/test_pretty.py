"""`rules replay --pretty` turns every output type the engine emits into a sentence, never a raw dump."""

from __future__ import annotations

from bench.gen_session import generate
from controller.rules.engine import TableEngine
from controller.rules.pretty import describe


def test_every_output_of_a_long_session_reads_as_a_sentence():
    engine = TableEngine("bluff_street", 9)
    kinds = set()
    for n, text in enumerate(generate(hands=60, seed=3), 1):
        for line in engine.feed(text, n):
            sentence = describe(line)
            kinds.add(line["type"])
            assert "type=" not in sentence, sentence  # the key=value fallback is for unknown types only
    assert {"hand", "pots", "award"} <= kinds
