"""What each venue's rulebook says about registration, the seat draw and late arrivals.

Each fact names the rule it comes from (`<rulebook>:<rule>`), like the rule profiles do. Where a
rulebook is silent the default is the league's usual practice and the citation says so. An event
can override the age minimum (`--min-age`) and the starting stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class RegistrationPolicy:
    profile: str
    min_age: int
    min_age_rule: str
    seat1_button: bool  # the player who draws seat 1 is the first dealer (on the button)
    seat1_button_rule: str
    late_minutes_after_first_deal: int | None  # None: no time-based deadline in the rulebook
    late_rule: str
    starting_stack: int | None
    starting_stack_rule: str
    random_seats_rule: str


DEFAULT_MIN_AGE = 19

POLICIES: dict[str, RegistrationPolicy] = {
    "cool_mule": RegistrationPolicy(
        "cool_mule",
        19,
        "cool_mule:1.d",
        True,
        "cool_mule:4.a",
        None,
        "cool_mule: silent",
        None,
        "cool_mule:4.b (set per event)",
        "cool_mule:4.a",
    ),
    "corner_pocket": RegistrationPolicy(
        "corner_pocket",
        DEFAULT_MIN_AGE,
        "default (cool_mule:1.d)",
        True,
        "corner_pocket:Before Play Begins.A",
        None,
        "corner_pocket:Etiquette.C (blinded in until level 8)",
        20000,
        "corner_pocket:Before Play Begins.B",
        "corner_pocket:Before Play Begins.A",
    ),
    "dragons_den": RegistrationPolicy(
        "dragons_den",
        DEFAULT_MIN_AGE,
        "default (cool_mule:1.d)",
        False,
        "dragons_den: silent",
        30,
        "dragons_den:Reminder (seated no later than 30 minutes after the first deal)",
        None,
        "dragons_den: silent",
        "dragons_den:4",
    ),
    "bluff_street": RegistrationPolicy(
        "bluff_street",
        DEFAULT_MIN_AGE,
        "default (cool_mule:1.d)",
        False,
        "bluff_street:Button (first chip stack to the dealer's right)",
        None,
        "bluff_street: silent",
        None,
        "bluff_street: silent",
        "bluff_street:10",
    ),
    "bar_league": RegistrationPolicy(
        "bar_league",
        DEFAULT_MIN_AGE,
        "default (cool_mule:1.d)",
        False,
        "bar_league: silent",
        None,
        "bar_league: silent",
        None,
        "bar_league: silent",
        "bar_league: silent (random draw)",
    ),
}


def policy_for(profile: str) -> RegistrationPolicy:
    try:
        return POLICIES[profile]
    except KeyError:
        raise ValueError(f"unknown profile {profile!r} (one of {', '.join(POLICIES)})") from None


def late_deadline(profile: str, first_deal: datetime | None) -> datetime | None:
    """The last moment a late player may still tap in, or None when the rulebook sets none."""
    minutes = policy_for(profile).late_minutes_after_first_deal
    if minutes is None or first_deal is None:
        return None
    return first_deal + timedelta(minutes=minutes)
