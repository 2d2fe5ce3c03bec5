"""Topic names of a table and MQTT topic-filter matching (pure; shared by the link and the broker).

Under `smarttable/v1/<venue>/<table>/`:

| topic | retained | QoS | payload |
| --- | --- | --- | --- |
| `status` | yes | 1 | `online` / `offline` (the offline one is the Last Will) |
| `state` | yes | 1 | JSON snapshot of the table |
| `events` | no | 1 | input lines, in order, each with `seq`, `t`, `source` |
| `rulings` | no | 1 | output lines of the rules engine, in order, each with `seq`, `t` |
| `cmd/<name>` | no | 1 | director commands (subscribed by the table) |
| `reply` / `reply/<anything>` | no | 1 | answers to commands |
| `picture` | yes | 1 | JPEG of the camera at the last alert, seat zones blacked out (controller.mqtt.picture) |
"""

from __future__ import annotations

from dataclasses import dataclass

ROOT = "smarttable/v1"


@dataclass(frozen=True, slots=True)
class TableTopics:
    venue: str
    table: str

    @property
    def prefix(self) -> str:
        return f"{ROOT}/{self.venue}/{self.table}"

    @property
    def status(self) -> str:
        return f"{self.prefix}/status"

    @property
    def state(self) -> str:
        return f"{self.prefix}/state"

    @property
    def events(self) -> str:
        return f"{self.prefix}/events"

    @property
    def rulings(self) -> str:
        return f"{self.prefix}/rulings"

    @property
    def picture(self) -> str:
        """The camera picture at the last alert (retained; controller.service.picture)."""
        return f"{self.prefix}/picture"

    @property
    def commands(self) -> str:
        """The filter the table subscribes to."""
        return f"{self.prefix}/cmd/+"

    @property
    def reply(self) -> str:
        return f"{self.prefix}/reply"

    def command_name(self, topic: str) -> str | None:
        """`seat` for `<prefix>/cmd/seat`; None for any other topic."""
        head = f"{self.prefix}/cmd/"
        if topic.startswith(head) and "/" not in topic[len(head) :]:
            return topic[len(head) :]
        return None

    def reply_allowed(self, topic: object) -> bool:
        """Replies go under the table's own prefix only (its ACL allows nothing else), to a topic
        name a client may publish to: a wildcard or an unencodable string there would make the MQTT
        client raise and, before this check, ended the link (issue 15)."""
        if not isinstance(topic, str) or not valid_topic_name(topic):
            return False
        return topic == self.reply or topic.startswith(self.reply + "/")


def encodable(text: str) -> bool:
    """UTF-8 can carry it (a lone surrogate, which JSON's `\\ud800` can smuggle in, cannot)."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def valid_topic_name(topic: str) -> bool:
    """A topic a client may publish to: non-empty, UTF-8, no wildcards, no NUL."""
    if not topic or any(c in topic for c in "+#\0") or not encodable(topic):
        return False
    return len(topic.encode()) <= 65535


def valid_topic_filter(flt: str) -> bool:
    """A subscription filter: `#` only as the whole last level, `+` only as a whole level."""
    if not flt or "\0" in flt:
        return False
    levels = flt.split("/")
    for i, level in enumerate(levels):
        if "#" in level and (level != "#" or i != len(levels) - 1):
            return False
        if "+" in level and level != "+":
            return False
    return True


def topic_matches(flt: str, topic: str) -> bool:
    """MQTT matching; wildcards at the first level do not match topics starting with `$`."""
    if topic.startswith("$") and flt[:1] in ("+", "#"):
        return False
    f_levels = flt.split("/")
    t_levels = topic.split("/")
    for i, f in enumerate(f_levels):
        if f == "#":
            return True
        if i >= len(t_levels):
            return False
        if f != "+" and f != t_levels[i]:
            return False
    return len(f_levels) == len(t_levels)
