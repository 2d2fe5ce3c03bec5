"""`table.actions`: who tells the engine the betting (docs/selfdealt.md)."""

from __future__ import annotations

import pytest

from controller.service.config import ConfigError, parse_config


def test_a_table_is_self_dealt_unless_told_otherwise():
    assert parse_config({}, "t.toml").table.actions == "observed"
    assert parse_config({"table": {"actions": "entered"}}, "t.toml").table.actions == "entered"


def test_an_unknown_actions_mode_is_refused_naming_the_key():
    with pytest.raises(ConfigError) as err:
        parse_config({"table": {"actions": "typed"}}, "t.toml")
    assert "t.toml: table.actions: 'typed' is not one of observed, entered" in str(err.value)
