"""PHH files read by controller/rules/phh.py: a file reads alike whatever its line ends, and a plain
action looked up whole (phh_lines._player_index) reads as the same action split into words. Moved here
from test_fast_paths.py (gone with the engine's shortcuts, issue 13); the flat-TOML reader is held to
tomllib in test_phh.py."""

from __future__ import annotations

from unittest import mock

from controller.rules import phh, phh_lines


def test_plain_phh_actions_are_read_as_split_actions_are():
    """to_lines reads "pK f" and "pK cc" by looking the whole text up; with that table empty every action
    is split into words: the lines must be the same for every sample hand."""
    import glob

    from controller import datapaths

    root = datapaths.find("phh/pluribus")
    files = sorted(glob.glob(str(root / "*" / "*.phh")))
    hands = [phh.load(f) for f in files]
    quick = [phh.to_lines(h) for h in hands]
    with mock.patch.object(phh_lines, "_player_index", lambda n: ({f"p{i + 1}": i for i in range(n)}, {})):
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
