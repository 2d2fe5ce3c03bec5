"""The player registry: members, cards, events, registrations, the seat draw, check-ins, penalties.

Every write is one transaction: a refused operation (RegistryError with a reason and a message
naming what was wrong) leaves the database exactly as it was. Times are passed in (`now`) so the
logic is testable and replayable; the CLI passes the wall clock.
"""

from __future__ import annotations

import logging
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime

from controller.registry.card import check_player_id
from controller.registry.db import Database, IntegrityError, Transaction
from controller.registry.draw import Assignment, DrawError, TableSpec, draw_late_seat, draw_seats
from controller.registry.errors import NotFound, RegistryError
from controller.registry.policy import policy_for

log = logging.getLogger("smart_table.registry")

STATUSES = ("active", "suspended", "revoked")
TABLE_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,15}$")
EVENT_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _ts(when: datetime) -> str:
    if when.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return when.astimezone(UTC).isoformat(timespec="seconds")


def _parse_ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def age_on(born: date, day: date) -> int:
    return day.year - born.year - ((day.month, day.day) < (born.month, born.day))


@dataclass(frozen=True)
class Member:
    player_id: str
    display_name: str
    date_of_birth: date
    photo_id_checked: bool
    status: str
    status_reason: str | None
    created_at: datetime


@dataclass(frozen=True)
class Card:
    uid: bytes
    player_id: str
    venue: str
    key_id: str
    issued_at: datetime
    revoked_at: datetime | None
    revoke_reason: str | None

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


@dataclass(frozen=True)
class Penalty:
    player_id: str
    event_id: str | None
    given_at: datetime
    kind: str
    rule: str | None
    note: str | None


@dataclass(frozen=True)
class Event:
    event_id: str
    name: str
    venue: str
    profile: str
    starts_at: datetime
    min_age: int
    starting_stack: int | None
    seat1_button: bool
    status: str
    draw_seed: str | None
    tables: tuple[TableSpec, ...]

    @property
    def seats(self) -> int:
        return sum(t.seats for t in self.tables)


@dataclass(frozen=True)
class Registration:
    order: int  # 1 = first to arrive
    player_id: str
    registered_at: datetime


@dataclass(frozen=True)
class SeatMove:
    player_id: str
    from_table: str
    from_seat: int
    to_table: str
    to_seat: int
    stack: int | None
    rule: str | None
    moved_at: datetime
    completed_at: datetime | None


@dataclass(frozen=True)
class CheckIn:
    player_id: str
    table_id: str
    seat: int
    card_uid: bytes
    checked_in_at: datetime


_MEMBER_COLS = "player_id, display_name, date_of_birth, photo_id_checked, status, status_reason, created_at"
_CARD_COLS = "uid, player_id, venue, key_id, issued_at, revoked_at, revoke_reason"


def _member(row: tuple) -> Member:
    return Member(row[0], row[1], date.fromisoformat(row[2]), bool(row[3]), row[4], row[5], _parse_ts(row[6]))


def _card(row: tuple) -> Card:
    return Card(
        bytes.fromhex(row[0]),
        row[1],
        row[2],
        row[3],
        _parse_ts(row[4]),
        _parse_ts(row[5]) if row[5] else None,
        row[6],
    )


class Registry:
    """Registry operations on an open `Database`."""

    def __init__(self, db: Database):
        self.db = db

    @classmethod
    def open(cls, url: str) -> Registry:
        return cls(Database.open(url))

    def close(self) -> None:
        self.db.close()

    # ---- members -----------------------------------------------------------------------------
    def add_member(
        self,
        player_id: str,
        display_name: str,
        date_of_birth: date,
        *,
        now: datetime,
        photo_id_checked: bool = False,
        min_age: int | None = None,
    ) -> Member:
        """A new member. Refuses a duplicate ID, a future or implausible birth date, or under-age."""
        try:
            check_player_id(player_id)
        except ValueError as exc:
            raise RegistryError(str(exc), "bad_player_id") from None
        name = " ".join(display_name.split())
        if not name or len(name) > 40:
            raise RegistryError("display name: 1-40 characters required", "bad_name")
        today = now.date()
        if date_of_birth > today:
            raise RegistryError(
                f"date of birth {date_of_birth.isoformat()} is in the future", "bad_birth_date"
            )
        if age_on(date_of_birth, today) > 120:
            raise RegistryError(
                f"date of birth {date_of_birth.isoformat()}: over 120 years ago", "bad_birth_date"
            )
        if min_age is not None and age_on(date_of_birth, today) < min_age:
            raise RegistryError(
                f"{name} ({player_id}) is {age_on(date_of_birth, today)}, the minimum age is {min_age}",
                "under_age",
            )
        try:
            with self.db.transaction() as tx:
                tx.execute(
                    f"INSERT INTO members ({_MEMBER_COLS}) VALUES (?, ?, ?, ?, 'active', NULL, ?)",
                    (player_id, name, date_of_birth.isoformat(), int(photo_id_checked), _ts(now)),
                )
        except IntegrityError:
            raise RegistryError(f"player {player_id} is already a member", "duplicate_member") from None
        log.info("event=member_added player=%s", player_id)
        return self.member(player_id)

    def member(self, player_id: str) -> Member:
        row = self.db.read().one(f"SELECT {_MEMBER_COLS} FROM members WHERE player_id = ?", (player_id,))
        if row is None:
            raise NotFound(f"no member with player id {player_id}", "unknown_player")
        return _member(row)

    def find_member(self, player_id: str) -> Member | None:
        try:
            return self.member(player_id)
        except NotFound:
            return None

    def members(self) -> list[Member]:
        return [
            _member(r) for r in self.db.read().all(f"SELECT {_MEMBER_COLS} FROM members ORDER BY player_id")
        ]

    def set_status(self, player_id: str, status: str, reason: str | None = None) -> Member:
        if status not in STATUSES:
            raise RegistryError(f"status {status!r}: one of {', '.join(STATUSES)}", "bad_status")
        with self.db.transaction() as tx:
            cur = tx.execute(
                "UPDATE members SET status = ?, status_reason = ? WHERE player_id = ?",
                (status, reason, player_id),
            )
            if cur.rowcount == 0:
                raise NotFound(f"no member with player id {player_id}", "unknown_player")
        log.info("event=member_status player=%s status=%s", player_id, status)
        return self.member(player_id)

    def set_photo_id_checked(self, player_id: str, checked: bool = True) -> None:
        with self.db.transaction() as tx:
            cur = tx.execute(
                "UPDATE members SET photo_id_checked = ? WHERE player_id = ?", (int(checked), player_id)
            )
            if cur.rowcount == 0:
                raise NotFound(f"no member with player id {player_id}", "unknown_player")

    def add_penalty(
        self,
        player_id: str,
        kind: str,
        *,
        now: datetime,
        rule: str | None = None,
        note: str | None = None,
        event_id: str | None = None,
    ) -> None:
        if not kind.strip():
            raise RegistryError(
                "penalty kind is required (e.g. warning, missed_hand, one_round)", "bad_penalty"
            )
        with self.db.transaction() as tx:
            if tx.one("SELECT 1 FROM members WHERE player_id = ?", (player_id,)) is None:
                raise NotFound(f"no member with player id {player_id}", "unknown_player")
            tx.execute(
                "INSERT INTO penalties (player_id, event_id, given_at, kind, rule, note) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (player_id, event_id, _ts(now), kind.strip(), rule, note),
            )

    def penalties(self, player_id: str) -> list[Penalty]:
        rows = self.db.read().all(
            "SELECT player_id, event_id, given_at, kind, rule, note FROM penalties "
            "WHERE player_id = ? ORDER BY id",
            (player_id,),
        )
        return [Penalty(r[0], r[1], _parse_ts(r[2]), r[3], r[4], r[5]) for r in rows]

    # ---- cards -------------------------------------------------------------------------------
    def issue_card(
        self,
        uid: bytes,
        player_id: str,
        venue: str,
        key_id: str,
        *,
        now: datetime,
        tx: Transaction | None = None,
    ) -> list[bytes]:
        """Record a written and verified card; earlier active cards of the player are revoked
        ('replaced'). Returns the UIDs so revoked. Refuses a tag that belongs to another card."""
        if tx is None:
            with self.db.transaction() as own:
                return self.issue_card(uid, player_id, venue, key_id, now=now, tx=own)
        if tx.one("SELECT 1 FROM members WHERE player_id = ?", (player_id,)) is None:
            raise NotFound(f"no member with player id {player_id}", "unknown_player")
        row = tx.one(f"SELECT {_CARD_COLS} FROM cards WHERE uid = ?", (uid.hex(),))
        if row is not None:
            existing = _card(row)
            if existing.revoked:
                raise RegistryError(
                    f"tag {uid.hex()} was revoked ({existing.revoke_reason}); use a new tag", "revoked_card"
                )
            if existing.player_id != player_id:
                raise RegistryError(
                    f"tag {uid.hex()} is {existing.player_id}'s card; revoke it first", "card_in_use"
                )
            tx.execute(
                "UPDATE cards SET key_id = ?, venue = ?, issued_at = ? WHERE uid = ?",
                (key_id, venue, _ts(now), uid.hex()),
            )
        else:
            tx.execute(
                f"INSERT INTO cards ({_CARD_COLS}) VALUES (?, ?, ?, ?, ?, NULL, NULL)",
                (uid.hex(), player_id, venue, key_id, _ts(now)),
            )
        replaced = [
            bytes.fromhex(r[0])
            for r in tx.all(
                "SELECT uid FROM cards WHERE player_id = ? AND uid <> ? AND revoked_at IS NULL",
                (player_id, uid.hex()),
            )
        ]
        for old in replaced:
            tx.execute(
                "UPDATE cards SET revoked_at = ?, revoke_reason = 'replaced' WHERE uid = ?",
                (_ts(now), old.hex()),
            )
        log.info(
            "event=card_issued player=%s uid=%s key_id=%s replaced=%d",
            player_id,
            uid.hex(),
            key_id,
            len(replaced),
        )
        return replaced

    def check_card_issuable(self, uid: bytes, player_id: str) -> None:
        """Refuse early (before touching the tag) what `issue_card` would refuse."""
        self.member(player_id)
        card = self.card(uid)
        if card is not None and card.revoked:
            raise RegistryError(
                f"tag {uid.hex()} was revoked ({card.revoke_reason}); use a new tag", "revoked_card"
            )
        if card is not None and card.player_id != player_id:
            raise RegistryError(f"tag {uid.hex()} is {card.player_id}'s card; revoke it first", "card_in_use")

    def card(self, uid: bytes) -> Card | None:
        row = self.db.read().one(f"SELECT {_CARD_COLS} FROM cards WHERE uid = ?", (bytes(uid).hex(),))
        return _card(row) if row else None

    def sun_counter(self, uid: bytes) -> int | None:
        """The highest NTAG 424 DNA read counter accepted for this card (None: never read by us)."""
        row = self.db.read().one("SELECT sun_counter FROM cards WHERE uid = ?", (bytes(uid).hex(),))
        return int(row[0]) if row and row[0] is not None else None

    def advance_sun_counter(self, uid: bytes, counter: int) -> int | None:
        """Record an NTAG 424 DNA read counter if it is above every one seen for this card; else the
        highest seen (a copied or replayed read). One statement: two tables tapping the same recorded
        read at once cannot both pass."""
        with self.db.transaction() as tx:
            cur = tx.execute(
                "UPDATE cards SET sun_counter = ? WHERE uid = ? AND (sun_counter IS NULL OR sun_counter < ?)",
                (counter, bytes(uid).hex(), counter),
            )
            if cur.rowcount == 1:
                return None
            row = tx.one("SELECT sun_counter FROM cards WHERE uid = ?", (bytes(uid).hex(),))
        return int(row[0]) if row and row[0] is not None else -1

    def cards_of(self, player_id: str) -> list[Card]:
        rows = self.db.read().all(
            f"SELECT {_CARD_COLS} FROM cards WHERE player_id = ? ORDER BY issued_at", (player_id,)
        )
        return [_card(r) for r in rows]

    def active_card(self, player_id: str) -> Card | None:
        active = [c for c in self.cards_of(player_id) if not c.revoked]
        return active[-1] if active else None

    def revoke_card(self, uid: bytes, *, now: datetime, reason: str = "revoked") -> Card:
        with self.db.transaction() as tx:
            row = tx.one(f"SELECT {_CARD_COLS} FROM cards WHERE uid = ?", (uid.hex(),))
            if row is None:
                raise NotFound(f"no card with UID {uid.hex()}", "unknown_card")
            if row[5] is not None:
                raise RegistryError(f"card {uid.hex()} is already revoked ({row[6]})", "already_revoked")
            tx.execute(
                "UPDATE cards SET revoked_at = ?, revoke_reason = ? WHERE uid = ?",
                (_ts(now), reason, uid.hex()),
            )
        log.info("event=card_revoked uid=%s reason=%s", uid.hex(), reason)
        return self.card(uid)  # type: ignore[return-value]

    # ---- events ------------------------------------------------------------------------------
    def open_event(
        self,
        event_id: str,
        name: str,
        *,
        venue: str,
        profile: str,
        starts_at: datetime,
        tables: Iterable[TableSpec],
        now: datetime,
        min_age: int | None = None,
        starting_stack: int | None = None,
    ) -> Event:
        if not EVENT_ID_RE.match(event_id):
            raise RegistryError(
                f"event id {event_id!r}: letters, digits, '.', '-', '_' (max 64)", "bad_event_id"
            )
        try:
            policy = policy_for(profile)
        except ValueError as exc:
            raise RegistryError(str(exc), "bad_profile") from None
        min_age = policy.min_age if min_age is None else min_age
        if not 0 <= min_age <= 120:
            raise RegistryError(f"minimum age {min_age}: must be 0-120", "bad_min_age")
        stack = starting_stack if starting_stack is not None else policy.starting_stack
        if stack is not None and stack <= 0:
            raise RegistryError(f"starting stack {stack}: must be positive", "bad_stack")
        tables = list(tables)
        self._check_tables(tables)
        try:
            with self.db.transaction() as tx:
                tx.execute(
                    "INSERT INTO events (event_id, name, venue, profile, starts_at, min_age, starting_stack, "
                    "seat1_button, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'open', ?)",
                    (
                        event_id,
                        name,
                        venue,
                        profile,
                        _ts(starts_at),
                        min_age,
                        stack,
                        int(policy.seat1_button),
                        _ts(now),
                    ),
                )
                for pos, t in enumerate(tables):
                    tx.execute(
                        "INSERT INTO event_tables (event_id, table_id, seats, position) VALUES (?, ?, ?, ?)",
                        (event_id, t.table_id, t.seats, pos),
                    )
        except IntegrityError:
            raise RegistryError(f"event {event_id} already exists", "duplicate_event") from None
        log.info(
            "event=event_opened event_id=%s tables=%d seats=%d",
            event_id,
            len(tables),
            sum(t.seats for t in tables),
        )
        return self.event(event_id)

    @staticmethod
    def _check_tables(tables: list[TableSpec]) -> None:
        seen: set[str] = set()
        for t in tables:
            if not TABLE_ID_RE.match(t.table_id):
                raise RegistryError(
                    f"table id {t.table_id!r}: letters, digits, '-', '_' (max 16)", "bad_table"
                )
            if t.table_id in seen:
                raise RegistryError(f"table {t.table_id} is listed twice", "bad_table")
            if not 2 <= t.seats <= 12:
                raise RegistryError(f"table {t.table_id}: {t.seats} seats, must be 2-12", "bad_table")
            seen.add(t.table_id)

    def add_table(self, event_id: str, table: TableSpec) -> Event:
        self._check_tables([table])
        with self.db.transaction() as tx:
            tx.lock_event(event_id)
            ev = self._event(tx, event_id)
            if ev.status != "open":
                raise RegistryError(
                    f"event {event_id}: seats are already drawn; tables are fixed", "already_drawn"
                )
            if any(t.table_id == table.table_id for t in ev.tables):
                raise RegistryError(f"event {event_id} already has table {table.table_id}", "bad_table")
            tx.execute(
                "INSERT INTO event_tables (event_id, table_id, seats, position) VALUES (?, ?, ?, ?)",
                (event_id, table.table_id, table.seats, len(ev.tables)),
            )
        return self.event(event_id)

    def event(self, event_id: str) -> Event:
        return self._event(self.db.read(), event_id)

    def _event(self, tx: Transaction, event_id: str) -> Event:
        row = tx.one(
            "SELECT event_id, name, venue, profile, starts_at, min_age, starting_stack, seat1_button, "
            "status, draw_seed FROM events WHERE event_id = ?",
            (event_id,),
        )
        if row is None:
            raise NotFound(f"no event {event_id}", "unknown_event")
        tables = tuple(
            TableSpec(r[0], r[1])
            for r in tx.all(
                "SELECT table_id, seats FROM event_tables WHERE event_id = ? ORDER BY position", (event_id,)
            )
        )
        return Event(
            row[0],
            row[1],
            row[2],
            row[3],
            _parse_ts(row[4]),
            row[5],
            row[6],
            bool(row[7]),
            row[8],
            row[9],
            tables,
        )

    def events(self) -> list[Event]:
        return [
            self.event(r[0]) for r in self.db.read().all("SELECT event_id FROM events ORDER BY starts_at")
        ]

    def eligibility(self, player_id: str, event: Event) -> list[str]:
        """Why the player may not play this event (empty list: eligible)."""
        return self.member_problems(player_id, event.min_age, event.starts_at.date())

    def member_problems(self, player_id: str, min_age: int, on: date) -> list[str]:
        """Why the player may not play on day `on` with minimum age `min_age` ('reason: text' each)."""
        member = self.find_member(player_id)
        if member is None:
            return [f"unknown_player: no member with player id {player_id}"]
        problems = []
        if member.status != "active":
            problems.append(
                f"member_{member.status}: membership is {member.status}"
                + (f" ({member.status_reason})" if member.status_reason else "")
            )
        age = age_on(member.date_of_birth, on)
        if age < min_age:
            problems.append(f"under_age: {age} on {on.isoformat()}, the minimum is {min_age}")
        if not member.photo_id_checked:
            problems.append("photo_id_not_checked: photo ID not checked at the desk (cool_mule:1.b)")
        return problems

    def register(
        self, event_id: str, player_id: str, *, now: datetime, seed: int | None = None
    ) -> Registration:
        """Register an arriving player (first come, first served). After the draw, the late player
        also gets a random empty seat at the emptiest table."""
        with self.db.transaction() as tx:
            tx.lock_event(event_id)
            ev = self._event(tx, event_id)
            if ev.status == "closed":
                raise RegistryError(f"event {event_id} is closed", "event_closed")
            problems = self.eligibility(player_id, ev)
            if problems:
                reason = problems[0].split(":")[0]
                raise RegistryError(
                    f"{player_id} cannot register for {event_id}: " + "; ".join(problems), reason
                )
            if tx.one(
                "SELECT 1 FROM registrations WHERE event_id = ? AND player_id = ?", (event_id, player_id)
            ):
                raise RegistryError(
                    f"{player_id} is already registered for {event_id}", "duplicate_registration"
                )
            count = tx.one("SELECT COUNT(*) FROM registrations WHERE event_id = ?", (event_id,))[0]  # type: ignore[index]
            if count >= ev.seats:
                raise RegistryError(
                    f"event {event_id} is full: {ev.seats} seats taken (cool_mule:1.c)", "event_full"
                )
            tx.execute(
                "INSERT INTO registrations (event_id, player_id, registered_at) VALUES (?, ?, ?)",
                (event_id, player_id, _ts(now)),
            )
            if ev.status == "drawn":
                taken: dict[str, set[int]] = {}
                for table_id, seat in tx.all(
                    "SELECT table_id, seat FROM seat_assignments WHERE event_id = ?", (event_id,)
                ):
                    taken.setdefault(table_id, set()).add(seat)
                rng = random.Random(seed)
                table_id, seat = draw_late_seat(taken, list(ev.tables), rng)
                tx.execute(
                    "INSERT INTO seat_assignments (event_id, player_id, table_id, seat) VALUES (?, ?, ?, ?)",
                    (event_id, player_id, table_id, seat),
                )
        log.info("event=registered event_id=%s player=%s", event_id, player_id)
        return next(r for r in self.registrations(event_id) if r.player_id == player_id)

    def registrations(self, event_id: str) -> list[Registration]:
        rows = self.db.read().all(
            "SELECT player_id, registered_at FROM registrations WHERE event_id = ? ORDER BY id", (event_id,)
        )
        return [Registration(i + 1, r[0], _parse_ts(r[1])) for i, r in enumerate(rows)]

    def draw(self, event_id: str, *, seed: int | None, now: datetime) -> list[Assignment]:
        """Draw seats for everyone registered. Once only: a second draw is refused."""
        seed_text = str(seed) if seed is not None else None
        with self.db.transaction() as tx:
            tx.lock_event(event_id)
            ev = self._event(tx, event_id)
            if ev.status != "open":
                raise RegistryError(
                    f"event {event_id}: seats were already drawn (seed {ev.draw_seed})", "already_drawn"
                )
            players = [
                r[0]
                for r in tx.all(
                    "SELECT player_id FROM registrations WHERE event_id = ? ORDER BY id", (event_id,)
                )
            ]
            if not players:
                raise RegistryError(f"event {event_id}: nobody is registered yet", "no_players")
            rng = random.Random(seed)
            try:
                assignments = draw_seats(players, list(ev.tables), rng, seat1_button=ev.seat1_button)
            except DrawError as exc:
                raise RegistryError(f"event {event_id}: {exc}", "too_many_players") from None
            for a in assignments:
                tx.execute(
                    "INSERT INTO seat_assignments (event_id, player_id, table_id, seat) VALUES (?, ?, ?, ?)",
                    (event_id, a.player_id, a.table_id, a.seat),
                )
            tx.execute(
                "UPDATE events SET status = 'drawn', draw_seed = ?, drawn_at = ? WHERE event_id = ?",
                (seed_text, _ts(now), event_id),
            )
        log.info("event=seats_drawn event_id=%s players=%d seed=%s", event_id, len(assignments), seed_text)
        return assignments

    def seat_draw(self, event_id: str) -> list[Assignment]:
        ev = self.event(event_id)
        order = {t.table_id: i for i, t in enumerate(ev.tables)}
        rows = self.db.read().all(
            "SELECT player_id, table_id, seat FROM seat_assignments WHERE event_id = ?", (event_id,)
        )
        return sorted((Assignment(*r) for r in rows), key=lambda a: (order.get(a.table_id, 99), a.seat))

    def assignment(self, event_id: str, player_id: str) -> Assignment | None:
        row = self.db.read().one(
            "SELECT player_id, table_id, seat FROM seat_assignments WHERE event_id = ? AND player_id = ?",
            (event_id, player_id),
        )
        return Assignment(*row) if row else None

    def is_registered(self, event_id: str, player_id: str) -> bool:
        return (
            self.db.read().one(
                "SELECT 1 FROM registrations WHERE event_id = ? AND player_id = ?", (event_id, player_id)
            )
            is not None
        )

    # ---- moves between tables (the floor's balancing and breaking) ---------------------------
    def move_player(
        self,
        event_id: str,
        player_id: str,
        to_table: str,
        to_seat: int,
        *,
        now: datetime,
        stack: int | None = None,
        rule: str | None = None,
    ) -> SeatMove:
        """Reassign a seated player to another table's seat, so that the tap-in there is accepted as a
        move (`seat` with `moved: true`) instead of refused as wrong_table. The seat must be empty at
        the table; a busted player's old assignment to it is dropped."""
        with self.db.transaction() as tx:
            tx.lock_event(event_id)
            ev = self._event(tx, event_id)
            table = next((t for t in ev.tables if t.table_id == to_table), None)
            if table is None:
                raise RegistryError(f"event {event_id} has no table {to_table}", "bad_table")
            if not 1 <= to_seat <= table.seats:
                raise RegistryError(f"table {to_table}: seat {to_seat} is not 1..{table.seats}", "bad_seat")
            row = tx.one(
                "SELECT table_id, seat FROM seat_assignments WHERE event_id = ? AND player_id = ?",
                (event_id, player_id),
            )
            if row is None:
                raise RegistryError(f"{player_id} has no seat in {event_id} to move from", "not_drawn")
            if (row[0], row[1]) == (to_table, to_seat):
                raise RegistryError(f"{player_id} already sits at {to_table} seat {to_seat}", "same_seat")
            tx.execute(
                "DELETE FROM seat_assignments WHERE event_id = ? AND table_id = ? AND seat = ? AND player_id <> ?",
                (event_id, to_table, to_seat, player_id),
            )
            tx.execute(
                "UPDATE seat_assignments SET table_id = ?, seat = ? WHERE event_id = ? AND player_id = ?",
                (to_table, to_seat, event_id, player_id),
            )
            tx.execute(
                "INSERT INTO seat_moves (event_id, player_id, from_table, from_seat, to_table, to_seat, stack, "
                "rule, moved_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (event_id, player_id, row[0], row[1], to_table, to_seat, stack, rule, _ts(now)),
            )
        log.info(
            "event=player_moved event_id=%s player=%s from=%s.%s to=%s.%s",
            event_id,
            player_id,
            row[0],
            row[1],
            to_table,
            to_seat,
        )
        move = self.pending_move(event_id, player_id)
        assert move is not None
        return move

    def pending_move(self, event_id: str, player_id: str) -> SeatMove | None:
        """The player's latest move that no tap-in at the new seat has completed yet."""
        row = self.db.read().one(
            "SELECT player_id, from_table, from_seat, to_table, to_seat, stack, rule, moved_at, completed_at "
            "FROM seat_moves WHERE event_id = ? AND player_id = ? AND completed_at IS NULL ORDER BY id DESC",
            (event_id, player_id),
        )
        if row is None:
            return None
        return SeatMove(row[0], row[1], row[2], row[3], row[4], row[5], row[6], _parse_ts(row[7]), None)

    def complete_move(self, event_id: str, player_id: str, uid: bytes, *, now: datetime) -> SeatMove | None:
        """The moved player tapped in at the new seat: the check-in follows them there."""
        move = self.pending_move(event_id, player_id)
        if move is None:
            return None
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE checkins SET table_id = ?, seat = ?, card_uid = ?, checked_in_at = ? "
                "WHERE event_id = ? AND player_id = ?",
                (move.to_table, move.to_seat, uid.hex(), _ts(now), event_id, player_id),
            )
            tx.execute(
                "UPDATE seat_moves SET completed_at = ? WHERE event_id = ? AND player_id = ? AND completed_at IS NULL",
                (_ts(now), event_id, player_id),
            )
        return move

    # ---- check-ins ---------------------------------------------------------------------------
    def record_checkin(
        self, event_id: str, player_id: str, table_id: str, seat: int, uid: bytes, *, now: datetime
    ) -> bool:
        """Record the tap-in; False when the player had already checked in (nothing changes)."""
        try:
            with self.db.transaction() as tx:
                tx.execute(
                    "INSERT INTO checkins (event_id, player_id, table_id, seat, card_uid, checked_in_at) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    (event_id, player_id, table_id, seat, uid.hex(), _ts(now)),
                )
        except IntegrityError:
            return False
        return True

    def checkin(self, event_id: str, player_id: str) -> CheckIn | None:
        row = self.db.read().one(
            "SELECT player_id, table_id, seat, card_uid, checked_in_at FROM checkins "
            "WHERE event_id = ? AND player_id = ?",
            (event_id, player_id),
        )
        return CheckIn(row[0], row[1], row[2], bytes.fromhex(row[3]), _parse_ts(row[4])) if row else None

    def checkins(self, event_id: str) -> list[CheckIn]:
        rows = self.db.read().all(
            "SELECT player_id, table_id, seat, card_uid, checked_in_at FROM checkins "
            "WHERE event_id = ? ORDER BY checked_in_at, player_id",
            (event_id,),
        )
        return [CheckIn(r[0], r[1], r[2], bytes.fromhex(r[3]), _parse_ts(r[4])) for r in rows]

    def log_tap(
        self,
        *,
        now: datetime,
        uid: bytes,
        accepted: bool,
        reason: str | None,
        table_id: str | None = None,
        event_id: str | None = None,
        player_id: str | None = None,
    ) -> None:
        """Audit trail of every tap, accepted or not (the TD reviews refused cards)."""
        with self.db.transaction() as tx:
            tx.execute(
                "INSERT INTO taps (at, table_id, event_id, card_uid, player_id, accepted, reason) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (_ts(now), table_id, event_id, uid.hex(), player_id, int(accepted), reason),
            )

    def taps(self, event_id: str | None = None) -> list[tuple]:
        if event_id is None:
            return self.db.read().all(
                "SELECT at, table_id, event_id, card_uid, player_id, accepted, reason FROM taps ORDER BY id"
            )
        return self.db.read().all(
            "SELECT at, table_id, event_id, card_uid, player_id, accepted, reason "
            "FROM taps WHERE event_id = ? ORDER BY id",
            (event_id,),
        )
