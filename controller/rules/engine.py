"""The table rules engine: one state object that folds protocol input events into rulings.

`TableEngine.play(event)` takes one input event (controller/rules/events.py, the typed lines of
../shared/spec/table-events.md) and returns the output lines it causes; `TableEngine.feed(line)` does the
same for a line as JSON text or a decoded dict, decoded and checked by `events.parse` (the one place a
line is checked for form). The engine is pure and deterministic: no I/O, no clock, no randomness, so
replaying a table's event log rebuilds the table exactly and gives the same rulings.

What happens where:

* seating, button and blinds: `controller.rules.seating.compute_positions` (the dead-button rule);
* the deal monitor (misdeals, exposed, extra and boxed cards, absent players, substantial action, what the
  camera saw at an observed table): `controller.rules.deal_monitor.DealMonitor`, mixed in here;
* betting, board, pots and showdown: `controller.rules.hand_play.HandPlay`, one per hand;
* seats, levels, the button placed by hand, away and back, penalties:
  `controller.rules.seats_levels.SeatsAndLevels`, mixed in here;
* a clock called on a player and its expiry: `controller.rules.clock_call.ClockCalls`, mixed in here;
* here: the table line, the start and end of each hand, and the dispatch of each event to the
  method named after what it rules on (`rule_deal` for a `Deal`, ...).

A rejected line leaves the state exactly as it was: every method checks before it changes anything, and
methods that call into `HandPlay` let it check first.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from controller.rules import events
from controller.rules.borrowed import mark_borrowed
from controller.rules.clock_call import ClockCalls
from controller.rules.deal_monitor import DealMonitor, DealState
from controller.rules.errors import Rejected
from controller.rules.events import (
    Action,
    Away,
    Back,
    Board,
    Boxed,
    Burn,
    ButtonSeen,
    ChipsSeen,
    Clock,
    Deal,
    Eliminated,
    Error,
    Expose,
    FoldSeen,
    HandEnd,
    HandLine,
    HandStart,
    InputEvent,
    Leave,
    Muck,
    OutputLine,
    Penalty,
    Seat,
    Show,
    SittingOut,
    Table,
    TimeExpired,
    to_line,
)  # fmt: skip
from controller.rules.events import Button as ButtonEvent
from controller.rules.events import Level as LevelEvent
from controller.rules.hand_play import HandPlay, HandSetup
from controller.rules.profile import Profile, load_profile
from controller.rules.seating import Player, PositionError, Positions, compute_positions
from controller.rules.seats_levels import Level, SeatsAndLevels

dumps = events.dumps  # an output line as the protocol writes it (kept here for the engine's callers)


def _internal_error(n: int, exc: Exception) -> Error:
    return Error(line=n, message=f"internal error ({type(exc).__name__}: {exc}); please report this line")


class Hand(msgspec.Struct):
    number: int
    positions: Positions
    level: Level
    start_stacks: dict[int, int | None]
    redeal: bool = False
    void: bool = False  # a misdeal was declared: waiting for the re-deal
    misdeal_reason: str | None = None
    deal: DealState = msgspec.field(default_factory=DealState)
    play: HandPlay | None = None
    button_seen: int | None = None


# the rulings of a hand the director is shown in the state's `alerts` (most are put there where they
# are made; the hand's play rules on the rest, e.g. out_of_turn, action_ruled, board_redeal)
DIRECTOR_ALERTS = frozenset(
    {
        "misdeal",
        "button_misplaced",
        "dead_hand",
        "boxed_card",
        "replace_exposed",
        "extra_card",
        "out_of_turn",
        "board_redeal",
        "action_ruled",
        "fouled_deck",
        "blind_dodge",
    }
)


class TableEngine(SeatsAndLevels, DealMonitor, ClockCalls):
    """A poker table under one venue's rulebook. Feed it input lines; it answers with rulings."""

    def __init__(self, profile: Profile | str = "bluff_street", seats: int = 10, actions: str = "entered"):
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        self.deal_rules = self._settings(self.profile)
        # Read after every line: a player away when the action reaches him loses his hand (`_after`).
        self.absent_dead = self.deal_rules["absent_at_turn"] == "dead"
        self.seats = seats
        if actions not in events.ACTIONS_MODES:
            raise ValueError(f"actions must be one of {', '.join(events.ACTIONS_MODES)}, got {actions!r}")
        # True: nobody enters the actions; the engine rules only on what the sensors can know (the spec's
        # "Tables where nobody enters the actions"). A `table` line's `actions` sets it.
        self.observed = actions == "observed"
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
        self.alerts: list[OutputLine] = []

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

    def feed(self, line: dict | str | InputEvent, line_no: int | None = None) -> list[dict]:
        """One input line (JSON text, a decoded dict, which is only read, or a built event) in, the output lines it causes
        out as dicts (`events.to_line`): `events.parse`, then `rulings`. A ruling on a rule the venue's own
        book does not hold says whose book it borrows (`borrowed_from`). A malformed line is its `error`
        line."""
        out = self.feed_rulings(line, line_no)
        return self.as_lines(out) if out else []

    def feed_rulings(self, line: dict | str | InputEvent, line_no: int | None = None) -> list[OutputLine]:
        """`feed` with the output lines typed, as `rulings` gives them (for a caller that reads them rather
        than writes them: the PHH replay; `as_lines` makes them `feed`'s dicts)."""
        self.lines_seen += 1
        n = self.lines_seen if line_no is None else line_no
        try:
            event = events.parse(line, self.seats)
            out = [] if event is None else _RULINGS[type(event)](self, event, n)
        except Rejected as exc:
            out = [Error(line=n, message=str(exc))]
        except Exception as exc:  # a bug must not stop the table: say so on the line and go on
            out = [_internal_error(n, exc)]
        if out or self.absent_dead:
            return self._after(out)
        return out  # most lines: nothing ruled, and no seat can lose its hand for being away

    def play(self, event: InputEvent, line_no: int | None = None) -> list[dict]:
        """`feed` for an input event already read: its output lines as dicts."""
        return self.as_lines(self.rulings(event, line_no))

    def rulings(self, event: InputEvent, line_no: int | None = None) -> list[OutputLine]:
        """One input event in, the typed output lines it causes out (`borrowed_from` is added only to the
        dicts `feed` and `play` hand out). The event is checked by `events.parse` as a line is (one that is
        not a line's event is its `Error`); an event that cannot happen now is its `Error`, the state
        unchanged."""
        return self.feed_rulings(event, line_no)

    def _after(self, out: list[OutputLine]) -> list[OutputLine]:
        """What follows every line: a player away when the action reaches him loses his hand."""
        if self.absent_dead:
            absent = self._absent_at_turn()
            if absent:
                out = [*out, *absent]
        if out and self.hand is not None:
            alerts = [o for o in out if o.kind in DIRECTOR_ALERTS]
            if alerts:
                kept = {id(a) for a in self.alerts}
                self.alerts.extend(o for o in alerts if id(o) not in kept)
                del self.alerts[:-10]
        return out

    def as_lines(self, out: list[OutputLine]) -> list[dict]:
        """Output lines as the dicts the protocol's consumers read, borrowed rules marked."""
        if not out:
            return []
        lines = [to_line(o) for o in out]
        mark_borrowed(lines, self.profile.name)
        return lines

    def _absent_at_turn(self) -> list[OutputLine]:
        """A player away from his seat when the action reaches him: his hand is dead (corner_pocket:General
        Rules.I "If a player is absent from his seat when it is his turn to act, for any reason, his hand
        will be immediately folded"; cool_mule:7.r). Back before his turn, he plays it."""
        h = self.hand
        if h is None or h.void or h.play is None or not (h.deal.complete or h.deal.action_started):
            return []
        out: list[OutputLine] = []
        for _ in range(self.seats):
            seat = h.play.to_act
            player = self.players.get(seat) if seat is not None else None
            if player is None or not player.away or seat not in h.play.live:
                break
            out.extend(self._dead(h, seat, "absent", "absent_at_turn"))
        return out

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
        return h.play.street

    def snapshot(self) -> dict:
        """The table as a director's screen shows it: public information only (no hole cards)."""
        h = self.hand
        pos = h.positions if h else None
        board = list(h.play.board_cards) if h and h.play is not None else []
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
            "dealer": pos.dealer if pos else None,
            "level": {"sb": self.level.sb, "bb": self.level.bb, "ante": self.level.ante}
            if self.level
            else None,
            "board": board,
            "to_act": h.play.to_act if self.in_hand else None,
            "alerts": self.as_lines(self.alerts),
            "substantial_action": bool(h and h.deal.substantial),
            **({"level_number": self.level.number} if self.level and self.level.number else {}),
        }

    # ----------------------------------------------------------------- table and seats

    def rule_table(self, ev: Table, n: int) -> list[OutputLine]:
        """The table's size, rulebook and who tells the betting: first line only."""
        if self.lines_seen > 1 and (self.players or self.hand is not None):
            raise Rejected("a 'table' line must come first, before any seat or hand")
        seats = self.seats if ev.seats is None else ev.seats
        profile = self.profile
        if ev.profile is not None:
            try:
                profile = load_profile(ev.profile)
            except Exception as exc:  # ProfileError: unknown name or unusable file
                raise Rejected(f"field 'profile': {exc}") from None
        self.seats = seats
        self.profile = profile
        self.deal_rules = self._settings(profile)
        self.absent_dead = self.deal_rules["absent_at_turn"] == "dead"
        if ev.actions is not None:
            self.observed = ev.actions == "observed"
        return []

    # ----------------------------------------------------------------- hands

    def rule_hand_start(self, ev: HandStart, n: int) -> list[OutputLine]:
        """A new hand: where the button and blinds are, who is dealt in (or the exact re-deal of a misdealt
        hand, bluff_street:33.b). NEW HAND without a hand_end ends the hand before (bar_league:Hand Start)."""
        out: list[OutputLine] = []
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

    def _redeal(self, old: Hand, n: int) -> list[OutputLine]:
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
            return self.rule_hand_start(HandStart(), n)
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
        line = self._hand_line(hand, self.profile.rule("deal", "redeal_exact_replay"))
        hand.play = self._new_play(hand)
        return [line]

    def _hand_line(self, hand: Hand, rule: str | UnsetType = UNSET) -> HandLine:
        """The `hand` line: a ruling (with `rule`) when the dead-button rule or a sit-out decided something,
        or when it re-deals a misdealt hand."""
        p = hand.positions
        if rule is UNSET:
            if p.sitting_out:
                rule = p.rules.get(f"sit_out:{p.sitting_out[0][0]}", p.rules["button"])
            elif p.dead_button or p.dead_sb_seat is not None or p.heads_up:
                rule = p.rules["button"]
        return HandLine(
            number=hand.number,
            button=p.button,
            sb=p.sb,
            bb=p.bb,
            dead_button=p.dead_button,
            dead_sb_seat=p.dead_sb_seat,
            dealer=p.dealer,
            first_card=p.first_card,
            dealt_in=list(p.dealt_in),
            sitting_out=[SittingOut(s, r) for s, r in p.sitting_out],
            redeal=hand.redeal,
            rule=rule,
        )

    def _new_play(self, hand: Hand) -> HandPlay:
        p = hand.positions
        offenders = self.offenders
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

    # ----------------------------------------------------------------- play

    def _in_play(self, what: str) -> Hand:
        """The hand in play, or Rejected saying why there is none."""
        h = self.hand
        if h is None or h.void or h.play is None:
            h = self._current(what)  # refuses the line
        return h

    def rule_action(self, ev: Action, n: int) -> list[OutputLine]:
        """A betting action, ruled by the hand (controller/rules/hand_play.py) and counted toward
        substantial action until it is reached."""
        h = self._in_play("action")
        if self.observed:
            return self._observed_action(h, ev.seat, ev.action)
        d = h.deal
        if d.substantial:
            # Past substantial action the deal monitor has nothing left to count: the hand rules alone.
            return h.play.rule_action(ev)
        out: list[OutputLine] = []
        first_action = not d.action_started
        in_turn = h.play.to_act == ev.seat
        acted_before = len(h.play.acted)
        out.extend(h.play.rule_action(ev))  # checks; raises Rejected with the state unchanged
        if first_action:
            out.extend(self._action_begins(h))
        if len(h.play.acted) > acted_before:
            seat, kind, _chips = h.play.acted[-1][:3]
            out.extend(self._count_substantial(h, seat, kind, in_turn))
        return out

    def rule_board(self, ev: Board, n: int) -> list[OutputLine]:
        """Board cards: a fouled deck (a card out twice), else the hand rules on the street."""
        h = self._in_play("board")
        fouled = self._fouled_deck(h, ev.cards)
        if fouled:
            return fouled
        if self.observed:
            return self._observed_board(h, ev.cards, ev.count)
        return h.play.deal_board(ev.cards, ev.count)

    def rule_burn(self, ev: Burn, n: int) -> list[OutputLine]:
        return self._in_play("burn").play.burn()

    def rule_show(self, ev: Show, n: int) -> list[OutputLine]:
        """Hole cards tabled at the showdown (a card already out fouls the deck)."""
        h = self._in_play("show")
        fouled = self._fouled_deck(h, ev.cards, holder=ev.seat)
        if fouled:
            return fouled
        return h.play.show_cards(ev.seat, ev.cards)

    def rule_muck(self, ev: Muck, n: int) -> list[OutputLine]:
        return self._in_play("muck").play.muck_hand(ev.seat)

    def rule_hand_end(self, ev: HandEnd, n: int) -> list[OutputLine]:
        """The pot was pushed: award it, write the stacks back, place the busted players."""
        h = self.hand
        if h is None or (h.play is None and not h.void):
            raise Rejected("'hand_end' with no hand in progress")
        if h.void:
            raise Rejected(f"hand {h.number} is void after a misdeal: re-deal it with hand_start")
        return self._finish(n)

    def _finish(self, n: int) -> list[OutputLine]:
        """Award the pots, write the stacks back, mark the busted players' places."""
        h = self.hand
        assert h is not None and h.play is not None
        out = h.play.end_hand()
        if self.observed:
            return out + self._finish_observed(h)
        final = h.play.stacks
        players = self.players
        offences = h.play.offences
        if offences:
            self.offenders.update(players[s].id for s in offences if s in players)
        busted = []
        for seat in h.positions.dealt_in:
            player = players.get(seat)
            if player is None:
                continue
            player.hand_dealt()
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
                out.append(Eliminated(seat=seat, place=place, player=self.players[seat].id, rule=place_rule))
            for seat in busted:
                del self.players[seat]
                self.busted_seats.add(seat)
        self.previous = h.positions
        h.play = None
        return out

    def _finish_observed(self, h: Hand) -> list[OutputLine]:
        """The end of a hand at an observed table: no stacks were counted, so nobody busts here; players
        tapped out during the hand (`leave`, reason eliminated) leave now."""
        for seat in h.positions.dealt_in:
            player = self.players.get(seat)
            if player is not None:
                player.hand_dealt()
        self._vacate_leaving()
        self.previous = h.positions
        h.play = None
        return []

    def _vacate_leaving(self) -> None:
        for seat in self.leaving:
            self.players.pop(seat, None)
            self.busted_seats.add(seat)  # a `leave` for it from the director too is taken quietly
        self.leaving = []


# Each input event's ruling: the engine method named after what it rules on.
_RULINGS: dict[type, Any] = {
    Table: TableEngine.rule_table,
    LevelEvent: TableEngine.rule_level,
    Seat: TableEngine.rule_seat,
    Leave: TableEngine.rule_leave,
    ButtonEvent: TableEngine.rule_button,
    Away: TableEngine.rule_away,
    Back: TableEngine.rule_back,
    HandStart: TableEngine.rule_hand_start,
    Deal: TableEngine.rule_deal,
    Expose: TableEngine.rule_expose,
    Boxed: TableEngine.rule_boxed,
    Burn: TableEngine.rule_burn,
    Board: TableEngine.rule_board,
    Action: TableEngine.rule_action,
    ButtonSeen: TableEngine.rule_button_seen,
    Show: TableEngine.rule_show,
    Muck: TableEngine.rule_muck,
    HandEnd: TableEngine.rule_hand_end,
    Clock: TableEngine.rule_clock,
    TimeExpired: TableEngine.rule_time_expired,
    Penalty: TableEngine.rule_penalty,
    FoldSeen: TableEngine.rule_fold_seen,
    ChipsSeen: TableEngine.rule_chips_seen,
}
assert set(_RULINGS) == set(events.EVENT_TYPES)
