"""The NFC reader: nfcpy in a worker thread, card taps delivered to asyncio.

Devices are nfcpy paths (`tty:S0:pn532` for a PN532 on the Pi's UART, `tty:USB0:pn532`, `usb`,
`usb:054c:06c3`, `udp:localhost:54321` for nfcpy's simulated link) or `sim:<name>` /
`sim:<spool dir>` for the simulated reader. Each is a card reader found by name through
controller.devices (`NfcpyReader` here is the real one). A missing or silent reader is reported
with what to check and retried; a tag that cannot be read is reported and skipped; a card that
leaves the field mid-read is read again while it is still there.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import random
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

from controller.registry.errors import ReaderError

log = logging.getLogger("smart_table.nfc")

READ_ATTEMPTS = 3  # a card leaving the field mid-read is re-read this many times
POLL_PAUSE = 0.03  # seconds between polls when the field is empty


@dataclass(frozen=True)
class Tap:
    """One card presented to the reader. `ndef` is the raw NDEF message (b'' for none)."""

    uid: bytes
    ndef: bytes
    tag_type: str = ""
    error: str | None = None  # set when the tag was seen but its NDEF data could not be read
    seen_at: float = 0.0  # time.perf_counter() when the tag was activated


def _hint(device: str) -> str:
    if device.startswith("tty:"):
        port = device.split(":")[1]
        return (
            f"check the wiring and that /dev/tty{port} exists, the serial console is disabled "
            f"(raspi-config) and the service user is in the 'dialout' group"
        )
    if device.startswith("usb"):
        return "check `lsusb`, the udev rule for the reader, and that no other process holds it"
    if device.startswith("udp"):
        return "the UDP peer is not answering"
    return "check the device path"


class NfcpyReader:
    """A reader nfcpy drives at an nfcpy device path (`usb`, `tty:AMA0:pn532`, `udp:host:port`): the
    `reader.usb`, `reader.tty` and `reader.udp` devices. Meets controller.devices.CardReader."""

    def __init__(self, device: str) -> None:
        self.device = device

    def frontend(self) -> Any:
        """An opened nfc.ContactlessFrontend, or ReaderError with what to check."""
        import nfc

        device = self.device
        try:
            clf = nfc.ContactlessFrontend()
            if not clf.open(device):
                raise ReaderError(f"no NFC reader found at {device!r}: {_hint(device)}")
            return clf
        except ReaderError:
            raise
        except OSError as exc:
            if exc.errno == errno.EACCES:
                raise ReaderError(f"NFC reader {device!r}: permission denied: {_hint(device)}") from None
            if exc.errno == errno.EBUSY:
                raise ReaderError(f"NFC reader {device!r} is busy (used by another process)") from None
            raise ReaderError(
                f"NFC reader {device!r} did not answer ({exc.strerror or exc}): {_hint(device)}"
            ) from None
        except Exception as exc:  # nfcpy driver errors on a silent chip, bad paths
            raise ReaderError(f"NFC reader {device!r} failed to start: {type(exc).__name__}: {exc}") from None


def open_frontend(device: str) -> Any:
    """An opened nfc.ContactlessFrontend for the reader `device` names, or ReaderError with what to check."""
    from controller.devices import DeviceError, open_reader

    try:
        reader = open_reader(device)
        return reader.frontend()
    except DeviceError as exc:
        raise ReaderError(str(exc)) from None


def _targets(clf: Any) -> list[Any]:
    """Type A (NTAG, Type 4) and Type F (FeliCa / Type 3). nfcpy's UDP link only emulates Type 3
    tags, and each unanswered Type A poll there costs a second, so it polls Type F only."""
    import nfc.clf

    if getattr(clf.device, "chipset_name", "") == "UDP":
        return [nfc.clf.RemoteTarget("212F")]
    return [nfc.clf.RemoteTarget("106A"), nfc.clf.RemoteTarget("212F")]


def sense_tag(clf: Any, *, uid: bytes | None = None) -> Any | None:
    """Poll once; the activated nfcpy Tag, or None when no (readable) tag is in the field."""
    import nfc.clf
    import nfc.tag

    targets = _targets(clf)
    if uid is not None and len(uid) in (4, 7, 10):
        targets = [nfc.clf.RemoteTarget("106A", sel_req=bytearray(uid))]
    target = clf.sense(*targets, iterations=1)
    if target is None:
        return None
    tag = nfc.tag.activate(clf, target)
    if tag is None:
        log.warning("event=tag_unreadable reason=activation_failed target=%s", target)
        return None
    if uid is not None and bytes(tag.identifier) != uid:
        return None
    return tag


def read_tap(clf: Any, uid: bytes | None = None) -> tuple[Any, Tap] | None:
    """Read one tag in the field (UID and NDEF message), retrying when it slips away mid-read.
    With `uid` (a card just seen), a missed poll is retried instead of meaning "no card"."""
    import nfc.clf
    import nfc.tag

    error: str | None = None
    for attempt in range(READ_ATTEMPTS):
        try:
            tag = sense_tag(clf, uid=uid)
            if tag is None:
                if uid is None:
                    return None
                time.sleep(POLL_PAUSE)
                continue
            seen = time.perf_counter()
            uid = bytes(tag.identifier)
            ndef = tag.ndef
            if ndef is None:  # blank, unformatted, or a read that missed (UDP lock-step): look again
                error = "no NDEF data on the tag (blank, unformatted or unreadable)"
                time.sleep(POLL_PAUSE)
                continue
            return tag, Tap(uid, bytes(ndef.octets), tag.type, None, seen)
        except (nfc.clf.CommunicationError, nfc.tag.TagCommandError) as exc:
            error = f"{type(exc).__name__}: {exc}"
            log.info("event=tag_read_retry attempt=%d error=%s", attempt + 1, error)
            time.sleep(POLL_PAUSE)
        except OSError:
            raise
        except Exception as exc:  # a tag nfcpy cannot parse must not stop the reader
            error = f"{type(exc).__name__}: {exc}"
            break
    if uid is None:
        log.warning("event=tag_unreadable error=%s", error)
        return None
    return None, Tap(
        uid, b"", "", f"card could not be read: {error or 'it left the field'}", time.perf_counter()
    )


def _poll_pause(clf: Any) -> float:
    """Pause between polls of an empty field. On nfcpy's UDP link a poll and an emulated tag that
    both cycle about once a second can miss each other again and again (lock-step): a random pause
    breaks the rhythm."""
    if getattr(clf.device, "chipset_name", "") == "UDP":
        return POLL_PAUSE + random.uniform(0.0, 0.4)
    return POLL_PAUSE


def wait_removed(
    clf: Any, tag: Any, *, limit: float = 30.0, terminate: Callable[[], bool] = lambda: False
) -> None:
    """Block until the tag leaves the field (so one tap is reported once)."""
    deadline = time.monotonic() + limit
    while tag is not None and not terminate() and time.monotonic() < deadline:
        try:
            if not tag.is_present:
                return
        except Exception:
            return
        time.sleep(0.1)


def _reader_thread(
    device: str, emit: Callable[[Any], None], stop: threading.Event, retry_interval: float
) -> None:
    clf = None
    last_error = None
    last_uid: bytes | None = None  # a card still lying on the reader is reported once
    while not stop.is_set():
        if clf is None:
            try:
                clf = open_frontend(device)
                log.info("event=reader_open device=%s", device)
                last_error = None
            except ReaderError as exc:
                if str(exc) != last_error:
                    log.error(
                        "event=reader_unavailable device=%s error=%s retry_in=%.0fs",
                        device,
                        exc,
                        retry_interval,
                    )
                    emit(ReaderError(str(exc)))
                    last_error = str(exc)
                stop.wait(retry_interval)
                continue
        try:
            result = read_tap(clf)
            if result is None:
                last_uid = None  # the field is empty
                stop.wait(_poll_pause(clf))
                continue
            tag, tap = result
            if tap.uid == last_uid:
                stop.wait(POLL_PAUSE)
                continue
            last_uid = tap.uid
            log.info("event=tap uid=%s bytes=%d error=%s", tap.uid.hex(), len(tap.ndef), tap.error or "-")
            emit(tap)
            wait_removed(clf, tag, terminate=stop.is_set)
        except OSError as exc:
            message = f"NFC reader {device!r} lost ({exc.strerror or exc}); reopening"
            log.error("event=reader_lost device=%s error=%s", device, exc)
            emit(ReaderError(message))
            try:
                clf.close()
            except Exception:
                pass
            clf = None
            stop.wait(retry_interval)
        except Exception as exc:  # never let one bad exchange kill the reader
            log.error("event=reader_error device=%s error=%s: %s", device, type(exc).__name__, exc)
            stop.wait(POLL_PAUSE)
    if clf is not None:
        try:
            clf.close()
        except Exception:
            pass


async def watch_reader(
    device: str, *, retry_interval: float = 2.0, on_error: Callable[[str], None] | None = None
) -> AsyncIterator[Tap]:
    """Taps from the reader at `device`, forever. Reader problems are logged, passed to `on_error`,
    and retried every `retry_interval` seconds; they never end the iteration."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    stop = threading.Event()

    def emit(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # loop closed while the thread was reading
            stop.set()

    thread = threading.Thread(
        target=_reader_thread,
        args=(device, emit, stop, retry_interval),
        name=f"nfc-reader-{device}",
        daemon=True,
    )
    thread.start()
    try:
        while True:
            item = await queue.get()
            if isinstance(item, ReaderError):
                if on_error is not None:
                    on_error(str(item))
                continue
            yield item
    finally:
        stop.set()
        await asyncio.get_running_loop().run_in_executor(None, thread.join, 5.0)
