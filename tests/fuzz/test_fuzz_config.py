"""TOML configs into the config loader: any file gives a Config or a ConfigError whose every problem
names the key (`section.key`), the section, or what is wrong with the file; never a traceback."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.service.config import SECTIONS, ConfigError, load_config

KNOWN = {name: [f.name for f in cls.__dataclass_fields__.values()] for name, cls in SECTIONS.items()}
FILE_LEVEL = ("cannot read", "not valid TOML", "not UTF-8 text")

toml_scalar = st.one_of(
    st.booleans(),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=30),
    st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=5)), max_size=3),
)


def toml_text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return {float("inf"): "inf", float("-inf"): "-inf"}.get(
            value, "nan" if value != value else repr(value)
        )
    if isinstance(value, str):
        return (
            '"'
            + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in value)
            + '"'
        )
    if isinstance(value, list):
        return "[" + ", ".join(toml_text(v) for v in value) + "]"
    return str(value)


@st.composite
def configs(draw) -> str:
    lines = []
    for section in draw(st.lists(st.sampled_from([*SECTIONS, "tabel", "x"]), max_size=4, unique=True)):
        lines.append(f"[{section}]")
        names = [*KNOWN.get(section, ["a"]), "typo_key"]
        for key in draw(st.lists(st.sampled_from(names), max_size=4, unique=True)):
            lines.append(f"{key} = {toml_text(draw(toml_scalar))}")
    return "\n".join(lines) + "\n"


def check(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.toml"
        path.write_bytes(data)
        try:
            load_config(path)
        except ConfigError as exc:
            text = str(exc)
            assert text.startswith(str(path)), text
            for problem in exc.problems:
                named = re.match(r"^([a-z_]+)(\.[a-z_/]+)?: ", problem)
                assert problem.startswith(FILE_LEVEL) or (
                    named and named.group(1) in {*SECTIONS, "tabel", "x"}
                ), problem


@settings(max_examples=120, deadline=None)
@given(configs())
def test_generated_configs(text):
    check(text.encode("utf-8", "surrogatepass"))


@settings(max_examples=120, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes(data):
    check(data)
