"""Who is this card? Signature first, then the registry: the one check shared by the desk
(`register check`) and the table (`TableCheckIn`)."""

from __future__ import annotations

from dataclasses import dataclass

from controller.registry.card import CardVerifier
from controller.registry.errors import CardError
from controller.registry.registry import Member, Registry


@dataclass(frozen=True)
class Identity:
    """Outcome of one card check. `reason` is None when the card and its holder are in good standing."""

    uid: bytes
    reason: str | None
    message: str
    player_id: str | None = None
    member: Member | None = None

    @property
    def ok(self) -> bool:
        return self.reason is None


def identify(registry: Registry, verifier: CardVerifier, uid: bytes, message: bytes) -> Identity:
    uid = bytes(uid)
    try:
        card = verifier.verify(uid, message)
    except CardError as exc:
        return Identity(uid, exc.reason, str(exc))
    member = registry.find_member(card.player_id)
    if member is None:
        return Identity(
            uid, "unknown_player", f"card names player {card.player_id}, who is not a member", card.player_id
        )
    issued = registry.card(uid)
    if issued is None:
        return Identity(
            uid, "unknown_card", f"tag {uid.hex()} was never issued by this registry", card.player_id, member
        )
    if issued.player_id != card.player_id:
        return Identity(
            uid, "forged_card", f"tag {uid.hex()} was issued to another player", card.player_id, member
        )
    if issued.revoked:
        return Identity(
            uid,
            "revoked_card",
            f"card {uid.hex()} was revoked ({issued.revoke_reason})",
            card.player_id,
            member,
        )
    if card.counter is not None:  # NTAG 424 DNA: every genuine read counts up; a copy repeats one
        last = registry.advance_sun_counter(uid, card.counter)
        if last is not None:
            return Identity(
                uid,
                "replayed_card",
                f"card {uid.hex()} read with counter {card.counter}, but {last} was seen already: "
                "a copied or replayed read",
                card.player_id,
                member,
            )
    if member.status != "active":
        why = f" ({member.status_reason})" if member.status_reason else ""
        return Identity(
            uid,
            f"member_{member.status}",
            f"{member.player_id}'s membership is {member.status}{why}",
            card.player_id,
            member,
        )
    return Identity(uid, None, f"{member.display_name} ({member.player_id})", card.player_id, member)
