"""A table as a director's tool sees it, built from the table's MQTT topics (pure, no I/O).

One client-side model, shared by `smart-table top`, the floor and the simulator's observer (issue 13:
one fold of table state). Feed it every message under the table's prefix:

    view = TableView(TableTopics("cool-mule", "table-1"))
    fed = view.feed(topic, payload, now)
    for stream, line in fed.lines:       # each event and ruling once, in order
        ...
    requests, skipped = view.tick(now)   # on a timer, and after each message
    for body in requests:                # a gap was seen: ask the table (issue 15)
        publish(f"{view.topics.prefix}/cmd/replay", {**body, "id": ..., "reply_to": ...})

What the table says about itself comes from its retained `state` (the rules engine's snapshot: seats,
board, alerts, last rulings); the model derives none of it again. The `events` and `rulings` streams
are numbered without gaps (`event_seq`, `ruling_seq`, docs/mqtt.md): a `StreamFollower` per stream
drops what was seen, holds back what arrives early, and the model asks for everything since the last
number it holds with `cmd/replay` when a number is missing or the `state` names a newer one. The
answer (on the owner's reply topic) goes through `feed` too and fills the gap. A table that cannot
answer (an old one, or one that refuses) does not stall the view: after `attempts` tries the model
skips the gap and counts what it lost.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from controller.mqtt.follow import NUMBER, StreamFollower
from controller.mqtt.topics import TableTopics
from controller.rules.engine import DIRECTOR_ALERTS

STREAMS = ("events", "rulings")
# The rulings a director is alerted to, wherever they are shown (the floor's page, sim's live view): the
# engine's own list of the state's alerts (one list, controller/rules/engine.py), and the bust-outs.
ALERT_TYPES = DIRECTOR_ALERTS | {"eliminated"}
RETRY_SECONDS = 2.0  # a replay not answered by then is asked again
ATTEMPTS = 3  # unanswered or refused replays before a gap is given up on (and counted as lost)


@dataclass
class Fed:
    """What one message was and what it made new: `lines` are (stream, line) passed on, in order."""

    kind: str  # status, state, events, rulings, reply, replay, ignored, malformed
    doc: dict[str, Any] | None = None
    lines: list[tuple[str, dict[str, Any]]] = field(default_factory=list)


@dataclass
class _Stream:
    follower: StreamFollower | None = None  # None until the first line or state anchors it
    asked_at: float | None = None  # a replay is in flight since then
    attempts: int = 0
    unnumbered: set[int] = field(default_factory=set)  # `seq`s of lines from a table without numbers


class TableView:
    """One table's status, state and streams, with the gaps in the streams noticed and filled."""

    def __init__(self, topics: TableTopics, keep: int = 10, keep_events: int = 6) -> None:
        self.topics = topics
        self.status = "unknown"
        self.state: dict[str, Any] = {}
        self.rulings: deque[dict[str, Any]] = deque(maxlen=keep)
        self.events: deque[dict[str, Any]] = deque(maxlen=keep_events)
        self.rulings_received = 0  # all passed on, so a screen can say how many it no longer shows
        self.seq = 0  # the newest log number seen (a line's or the state's `seq`)
        self.replays = 0  # replay answers that were folded in
        self.lost = 0  # numbers given up on (the table could not replay them)
        self.last_message = 0.0
        self._streams = {s: _Stream() for s in STREAMS}
        self._live_seq = 0  # the newest `seq` of a line or state that came live (not from a replay)
        self._state_t = 0.0  # the newest state's `t`

    # ------------------------------------------------------------------ the table's own picture

    @property
    def seats(self) -> dict[int, dict[str, Any]]:
        """{seat: entry} of the seated players (`player`, `name`?, `stack`, `away`)."""
        out: dict[int, dict[str, Any]] = {}
        for e in self.state.get("seats") or []:
            if isinstance(e, dict) and isinstance(e.get("seat"), int) and e.get("player"):
                out[e["seat"]] = e
        return out

    @property
    def board(self) -> list[str]:
        return [c for c in self.state.get("board") or [] if isinstance(c, str)]

    @property
    def alerts(self) -> list[dict[str, Any]]:
        return [a for a in self.state.get("alerts") or [] if isinstance(a, dict)]

    @property
    def phase(self) -> str | None:
        phase = self.state.get("phase")
        return phase if isinstance(phase, str) else None

    @property
    def info(self) -> dict[str, Any]:
        """The state's `table` (id, venue, seats, profile)."""
        info = self.state.get("table")
        return info if isinstance(info, dict) else {}

    def last_rulings(self) -> tuple[list[dict[str, Any]], bool]:
        """The rulings to show, and whether they were received live (else the retained state's, so a
        view started after a ruling still shows it)."""
        if self.rulings:
            return list(self.rulings), True
        return [r for r in self.state.get("last_rulings") or [] if isinstance(r, dict)], False

    def held(self, stream: str) -> int:
        """The newest number passed on of `stream` (0 before any)."""
        f = self._streams[stream].follower
        return f.next - 1 if f else 0

    def gap(self) -> bool:
        """A line is missing: one arrived early, or the state names a newer one than we hold."""
        return any(self._missing(s) for s in STREAMS)

    # ------------------------------------------------------------------ messages

    def feed(self, topic: str, payload: bytes | str, now: float = 0.0) -> Fed:
        """One MQTT message of any topic; replay answers are recognised on any `reply` topic."""
        self.last_message = now
        prefix = self.topics.prefix + "/"
        if not topic.startswith(prefix):
            return Fed("ignored")
        kind = topic[len(prefix) :]
        raw = payload if isinstance(payload, bytes) else payload.encode()
        if kind == "status":
            self.status = raw.decode(errors="replace") or "unknown"
            return Fed("status")
        if kind == "picture":  # a JPEG (controller.mqtt.picture), not a line: the floor keeps it itself
            return Fed("ignored")
        try:
            doc = json.loads(raw)
        except ValueError:
            return Fed("malformed")
        if not isinstance(doc, dict):
            return Fed("malformed")
        if kind == "state":
            return Fed("state", doc, self.apply_state(doc))
        if kind in STREAMS:
            return Fed(kind, doc, [(kind, line) for line in self.apply_line(kind, doc)])
        if kind == "reply" or kind.startswith("reply/"):
            if doc.get("command") == "replay" and doc.get("stream") in STREAMS:
                return Fed("replay", doc, self.apply_replay(doc))
            return Fed("reply", doc)
        return Fed("ignored", doc)

    def apply_state(self, doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The retained state: the table's picture. It also says how far each stream goes, which
        anchors a view that has seen no line yet, and shows a table whose log began again.

        The table sends its state through the same ordered outbox as its lines, built after they were
        logged, so a state's `seq` (the log's own number) is never below that of a line that came
        live before it, unless the log began again; a state sent twice is no newer (`t`) than one
        seen, and lines from a replay answer can be ahead of a state still on its way, so only live
        lines count here."""
        self.state = doc
        seq = doc.get("seq") if isinstance(doc.get("seq"), int) else None
        t = doc.get("t") if isinstance(doc.get("t"), int | float) else None
        restarted = seq is not None and seq < self._live_seq and (t is None or t > self._state_t)
        if t is not None:
            self._state_t = max(self._state_t, t)
        for stream in STREAMS:
            last = doc.get(NUMBER[stream])
            if not isinstance(last, int) or isinstance(last, bool):
                continue
            s = self._streams[stream]
            if s.follower is None or (restarted and last < s.follower.next - 1):
                s.follower = StreamFollower(stream, since=last)  # what came before is in the state
                s.asked_at, s.attempts = None, 0
        if seq is not None:
            self.seq = seq if restarted else max(self.seq, seq)
            self._live_seq = seq if restarted else max(self._live_seq, seq)
        return []

    def apply_line(self, stream: str, doc: dict[str, Any]) -> list[dict[str, Any]]:
        """A line of `events` or `rulings`: the lines now passed on (none if seen, or early)."""
        s = self._streams[stream]
        number = doc.get(NUMBER[stream])
        if not isinstance(number, int) or isinstance(number, bool):
            seq = doc.get("seq")  # a table without numbered streams: pass on once by `seq`
            if isinstance(seq, int):
                if seq in s.unnumbered:
                    return []
                s.unnumbered.add(seq)
                if len(s.unnumbered) > 5000:
                    s.unnumbered = set(sorted(s.unnumbered)[-2000:])
            return self._passed(stream, [doc])
        if isinstance(doc.get("seq"), int):
            self._live_seq = max(self._live_seq, doc["seq"])
        if s.follower is None:
            s.follower = StreamFollower(stream, since=number - 1)
        return self._passed(stream, s.follower.feed(doc))

    def apply_replay(self, doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """A `cmd/replay` answer: its lines fill the gap; `more` asks again at once."""
        stream = str(doc.get("stream"))
        s = self._streams[stream]
        if doc.get("ok") is not True or not isinstance(doc.get("lines"), list):
            s.asked_at = None  # refused: asked again later, and given up after ATTEMPTS
            return []
        self.replays += 1
        if s.follower is None:
            since = doc.get("since")
            s.follower = StreamFollower(stream, since=since if type(since) is int and since >= 0 else 0)
        out = s.follower.feed_all([line for line in doc["lines"] if isinstance(line, dict)])
        s.asked_at = None
        if out:
            s.attempts = 0
        return [(stream, line) for line in self._passed(stream, out)]

    def tick(self, now: float) -> tuple[list[dict[str, Any]], list[tuple[str, dict[str, Any]]]]:
        """What to do about gaps now: the `cmd/replay` bodies to send (`stream`, `since`: the last
        number held), one in flight per stream and asked again after RETRY_SECONDS; and, for a gap
        still open after ATTEMPTS asks, the held lines passed on with the missing numbers counted in
        `lost` (a table that cannot replay must not stall the view)."""
        requests: list[dict[str, Any]] = []
        lines: list[tuple[str, dict[str, Any]]] = []
        for stream in STREAMS:
            s = self._streams[stream]
            f = s.follower
            if f is None or not self._missing(stream):
                s.asked_at, s.attempts = None, 0
                continue
            if s.asked_at is not None and now - s.asked_at < RETRY_SECONDS:
                continue
            if s.attempts < ATTEMPTS:
                s.asked_at, s.attempts = now, s.attempts + 1
                requests.append({"stream": stream, "since": f.next - 1})
                continue
            if f.early:  # give up: pass on from the first line held
                first = min(f.early)
                self.lost += first - f.next
                f.next = first
                lines += [(stream, line) for line in self._passed(stream, f.feed_all([f.early.pop(first)]))]
            else:  # only the state says there is more: take its word as the new start
                last = int(self.state.get(NUMBER[stream]) or 0)
                self.lost += last - f.next + 1
                f.next = last + 1
            s.asked_at, s.attempts = None, 0
        return requests, lines

    # ------------------------------------------------------------------ internals

    def _anchored(self) -> bool:
        return any(s.follower is not None for s in self._streams.values())

    def _missing(self, stream: str) -> bool:
        f = self._streams[stream].follower
        if f is None:
            return False
        last = self.state.get(NUMBER[stream])
        return f.gap() or (isinstance(last, int) and not isinstance(last, bool) and f.behind(last))

    def _passed(self, stream: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for line in lines:
            if isinstance(line.get("seq"), int):
                self.seq = max(self.seq, line["seq"])
            if stream == "rulings":
                self.rulings.append(line)
                self.rulings_received += 1
            else:
                self.events.append(line)
        return lines
