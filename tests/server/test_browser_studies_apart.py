"""Issue 35.5 in Chromium: two live studies on one server. A participant of study A who opens
their personal link under study B's path gets "Link not found": no consent carried over, no game,
nothing of A shown."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from static_judge_data import chromium_on  # noqa: E402

from tests.server.test_browser import DESKTOP, FAST, study  # noqa: E402
from tests.server.test_browser_studies import consented  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.studies import Served, create_multi_app  # noqa: E402

pytestmark = pytest.mark.browser


async def test_a_link_of_study_a_opens_nothing_of_study_b(chromium_path, sqlite_url):
    studies = [study(n) for n in ("study-a", "study-b")]
    apps = [create_app(s, sqlite_url, human_timing=FAST, rng_seed=2) for s in studies]
    web = create_multi_app([Served(s.name, s.name, "live", w) for s, w in zip(studies, apps)])
    async with chromium_on(web, chromium_path) as (browser, base):
        ctx = await browser.new_context(viewport=DESKTOP, bypass_csp=True)
        page = await consented(ctx, base + "/s/study-a")
        await page.wait_for_selector("#s-idle:not([hidden])")  # in study A: consented, may join
        token = page.url.rstrip("/").rsplit("/", 1)[-1]
        r = await page.goto(f"{base}/s/study-b/p/{token}")
        assert r.status == 404 and "Link not found" in await page.text_content("main")
        assert await page.locator("#btn-join").count() == 0
        r = await page.goto(f"{base}/s/study-a/p/{token}")  # still theirs in A
        assert r.status == 200
        await page.wait_for_selector("#s-idle:not([hidden])")
        assert page.js_errors == []
        await ctx.close()
