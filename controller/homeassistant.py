"""Home Assistant MQTT discovery: a bar that runs Home Assistant sees each table's status, hand
number, phase and last alert without configuring anything.

The sensors read the topics the table already publishes (the retained `status` and `state`), so the
only thing to send is one retained discovery message per sensor under `homeassistant/`; the unit
does it at every start (`smart-table homeassistant`, ExecStartPost). `--remove` empties them again.
The table's broker login may write these topics (systemd/mosquitto/add-table.sh's ACL block).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from typing import Any

DISCOVERY_PREFIX = "homeassistant"


def _object_id(venue: str, table: str) -> str:
    return f"smart_table_{venue}_{table}".replace("-", "_").replace(".", "_").lower()


def discovery_messages(venue: str, table: str, version: str = "") -> list[tuple[str, dict[str, Any]]]:
    """(topic, payload) of every discovery message for one table (pure)."""
    prefix = f"smarttable/v1/{venue}/{table}"
    oid = _object_id(venue, table)
    device = {
        "identifiers": [oid],
        "name": f"Poker table {venue}/{table}",
        "manufacturer": "smart-table",
        "model": "smart poker table",
        **({"sw_version": version} if version else {}),
    }
    availability = {
        "availability_topic": f"{prefix}/status",
        "payload_available": "online",
        "payload_not_available": "offline",
    }
    sensors: list[tuple[str, str, dict[str, Any]]] = [
        (
            "binary_sensor",
            "status",
            {
                "name": "Online",
                "state_topic": f"{prefix}/status",
                "payload_on": "online",
                "payload_off": "offline",
                "device_class": "connectivity",
            },
        ),
        (
            "sensor",
            "hand",
            {
                "name": "Hand number",
                "state_topic": f"{prefix}/state",
                "value_template": "{{ value_json.hand_number | default(0, true) }}",
                "icon": "mdi:cards-playing",
                **availability,
            },
        ),
        (
            "sensor",
            "phase",
            {
                "name": "Phase",
                "state_topic": f"{prefix}/state",
                "value_template": "{{ value_json.phase | default('idle', true) }}",
                **availability,
            },
        ),
        (
            "sensor",
            "last_alert",
            {
                "name": "Last alert",
                "state_topic": f"{prefix}/state",
                # e.g. "misdeal: first_cards_exposed (cool_mule:5.g)"; "none" when the hand is clean
                "value_template": "{% set a = value_json.alerts | default([], true) %}"
                "{% if a %}{% set x = a | last %}{{ x.type }}{% if x.reason is defined %}: {{ x.reason }}"
                "{% endif %}{% if x.rule is defined %} ({{ x.rule }}){% endif %}{% else %}none{% endif %}",
                "icon": "mdi:alert",
                **availability,
            },
        ),
    ]
    out = []
    for component, key, fields in sensors:
        payload = {"unique_id": f"{oid}_{key}", "object_id": f"{oid}_{key}", "device": device, **fields}
        out.append((f"{DISCOVERY_PREFIX}/{component}/{oid}/{key}/config", payload))
    return out


async def publish(cfg: Any, *, remove: bool = False, timeout: float = 10.0) -> int:
    """Send (or, with remove, clear) the retained discovery messages with the table's own login."""
    import aiomqtt

    from controller.cli import version
    from controller.service.config import read_secret

    b = cfg.broker
    if not b.host:  # the service's embedded broker, on this machine
        b = dataclasses.replace(b, host="127.0.0.1", port=b.embedded_port, tls=False)
    messages = discovery_messages(cfg.table.venue, cfg.table.id, version())
    login = b.login(read_secret(b.password_file))
    async with aiomqtt.Client(**login, timeout=timeout, protocol=aiomqtt.ProtocolVersion.V311) as client:
        for topic, payload in messages:
            await client.publish(topic, b"" if remove else json.dumps(payload).encode(), qos=1, retain=True)
    return len(messages)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "homeassistant",
        help="announce the table to Home Assistant (MQTT discovery: status, hand, phase, last alert)",
        description="Publish Home Assistant's MQTT discovery messages for this table (retained), so "
        "Home Assistant shows its status, hand number, phase and last alert. Exit 1 when the broker "
        "cannot be reached, 2 for a bad config.",
    )
    p.add_argument("--config", default="/etc/smart-table/table.toml", help="the table's table.toml")
    p.add_argument("--remove", action="store_true", help="remove the table from Home Assistant")
    p.set_defaults(handler=_command)


def _command(args: argparse.Namespace) -> int:
    import aiomqtt

    from controller.service.config import load_config_reporting

    cfg = load_config_reporting(args.config)
    if cfg is None:
        return 2
    try:
        n = asyncio.run(publish(cfg, remove=args.remove))
    except (aiomqtt.MqttError, OSError) as exc:
        print(f"error: cannot reach the broker for Home Assistant discovery: {exc}", file=sys.stderr)
        return 1
    what = "removed" if args.remove else "announced"
    print(
        f"{cfg.table.venue}/{cfg.table.id} {what} to Home Assistant ({n} discovery messages under {DISCOVERY_PREFIX}/)"
    )
    return 0
