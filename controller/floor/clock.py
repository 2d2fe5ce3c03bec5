"""The tournament clock: which level is in force, how long is left, pause, resume, add time.

Pure: every function takes the time (`now`, seconds) and returns a new `ClockState`; nothing reads
the wall clock. The state is small enough to store after every change, so a restarted floor picks
the clock up where it was.

Also here: each rulebook's rule for when a new level reaches a table (`transition_rule`), and its
colour-up and chip-race steps for the tables.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from controller.floor.structure import Level, Structure


@dataclass(frozen=True, slots=True)
class ClockState:
    started_at: float | None = None  # when the clock was started (the first deal)
    run_before: float = 0.0  # seconds the clock ran before `running_since`
    running_since: float | None = None  # None: not started or paused
    extensions: tuple[tuple[int, float], ...] = ()  # (step index, seconds added to that step)

    @property
    def running(self) -> bool:
        return self.running_since is not None

    def elapsed(self, now: float) -> float:
        """Seconds of running clock (pauses excluded)."""
        run = self.run_before
        if self.running_since is not None:
            run += max(0.0, now - self.running_since)
        return run


@dataclass(frozen=True, slots=True)
class ClockView:
    index: int  # step of the structure in force
    level: Level
    seconds_left: float
    next_level: Level | None
    running: bool
    started: bool
    finished: bool  # past the last step: the last level goes on


def start(state: ClockState, now: float) -> ClockState:
    if state.started_at is not None:
        return resume(state, now)
    return replace(state, started_at=now, run_before=0.0, running_since=now)


def pause(state: ClockState, now: float) -> ClockState:
    if state.running_since is None:
        return state
    return replace(state, run_before=state.elapsed(now), running_since=None)


def resume(state: ClockState, now: float) -> ClockState:
    if state.running_since is not None or state.started_at is None:
        return state
    return replace(state, running_since=now)


def step_lengths(structure: Structure, state: ClockState) -> list[float]:
    lengths = [lvl.seconds for lvl in structure.levels]
    for index, seconds in state.extensions:
        if 0 <= index < len(lengths):
            lengths[index] = max(1.0, lengths[index] + seconds)
    return lengths


def view(structure: Structure, state: ClockState, now: float) -> ClockView:
    elapsed = state.elapsed(now)
    lengths = step_lengths(structure, state)
    end = 0.0
    for index, length in enumerate(lengths):
        end += length
        if elapsed < end:
            nxt = structure.levels[index + 1] if index + 1 < len(structure.levels) else None
            return ClockView(
                index,
                structure.levels[index],
                end - elapsed,
                nxt,
                state.running,
                state.started_at is not None,
                False,
            )
    last = len(lengths) - 1
    return ClockView(
        last, structure.levels[last], 0.0, None, state.running, state.started_at is not None, True
    )


def add_time(structure: Structure, state: ClockState, now: float, seconds: float) -> ClockState:
    """Add (or with a negative number take) time to the step in force; it never ends a step early
    by more than what is left of it."""
    current = view(structure, state, now)
    if seconds < 0:
        seconds = max(seconds, -(current.seconds_left - 1.0))
    return replace(state, extensions=(*state.extensions, (current.index, float(seconds))))


# ------------------------------------------------------------------ transition rule per rulebook


@dataclass(frozen=True, slots=True)
class TransitionRule:
    """How a level that ends reaches a table. `one_more_hand_after_push`: when the level ends after
    the pot was pushed (between hands), one more hand is played at the previous level."""

    one_more_hand_after_push: bool
    rule: str
    text: str


TRANSITION_RULES = {
    "dragons_den": TransitionRule(False, "dragons_den:18", "the new level applies to the next hand"),
    "bluff_street": TransitionRule(False, "bluff_street:24", "the new level applies to the next hand"),
    "corner_pocket": TransitionRule(
        False, "corner_pocket:Going up in Levels.A", "the new limits apply to the next hand"
    ),
    "bar_league": TransitionRule(
        True,
        "bar_league:Hand Start",
        "a level that ends after the pot was pushed: one more hand at the previous level",
    ),
    # Cool Mule's rulebook is silent; the TDA's rule (as printed by Dragon's Den 18) is borrowed.
    "cool_mule": TransitionRule(False, "dragons_den:18", "the new level applies to the next hand (borrowed)"),
}


def transition_rule(profile: str) -> TransitionRule:
    return TRANSITION_RULES.get(profile, TRANSITION_RULES["dragons_den"])


def send_level_now(profile: str, table_between_hands: bool) -> bool:
    """Whether to send a new level to a table the moment the clock reaches it. A table's engine applies
    a `level` line at its next `hand_start`, which is each rulebook's 'next hand'. Under Bar League's
    rule a table between hands (pot pushed, next hand begun) keeps the old level for that hand: the
    floor sends the level only after that table's next `hand_start`."""
    return not (transition_rule(profile).one_more_hand_after_push and table_between_hands)


# ------------------------------------------------------------------ colour-up and chip race

CHIP_RACE = {
    "bar_league": (
        "bar_league:Chip Race",
        [
            "Colour up: trade the chips going out for higher-value chips.",
            "Starting left of the button, each player gets one card for every odd chip.",
            "All odd chips are exchanged for higher-value chips.",
            "The highest cards win, at most one higher-value chip per player.",
            "Nobody is raced out: a player left with no chips gets one chip of the lowest value still in play.",
        ],
    ),
    "corner_pocket": (
        "corner_pocket:Going up in Levels.C-D",
        [
            "Players trade in their odd chips for an equal value of higher chips.",
            "Leftover chips that cannot be traded are placed in front of the player.",
            "Starting with the small blind of the next hand, each player is dealt one card per chip; "
            "highest cards win, ties to the card dealt first, one chip per person.",
            "Nobody is raced out: a player who loses the race with one chip gets one chip of the smallest denomination in play.",
        ],
    ),
    "dragons_den": (
        "dragons_den:16",
        [
            "Colour up (Dragon's Den does not race its colour-ups, dragons_den:16): exchange the chips going out at face value.",
            "Where a race is used: start in seat 1, at most one chip to any player.",
            "Nobody is raced out: a player who loses the last chips gets one chip of the smallest denomination in play.",
        ],
    ),
    "bluff_street": (
        "bluff_street:22.a",
        [
            "Odd chips are raced off starting in seat 1, at most one chip to a player.",
            "Nobody is raced out: a player losing the last chips gets one chip of the lowest denomination in play.",
        ],
    ),
    "cool_mule": (
        "cool_mule:8.d",
        [
            "Chip up: every player exchanges the chips going out for higher denominations "
            "(the standard chip race is for Season Finale events).",
        ],
    ),
}


def colour_up_steps(profile: str, chips: str) -> tuple[str, list[str]]:
    """(rule, steps) shown on the director's page and the table cards when `chips` go out."""
    rule, steps = CHIP_RACE.get(profile, CHIP_RACE["bluff_street"])
    return rule, [f"Colour-up: {chips}.", *steps]
