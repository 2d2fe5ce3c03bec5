"""Late registration cutoffs per rulebook."""

from __future__ import annotations

from controller.floor.seating.late import late_entry

FIRST_DEAL = 1_800_000_000.0


def test_dragons_den_thirty_minutes_after_the_first_deal():
    """dragons_den:Reminder: 'you must be in your seat at the table no later than 30 minutes after the first
    deal or you will be unable to play.'"""
    ok = late_entry("dragons_den", now=FIRST_DEAL + 29 * 60, first_deal=FIRST_DEAL, level_number=2)
    late = late_entry("dragons_den", now=FIRST_DEAL + 31 * 60, first_deal=FIRST_DEAL, level_number=2)
    assert ok.allowed and not late.allowed
    assert late.rule == "dragons_den:Reminder" and late.deadline == FIRST_DEAL + 1800
    assert "30 minutes" in late.message


def test_corner_pocket_called_in_players_until_level_eight():
    """corner_pocket:General Rules.C: late players who called to confirm have a seat drawn and are blinded
    'until they arrive, are blinded out or the tournament reaches level eight'."""
    kw = {"now": FIRST_DEAL + 3600 * 2, "first_deal": FIRST_DEAL}
    assert late_entry("corner_pocket", level_number=7, called_in=True, **kw).allowed
    assert not late_entry("corner_pocket", level_number=8, called_in=True, **kw).allowed
    refused = late_entry("corner_pocket", level_number=1, called_in=False, **kw)
    assert (
        not refused.allowed and "call" in refused.message and refused.rule == "corner_pocket:General Rules.C"
    )


def test_silent_rulebooks_leave_it_to_the_director():
    d = late_entry("cool_mule", now=FIRST_DEAL + 10**5, first_deal=FIRST_DEAL, level_number=9)
    assert d.allowed and d.rule == "cool_mule:1.c" and "director" in d.message
