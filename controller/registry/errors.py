"""Errors of the player registry and the card layer.

Every refusal carries a stable machine-readable `reason` (used in protocol lines and exit messages)
and a human message that says what was wrong and where. Nothing here ever holds a secret.
"""

from __future__ import annotations


class RegistryError(Exception):
    """A registry operation was refused; the registry is unchanged."""

    def __init__(self, message: str, reason: str = "refused"):
        super().__init__(message)
        self.reason = reason


class NotFound(RegistryError):
    def __init__(self, message: str, reason: str = "not_found"):
        super().__init__(message, reason)


class SecretFileError(Exception):
    """The venue key file is missing, unreadable, malformed or too widely readable."""


class CardError(Exception):
    """A card's NDEF content was refused (format or signature). `reason` is the protocol reason."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


class ReaderError(Exception):
    """The NFC reader is missing, busy or silent."""
