"""The director's follower: each ruling passed on once, in order, whatever the broker does."""

from __future__ import annotations

import pytest

from controller.mqtt.follow import StreamFollower


def ruling(n: int) -> dict:
    return {"type": "error", "seq": 10 * n, "ruling_seq": n}


def test_duplicates_are_dropped_and_early_lines_wait_for_the_gap():
    f = StreamFollower("rulings")
    assert f.feed(ruling(1)) == [ruling(1)]
    assert f.feed(ruling(1)) == [] and f.duplicates == 1  # at least once: a PUBACK lost
    assert f.feed(ruling(3)) == [] and f.gap()  # 2 lost by the broker: ask for a replay since 1
    assert f.feed_all([ruling(2), ruling(3)]) == [ruling(2), ruling(3)]
    assert not f.gap() and f.next == 4 and f.delivered == 3
    assert f.behind(5) and not f.behind(3)


def test_a_line_without_a_number_is_not_guessed_at():
    f = StreamFollower("events", since=7)
    assert f.feed({"type": "seat", "seq": 3}) == []
    assert f.feed({"type": "seat", "event_seq": 8}) == [{"type": "seat", "event_seq": 8}]
    with pytest.raises(ValueError, match="stream"):
        StreamFollower("state")
