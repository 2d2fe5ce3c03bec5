"""Director commands (MQTT `cmd/<name>`): validated here, before they can touch the table (pure).

A command is a JSON object. Its fields become one protocol input line for the engine (`seat`,
`leave`, `level`, ...), or it is answered by the service itself (`status`). Envelope fields that are
not part of the line: `id` (correlation id, echoed in the reply), `reply_to` (reply topic, for MQTT
3.1.1 clients; MQTT 5 clients use the response-topic property) and `token` (when the table requires
one). Anything else that is not a field of the command is refused by name, so a typo never turns
into a silently ignored setting.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from controller.mqtt.topics import encodable, valid_topic_name

MAX_PAYLOAD = 4096
ENVELOPE = frozenset({"id", "reply_to", "token"})
LEAVE_REASONS = ("eliminated", "moved", "disqualified", "left")


class CommandError(ValueError):
    """A refused command; `code` is `malformed`, `invalid`, `unknown`, `unauthorised` or `busy`."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class Command:
    name: str
    line: dict[str, Any] | None  # the input line for the engine; None when the service answers itself
    id: Any = None
    reply_to: str | None = None
    # what a command the service answers itself asks for (`replay`: stream, since, limit)
    args: dict[str, Any] | None = None


def _seat(v: Any, seats: int, key: str = "seat") -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= seats:
        raise CommandError("invalid", f"{key}: expected a seat number 1..{seats}, got {v!r}")
    return v


def _int(v: Any, key: str, lo: int, hi: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
        raise CommandError("invalid", f"{key}: expected an integer {lo}..{hi}, got {v!r}")
    return v


def _text(v: Any, key: str, longest: int = 64) -> str:
    if not isinstance(v, str) or not v.strip() or len(v) > longest or any(ord(c) < 32 for c in v):
        raise CommandError("invalid", f"{key}: expected a non-empty string of at most {longest} characters")
    if not encodable(v):  # a lone surrogate (`\\ud800`) cannot be logged, published or shown
        raise CommandError("invalid", f"{key}: not valid Unicode (a lone surrogate)")
    return v


def _reply_to(v: Any) -> str | None:
    """The envelope's reply topic, checked before anything (even the token check) uses it."""
    if v is None:
        return None
    if not isinstance(v, str) or not valid_topic_name(v):
        raise CommandError("malformed", "reply_to: expected a UTF-8 topic name without wildcards")
    return v


def _ident(v: Any) -> Any:
    if v is None or (isinstance(v, int) and not isinstance(v, bool) and abs(v) < 2**63):
        return v
    if isinstance(v, str) and len(v) <= 128 and encodable(v):
        return v
    raise CommandError("malformed", "id: expected a string of at most 128 characters or an integer")


# name -> (required fields, optional fields)
FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "seat": (("seat", "player"), ("name", "stack", "moved")),
    "leave": (("seat", "reason"), ()),
    "level": (("sb", "bb"), ("ante", "minutes", "number")),
    "button": (("seat",), ()),
    "hand_start": ((), ()),
    "hand_end": ((), ()),
    "away": (("seat",), ()),
    "back": (("seat",), ()),
    "clock": (("seat",), ("seconds",)),
    "time_expired": (("seat",), ()),  # the clock ran out: the hand is dead (bluff_street:25, cool_mule:12.i)
    "penalty": (("seat", "reason"), ("hands", "minutes", "rounds")),
    "status": ((), ()),
    "replay": ((), ("stream", "since", "limit")),
    # the floor's notices for the panel (not engine input: logged and published as `events` lines)
    "move": (("seat", "direction"), ("table", "to_seat", "name")),
    "colour_up": (("chips",), ("step",)),
}
NOTICES = ("move", "colour_up")  # commands whose line is shown, not fed to the rules engine
REPLAY_STREAMS = ("rulings", "events")
REPLAY_LIMIT = 500
CHIPS = 10**9


def _line(name: str, body: dict[str, Any], seats: int) -> dict[str, Any] | None:
    """The protocol input line for a valid command body."""
    if name in ("status", "replay"):
        return None
    line: dict[str, Any] = {"type": name}
    if "seat" in body:
        line["seat"] = _seat(body["seat"], seats)
    if name == "seat":
        line["player"] = _text(body["player"], "player")
        if "name" in body:
            line["name"] = _text(body["name"], "name")
        if "stack" in body:
            line["stack"] = _int(body["stack"], "stack", 0, CHIPS)
        if "moved" in body:
            if not isinstance(body["moved"], bool):
                raise CommandError("invalid", f"moved: expected true or false, got {body['moved']!r}")
            line["moved"] = body["moved"]
    elif name == "leave":
        if body["reason"] not in LEAVE_REASONS:
            raise CommandError("invalid", f"reason: expected one of {', '.join(LEAVE_REASONS)}")
        line["reason"] = body["reason"]
    elif name == "level":
        line["sb"] = _int(body["sb"], "sb", 1, CHIPS)
        line["bb"] = _int(body["bb"], "bb", 1, CHIPS)
        line["ante"] = _int(body.get("ante", 0), "ante", 0, CHIPS)
        if "minutes" in body:  # the level's length (bar_league:Calling a Clock: a tenth of it)
            line["minutes"] = _int(body["minutes"], "minutes", 1, 1440)
        if "number" in body:  # the event's level number (corner_pocket:General Rules.C: late until 8)
            line["number"] = _int(body["number"], "number", 1, 1000)
        if line["sb"] > line["bb"]:
            raise CommandError(
                "invalid", f"sb: the small blind {line['sb']} exceeds the big blind {line['bb']}"
            )
    elif name == "move":
        if body["direction"] not in ("out", "in"):
            raise CommandError("invalid", f"direction: expected 'out' or 'in', got {body['direction']!r}")
        line["direction"] = body["direction"]
        if "table" in body:
            line["table"] = _text(body["table"], "table")
        if "to_seat" in body:
            line["to_seat"] = _int(body["to_seat"], "to_seat", 1, 16)
        if "name" in body:
            line["name"] = _text(body["name"], "name")
    elif name == "colour_up":
        line["chips"] = _text(body["chips"], "chips")
        if "step" in body:
            line["step"] = _text(body["step"], "step", 200)
    elif name == "clock" and "seconds" in body:
        line["seconds"] = _int(body["seconds"], "seconds", 1, 600)
    elif name == "penalty":
        line["reason"] = _text(body["reason"], "reason", 200)
        if "hands" not in body and "minutes" not in body and "rounds" not in body:
            raise CommandError("invalid", "penalty: give hands, rounds or minutes")
        if "rounds" in body:
            line["rounds"] = _int(body["rounds"], "rounds", 1, 4)  # dragons_den:40, bluff_street:58.a
        if "hands" in body:
            line["hands"] = _int(body["hands"], "hands", 1, 100)
        if "minutes" in body:
            line["minutes"] = _int(body["minutes"], "minutes", 1, 600)
    return line


def parse_command(
    name: str,
    payload: bytes | str,
    *,
    seats: int,
    allowed: tuple[str, ...] | frozenset[str],
    token: str = "",
) -> Command:
    """Validate one command; raise CommandError saying what is wrong and where."""
    if name not in FIELDS:
        raise CommandError("unknown", f"cmd/{name}: unknown command; commands are {', '.join(FIELDS)}")
    if len(payload) > MAX_PAYLOAD:
        raise CommandError("malformed", f"cmd/{name}: payload of {len(payload)} bytes exceeds {MAX_PAYLOAD}")
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    if not text.strip():
        body: Any = {}
    else:
        try:
            body = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CommandError(
                "malformed", f"cmd/{name}: not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
            ) from None
        except RecursionError:
            raise CommandError("malformed", f"cmd/{name}: JSON nested too deeply") from None
        except ValueError:  # a number of more than 4,300 digits
            raise CommandError("malformed", f"cmd/{name}: not a command: a number far too long") from None
    if not isinstance(body, dict):
        raise CommandError("malformed", f"cmd/{name}: expected a JSON object, got {type(body).__name__}")
    ident = _ident(body.get("id"))
    reply_to = _reply_to(body.get("reply_to"))
    given = body.get("token")
    if token and not (
        isinstance(given, str)
        and encodable(given)
        and hmac.compare_digest(given.encode(), token.encode())  # str compare_digest: ASCII only
    ):
        raise CommandError("unauthorised", f"cmd/{name}: missing or wrong director token")
    if name not in allowed:
        raise CommandError("unauthorised", f"cmd/{name}: this table does not accept {name!r} commands")
    required, optional = FIELDS[name]
    unknown = sorted(set(body) - set(required) - set(optional) - ENVELOPE)
    if unknown:
        raise CommandError("invalid", f"cmd/{name}: unknown field(s) {', '.join(unknown)}")
    missing = [k for k in required if k not in body]
    if missing:
        raise CommandError("invalid", f"cmd/{name}: missing field(s) {', '.join(missing)}")
    args = _replay_args(body) if name == "replay" else None
    return Command(name=name, line=_line(name, body, seats), id=ident, reply_to=reply_to, args=args)


def _replay_args(body: dict[str, Any]) -> dict[str, Any]:
    """`replay`: the lines of `stream` numbered after `since` (its `ruling_seq` / `event_seq`)."""
    stream = body.get("stream", "rulings")
    if stream not in REPLAY_STREAMS:
        raise CommandError("invalid", f"stream: expected one of {', '.join(REPLAY_STREAMS)}, got {stream!r}")
    return {
        "stream": stream,
        "since": _int(body.get("since", 0), "since", 0, 2**62),
        "limit": _int(body.get("limit", REPLAY_LIMIT), "limit", 1, REPLAY_LIMIT),
    }


def peek_envelope(payload: bytes | str) -> tuple[Any, str | None]:
    """Best-effort id and reply_to of a payload that failed validation, so the refusal reaches its sender."""
    try:
        body = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None, None
    if not isinstance(body, dict):
        return None, None
    try:
        ident = _ident(body.get("id"))
    except CommandError:
        ident = None
    try:
        reply_to = _reply_to(body.get("reply_to"))
    except CommandError:
        reply_to = None
    return ident, reply_to


def redelivery_key(name: str, payload: bytes, mid: int) -> str:
    """The key under which a command sent without an `id` is remembered: its topic and bytes (a
    digest) and the MQTT packet id it came with. The broker delivers a command again, byte for byte
    under the same packet id with DUP set, when the table died before acknowledging it; only such a
    delivery is looked up (`IncomingCommand.dup`), so a director who sends the same command twice
    on purpose gets it applied twice. A list, so it never equals a director's own `id` (json.dumps
    of a string or a number)."""
    digest = hashlib.sha256(name.encode() + b"\0" + payload).hexdigest()[:32]
    return json.dumps(["redelivery", digest, mid])
