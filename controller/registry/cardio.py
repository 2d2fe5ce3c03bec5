"""Writing and checking player cards on a tag (desk side), through nfcpy.

A write is: read the tag, write the signed record, read it back and verify it; only then is the
card recorded in the registry (one transaction, replacing the player's earlier card). On NTAG215/216
the write is all or nothing (`tt2_atomic`): a card pulled away mid-write holds its old content. On
smaller tags nfcpy writes in place; a card pulled away holds no valid record. Either way the desk
asks for the same card back and writes again, so the card ends fully new and verified; a card that
does not come back leaves the registry as it was.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from controller.registry.card import CardVerifier, encode_card
from controller.registry.errors import CardError, RegistryError
from controller.registry.keys import VenueKeys
from controller.registry.reader import POLL_PAUSE, READ_ATTEMPTS, read_tap, sense_tag
from controller.registry.registry import Registry
from controller.registry.tt2_atomic import write_atomically

log = logging.getLogger("smart_table.cards")

WRITE_ATTEMPTS = 3


class CardWriteError(RegistryError):
    pass


@dataclass
class WriteOutcome:
    uid: bytes
    player_id: str
    replaced: list[bytes] = field(default_factory=list)
    attempts: int = 1
    previous: bytes = b""


def wait_for_tag(clf: Any, timeout: float, *, uid: bytes | None = None) -> Any | None:
    import nfc.clf
    import nfc.tag

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            tag = sense_tag(clf, uid=uid)
        except (nfc.clf.CommunicationError, nfc.tag.TagCommandError):
            tag = None
        if tag is not None:
            return tag
        time.sleep(POLL_PAUSE)
    return None


def write_card(
    clf: Any,
    registry: Registry,
    keys: VenueKeys,
    player_id: str,
    *,
    now: datetime,
    wait: float = 15.0,
    say: Callable[[str], None] = lambda s: None,
) -> WriteOutcome:
    """Write, read back, verify and record a card for `player_id` on the next tag presented."""
    import nfc.clf
    import nfc.tag

    member = registry.member(player_id)
    if member.status != "active":
        raise CardWriteError(
            f"{player_id}'s membership is {member.status}: no card is issued", f"member_{member.status}"
        )
    say(f"present a card for {member.display_name} ({player_id}) to the reader")
    tag = wait_for_tag(clf, wait)
    if tag is None:
        raise CardWriteError(f"no card presented within {wait:g} s", "no_card")
    uid = bytes(tag.identifier)
    registry.check_card_issuable(uid, player_id)
    if tag.type == "Type4Tag":  # an NTAG 424 DNA: personalised, not merely written
        return _personalise_ntag424(clf, tag, registry, keys, player_id, now=now)
    message = encode_card(uid, player_id, keys)
    for _ in range(READ_ATTEMPTS - 1):  # a missed read looks like "no NDEF": look again first
        if tag.ndef is not None:
            break
        time.sleep(POLL_PAUSE)
        tag = wait_for_tag(clf, 1.0, uid=uid) or tag
    if tag.ndef is None:
        raise CardWriteError(
            f"tag {uid.hex()} ({tag.type}) has no NDEF data area; use an NFC Forum tag (NTAG213/215/216)",
            "not_ndef",
        )
    if not tag.ndef.is_writeable:
        raise CardWriteError(f"tag {uid.hex()} is read-only (locked)", "read_only")
    if tag.ndef.capacity < len(message):
        raise CardWriteError(
            f"tag {uid.hex()} holds {tag.ndef.capacity} bytes, the card needs {len(message)}", "too_small"
        )
    previous = bytes(tag.ndef.octets)
    verifier = CardVerifier(keys)
    for attempt in range(1, WRITE_ATTEMPTS + 1):
        try:
            if tag is None or tag.ndef is None:
                raise nfc.clf.TimeoutError("card not readable in the field")
            if not write_atomically(tag, message):  # NTAG215/216: fully old or fully new
                tag.ndef.octets = message  # in place (NTAG213, Type 3): put back and rewrite if torn
            readback = _read_back(clf, uid)
            if readback != message:
                raise nfc.clf.TimeoutError("read-back did not return the written record")
            verifier.verify(uid, readback)
        except (nfc.clf.CommunicationError, nfc.tag.TagCommandError) as exc:
            log.warning("event=card_write_interrupted uid=%s attempt=%d error=%s", uid.hex(), attempt, exc)
            if attempt == WRITE_ATTEMPTS:
                break
            say(f"card {uid.hex()} left the reader during the write: put it back (waiting {wait:g} s)")
            tag = wait_for_tag(clf, wait, uid=uid)
            if tag is None:
                break
            continue
        except (AttributeError, ValueError) as exc:  # nfcpy: area not writeable / message too long
            raise CardWriteError(f"card {uid.hex()} cannot be written: {exc}", "not_writeable") from None
        except CardError as exc:  # written bytes read back but do not verify: keys changed under us?
            raise CardWriteError(
                f"card {uid.hex()} read back but does not verify: {exc}", "verify_failed"
            ) from None
        replaced = registry.issue_card(uid, player_id, keys.venue, keys.current, now=now)
        log.info("event=card_written uid=%s player=%s attempts=%d", uid.hex(), player_id, attempt)
        return WriteOutcome(uid, player_id, replaced, attempt, previous)
    raise CardWriteError(
        f"card {uid.hex()} was taken away during the write and not put back: it holds no valid player record "
        f"(every table refuses it); the registry is unchanged. Run write-card again with this card.",
        "write_interrupted",
    )


def _personalise_ntag424(
    clf: Any, tag: Any, registry: Registry, keys: VenueKeys, player_id: str, *, now: datetime
) -> WriteOutcome:
    """Make a blank NTAG 424 DNA this player's card (controller.registry.ntag424), read it back,
    verify its SUN message and record it with the read-back's counter (so that read is spent)."""
    import nfc.clf
    import nfc.tag

    from controller.registry.card import ntag424_card_keys, sun_card_layout
    from controller.registry.ntag424 import Ntag424Error, personalise

    uid = bytes(tag.identifier)
    try:
        personalise(tag.transceive, sun_card_layout(player_id, keys), ntag424_card_keys(uid, keys))
    except Ntag424Error as exc:
        raise CardWriteError(
            f"NTAG 424 DNA {uid.hex()} cannot be personalised ({exc}): only a blank card with its "
            "factory keys can become a player card",
            "not_blank",
        ) from None
    except (nfc.clf.CommunicationError, nfc.tag.TagCommandError) as exc:
        raise CardWriteError(
            f"NTAG 424 DNA {uid.hex()} left the reader during personalisation ({exc}); the registry is unchanged",
            "write_interrupted",
        ) from None
    readback = _read_back(clf, uid)
    try:
        card = CardVerifier(keys).verify(uid, readback or b"")
    except CardError as exc:
        raise CardWriteError(
            f"card {uid.hex()} read back but does not verify: {exc}", "verify_failed"
        ) from None
    if card.player_id != player_id:  # a card personalised for someone else in a run torn before
        raise CardWriteError(
            f"NTAG 424 DNA {uid.hex()} already holds {card.player_id}'s record; use a new card", "card_in_use"
        )
    replaced = registry.issue_card(uid, player_id, keys.venue, keys.current, now=now)
    assert card.counter is not None
    registry.advance_sun_counter(uid, card.counter)
    log.info("event=card_written uid=%s player=%s kind=ntag424", uid.hex(), player_id)
    return WriteOutcome(uid, player_id, replaced, 1, b"")


def _read_back(clf: Any, uid: bytes) -> bytes | None:
    """The NDEF message now on the card, through a fresh activation (a missed read is retried)."""
    for _ in range(READ_ATTEMPTS):
        result = read_tap(clf, uid=uid)
        if result is not None and result[1].uid == uid and result[1].error is None:
            return result[1].ndef
        time.sleep(POLL_PAUSE)
    return None
