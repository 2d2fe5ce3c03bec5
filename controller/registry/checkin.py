"""Tap-in at the table: a card tap becomes protocol lines for the rules engine.

Pure decision logic over the registry (no NFC, no clock: `now` is passed in), so the table
service, the simulated table and the tests all use the same code. Lines follow
../shared/spec/table-events.md: an accepted player gets a `seat` line (input for the engine) and a
`checkin` line (the registration accepted signal at that seat); a refused tap gets one `checkin`
line with `accepted: false` and a reason. Lines carry display names only, never birth dates.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from controller.registry.card import CardVerifier
from controller.registry.errors import RegistryError
from controller.registry.identify import identify
from controller.registry.registry import Registry

log = logging.getLogger("smart_table.checkin")


@dataclass
class CheckInResult:
    lines: list[dict[str, Any]]
    accepted: bool
    reason: str | None = None
    player_id: str | None = None
    seat: int | None = None
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def jsonl(self) -> str:
        return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in self.lines)


# How long a bust-out question waits on the LED ring for its answer (a second tap, or NEW HAND).
BUST_CONFIRM_SECONDS = 30.0
IN_HAND_PHASES = frozenset(("deal", "preflop", "flop", "turn", "river", "showdown"))


@dataclass
class _Question:
    player: str
    at: datetime
    in_hand: bool  # asked while a hand was on the table: NEW HAND answers it too


class SeatTaps:
    """What a seated player's tap on the table's reader means, where nobody types in eliminations.

    During (or at the end of) a hand a tap asks "out?" on the LED ring at the seat; a second tap, or NEW
    HAND pressed (the pot was pushed), answers yes: `leave` with reason eliminated. A tap between hands
    asks too; unanswered, it meant "away" (a player who is away taps to come `back`, asked nothing). The
    order of confirmed bust-outs is kept (`finishing_order`, the last one out first in the list's end).
    Pure: the caller passes `now` and the table's phase; lines follow ../shared/spec/table-events.md,
    plus `bustout` info lines for the panel and the director."""

    def __init__(self, confirm_seconds: float = BUST_CONFIRM_SECONDS) -> None:
        self.window = timedelta(seconds=confirm_seconds)
        self.questions: dict[int, _Question] = {}
        self.finishing_order: list[str] = []  # players tapped out, first out first

    def tap(
        self, seat: int, player: str, now: datetime, *, in_hand: bool, away: bool
    ) -> list[dict[str, Any]]:
        asked = self.questions.get(seat)
        if asked is not None and asked.player == player and now - asked.at <= self.window:
            return self._confirm(seat)
        if away and not in_hand:
            self.questions.pop(seat, None)
            return [{"type": "back", "seat": seat}]
        self.questions[seat] = _Question(player, now, in_hand)
        how = "tap again or press NEW HAND" if in_hand else "tap again"
        return [
            {
                "type": "bustout",
                "seat": seat,
                "player": player,
                "confirmed": False,
                "ask": f"OUT? {how}",
                "seconds": int(self.window.total_seconds()),
            }
        ]

    def new_hand(self, now: datetime) -> list[dict[str, Any]]:
        """NEW HAND pressed: the pot was pushed, so every player who asked "out?" during the hand is out
        (in the order they tapped); a question asked between hands is left to its own answer."""
        out = self.expire(now)
        for seat in sorted(self.questions, key=lambda s: self.questions[s].at):
            if self.questions[seat].in_hand:
                out += self._confirm(seat)
        return out

    def expire(self, now: datetime) -> list[dict[str, Any]]:
        """Questions nobody answered in time: a tap between hands meant away; one during a hand, nothing."""
        out: list[dict[str, Any]] = []
        for seat, asked in sorted(self.questions.items()):
            if now - asked.at > self.window:
                del self.questions[seat]
                out.append(
                    {"type": "bustout", "seat": seat, "player": asked.player, "confirmed": False, "ask": None}
                )
                if not asked.in_hand:
                    out.append({"type": "away", "seat": seat})
        return out

    def _confirm(self, seat: int) -> list[dict[str, Any]]:
        asked = self.questions.pop(seat)
        self.finishing_order.append(asked.player)
        return [
            {"type": "bustout", "seat": seat, "player": asked.player, "confirmed": True, "ask": None},
            {"type": "leave", "seat": seat, "reason": "eliminated", "player": asked.player},
        ]


def seat_of(table: dict[str, Any] | None, player: str) -> tuple[int, bool] | None:
    """(seat, away) of a player seated at the table as its view shows it, or None."""
    for entry in (table or {}).get("seats", []):
        if isinstance(entry, dict) and entry.get("player") == player and isinstance(entry.get("seat"), int):
            return entry["seat"], bool(entry.get("away"))
    return None


class TableCheckIn:
    """Check-in logic for one table of one event."""

    def __init__(
        self,
        registry: Registry,
        *,
        venue: str,
        table_id: str,
        event_id: str,
        verifier: CardVerifier,
        late_deadline: datetime | None = None,
    ):
        if verifier.venue != venue:
            raise ValueError(f"verifier keys are for venue {verifier.venue!r}, table is at {venue!r}")
        self.registry = registry
        self.venue = venue
        self.table_id = table_id
        self.event_id = event_id
        self.verifier = verifier
        self.late_deadline = late_deadline
        # corner_pocket:General Rules.C: a late player's seat is gone once the tournament reaches level 8
        self.late_level: int | None = None
        self.late_level_rule = ""
        self.seat_taps = SeatTaps()

    def _refuse(
        self, uid: bytes, now: datetime, reason: str, message: str, player_id: str | None = None, **extra: Any
    ) -> CheckInResult:
        line: dict[str, Any] = {"type": "checkin", "seat": None}
        if player_id is not None:
            line["player"] = player_id
        line.update({"accepted": False, "reason": reason, **extra})
        log.info(
            "event=checkin_refused table=%s event_id=%s uid=%s player=%s reason=%s",
            self.table_id,
            self.event_id,
            uid.hex(),
            player_id or "-",
            reason,
        )
        self._audit(now, uid, False, reason, player_id)
        return CheckInResult([line], False, reason, player_id, None, message, extra)

    def _audit(
        self, now: datetime, uid: bytes, accepted: bool, reason: str | None, player_id: str | None
    ) -> None:
        try:
            self.registry.log_tap(
                now=now,
                uid=uid,
                accepted=accepted,
                reason=reason,
                table_id=self.table_id,
                event_id=self.event_id,
                player_id=player_id,
            )
        except Exception as exc:  # the audit trail must never block a check-in
            log.warning("event=tap_audit_failed error=%s", type(exc).__name__)

    def _moved_in(self, uid: bytes, now: datetime, player: str, name: str, seat: int) -> CheckInResult | None:
        """A player the floor moved here (balancing, breaking) taps in at the new seat: `seat` with
        `moved: true` and the chips brought from the old table (spec: a moved player has been dealt
        hands before)."""
        move = self.registry.complete_move(self.event_id, player, uid, now=now)
        if move is None:
            return None
        seat_line: dict[str, Any] = {"type": "seat", "seat": seat, "player": player}
        if move.stack is not None:
            seat_line["stack"] = move.stack
        seat_line["moved"] = True
        accepted = {
            "type": "checkin",
            "seat": seat,
            "player": player,
            "name": name,
            "accepted": True,
            "moved": True,
        }
        self._audit(now, uid, True, "moved", player)
        log.info(
            "event=checkin_moved table=%s event_id=%s player=%s from=%s seat=%d",
            self.table_id,
            self.event_id,
            player,
            move.from_table,
            seat,
        )
        return CheckInResult([seat_line, accepted], True, None, player, seat, "moved here", {"moved": True})

    def on_tap(
        self, uid: bytes, ndef_message: bytes, now: datetime, table: dict[str, Any] | None = None
    ) -> CheckInResult:
        """One tap. `table`: the table as its view shows it (`seats` with player and away, `phase`); with it
        a seated player's tap is a bust-out question or away/back (`SeatTaps`), without it a repeat."""
        uid = bytes(uid)
        try:
            return self._on_tap(uid, bytes(ndef_message or b""), now, table)
        except RegistryError as exc:
            return self._refuse(uid, now, exc.reason, str(exc))
        except Exception as exc:  # database down, etc.: refuse this tap, keep the table running
            log.error("event=checkin_error table=%s error=%s", self.table_id, type(exc).__name__)
            return self._refuse(uid, now, "registry_unavailable", f"registry error: {type(exc).__name__}")

    def _on_tap(
        self, uid: bytes, message: bytes, now: datetime, table: dict[str, Any] | None
    ) -> CheckInResult:
        who = identify(self.registry, self.verifier, uid, message)
        if not who.ok:
            return self._refuse(uid, now, who.reason or "refused", who.message, who.player_id)
        player = who.player_id
        assert player is not None and who.member is not None
        event = self.registry.event(self.event_id)
        if not self.registry.is_registered(self.event_id, player):
            return self._refuse(
                uid, now, "not_registered", f"{player} is not registered for {self.event_id}", player
            )
        assigned = self.registry.assignment(self.event_id, player)
        if assigned is None:
            return self._refuse(uid, now, "not_drawn", f"seats for {self.event_id} are not drawn yet", player)
        if assigned.table_id != self.table_id:
            return self._refuse(
                uid,
                now,
                "wrong_table",
                f"{who.member.display_name}: table {assigned.table_id}, seat {assigned.seat}",
                player,
                assigned={"table": assigned.table_id, "seat": assigned.seat},
            )
        previous = self.registry.checkin(self.event_id, player)
        if previous is not None and previous.table_id != assigned.table_id:
            moved = self._moved_in(uid, now, player, who.member.display_name, assigned.seat)
            if moved is not None:
                return moved
        # Before the first hand nobody is away or busting: a seated player's tap then only confirms the seat.
        started = (table or {}).get("phase", "waiting") != "waiting"
        seated = seat_of(table, player) if previous is not None and started else None
        if seated is not None:
            seat, away = seated
            lines = self.seat_taps.tap(
                seat, player, now, in_hand=(table or {}).get("phase") in IN_HAND_PHASES, away=away
            )
            self._audit(now, uid, True, "seated_tap", player)
            return CheckInResult(lines, True, None, player, seat, "seated player's tap", {"seated": True})
        if previous is not None:
            # Already seated: say so again at the seat, but no second `seat` line for the engine.
            line = {
                "type": "checkin",
                "seat": assigned.seat,
                "player": player,
                "name": who.member.display_name,
                "accepted": True,
                "repeat": True,
            }
            self._audit(now, uid, True, "repeat", player)
            return CheckInResult(
                [line], True, None, player, assigned.seat, "already checked in", {"repeat": True}
            )
        if self.late_deadline is not None and now > self.late_deadline:
            return self._refuse(
                uid,
                now,
                "late",
                f"{player} tapped in after the late-arrival deadline {self.late_deadline.isoformat()}",
                player,
            )
        reached = (table or {}).get("level_number")
        if self.late_level is not None and isinstance(reached, int) and reached >= self.late_level:
            return self._refuse(
                uid,
                now,
                "late",
                f"{player} tapped in at level {reached}: a late player keeps a seat until level "
                f"{self.late_level} ({self.late_level_rule})",
                player,
            )
        self.registry.record_checkin(self.event_id, player, self.table_id, assigned.seat, uid, now=now)
        seat_line: dict[str, Any] = {"type": "seat", "seat": assigned.seat, "player": player}
        if event.starting_stack is not None:
            seat_line["stack"] = event.starting_stack
        seat_line["moved"] = False
        accepted = {
            "type": "checkin",
            "seat": assigned.seat,
            "player": player,
            "name": who.member.display_name,
            "accepted": True,
        }
        self._audit(now, uid, True, None, player)
        log.info(
            "event=checkin_accepted table=%s event_id=%s player=%s seat=%d",
            self.table_id,
            self.event_id,
            player,
            assigned.seat,
        )
        return CheckInResult([seat_line, accepted], True, None, player, assigned.seat, who.message)
