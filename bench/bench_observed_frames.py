"""The frames mode of bench/bench_observed.py: self-dealt hands rendered by hil's camera, through the
real detector and tracker, into the engine (see that file's docstring for what is printed)."""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_observed import PROFILES, RULINGS
from controller.rules.engine import TableEngine

SEATS = 6  # five players; seat 6 stays empty (a card dealt there is a misdeal)
FPS = 10.0
WIDTH, HEIGHT = 640, 360
STEP_FRAMES = 4  # frames each change holds (the tracker's debounce is 3)
QUIET_FRAMES = 12  # frames of an unchanged table after a deal with a fault (the tracker settles)
MISDEAL_SHARE = 0.25  # more than the lines mode: fewer hands, still enough misdeals to count


class Table:
    """One rulebook's table: the simulated camera, the detector and tracker, the engine."""

    def __init__(self, profile: str, seed: int) -> None:
        from hil.camera import SimulatedCamera
        from vision.detect import Detector
        from vision.layout import default_layout
        from vision.tracker import Tracker

        self.cam = SimulatedCamera(seats=SEATS, width=WIDTH, height=HEIGHT, seed=seed, fps=FPS)
        layout = default_layout(SEATS, WIDTH, HEIGHT)
        detector = Detector(track=True)
        detector.layout = layout
        self.tracker = Tracker(layout, debounce_frames=3, detector=detector)
        self.detector = detector
        self.log: list[dict[str, Any]] = []  # this hand's frames, for --trace
        self.engine = TableEngine(profile, SEATS)
        self.n = 0  # engine line number
        self.k = 0  # frame number
        self.frame_ms: list[float] = []
        self.camera_lines: list[dict[str, Any]] = []
        self.codes_named = 0  # card codes in the tracker's lines
        self.codes_wrong: list[str] = []  # ... that no face-up card on the table had

    def feed(self, line: dict[str, Any]) -> list[dict[str, Any]]:
        self.n += 1
        return self.engine.feed(json.dumps(line), self.n)

    def frames(self, count: int) -> list[tuple[int, dict[str, Any], list[dict[str, Any]]]]:
        """Render `count` frames of the table as it is; each line the tracker reports goes to the
        engine. Returns (frame number, camera line, rulings) for every line."""
        out = []
        for _ in range(count):
            t0 = time.perf_counter()
            frame, _truth = self.cam.frame()
            seen = self.detector.detect(frame)
            lines = self.tracker.update(seen, self.k / FPS)
            self.frame_ms.append(1000 * (time.perf_counter() - t0))
            said = []
            for line in lines:
                self.check_codes(line)
                self.camera_lines.append(line)
                said.append(self.feed(line))
                out.append((self.k, line, said[-1]))
            self.log.append(
                {
                    "frame": self.k,
                    "up": sorted(c.code for c in self.cam.scene.cards if c.face_up),
                    "cards": [
                        [
                            [round(float(v)) for v in c["center"]],
                            c["face"],
                            c.get("code"),
                            round(float(c.get("confidence", 0.0)), 3),
                        ]
                        for c in seen.to_dict()["cards"]
                    ],
                    "lines": lines,
                    "said": said,
                }
            )
            self.k += 1
        return out

    def check_codes(self, line: dict[str, Any]) -> None:
        """A code the camera names must be a card lying face up on the table (not a ruling, but what
        the table publishes: a misread board card is something false on the director's screen)."""
        codes = list(line.get("cards") or []) + ([line["card"]] if line.get("card") else [])
        real = {c.code for c in self.cam.scene.cards if c.face_up}
        self.codes_named += len(codes)
        self.codes_wrong += [f"{line['type']} {c}" for c in codes if c not in real]

    def step(self, change: Any, frames: int = STEP_FRAMES) -> list[tuple[int, dict[str, Any], list[dict]]]:
        change(self.cam)
        return self.frames(frames)

    def new_hand(self) -> tuple[dict[str, Any], list]:
        """The cards are collected (the camera sees the bare felt for a while, as between two hands
        at a real table), then NEW HAND: the engine starts a hand and the tracker forgets the last."""
        self.cam.clear()
        said = self.frames(QUIET_FRAMES)
        outs = self.feed({"type": "hand_start"})
        self.tracker.reset_hand()
        hands = [o for o in outs if o["type"] == "hand"]
        assert hands, f"the engine started no hand: {outs}"
        return hands[-1], said


def rulings(said: list[tuple[int, dict, list[dict]]]) -> list[dict]:
    return [o for _k, _line, outs in said for o in outs]


def true_on_scene(ruling: dict[str, Any], up: dict[int, set[str]]) -> bool:
    """A ruling in a faulty deal that the rulebook gives on the real scene: a card exposed in the
    deal replaced (the profiles' `single_exposed_procedure`, e.g. cool_mule:5.j: the first exposed card
    of a `multiple_exposed` deal), at a seat really holding a face-up card, naming that card or none.
    One naming another card says something false."""
    if ruling["type"] != "replace_exposed" or not up.get(ruling.get("seat")):
        return False
    return ruling.get("card") is None or ruling["card"] in up[ruling["seat"]]


def fault_deal(table: Table, rng: random.Random, hand: dict) -> tuple[str, list, int, bool]:
    """A deal with a dealer's error: (the misdeal it is, what was said, the first frame showing the
    offending card, whether the tracker reported that card)."""
    order = list(hand["dealt_in"])
    kinds = ["first_cards_exposed", "first_card_wrong_seat", "dealt_to_ineligible_seat", "wrong_card_count"]
    if len(order) >= 5:
        kinds.append("multiple_exposed")
    kind = rng.choice(kinds)
    said: list = []
    said += table.step(lambda cam: cam.move_button(hand["button"]))
    mark = len(table.camera_lines)
    if kind == "first_cards_exposed":
        start = table.k
        said += table.step(lambda cam: cam.deal_to(order[0], face_up=True))

        def visible(lines: list[dict]) -> bool:
            deals = [ln for ln in lines if ln["type"] == "deal" and ln.get("seat") == order[0]]
            return any("card" in ln or ln.get("face") == "up" for ln in deals)
    elif kind == "first_card_wrong_seat":
        start = table.k
        said += table.step(lambda cam: cam.deal_to(order[1]))

        def visible(lines: list[dict]) -> bool:
            return any(ln["type"] == "deal" and ln.get("seat") == order[1] for ln in lines)

    elif kind == "dealt_to_ineligible_seat":
        said += table.step(lambda cam: cam.deal_to(order[0]))
        start = table.k
        said += table.step(lambda cam: cam.deal_to(SEATS))

        def visible(lines: list[dict]) -> bool:
            return any(ln["type"] == "deal" and ln.get("seat") == SEATS for ln in lines)

    elif kind == "multiple_exposed":
        for i, s in enumerate(order):
            said += table.step(lambda cam, s=s, up=i == 2: cam.deal_to(s, face_up=up))
        said += table.step(lambda cam: cam.deal_to(order[0]))
        said += table.step(lambda cam: cam.deal_to(order[1]))
        start = table.k
        said += table.step(lambda cam: cam.deal_to(order[3], face_up=True))

        def visible(lines: list[dict]) -> bool:
            ups = [ln for ln in lines if ln["type"] == "deal" and ("card" in ln or ln.get("face") == "up")]
            return len(ups) >= 2

    else:  # wrong_card_count: a third card to the second seat
        for s in order * 2:
            said += table.step(lambda cam, s=s: cam.deal_to(s))
        start = table.k
        said += table.step(lambda cam: cam.deal_to(order[1]))

        def visible(lines: list[dict]) -> bool:
            return len([ln for ln in lines if ln["type"] == "deal"]) == 2 * len(order) + 1

    said += table.frames(QUIET_FRAMES)
    # what the tracker reported up to the end of the deal, its debounce settled: a card it reports
    # a few frames after the step is still one the camera saw
    return kind, said, start, visible(table.camera_lines[mark:])


def clean_hand(table: Table, rng: random.Random, hand: dict) -> list:
    """A hand with no dealer's error: the button, two rounds face down, betting seen as chips
    forward and folds onto the muck, burns and the board, a showdown when it gets there."""
    order = list(hand["dealt_in"])
    said: list = []
    said += table.step(lambda cam: cam.move_button(hand["button"]))
    for s in order * 2:
        said += table.step(lambda cam, s=s: cam.deal_to(s))
    live = list(order)
    streets = rng.choice((0, 1, 1, 2, 3, 3))
    for street in range(streets + 1):
        betting = False
        for s in list(live):
            if len(live) > 2 and rng.random() < 0.3:
                live.remove(s)
                said += table.step(lambda cam, s=s: cam.fold(s))
            elif rng.random() < 0.4:
                betting = True
                said += table.step(lambda cam, s=s: cam.bet(s, 2))
        if betting:
            said += table.step(lambda cam: cam.gather_bets())
        if street < streets:
            said += table.step(lambda cam: cam.burn())
            n = 3 if street == 0 else 1
            said += table.step(lambda cam, n=n: cam.board([None] * n), STEP_FRAMES + 2)
    if streets == 3:
        for s in live[:2]:
            said += table.step(lambda cam, s=s: cam.show(s))
    said += table.frames(QUIET_FRAMES)
    said += [(table.k, {"type": "hand_end"}, table.feed({"type": "hand_end"}))]
    return said


def run(profile: str, hands: int, seed: int, trace: str | None = None) -> dict[str, Any]:
    rng = random.Random(f"{seed}-{profile}-frames")
    table = Table(profile, seed)
    table.feed({"type": "table", "seats": SEATS, "profile": profile, "actions": "observed"})
    for s in range(1, SEATS):
        table.feed({"type": "seat", "seat": s, "player": f"P{s}", "stack": 10_000})
    table.feed({"type": "level", "sb": 50, "bb": 100})
    false_rulings: list[dict] = []
    where: list[str] = []  # for each false ruling: the hand and the part of it (to replay that hand)

    def false(found: list[dict], number: int, part: str) -> None:
        false_rulings.extend(found)
        where.extend(f"hand {number}, {part}" for _ in found)
        write_trace(found, number, part)

    def write_trace(found: list, number: int, part: str) -> None:
        if found and trace is not None:
            with open(trace, "a", encoding="utf-8") as f:
                f.write(
                    json.dumps(
                        {
                            "profile": profile,
                            "hand": number,
                            "part": part,
                            "false": found,
                            "frames": table.log,
                        }
                    )
                    + "\n"
                )

    planted = seen = caught = caught_seen = 0
    to_ruling: list[float] = []
    missed: list[str] = []
    for number in range(hands):
        table.log = []
        wrong_before = len(table.codes_wrong)
        hand, said = table.new_hand()
        false([o for o in rulings(said) if o["type"] in RULINGS], 1 + number, "the cards collected after it")
        if rng.random() < MISDEAL_SHARE:
            planted += 1
            kind, said, start, visible = fault_deal(table, rng, hand)
            seen += visible
            hit = next(
                (
                    k
                    for k, _line, outs in said
                    for o in outs
                    if o["type"] == "misdeal" and o["reason"] == kind
                ),
                None,
            )
            if hit is not None:
                caught += 1
                caught_seen += visible
                frames = hit - start + 1
                to_ruling.append(frames * 1000 / FPS)
            elif visible:
                missed.append(f"{kind}: said {[o['type'] for o in rulings(said)]}")
            # the real scene: which seats hold a card face up, and which
            up = {s: {c.code for c in cards if c.face_up} for s, cards in table.cam._hole.items()}
            false(
                [
                    o
                    for o in rulings(said)
                    if o["type"] != "misdeal" and o["type"] in RULINGS and not true_on_scene(o, up)
                ],
                1 + number,
                f"a {kind} deal",
            )
            hand, said = table.new_hand()  # the re-deal
            false([o for o in rulings(said) if o["type"] in RULINGS], 1 + number, "before the re-deal")
        said = clean_hand(table, rng, hand)
        false([o for o in rulings(said) if o["type"] in RULINGS], 1 + number, "a deal without error")
        write_trace(table.codes_wrong[wrong_before:], 1 + number, "a code named that no face-up card had")
    return {
        "profile": profile,
        "hands": hands,
        "frames": table.k,
        "false_per_1000": 1000 * len(false_rulings) / hands,
        "false_examples": list(zip(where, false_rulings, strict=True))[:3],
        "false_by_type": dict(Counter(o["type"] for o in false_rulings)),
        "planted": planted,
        "seen": seen,
        "caught": caught,
        "caught_seen": caught_seen,
        "missed": missed[:3],
        "to_ruling_ms": statistics.median(to_ruling) if to_ruling else float("nan"),
        "to_ruling_worst_ms": max(to_ruling) if to_ruling else float("nan"),
        "frame_ms": statistics.median(table.frame_ms) if table.frame_ms else float("nan"),
        "codes_named": table.codes_named,
        "codes_wrong": table.codes_wrong,
    }


def main_frames(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bench_observed.py", description="rendered self-dealt hands")
    ap.add_argument("--hands", type=int, default=40, help="hands per rulebook (default 40)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--profiles", default=",".join(PROFILES))
    ap.add_argument(
        "--trace", metavar="FILE", help="append each hand with a false ruling, frame by frame, as JSON lines"
    )
    args = ap.parse_args(argv)
    print(
        f"self-dealt tables, rendered frames ({WIDTH}x{HEIGHT}, {FPS:.0f} frames/s) through the detector "
        f"and tracker: {args.hands} hands per rulebook, misdeal share {MISDEAL_SHARE}"
    )
    print(
        f"{'rulebook':14} {'false/1000':>10} {'misdeals':>8} {'seen':>5} {'caught':>6} {'of seen':>7} "
        f"{'to ruling ms':>18} {'frame ms':>8}"
    )
    ok = True
    for profile in args.profiles.split(","):
        r = run(profile, args.hands, args.seed, args.trace)
        share = r["caught_seen"] / r["seen"] if r["seen"] else 1.0
        ok &= r["false_per_1000"] == 0 and share >= 0.99
        print(
            f"{profile:14} {r['false_per_1000']:10.1f} {r['planted']:8d} {r['seen']:5d} {r['caught']:6d} "
            f"{share:7.3f} {r['to_ruling_ms']:7.0f} (worst {r['to_ruling_worst_ms']:.0f}) {r['frame_ms']:8.1f}",
            flush=True,
        )
        if r["false_by_type"]:
            print(f"    false rulings by type: {r['false_by_type']}")
        for part, example in r["false_examples"]:
            print(f"    false ruling ({part}, seed {args.seed}): {json.dumps(example)}")
        for line in r["missed"]:
            print(f"    seen, not ruled: {line}")
        wrong = r["codes_wrong"]
        print(
            f"    card codes named {r['codes_named']}, not a face-up card on the table {len(wrong)}"
            + (f" ({dict(Counter(w.split()[0] for w in wrong))})" if wrong else "")
        )
    print(
        "goal: 0 false rulings per 1,000 hands, >= 0.99 of the misdeals the camera saw caught:",
        "met" if ok else "NOT met",
    )
    print(
        "time to ruling: frames from the first frame showing the offending card to the ruling, at "
        f"{FPS:.0f} frames/s (the panel's round trip comes on top: bench/bench_panel.py)"
    )
    return 0 if ok else 1
