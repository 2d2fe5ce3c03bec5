"""The data a clone of the repository needs is in the repository, with its licence, and found through
one helper (controller/datapaths.py) whatever lies beside the clone."""

from __future__ import annotations

import json

import pytest

from controller import datapaths
from hil.scene import decks_root, load_deck


def test_the_repository_carries_decks_hands_rulebooks_and_photos_with_their_licences():
    data = datapaths.DATA
    for deck in ("anglo_poker", "tango"):
        images = sorted(p.stem for p in (data / "decks" / deck).glob("*.png"))
        assert len(images) == 53 and "back" in images, deck
        assert "GPL-3+" in (data / "decks" / deck / "LICENSE.txt").read_text()
    index = json.loads((data / "phh" / "INDEX.json").read_text())
    assert len(list((data / "phh" / "pluribus").glob("*/*.phh"))) == index["count"] == 160
    assert "MIT" in (data / "phh" / "SOURCES.md").read_text()
    assert sorted(p.stem for p in (data / "rulebooks").glob("*.txt")) == [
        "bar_league",
        "bluff_street",
        "cool_mule",
        "corner_pocket",
        "dragons_den",
    ]
    photos = data / "real_photos"
    assert "attribution" in (photos / "SOURCES.md").read_text()
    total = 0
    for folder in ("edje_pinochle_train", "roboflow_blackjack_cc_by", "foltys_single_cards"):
        labels = json.loads((photos / folder / "labels.json").read_text())
        jpgs = sorted(p.name for p in (photos / folder).glob("*.jpg"))
        assert jpgs == sorted(labels), f"{folder}: every photo has its labels and no label lacks its photo"
        assert (photos / folder / "LICENSE.txt").stat().st_size > 0
        total += sum(p.stat().st_size for p in (photos / folder).glob("*.jpg"))
    # 6.0 MB: the 28 photos of the demo and the doctor, and the 32 the real-photo tests measure (54)
    # (6.5 MB with the two chip photos of stop 52: the chip-insert tests run in a clone alone)
    assert total < 7_000_000, "the sample stays a few MB; the full set lives outside the repository"


def test_the_repository_copy_comes_first_and_shared_only_adds(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    (shared / "data" / "decks" / "other").mkdir(parents=True)
    (shared / "data" / "textures").mkdir(parents=True)
    monkeypatch.setattr(datapaths, "SHARED", shared)
    assert datapaths.find("decks") == datapaths.DATA / "decks"
    assert datapaths.find("textures") == shared / "data" / "textures"  # only beside the clone
    assert datapaths.candidates("decks") == [datapaths.DATA / "decks", shared / "data" / "decks"]


def test_prefer_larger_takes_the_fuller_copy_of_the_photos(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    full = shared / "data" / "real_photos"
    for i in range(200):
        (full / "many").mkdir(parents=True, exist_ok=True)
        (full / "many" / f"{i}.jpg").write_bytes(b"x")
    monkeypatch.setattr(datapaths, "SHARED", shared)
    assert datapaths.find("real_photos") == datapaths.DATA / "real_photos"
    assert datapaths.find("real_photos", prefer_larger=True) == full


def test_smart_table_data_is_looked_in_first(tmp_path, monkeypatch):
    (tmp_path / "decks").mkdir()
    monkeypatch.setenv("SMART_TABLE_DATA", str(tmp_path))
    assert datapaths.find("decks") == tmp_path / "decks"


def test_missing_data_names_every_place_looked_in(tmp_path, monkeypatch):
    monkeypatch.setattr(datapaths, "SHARED", tmp_path / "nowhere")
    with pytest.raises(datapaths.DataNotFound) as exc:
        datapaths.find("no_such_set")
    message = str(exc.value)
    assert str(datapaths.DATA / "no_such_set") in message
    assert str(tmp_path / "nowhere" / "data" / "no_such_set") in message
    assert "SMART_TABLE_DATA" in message
    assert datapaths.find_or_none("no_such_set") is None


def test_the_simulated_camera_reads_its_cards_from_the_repository(monkeypatch):
    monkeypatch.delenv("SMART_TABLE_DECKS", raising=False)
    assert decks_root() == datapaths.DATA / "decks"
    deck = load_deck("tango")
    assert len(deck) == 53 and deck["As"].shape[2] == 4


def test_a_deck_is_found_with_the_data_and_a_card_without_a_picture_is_named(monkeypatch, tmp_path):
    import shutil

    from controller.rules.cards import ALL_CODES

    monkeypatch.delenv("SMART_TABLE_DECKS", raising=False)
    files = datapaths.deck_files("tango")
    assert list(files) == [*ALL_CODES, "back"] and all(f.is_file() for f in files.values())
    deck = tmp_path / "venue"
    deck.mkdir()
    for code, f in files.items():
        if code != "Qh":
            shutil.copy(f, deck / f.name)
    monkeypatch.setenv("SMART_TABLE_DECKS", str(tmp_path))
    assert datapaths.decks_root() == tmp_path and datapaths.deck_dir("venue") == deck
    with pytest.raises(FileNotFoundError, match=r"venue: no image for Qh"):
        datapaths.deck_files("venue")
    with pytest.raises(FileNotFoundError, match=r"deck folder not found: .*nowhere"):
        datapaths.deck_files("nowhere")


def test_an_installed_copy_finds_the_data_of_the_clone_its_venv_lives_in(tmp_path, monkeypatch):
    """docs/install.md: `pip install .` into /opt/smart-table/.venv; the package then runs from
    site-packages (no data/ beside it), and the simulated camera must still find the clone's decks."""
    clone = tmp_path / "opt" / "smart-table"
    (clone / "data" / "decks" / "tango").mkdir(parents=True)
    site = tmp_path / "opt" / "smart-table" / ".venv" / "lib" / "site-packages"
    monkeypatch.setattr(datapaths, "DATA", site / "data")
    monkeypatch.setattr(datapaths, "SHARED", site.parent / "shared")
    monkeypatch.setattr(datapaths.sys, "prefix", str(clone / ".venv"))
    monkeypatch.delenv("SMART_TABLE_DATA", raising=False)
    assert datapaths.find("decks") == clone / "data" / "decks"
