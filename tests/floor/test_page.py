"""The director's page in a real browser: Debian's chromium, headless, driven by Playwright (the
system browser through executable_path; nothing downloaded). Tables shown, the clock ticking, an
alert appearing after a table's ruling, a balancing proposal confirmed by a click."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.floor.conftest import Venue, running_floor, wait_for
from tests.floor.test_e2e import TABLES, seat_everyone

CHROMIUM = "/usr/bin/chromium"
LEVELS = [{"sb": 50, "bb": 100, "minutes": 20}, {"sb": 100, "bb": 200, "minutes": 20}]

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="chromium is not installed (make test installs it)"
)


def shots_dir(tmp_path: Path) -> Path:
    """Screenshots go to tmp_path, and to FLOOR_SCREENSHOTS when set (docs/floor/ is made that way)."""
    return Path(os.environ.get("FLOOR_SCREENSHOTS") or tmp_path)


async def test_page_shows_tables_clock_alerts_and_confirms_a_move(tmp_path, mosquitto):
    from playwright.async_api import async_playwright

    venue = Venue(tmp_path, "dragons_den", TABLES, seats=6, players=15)
    cfg = venue.floor_config(mosquitto, LEVELS)
    tables = await seat_everyone(venue, mosquitto)
    shots = shots_dir(tmp_path)
    try:
        async with running_floor(cfg) as floor, async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(f"http://127.0.0.1:{cfg.web_port}/")
            # every table at a glance, players by name
            await page.wait_for_selector('.table[data-table="T3"] li')
            assert await page.locator(".table").count() == 3
            first = venue.registry.seat_draw("E1")[0]
            name = venue.registry.member(first.player_id).display_name
            assert name in await page.locator(f'.table[data-table="{first.table_id}"]').inner_text()

            # the clock ticks on the page by itself once started
            for sim in tables.values():
                await sim.feed({"type": "hand_start"})
            await page.click('button[data-clock="start"]')
            await page.wait_for_function("document.getElementById('level').textContent === 'Level 1'")
            before = await page.locator("#time-left").inner_text()
            await page.wait_for_function(
                f"document.getElementById('time-left').textContent !== '{before}'", timeout=5000
            )
            assert (await page.locator("#blinds").inner_text()) == "50/100"

            # a ruling at T1 (its first card flashed in the deal) appears as an alert with the rule cited
            t1 = tables["T1"]
            hand = next(o for o in reversed(t1.outputs) if o["type"] == "hand")
            outs = await t1.feed({"type": "deal", "seat": hand["first_card"], "card": "Kd"})
            ruling = next(o for o in outs if o["type"] == "misdeal")
            card = page.locator('.table[data-table="T1"] .alert')
            await card.first.wait_for(timeout=5000)
            text = await card.first.inner_text()
            assert "misdeal" in text.lower() and ruling["rule"] in text
            await page.screenshot(path=str(shots / "floor-alert.png"), full_page=True)

            # two busts at T2 make a balancing proposal; one click confirms it
            for sim in tables.values():
                await sim.feed({"type": "hand_end"})
            t2 = tables["T2"]
            for seat in sorted(t2.engine.players)[:2]:
                await t2.feed({"type": "leave", "seat": seat, "reason": "eliminated"})
            button = page.locator("button.confirm")
            await button.wait_for(timeout=5000)
            move = floor.floor.proposal(await button.get_attribute("data-move"))
            # standings: the two busts are 14th and 15th of the event
            await page.wait_for_function(
                "document.querySelectorAll('#standings tr').length === 2", timeout=5000
            )
            places = await page.locator("#standings tr td:first-child").all_inner_texts()
            assert places == ["14", "15"]
            await page.screenshot(path=str(shots / "floor-proposal.png"), full_page=True)
            await button.click()
            src = tables[move.from_table]
            await wait_for(lambda: move.from_seat not in src.engine.players, what="the moved player leaving")
            await page.locator(f'.move[data-move="{move.id}"]', has_text="tap in at the new seat").wait_for(
                timeout=5000
            )

            # the same page on a phone
            phone = await browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
            await phone.goto(f"http://127.0.0.1:{cfg.web_port}/")
            await phone.wait_for_selector('.table[data-table="T3"] li')
            assert await phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            await phone.screenshot(path=str(shots / "floor-phone.png"))
            await browser.close()
    finally:
        for sim in tables.values():
            await sim.stop()
