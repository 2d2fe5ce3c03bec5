"""Rule profiles: every setting of every rulebook cites its rule, and a bad profile file is refused with a
message naming the file, the key and the problem."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from controller import datapaths
from controller.rules.errors import ProfileError
from controller.rules.profile import PROFILE_DIR, PROFILE_NAMES, load_profile, load_profile_file

RULEBOOKS = datapaths.find("rulebooks")  # the repository's data/rulebooks (controller/datapaths.py)
CITATION = re.compile(r"^(cool_mule|bar_league|dragons_den|corner_pocket|bluff_street):\S.*$")


@pytest.mark.parametrize("name", PROFILE_NAMES)
def test_every_setting_cites_a_rule_of_one_of_the_five_rulebooks(name):
    profile = load_profile(name)
    assert profile.name == name
    for section, settings in profile.settings.items():
        for key, setting in settings.items():
            assert CITATION.match(setting.rule), f"{name} {section}.{key}: {setting.rule!r}"
            if not setting.rule.startswith(name + ":"):
                # A borrowed rule says why in its note.
                assert setting.note, f"{name} {section}.{key} borrows {setting.rule} without a note"


@pytest.mark.parametrize(
    ("citation", "text"),
    [
        ("cool_mule:5.g", "if the first or second card off the deck is exposed"),
        ("bar_league:Misdeals(b)", "any card intended for the button position is exposed"),
        ("dragons_den:27.c", "first card dealt to the wrong seat"),
        ("corner_pocket:Dealing.E", "If the first holecard dealt is exposed, a misdeal results"),
        ("bluff_street:33.a.2", "First card dealt to the wrong seat"),
    ],
)
def test_citations_point_at_the_rule_text(citation, text):
    """Spot checks that the numbering used in citations is the rulebook's own."""
    book = citation.split(":")[0]
    assert text.lower() in (RULEBOOKS / f"{book}.txt").read_text(encoding="utf-8").lower()


def _write(tmp_path: Path, mutate) -> Path:
    data = (PROFILE_DIR / "cool_mule.toml").read_text()
    path = tmp_path / "venue.toml"
    path.write_text(mutate(data))
    return path


def test_unknown_key_is_refused_naming_file_and_key(tmp_path):
    path = _write(
        tmp_path,
        lambda t: t.replace("[deal]\n", '[deal]\nexposed_cards_misdeal = { value = 2, rule = "x:1" }\n'),
    )
    with pytest.raises(
        ProfileError, match=r"venue\.toml: key 'deal\.exposed_cards_misdeal': unknown setting"
    ):
        load_profile_file(path)


def test_bad_value_is_refused_naming_the_problem(tmp_path):
    path = _write(
        tmp_path,
        lambda t: t.replace("exposed_misdeal_cards = { value = 2,", "exposed_misdeal_cards = { value = 3,"),
    )
    with pytest.raises(
        ProfileError, match=r"key 'deal\.exposed_misdeal_cards': bad value: 3 is not one of 1, 2"
    ):
        load_profile_file(path)
    path = _write(
        tmp_path, lambda t: t.replace("dead_button = { value = true,", 'dead_button = { value = "yes",')
    )
    with pytest.raises(ProfileError, match=r"seating\.dead_button': bad value: expected bool"):
        load_profile_file(path)


def test_missing_setting_and_missing_citation_are_refused(tmp_path):
    path = _write(tmp_path, lambda t: re.sub(r"\nself_dealt = .*\n", "\n", t))
    with pytest.raises(ProfileError, match=r"key 'seating\.self_dealt': required setting is missing"):
        load_profile_file(path)
    path = _write(
        tmp_path,
        lambda t: t.replace(
            'self_dealt = { value = true, rule = "cool_mule:5.a" }', "self_dealt = { value = true }"
        ),
    )
    with pytest.raises(ProfileError, match=r"seating\.self_dealt'.*rule"):
        load_profile_file(path)


def test_not_toml_and_unknown_section(tmp_path):
    bad = tmp_path / "broken.toml"
    bad.write_text("name = 'x'\n[deal\n")
    with pytest.raises(ProfileError, match=r"broken\.toml: not valid TOML"):
        load_profile_file(bad)
    path = _write(tmp_path, lambda t: t + "\n[casino]\nx = { value = 1, rule = 'a:1' }\n")
    with pytest.raises(ProfileError, match=r"key 'casino': unknown section"):
        load_profile_file(path)


def test_a_venue_can_use_its_own_profile_file(tmp_path):
    """A venue whose house rule is 'only the first card' can copy a profile and change one value."""
    path = _write(
        tmp_path,
        lambda t: t.replace("exposed_misdeal_cards = { value = 2,", "exposed_misdeal_cards = { value = 1,"),
    )
    assert tomllib.loads(path.read_text())["name"] == "cool_mule"
    assert load_profile_file(path).value("deal", "exposed_misdeal_cards") == 1
