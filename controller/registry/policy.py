"""What a venue's rule profile says about registration, the seat draw and late arrivals.

The facts come from the rule profile (controller/rules/profiles/<name>.toml): `registration.minimum_age`,
`registration.late_arrival_minutes`, `seating.first_button`, each with its citation. The starting
stack is not a profile setting; the only rulebook that fixes one is Corner Pocket (20,000). An event
can override the age minimum and the starting stack.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache
from typing import Any

PROFILES = ("cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street")
DEFAULT_MIN_AGE = 19  # cool_mule:1.d
STARTING_STACKS = {"corner_pocket": (20000, "corner_pocket:Before Play Begins.B")}


@dataclass(frozen=True)
class RegistrationPolicy:
    profile: str
    min_age: int
    min_age_rule: str
    seat1_button: bool  # the player who draws seat 1 is the first dealer (on the button)
    seat1_button_rule: str
    late_minutes_after_first_deal: int | None  # None: no time-based deadline
    late_rule: str
    late_level: int | None  # from this level number on a late player's seat is gone (corner_pocket)
    late_level_rule: str
    starting_stack: int | None
    starting_stack_rule: str


def _setting(name: str, section: str, key: str) -> tuple[Any, str] | None:
    """(value, rule) from the validated profile, or None where it does not set it."""
    from controller.rules.profile import load_profile

    try:
        setting = load_profile(name).setting(section, key)
    except KeyError:
        return None
    return setting.value, setting.rule


@cache
def policy_for(profile: str) -> RegistrationPolicy:
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r} (one of {', '.join(PROFILES)})")
    age = _setting(profile, "registration", "minimum_age") or (DEFAULT_MIN_AGE, "cool_mule:1.d")
    late = _setting(profile, "registration", "late_arrival_minutes") or (0, f"{profile}: silent")
    level = _setting(profile, "registration", "late_arrival_level") or (0, f"{profile}: silent")
    button = _setting(profile, "seating", "first_button") or ("right_of_dealer", f"{profile}: silent")
    stack, stack_rule = STARTING_STACKS.get(profile, (None, f"{profile}: silent (set per event)"))
    return RegistrationPolicy(
        profile=profile,
        min_age=int(age[0]),
        min_age_rule=age[1],
        seat1_button=button[0] == "seat_1",
        seat1_button_rule=button[1],
        late_minutes_after_first_deal=int(late[0]) or None,
        late_rule=late[1],
        late_level=int(level[0]) or None,
        late_level_rule=level[1],
        starting_stack=stack,
        starting_stack_rule=stack_rule,
    )


def late_deadline(profile: str, first_deal: datetime | None) -> datetime | None:
    """The last moment a late player may still tap in, or None when the profile sets none."""
    minutes = policy_for(profile).late_minutes_after_first_deal
    if minutes is None or first_deal is None:
        return None
    return first_deal + timedelta(minutes=minutes)
