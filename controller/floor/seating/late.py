"""Late registration: may a player who arrives after the start still take a seat? (pure)

- Dragon's Den (dragons_den:Reminder): "you must be in your seat at the table no later than 30 minutes
  after the first deal or you will be unable to play" (the profile's `registration.late_arrival_minutes`).
- Corner Pocket (corner_pocket:General Rules.C): a late player must have called in thirty minutes
  before the start; such a player has a seat drawn, is dealt in and blinded until arriving, blinded
  out, or the tournament reaches level eight.
- Others: the profile's late-arrival minutes when it sets some, else the director's call.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.registry.policy import policy_for

# corner_pocket:General Rules.C: "or the tournament reaches level eight" (the profile's late_arrival_level)
CORNER_POCKET_LAST_LEVEL = policy_for("corner_pocket").late_level or 8


@dataclass(frozen=True, slots=True)
class LateDecision:
    allowed: bool
    rule: str
    message: str
    deadline: float | None = None  # Unix time of the cutoff, where the rule has one


def late_entry(
    profile: str,
    *,
    now: float,
    first_deal: float | None,
    level_number: int,
    called_in: bool = False,
) -> LateDecision:
    """Whether a late player may still be seated now."""
    if profile == "corner_pocket":
        rule = "corner_pocket:General Rules.C"
        if not called_in:
            return LateDecision(
                False, rule, "a late player must call thirty minutes before the start to keep a seat"
            )
        if level_number >= CORNER_POCKET_LAST_LEVEL:
            return LateDecision(
                False, rule, f"the tournament has reached level {CORNER_POCKET_LAST_LEVEL}: the seat is gone"
            )
        return LateDecision(
            True,
            rule,
            f"called in: seat drawn, blinds posted until arrival or level {CORNER_POCKET_LAST_LEVEL}",
        )
    policy = policy_for(profile)
    minutes = policy.late_minutes_after_first_deal
    if minutes is None:
        return LateDecision(
            True, policy.late_rule, "the rulebook sets no late-registration cutoff: the director decides"
        )
    if first_deal is None:
        return LateDecision(
            True, policy.late_rule, f"cards are not in the air yet: {minutes} minutes after the first deal"
        )
    deadline = first_deal + minutes * 60
    if now > deadline:
        late_by = int((now - deadline) // 60)
        return LateDecision(
            False,
            policy.late_rule,
            f"more than {minutes} minutes after the first deal ({late_by} min past the cutoff)",
            deadline,
        )
    return LateDecision(True, policy.late_rule, f"within {minutes} minutes of the first deal", deadline)
