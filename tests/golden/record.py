"""What the golden record holds: every item's bytes, built deterministically from seeds and the repo's data.

Each item is a name and the exact bytes the engine (or a CLI) writes for it; `golden.json` keeps their
sha256 digests, so a refactor that changes one byte of one output line fails the test for that item.
Inputs are made here from fixed seeds (bench/gen_session.py plays the sessions, `mutate` breaks them), and
the digest of each input is kept too, so a change of input is told apart from a change of output.

Items:

* `session/<profile>/{in,out}`: a 1,000-hand session (9 seats) fed as text lines, every output line.
* `session_dict/<profile>/out`: its first 200 hands fed as decoded dicts (the service's way in).
* `mutated/<profile>/{in,out}`: 150 hands with about one line in eight broken (bad JSON, wrong or missing
  fields, unknown types, lines dropped, doubled, swapped, exposed, boxed and extra cards, early boards...):
  the error paths, error lines included. `mutated_light/<profile>`: the same hands with one line in fifty
  broken, so that most hands play to the showdown around the broken lines.
* `observed/<profile>/{in,out}`: 150 hands at an `actions: observed` table, some actions turned into
  `fold_seen`/`chips_seen` lines.
* `phh/<profile>/{in,out}`: the 160 PHH hands of data/phh, each as `phh.to_lines` writes it, fed to a fresh
  engine (as `hands replay` does), every output line.
* `hands_export/{stdout,files}`: `smart-table hands export` on a 120-hand session's event log. The output
  folder's path in its stdout is normalised to `<OUT>` (it is a temporary folder).
* `rules_replay/<profile>/{pretty,json}`: `smart-table rules replay [--pretty]` on a 100-hand session and on
  the mutated session, stdout byte for byte.

No output carries wall-clock time, so nothing else is normalised.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import random
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.gen_session import generate  # noqa: E402
from controller import datapaths  # noqa: E402
from controller.rules.engine import TableEngine, dumps  # noqa: E402

PROFILES = ("cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street")
GOLDEN = Path(__file__).resolve().parent / "golden.json"
SEATS = 9


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _seed(profile: str, salt: int) -> int:
    return PROFILES.index(profile) * 1000 + salt


_sessions: dict[tuple[str, int], list[str]] = {}


def session(profile: str, hands: int) -> list[str]:
    """The seeded session of `profile`; a shorter one is the longer one's prefix up to that hand."""
    key = (profile, hands)
    if key not in _sessions:
        _sessions[key] = generate(hands, seats=SEATS, profile=profile, seed=_seed(profile, 1))
    return _sessions[key]


def first_hands(lines: list[str], hands: int) -> list[str]:
    """The lines before the `hand_start` of hand `hands + 1`."""
    seen = 0
    for i, text in enumerate(lines):
        if '"hand_start"' in text:
            seen += 1
            if seen > hands:
                return lines[:i]
    return lines


def play(profile: str, lines: list, *, as_dicts: bool = False, seats: int = SEATS) -> bytes:
    """Every output line of `lines` through one engine, each prefixed by its input line's number."""
    engine = TableEngine(profile, seats)
    out = io.StringIO()
    for n, text in enumerate(lines, 1):
        line = json.loads(text) if as_dicts and isinstance(text, str) else text
        for o in engine.feed(line, n):
            out.write(f"{n}\t{dumps(o)}\n")
    return out.getvalue().encode("utf-8", "backslashreplace")


# ---- mutations: a sound session broken in every way the error paths answer ---------------------------

_BAD_SEATS = [0, -1, 99, "3", True, 2.5, None]
_BAD_CARDS = ["Zz", "ah", 7, "", "Ahh", None, ["Ah"]]
CARDS = [r + s for r in "23456789TJQKA" for s in "cdhs"]


def _field_mutations(ev: dict, rng: random.Random) -> dict:
    ev = dict(ev)
    choice = rng.randrange(9)
    if choice == 0 and "seat" in ev:
        ev["seat"] = rng.choice(_BAD_SEATS)
    elif choice == 1 and "card" in ev:
        ev["card"] = rng.choice(_BAD_CARDS)
    elif choice == 2 and "cards" in ev:
        ev["cards"] = rng.choice([[], [ev["cards"][0]] * 2, "Ah", [7], ev["cards"] + ev["cards"][:1], None])
    elif choice == 3 and "to" in ev:
        ev["to"] = rng.choice([-1, 0, "x", 1.5, True, 10**13, None])
    elif choice == 4 and "action" in ev:
        ev["action"] = rng.choice(["x", "CALL", 3, None, "allin", "raise", "bet", "check", "fold"])
    elif choice == 5:
        ev.pop(rng.choice([k for k in ev if k != "type"] or ["type"]), None)
    elif choice == 6:
        ev["type"] = rng.choice(["dael", "", 5, None, "Action", "hand-start"])
    elif choice == 7:
        ev["extra"] = rng.choice([1, "x", [1, 2], {"a": 1}])  # allowed and ignored
    else:
        for key in ("sb", "bb", "stack", "player", "moved", "reason", "by", "ante"):
            if key in ev:
                ev[key] = rng.choice([-5, 0, "x", True, None, 10**13, "", 2.5])
                break
        else:
            ev["seat"] = rng.choice(_BAD_SEATS)
    return ev


def _inserted(rng: random.Random) -> dict:
    seat = rng.randint(1, SEATS)
    kind = rng.randrange(14)
    card = rng.choice(CARDS)
    return [
        {"type": "deal", "seat": seat, "card": card},
        {"type": "deal", "seat": seat},
        {"type": "expose", "seat": seat, "card": card, "by": rng.choice(["dealer", "player"])},
        {"type": "boxed", "card": card},
        {"type": "button_seen", "seat": seat},
        {"type": "board", "cards": rng.sample(CARDS, rng.choice([1, 3, 4]))},
        {"type": "burn"},
        {"type": "away", "seat": seat},
        {"type": "back", "seat": seat},
        {"type": "time_expired", "seat": seat},
        {"type": "clock", "seat": seat},
        {"type": "penalty", "seat": seat, "hands": 1, "reason": "language"},
        {"type": "show", "seat": seat, "cards": rng.sample(CARDS, 2)},
        {"type": "muck", "seat": seat},
    ][kind]


def mutate(lines: list[str], seed: int, rate: float = 0.125) -> list[str]:
    """`lines` with about `rate` of them broken, dropped, doubled, swapped, or preceded by a stray line."""
    rng = random.Random(seed)
    out: list[str] = []
    i = 0
    while i < len(lines):
        text = lines[i]
        i += 1
        # A broken deal voids the hand (a misdeal) and every later line of it is refused alike: deals are
        # broken less often, so that most hands reach the betting and the showdown with broken lines in.
        if i == 1 or rng.random() >= (rate / 8 if '"type":"deal"' in text else rate):  # the table line stays
            out.append(text)
            continue
        what = rng.randrange(10)
        if what == 0:
            continue  # dropped
        if what == 1:
            out += [text, text]
        elif what == 2 and i < len(lines):
            out += [lines[i], text]
            i += 1
        elif what == 3:
            out.append(
                rng.choice([text[: len(text) // 2], text + "x", "[1,2]", "", "# a comment", "nul", "{}"])
            )
        elif what in (4, 5, 6):
            out.append(json.dumps(_field_mutations(json.loads(text), rng), separators=(",", ":")))
        else:
            out += [json.dumps(_inserted(rng), separators=(",", ":")), text]
    return out


def observed(lines: list[str], seed: int) -> list[str]:
    """The session at an `actions: observed` table: a third of the actions become what the camera sees,
    a third are dropped, the rest stay entered."""
    rng = random.Random(seed)
    first = json.loads(lines[0])
    first["actions"] = "observed"
    out = [json.dumps(first, separators=(",", ":"))]
    for text in lines[1:]:
        if '"action"' in text and '"type":"action"' in text:
            ev = json.loads(text)
            r = rng.random()
            if r < 0.33:
                kind = "fold_seen" if ev["action"] == "fold" else "chips_seen"
                if ev["action"] == "check":
                    continue
                out.append(json.dumps({"type": kind, "seat": ev["seat"]}, separators=(",", ":")))
                continue
            if r < 0.66:
                continue
        out.append(text)
    return out


# ---- the CLIs, run in-process --------------------------------------------------------------------------


def run_cli(argv: list[str]) -> tuple[int, bytes, bytes]:
    """`smart-table ARGV`: exit status, stdout and stderr bytes."""
    from controller.cli import main

    out_buf, err_buf = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_buf, encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(err_buf, encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    out.flush()
    err.flush()
    return rc, out_buf.getvalue(), err_buf.getvalue()


def _phh_hands():
    from controller.rules.phh import load

    root = datapaths.find("phh")
    return [load(p) for p in sorted(root.rglob("*.phh"), key=lambda p: p.relative_to(root).as_posix())]


# ---- the items ----------------------------------------------------------------------------------------


def _join(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def items() -> Iterator[tuple[str, Callable[[], bytes]]]:
    """(name, the function that makes its bytes), in a fixed order."""
    for p in PROFILES:
        yield f"session/{p}/in", lambda p=p: _join(session(p, 1000))
        yield f"session/{p}/out", lambda p=p: play(p, session(p, 1000))
        yield f"session_dict/{p}/out", lambda p=p: play(p, first_hands(session(p, 1000), 200), as_dicts=True)
        yield f"mutated/{p}/in", lambda p=p: _join(_mutated(p))
        yield f"mutated/{p}/out", lambda p=p: play(p, _mutated(p))
        yield f"mutated_light/{p}/in", lambda p=p: _join(_mutated(p, light=True))
        yield f"mutated_light/{p}/out", lambda p=p: play(p, _mutated(p, light=True))
        yield f"observed/{p}/in", lambda p=p: _join(_observed(p))
        yield f"observed/{p}/out", lambda p=p: play(p, _observed(p))
    for p in PROFILES:
        yield f"phh/{p}/in", lambda p=p: _phh(p)[0]
        yield f"phh/{p}/out", lambda p=p: _phh(p)[1]
    yield "hands_export/stdout", lambda: _export()[0]
    yield "hands_export/files", lambda: _export()[1]
    for p in PROFILES:
        yield f"rules_replay/{p}/pretty", lambda p=p: _replay_cli(p, True)
        yield f"rules_replay/{p}/json", lambda p=p: _replay_cli(p, False)


_memo: dict[tuple, object] = {}


def _memoised(key: tuple, make: Callable[[], object]) -> object:
    if key not in _memo:
        _memo[key] = make()
    return _memo[key]


def _mutated(p: str, light: bool = False) -> list[str]:
    def make() -> list[str]:
        lines = first_hands(session(p, 1000), 150)
        return mutate(lines, _seed(p, 4), rate=0.02) if light else mutate(lines, _seed(p, 2))

    return _memoised(("mutated", p, light), make)


def _observed(p: str) -> list[str]:
    return _memoised(("observed", p), lambda: observed(first_hands(session(p, 1000), 150), _seed(p, 3)))


def _phh(p: str) -> tuple[bytes, bytes]:
    def make() -> tuple[bytes, bytes]:
        from controller.rules.phh import PhhError, to_lines

        hands = _memoised(("phh_hands",), _phh_hands)
        ins, outs = io.StringIO(), io.StringIO()
        for hand in hands:
            name = Path(hand.path).relative_to(datapaths.find("phh")).as_posix()
            ins.write(f"# {name}\n")
            outs.write(f"# {name}\n")
            try:
                lines = to_lines(hand, p)
            except PhhError as exc:
                ins.write(f"# refused: {exc}\n")
                continue
            engine = TableEngine(p, len(hand.players))
            for n, line in enumerate(lines, 1):
                ins.write(dumps(line) + "\n")
                for o in engine.feed(line, n):
                    outs.write(f"{n}\t{dumps(o)}\n")
        return ins.getvalue().encode(), outs.getvalue().encode()

    return _memoised(("phh", p), make)


def _export() -> tuple[bytes, bytes]:
    def make() -> tuple[bytes, bytes]:
        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "events.jsonl"
            log.write_bytes(_join(first_hands(session("bar_league", 1000), 120)))
            out = Path(tmp) / "out"
            rc, stdout, stderr = run_cli(["hands", "export", str(log), "--out", str(out)])
            shown = f"rc={rc}\n".encode() + stdout.replace(str(out).encode(), b"<OUT>") + b"--\n" + stderr
            files = b"".join(
                f"== {f.name}\n".encode() + f.read_bytes()
                for f in sorted(out.iterdir(), key=lambda f: (len(f.name), f.name))
            )
        return shown, files

    return _memoised(("export",), make)


def _replay_cli(p: str, pretty: bool) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        result = b""
        for name, lines in (("plain", first_hands(session(p, 1000), 100)), ("mutated", _mutated(p))):
            path = Path(tmp) / f"{name}.jsonl"
            path.write_bytes(_join(lines))
            argv = ["rules", "replay", "--profile", p, "--seats", str(SEATS), str(path)]
            rc, stdout, stderr = run_cli(argv + (["--pretty"] if pretty else []))
            result += f"== {name} rc={rc}\n".encode() + stdout + b"--\n" + stderr
    return result


def record() -> dict[str, str]:
    return {name: digest(make()) for name, make in items()}
