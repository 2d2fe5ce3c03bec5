"""Exactly once, in order, for a subscriber of a table's `rulings` (or `events`) (pure).

The table numbers each stream without gaps (`ruling_seq`, `event_seq`) and delivers at least once;
a broker can still lose what it had acknowledged (a `kill -9` before its autosave). A follower
drops what it has already passed on, holds back what arrives early, and says which numbers are
missing, so its owner asks the table with `cmd/replay {"stream": ..., "since": N}` and feeds the
answer's `lines` back in:

    follower = StreamFollower("rulings")
    for doc in follower.feed(doc):   # from the rulings topic
        show(doc)                    # each ruling once, in order
    if follower.gap():               # or on a timer: cmd/replay since follower.next - 1
        ...
"""

from __future__ import annotations

from typing import Any

NUMBER = {"rulings": "ruling_seq", "events": "event_seq"}


class StreamFollower:
    def __init__(self, stream: str = "rulings", since: int = 0) -> None:
        if stream not in NUMBER:
            raise ValueError(f"stream: expected one of {', '.join(NUMBER)}, got {stream!r}")
        self.stream = stream
        self.key = NUMBER[stream]
        self.next = since + 1  # the number to pass on next
        self.early: dict[int, dict[str, Any]] = {}
        self.duplicates = 0
        self.delivered = 0

    def feed(self, doc: dict[str, Any]) -> list[dict[str, Any]]:
        """The lines that can now be passed on, in order (none when `doc` is early or old)."""
        number = doc.get(self.key)
        if not isinstance(number, int) or isinstance(number, bool):
            return []  # a table from before the numbered streams: nothing to order by
        if number < self.next or number in self.early:
            self.duplicates += 1
            return []
        self.early[number] = doc
        out: list[dict[str, Any]] = []
        while self.next in self.early:
            out.append(self.early.pop(self.next))
            self.next += 1
        self.delivered += len(out)
        return out

    def feed_all(self, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for doc in docs:
            out += self.feed(doc)
        return out

    def gap(self) -> bool:
        """Something arrived past a number that has not: ask for a replay since `next - 1`."""
        return bool(self.early)

    def behind(self, last: int) -> bool:
        """The table says its newest number is `last` (from `state`): is anything missing?"""
        return self.next <= last
