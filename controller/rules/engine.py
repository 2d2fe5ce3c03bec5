"""The table rules engine: one state object that folds protocol input lines into rulings.

`TableEngine.feed(line)` takes one input line of ../shared/spec/table-events.md and returns the
output lines it causes. The engine is pure and deterministic: no I/O, no clock, no randomness, so
replaying a table's event log rebuilds the table exactly and gives the same rulings.

What happens where:

* seating, button and blinds: `controller.rules.seating.compute_positions` (the dead-button rule);
* the deal monitor (misdeals, exposed, extra and boxed cards, absent players): here, `_on_deal` & co;
* substantial action: here, `_count_substantial`, per the profile's definition;
* a table where nobody enters the actions (`actions: observed`): here, `_seen_action` & co count what the
  camera saw; `HandPlay` then models no betting (so rules nothing for want of actions);
* betting, board, pots and showdown: `controller.rules.hand_play.HandPlay`, one per hand.

A rejected line leaves the state exactly as it was: every handler checks before it changes anything,
and handlers that call into `HandPlay` let it validate first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from controller.rules import protocol
from controller.rules.borrowed import mark_borrowed
from controller.rules.cards import ALL_CARDS
from controller.rules.clock_call import reasonable_seconds
from controller.rules.dodge import broken_table_dodge
from controller.rules.errors import Rejected
from controller.rules.profile import Profile, load_profile
from controller.rules.seating import Player, PositionError, Positions, compute_positions

HandPlay: Any = None  # controller.rules.hand_play's, imported with the first hand (`_new_play`)
HandSetup: Any = None

_decode = protocol.decode
_validate = protocol.validate
QUICK_CHECKS = protocol.QUICK_CHECKS

PASSIVE = frozenset(("check", "fold"))
CHIPS_IN = frozenset(("call", "bet", "raise", "allin"))

_dumps = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _checked(check: Any, handler: Any, fills: bool) -> Any:
    """A type's one-pass check (protocol.QUICK_CHECKS) and its handler as one `usual(engine, ev, n)`: the
    output lines when the check passes, else None."""
    if fills:

        def usual(engine: TableEngine, ev: dict, n: int) -> list[dict] | None:
            ev = dict(ev)  # the check fills defaults in: not into the caller's dict
            return handler(engine, ev, n) if check(ev, engine.seats) else None

    else:

        def usual(engine: TableEngine, ev: dict, n: int) -> list[dict] | None:
            return handler(engine, ev, n) if check(ev, engine.seats) else None

    return usual


def dumps(line: dict) -> str:
    """An output line as the protocol writes it: compact JSON, keys in the order they were set."""
    return _dumps(line)


@dataclass(slots=True)
class Level:
    sb: int = 0
    bb: int = 0
    ante: int = 0
    big_blind_ante: bool = False  # the big blind pays the table's ante (an addition to `level`)
    minutes: int | None = None  # the level's length, where the floor says it (an addition: clock_call.py)


@dataclass(slots=True)
class DealState:
    """Everything the deal monitor knows about the current hand's hole cards."""

    cards: dict[int, int] = field(default_factory=dict)  # seat -> hole cards held (exposed ones taken back)
    received: dict[int, list[int]] = field(
        default_factory=dict
    )  # seat -> positions off the deck it was dealt
    unobserved: bool = False  # betting began before the camera saw any card dealt
    off_deck: int = 0  # hole cards dealt off the deck so far, in order
    exposed: int = 0  # cards exposed by dealer error during the deal
    extra: int = 0  # surplus cards to the first player after the deal was complete
    boxed: int = 0
    complete: bool = False  # every seat dealt in has its two cards
    full: int = 0  # seats dealt in that hold two cards
    # Every card so far went face down to the next seat in dealing order, one round after the other: the
    # next such card needs no ruling (`_on_deal` takes it on its quick path), and `cards`, `received` and
    # (until the last card) `full` are not kept up yet: `settle` writes them out from `off_deck` before
    # anything reads them; a hand whose deal went in order to the end may never need them.
    in_order: bool = True
    # The seats in the order an in-order deal reaches them (the dealing order twice over), set when the
    # hand's play starts; emptied (no quick path) when the first card is not due to the first seat of that
    # order, once the deal is settled and once betting has begun.
    sequence: tuple[int, ...] = ()
    action_started: bool = False
    absent_done: bool = False
    acted_seats: set[int] = field(default_factory=set)
    # Observed tables: seats seen acting in the betting round now running (a board line closes it), the
    # streets whose round a board line has closed, and seats whose forced bet the camera saw go in.
    round_acted: set[int] = field(default_factory=set)
    rounds_closed: set[str] = field(default_factory=set)
    posted: set[int] = field(default_factory=set)
    in_turn_actions: int = 0
    in_turn_with_chips: int = 0
    aggressive: int = 0
    passive: int = 0
    substantial: bool = False

    def settle(self, order: tuple[int, ...]) -> None:
        """Write out the per-seat counts of an in-order deal (`order`: the hand's dealing order); from then
        on every card of the hand is ruled on in full."""
        if not self.in_order:
            return
        self.in_order = False
        self.sequence = ()
        dealt, seats = self.off_deck, len(order)
        for i, seat in enumerate(order):
            if dealt > i:
                got = [i + 1] if dealt <= seats + i else [i + 1, seats + i + 1]
                self.cards[seat] = len(got)
                self.received[seat] = got
        self.full = max(0, dealt - seats)


@dataclass(slots=True)
class Hand:
    number: int
    positions: Positions
    level: Level
    start_stacks: dict[int, int | None]
    redeal: bool = False
    void: bool = False  # a misdeal was declared: waiting for the re-deal
    misdeal_reason: str | None = None
    deal: DealState = field(default_factory=DealState)
    play: Any = None  # HandPlay
    button_seen: int | None = None


class TableEngine:
    """A poker table under one venue's rulebook. Feed it input lines; it answers with rulings."""

    def __init__(self, profile: Profile | str = "bluff_street", seats: int = 10, actions: str = "entered"):
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        self.deal_rules = self._settings(self.profile)
        self.seats = seats
        if actions not in protocol.ACTIONS_MODES:
            raise ValueError(f"actions must be one of {', '.join(protocol.ACTIONS_MODES)}, got {actions!r}")
        # True: nobody enters the actions; the engine rules only on what the sensors can know (the spec's
        # "Tables where nobody enters the actions"). A `table` line's `actions` sets it.
        self.observed = actions == "observed"
        # One handler per input type, looked up once per class (the engine sees tens of thousands of
        # lines, and an engine is made per PHH hand replayed): `handlers[type](self, ev, n)`.
        handlers = type(self).__dict__.get("_handler_table")
        if handlers is None:
            handlers = {kind: getattr(type(self), "_on_" + kind) for kind in protocol.INPUT_TYPES}
            type(self)._handler_table = handlers
            # The usual line's type -> one function that checks and handles it, returning None for a line
            # that is not the usual one (the full path takes that): one lookup and one call per line.
            usual = {
                kind: _checked(QUICK_CHECKS[kind], handlers[kind], kind in protocol.QUICK_CHECKS_FILL)
                for kind in QUICK_CHECKS
            }
            for kind in ("burn", "hand_start", "hand_end"):  # any such dict line passes its check
                usual[kind] = handlers[kind]
            for kind in ("deal", "action", "seat", "board"):  # checked and handled in one step
                usual[kind] = getattr(type(self), "_usual_" + kind)
            type(self)._usual_table = usual
        self.handlers = handlers
        self._usual = type(self)._usual_table
        self.players: dict[int, Player] = {}
        self.level: Level | None = None  # the level the next hand is played at
        self.deferred_level: Level | None = None  # a level that waits one more hand (bar_league:Hand Start)
        # A player who left a seat between hands (he may sit down again): player -> (seat, dealt, hand, stack).
        self.vacated: dict[str, tuple[int, bool, int, int | None]] = {}
        self.forced_button: int | None = None
        self.previous: Positions | None = None
        self.hand_number = 0
        self.hand: Hand | None = None  # the current (or last) hand; None before the first
        self.lines_seen = 0
        self.busted_seats: set[int] = set()  # seats vacated by the engine after a bust-out
        self.offenders: set[str] = set()  # players already warned for acting out of turn (cool_mule:7.d)
        # Observed tables: seats whose player was tapped out as eliminated during the hand; they leave when
        # it is over.
        self.leaving: list[int] = []
        self.alerts: list[dict] = []

    @staticmethod
    def _settings(profile: Profile) -> dict[str, Any]:
        """The [deal] settings as plain values: read on every card, so looked up once per profile.
        Shared by every engine on that profile: read, never written."""
        values = profile.memo.get("deal_rules")
        if values is None:
            values = profile.memo["deal_rules"] = {
                key: setting.value for key, setting in profile.settings["deal"].items()
            }
        return values

    # ----------------------------------------------------------------- public API

    def feed(self, line: dict | str, line_no: int | None = None) -> list[dict]:
        """One input line (JSON text or a decoded dict) in, the output lines it causes out; a ruling on a
        rule the venue's own book does not hold says whose book it borrows (`borrowed_from`)."""
        out = self._feed_line(line, line_no)
        if self.deal_rules["absent_at_turn"] == "dead":
            absent = self._absent_at_turn()
            if absent:
                out = [*out, *absent]
        if out:
            mark_borrowed(out, self.profile.name)
        return out

    def _absent_at_turn(self) -> list[dict]:
        """A player away from his seat when the action reaches him: his hand is dead (corner_pocket:General
        Rules.I "If a player is absent from his seat when it is his turn to act, for any reason, his hand
        will be immediately folded"; cool_mule:7.r). Back before his turn, he plays it."""
        h = self.hand
        if h is None or h.void or h.play is None or not (h.deal.complete or h.deal.action_started):
            return []
        out: list[dict] = []
        for _ in range(self.seats):
            seat = h.play.to_act
            player = self.players.get(seat) if seat is not None else None
            if player is None or not player.away or seat not in h.play.live:
                break
            out.extend(self._dead(h, seat, "absent", "absent_at_turn"))
        return out

    def _feed_line(self, line: dict | str, line_no: int | None = None) -> list[dict]:
        """One input line (JSON text or a decoded dict) in, the output lines it causes out."""
        self.lines_seen += 1
        n = self.lines_seen if line_no is None else line_no
        try:
            if type(line) is dict:
                kind = line.get("type")
                try:
                    usual = self._usual.get(kind)
                except TypeError:  # a type that is no string at all (a list, say): the full path says so
                    usual = None
                if usual is not None:
                    # The usual line of its type, checked and handled (None: not the usual one, the full
                    # path below takes it). The caller's dict is only read: handlers copy what they keep.
                    out = usual(self, line, n)
                    if out is not None:
                        return out
                ev = dict(line)  # the caller's dict is not touched (validation fills defaults in)
            elif isinstance(line, str):
                stripped = line.strip()
                if not stripped or stripped.startswith("#"):
                    return []
                ev = _decode(stripped)
            else:
                ev = dict(line)
            kind = ev.get("type")
            # The usual line passes its type's one-pass check; anything else gets the full checks, which
            # name the problem (protocol.validate).
            check = QUICK_CHECKS.get(kind) if type(kind) is str else None
            if check is not None and check(ev, self.seats):
                return self.handlers[kind](self, ev, n)
            _validate(ev, self.seats)
            return self.handlers[ev["type"]](self, ev, n)
        except Rejected as exc:
            return [{"type": "error", "line": n, "message": str(exc)}]
        except Exception as exc:  # a bug must not stop the table: say so on the line and go on
            return [
                {
                    "type": "error",
                    "line": n,
                    "message": f"internal error ({type(exc).__name__}: {exc}); please report this line",
                }
            ]

    # ----------------------------------------------------------------- the usual lines, in one step

    # Most lines of a hand are a card dealt in order, a plain action, or a seat taken. Each `_usual_*` below
    # checks such a line as `protocol.QUICK_CHECKS` does and handles it as its `_on_*` handler does, in one
    # call; for anything else it returns None before changing anything, and `feed` takes the full path. The
    # caller's dict is only read. tests/rules/test_fast_paths.py compares the two ways.

    def _usual_deal(self, ev: dict, n: int) -> list[dict] | None:
        """A hole card face down to the seat next in dealing order (`_on_deal`'s first case)."""
        h = self.hand
        if h is None or h.play is None:  # no hand in play (a misdeal, which voids it, drops its play)
            return None
        # Every check of the full monitor passes for it (first card to the first seat, a seat dealt in, no
        # card before it missing, at most two cards): only the count off the deck moves (`DealState.settle`).
        # A seat of `sequence` is a seat of the table; a card after the last of it takes the full path.
        d = h.deal
        position = d.off_deck
        seat = ev.get("seat")
        sequence = d.sequence
        if (
            position >= len(sequence)  # (empty unless the deal is in order and betting has not begun)
            or seat != sequence[position]
            or type(seat) is not int
            or ev.get("card") is not None
        ):
            return None
        d.off_deck = position + 1
        if position + 1 == len(sequence):  # the last card: every seat holds two
            d.full = position + 1 - len(h.positions.dealt_in)  # what `settle` would write; the rest waits
            return self._check_deal_complete(h)
        return []

    def _usual_action(self, ev: dict, n: int) -> list[dict] | None:
        """An action line that passes `protocol._accept_action`, handed to `_on_action` (past substantial
        action, where the deal monitor counts nothing, straight to the hand)."""
        seat, action, to = ev.get("seat"), ev.get("action"), ev.get("to")
        if (
            self.observed
            or type(seat) is not int
            or not 0 < seat <= self.seats
            or type(action) is not str
            or action not in protocol.ACTION_SET
            or (to is not None and (type(to) is not int or to < (1 if action in protocol.BETS else 0)))
            or ev.get("chips") is not None
        ):
            return None
        h = self.hand
        if h is not None and h.play is not None and h.deal.substantial:  # (a void hand has no play)
            return h.play.act(seat, action, to, ev, n)
        return self._on_action(ev, n)

    def _usual_seat(self, ev: dict, n: int) -> list[dict] | None:
        """A seat line that passes `protocol._accept_seat`, read in place (a missing `moved` is taken as
        false, the default that check writes) and handed to `_seat` as `_on_seat` does."""
        seat, player, stack, moved = ev.get("seat"), ev.get("player"), ev.get("stack"), ev.get("moved", False)
        if (
            type(seat) is not int
            or not 0 < seat <= self.seats
            or type(player) is not str
            or not player
            or (stack is not None and (type(stack) is not int or stack < 1))
            or (moved is not True and moved is not False)
        ):
            return None
        return self._seat(seat, player, stack, moved)

    def _usual_board(self, ev: dict, n: int) -> list[dict] | None:
        """Board cards none of which is out yet, in a hand in play (`_on_board` with the card check of
        `protocol._accept_board` and of the hand done once)."""
        h = self.hand
        cards = ev.get("cards")
        if h is None or h.play is None or type(cards) is not list or not cards or self.observed:
            return None
        play = h.play
        if play.finished or not play.fresh_cards(cards):
            return None
        return play.board_checked(cards)

    def stacks(self) -> dict[int, int | None]:
        """Chips in front of each seated player (between hands: after the last award)."""
        play = self.hand.play if self.hand and not self.hand.void else None
        if play is not None and self.in_hand and not self.observed:  # observed: no chips are counted
            return {s: play.stacks.get(s, p.stack) for s, p in self.players.items()}
        return {s: p.stack for s, p in self.players.items()}

    @property
    def in_hand(self) -> bool:
        return self.hand is not None and self.hand.play is not None and not self.hand.void

    @property
    def phase(self) -> str:
        h = self.hand
        if h is None or (h.play is None and not h.void):
            return "between_hands"
        if h.void:
            return "misdeal"
        if not (h.deal.complete or h.deal.action_started):
            return "deal"
        return getattr(h.play, "street", "preflop")

    def snapshot(self) -> dict:
        """The table as a director's screen shows it: public information only (no hole cards)."""
        h = self.hand
        pos = h.positions if h else None
        board = list(getattr(h.play, "board_cards", []) or []) if h and h.play is not None else []
        return {
            "profile": self.profile.name,
            "seats": self.seats,
            "players": {
                str(s): {"player": p.id, "stack": self.stacks().get(s), "away": p.away}
                for s, p in sorted(self.players.items())
            },
            "hand": h.number if h else 0,
            "phase": self.phase,
            "button": pos.button if pos else None,
            "sb": pos.sb if pos else None,
            "bb": pos.bb if pos else None,
            "dead_button": pos.dead_button if pos else False,
            "level": {"sb": self.level.sb, "bb": self.level.bb, "ante": self.level.ante}
            if self.level
            else None,
            "board": board,
            "to_act": getattr(h.play, "to_act", None) if self.in_hand else None,
            "alerts": list(self.alerts),
        }

    # ----------------------------------------------------------------- table and seats

    def _on_table(self, ev: dict, n: int) -> list[dict]:
        if self.lines_seen > 1 and (self.players or self.hand is not None):
            raise Rejected("a 'table' line must come first, before any seat or hand")
        seats = ev.get("seats", self.seats)
        profile = self.profile
        if "profile" in ev:
            try:
                profile = load_profile(ev["profile"])
            except Exception as exc:  # ProfileError: unknown name or unusable file
                raise Rejected(f"field 'profile': {exc}") from None
        self.seats = seats
        self.profile = profile
        self.deal_rules = self._settings(profile)
        if "actions" in ev:
            self.observed = ev["actions"] == "observed"
        return []

    def _on_level(self, ev: dict, n: int) -> list[dict]:
        level = Level(ev["sb"], ev["bb"], ev.get("ante", 0), bool(ev.get("big_blind_ante", False)))
        level.minutes = ev.get("minutes")  # bar_league:Calling a Clock measures in tenths of it
        return self._level_change(level)

    def _level_change(self, level: Level) -> list[dict]:
        """When a new level takes effect, as each book says: the next hand (cool_mule:6.h, dragons_den:18,
        bluff_street:24); one more hand at the old level when it concludes between hands (bar_league:Hand
        Start); at once while no card is dealt yet (corner_pocket:Blinds.C)."""
        when = self.profile.value("conduct", "level_change")
        h = self.hand
        self.deferred_level = None
        if when == "before_first_card" and self.in_hand and h is not None:
            d = h.deal
            if d.off_deck == 0 and not d.action_started and not h.redeal:
                # "If the cards have been gathered up, shuffled, and cut, but no card has yet been dealt to a
                # player, then the limit increase is effective immediately": the blinds are posted again.
                self.level = h.level = level
                h.play = self._new_play(h)
                return []
        if when == "one_more_hand_if_between_hands" and h is not None and not self.in_hand and not h.void:
            # "If a blind level concludes after the previous pot has been pushed, one more hand will be played
            # at the previous blind level before the new blind level takes effect."
            self.deferred_level = level
            return []
        self.level = level
        return []

    def _on_seat(self, ev: dict, n: int) -> list[dict]:
        return self._seat(ev["seat"], str(ev["player"]), ev.get("stack"), ev.get("moved", False))

    def _seat(self, seat: int, player_id: str, stack: int | None, moved: bool) -> list[dict]:
        players = self.players
        if seat in players:
            raise Rejected(f"seat {seat} is taken by player {players[seat].id}")
        for s, p in players.items():
            if p.id == player_id:
                raise Rejected(f"player {player_id} is already seated at seat {s}")
        # id, stack, moved, dealt (a moved player has been dealt hands), away, seated_hand
        players[seat] = Player(player_id, stack, moved, moved, False, self.hand_number)
        if self.busted_seats:
            self.busted_seats.discard(seat)
        if self.vacated:
            return self._reseated(seat, player_id)
        if moved:  # from a broken table, after the big blind passed his seat (cool_mule:6.f): dodge.py
            return broken_table_dodge(self, seat, player_id)
        return []

    def _reseated(self, seat: int, player_id: str) -> list[dict]:
        """A player who left a seat of this table since the last hand sits down again at `seat`: he is no
        new player (he has been dealt hands), and where the book says so a move that skips a blind he was
        due is flagged for the director (bluff_street:31 "A Participant who intentionally dodges his or her
        blind(s) when moving from an existing seat must forfeit both blinds and incur a penalty"): the
        table sees the move, the director judges the intent."""
        from controller.rules.seating import clockwise

        prior = self.vacated.pop(player_id, None)
        if prior is None or prior[2] != self.hand_number:
            return []
        old, dealt, _, stack = prior
        player = self.players[seat]
        player.dealt = player.dealt or dealt
        if (
            player.stack is None
            and self.profile.value("registration", "wrong_seat") == "move_to_correct_seat"
        ):
            # bluff_street:10: moved to the correct seat, "will take their current total chip stack with them".
            player.stack = stack
        last = self.previous
        if last is None or self.profile.value("seating", "blind_dodge") != "flag":
            return []
        live = {s for s, p in self.players.items() if not p.busted}

        def next_big_blind(among: set[int]) -> int | None:
            return next((s for s in clockwise(last.bb, self.seats) if s in among and s != last.bb), None)

        due = old == last.bb or next_big_blind((live - {seat}) | {old}) == old
        if not due or next_big_blind(live) == seat:
            return []
        line = {
            "type": "blind_dodge",
            "seat": seat,
            "from": old,
            "player": player_id,
            "rule": self.profile.rule("seating", "blind_dodge"),
        }
        self.alerts.append(line)
        return [line]

    def _on_leave(self, ev: dict, n: int) -> list[dict]:
        seat, reason = ev["seat"], ev["reason"]
        if seat not in self.players:
            if seat in self.busted_seats:
                self.busted_seats.discard(seat)  # the engine already vacated it at the bust-out
                return []
            raise Rejected(f"seat {seat} is empty")
        h = self.hand
        if self.in_hand and h is not None and seat in h.positions.dealt_in:
            if self.observed and reason == "eliminated":
                return self._leaving(h, seat)
            raise Rejected(
                f"seat {seat} is in hand {h.number}: a player leaves between hands (after hand_end)"
            )
        player = self.players.pop(seat)
        if reason in ("left", "moved"):  # he may sit down again at this table (`_reseated`)
            self.vacated[player.id] = (seat, player.dealt, self.hand_number, player.stack)
        out: list[dict] = []
        if reason == "eliminated":
            out.append(
                {"type": "eliminated", "seat": seat, "place": len(self.players) + 1, "player": player.id}
            )
        return out

    def _leaving(self, h: Hand, seat: int) -> list[dict]:
        """An observed table: a player tapped out as busted while the hand is still on the table (the pot
        not pushed yet). The place is theirs now; the seat empties when the hand is over, and the button and
        blinds of the next hand follow (the dead button: bar_league:Dead Button, cool_mule:10)."""
        if seat in self.leaving:
            return []  # tapped out already (the director's `leave` for it too is taken quietly)
        place = len(self.players) - len(self.leaving)
        self.leaving.append(seat)
        h.play.seen_fold(seat)  # its hand can win nothing more
        return [{"type": "eliminated", "seat": seat, "place": place, "player": self.players[seat].id}]

    def _on_button(self, ev: dict, n: int) -> list[dict]:
        self.forced_button = ev["seat"]
        return []

    def _on_away(self, ev: dict, n: int) -> list[dict]:
        self._occupied(ev["seat"]).away = True
        return []

    def _on_back(self, ev: dict, n: int) -> list[dict]:
        self._occupied(ev["seat"]).away = False
        return []

    def _on_penalty(self, ev: dict, n: int) -> list[dict]:
        """A time penalty: the player leaves the table but keeps being dealt in, blinds posted and the
        hand dead once dealt (cool_mule:11.c, dragons_den:40); it starts with the next hand
        (bluff_street:62). A penalty in minutes lasts until the director sends `back`."""
        player = self._occupied(ev["seat"])
        if ev.get("rounds"):
            ev = {**ev, "hands": self._penalty_round_hands(ev["rounds"])}
        if ev.get("hands"):
            player.penalty_hands = ev["hands"]
        else:
            player.away = True
        line = {"type": "penalty", "seat": ev["seat"], "player": player.id, "reason": ev.get("reason", "")}
        for key in ("hands", "rounds", "minutes"):
            if ev.get(key):
                line[key] = ev[key]
        line["rule"] = self.profile.rule("conduct", "time_penalty")
        return [line]

    def _penalty_round_hands(self, rounds: int) -> int:
        """A penalty in rounds as hands: "one hand for every player, including the offender, who is at the
        table when the penalty is given multiplied by the number of rounds" (dragons_den:40; bluff_street:58.b
        rounds of hands). Refused where the book gives no penalty in rounds."""
        if self.profile.value("conduct", "penalty_round") != "players_at_table":
            raise Rejected(
                f"field 'rounds': {self.profile.name}'s rulebook gives no penalty in rounds "
                f"({self.profile.rule('conduct', 'penalty_round')}); give 'hands' or 'minutes'"
            )
        return rounds * len(self.players)

    def _occupied(self, seat: int) -> Player:
        if seat not in self.players:
            raise Rejected(f"seat {seat} is empty")
        return self.players[seat]

    # ----------------------------------------------------------------- hands

    def _on_hand_start(self, ev: dict, n: int) -> list[dict]:
        out: list[dict] = []
        h = self.hand
        if h is not None and h.void:
            return self._redeal(h, n)
        if self.in_hand:
            # NEW HAND pressed without a hand_end: the pot was pushed (bar_league:Hand Start).
            out.extend(self._finish(n))
        try:
            positions = compute_positions(
                self.profile,
                self.seats,
                self.players,
                self.previous,
                self.forced_button,
                self.hand_number + 1,
            )
        except PositionError as exc:
            raise Rejected(f"cannot start a hand: {exc}") from None
        self.forced_button = None
        self.hand_number += 1
        for player in self.players.values():
            if player.penalty_hands > 0:
                player.away = True  # serving a penalty: dealt in, hand dead (dragons_den:40)
        level = self.level or Level()
        if self.deferred_level is not None:  # this hand is the one more at the old level (bar_league)
            self.level, self.deferred_level = self.deferred_level, None
        hand = Hand(
            self.hand_number, positions, level, {s: self.players[s].stack for s in positions.dealt_in}
        )
        self.hand = hand
        self.alerts = []
        out.append(self._hand_line(hand))
        hand.play = self._new_play(hand)
        return out

    def _redeal(self, old: Hand, n: int) -> list[dict]:
        """After a misdeal the re-deal is an exact replay: same button, blinds, players and limits
        (bluff_street:33.b); players seated since are not dealt in, players gone are skipped."""
        p = old.positions
        dealt_in = tuple(s for s in p.dealt_in if s in self.players)
        if len(dealt_in) < 2:
            # Players left since the misdeal: no exact replay is possible, deal a fresh hand.
            if sum(1 for player in self.players.values() if not player.busted) < 2:
                raise Rejected("cannot re-deal: fewer than two players are seated")
            self.hand = None
            self.previous = None
            return self._on_hand_start({"type": "hand_start"}, n)
        positions = Positions(
            p.button,
            p.sb if p.sb in self.players else None,
            p.bb,
            p.dead_button,
            p.dead_sb_seat,
            p.dealer,
            dealt_in[0],
            dealt_in,
            p.sitting_out,
            p.heads_up,
            p.rules,
        )
        hand = Hand(
            old.number, positions, old.level, {s: self.players[s].stack for s in dealt_in}, redeal=True
        )
        self.hand = hand
        self.alerts = []
        line = self._hand_line(hand)
        line["rule"] = self.profile.rule("deal", "redeal_exact_replay")
        hand.play = self._new_play(hand)
        return [line]

    def _hand_line(self, hand: Hand) -> dict:
        p = hand.positions
        line = {
            "type": "hand",
            "number": hand.number,
            "button": p.button,
            "sb": p.sb,
            "bb": p.bb,
            "dead_button": p.dead_button,
            "dead_sb_seat": p.dead_sb_seat,
            "dealer": p.dealer,
            "first_card": p.first_card,
            "dealt_in": list(p.dealt_in),
            "sitting_out": [{"seat": s, "reason": r} for s, r in p.sitting_out],
            "redeal": hand.redeal,
        }
        # The hand line is a ruling when the dead-button rule or a sit-out decided something.
        if p.sitting_out:
            line["rule"] = p.rules.get(f"sit_out:{p.sitting_out[0][0]}", p.rules["button"])
        elif p.dead_button or p.dead_sb_seat is not None or p.heads_up:
            line["rule"] = p.rules["button"]
        return line

    def _new_play(self, hand: Hand) -> Any:
        global HandPlay, HandSetup
        if HandPlay is None:  # imported on the first hand, once
            from controller.rules.hand_play import HandPlay, HandSetup

        p = hand.positions
        offenders = self.offenders
        if p.dealt_in and p.dealt_in[0] == p.first_card:
            hand.deal.sequence = p.dealt_in * 2
        setup = HandSetup(
            hand.number,
            p.button,
            p.sb,
            p.bb,
            list(p.dealt_in),
            dict(hand.start_stacks),
            hand.level.sb,
            hand.level.bb,
            hand.level.ante,
            self.seats,
            p.heads_up,
            hand.level.big_blind_ante,
            frozenset(s for s in p.dealt_in if self.players[s].id in offenders) if offenders else frozenset(),
            self.observed,
        )
        return HandPlay(self.profile, setup)

    def _current(self, what: str) -> Hand:
        h = self.hand
        if h is None or (h.play is None and not h.void):
            raise Rejected(f"'{what}' with no hand in progress (send hand_start first)")
        if h.void:
            raise Rejected(
                f"'{what}': hand {h.number} is void after a misdeal ({h.misdeal_reason}); re-deal with hand_start"
            )
        return h

    def _misdeal(self, h: Hand, reason: str, setting: str) -> list[dict]:
        h.void = True
        h.misdeal_reason = reason
        if self.leaving:  # tapped out during the hand: gone before the re-deal
            self._vacate_leaving()
        h.play = None  # chips posted go back: stacks are only written at the end of a hand
        line = {"type": "misdeal", "reason": reason, "rule": self.profile.rule("deal", setting)}
        self.alerts = [line]
        return [line]

    # ----------------------------------------------------------------- the deal monitor

    def _on_deal(self, ev: dict, n: int) -> list[dict]:
        usual = self._usual_deal(ev, n)  # the usual card: face down to the seat next in dealing order
        if usual is not None:
            return usual
        h = self._current("deal")
        d, p, prof = h.deal, h.positions, self.profile
        d.settle(p.dealt_in)
        seat, card = ev["seat"], ev.get("card")
        held = d.cards.get(seat, 0)
        before_sa = not d.substantial

        if before_sa:
            if d.off_deck == 0 and seat != p.first_card and self.deal_rules["first_card_wrong_seat_misdeal"]:
                return self._misdeal(h, "first_card_wrong_seat", "first_card_wrong_seat_misdeal")
            if seat not in p.dealt_in and self.deal_rules["ineligible_seat_misdeal"]:
                return self._misdeal(h, "dealt_to_ineligible_seat", "ineligible_seat_misdeal")
        elif seat not in p.dealt_in:
            raise Rejected(f"seat {seat} is not in hand {h.number}")

        if d.action_started and d.unobserved:
            raise Rejected(
                "a hole card seen after betting began on a deal the camera did not see: not ruled on"
            )
        if d.action_started:
            late = self._button_final_card(h, seat, held, card)
            if late is not None:
                return late
            # A card after betting began: the hand had a wrong card count when the action started.
            if before_sa:
                if held == 0 and self.deal_rules["eligible_dealt_out_misdeal"]:
                    return self._misdeal(h, "eligible_seat_dealt_out", "eligible_dealt_out_misdeal")
                if self.deal_rules["wrong_card_count_misdeal"]:
                    return self._misdeal(h, "wrong_card_count", "wrong_card_count_misdeal")
                return []
            return self._dead(h, seat, "wrong_card_count", "wrong_card_count_after_substantial")

        if d.complete:
            # A surplus card after every hand was complete (cool_mule:5.i).
            if seat == p.first_card and d.extra == 0:
                if self.deal_rules["extra_card_to_first_player"] == "misdeal":
                    # "any player has the incorrect quantity of hole cards" (bar_league:Misdeals(f)).
                    return self._misdeal(h, "wrong_card_count", "extra_card_to_first_player")
                d.extra += 1
                return [
                    {
                        "type": "extra_card",
                        "seat": seat,
                        "rule": prof.rule("deal", "extra_card_to_first_player"),
                    }
                ]
            if d.extra >= 1 and self.deal_rules["too_many_extra_cards_misdeal"]:
                return self._misdeal(h, "too_many_extra_cards", "too_many_extra_cards_misdeal")
            if self.deal_rules["wrong_card_count_misdeal"]:
                return self._misdeal(h, "wrong_card_count", "wrong_card_count_misdeal")
            return []

        if held >= 2 and self.deal_rules["wrong_card_count_misdeal"]:
            return self._misdeal(h, "wrong_card_count", "wrong_card_count_misdeal")
        if len(d.received.get(seat, ())) == 1 and self.deal_rules["eligible_dealt_out_misdeal"]:
            # The second round reached this seat while a seat before it never got a first card. The
            # button, last in the order, may take two consecutive cards (bluff_street:33.a.6.i).
            order = p.dealt_in
            idx = order.index(seat)
            button_may_wait = self.deal_rules["button_two_consecutive_cards"]
            for other in order if idx == 0 else order[:idx]:
                if (
                    other != seat
                    and not d.received.get(other)
                    and not (button_may_wait and other == order[-1])
                ):
                    return self._misdeal(h, "eligible_seat_dealt_out", "eligible_dealt_out_misdeal")

        out: list[dict] = []
        position = d.off_deck + 1
        if card is not None:
            ruling = self._exposed_in_deal(h, seat, card, position)
            if ruling and ruling[0]["type"] == "misdeal":
                return ruling
            out.extend(ruling)  # the exposed card is taken back: the seat gets another after the deal
        else:
            d.cards[seat] = held + 1
            if held == 1 and seat in p.dealt_in:
                d.full += 1
        d.off_deck = position
        d.received.setdefault(seat, []).append(position)
        out.extend(self._check_deal_complete(h))
        return out

    def _button_final_card(self, h: Hand, seat: int, held: int, card: str | None) -> list[dict] | None:
        """bluff_street:53 "In button games, the button may receive his or her final card, even if
        substantial action has occurred, unless he or she acts on the hand prior to receiving the final
        card. In the event that he or she acts before receiving the final card, the hand is dead." None
        when the card is not the button's late final card (or the profile has no such rule)."""
        if (
            not self.deal_rules["button_final_card_late"]
            or seat != h.positions.button
            or seat not in h.positions.dealt_in
            or held != 1
            or card is not None
        ):
            return None
        if any(done[0] == seat for done in h.play.acted):
            return self._dead(h, seat, "wrong_card_count", "button_final_card_late")
        d = h.deal
        d.cards[seat] = 2
        d.full += 1
        d.off_deck += 1
        d.received.setdefault(seat, []).append(d.off_deck)
        return self._check_deal_complete(h)

    def _exposed_in_deal(self, h: Hand, seat: int, card: str, position: int) -> list[dict]:
        """A card flashed by the dealer during the deal (cool_mule:5.g/h/j, bar_league:Misdeals)."""
        prof, p = self.profile, h.positions
        if position <= self.deal_rules["exposed_misdeal_cards"]:
            return self._misdeal(h, "first_cards_exposed", "exposed_misdeal_cards")
        if self.deal_rules["button_card_exposed_misdeal"] and seat == p.button and seat in p.dealt_in:
            return self._misdeal(h, "button_card_exposed", "button_card_exposed_misdeal")
        if h.deal.exposed >= 1 and self.deal_rules["multiple_exposed_misdeal"]:
            return self._misdeal(h, "multiple_exposed", "multiple_exposed_misdeal")
        h.deal.exposed += 1
        line = {
            "type": "replace_exposed",
            "seat": seat,
            "card": card,
            "rule": prof.rule("deal", "single_exposed_procedure"),
        }
        self.alerts.append(line)
        return [line]

    def _check_deal_complete(self, h: Hand) -> list[dict]:
        d = h.deal
        if d.complete or d.full < len(h.positions.dealt_in):
            return []
        d.complete = True
        return self._absent_hands(h)

    def _absent_hands(self, h: Hand) -> list[dict]:
        """An absent player is dealt in; the hand is dead once the last card is dealt (cool_mule:5.n)."""
        d = h.deal
        if d.absent_done or not self.deal_rules["absent_hand_dead"]:
            return []
        d.absent_done = True
        out: list[dict] = []
        for seat in h.positions.dealt_in:
            player = self.players.get(seat)
            if player is not None and player.away and seat in h.play.live:
                out.extend(self._dead(h, seat, "absent", "absent_hand_dead"))
        return out

    def _dead(self, h: Hand, seat: int, reason: str, setting: str) -> list[dict]:
        if seat not in h.play.live:
            return []
        line = {
            "type": "dead_hand",
            "seat": seat,
            "reason": reason,
            "rule": self.profile.rule("deal", setting),
        }
        return [line, *h.play.kill(seat, reason)]

    def _on_expose(self, ev: dict, n: int) -> list[dict]:
        h = self._current("expose")
        seat, card, by = ev["seat"], ev["card"], ev["by"]
        d = h.deal
        d.settle(h.positions.dealt_in)
        if seat not in h.positions.dealt_in:
            raise Rejected(f"seat {seat} was dealt no cards in hand {h.number}")
        if d.cards.get(seat, 0) == 0:
            raise Rejected(f"seat {seat} holds no card to expose yet")
        if by == "player":
            # A player's own exposure: Corner Pocket kills the hand, the others do not.
            if self.deal_rules["player_exposure"] == "kill":
                return self._dead(h, seat, "exposed_cards", "player_exposure")
            return []
        if d.complete or d.action_started:
            return []  # after the deal a dealer's exposure is no misdeal: the card plays
        # The card most recently dealt to the seat was flashed while the deal goes on.
        ruling = self._exposed_in_deal(h, seat, card, d.received[seat][-1])
        if ruling and ruling[0]["type"] == "replace_exposed":
            if d.cards[seat] == 2:
                d.full -= 1
            d.cards[seat] -= 1
        return ruling

    def _on_boxed(self, ev: dict, n: int) -> list[dict]:
        h = self._current("boxed")
        d, prof = h.deal, self.profile
        if not d.substantial:
            if d.boxed >= 1 and self.deal_rules["multiple_boxed_misdeal"]:
                return self._misdeal(h, "multiple_boxed", "multiple_boxed_misdeal")
            d.boxed += 1
            setting = "boxed_before_substantial"
        else:
            setting = "boxed_after_substantial"
        return [
            {
                "type": "boxed_card",
                "card": ev["card"],
                "procedure": self.deal_rules[setting],
                "rule": prof.rule("deal", setting),
            }
        ]

    def _on_button_seen(self, ev: dict, n: int) -> list[dict]:
        h = self.hand
        if h is None or h.void or h.play is None:
            return []  # between hands the button is on its way; it is checked once a hand starts
        seat, expected = ev["seat"], h.positions.button
        previously = h.button_seen
        h.button_seen = seat
        if seat == expected:
            if previously is not None and previously != expected:
                self.alerts = [a for a in self.alerts if a.get("type") != "button_misplaced"]
            return []
        if h.deal.off_deck == 0 and not h.deal.action_started:
            line = {
                "type": "button_misplaced",
                "expected": expected,
                "seen": seat,
                "rule": h.positions.rules["button"],
            }
            self.alerts.append(line)
            return [line]
        if not h.deal.substantial and self.deal_rules["button_misplaced_misdeal"]:
            return self._misdeal(h, "button_misplaced", "button_misplaced_misdeal")
        return []

    # ----------------------------------------------------------------- play

    def _on_action(self, ev: dict, n: int) -> list[dict]:
        h = self.hand
        if h is None or h.void or h.play is None:
            h = self._current("action")  # refuses the line
        if self.observed:
            return self._observed_action(h, ev)
        d = h.deal
        if d.substantial:
            # Past substantial action the deal monitor has nothing left to count: the hand rules alone.
            return h.play.action(ev, n)
        out: list[dict] = []
        first_action = not d.action_started
        in_turn = h.play.to_act == ev["seat"]
        acted_before = len(h.play.acted)
        out.extend(h.play.action(ev, n))  # validates; raises Rejected with the state unchanged
        if first_action:
            d.action_started = True
            d.sequence = ()  # a card from now on is ruled on in full
            d.unobserved = d.off_deck == 0
            out.extend(self._absent_hands(h))
        if len(h.play.acted) > acted_before:
            seat, kind, _chips = h.play.acted[-1][:3]
            out.extend(self._count_substantial(h, seat, kind, in_turn))
        return out

    # ----------------------------------------------------------------- what the camera saw (observed tables)

    def _observed_action(self, h: Hand, ev: dict) -> list[dict]:
        """An `action` line at an observed table: counted toward substantial action as entered, a fold taken
        out of the hand. Nothing else is ruled from it: with the other actions unseen, its turn and size
        cannot be judged without ruling on actions nobody entered."""
        play, seat, word = h.play, ev["seat"], ev["action"]
        if play.finished:
            raise Rejected("the hand is over")
        if seat not in play.stacks:
            raise Rejected(f"seat {seat} was not dealt in this hand")
        if seat in play.folded:
            raise Rejected(f"seat {seat} has folded")
        if word == "fold":
            play.seen_fold(seat)
        return self._seen_action(h, seat, word)

    def _on_fold_seen(self, ev: dict, n: int) -> list[dict]:
        """The camera saw a seat's cards go into the muck: one passive action (a fold)."""
        h = self.hand
        if h is None or h.void or h.play is None:
            return []  # cards pushed in between hands or after a misdeal: nothing to rule on
        seat = ev["seat"]
        if seat not in h.play.stacks:
            raise Rejected(f"seat {seat} was not dealt in hand {h.number}")
        if not self.observed or not h.play.seen_fold(seat):
            return []  # entered: the `action` line tells it; a fold seen twice is one fold
        return self._seen_action(h, seat, "fold")

    def _on_chips_seen(self, ev: dict, n: int) -> list[dict]:
        """The camera saw chips go forward from a seat: one action that puts chips in (call, bet or raise,
        which is not known). A blind or ante seen going in while the cards are dealt is no action."""
        h = self.hand
        if h is None or h.void or h.play is None:
            return []
        seat, play, d = ev["seat"], h.play, h.deal
        if seat not in play.stacks:
            raise Rejected(f"seat {seat} was not dealt in hand {h.number}")
        if not self.observed or seat in play.folded or play.finished:
            return []
        if (
            not d.complete
            and not d.rounds_closed
            and seat not in d.posted
            and seat in self._forced_bet_seats(h)
        ):
            # Nobody acts before the deal is over: these chips are the seat's blind or ante (bar_league:
            # Substantial Action counts bets, calls, raises and completions, never a forced bet).
            d.posted.add(seat)
            return []
        return self._seen_action(h, seat, "call")

    @staticmethod
    def _forced_bet_seats(h: Hand) -> set[int]:
        p, level = h.positions, h.level
        seats = {s for s in (p.sb, p.bb) if s is not None}
        if level.ante:
            seats.update((p.bb,) if level.big_blind_ante else p.dealt_in)
        return seats

    def _action_begins(self, h: Hand) -> list[dict]:
        """The first action of a hand: a card from now on is ruled on as dealt after betting began."""
        d = h.deal
        if d.action_started:
            return []
        d.action_started = True
        d.sequence = ()  # a card from now on is ruled on in full
        d.unobserved = d.off_deck == 0
        return self._absent_hands(h)

    def _seen_action(self, h: Hand, seat: int, kind: str) -> list[dict]:
        """One action seen (or entered) at an observed table. Its place in the turn order is not known: it
        counts as in turn (bluff_street:33.c counts actions in turn)."""
        out = self._action_begins(h)
        h.deal.round_acted.add(seat)
        out.extend(self._count_substantial(h, seat, kind, True))
        return out

    def _observed_board(self, h: Hand, ev: dict, n: int) -> list[dict]:
        """Board cards at an observed table. The betting round before them is over: every player still in
        acted in it at least once (each such unseen action counts as passive: whether chips went in is not
        known). The board itself is ruled only where no betting knowledge is needed (a four-card flop,
        more cards than a street holds); HandPlay skips the rest."""
        street = h.play.street
        board = h.play.board(ev, n)  # checks first: a rejected line changes nothing
        d = h.deal
        if street in d.rounds_closed:
            return board  # the same street again (a flop re-dealt): its round was counted already
        d.rounds_closed.add(street)
        out = self._action_begins(h)
        for seat in h.play.live:
            if seat not in d.round_acted:
                out.extend(self._count_substantial(h, seat, "check", True))
        d.round_acted = set()
        return out + board

    def _count_substantial(self, h: Hand, seat: int, kind: str, in_turn: bool) -> list[dict]:
        """Substantial action as each rulebook defines it; after it no misdeal can be declared."""
        d = h.deal
        if d.substantial:
            return []
        definition = self.deal_rules["substantial_action"]
        d.acted_seats.add(seat)
        if in_turn:
            d.in_turn_actions += 1
            if kind in CHIPS_IN:
                d.in_turn_with_chips += 1
        if kind in PASSIVE:
            d.passive += 1
        else:
            d.aggressive += 1
        if definition == "one_aggressive_or_three_passive":  # bar_league:Substantial Action
            reached = d.aggressive >= 1 or d.passive >= 3
        elif definition == "two_with_chips_or_three":  # bluff_street:33.c
            reached = (d.in_turn_actions >= 2 and d.in_turn_with_chips >= 1) or d.in_turn_actions >= 3
        else:  # two players acted: cool_mule:5.o, corner_pocket:Dealing.H
            reached = len(d.acted_seats) >= 2
        if not reached:
            return []
        d.substantial = True
        return [{"type": "substantial_action", "rule": self.profile.rule("deal", "substantial_action")}]

    def _on_board(self, ev: dict, n: int) -> list[dict]:
        h = self.hand
        if h is None or h.void or h.play is None:
            h = self._current("board")  # refuses the line
        fouled = self._fouled_deck(h, ev.get("cards"))
        if fouled:
            return fouled
        if self.observed:
            return self._observed_board(h, ev, n)
        return h.play.board(ev, n)

    def _fouled_deck(self, h: Hand, cards: Any) -> list[dict]:
        """A card already out in this hand turns up again: the deck is fouled (bluff_street:33.d.2 "If two
        cards of the same rank and suit are found, all action is void, and all chips in the pot are returned
        to the participants who wagered them"). The hand is void like a misdealt one (stacks are written
        only at its end, so every chip goes back) and is dealt again with a clean deck.

        Not at an observed table: there every card code is the camera's reading, and a misread card
        (a 6 read as a 5) would look like a duplicate and void a sound hand; the table says nothing
        rather than something false (issue 14)."""
        if self.observed or self.deal_rules["fouled_deck"] != "void_return_chips" or type(cards) is not list:
            return []
        twice = [c for c in cards if type(c) is str and c in ALL_CARDS and not h.play.fresh_cards([c])]
        if not twice:
            return []
        h.void = True
        h.misdeal_reason = "fouled_deck"
        h.play = None
        line = {"type": "fouled_deck", "card": twice[0], "rule": self.profile.rule("deal", "fouled_deck")}
        self.alerts = [line]
        return [line]

    def _on_burn(self, ev: dict, n: int) -> list[dict]:
        h = self.hand
        if h is None or h.void or h.play is None:
            h = self._current("burn")  # refuses the line
        return h.play.burn(n)

    def _on_show(self, ev: dict, n: int) -> list[dict]:
        h = self.hand
        if h is None or h.void or h.play is None:
            h = self._current("show")  # refuses the line
        fouled = self._fouled_deck(h, ev.get("cards"))
        if fouled:
            return fouled
        return h.play.show(ev, n)

    def _on_muck(self, ev: dict, n: int) -> list[dict]:
        h = self.hand
        if h is None or h.void or h.play is None:
            h = self._current("muck")  # refuses the line
        return h.play.muck(ev, n)

    def _on_clock(self, ev: dict, n: int) -> list[dict]:
        h = self._current("clock")
        if ev["seat"] not in h.play.live:
            raise Rejected(f"seat {ev['seat']} holds no live hand to put on the clock")
        line = self._clock_line(ev["seat"], ev.get("seconds"))
        return [{**line, **reasonable_seconds(self.profile, h.level.minutes)}]  # clock_call.py

    def _clock_line(self, seat: int, seconds: int | None) -> dict:
        """A clock on `seat`: the venue's length unless the director gave one, and its countdown
        (bar_league:Calling a Clock 40 s, cool_mule:12.i 60 s, bluff_street:25 30 s, ...)."""
        conduct = self.profile.settings["conduct"]
        length = conduct["clock_seconds"]
        countdown = conduct["clock_countdown_seconds"].value
        line = {"type": "clock", "seat": seat, "seconds": seconds or length.value}
        line["countdown"] = min(countdown, line["seconds"])
        line["rule"] = length.rule
        return line

    def _on_time_expired(self, ev: dict, n: int) -> list[dict]:
        h = self._current("time_expired")
        if ev["seat"] not in h.play.live:
            raise Rejected(f"seat {ev['seat']} holds no live hand")
        line = {
            "type": "dead_hand",
            "seat": ev["seat"],
            "reason": "clock",
            "rule": self.profile.rule("conduct", "clock_expired"),
        }
        return [line, *h.play.kill(ev["seat"], "clock")]

    def _on_hand_end(self, ev: dict, n: int) -> list[dict]:
        h = self.hand
        if h is None or (h.play is None and not h.void):
            raise Rejected("'hand_end' with no hand in progress")
        if h.void:
            raise Rejected(f"hand {h.number} is void after a misdeal: re-deal it with hand_start")
        return self._finish(n)

    def _finish(self, n: int) -> list[dict]:
        """Award the pots, write the stacks back, mark the busted players' places."""
        h = self.hand
        assert h is not None and h.play is not None
        out = h.play.finish(n)
        if self.observed:
            return out + self._finish_observed(h)
        final = h.play.stacks
        players = self.players
        offences = getattr(h.play, "offences", ())
        if offences:
            self.offenders.update(players[s].id for s in offences if s in players)
        busted = []
        for seat in h.positions.dealt_in:
            player = players.get(seat)
            if player is None:
                continue
            player.dealt = True
            if player.penalty_hands > 0:
                player.penalty_hands -= 1
                if player.penalty_hands == 0:
                    player.away = False
            stack = player.stack
            if stack is not None:
                chips = final.get(seat)
                if chips is not None:
                    player.stack = stack = chips
                if stack <= 0:  # busted
                    busted.append(seat)
        # Busted players finish in order; two in one hand: the bigger starting stack finishes
        # higher (cool_mule:12.d, corner_pocket:General Rules.B).
        if busted:
            remaining = len(self.players)
            busted.sort(key=lambda s: h.start_stacks.get(s) or 0, reverse=True)
            place_rule = self.profile.rule("conduct", "elimination_order")
            for i, seat in enumerate(busted):
                place = remaining - len(busted) + 1 + i
                out.append(
                    {
                        "type": "eliminated",
                        "seat": seat,
                        "place": place,
                        "player": self.players[seat].id,
                        "rule": place_rule,
                    }
                )
            for seat in busted:
                del self.players[seat]
                self.busted_seats.add(seat)
        self.previous = h.positions
        h.play = None
        return out

    def _finish_observed(self, h: Hand) -> list[dict]:
        """The end of a hand at an observed table: no stacks were counted, so nobody busts here; players
        tapped out during the hand (`leave`, reason eliminated) leave now."""
        for seat in h.positions.dealt_in:
            player = self.players.get(seat)
            if player is None:
                continue
            player.dealt = True
            if player.penalty_hands > 0:
                player.penalty_hands -= 1
                if player.penalty_hands == 0:
                    player.away = False
        self._vacate_leaving()
        self.previous = h.positions
        h.play = None
        return []

    def _vacate_leaving(self) -> None:
        for seat in self.leaving:
            self.players.pop(seat, None)
            self.busted_seats.add(seat)  # a `leave` for it from the director too is taken quietly
        self.leaving = []


def replay_lines(lines, profile: str = "bluff_street", seats: int = 10):
    """Feed an iterable of text lines; yield output lines as JSON text (a `table` line may override)."""
    engine = TableEngine(profile, seats)
    for number, text in enumerate(lines, start=1):
        for out in engine.feed(text, number):
            yield dumps(out)
