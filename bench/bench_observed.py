"""Self-dealt tables (`actions: observed`): hands per rulebook, a known share with a misdeal the camera
can see. Prints false rulings per 1,000 hands (goal 0), the share of misdeals caught (goal >= 0.99) and the
time from the offending frame (or line) to the ruling.

FRAMES (the default): every hand is rendered by hil's simulated camera (6 seats, one empty, 640x360 at
10 frames/s), each frame goes through the real detector and vision.tracker, and the tracker's lines go
into the engine: misreads, missed frames and the debounce happen as on a table. A misdeal the camera
"could see" is one whose offending card the tracker reported (a face-up card, a card at the wrong seat);
the ones it did not report are printed apart. The time to ruling is counted in frames from the first
frame showing the offending card (100 ms each at 10 frames/s) plus the processing of each frame. In a
faulty deal, a card exposed in the deal replaced (the first of a `multiple_exposed` deal's) is no false
ruling when that seat really holds a face-up card and the ruling names it or no card. Also printed: the
card codes the tracker named and how many of them were no face-up card on the table (no ruling, but what
the table publishes). About 1.5-3 s of CPU per rendered hand on one core: `--hands` bounds it (default
40 per rulebook).

    .venv/bin/python bench/bench_observed.py [--hands N] [--seed S] [--profiles a,b] [--trace FILE]

`--trace FILE` appends each hand with a false ruling, or with a card code named that no face-up card
on the table had, as one JSON line: every frame of that hand with
the detector's cards (centre, face, code, confidence), the face-up codes really on the table, the
tracker's lines and the engine's answers, so a false ruling is found without replaying the run.

LINES (`--lines`): the hands are protocol lines as the camera and the reader would send them, not rendered
frames through the detector. The camera's imperfections are modelled on the lines: a fold or chips
movement it misses (15 %), one it reports twice (5 %), hands where it sees no betting at all (30 % of the
rounds). Card misreads and missed frames are the vision pipeline's to measure (bench/bench_vision.py);
every card line here is one the tracker's debounce let through.

    .venv/bin/python bench/bench_observed.py --lines [HANDS] [--entered]

`--entered` (lines only) plays the same hands on a table that expects entered actions (the table before observed mode
existed): the false rulings it prints are what a camera-only table used to say.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.rules.engine import TableEngine

PROFILES = ("bar_league", "bluff_street", "cool_mule", "corner_pocket", "dragons_den")
MISDEAL_SHARE = 0.1
SEATS = 10  # nine players; seat 10 stays empty
DECK = [r + s for r in "23456789TJQKA" for s in "cdhs"]
# Rulings an observed hand without a dealer's error must never produce.
RULINGS = {
    "misdeal",
    "board_redeal",
    "burn_missing",
    "dead_hand",
    "replace_exposed",
    "boxed_card",
    "extra_card",
    "button_misplaced",
    "pots",
    "award",
    "pot_unresolved",
    "uncalled_returned",
    "show_order",
    "action_ruled",
    "out_of_turn",
    "eliminated",
    "error",
}


def deal(s: int, card: str | None = None) -> dict:
    return {"type": "deal", "seat": s, **({"card": card} if card else {})}


def fault(rng: random.Random, order: list[int]) -> tuple[list[dict], str]:
    """A deal with a dealer's error the camera sees, and the misdeal every rulebook declares for it."""
    kinds = ["first_cards_exposed", "first_card_wrong_seat", "dealt_to_ineligible_seat", "wrong_card_count"]
    if len(order) >= 5:
        kinds.append("multiple_exposed")
    kind = rng.choice(kinds)
    if kind == "first_cards_exposed":
        return [deal(order[0], rng.choice(DECK))], kind
    if kind == "first_card_wrong_seat":
        return [deal(order[1])], kind
    if kind == "dealt_to_ineligible_seat":
        return [deal(order[0]), deal(SEATS)], kind
    if kind == "multiple_exposed":
        lines = [deal(s) for s in order]
        lines[2] = deal(order[2], "Kd")
        return [*lines, deal(order[0]), deal(order[1]), deal(order[3], "Qs")], kind
    return [deal(s) for s in order * 2] + [deal(order[1])], kind


def camera_betting(rng: random.Random, live: list[int]) -> list[dict]:
    """One betting round as an imperfect camera reports it."""
    if rng.random() < 0.3:
        return []
    out: list[dict] = []
    for s in list(live):
        if len(live) > 2 and rng.random() < 0.35:
            line = {"type": "fold_seen", "seat": s}
            live.remove(s)
        elif rng.random() < 0.5:
            line = {"type": "chips_seen", "seat": s}
        else:
            continue
        if rng.random() < 0.15:
            continue  # missed
        out.append(line)
        if rng.random() < 0.05:
            out.append(line)  # reported twice
    return out


def run(profile: str, hands: int, seed: int, actions: str = "observed") -> dict:
    rng = random.Random(f"{seed}-{profile}")
    engine = TableEngine(profile, SEATS)
    n = 0
    timings: list[float] = []

    def feed(line: dict, timed: bool = False) -> list[dict]:
        nonlocal n
        n += 1
        text = json.dumps(line)
        t = time.perf_counter()
        out = engine.feed(text, n)
        if timed:
            timings.append(time.perf_counter() - t)
        return out

    feed({"type": "table", "seats": SEATS, "profile": profile, "actions": actions})
    seated = list(range(1, SEATS))
    for s in seated:
        feed({"type": "seat", "seat": s, "player": f"P{s}", "stack": 10_000})
    feed({"type": "level", "sb": 50, "bb": 100})
    false_rulings: list[dict] = []
    planted = caught = 0
    for number in range(hands):
        if len(seated) <= 2 or number % 150 == 149:  # a new table of nine now and then
            if engine.in_hand:
                false_rulings += feed({"type": "hand_end"})
            for s in list(seated):
                false_rulings += feed({"type": "leave", "seat": s, "reason": "moved"})
            seated = list(range(1, SEATS))
            for s in seated:
                line = {"type": "seat", "seat": s, "player": f"P{s}-{number}", "stack": 10_000, "moved": True}
                false_rulings += feed(line)
        hand = [o for o in feed({"type": "hand_start"}) if o["type"] == "hand"][-1]
        order = list(hand["dealt_in"])
        if rng.random() < MISDEAL_SHARE:
            planted += 1
            lines, reason = fault(rng, order)
            said: list[dict] = []
            for i, line in enumerate(lines):
                said += feed(line, timed=i == len(lines) - 1)
            caught += any(o["type"] == "misdeal" and o["reason"] == reason for o in said)
            hand = [o for o in feed({"type": "hand_start"}) if o["type"] == "hand"][-1]  # the re-deal
        said = []
        for s in order * 2:
            said += feed(deal(s))
        live = list(order)
        deck = list(DECK)
        rng.shuffle(deck)
        streets = rng.choice((0, 1, 1, 2, 3, 3))
        for street in range(streets + 1):
            for line in camera_betting(rng, live):
                said += feed(line)
            if street < streets:
                said += feed({"type": "board", "cards": [deck.pop() for _ in range(3 if street == 0 else 1)]})
        if streets == 3 and rng.random() < 0.5:
            for s in live[:2]:
                said += feed({"type": "show", "seat": s, "cards": [deck.pop(), deck.pop()]})
        if rng.random() < 0.6:
            said += feed({"type": "hand_end"})
        false_rulings += [o for o in said if o["type"] in RULINGS]
        if rng.random() < 0.08 and len(seated) > 2:  # a bust-out tapped on the reader
            gone = rng.choice(seated)
            out = feed({"type": "leave", "seat": gone, "reason": "eliminated"})
            if [o["type"] for o in out] != ["eliminated"]:
                false_rulings += out or [{"type": "missing eliminated"}]
            seated.remove(gone)
    return {
        "profile": profile,
        "hands": hands,
        "false_per_1000": 1000 * len(false_rulings) / hands,
        "false_examples": false_rulings[:3],
        "planted": planted,
        "caught": caught,
        "median_us": 1e6 * statistics.median(timings) if timings else 0.0,
        "max_us": 1e6 * max(timings) if timings else 0.0,
    }


def main() -> int:
    if "--lines" in sys.argv:
        return main_lines()
    from bench.bench_observed_frames import main_frames

    return main_frames(sys.argv[1:])


def main_lines() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    hands = int(args[0]) if args else 1000
    actions = "entered" if "--entered" in sys.argv else "observed"
    print(
        f"self-dealt tables, engine level (lines, not rendered frames): {hands} hands per rulebook, {actions}"
    )
    print(f"{'rulebook':14} {'false/1000':>10} {'misdeals':>9} {'caught':>7} {'share':>6} {'ruling µs':>14}")
    ok = True
    for profile in PROFILES:
        r = run(profile, hands, seed=14, actions=actions)
        share = r["caught"] / r["planted"] if r["planted"] else 1.0
        ok &= r["false_per_1000"] == 0 and share >= 0.99
        print(
            f"{profile:14} {r['false_per_1000']:10.1f} {r['planted']:9d} {r['caught']:7d} {share:6.3f} "
            f"{r['median_us']:7.0f} (max {r['max_us']:.0f})"
        )
        for example in r["false_examples"]:
            print(f"    false ruling: {json.dumps(example)}")
    print(
        "goal: 0 false rulings per 1,000 hands, >= 0.99 of the misdeals caught:", "met" if ok else "NOT met"
    )
    print(
        "time to ruling: the engine's time for the offending line (the camera's debounce and the panel come on top)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
