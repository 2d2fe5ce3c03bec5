"""The table service's configuration: one TOML file, validated in full before anything starts.

Every setting has a default that runs the simulated table (devices `sim`, embedded broker, event log
in the state directory when there is no file), so `smart-table run` with no file at all is the zero-setup demo. A file is
checked key by key: an unknown key, a wrong type or a value out of range is refused with a message
that names the file and the dotted key (`table.toml: broker.port: expected an integer 1..65535`).
Every problem is reported at once, not just the first.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from controller.mqtt.link import BrokerConfig
from controller.tomlfile import TomlFileError, read_toml

PROFILE_NAMES = ("cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street")
# Who tells the engine the betting: "observed" (a self-dealt table, nobody types bets: the engine rules only
# on what the camera, reader and director can know) or "entered" (a dealer or tablet enters every action).
ACTIONS_MODES = ("observed", "entered")
# A topic segment: no MQTT wildcards, no separators, nothing a shell or ACL file would trip over.
SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SYNC_MODES = ("off", "normal", "full", "extra")
COMMAND_NAMES = (
    "seat",
    "leave",
    "level",
    "button",
    "hand_start",
    "hand_end",
    "away",
    "back",
    "clock",
    "time_expired",
    "penalty",
    "status",
    "replay",
    "move",
    "colour_up",
)


class ConfigError(ValueError):
    """An unusable configuration: carries every problem found, each naming the key."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        super().__init__("\n".join(f"{source}: {p}" for p in problems))


@dataclass(frozen=True, slots=True)
class TableConfig:
    id: str = "table-1"
    venue: str = "demo"
    seats: int = 10
    profile: str = "bluff_street"
    # "observed" (the self-dealt table: nobody enters bets) or "entered" (every action is entered)
    actions: str = "observed"


@dataclass(frozen=True, slots=True)
class DevicesConfig:
    # camera, panel and nfc name devices registered in controller/devices (`smart_table.devices`
    # entry points); a plug-in's own kinds are accepted the same way.
    # "sim" (the simulated camera, scriptable in-process), "none", /dev/videoN, or a vision.sources
    # spec: v4l2:DEV, picamera2:N, video:FILE, dir:FOLDER, sim:SEED
    camera: str = "sim"
    # "sim" (simulated panel firmware on a pseudo-terminal), "none", or a serial port path
    panel: str = "sim"
    # "sim:<name>" (simulated reader), "none", or an nfcpy device path ("usb", "tty:AMA0:pn532")
    nfc: str = "sim:table"
    # camera layout file (vision.layout); empty: the default layout for the seat count
    layout: str = ""
    # the venue's enrolled deck (`smart-table vision enroll`); empty: the built-in recogniser
    deck: str = ""
    # seconds without a frame before the camera is reported degraded
    camera_stall_seconds: float = 10.0
    # frames per second read from the camera (the simulated one renders at this rate)
    camera_fps: float = 10.0
    # consecutive frames a card must be seen in before it becomes an event (2 still ignores a flicker)
    camera_debounce_frames: int = 3
    # size of the simulated camera's frames
    sim_width: int = 1280
    sim_height: int = 720


@dataclass(frozen=True, slots=True)
class EventLogConfig:
    # empty: $STATE_DIRECTORY/events.db under systemd, ./smart-table-events.db otherwise
    path: str = ""
    # "full" survives a power cut; "normal" survives a crash of the process only
    synchronous: str = "full"


@dataclass(frozen=True, slots=True)
class CommandsConfig:
    # director commands this table accepts over MQTT
    allow: tuple[str, ...] = COMMAND_NAMES
    # a file holding the director's token; when set, commands must carry it as "token"
    token_file: str = ""


@dataclass(frozen=True, slots=True)
class CheckinConfig:
    # the player registry (controller.registry): "sqlite:///path.db" or a PostgreSQL URL; empty: no check-in
    registry: str = ""
    # the venue key file that verifies player cards
    keys_file: str = ""
    # the registry's event this table plays in
    event: str = ""


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    # bound of each source's input queue: a source that outruns the engine waits, the others do not
    queue_size: int = 256
    # director commands refused with "busy" once this many wait for the engine
    command_backlog: int = 256
    # seconds to wait for the devices to open before READY is sent anyway (with the failures reported)
    ready_timeout: float = 5.0
    log_level: str = "info"


@dataclass(frozen=True, slots=True)
class MqttConfig:
    # publish the camera picture at each alert on `<prefix>/picture` (seat zones blacked out,
    # docs/mqtt.md "Camera picture"); only a table with a camera has one (devices.camera != "none")
    publish_picture: bool = True
    # the picture's width in pixels (its height follows the frame's) and its JPEG quality
    picture_width: int = 640
    picture_quality: int = 70


@dataclass(frozen=True, slots=True)
class Config:
    table: TableConfig = field(default_factory=TableConfig)
    devices: DevicesConfig = field(default_factory=DevicesConfig)
    broker: BrokerConfig = field(default_factory=BrokerConfig)
    mqtt: MqttConfig = field(default_factory=MqttConfig)
    event_log: EventLogConfig = field(default_factory=EventLogConfig)
    commands: CommandsConfig = field(default_factory=CommandsConfig)
    checkin: CheckinConfig = field(default_factory=CheckinConfig)
    service: ServiceConfig = field(default_factory=ServiceConfig)
    source: str = "<defaults>"

    @property
    def prefix(self) -> str:
        """The MQTT topic prefix of this table."""
        return f"smarttable/v1/{self.table.venue}/{self.table.id}"

    def event_log_path(self) -> Path:
        if self.event_log.path:
            return Path(self.event_log.path)
        state_dir = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
        return Path(state_dir) / "events.db" if state_dir else Path("smart-table-events.db")

    def replace(self, **sections: dict[str, Any]) -> Config:
        """A copy with some settings changed, validated like a file: `cfg.replace(broker={"port": 1})`."""
        raw = {s.name: _as_dict(getattr(self, s.name)) for s in fields(self) if s.name != "source"}
        for name, values in sections.items():
            raw.setdefault(name, {}).update(values)
        return parse_config(raw, self.source)


def _as_dict(section: Any) -> dict[str, Any]:
    return {f.name: getattr(section, f.name) for f in fields(section)}


SECTIONS: dict[str, type] = {
    "table": TableConfig,
    "devices": DevicesConfig,
    "broker": BrokerConfig,
    "mqtt": MqttConfig,
    "event_log": EventLogConfig,
    "commands": CommandsConfig,
    "checkin": CheckinConfig,
    "service": ServiceConfig,
}


def _type_problem(key: str, value: Any, default: Any) -> str | None:
    if isinstance(default, bool):
        ok = isinstance(value, bool)
        want = "true or false"
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
        want = "an integer"
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        want = "a number"
    elif isinstance(default, str):
        ok = isinstance(value, str)
        want = "a string"
    elif isinstance(default, tuple):
        ok = isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)
        want = "a list of strings"
    else:  # pragma: no cover - every default is one of the above
        return None
    return None if ok else f"{key}: expected {want}, got {type(value).__name__} {value!r}"


def _check_values(cfg: Config) -> list[str]:
    """Range and meaning checks that types alone cannot express."""
    p: list[str] = []
    t, d, b, e, c, s = cfg.table, cfg.devices, cfg.broker, cfg.event_log, cfg.commands, cfg.service
    if not SEGMENT.match(t.id):
        p.append(
            f"table.id: {t.id!r} must be 1-64 letters, digits, '_', '.', '-' (it is an MQTT topic level)"
        )
    if not SEGMENT.match(t.venue):
        p.append(
            f"table.venue: {t.venue!r} must be 1-64 letters, digits, '_', '.', '-' (an MQTT topic level)"
        )
    if not 2 <= t.seats <= 10:
        p.append(f"table.seats: must be 2..10, got {t.seats}")
    if t.profile not in PROFILE_NAMES:
        p.append(f"table.profile: {t.profile!r} is not one of {', '.join(PROFILE_NAMES)}")
    if t.actions not in ACTIONS_MODES:
        p.append(
            f"table.actions: {t.actions!r} is not one of {', '.join(ACTIONS_MODES)} "
            "(observed: nobody enters the bets; entered: a dealer or tablet enters every action)"
        )
    for key in ("camera", "panel", "nfc"):
        if not getattr(d, key).strip():
            p.append(f'devices.{key}: empty; use "sim", "none" or a device')
    from controller import devices  # the registered device names (controller/devices)

    for key, kind in (("camera", "camera"), ("panel", "panel"), ("nfc", "reader")):
        spec = getattr(d, key).strip()
        if spec and spec != "none" and (why := devices.problem(kind, spec)):
            p.append(f'devices.{key}: {why}; or "none"')
    if d.nfc.startswith("sim") and d.nfc not in ("sim",) and not d.nfc.startswith("sim:"):
        p.append(f'devices.nfc: {d.nfc!r}: the simulated reader is written "sim:<name>"')
    if d.layout and not Path(d.layout).is_file():
        p.append(f"devices.layout: file {d.layout!r} does not exist")
    if d.deck and not Path(d.deck).is_file():
        p.append(f"devices.deck: file {d.deck!r} does not exist (make it with `smart-table vision enroll`)")
    if d.camera_stall_seconds <= 0:
        p.append(f"devices.camera_stall_seconds: must be > 0, got {d.camera_stall_seconds}")
    if not 0 < d.camera_fps <= 120:
        p.append(f"devices.camera_fps: must be in (0, 120], got {d.camera_fps}")
    if not 2 <= d.camera_debounce_frames <= 30:
        p.append(
            f"devices.camera_debounce_frames: must be 2..30 (one frame would turn a flicker into an event), got {d.camera_debounce_frames}"
        )
    if not (160 <= d.sim_width <= 4096 and 120 <= d.sim_height <= 4096):
        p.append(f"devices.sim_width/sim_height: {d.sim_width}x{d.sim_height} is not a usable frame size")
    ci = cfg.checkin
    if ci.registry and not (ci.keys_file and ci.event):
        p.append("checkin.registry: set, so checkin.keys_file and checkin.event are needed too")
    if ci.keys_file and not Path(ci.keys_file).is_file():
        p.append(f"checkin.keys_file: file {ci.keys_file!r} does not exist")
    for key in ("port", "embedded_port"):
        v = getattr(b, key)
        if not (0 if key == "embedded_port" else 1) <= v <= 65535:
            p.append(f"broker.{key}: expected an integer 1..65535, got {v}")
    if b.protocol not in ("auto", "5", "3.1.1"):
        p.append(f"broker.protocol: {b.protocol!r} is not one of 'auto', '5', '3.1.1'")
    if not 5 <= b.keepalive <= 3600:
        p.append(f"broker.keepalive: must be 5..3600 seconds, got {b.keepalive}")
    if not 0 <= b.session_expiry <= 7 * 86400:
        p.append(f"broker.session_expiry: must be 0..604800 seconds, got {b.session_expiry}")
    for key in ("password_file", "ca_file", "cert_file", "key_file"):
        v = getattr(b, key)
        if v and not Path(v).is_file():
            p.append(f"broker.{key}: file {v!r} does not exist")
    if b.password_file and not b.username:
        p.append("broker.password_file: set, but broker.username is empty")
    if (b.cert_file or b.key_file) and not (b.cert_file and b.key_file):
        p.append("broker.cert_file/key_file: a client certificate needs both")
    if not b.host and (b.username or b.tls):
        p.append("broker.host: empty (embedded broker) but username/tls are set; name the broker host")
    if b.client_id and not re.match(r"^[A-Za-z0-9_.-]{1,64}$", b.client_id):
        p.append(f"broker.client_id: {b.client_id!r} must be 1-64 letters, digits, '_', '.', '-'")
    if e.synchronous not in SYNC_MODES:
        p.append(f"event_log.synchronous: {e.synchronous!r} is not one of {', '.join(SYNC_MODES)}")
    for name in c.allow:
        if name not in COMMAND_NAMES:
            p.append(f"commands.allow: {name!r} is not a command ({', '.join(COMMAND_NAMES)})")
    if c.token_file and not Path(c.token_file).is_file():
        p.append(f"commands.token_file: file {c.token_file!r} does not exist")
    if not 1 <= s.queue_size <= 100_000:
        p.append(f"service.queue_size: must be 1..100000, got {s.queue_size}")
    if not 1 <= s.command_backlog <= 100_000:
        p.append(f"service.command_backlog: must be 1..100000, got {s.command_backlog}")
    if s.ready_timeout <= 0:
        p.append(f"service.ready_timeout: must be > 0, got {s.ready_timeout}")
    if s.log_level.lower() not in ("debug", "info", "warning", "error"):
        p.append(f"service.log_level: {s.log_level!r} is not one of debug, info, warning, error")
    m = cfg.mqtt
    if not 64 <= m.picture_width <= 4096:
        p.append(f"mqtt.picture_width: must be 64..4096 pixels, got {m.picture_width}")
    if not 1 <= m.picture_quality <= 100:
        p.append(f"mqtt.picture_quality: must be 1..100, got {m.picture_quality}")
    return p


def secret_files(cfg: Config) -> dict[str, str]:
    """The configured token, password and key files by dotted key (unset ones left out)."""
    named = {
        "commands.token_file": cfg.commands.token_file,
        "broker.password_file": cfg.broker.password_file,
        "broker.key_file": cfg.broker.key_file,
        "checkin.keys_file": cfg.checkin.keys_file,
    }
    return {k: v for k, v in named.items() if v}


def _secret_problems(cfg: Config) -> list[str]:
    return [
        f"{key}: {problem}"
        for key, path in secret_files(cfg).items()
        if (problem := secret_file_problem(path))
    ]


def parse_config(raw: dict[str, Any], source: str = "<config>", *, check_secrets: bool = True) -> Config:
    """Validate a decoded TOML document; raise ConfigError listing every problem by dotted key.
    `check_secrets=False` is for `smart-table doctor`, which reports bad secret files as a check of its own."""
    problems: list[str] = []
    built: dict[str, Any] = {}
    for name in raw:
        if name not in SECTIONS:
            hint = difflib.get_close_matches(name, SECTIONS, n=1)
            problems.append(
                f"{name}: unknown section"
                + (f" (did you mean [{hint[0]}]?)" if hint else "")
                + f"; sections are {', '.join(SECTIONS)}"
            )
    for name, cls in SECTIONS.items():
        values = raw.get(name, {})
        if not isinstance(values, dict):
            problems.append(f"{name}: expected a table [{name}], got {type(values).__name__}")
            values = {}
        defaults = cls()
        known = {f.name for f in fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in values.items():
            if key not in known:
                hint = difflib.get_close_matches(key, known, n=1)
                problems.append(
                    f"{name}.{key}: unknown key" + (f" (did you mean {name}.{hint[0]}?)" if hint else "")
                )
                continue
            default = getattr(defaults, key)
            problem = _type_problem(f"{name}.{key}", value, default)
            if problem:
                problems.append(problem)
                continue
            if isinstance(default, float):
                value = float(value)
            elif isinstance(default, tuple):
                value = tuple(value)
            kwargs[key] = value
        built[name] = cls(**kwargs)
    cfg = Config(**built, source=source)
    problems.extend(_check_values(cfg))
    if check_secrets:
        problems.extend(_secret_problems(cfg))
    if problems:
        raise ConfigError(source, problems)
    return cfg


def load_config(path: str | os.PathLike[str] | None, *, check_secrets: bool = True) -> Config:
    """Read and validate a TOML file; None gives the simulated table's defaults."""
    if path is None:
        return parse_config(no_file_defaults(), "<defaults>")
    try:
        raw = read_toml(path)
    except TomlFileError as exc:
        raise ConfigError(exc.source, [exc.problem]) from None
    return parse_config(raw, str(path), check_secrets=check_secrets)


def load_config_reporting(
    path: str | os.PathLike[str] | None, *, check_secrets: bool = True
) -> Config | None:
    """The config a command runs with, or None after printing its problems (`error: table.toml: ...`)
    to stderr: the command then exits 2 (bad input). `run`, `doctor` and `homeassistant` share it."""
    import sys

    try:
        return load_config(path, check_secrets=check_secrets)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def no_file_defaults() -> dict[str, dict[str, Any]]:
    """`smart-table run` with no file (issue 18): the embedded broker on 1883, or on a free port where
    1883 is taken (Debian's Mosquitto listens there), and the event log in the state directory, not
    in whatever folder the command was started from."""
    broker = BrokerConfig()
    return {
        "broker": {"embedded_port": _free_port_preferring(broker.embedded_bind, broker.embedded_port)},
        "event_log": {"path": str(default_state_dir() / "events.db")},
    }


def default_state_dir() -> Path:
    """$STATE_DIRECTORY (systemd), else $XDG_STATE_HOME/smart-table, else /var/lib/smart-table for
    root, else ~/.local/state/smart-table (the XDG default)."""
    systemd = os.environ.get("STATE_DIRECTORY", "").split(":")[0]
    if systemd:
        return Path(systemd)
    xdg = os.environ.get("XDG_STATE_HOME", "")
    if xdg:
        return Path(xdg) / "smart-table"
    if os.geteuid() == 0:
        return Path("/var/lib/smart-table")
    return Path.home() / ".local" / "state" / "smart-table"


def _free_port_preferring(host: str, port: int) -> int:
    """`port` if it can be listened on now, else a free one (a race with another process remains;
    the broker's own error then names the port)."""
    import socket

    for want in (port, 0):
        with socket.socket() as sock:
            try:
                sock.bind((host, want))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    return port


def secret_file_problem(path: str) -> str | None:
    """Why a token, password or private key file must not be used, or None (also None when it is
    missing or unset: that is said elsewhere). An empty secret would switch the check off; one that
    others can read is no secret (ssh refuses a private key for the same reason)."""
    if not path:
        return None
    if "\0" in path:  # os.stat would raise ValueError: say it, as for any other unusable file
        return f"file path {path!r} contains a NUL character"
    try:
        st = os.stat(path)
        data = Path(path).read_bytes() if stat.S_ISREG(st.st_mode) else None
    except OSError:
        return None
    if data is None:
        return None
    if st.st_mode & 0o077:
        return (
            f"file {path!r} is readable or writable by others (mode {stat.S_IMODE(st.st_mode):04o}); "
            f"chmod 600 {path}"
        )
    if not data.strip():
        return f"file {path!r} is empty"
    if b"-----BEGIN" not in data:  # a token or password: its first line is the secret
        first = data.splitlines()[0].strip() if data.splitlines() else b""
        if not first:
            return f"file {path!r}: the first line (the secret) is empty"
        try:
            first.decode("ascii")
        except UnicodeDecodeError:
            return f"file {path!r}: the secret is not plain ASCII text"
    return None


def read_secret(path: str) -> str:
    """The first line of a credentials file (password, token), without its newline."""
    if not path:
        return ""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return lines[0].strip() if lines else ""
