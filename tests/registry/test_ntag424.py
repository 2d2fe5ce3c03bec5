"""Personalising an NTAG 424 DNA at the desk: EV2 authentication and CommMode.FULL commands checked
against NXP AN12196's worked examples, then a blank simulated tag made a player card through nfcpy's
own ISO-DEP code, by `register write-card`, and tapped and copied from another process."""

from __future__ import annotations

import os
import subprocess
import sys

import nfc
import nfc.clf
import nfc.tag
import pytest

from controller.registry.card import CardVerifier, ntag424_card_keys, sun_card_layout
from controller.registry.keys import Secret, VenueKeys
from controller.registry.ntag424 import Ntag424Error, Session, authenticate, personalise
from hil.nfc import SimulatedNtag424, SimulatedReader
from tests.registry.test_cli import add, desk, run, tap_later  # noqa: F401  (desk: a fixture)

H = bytes.fromhex


def replay_tag(*answers: bytes):
    sent: list[bytes] = []

    def transceive(apdu: bytes) -> bytes:
        sent.append(apdu)
        return answers[len(sent) - 1]

    return transceive, sent


@pytest.mark.parametrize(
    ("rnd_a", "part1", "part2", "sent2", "ti", "enc", "mac"),
    [
        (  # AN12196 section 6.6: AuthenticateEV2First with key 0x00 (factory key)
            "13C5DB8A5930439FC3DEF9A4C675360F",
            "A04C124213C186F22399D33AC2A3021591AF",
            "3FA64DB5446D1F34CD6EA311167F5E4985B89690C04A05F17FA7AB2F081206639100",
            "90AF00002035C3E05A752E0144BAC0DE51C1F22C56B34408A23D8AEA266CAB947EA8E0118D00",
            "9D00C4DF",
            "1309C877509E5A215007FF0ED19CA564",
            "4C6626F5E72EA694202139295C7A7FC7",
        ),
        (  # AN12196 section 6.10
            "B98F4C50CF1C2E084FD150E33992B048",
            "B875CEB0E66A6C5CD00898DC371F92D191AF",
            "0CC9A8094A8EEA683ECAAC5C7BF20584206D0608D477110FC6B3D5D3F65C3A6A9100",
            "90AF000020FF0306E47DFBC50087C4D8A78E88E62DE1E8BE457AA477C707E2F0874916A8B100",
            "7614281A",
            "7A93D6571E4B180FCA6AC90C9A7488D4",
            "FC4AF159B62E549B5812394CAB1918CC",
        ),
    ],
)
def test_an12196_authentication(rnd_a, part1, part2, sent2, ti, enc, mac):
    transceive, sent = replay_tag(H(part1), H(part2))
    session = authenticate(transceive, 0, bytes(16), H(rnd_a))
    assert sent[0] == H("9071000002000000") and sent[1] == H(sent2)
    assert (session.ti, session.enc_key, session.mac_key) == (H(ti), H(enc), H(mac))


def test_an12196_commands_in_full_mode():
    # section 6.12: WriteData of 10 bytes to file 03 in CommMode.FULL, and the tag's MAC-only answer
    s = Session(H("7A93D6571E4B180FCA6AC90C9A7488D4"), H("FC4AF159B62E549B5812394CAB1918CC"), H("7614281A"))
    apdu = s.full_command(0x8D, H("030000000A0000"), H("0102030405060708090A"))
    assert apdu == H("908D00001F030000000A00006B5E6804909962FC4E3FF5522CF0F8436C0C53315B9C73AA00")
    assert s.check_response(H("C26D236E4A7C046D9100")) == b"" and s.counter == 1
    # section 5.4: WriteData of 128 bytes (an NDEF record with SDM mirrors) to file 02
    s = Session(H("1309C877509E5A215007FF0ED19CA564"), H("4C6626F5E72EA694202139295C7A7FC7"), H("9D00C4DF"))
    record = H(
        "0051D1014D550463686F6F73652E75726C2E636F6D2F6E7461673432343F653D"
        "3030303030303030303030303030303030303030303030303030303030303030"
        "26633D30303030303030303030303030303030"
    )
    apdu = s.full_command(0x8D, H("02000000800000"), record + bytes(128 - len(record)))
    assert apdu.hex().upper().startswith("908D00009F02000000800000421C73A27D827658AF481FDFF20A5025B559D0E3")
    assert (
        apdu.hex()
        .upper()
        .endswith("F669170FA88CE8C4E3A4A7BBBEF0FD971FF532C3A802AF745660F2B4D1D9A8499661EBF300")
    )
    assert s.check_response(H("FC222E5F7A5424529100")) == b""
    with pytest.raises(Ntag424Error, match="MAC"):
        s.check_response(H("FC222E5F7A5424529100"))  # the counter moved on: a replayed answer fails


KEYS = VenueKeys("cool_mule", "k1", {"k1": Secret(bytes(range(32)))})


def activated(tag: SimulatedNtag424):
    reader = SimulatedReader("perso")
    reader.present(tag)
    clf = reader.frontend()
    return clf, nfc.tag.activate(clf, clf.sense(nfc.clf.RemoteTarget("106A")))


def test_a_blank_tag_personalised_through_nfcpy_signs_its_reads_and_locks():
    blank = SimulatedNtag424()
    _, tag = activated(blank)
    assert tag.type == "Type4Tag" and tag.ndef is not None and tag.ndef.octets == b""  # factory: empty
    personalise(tag.transceive, sun_card_layout("P0001", KEYS), ntag424_card_keys(blank.uid, KEYS))
    _, again = activated(blank)
    card = CardVerifier(KEYS).verify(blank.uid, bytes(again.ndef.octets))
    assert (card.player_id, card.counter) == ("P0001", 1)
    _, third = activated(blank)
    with pytest.raises(Ntag424Error, match="91AE"):  # the factory key is gone: nobody else re-keys it
        authenticate(third.transceive, 0, bytes(16))
    other = VenueKeys("cool_mule", "k1", {"k1": Secret(bytes(32))})  # another venue's desk
    with pytest.raises(Ntag424Error, match="neither the factory key nor this card's"):
        personalise(third.transceive, sun_card_layout("P0002", other), ntag424_card_keys(blank.uid, other))
    _, fourth = activated(blank)
    assert CardVerifier(KEYS).verify(blank.uid, bytes(fourth.ndef.octets)).player_id == "P0001"


def test_a_personalisation_torn_at_any_command_is_finished_by_running_it_again():
    layout = sun_card_layout("P0001", KEYS)
    whole = SimulatedNtag424()
    card_keys = ntag424_card_keys(whole.uid, KEYS)
    sent: list[bytes] = []
    whole.command(b"\xe0\x80")
    personalise(lambda apdu: sent.append(apdu) or whole.apdu(apdu), layout, card_keys)
    for tear in range(1, len(sent)):
        tag = SimulatedNtag424(whole.uid)
        tag.command(b"\xe0\x80")
        count = 0

        def pulled_away(apdu: bytes, tag=tag, tear=tear) -> bytes:
            nonlocal count
            count += 1
            if count > tear:
                raise nfc.clf.TimeoutError("card left the field")
            return tag.apdu(apdu)

        with pytest.raises(nfc.clf.TimeoutError):
            personalise(pulled_away, layout, card_keys)
        tag.command(b"\xe0\x80")  # put back: a fresh activation
        personalise(tag.apdu, layout, card_keys)
        _, read = activated(tag)
        assert CardVerifier(KEYS).verify(tag.uid, bytes(read.ndef.octets)).player_id == "P0001", tear
        _, again = activated(tag)
        with pytest.raises(Ntag424Error):  # and the factory key is gone
            authenticate(again.transceive, 0, bytes(16))


def test_a_tampered_command_is_refused_by_the_tag():
    blank = SimulatedNtag424()
    _, tag = activated(blank)
    session = authenticate(tag.transceive, 0, bytes(16))
    apdu = bytearray(session.full_command(0xC4, b"\x01", bytes(21)))
    apdu[-3] ^= 1  # one bit of the MAC
    assert bytes(tag.transceive(bytes(apdu)))[-2:] == b"\x91\x1e"


def test_register_write_card_personalises_a_424_and_copies_are_refused(desk, capsys):  # noqa: F811
    pid = add(capsys, "Ann Lee")
    blank = SimulatedNtag424()
    t = tap_later(desk / "desk", blank)
    code, out, err = run(capsys, "register", "write-card", pid, "--wait", "5")
    t.join()
    assert code == 0, err
    assert f"card {blank.uid.hex()} written for {pid}, read back and verified" in out

    def tap(*extra: str) -> None:
        subprocess.run(
            [sys.executable, "-m", "controller.cli", "hil", "nfc", "tap", pid, "--model", "ntag424", *extra],
            check=True,
            env={**os.environ},
            capture_output=True,
            timeout=60,
        )

    for _ in range(2):  # the card in the player's pocket, read again and again
        tap()
        code, out, _ = run(capsys, "register", "check", "--wait", "5")
        assert code == 0 and f"Ann Lee ({pid}), member active" in out
    tap("--uid", blank.uid.hex())  # a magic tag holding a read the registry has accepted
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 1 and "[replayed_card]" in out
