"""Card codes as the protocol writes them: rank then suit (`Ah`, `Td`, `7c`)."""

from __future__ import annotations

RANKS = "23456789TJQKA"
SUITS = "cdhs"
ALL_CARDS = frozenset(r + s for r in RANKS for s in SUITS)
ALL_CODES = tuple(r + s for r in RANKS for s in SUITS)  # the 52 codes in rank-major order


def is_card(code: object) -> bool:
    return isinstance(code, str) and code in ALL_CARDS


def card_problem(code: object) -> str | None:
    """Why `code` is not a card code, or None when it is one."""
    if not isinstance(code, str):
        return f"expected a card code like 'Ah', got {code!r}"
    if code in ALL_CARDS:
        return None
    if len(code) == 2 and code[0].upper() in RANKS and code[1].lower() in SUITS:
        return f"card {code!r} must be written {code[0].upper()}{code[1].lower()!s}"
    return f"{code!r} is not a card (rank 2-9,T,J,Q,K,A then suit c,d,h,s)"
