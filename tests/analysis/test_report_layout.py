"""The report of the 300-game demo in Chromium at 1 280 px (issue 41): no element runs past the right
edge of the page (Tables 2-3 did, by their humanness columns), the humanness columns are a table of
their own, and the figures' labels are whole. A full-page screenshot goes to a temporary folder (printed)."""

from __future__ import annotations

import asyncio
import re

import pytest
from typer.testing import CliRunner

from turinglab.cli import app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WIDER = """() => { const W = document.documentElement.clientWidth; const out = [];
  for (const e of document.querySelectorAll('body *')) { const r = e.getBoundingClientRect();
    if (r.width > 0 && (r.right > W + 0.5 || r.left < -0.5)) out.push(`${e.tagName} ${Math.round(r.left)}-${Math.round(r.right)}: `
      + (e.textContent || '').trim().slice(0, 60)); }
  return {width: W, scroll: document.documentElement.scrollWidth, wider: out}; }"""


async def _measure(chromium_path: str, url: str, shot: str) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=chromium_path, args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(url)
            await page.wait_for_load_state("load")
            out = await page.evaluate(WIDER)
            await page.screenshot(path=shot, full_page=True)
            return out
        finally:
            await browser.close()


def test_the_300_game_demo_report_fits_a_1280_px_page(sqlite_url, tmp_path, chromium_path):
    r = CliRunner().invoke(app, ["demo-data", "--db", sqlite_url, "--games", "300"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "report.html"
    r = CliRunner().invoke(app, ["report", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    html = out.read_text(encoding="utf-8")
    # Tables 2 and 3 keep their rows; the degree of humanness is a table of its own under each
    assert len(re.findall(r'<table class="humanness">', html)) == 2
    assert "Table 2. Pass criteria, all games" in html and "Table 3. Pass criteria, interrogators" in html
    print(f"\nscreenshot: {tmp_path / 'report-1280.png'}")
    got = asyncio.run(_measure(chromium_path, out.as_uri(), str(tmp_path / "report-1280.png")))
    assert got["width"] == 1280 and got["scroll"] <= 1280, got
    assert got["wider"] == [], got["wider"][:10]
