"""The registration desk commands end to end: real SQLite file, key file, simulated reader spool
(cards tapped from another process by `smart-table hil nfc tap`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime

import pytest

from controller.cli import main
from hil.nfc import SimulatedNtag, spool_tap


@pytest.fixture
def desk(tmp_path, monkeypatch):
    monkeypatch.setenv("SMART_TABLE_REGISTRY", str(tmp_path / "registry.sqlite3"))
    monkeypatch.setenv("SMART_TABLE_VENUE_KEYS", str(tmp_path / "keys.toml"))
    monkeypatch.setenv("SMART_TABLE_NFC_READER", f"sim:{tmp_path / 'desk'}")
    assert main(["register", "keys", "init", "--venue", "cool_mule"]) == 0
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def tap(pid: str, *extra: str) -> None:
    """The player's card tapped on the desk's reader by another process, as at a real desk."""
    subprocess.run(
        [sys.executable, "-m", "controller.cli", "hil", "nfc", "tap", pid, *extra],
        check=True,
        capture_output=True,
        timeout=60,
    )


def tap_later(spool, tag, delay=0.2):
    def go():
        time.sleep(delay)
        spool_tap(spool, tag, dwell=1.0)

    t = threading.Thread(target=go)
    t.start()
    return t


def add(capsys, name, born="1990-01-01", *extra):
    code, out, err = run(
        capsys, "register", "member", "--name", name, "--born", born, "--photo-id-checked", *extra
    )
    assert code == 0, err
    return out.split()[1].rstrip(":")


def test_member_ids_and_bad_input(desk, capsys):
    assert add(capsys, "Ann Lee") == "P0001"
    assert add(capsys, "Bo") == "P0002"
    code, _, err = run(capsys, "register", "member", "--name", "Zed", "--born", "2999-01-01")
    assert code == 1 and "in the future" in err
    code, _, err = run(capsys, "register", "member", "--name", "Kid", "--born", "2015-06-01")
    assert code == 1 and "minimum age is 19" in err
    code, _, err = run(capsys, "register", "member", "--name", "Old", "--born", "1990-01-01", "--id", "P0001")
    assert code == 1 and "already a member" in err
    with pytest.raises(SystemExit):
        main(["register", "member", "--name", "X", "--born", "01/02/1990"])
    assert "not a date" in capsys.readouterr().err


def test_write_check_revoke_with_simulated_reader(desk, capsys):
    pid = add(capsys, "Ann Lee")
    blank = SimulatedNtag("ntag213")
    t = tap_later(desk / "desk", blank)
    code, out, err = run(capsys, "register", "write-card", pid, "--wait", "5")
    t.join()
    assert code == 0, err
    assert f"card {blank.uid.hex()} written for {pid}, read back and verified" in out

    tap(pid)
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 0 and f"Ann Lee ({pid}), member active" in out

    tap(pid, "--uid", "04010203040506")
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 1 and "[forged_card]" in out

    code, out, _ = run(capsys, "register", "revoke", pid, "--reason", "lost")
    assert code == 0 and "revoked (lost)" in out
    tap(pid)
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 1 and "[revoked_card]" in out


def test_event_signup_draw_show(desk, capsys):
    ids = [add(capsys, f"Player {i}") for i in range(7)]
    code, out, _ = run(
        capsys, "register", "event", "open", "E1", "--tables", "T1:4,T2:4", "--profile", "cool_mule"
    )
    assert (
        code == 0 and "8 seats" in out and "seat 1 at each table is the first button (cool_mule:4.a)" in out
    )
    code, out, err = run(capsys, "register", "event", "signup", "E1", *ids[:6], ids[0])
    assert code == 1 and "already registered" in err
    assert [line.split()[0] for line in out.splitlines()] == [f"#{i}" for i in range(1, 7)]
    code, out, _ = run(capsys, "register", "event", "draw", "E1", "--seed", "42", "--json")
    assert code == 0
    draw = [json.loads(line) for line in out.splitlines()]
    assert sorted(d["player"] for d in draw) == sorted(ids[:6])
    assert {d["table"] for d in draw if d["seat"] == 1} == {"T1", "T2"}  # seat 1 = first button, filled
    assert sorted(sum(d["table"] == t for d in draw) for t in ("T1", "T2")) == [3, 3]
    code, out, err = run(capsys, "register", "event", "draw", "E1", "--seed", "1")
    assert code == 1 and "already drawn" in err
    # a late arrival gets a seat at the emptiest table
    code, out, _ = run(capsys, "register", "event", "signup", "E1", ids[6], "--seed", "3")
    assert code == 0 and "#7" in out and "seat" in out
    code, out, _ = run(capsys, "register", "event", "show", "E1", "--json")
    shown = json.loads(out)
    assert shown["registrations"] == ids and len(shown["draw"]) == 7


def test_same_seed_prints_same_draw(tmp_path, capsys, monkeypatch):
    outputs = []
    for n in range(2):
        monkeypatch.setenv("SMART_TABLE_REGISTRY", str(tmp_path / f"r{n}.sqlite3"))
        ids = [add(capsys, f"Player {i}") for i in range(5)]
        run(capsys, "register", "event", "open", "E", "--tables", "A:6,B:6")
        run(capsys, "register", "event", "signup", "E", *ids)
        code, out, _ = run(capsys, "register", "event", "draw", "E", "--seed", "2026")
        assert code == 0
        outputs.append(out)
    assert outputs[0] == outputs[1] and "seed 2026" in outputs[0]


def test_full_event_refuses_more_players(desk, capsys):
    ids = [add(capsys, f"P {i}") for i in range(3)]
    run(capsys, "register", "event", "open", "E1", "--tables", "T1:2")
    code, out, err = run(capsys, "register", "event", "signup", "E1", *ids)
    assert code == 1 and "is full" in err and out.count("registered for E1") == 2


def test_unusable_configuration_exit_2(desk, capsys, tmp_path):
    add(capsys, "Ann")
    os.chmod(tmp_path / "keys.toml", 0o644)
    code, _, err = run(capsys, "register", "write-card", "P0001", "--wait", "0.1")
    assert code == 2 and "chmod 600" in err
    os.chmod(tmp_path / "keys.toml", 0o600)
    code, _, err = run(capsys, "register", "check", "--reader", "tty:S77:pn532", "--wait", "0.1")
    assert code == 2 and "no NFC reader found at 'tty:S77:pn532'" in err
    code, _, err = run(capsys, "register", "show", "P0001", "--db", str(tmp_path / "missing" / "r.db"))
    assert code == 2 and "does not exist" in err
    code, _, err = run(capsys, "register", "show", "P0001", "--db", "postgresql://nobody@127.0.0.1:1/x")
    assert code == 2 and "cannot connect to PostgreSQL" in err


def test_status_penalty_show(desk, capsys):
    pid = add(capsys, "Ann")
    assert (
        run(capsys, "register", "penalty", pid, "warning", "--rule", "cool_mule:11.b", "--note", "phone")[0]
        == 0
    )
    assert run(capsys, "register", "status", pid, "suspended", "--reason", "abuse")[0] == 0
    code, out, _ = run(capsys, "register", "show", pid)
    assert code == 0
    assert "status suspended (abuse)" in out and "penalty" in out and "[cool_mule:11.b]" in out


def test_key_rotation_retires_old_cards(desk, capsys):
    from controller.registry.keys import load_keys
    from controller.registry.registry import Registry
    from hil.nfc import player_card

    pid = add(capsys, "Ann")
    t = tap_later(desk / "desk", SimulatedNtag())
    assert run(capsys, "register", "write-card", pid, "--wait", "5")[0] == 0
    t.join()
    registry = Registry.open(os.environ["SMART_TABLE_REGISTRY"])
    old_card = player_card(
        registry, load_keys(desk / "keys.toml"), pid
    )  # the card as written, signed with k1
    code, out, _ = run(capsys, "register", "keys", "rotate", "--key-id", "k2", "--retire", "k1")
    assert code == 0 and "signed with k2" in out
    assert os.stat(desk / "keys.toml").st_mode & 0o777 == 0o600
    spool_tap(desk / "desk", old_card, dwell=1.0)
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 1 and "[retired_key]" in out
    t = tap_later(desk / "desk", old_card)  # re-issue on the same tag with the new key
    code, out, err = run(capsys, "register", "write-card", pid, "--wait", "5")
    t.join()
    assert code == 0, err
    spool_tap(desk / "desk", player_card(registry, load_keys(desk / "keys.toml"), pid), dwell=1.0)
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 0 and "Ann" in out
    registry.close()


def test_signup_by_tapping_cards_in_arrival_order(desk, capsys):
    from controller.registry.keys import load_keys
    from controller.registry.registry import Registry
    from hil.nfc import player_card

    ids = [add(capsys, name) for name in ("Ann", "Bo", "Cy")]
    registry = Registry.open(os.environ["SMART_TABLE_REGISTRY"])
    keys = load_keys(desk / "keys.toml")
    for pid in ids:
        registry.issue_card(
            bytes.fromhex(f"04aa00000000{ids.index(pid):02x}"),
            pid,
            "cool_mule",
            keys.current,
            now=datetime.now(UTC),
        )
    cards = [player_card(registry, keys, pid) for pid in ids]
    registry.close()
    run(capsys, "register", "event", "open", "E1", "--tables", "T1:6")

    def arrivals():  # Cy first, then Ann, then a copied card, then Bo; each card lies ~0.3 s
        for card in (cards[2], cards[0], player_card_copy(cards[1]), cards[1]):
            time.sleep(0.2)
            spool_tap(desk / "desk", card, dwell=0.3)
            time.sleep(0.3)

    def player_card_copy(card):
        copy = SimulatedNtag(uid=bytes.fromhex("04bb0000000001"))
        copy.load_message(card.stored_message())
        return copy

    t = threading.Thread(target=arrivals)
    t.start()
    code, out, err = run(capsys, "register", "event", "signup", "E1", "--tap", "4", "--wait", "5")
    t.join()
    assert code == 1 and "[forged_card]" in err  # the copy was refused, the others registered
    registered = [line.split()[1] for line in out.splitlines() if line.startswith("#")]
    assert registered == [ids[2], ids[0], ids[1]]


def test_check_says_why_not_eligible(desk, capsys):
    code, out, _ = run(capsys, "register", "member", "--name", "Noid", "--born", "1990-01-01")
    assert code == 0 and "photo ID NOT checked" in out
    card = SimulatedNtag()
    t = tap_later(desk / "desk", card)
    assert run(capsys, "register", "write-card", "P0001", "--wait", "5")[0] == 0
    t.join()
    from controller.registry.keys import load_keys
    from controller.registry.registry import Registry
    from hil.nfc import player_card

    registry = Registry.open(os.environ["SMART_TABLE_REGISTRY"])
    issued = player_card(registry, load_keys(desk / "keys.toml"), "P0001")
    registry.close()
    spool_tap(desk / "desk", issued, dwell=1.0)
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 1 and "Noid (P0001)" in out and "NOT ELIGIBLE to play: photo_id_not_checked" in out
    assert run(capsys, "register", "photo-id", "P0001")[0] == 0
    spool_tap(desk / "desk", issued, dwell=1.0)
    code, out, _ = run(capsys, "register", "check", "--wait", "5")
    assert code == 0 and "eligible to play" in out
