"""PHH files read by controller/rules/phh.py: a file reads alike whatever its line ends, and phh.py's own
quick readers (a one-line array read in one step, `key = value` split without the regular expression, a
plain action looked up whole) read as its general reader does. Moved here from test_fast_paths.py (gone
with the engine's shortcuts, issue 13); the quick-reader tests skip once phh.py no longer has them."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import phh


def _needs(*names: str) -> None:
    missing = [n for n in names if not hasattr(phh, n)]
    if missing:
        pytest.skip(f"phh.py has no {', '.join(missing)} any more")


_array_item = st.one_of(
    st.integers(0, 10**6).map(str),
    st.sampled_from(["-5", "+3", "1.5", "inf", "true", "false", "1e3", "00", "1 2", "x", "", "#", '"a"']),
    st.text(alphabet="ab cdp1#,[]'", max_size=8).map(lambda t: f"'{t}'"),
)


@settings(max_examples=800, deadline=None)
@given(st.lists(_array_item, max_size=6), st.sampled_from([", ", ",", " ,  "]), st.booleans())
def test_one_line_arrays_read_as_the_general_reader_reads_them(items, sep, trailing):
    """The one-step reader of a one-line PHH array gives what the item-by-item reader gives, or steps aside."""
    _needs("_one_line_array", "fast_toml")
    value = "[" + sep.join(items) + ("," if trailing and items else "") + "]"
    quick = phh._one_line_array(value)
    if quick is None:
        return
    with mock.patch.object(phh, "_one_line_array", lambda value: None):
        general = phh.fast_toml(f"k = {value}\n")
    assert general is not None and general["k"] == quick


@settings(max_examples=800, deadline=None)
@given(st.text(alphabet="ab_1 =\t\u00a0é-", max_size=10), st.sampled_from(["1", "'x'", "[1]", " 2 "]))
def test_key_lines_are_read_as_the_key_pattern_reads_them(key, value):
    """A PHH `key = value` line is split without the regular expression `_KEY_LINE`: same key, same value."""
    _needs("_KEY_LINE", "fast_toml")
    line = f"{key}={value}"
    match = phh._KEY_LINE.fullmatch(line.strip())
    read = phh.fast_toml(line + "\n")
    if match is None:
        assert read is None
    elif read is not None:
        expected = phh.fast_toml(f"k = {match.group(2)}\n")
        assert read == {match.group(1): expected["k"]}


def test_plain_phh_actions_are_read_as_split_actions_are():
    """to_lines reads "pK f" and "pK cc" by looking the whole text up; with that table empty every action
    is split into words: the lines must be the same for every sample hand."""
    import glob

    from controller import datapaths

    _needs("_player_index")
    root = datapaths.find("phh/pluribus")
    files = sorted(glob.glob(str(root / "*" / "*.phh")))
    hands = [phh.load(f) for f in files]
    quick = [phh.to_lines(h) for h in hands]
    with mock.patch.object(phh, "_player_index", lambda n: ({f"p{i + 1}": i for i in range(n)}, {})):
        general = [phh.to_lines(h) for h in hands]
    assert quick == general
    assert len(files) == 160


def test_a_phh_file_reads_alike_whatever_its_line_ends(tmp_path):
    """`load` reads the raw bytes and makes line ends "\\n" itself, as a text-mode read would."""
    import glob
    from pathlib import Path

    from controller import datapaths

    root = datapaths.find("phh/pluribus")
    source = sorted(glob.glob(str(root / "*" / "*.phh")))[0]
    raw = Path(source).read_bytes()
    expected = phh.load(source)
    for name, data in (("crlf.phh", raw.replace(b"\n", b"\r\n")), ("cr.phh", raw.replace(b"\n", b"\r"))):
        path = tmp_path / name
        path.write_bytes(data)
        hand = phh.load(path)
        assert (hand.players, hand.actions, hand.starting, hand.finishing) == (
            expected.players,
            expected.actions,
            expected.starting,
            expected.finishing,
        )
