"""Reading a TOML file, with one message for each way it can be unusable.

Every TOML file the tree reads (table config, floor config, rule profiles, camera layouts, venue
key files, doctor's checks) goes through `read_toml`, so a bad file says the same thing wherever it
is read: the file, then what is wrong and where (`table.toml: not UTF-8 text: byte 0xe9 at line 3,
column 8`, `x.toml: not valid TOML: Expected '=' after a key in a key/value pair (at line 2,
column 5)`). Each reader turns `TomlFileError` into its own error type, with `str(exc)` or with
`exc.source` and `exc.problem` apart.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any


class TomlFileError(ValueError):
    """A TOML file that cannot be used: `source` names it, `problem` says what and where."""

    def __init__(self, source: str, problem: str) -> None:
        self.source = source
        self.problem = problem
        super().__init__(f"{source}: {problem}")


def decode_utf8(data: bytes, source: str) -> str:
    """The text of `data`, or a TomlFileError naming the first byte that is not UTF-8 and its place."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise TomlFileError(
            source, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at line {line}, column {column}"
        ) from None


def parse_toml(text: str, source: str) -> dict[str, Any]:
    """TOML text into a dict; a syntax error names its line and column."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TomlFileError(source, f"not valid TOML: {exc}") from None


def read_text(path: str | os.PathLike[str]) -> str:
    """A UTF-8 text file's content; TomlFileError when it cannot be read or is not UTF-8."""
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TomlFileError(source, f"cannot read: {exc.strerror or exc}") from None
    return decode_utf8(data, source)


def read_toml(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A TOML file as a dict; TomlFileError when it cannot be read, is not UTF-8, or is not TOML."""
    return parse_toml(read_text(path), str(path))
