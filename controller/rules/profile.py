"""Rule profiles: one TOML file per venue rulebook, every setting with the rule it comes from.

A profile file looks like::

    name = "cool_mule"
    title = "Cool Mule Poker: Rules and Etiquette"

    [deal]
    exposed_misdeal_cards = { value = 2, rule = "cool_mule:5.g" }

Every setting is an inline table with `value` and `rule` (the citation, `<rulebook>:<rule>`; where
the rulebook is silent the citation names the borrowed rule, e.g. `tda:35`, and `note` says why).
The keys each section accepts are declared in `SCHEMA` (sections are contributed by the modules that
read them, see `SCHEMA_MODULES`); an unknown key, a bad value or a missing setting refuses the file
with a message naming the file, the key and the problem.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.rules.errors import ProfileError
from controller.tomlfile import TomlFileError, read_toml

PROFILE_DIR = Path(__file__).parent / "profiles"
PROFILE_NAMES = ("cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street")
DEFAULT_PROFILE = "bluff_street"


@dataclass(frozen=True, slots=True)
class Spec:
    """What one setting may hold. `choices` for enumerations, `kind` for plain types."""

    kind: type | tuple[type, ...]
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    doc: str = ""

    def check(self, value: Any) -> str | None:
        """The problem with `value`, or None when it is acceptable."""
        kinds = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        if isinstance(value, bool) and bool not in kinds:
            return f"expected {'/'.join(k.__name__ for k in kinds)}, got a boolean"
        if not isinstance(value, kinds):
            return f"expected {'/'.join(k.__name__ for k in kinds)}, got {type(value).__name__} {value!r}"
        if self.choices is not None:
            items = value if isinstance(value, list) else [value]
            for item in items:
                if item not in self.choices:
                    return f"{item!r} is not one of {', '.join(map(repr, self.choices))}"
        if self.minimum is not None and isinstance(value, int) and value < self.minimum:
            return f"must be at least {self.minimum}, got {value}"
        return None


@dataclass(frozen=True, slots=True)
class Setting:
    value: Any
    rule: str
    note: str = ""


# Modules that declare profile sections: each has SCHEMA = {section: {key: Spec}}.
SCHEMA_MODULES = (
    "controller.rules.schema_table",  # seating, button, deal, substantial action, exposure, registration
    "controller.rules.schema_play",  # betting, board, showdown
)


def load_schema() -> dict[str, dict[str, Spec]]:
    schema: dict[str, dict[str, Spec]] = {}
    for name in SCHEMA_MODULES:
        for section, keys in importlib.import_module(name).SCHEMA.items():
            schema.setdefault(section, {}).update(keys)
    return schema


class Profile:
    """A loaded, validated rule profile. `profile.value("deal", "key")`, `profile.rule(...)`."""

    def __init__(self, name: str, title: str, settings: dict[str, dict[str, Setting]], source: str):
        self.name = name
        self.title = title
        self.settings = settings
        self.source = source
        # Values worked out from the settings by their readers, once per profile (the settings are never
        # changed after loading): e.g. the engine's [deal] values, read on every card.
        self.memo: dict[str, Any] = {}

    def setting(self, section: str, key: str) -> Setting:
        return self.settings[section][key]

    def value(self, section: str, key: str) -> Any:
        return self.settings[section][key].value

    def rule(self, section: str, key: str) -> str:
        return self.settings[section][key].rule

    def __repr__(self) -> str:
        return f"Profile({self.name!r})"


def parse_profile(
    data: dict[str, Any], source: str, schema: dict[str, dict[str, Spec]] | None = None
) -> Profile:
    """Validate a decoded profile document. `source` names the file in every message."""
    schema = load_schema() if schema is None else schema
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ProfileError(f"{source}: key 'name': missing or not a string")
    title = data.get("title", name)
    if not isinstance(title, str):
        raise ProfileError(f"{source}: key 'title': expected a string")
    for key, value in data.items():
        if key in ("name", "title"):
            continue
        if key not in schema:
            raise ProfileError(f"{source}: key '{key}': unknown section (known: {', '.join(sorted(schema))})")
        if not isinstance(value, dict):
            raise ProfileError(f"{source}: key '{key}': expected a table of settings")
    settings: dict[str, dict[str, Setting]] = {}
    for section, specs in schema.items():
        table = data.get(section)
        if table is None:
            raise ProfileError(f"{source}: section [{section}] is missing")
        for key in table:
            if key not in specs:
                raise ProfileError(f"{source}: key '{section}.{key}': unknown setting")
        settings[section] = {}
        for key, spec in specs.items():
            where = f"{source}: key '{section}.{key}'"
            if key not in table:
                raise ProfileError(f"{where}: required setting is missing")
            entry = table[key]
            if not isinstance(entry, dict) or "value" not in entry or "rule" not in entry:
                raise ProfileError(f'{where}: expected {{ value = ..., rule = "<rulebook>:<rule>" }}')
            extra = set(entry) - {"value", "rule", "note"}
            if extra:
                raise ProfileError(f"{where}: unknown field(s) {', '.join(sorted(extra))}")
            rule = entry["rule"]
            if not isinstance(rule, str) or ":" not in rule:
                raise ProfileError(f"{where}: 'rule' must be a citation like \"{name}:5.g\", got {rule!r}")
            problem = spec.check(entry["value"])
            if problem:
                raise ProfileError(f"{where}: bad value: {problem}")
            settings[section][key] = Setting(entry["value"], rule, entry.get("note", ""))
    return Profile(name, title, settings, source)


def load_profile_file(path: str | Path) -> Profile:
    path = Path(path)
    try:
        data = read_toml(path)
    except TomlFileError as exc:
        raise ProfileError(str(exc)) from None
    return parse_profile(data, str(path))


_cache: dict[str, Profile] = {}


def load_profile(name_or_path: str) -> Profile:
    """A built-in profile by name (`cool_mule`, ...) or a profile file by path."""
    if name_or_path in _cache:
        return _cache[name_or_path]
    if name_or_path in PROFILE_NAMES:
        profile = load_profile_file(PROFILE_DIR / f"{name_or_path}.toml")
    elif name_or_path.endswith(".toml"):
        profile = load_profile_file(name_or_path)
    else:
        raise ProfileError(
            f"unknown profile {name_or_path!r} (one of {', '.join(PROFILE_NAMES)}, or a .toml path)"
        )
    _cache[name_or_path] = profile
    return profile
