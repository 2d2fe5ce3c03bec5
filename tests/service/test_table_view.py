"""The directors' model of a table (controller/mqtt/table_view.py), fed what a real table published
(tests/service/data/table_messages.jsonl: three hands and a misdeal, recorded by the script beside it):
each line once, in order, whatever the broker drops, duplicates or the view joins late for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.mqtt.table_view import ATTEMPTS, RETRY_SECONDS, TableView
from controller.mqtt.topics import TableTopics

DATA = Path(__file__).parent / "data"
TOPICS = TableTopics("testvenue", "t1")
NUMBER = {"events": "event_seq", "rulings": "ruling_seq"}


def recorded() -> list[tuple[str, bytes]]:
    rows = [json.loads(line) for line in (DATA / "table_messages.jsonl").read_text().splitlines()]
    return [(r["topic"], r["payload"].encode()) for r in rows]


def table_answer(stream: str, since: int, limit: int = 500) -> dict[str, Any]:
    """What the table answers to cmd/replay (its recorded answer since 0, cut as the table cuts it)."""
    everything = json.loads((DATA / "table_messages.replay.json").read_text())[stream]
    lines = [line for line in everything["lines"] if line[NUMBER[stream]] > since]
    more = len(lines) > limit
    lines = lines[:limit]
    last = lines[-1][NUMBER[stream]] if lines else since
    return {
        "ok": True,
        "command": "replay",
        "stream": stream,
        "since": since,
        "lines": lines,
        "last": last,
        "more": more,
    }


def kind(topic: str) -> str:
    return topic.rsplit("/", 1)[-1]


def passed_on(
    view: TableView, messages: list[tuple[str, bytes]], answer: Any = None
) -> list[tuple[str, dict]]:
    """Feed the messages as a tool does (ticking after each, a second apart), answering each replay
    request with `answer(stream, since)` on the tool's reply topic; returns every line passed on."""
    out: list[tuple[str, dict]] = []
    now = 0.0
    for topic, payload in messages:
        now += 1.0
        out += view.feed(topic, payload, now).lines
        for _ in range(10):  # `more`: asked again at once
            requests, skipped = view.tick(now)
            out += skipped
            if not requests or answer is None:
                break
            for body in requests:
                reply = answer(body["stream"], body["since"])
                out += view.feed(f"{TOPICS.prefix}/reply/top", json.dumps(reply).encode(), now).lines
    return out


def test_the_recorded_table_reads_whole_each_line_once_in_order():
    messages = recorded()
    view = TableView(TOPICS)
    lines = passed_on(view, messages)
    for stream in ("events", "rulings"):
        numbers = [line[NUMBER[stream]] for s, line in lines if s == stream]
        published = {json.loads(p)[NUMBER[stream]] for t, p in messages if kind(t) == stream}
        assert numbers == sorted(published) == list(range(1, max(published) + 1))
    last_state = json.loads(next(p for t, p in reversed(messages) if kind(t) == "state"))
    assert view.state == last_state and view.seq == last_state["seq"] and not view.gap()
    # the table's own picture, as the engine published it: names, the misdeal alert, no board yet
    assert view.seats[1]["name"] == "Ann" and len(view.seats) == 6
    assert [a["type"] for a in view.alerts] == ["misdeal"] and view.phase == "misdeal" and view.board == []
    shown, live = view.last_rulings()
    assert (
        live
        and shown[-1]["type"] == "misdeal"
        and view.rulings_received == len([1 for s, _ in lines if s == "rulings"])
    )


def test_lost_and_repeated_messages_are_replayed_and_dropped():
    messages = recorded()
    full = passed_on(TableView(TOPICS), messages)
    damaged: list[tuple[str, bytes]] = []
    for i, (topic, payload) in enumerate(messages):
        if kind(topic) in ("events", "rulings") and i > 5 and i % 4 == 1:
            continue  # the broker lost it
        damaged.append((topic, payload))
        if i % 5 == 0:
            damaged.append((topic, payload))  # delivered twice (a PUBACK lost)
    view = TableView(TOPICS)
    lines = passed_on(view, damaged, table_answer)
    for stream in ("events", "rulings"):  # each stream whole and in order (across them, `seq` orders)
        assert [line for s, line in lines if s == stream] == [line for s, line in full if s == stream]
    assert view.replays > 0 and view.lost == 0 and not view.gap()


def test_a_gap_at_the_end_is_seen_from_the_state_and_filled_in_pages():
    messages = recorded()
    last_event = max(i for i, (t, _) in enumerate(messages) if kind(t) == "events")
    cut = [(t, p) for i, (t, p) in enumerate(messages) if not (kind(t) in ("events", "rulings") and i > 20)]
    view = TableView(TOPICS)
    asked: list[int] = []

    def small_pages(stream: str, since: int) -> dict[str, Any]:
        if stream == "events":
            asked.append(since)
        return table_answer(stream, since, limit=10)

    lines = passed_on(view, cut, small_pages)
    events = [line["event_seq"] for s, line in lines if s == "events"]
    assert events == list(range(1, json.loads(messages[last_event][1])["event_seq"] + 1))
    assert len(asked) > 3 and asked == sorted(asked)  # page after page, each since the last one held


def test_a_table_that_cannot_replay_does_not_stall_the_view():
    messages = recorded()
    dropped = {i for i, (t, _) in enumerate(messages) if kind(t) == "rulings"}
    dropped = {min(dropped) + 0}  # the first ruling, `hand` 1
    view = TableView(TOPICS)

    def refuses(stream: str, since: int) -> dict[str, Any]:
        return {
            "ok": False,
            "command": "replay",
            "stream": stream,
            "error": "unknown",
            "message": "no replay",
        }

    now = 0.0
    got: list[dict] = []
    for i, (topic, payload) in enumerate(messages):
        if i in dropped:
            continue
        now += RETRY_SECONDS / 4
        got += [line for s, line in view.feed(topic, payload, now).lines if s == "rulings"]
    assert view.gap() and got == []  # held back, waiting for ruling 1
    for _ in range(ATTEMPTS + 2):
        now += RETRY_SECONDS
        requests, skipped = view.tick(now)
        for body in requests:
            view.feed(f"{TOPICS.prefix}/reply/top", json.dumps(refuses(**body)).encode(), now)
        got += [line for s, line in skipped if s == "rulings"]
    assert [line["ruling_seq"] for line in got] == list(range(2, len(got) + 2)) and len(got) >= 7
    assert view.lost == 1 and not view.gap()


def test_a_view_started_late_begins_at_the_retained_state():
    messages = recorded()
    i = max(i for i, (t, _) in enumerate(messages) if kind(t) == "state" and i < len(messages) - 10)
    state = json.loads(messages[i][1])
    view = TableView(TOPICS)
    view.feed(*messages[i])
    assert view.held("rulings") == state["ruling_seq"] and view.held("events") == state["event_seq"]
    shown, live = view.last_rulings()
    assert not live and shown == state["last_rulings"]  # what the table kept for late screens
    lines = passed_on(view, messages[i + 1 :])
    assert lines and all(line[NUMBER[s]] > state[NUMBER[s]] for s, line in lines) and not view.gap()


def test_a_table_whose_log_began_again_is_followed_from_its_new_numbers():
    view = TableView(TOPICS)
    passed_on(view, recorded())
    assert view.held("rulings") == 8
    fresh = {"seats": [], "seq": 1, "event_seq": 1, "ruling_seq": 0}
    view.feed(TOPICS.state, json.dumps(fresh).encode(), 1.0)
    line = {"type": "hand", "number": 1, "seq": 2, "ruling_seq": 1}
    assert view.feed(TOPICS.rulings, json.dumps(line).encode(), 2.0).lines == [("rulings", line)]
    assert view.seq == 2


@pytest.mark.parametrize(
    "topic, payload, kind_",
    [
        (TOPICS.state, b"{not json", "malformed"),
        (TOPICS.rulings, b"[1, 2]", "malformed"),
        ("smarttable/v1/other/t9/state", b"{}", "ignored"),
        (TOPICS.status, b"online", "status"),
        (f"{TOPICS.prefix}/reply/floor", b'{"ok": true, "command": "seat"}', "reply"),
    ],
)
def test_what_is_not_a_line_changes_no_line(topic, payload, kind_):
    view = TableView(TOPICS)
    fed = view.feed(topic, payload, 1.0)
    assert fed.kind == kind_ and fed.lines == [] and view.state == {} and not view.gap()


def test_a_table_without_numbered_streams_is_passed_on_once_by_seq():
    view = TableView(TOPICS)
    ruling = json.dumps({"type": "misdeal", "reason": "first_cards_exposed", "seq": 9}).encode()
    assert len(view.feed(TOPICS.rulings, ruling, 1.0).lines) == 1
    assert view.feed(TOPICS.rulings, ruling, 2.0).lines == []
    assert view.tick(3.0) == ([], [])


@pytest.mark.parametrize(
    "answer",
    [
        {
            "ok": True,
            "command": "replay",
            "stream": "rulings",
            "since": "abc",
            "lines": [1, None, {"ruling_seq": "x"}],
        },
        {"ok": True, "command": "replay", "stream": "rulings", "lines": "not a list"},
        {"ok": "yes", "command": "replay", "stream": "rulings"},
        {"ok": True, "command": "replay", "stream": "state", "lines": []},
    ],
)
def test_a_malformed_replay_answer_passes_nothing_on_and_breaks_nothing(answer):
    view = TableView(TOPICS)
    fed = view.feed(f"{TOPICS.prefix}/reply/top", json.dumps(answer).encode(), 1.0)
    assert fed.lines == [] and not view.gap()
    line = {"type": "hand", "seq": 3, "ruling_seq": 1}
    assert view.feed(TOPICS.rulings, json.dumps(line).encode(), 2.0).lines == [("rulings", line)]


def test_a_camera_picture_is_not_taken_for_a_malformed_line():
    """`picture` is a JPEG (docs/mqtt.md "Camera picture"): a view that subscribes to the whole
    prefix passes it by instead of counting it as a bad message."""
    topics = TableTopics("v", "t1")
    view = TableView(topics)
    assert view.feed(topics.picture, b"\xff\xd8\xff\xfe\x00\x04{}jpeg", 1.0).kind == "ignored"
    assert view.feed(topics.state, b"\xff\xd8", 1.0).kind == "malformed"
