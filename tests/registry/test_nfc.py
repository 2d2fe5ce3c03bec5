"""Cards through nfcpy's real code: the simulated NTAG reader, tears mid-write, the UDP Type 3 tag,
and `watch_reader` feeding the table check-in."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import ndef
import pytest

from controller.registry.card import CardVerifier, encode_card
from controller.registry.cardio import CardWriteError, write_card
from controller.registry.checkin import TableCheckIn
from controller.registry.errors import RegistryError
from controller.registry.reader import read_tap, watch_reader
from hil.nfc import SimulatedNtag, SimulatedReader, Type3Emulator, spool_tap
from tests.registry.conftest import NOW, add_member, open_event


@pytest.fixture
def reader():
    return SimulatedReader("test")


@pytest.fixture
def desk(registry, keys):
    add_member(registry, "P1", "Ann")
    return registry, keys


def test_read_card_through_nfcpy(reader, keys):
    tag = SimulatedNtag("ntag215")
    tag.load_message(encode_card(tag.uid, "P1", keys))
    reader.present(tag)
    nfc_tag, tap = read_tap(reader.frontend())
    assert "NTAG215" in str(nfc_tag)
    assert tap.uid == tag.uid and tap.error is None
    assert CardVerifier(keys).verify(tap.uid, tap.ndef).player_id == "P1"


def test_empty_field_reads_nothing(reader):
    assert read_tap(reader.frontend()) is None


def test_write_card_then_read_back_and_registry(reader, desk):
    registry, keys = desk
    blank = SimulatedNtag("ntag213")
    reader.present(blank)
    out = write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=1)
    assert out.uid == blank.uid and out.attempts == 1
    assert blank.stored_message() == encode_card(blank.uid, "P1", keys)  # as the tag memory holds it
    assert registry.active_card("P1").uid == blank.uid


def test_rewrite_replaces_previous_card(reader, desk):
    registry, keys = desk
    first, second = SimulatedNtag(), SimulatedNtag()
    reader.present(first)
    write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=1)
    reader.present(second)
    out = write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=1)
    assert out.replaced == [first.uid]
    assert registry.card(first.uid).revoke_reason == "replaced"


def test_tag_removed_mid_write_and_put_back_ends_fully_new(reader, desk):
    registry, keys = desk
    tag = SimulatedNtag("ntag215")
    old = b"".join(ndef.message_encoder([ndef.TextRecord("old content")]))
    tag.load_message(old)
    tag.tear_after_writes = 3  # the player pulls the card away after 3 page writes
    reader.present(tag)
    prompts: list[str] = []

    def put_back_when_asked():
        while not any("put it back" in p for p in prompts):
            time.sleep(0.01)
        time.sleep(0.05)
        reader.present(tag)

    helper = threading.Thread(target=put_back_when_asked)
    helper.start()
    out = write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=3, say=prompts.append)
    helper.join()
    assert out.attempts == 2 and out.previous == old
    assert tag.stored_message() == encode_card(tag.uid, "P1", keys)  # fully new, verified by read-back
    assert registry.active_card("P1").uid == tag.uid


def test_tag_removed_mid_write_never_returns_registry_unchanged(reader, desk):
    registry, keys = desk
    tag = SimulatedNtag("ntag215")
    tag.tear_after_writes = 2
    reader.present(tag)
    with pytest.raises(CardWriteError) as err:
        write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=0.3)
    assert err.value.reason == "write_interrupted"
    assert "registry is unchanged" in str(err.value)
    assert registry.card(tag.uid) is None and registry.active_card("P1") is None
    # whatever the torn card holds now, no table accepts it
    with pytest.raises(Exception):  # noqa: B017 - CardError of any reason
        CardVerifier(keys).verify(tag.uid, tag.stored_message() or b"")


def test_card_too_small_refused_before_writing(reader, registry, keys):
    long_id = "P" + "9" * 31
    add_member(registry, long_id, "Long")
    tag = SimulatedNtag("ntag213")
    reader.present(tag)
    with pytest.raises(CardWriteError) as err:
        write_card(reader.frontend(), registry, keys, long_id, now=NOW, wait=1)
    assert err.value.reason == "too_small" and tag.writes == 0


def test_write_refuses_another_players_card(reader, desk):
    registry, keys = desk
    add_member(registry, "P2", "Bo")
    tag = SimulatedNtag()
    reader.present(tag)
    write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=1)
    writes = tag.writes
    with pytest.raises(RegistryError) as err:
        write_card(reader.frontend(), registry, keys, "P2", now=NOW, wait=1)
    assert err.value.reason == "card_in_use" and tag.writes == writes
    assert CardVerifier(keys).verify(tag.uid, tag.stored_message()).player_id == "P1"


def test_no_card_presented(reader, desk):
    registry, keys = desk
    with pytest.raises(CardWriteError) as err:
        write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=0.2)
    assert err.value.reason == "no_card"


def test_truncated_ndef_tlv_is_reported_not_crashing(reader, keys):
    tag = SimulatedNtag("ntag213")
    message = encode_card(tag.uid, "P1", keys)
    tag.load_message(message)
    tag.memory[17] = 0xFF  # TLV claims a 3-byte length field: far beyond the tag's memory
    tag.memory[18:20] = b"\x7f\xff"
    reader.present(tag)
    result = read_tap(reader.frontend())
    assert result is not None
    tap = result[1]
    assert tap.uid == tag.uid and tap.ndef == b""


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _first_tap(device: str, timeout: float = 10.0, errors: list[str] | None = None):
    async def first():
        async for tap in watch_reader(
            device, retry_interval=0.2, on_error=(errors.append if errors is not None else None)
        ):
            return tap

    return await asyncio.wait_for(first(), timeout)


async def test_type3_tag_over_udp_read_by_watch_reader_and_checked_in(registry, keys):
    port = _free_udp_port()
    open_event(registry, tables=(("T1", 6),))
    add_member(registry, "P1", "Ann")
    emulator = Type3Emulator(b"", port=port)
    emulator.load_message(encode_card(emulator.uid, "P1", keys))
    registry.issue_card(emulator.uid, "P1", "cool_mule", keys.current, now=NOW)
    registry.register("E1", "P1", now=NOW)
    registry.draw("E1", seed=1, now=NOW)
    emulator.start()
    try:
        tap = await _first_tap(f"udp:localhost:{port}")
    finally:
        emulator.stop()
    assert tap.uid == emulator.uid and tap.tag_type == "Type3Tag"
    table = TableCheckIn(
        registry, venue="cool_mule", table_id="T1", event_id="E1", verifier=CardVerifier(keys)
    )
    result = table.on_tap(tap.uid, tap.ndef, NOW)
    assert result.accepted and result.lines[0]["type"] == "seat"


async def test_watch_reader_simulated_named_reader(keys):
    tag = SimulatedNtag.with_message(b"", uid=bytes.fromhex("04000000000042"))
    tag.load_message(encode_card(tag.uid, "P7", keys))
    SimulatedReader.named("watch-test").present(tag, dwell=2.0)
    tap = await _first_tap("sim:watch-test")
    assert CardVerifier(keys).verify(tap.uid, tap.ndef).player_id == "P7"


async def test_watch_reader_spool_directory_from_another_process(tmp_path, keys):
    spool = tmp_path / "reader"
    tag = SimulatedNtag()
    tag.load_message(encode_card(tag.uid, "P8", keys))
    spool_tap(spool, tag, dwell=2.0)
    tap = await _first_tap(f"sim:{spool}")
    assert tap.uid == tag.uid and CardVerifier(keys).verify(tap.uid, tap.ndef).player_id == "P8"
    assert list(spool.glob("tap-*.json")) == []  # consumed


async def test_missing_reader_reports_and_retries_without_crashing():
    errors: list[str] = []
    with pytest.raises(TimeoutError):
        await _first_tap("tty:S99:pn532", timeout=1.0, errors=errors)
    assert errors and "no NFC reader found at 'tty:S99:pn532'" in errors[0]
    assert "dialout" in errors[0]


def test_write_and_check_never_log_the_secret(reader, desk, caplog):
    import logging

    registry, keys = desk
    caplog.set_level(logging.DEBUG)  # nfcpy's own debug logging included: it shows frames, not keys
    reader.present(SimulatedNtag())
    write_card(reader.frontend(), registry, keys, "P1", now=NOW, wait=1)
    secret = keys.keys[keys.current].reveal()
    assert secret.hex() not in caplog.text.lower() and secret.hex().upper() not in caplog.text


def test_oversized_ndef_on_a_big_tag_is_read_and_refused(reader, keys):
    from controller.registry.errors import CardError

    tag = SimulatedNtag("ntag216")
    tag.load_message(
        b"".join(ndef.message_encoder([ndef.Record("application/octet-stream", "", b"x" * 800)]))
    )
    reader.present(tag)
    tap = read_tap(reader.frontend())[1]
    assert len(tap.ndef) > 800
    with pytest.raises(CardError) as err:
        CardVerifier(keys).verify(tap.uid, tap.ndef)
    assert err.value.reason == "unreadable_card" and "512-byte limit" in str(err.value)


def test_write_card_to_type3_tag_over_udp(desk):
    from controller.registry.reader import open_frontend

    registry, keys = desk
    emulator = Type3Emulator(b"", port=_free_udp_port()).start()
    clf = open_frontend(f"udp:localhost:{emulator.port}")
    try:
        out = write_card(clf, registry, keys, "P1", now=NOW, wait=5)
    finally:
        clf.close()
        emulator.stop()
    assert out.uid == emulator.uid
    assert emulator.stored_message() == encode_card(emulator.uid, "P1", keys)  # written via nfcpy's tt3 code
    assert registry.active_card("P1").uid == emulator.uid
