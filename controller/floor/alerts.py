"""A table's rulings as the floor's alerts: the one wording of controller/sentences.py (the `--pretty`
sentences, rule cited), with the table named. Which rulings are alerts: table_view.ALERT_TYPES."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.sentences import provenance
from controller.sentences import sentence as ruling_sentence

__all__ = ["provenance", "sentence"]


def sentence(table: str, ruling: dict[str, Any], profile: str, names: Mapping[int, str] | None = None) -> str:
    """'T2: MISDEAL: one of the first cards off the deck was exposed. ...  [cool_mule:5.g]'"""
    return f"{table}: {ruling_sentence(ruling, names, profile)}"
