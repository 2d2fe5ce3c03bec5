"""The venue key file: the HMAC secrets that sign player cards.

The file is TOML, readable only by the service account (mode 0600 or 0400)::

    venue = "cool_mule"
    current = "k2"            # key id used to sign new cards
    retired = ["k1"]          # cards signed with these are refused

    [keys]
    k1 = "9f1c...64 hex chars..."
    k2 = "..."

A file that the group or others can read is refused (like ssh does with private keys): a copied
secret lets anyone mint cards. Secrets never appear in repr(), logs or error messages.
"""

from __future__ import annotations

import os
import re
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

from controller.registry.errors import SecretFileError
from controller.tomlfile import TomlFileError, parse_toml, read_text

KEY_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,16}$")
MIN_SECRET_BYTES = 16


class Secret:
    """Key bytes that refuse to print themselves."""

    __slots__ = ("_value",)

    def __init__(self, value: bytes):
        self._value = bytes(value)

    def reveal(self) -> bytes:
        return self._value

    def __repr__(self) -> str:
        return "Secret(<hidden>)"

    __str__ = __repr__


@dataclass(frozen=True)
class VenueKeys:
    """A venue's signing keys. `current` signs new cards; `retired` ids verify nothing."""

    venue: str
    current: str
    keys: dict[str, Secret] = field(repr=False)
    retired: frozenset[str] = frozenset()

    def signing_key(self) -> tuple[str, Secret]:
        return self.current, self.keys[self.current]

    def status(self, key_id: str) -> str:
        """'active', 'retired' or 'unknown'."""
        if key_id in self.retired:
            return "retired"
        return "active" if key_id in self.keys else "unknown"


def check_permissions(path: Path) -> None:
    """Refuse a key file that anyone but its owner can read or write."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise SecretFileError(f"{path}: venue key file not found") from None
    except OSError as exc:
        raise SecretFileError(f"{path}: cannot read venue key file: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise SecretFileError(f"{path}: venue key file is not a regular file")
    if st.st_mode & 0o077:
        raise SecretFileError(
            f"{path}: venue key file is accessible by group/others (mode {stat.S_IMODE(st.st_mode):04o}); "
            f"run: chmod 600 {path}"
        )


def parse_keys(text: str, source: str) -> VenueKeys:
    try:
        data = parse_toml(text, source)
    except TomlFileError as exc:
        raise SecretFileError(str(exc)) from None
    venue = data.get("venue")
    if not isinstance(venue, str) or not venue:
        raise SecretFileError(f"{source}: key 'venue': missing or not a string")
    table = data.get("keys")
    if not isinstance(table, dict) or not table:
        raise SecretFileError(f"{source}: section [keys]: missing or empty")
    keys: dict[str, Secret] = {}
    for key_id, value in table.items():
        if not KEY_ID_RE.match(key_id):
            raise SecretFileError(f"{source}: key id {key_id!r}: use 1-16 letters, digits, '-' or '_'")
        if not isinstance(value, str):
            raise SecretFileError(f"{source}: keys.{key_id}: expected a hex string")
        try:
            raw = bytes.fromhex(value)
        except ValueError:
            raise SecretFileError(f"{source}: keys.{key_id}: not a hex string") from None
        if len(raw) < MIN_SECRET_BYTES:
            raise SecretFileError(
                f"{source}: keys.{key_id}: secret too short (need {MIN_SECRET_BYTES}+ bytes)"
            )
        keys[key_id] = Secret(raw)
    retired = data.get("retired", [])
    if not isinstance(retired, list) or not all(isinstance(k, str) for k in retired):
        raise SecretFileError(f"{source}: key 'retired': expected a list of key ids")
    current = data.get("current")
    if not isinstance(current, str) or current not in keys:
        raise SecretFileError(f"{source}: key 'current': must name one of [keys] ({', '.join(keys)})")
    if current in retired:
        raise SecretFileError(f"{source}: key 'current': {current!r} is retired")
    return VenueKeys(venue=venue, current=current, keys=keys, retired=frozenset(retired))


def load_keys(path: str | os.PathLike[str]) -> VenueKeys:
    """Load and check the venue key file (permissions first, then content)."""
    path = Path(path)
    check_permissions(path)
    try:
        text = read_text(path)
    except TomlFileError as exc:
        raise SecretFileError(f"{exc.source}: venue key file: {exc.problem}") from None
    return parse_keys(text, str(path))


def create_key_file(path: str | os.PathLike[str], venue: str, key_id: str = "k1") -> None:
    """Write a fresh key file with one random 32-byte secret, mode 0600 from the first byte on."""
    if not KEY_ID_RE.match(key_id):
        raise SecretFileError(f"key id {key_id!r}: use 1-16 letters, digits, '-' or '_'")
    path = Path(path)
    body = (
        f'venue = "{venue}"\ncurrent = "{key_id}"\nretired = []\n\n[keys]\n'
        f'{key_id} = "{secrets.token_hex(32)}"\n'
    )
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(body)


def rotate_key_file(
    path: str | os.PathLike[str], new_key_id: str, *, retire: list[str] | None = None
) -> VenueKeys:
    """Add a fresh key and sign new cards with it; `retire` lists key ids whose cards are refused
    from now on (re-issue those cards). The file is replaced atomically and stays mode 0600."""
    path = Path(path)
    keys = load_keys(path)
    if not KEY_ID_RE.match(new_key_id):
        raise SecretFileError(f"key id {new_key_id!r}: use 1-16 letters, digits, '-' or '_'")
    if new_key_id in keys.keys:
        raise SecretFileError(f"{path}: key id {new_key_id!r} already exists")
    retired = set(keys.retired) | set(retire or [])
    unknown = retired - set(keys.keys)
    if unknown:
        raise SecretFileError(f"{path}: cannot retire unknown key id(s) {', '.join(sorted(unknown))}")
    lines = [
        f'venue = "{keys.venue}"',
        f'current = "{new_key_id}"',
        "retired = [" + ", ".join(f'"{k}"' for k in sorted(retired)) + "]",
        "",
        "[keys]",
    ]
    lines += [f'{k} = "{v.reveal().hex()}"' for k, v in keys.keys.items()]
    lines.append(f'{new_key_id} = "{secrets.token_hex(32)}"')
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return load_keys(path)
