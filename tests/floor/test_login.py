"""The director's page behind its login: the secret file held to the service's rule (mode 0600, not
empty), every page, the API and the push stream refused without a session, and the browser path
(Debian's chromium through Playwright): log in, every table, one table in detail."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from controller.floor.auth import Sessions, page_secret
from controller.floor.config import FloorConfigError, parse_floor_config
from tests.floor.conftest import Venue, running_floor, wait_for
from tests.floor.test_e2e import TABLES, seat_everyone

CHROMIUM = "/usr/bin/chromium"
LEVELS = [{"sb": 50, "bb": 100, "minutes": 20}, {"sb": 100, "bb": 200, "minutes": 20}]
PASSWORD = "tuesday-night-42"
GUARDED = ("/api/view", "/events", "/api/table/T1", "/api/table/T1/picture", "/standings.csv", "/season.csv")


def secret_file(tmp_path: Path, text: str = PASSWORD + "\n", mode: int = 0o600) -> str:
    path = tmp_path / "floor-page.password"
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def cfg_with(**web):
    raw = {"floor": {"venue": "v", "tables": ["T1"]}, "web": web}
    return parse_floor_config(raw)


def test_the_page_on_loopback_needs_no_login_but_on_the_network_it_does(tmp_path):
    assert page_secret(cfg_with()) is None  # 127.0.0.1 by default: only the floor PC itself
    with pytest.raises(FloorConfigError, match=r"web.bind '0.0.0.0'.*web.password_file is not set"):
        page_secret(cfg_with(bind="0.0.0.0"))
    assert page_secret(cfg_with(bind="0.0.0.0", password_file=secret_file(tmp_path))) == PASSWORD


def test_the_secret_file_is_held_to_the_services_rule(tmp_path):
    """The service's rule for secret files (controller.service.config.secret_file_problem)."""
    with pytest.raises(FloorConfigError, match=r"readable or writable by others.*chmod 600"):
        page_secret(cfg_with(password_file=secret_file(tmp_path, mode=0o644)))
    with pytest.raises(FloorConfigError, match="is empty"):
        page_secret(cfg_with(password_file=secret_file(tmp_path, text="\n")))
    with pytest.raises(FloorConfigError, match=r"web.password_file .*No such file.*mode 0600"):
        page_secret(cfg_with(password_file=str(tmp_path / "missing")))


def test_sessions_want_the_password_and_expire():
    s = Sessions(PASSWORD)
    assert s.login("tuesday-night-4", now=0.0) is None
    sid = s.login(PASSWORD, now=0.0)
    assert sid and s.valid(sid, now=3600.0)
    assert not s.valid(sid, now=17 * 3600.0)  # one evening long
    assert not s.valid(None) and not s.valid("forged")
    s.logout(sid)
    assert not s.valid(sid, now=1.0)


def fetch(url: str, data: bytes | None = None, cookie: str = "", method: str | None = None):
    """(status, headers, body) without following redirects."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    req = urllib.request.Request(url, data=data, method=method)
    if cookie:
        req.add_header("Cookie", cookie)
    try:
        with urllib.request.build_opener(NoRedirect).open(req, timeout=5) as r:
            return r.status, r.headers, r.read(1 << 20)
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read(1 << 20)


async def test_without_a_session_every_page_api_and_the_stream_are_refused(tmp_path, mosquitto):
    venue = Venue(tmp_path, "dragons_den", TABLES, seats=6, players=15)
    cfg = dataclasses.replace(venue.floor_config(mosquitto, LEVELS), web_password_file=secret_file(tmp_path))
    tables = await seat_everyone(venue, mosquitto)
    base = f"http://127.0.0.1:{cfg.web_port}"
    try:
        async with running_floor(cfg) as floor:

            def probe():
                out = {}
                for path in ("/", *GUARDED):
                    out[path] = fetch(base + path)[:2]
                out["start"] = fetch(base + "/api/clock/start", data=b"", method="POST")[0]
                bad = fetch(base + "/login", data=b"password=wrong", method="POST")
                good = fetch(base + "/login", data=f"password={PASSWORD}".encode(), method="POST")
                return out, bad, good

            out, bad, good = await asyncio.to_thread(probe)
            assert out["/"][0] == 303 and out["/"][1]["Location"] == "/login"
            for path in GUARDED:
                assert out[path][0] == 401, path
            assert out["start"] == 401 and not floor.view()["clock"]["started"]  # nothing reached the tables
            assert bad[0] == 303 and bad[1]["Location"] == "/login?failed=1" and "Set-Cookie" not in bad[1]
            assert good[0] == 303 and good[1]["Location"] == "/"
            cookie = good[1]["Set-Cookie"]
            assert "HttpOnly" in cookie and "SameSite=strict" in cookie
            session = cookie.split(";")[0]

            def with_session():
                view = fetch(base + "/api/view", cookie=session)
                detail = fetch(base + "/api/table/T1", cookie=session)
                nope = fetch(base + "/api/table/T9", cookie=session)
                return view, detail, nope

            view, detail, nope = await asyncio.to_thread(with_session)
            assert view[0] == 200 and json.loads(view[2])["venue"] == "den"
            doc = json.loads(detail[2])
            assert detail[0] == 200 and doc["id"] == "T1" and doc["picture"] is None
            assert len(doc["seats"]) == 5 and all(s["stack"] == 10000 for s in doc["seats"])
            assert nope[0] == 404
    finally:
        for sim in tables.values():
            await sim.stop()


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed (make test installs it)")
async def test_the_director_logs_in_and_opens_one_table_in_detail(tmp_path, mosquitto):
    from playwright.async_api import async_playwright

    venue = Venue(tmp_path, "dragons_den", TABLES, seats=6, players=15)
    cfg = dataclasses.replace(venue.floor_config(mosquitto, LEVELS), web_password_file=secret_file(tmp_path))
    tables = await seat_everyone(venue, mosquitto)
    shots = Path(os.environ.get("FLOOR_SCREENSHOTS") or tmp_path)
    try:
        async with running_floor(cfg), async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(f"http://127.0.0.1:{cfg.web_port}/")
            assert page.url.endswith("/login")  # no session: the page itself is refused
            await page.fill("#password", "not it")
            await page.click("button[type=submit]")
            await page.wait_for_selector("#failed")
            await page.fill("#password", PASSWORD)
            await page.screenshot(path=str(shots / "floor-login.png"))
            await page.click("button[type=submit]")
            await page.wait_for_selector('.table[data-table="T3"] li')  # the pushed view reaches the page

            # one table in detail: seats with stacks, the board, its alert and rulings, the camera's note
            t1 = tables["T1"]
            await t1.feed({"type": "hand_start"})
            hand = next(o for o in reversed(t1.outputs) if o["type"] == "hand")
            outs = await t1.feed({"type": "deal", "seat": hand["first_card"], "card": "Kd"})
            ruling = next(o for o in outs if o["type"] == "misdeal")
            await page.click('.table[data-table="T1"] a.detail-link')
            await page.wait_for_selector("#detail:not([hidden]) #detail-seats tr")
            first = sorted(t1.engine.players)[0]
            row = page.locator(f'#detail-seats tr[data-seat="{first}"]')
            assert "10000" in await row.inner_text()
            name = venue.registry.member(t1.engine.players[first].id).display_name
            assert name in await row.inner_text()
            await page.locator("#detail-alerts .alert", has_text="misdeal").wait_for(timeout=5000)
            assert ruling["rule"] in await page.locator("#detail-alerts").inner_text()
            await page.locator("#detail-rulings .ruling", has_text="MISDEAL").wait_for(timeout=5000)
            assert "No camera picture yet" in await page.locator("#detail-picture").inner_text()
            # the table's picture of its misdeal arrives: shown with the ruling it belongs to
            await publish_picture(t1, ruling, hand["first_card"])
            img = page.locator("#detail-picture img")
            await img.wait_for(timeout=5000)
            await page.wait_for_function("document.querySelector('#detail-picture img').complete")
            assert await img.evaluate("(i) => [i.naturalWidth, i.naturalHeight]") == [640, 360]
            caption = await page.locator("#picture-caption").inner_text()
            assert "misdeal" in caption.lower() and ruling["rule"] in caption
            await page.screenshot(path=str(shots / "floor-detail.png"), full_page=True)

            # logging out ends the session: the page and the stream are refused again
            await page.click("#logout")
            await page.wait_for_url("**/login")
            await page.goto(f"http://127.0.0.1:{cfg.web_port}/")
            assert page.url.endswith("/login")
            status = await page.evaluate("fetch('/events').then((r) => r.status)")
            assert status == 401
            await browser.close()
            await wait_for(lambda: True)
    finally:
        for sim in tables.values():
            await sim.stop()


async def publish_picture(sim, ruling: dict, first_card: int) -> None:
    """What a table with a camera publishes at this misdeal (controller.service.picture): the
    simulated table has no camera, so its picture is made here, by the table's own code, from the
    simulated camera's frame of the hand (face-down cards at the seats, the first one flashed)."""
    import time

    from controller.service.picture import render_picture
    from hil.camera import SimulatedCamera
    from vision.layout import default_layout

    cam = SimulatedCamera(seats=6, seed=2, width=1280, height=720)
    for seat in sorted(sim.engine.players):
        cam.deal_to(seat, face_up=seat == first_card, card="Kd" if seat == first_card else None)
    cam.move_button(sorted(sim.engine.players)[0])
    frame, _ = cam.frame()
    header = {"seq": sim.seq, "ruling_seq": sim.ruling_no, "type": ruling["type"], "t": round(time.time(), 3)}
    header.update({k: ruling[k] for k in ("reason", "rule") if k in ruling})
    header["taken"] = header["t"]
    jpeg = render_picture(frame, default_layout(6, 1280, 720), header)
    await sim.client.publish(sim.topics.picture, jpeg, qos=1, retain=True)


def test_the_floor_will_not_start_with_its_page_open_to_the_network_or_a_readable_secret(tmp_path):
    """Exit status 2 and the setting named, before anything is opened."""
    import subprocess
    import sys

    cases = [
        ('[web]\nbind = "0.0.0.0"\n', "web.password_file is not set"),
        (f'[web]\npassword_file = "{secret_file(tmp_path, mode=0o640)}"\n', "chmod 600"),
    ]
    for web, message in cases:
        cfg = tmp_path / "venue.toml"
        cfg.write_text(
            f'[floor]\nvenue = "v"\ntables = ["T1"]\n[registry]\nurl = "sqlite:///{tmp_path}/r.db"\n{web}'
        )
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "floor", "--config", str(cfg)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(__file__).resolve().parents[2],
        )
        assert done.returncode == 2, done.stderr
        assert message in done.stderr
        assert not (tmp_path / "r.db").exists()  # refused before the registry was opened
