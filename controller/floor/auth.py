"""The director's page login: one password (or token) from a secret file, sessions by cookie.

The page steers the tournament (moves players, starts and pauses the clock) and shows every
player's stack, so off the floor PC itself it is never served without a login. The secret is the
first line of `[web] password_file`, held to the service's rule for secret files (mode 0600, not
empty: `controller.service.config.secret_file_problem`). A correct password gets a random session
id in an HttpOnly, SameSite=Strict cookie (a page on another site cannot post with it); sessions
live in the floor's memory, so a restart of the floor asks for the password again.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import time
from dataclasses import dataclass, field

from controller.floor.config import FloorConfig, FloorConfigError

COOKIE = "floor_session"
SESSION_SECONDS = 16 * 3600  # a long tournament evening
MAX_SESSIONS = 200


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def page_secret(cfg: FloorConfig) -> str | None:
    """The page's password, or None where the page needs no login (no password_file and the page
    bound to loopback only). Raises FloorConfigError naming the file and the fix."""
    from controller.service.config import read_secret, secret_file_problem

    path = cfg.web_password_file
    if not path:
        if _loopback(cfg.web_bind):
            return None
        raise FloorConfigError(
            f"web.bind {cfg.web_bind!r} serves the director's page to the network, but web.password_file "
            "is not set: set it to a file holding the page's password (first line, mode 0600)"
        )
    problem = secret_file_problem(path)
    if problem:
        raise FloorConfigError(f"web.password_file: {problem}")
    try:
        secret = read_secret(path)
    except OSError as exc:
        raise FloorConfigError(f"web.password_file {path!r}: {exc.strerror}; create it, mode 0600") from None
    if not secret:
        raise FloorConfigError(f"web.password_file {path!r}: the first line (the password) is empty")
    return secret


@dataclass
class Sessions:
    secret: str | None
    _live: dict[str, float] = field(default_factory=dict)  # session id -> expiry

    @property
    def required(self) -> bool:
        return self.secret is not None

    def login(self, password: str, now: float | None = None) -> str | None:
        """A new session id for the right password, else None (compared in constant time)."""
        if self.secret is None or not hmac.compare_digest(password.encode(), self.secret.encode()):
            return None
        now = time.time() if now is None else now
        self._live = {k: v for k, v in self._live.items() if v > now}
        while len(self._live) >= MAX_SESSIONS:  # the oldest go first
            del self._live[min(self._live, key=self._live.__getitem__)]
        sid = secrets.token_urlsafe(32)
        self._live[sid] = now + SESSION_SECONDS
        return sid

    def valid(self, sid: str | None, now: float | None = None) -> bool:
        if not self.required:
            return True
        if not sid:
            return False
        expiry = self._live.get(sid)
        return expiry is not None and expiry > (time.time() if now is None else now)

    def logout(self, sid: str | None) -> None:
        if sid:
            self._live.pop(sid, None)
