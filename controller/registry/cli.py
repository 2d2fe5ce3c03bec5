"""`smart-table register ...`: the registration desk.

Every command takes `--db` (SQLite path or `postgresql://` URL; env SMART_TABLE_REGISTRY, default
./registry.sqlite3), and the card commands `--keys` (venue key file; env SMART_TABLE_VENUE_KEYS,
default ./venue-keys.toml) and `--reader` (nfcpy path or sim:<name|dir>; env SMART_TABLE_NFC_READER,
default tty:S0:pn532). Exit status: 0 done, 1 refused (the message says why; nothing was
changed), 2 unusable arguments or configuration (database, key file, reader).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import UTC, date, datetime
from typing import Any

DEFAULT_DB = "registry.sqlite3"
DEFAULT_KEYS = "venue-keys.toml"
DEFAULT_READER = "tty:S0:pn532"
OK, REFUSED, UNUSABLE = 0, 1, 2


def _now() -> datetime:
    return datetime.now(UTC)


def _err(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def _common(with_keys: bool = False, with_reader: bool = False) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--db",
        default=os.environ.get("SMART_TABLE_REGISTRY", DEFAULT_DB),
        help="registry: SQLite file or postgresql:// URL (env SMART_TABLE_REGISTRY)",
    )
    if with_keys:
        p.add_argument(
            "--keys",
            default=os.environ.get("SMART_TABLE_VENUE_KEYS", DEFAULT_KEYS),
            help="venue key file, mode 0600 (env SMART_TABLE_VENUE_KEYS)",
        )
    if with_reader:
        p.add_argument(
            "--reader",
            default=os.environ.get("SMART_TABLE_NFC_READER", DEFAULT_READER),
            help="NFC reader: tty:S0:pn532, usb, udp:localhost:54321, sim:<name|dir> "
            "(env SMART_TABLE_NFC_READER)",
        )
        p.add_argument("--wait", type=float, default=15.0, help="seconds to wait for a card (default 15)")
    return p


def _iso_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date (YYYY-MM-DD)") from None


def _iso_time(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date and time (YYYY-MM-DDTHH:MM)") from None
    return when if when.tzinfo else when.astimezone()


def _tables(text: str) -> list[Any]:
    from controller.registry.draw import TableSpec

    tables = []
    for item in text.split(","):
        name, _, seats = item.strip().partition(":")
        if not name or not seats.isdigit():
            raise argparse.ArgumentTypeError(f"table {item!r}: write NAME:SEATS, e.g. T1:9,T2:9")
        tables.append(TableSpec(name, int(seats)))
    return tables


def register(subparsers: argparse._SubParsersAction) -> None:
    reg = subparsers.add_parser(
        "register", help="registration desk: members, player cards, events, seat draw"
    )
    sub = reg.add_subparsers(dest="register_command", metavar="REGISTER_COMMAND")
    reg.set_defaults(handler=lambda args: reg.print_help() or UNUSABLE)

    keys = sub.add_parser("keys", help="the venue key file: create, rotate")
    keys_sub = keys.add_subparsers(dest="keys_command", metavar="KEYS_COMMAND")
    keys.set_defaults(handler=lambda args: keys.print_help() or UNUSABLE)
    k_init = keys_sub.add_parser("init", parents=[_common(with_keys=True)], help="new key file (mode 0600)")
    k_init.add_argument("--venue", required=True, help="venue name written into every card")
    k_init.add_argument("--key-id", default="k1")
    k_init.set_defaults(handler=cmd_keys_init)
    k_rot = keys_sub.add_parser(
        "rotate",
        parents=[_common(with_keys=True)],
        help="add a new signing key; optionally retire old key ids",
    )
    k_rot.add_argument("--key-id", required=True, help="id of the new key, e.g. k2")
    k_rot.add_argument(
        "--retire", action="append", default=[], help="key id whose cards are refused from now on"
    )
    k_rot.set_defaults(handler=cmd_keys_rotate)

    m = sub.add_parser("member", parents=[_common()], help="register a new member")
    m.add_argument("--name", required=True, help="display name (shown at the table)")
    m.add_argument("--born", required=True, type=_iso_date, help="date of birth, YYYY-MM-DD")
    m.add_argument("--id", dest="player_id", help="player ID (default: next free P0001, P0002, ...)")
    m.add_argument("--photo-id-checked", action="store_true", help="photo ID was checked at the desk")
    m.add_argument("--min-age", type=int, help="minimum age (default: the event's, else 19 by cool_mule:1.d)")
    m.add_argument("--event", help="check the age against this event's minimum")
    m.set_defaults(handler=cmd_member)

    st = sub.add_parser("status", parents=[_common()], help="set a member's status")
    st.add_argument("player")
    st.add_argument("status", choices=("active", "suspended", "revoked"))
    st.add_argument("--reason")
    st.set_defaults(handler=cmd_status)

    pid = sub.add_parser("photo-id", parents=[_common()], help="record that a member's photo ID was checked")
    pid.add_argument("player")
    pid.set_defaults(handler=cmd_photo_id)

    pen = sub.add_parser("penalty", parents=[_common()], help="record a penalty in the member's history")
    pen.add_argument("player")
    pen.add_argument("kind", help="warning, missed_hand, one_round, disqualified, ...")
    pen.add_argument("--rule", help="citation, e.g. cool_mule:11.b")
    pen.add_argument("--note")
    pen.add_argument("--event")
    pen.set_defaults(handler=cmd_penalty)

    show = sub.add_parser("show", parents=[_common()], help="a member: status, cards, penalties")
    show.add_argument("player")
    show.set_defaults(handler=cmd_show)

    wc = sub.add_parser(
        "write-card",
        parents=[_common(with_keys=True, with_reader=True)],
        help="write a player card, read it back, verify, record it",
    )
    wc.add_argument("player")
    wc.set_defaults(handler=cmd_write_card)

    ck = sub.add_parser(
        "check",
        parents=[_common(with_keys=True, with_reader=True)],
        help="tap a card: who it is, eligible or not and why",
    )
    ck.add_argument("--event", help="also check eligibility, registration and seat for this event")
    ck.set_defaults(handler=cmd_check)

    rv = sub.add_parser("revoke", parents=[_common()], help="revoke a card (tag UID in hex, or a player ID)")
    rv.add_argument("card")
    rv.add_argument("--reason", default="revoked")
    rv.set_defaults(handler=cmd_revoke)

    ev = sub.add_parser("event", help="events: open, sign up players, draw seats, show")
    ev_sub = ev.add_subparsers(dest="event_command", metavar="EVENT_COMMAND")
    ev.set_defaults(handler=lambda args: ev.print_help() or UNUSABLE)
    op = ev_sub.add_parser("open", parents=[_common()], help="open an event with its tables and seats")
    op.add_argument("event")
    op.add_argument("--tables", required=True, type=_tables, help="NAME:SEATS,..., e.g. T1:9,T2:9")
    op.add_argument("--name", help="event name (default: the event id)")
    op.add_argument(
        "--profile",
        default="cool_mule",
        choices=("cool_mule", "bar_league", "dragons_den", "corner_pocket", "bluff_street"),
    )
    op.add_argument("--venue", help="venue (default: the profile name)")
    op.add_argument("--starts", type=_iso_time, help="start, YYYY-MM-DDTHH:MM (default: now)")
    op.add_argument("--min-age", type=int, help="minimum age (default: the profile's, 19 by cool_mule:1.d)")
    op.add_argument("--stack", type=int, help="starting stack (default: the profile's, if any)")
    op.set_defaults(handler=cmd_event_open)
    at = ev_sub.add_parser("add-table", parents=[_common()], help="add a table before the draw")
    at.add_argument("event")
    at.add_argument("table", type=_tables, help="NAME:SEATS")
    at.set_defaults(handler=cmd_event_add_table)
    su = ev_sub.add_parser(
        "signup",
        parents=[_common(with_keys=True, with_reader=True)],
        help="register arriving players, first come first served (IDs, or --tap cards)",
    )
    su.add_argument("event")
    su.add_argument("players", nargs="*", help="player IDs in arrival order")
    su.add_argument("--tap", type=int, metavar="N", default=0, help="register the next N cards tapped")
    su.add_argument("--seed", type=int, help="seed for late seats drawn after the draw")
    su.set_defaults(handler=cmd_event_signup)
    dr = ev_sub.add_parser("draw", parents=[_common()], help="draw seats at random, evenly across tables")
    dr.add_argument("event")
    dr.add_argument("--seed", type=int, help="seed, to reproduce and audit the draw")
    dr.add_argument("--json", action="store_true", help="one JSON object per seat instead of a table")
    dr.set_defaults(handler=cmd_event_draw)
    sh = ev_sub.add_parser(
        "show", parents=[_common()], help="registrations in arrival order, the draw, check-ins"
    )
    sh.add_argument("event")
    sh.add_argument("--json", action="store_true")
    sh.set_defaults(handler=cmd_event_show)


# ---- plumbing -------------------------------------------------------------------------------------


def _run(args: argparse.Namespace, body: Any) -> int:
    """Open what the command needs, run it, and turn refusals into messages and exit codes."""
    from controller.registry.errors import CardError, ReaderError, RegistryError, SecretFileError
    from controller.registry.registry import Registry

    try:
        registry = Registry.open(args.db)
    except RegistryError as exc:
        _err(str(exc))
        return UNUSABLE
    try:
        return int(body(registry) or OK)
    except (SecretFileError, ReaderError) as exc:
        _err(str(exc))
        return UNUSABLE
    except (RegistryError, CardError) as exc:
        _err(f"{exc} [{exc.reason}]")
        return REFUSED
    finally:
        registry.close()


def _load_keys(args: argparse.Namespace) -> Any:
    from controller.registry.keys import load_keys

    return load_keys(args.keys)


def _frontend(args: argparse.Namespace) -> Any:
    from controller.registry.reader import open_frontend

    return open_frontend(args.reader)


def _say(text: str) -> None:
    print(text, flush=True)


# ---- commands -------------------------------------------------------------------------------------


def cmd_keys_init(args: argparse.Namespace) -> int:
    from controller.registry.card import VENUE_RE
    from controller.registry.errors import SecretFileError
    from controller.registry.keys import create_key_file

    if not VENUE_RE.match(args.venue):
        _err(f"venue {args.venue!r}: lower-case letters, digits, '-', '_' (max 32)")
        return UNUSABLE
    try:
        create_key_file(args.keys, args.venue, args.key_id)
    except FileExistsError:
        _err(f"{args.keys} already exists; not overwriting a venue key file")
        return REFUSED
    except (OSError, SecretFileError) as exc:
        _err(f"{args.keys}: {exc}")
        return UNUSABLE
    print(f"created {args.keys} (mode 0600) for venue {args.venue}, key id {args.key_id}; keep it secret")
    return OK


def cmd_keys_rotate(args: argparse.Namespace) -> int:
    from controller.registry.errors import SecretFileError
    from controller.registry.keys import rotate_key_file

    try:
        keys = rotate_key_file(args.keys, args.key_id, retire=args.retire)
    except SecretFileError as exc:
        _err(str(exc))
        return UNUSABLE
    print(
        f"{args.keys}: new cards are signed with {keys.current}"
        + (f"; cards signed with {', '.join(sorted(keys.retired))} are refused" if keys.retired else "")
    )
    return OK


def cmd_member(args: argparse.Namespace) -> int:
    from controller.registry.policy import DEFAULT_MIN_AGE

    def body(registry: Any) -> int:
        min_age = args.min_age
        if min_age is None and args.event:
            min_age = registry.event(args.event).min_age
        if min_age is None:
            min_age = DEFAULT_MIN_AGE
        player_id = args.player_id or _next_player_id(registry)
        member = registry.add_member(
            player_id,
            args.name,
            args.born,
            now=_now(),
            photo_id_checked=args.photo_id_checked,
            min_age=min_age,
        )
        print(
            f"member {member.player_id}: {member.display_name}, status {member.status}, photo ID "
            f"{'checked' if member.photo_id_checked else 'NOT checked'}"
        )
        return OK

    return _run(args, body)


def _next_player_id(registry: Any) -> str:
    n = len(registry.members()) + 1
    while registry.find_member(f"P{n:04d}") is not None:
        n += 1
    return f"P{n:04d}"


def cmd_status(args: argparse.Namespace) -> int:
    def body(registry: Any) -> int:
        m = registry.set_status(args.player, args.status, args.reason)
        print(f"{m.player_id} ({m.display_name}) is now {m.status}")
        return OK

    return _run(args, body)


def cmd_photo_id(args: argparse.Namespace) -> int:
    def body(registry: Any) -> int:
        registry.set_photo_id_checked(args.player, True)
        print(f"{args.player}: photo ID checked")
        return OK

    return _run(args, body)


def cmd_penalty(args: argparse.Namespace) -> int:
    def body(registry: Any) -> int:
        registry.add_penalty(
            args.player, args.kind, now=_now(), rule=args.rule, note=args.note, event_id=args.event
        )
        print(f"{args.player}: {len(registry.penalties(args.player))} penalties on record")
        return OK

    return _run(args, body)


def cmd_show(args: argparse.Namespace) -> int:
    def body(registry: Any) -> int:
        m = registry.member(args.player)
        print(
            f"{m.player_id}  {m.display_name}  born {m.date_of_birth.isoformat()}  status {m.status}"
            + (f" ({m.status_reason})" if m.status_reason else "")
            + f"  photo ID {'checked' if m.photo_id_checked else 'not checked'}"
        )
        for c in registry.cards_of(m.player_id):
            state = f"revoked {c.revoked_at:%Y-%m-%d} ({c.revoke_reason})" if c.revoked else "active"
            print(f"  card {c.uid.hex()}  key {c.key_id}  issued {c.issued_at:%Y-%m-%d}  {state}")
        for p in registry.penalties(m.player_id):
            print(
                f"  penalty {p.given_at:%Y-%m-%d} {p.kind}"
                + (f" [{p.rule}]" if p.rule else "")
                + (f" event {p.event_id}" if p.event_id else "")
                + (f": {p.note}" if p.note else "")
            )
        return OK

    return _run(args, body)


def cmd_write_card(args: argparse.Namespace) -> int:
    from controller.registry.cardio import write_card

    def body(registry: Any) -> int:
        keys = _load_keys(args)
        clf = _frontend(args)
        try:
            out = write_card(clf, registry, keys, args.player, now=_now(), wait=args.wait, say=_say)
        finally:
            clf.close()
        print(
            f"card {out.uid.hex()} written for {args.player}, read back and verified"
            + (f" after {out.attempts} attempts" if out.attempts > 1 else "")
        )
        for old in out.replaced:
            print(f"  previous card {old.hex()} revoked (replaced)")
        return OK

    return _run(args, body)


def _tap_once(args: argparse.Namespace, clf: Any = None, prompt: str = "tap a card on the reader") -> Any:
    """Wait for a card and read it. With a frontend passed in, also wait until the card is taken
    away again, so the next call reads the next card and not the same one twice."""
    from controller.registry.cardio import wait_for_tag
    from controller.registry.errors import RegistryError
    from controller.registry.reader import read_tap, wait_removed

    own = clf is None
    clf = _frontend(args) if own else clf
    try:
        _say(prompt)
        seen = wait_for_tag(clf, args.wait)
        if seen is None:
            raise RegistryError(f"no card presented within {args.wait:g} s", "no_card")
        result = read_tap(clf, uid=bytes(seen.identifier))
        if result is None:
            raise RegistryError("the card left the reader before it could be read; tap again", "no_card")
        if not own:
            wait_removed(clf, result[0], limit=args.wait)
        return result[1]
    finally:
        if own:
            clf.close()


def cmd_check(args: argparse.Namespace) -> int:
    from controller.registry.card import CardVerifier
    from controller.registry.identify import identify
    from controller.registry.policy import DEFAULT_MIN_AGE

    def body(registry: Any) -> int:
        keys = _load_keys(args)
        tap = _tap_once(args)
        who = identify(registry, CardVerifier(keys), tap.uid, tap.ndef)
        if tap.error and not tap.ndef:
            print(f"card {tap.uid.hex()}: {tap.error}")
        if not who.ok:
            print(f"REFUSED card {tap.uid.hex()}: {who.message} [{who.reason}]")
            return REFUSED
        member = who.member
        print(f"card {tap.uid.hex()}: {member.display_name} ({member.player_id}), member {member.status}")
        if args.event:
            event = registry.event(args.event)
            problems = registry.eligibility(member.player_id, event)
            if problems:
                print(f"NOT ELIGIBLE for {event.event_id}: " + "; ".join(problems))
                return REFUSED
            print(f"eligible for {event.event_id} (minimum age {event.min_age})")
            if not registry.is_registered(event.event_id, member.player_id):
                print(f"not registered yet for {event.event_id}")
            else:
                seat = registry.assignment(event.event_id, member.player_id)
                print(
                    "registered; "
                    + (f"table {seat.table_id}, seat {seat.seat}" if seat else "seats not drawn yet")
                )
        else:
            problems = registry.member_problems(member.player_id, DEFAULT_MIN_AGE, _now().date())
            if problems:
                print("NOT ELIGIBLE to play: " + "; ".join(problems))
                return REFUSED
            print(f"eligible to play (age {DEFAULT_MIN_AGE}+ by cool_mule:1.d, photo ID checked)")
        return OK

    return _run(args, body)


def cmd_revoke(args: argparse.Namespace) -> int:
    from controller.registry.errors import RegistryError

    def body(registry: Any) -> int:
        uid = None
        try:
            uid = bytes.fromhex(args.card)
        except ValueError:
            pass
        if uid is None or registry.card(uid) is None:
            member = registry.find_member(args.card)
            if member is None:
                raise RegistryError(
                    f"{args.card!r} is neither a known card UID nor a player ID", "unknown_card"
                )
            active = registry.active_card(member.player_id)
            if active is None:
                raise RegistryError(f"{member.player_id} has no active card", "unknown_card")
            uid = active.uid
        card = registry.revoke_card(uid, now=_now(), reason=args.reason)
        print(
            f"card {card.uid.hex()} of {card.player_id} revoked ({card.revoke_reason}); tables refuse it from now on"
        )
        return OK

    return _run(args, body)


def cmd_event_open(args: argparse.Namespace) -> int:
    from controller.registry.policy import policy_for

    def body(registry: Any) -> int:
        ev = registry.open_event(
            args.event,
            args.name or args.event,
            venue=args.venue or args.profile,
            profile=args.profile,
            starts_at=args.starts or _now(),
            tables=args.tables,
            now=_now(),
            min_age=args.min_age,
            starting_stack=args.stack,
        )
        policy = policy_for(ev.profile)
        print(
            f"event {ev.event_id} open: {len(ev.tables)} tables, {ev.seats} seats, profile {ev.profile}, "
            f"minimum age {ev.min_age}"
            + (f", starting stack {ev.starting_stack}" if ev.starting_stack else "")
        )
        if ev.seat1_button:
            print(f"  seat 1 at each table is the first button ({policy.seat1_button_rule})")
        if policy.late_minutes_after_first_deal:
            print(
                f"  late arrivals: seated no later than {policy.late_minutes_after_first_deal} minutes "
                f"after the first deal ({policy.late_rule})"
            )
        return OK

    return _run(args, body)


def cmd_event_add_table(args: argparse.Namespace) -> int:
    def body(registry: Any) -> int:
        ev = None
        for table in args.table:
            ev = registry.add_table(args.event, table)
        print(f"event {args.event}: {len(ev.tables)} tables, {ev.seats} seats")
        return OK

    return _run(args, body)


def cmd_event_signup(args: argparse.Namespace) -> int:
    from controller.registry.card import CardVerifier
    from controller.registry.errors import RegistryError
    from controller.registry.identify import identify

    def body(registry: Any) -> int:
        status = OK
        arrivals: list[str] = list(args.players)
        for pid in arrivals:
            status = max(status, _signup_one(registry, args, pid))
        if args.tap:
            keys = _load_keys(args)
            verifier = CardVerifier(keys)
            clf = _frontend(args)
            try:
                for n in range(1, args.tap + 1):
                    tap = _tap_once(args, clf, prompt=f"next player: tap your card ({n} of {args.tap})")
                    who = identify(registry, verifier, tap.uid, tap.ndef)
                    if not who.ok:
                        _err(f"card {tap.uid.hex()} refused: {who.message} [{who.reason}]")
                        status = REFUSED
                        continue
                    status = max(status, _signup_one(registry, args, who.player_id))
            finally:
                clf.close()
        if not arrivals and not args.tap:
            raise RegistryError("name the arriving players, or use --tap N to register by card", "no_players")
        return status

    return _run(args, body)


def _signup_one(registry: Any, args: argparse.Namespace, player_id: str) -> int:
    from controller.registry.errors import RegistryError

    try:
        reg = registry.register(args.event, player_id, now=_now(), seed=args.seed)
    except RegistryError as exc:
        _err(f"{exc} [{exc.reason}]")
        return REFUSED
    name = registry.member(player_id).display_name
    line = f"#{reg.order} {player_id} {name} registered for {args.event}"
    seat = registry.assignment(args.event, player_id)
    if seat is not None:
        line += f": table {seat.table_id}, seat {seat.seat}"
    print(line, flush=True)
    return OK


def _print_draw(registry: Any, event_id: str, as_json: bool) -> None:
    ev = registry.event(event_id)
    draw = registry.seat_draw(event_id)
    if as_json:
        for a in draw:
            print(
                json.dumps({"event": ev.event_id, "table": a.table_id, "seat": a.seat, "player": a.player_id})
            )
        return
    from controller.registry.policy import policy_for

    policy = policy_for(ev.profile)
    print(
        f"seat draw for {ev.event_id} ({ev.profile}, seed {ev.draw_seed if ev.draw_seed is not None else 'random'})"
    )
    for table in ev.tables:
        seated = [a for a in draw if a.table_id == table.table_id]
        button = (
            f"first button: seat 1 ({policy.seat1_button_rule})"
            if ev.seat1_button and seated
            else f"first button: per the profile ({policy.seat1_button_rule})"
            if seated
            else "empty"
        )
        print(f"table {table.table_id}: {len(seated)} of {table.seats} seats; {button}")
        for a in seated:
            print(f"  seat {a.seat:>2}  {a.player_id:<10} {registry.member(a.player_id).display_name}")


def cmd_event_draw(args: argparse.Namespace) -> int:
    def body(registry: Any) -> int:
        registry.draw(args.event, seed=args.seed, now=_now())
        _print_draw(registry, args.event, args.json)
        return OK

    return _run(args, body)


def cmd_event_show(args: argparse.Namespace) -> int:
    def body(registry: Any) -> int:
        ev = registry.event(args.event)
        regs = registry.registrations(ev.event_id)
        checkins = {c.player_id: c for c in registry.checkins(ev.event_id)}
        if args.json:
            print(
                json.dumps(
                    {
                        "event": ev.event_id,
                        "profile": ev.profile,
                        "status": ev.status,
                        "seats": ev.seats,
                        "tables": [{"table": t.table_id, "seats": t.seats} for t in ev.tables],
                        "registrations": [r.player_id for r in regs],
                        "draw": [
                            {"table": a.table_id, "seat": a.seat, "player": a.player_id}
                            for a in registry.seat_draw(ev.event_id)
                        ],
                        "checked_in": sorted(checkins),
                    }
                )
            )
            return OK
        print(
            f"event {ev.event_id} ({ev.name}), profile {ev.profile}, {ev.status}, starts {ev.starts_at:%Y-%m-%d %H:%M}"
        )
        print(f"{len(regs)} registered of {ev.seats} seats (arrival order):")
        for r in regs:
            seat = registry.assignment(ev.event_id, r.player_id)
            where = f"table {seat.table_id} seat {seat.seat}" if seat else "-"
            mark = "checked in" if r.player_id in checkins else ""
            print(f"  #{r.order:<3} {r.player_id:<10} {where:<18} {mark}")
        if ev.status != "open":
            _print_draw(registry, ev.event_id, False)
        return OK

    return _run(args, body)
