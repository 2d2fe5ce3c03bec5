"""Seats, levels and the table's people between hands: part of the table engine.

`SeatsAndLevels` is mixed into controller.rules.engine.TableEngine and rules on `level` (when new blinds
take effect: cool_mule:6.h, bar_league:Hand Start, corner_pocket:Blinds.C), `seat` (a player sitting down,
a moved player dodging a blind: bluff_street:31), `leave`, `button`, `away`, `back` and `penalty`
(dragons_den:40, bluff_street:58.b). Like every ruling method, each checks before it changes anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
from msgspec import UNSET

from controller.rules.dodge import broken_table_dodge
from controller.rules.errors import Rejected
from controller.rules.events import (
    Away,
    Back,
    BlindDodge,
    Eliminated,
    Leave,
    OutputLine,
    Penalty,
    PenaltyLine,
    Seat,
)
from controller.rules.events import Button as ButtonEvent
from controller.rules.events import Level as LevelEvent
from controller.rules.seating import Player

if TYPE_CHECKING:
    from controller.rules.engine import Hand
    from controller.rules.hand_play import HandPlay
    from controller.rules.profile import Profile
    from controller.rules.seating import Positions


class Level(msgspec.Struct):
    sb: int = 0
    bb: int = 0
    ante: int = 0
    big_blind_ante: bool = False  # the big blind pays the table's ante (an addition to `level`)
    minutes: int | None = None  # the level's length, where the floor says it (an addition: clock_call.py)
    # the event's level number, where the floor says it (corner_pocket:General Rules.C)
    number: int | None = None


class SeatsAndLevels:
    """The seats-and-levels half of the table engine (mixed into `TableEngine`, whose state it keeps)."""

    profile: Profile
    seats: int
    observed: bool
    players: dict[int, Player]
    level: Level | None
    deferred_level: Level | None
    vacated: dict[str, tuple[int, bool, int, int | None]]
    forced_button: int | None
    previous: Positions | None
    hand_number: int
    hand: Hand | None
    busted_seats: set[int]
    leaving: list[int]
    alerts: list[OutputLine]

    @property
    def in_hand(self) -> bool:  # (TableEngine's)
        raise NotImplementedError

    def _new_play(self, hand: Hand) -> HandPlay:  # (TableEngine's)
        raise NotImplementedError

    def rule_level(self, ev: LevelEvent, n: int) -> list[OutputLine]:
        """New blinds: they take effect when the venue's book says (`_level_change`)."""
        # bar_league:Calling a Clock measures in tenths of the level's minutes
        return self._level_change(Level(ev.sb, ev.bb, ev.ante, ev.big_blind_ante, ev.minutes, ev.number))

    def _level_change(self, level: Level) -> list[OutputLine]:
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

    def rule_seat(self, ev: Seat, n: int) -> list[OutputLine]:
        """A player takes a seat (a player who left it since the last hand may be dodging a blind)."""
        return self._seat(ev.seat, ev.player, ev.stack, ev.moved)

    def _seat(self, seat: int, player_id: str, stack: int | None, moved: bool) -> list[OutputLine]:
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

    def _reseated(self, seat: int, player_id: str) -> list[OutputLine]:
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
        line = BlindDodge(
            seat=seat, from_=old, player=player_id, rule=self.profile.rule("seating", "blind_dodge")
        )
        self.alerts.append(line)
        return [line]

    def rule_leave(self, ev: Leave, n: int) -> list[OutputLine]:
        """A seat empties between hands (at an observed table a player tapped out busts mid-hand)."""
        seat, reason = ev.seat, ev.reason
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
        out: list[OutputLine] = []
        if reason == "eliminated":
            out.append(Eliminated(seat=seat, place=len(self.players) + 1, player=player.id))
        return out

    def _leaving(self, h: Hand, seat: int) -> list[OutputLine]:
        """An observed table: a player tapped out as busted while the hand is still on the table (the pot
        not pushed yet). The place is theirs now; the seat empties when the hand is over, and the button and
        blinds of the next hand follow (the dead button: bar_league:Dead Button, cool_mule:10)."""
        if seat in self.leaving:
            return []  # tapped out already (the director's `leave` for it too is taken quietly)
        place = len(self.players) - len(self.leaving)
        self.leaving.append(seat)
        h.play.seen_fold(seat)  # its hand can win nothing more
        return [Eliminated(seat=seat, place=place, player=self.players[seat].id)]

    def rule_button(self, ev: ButtonEvent, n: int) -> list[OutputLine]:
        """The button for the next hand, placed by hand (event start or redraw)."""
        self.forced_button = ev.seat
        return []

    def rule_away(self, ev: Away, n: int) -> list[OutputLine]:
        self._occupied(ev.seat).away = True
        return []

    def rule_back(self, ev: Back, n: int) -> list[OutputLine]:
        self._occupied(ev.seat).away = False
        return []

    def rule_penalty(self, ev: Penalty, n: int) -> list[OutputLine]:
        """A time penalty: the player leaves the table but keeps being dealt in, blinds posted and the
        hand dead once dealt (cool_mule:11.c, dragons_den:40); it starts with the next hand
        (bluff_street:62). A penalty in minutes lasts until the director sends `back`."""
        player = self._occupied(ev.seat)
        hands = self._penalty_round_hands(ev.rounds) if ev.rounds else ev.hands
        if hands:
            player.penalty_hands = hands
        else:
            player.away = True
        line = PenaltyLine(
            seat=ev.seat,
            player=player.id,
            reason=ev.reason,
            hands=hands or UNSET,
            rounds=ev.rounds or UNSET,
            minutes=ev.minutes or UNSET,
            rule=self.profile.rule("conduct", "time_penalty"),
        )
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
