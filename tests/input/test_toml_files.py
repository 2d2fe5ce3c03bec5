"""Every TOML file the tree reads, given the same broken file, says the same thing: the file, what
is wrong and where (controller.tomlfile), in the reader's own error type, never a traceback."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.floor.config import FloorConfigError, load_floor_config
from controller.registry.errors import SecretFileError
from controller.registry.keys import load_keys
from controller.rules.errors import ProfileError
from controller.rules.profile import load_profile_file
from controller.service.config import ConfigError, load_config
from vision.layout import LayoutError, load_layout

READERS = [
    pytest.param(load_config, ConfigError, id="table config"),
    pytest.param(load_floor_config, FloorConfigError, id="floor config"),
    pytest.param(load_profile_file, ProfileError, id="rule profile"),
    pytest.param(load_layout, LayoutError, id="camera layout"),
    pytest.param(load_keys, SecretFileError, id="venue key file"),
]

BROKEN = [
    pytest.param(
        b'title = "x"\nvenue = "caf\xe9"\n', "not UTF-8 text: byte 0xe9 at line 2, column 13", id="latin-1"
    ),
    pytest.param(b'title = "x"\nvenue "cafe"\n', "not valid TOML: ", id="syntax"),
]


@pytest.mark.parametrize(("read", "error"), READERS)
@pytest.mark.parametrize(("content", "message"), BROKEN)
def test_a_broken_file_is_named_with_its_problem_and_place(tmp_path, read, error, content, message):
    path = tmp_path / "broken.toml"
    path.write_bytes(content)
    os.chmod(path, 0o600)  # a key file must be the owner's alone before its content is read
    with pytest.raises(error) as exc:
        read(path)
    text = str(exc.value)
    assert str(path) in text and message in text
    if message.startswith("not valid TOML"):
        assert "(at line 2, column 7)" in text  # the parser's place, kept


@pytest.mark.parametrize(("read", "error"), READERS)
def test_a_missing_file_says_it_cannot_be_read(tmp_path, read, error):
    path = tmp_path / "nowhere.toml"
    if read is load_keys:  # checked for its permissions first, with its own message
        with pytest.raises(error, match="venue key file not found"):
            read(path)
        return
    with pytest.raises(error, match=f"{path}: cannot read: No such file"):
        read(Path(path))
