"""Director commands that once left a traceback and no reply: a token that is not ASCII and JSON nested
2,000 deep. Each gets a clear error reply over a real MQTT broker, and the table goes on ruling."""

from __future__ import annotations

import json

import pytest

from controller.service.app import TableService
from controller.service.commands import CommandError, parse_command
from tests.service.conftest import table_config
from tests.service.mqtt_helpers import Recorder

SEATS = 6
ALL = ("seat", "leave", "status")


@pytest.mark.parametrize("token", ["s3crét", "\u00e9" * 10, "\ud800"])
def test_a_non_ascii_token_is_unauthorised_not_a_crash(token):
    with pytest.raises(CommandError) as exc:
        parse_command("status", json.dumps({"token": token}), seats=SEATS, allowed=ALL, token="s3cret")
    assert exc.value.code == "unauthorised"


def test_a_non_ascii_table_token_still_compares():
    cmd = parse_command("status", json.dumps({"token": "clé"}), seats=SEATS, allowed=ALL, token="clé")
    assert cmd.name == "status"


@pytest.mark.parametrize("payload", ["[" * 2000 + "]" * 2000, '{"id":' * 1000 + "1" + "}" * 1000])
def test_deep_or_absurd_json_is_malformed_not_a_crash(payload):
    with pytest.raises(CommandError) as exc:
        parse_command("seat", payload, seats=SEATS, allowed=ALL)
    assert exc.value.code == "malformed" and exc.value.args[0].startswith("cmd/seat: ")


async def test_over_mqtt_each_gets_an_error_reply_and_the_table_still_answers(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    token.chmod(0o600)
    cfg = table_config(tmp_path, commands={"token_file": str(token)})
    async with TableService(cfg) as service, Recorder(service.broker.port, cfg.prefix) as rec:
        wrong = await rec.command("seat", {"seat": 1, "player": "X", "token": "s3crét"})
        assert wrong["ok"] is False and wrong["error"] == "unauthorised"
        deep = await rec.command("seat", ("[" * 2000 + "]" * 2000).encode())
        assert deep["ok"] is False and deep["error"] == "malformed" and "nested too deeply" in deep["message"]
        right = await rec.command("seat", {"seat": 1, "player": "X", "token": "s3cret"})
        assert right["ok"] is True
        assert service.engine.snapshot()["players"]["1"]["player"] == "X"
        assert service.health.part("mqtt").status == "ok"


def test_a_lone_surrogate_in_a_player_name_is_refused_before_the_engine():
    payload = '{"seat": 1, "player": "\\ud800"}'
    with pytest.raises(CommandError) as exc:
        parse_command("seat", payload, seats=SEATS, allowed=ALL)
    assert exc.value.code == "invalid" and "player" in str(exc.value) and "surrogate" in str(exc.value)
    emoji = parse_command("seat", '{"seat": 1, "player": "\\ud83c\\udccf"}', seats=SEATS, allowed=ALL)
    assert emoji.line == {"type": "seat", "seat": 1, "player": "\U0001f0cf"}
