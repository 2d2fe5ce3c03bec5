"""`smart-table top` as a person meets it: it finds the tables itself, shows rulings it arrived too late
to see live (from the retained state) as sentences, and an unreachable broker is an error (exit 1)."""

from __future__ import annotations

import asyncio

from controller.service.app import TableService
from tests.service.conftest import FLASH, HAND, run_top, table_config


async def test_top_alone_finds_the_table_and_shows_its_retained_rulings(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service:
        for line in [*HAND, FLASH]:
            await service.inject(line)
        await asyncio.sleep(0.5)  # the state is published; top starts after the misdeal was ruled
        code, text, err = await run_top("--port", str(service.broker.port), "--once", "--wait", "2")
    assert code == 0, err
    assert "1 table on 127.0.0.1:" in text and "testvenue/t1" in text
    assert "from the table's retained state" in text
    assert "MISDEAL: one of the first cards off the deck was exposed" in text
    assert "[cool_mule:5.g]" in text
    assert "demo/table-1" not in text  # no made-up default table


async def test_top_lists_every_table_on_the_broker(tmp_path):
    first = table_config(tmp_path / "a")
    async with TableService(first) as one:
        second = table_config(
            tmp_path / "b",
            table={"id": "t2"},
            broker={"host": "127.0.0.1", "port": one.broker.port, "protocol": "3.1.1"},  # the embedded broker
        )
        async with TableService(second):
            await asyncio.sleep(1.0)
            code, text, err = await run_top("--port", str(one.broker.port), "--once", "--wait", "2")
    assert code == 0, err
    assert "2 tables on" in text and "testvenue/t1" in text and "testvenue/t2" in text


async def test_top_on_an_unreachable_broker_says_so_and_exits_1():
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for extra in (("--once", "--wait", "1"), ()):
        code, _, err = await run_top("--port", str(port), *extra)
        assert code == 1, (extra, err)
        assert f"cannot reach the broker at 127.0.0.1:{port}" in err


async def test_top_once_with_nothing_published_exits_1(tmp_path):
    cfg = table_config(tmp_path)
    async with TableService(cfg) as service:
        code, _, _ = await run_top(
            "--port", str(service.broker.port), "--venue", "other", "--table", "x", "--once"
        )
    assert code == 1


def test_top_says_how_many_rulings_it_no_longer_shows():
    import json

    from rich.console import Console

    from controller.mqtt.topics import TableTopics
    from controller.service.top import TopModel, render

    model = TopModel(TableTopics("v", "t"))
    for seq in range(1, 16):
        ruling = {"type": "misdeal", "reason": "first_cards_exposed", "rule": "cool_mule:5.g", "seq": seq}
        model.apply("smarttable/v1/v/t/rulings", json.dumps(ruling).encode())
    console = Console(record=True, width=160)
    console.print(render(model))
    text = console.export_text()
    assert "... 5 earlier rulings not shown" in text
    assert text.count("MISDEAL: one of the first cards") == 10
