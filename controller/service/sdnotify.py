"""sd_notify(3) without a dependency: one datagram to $NOTIFY_SOCKET per state change.

READY=1 once the devices are open, WATCHDOG=1 from the main loop while it is healthy, STATUS= for
`systemctl status`, STOPPING=1 on the way out. Outside systemd (no NOTIFY_SOCKET) every call is a
no-op, so the same code runs in a terminal and in tests.
"""

from __future__ import annotations

import os
import socket


def notify(message: str) -> bool:
    """Send `message` (e.g. "READY=1\\nSTATUS=serving"); False when not under systemd or unreachable."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):  # abstract namespace
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall(message.encode())
    except OSError:
        return False
    return True


def watchdog_interval() -> float | None:
    """Seconds between watchdog pings (half of WatchdogSec), or None when no watchdog is armed for us."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return max(int(usec) / 1e6 / 2, 0.05)
    except ValueError:
        return None
