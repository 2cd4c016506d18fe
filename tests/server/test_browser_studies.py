"""Two studies on one server (issue 27 item 2), played side by side in Chromium: a live study (two
browser pages meet, chat and reach the reveal) and a static judge study (one judge to the
completion redirect), each under /s/<slug>/ of one app, with the real CSP; each study's admin and
export show only its own data, and neither study's cookies reach the other."""

from __future__ import annotations

import asyncio
import csv
import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from static_judge_data import chromium_on, make_study, submit_item  # noqa: E402

from tests.server.test_browser import DESKTOP, FAST, give_verdict, last_theirs, role, study, type_send  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.server.studies import Served, create_multi_app  # noqa: E402
from turinglab.server.testing import browser_admin_login  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser


async def consented(ctx, base: str):  # noqa: ANN001, ANN201 - a Playwright page
    """A new page of `ctx` from the study's landing page through consent."""
    page = await ctx.new_page()
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    await page.goto(base + "/")
    await page.click("text=Start")
    await page.wait_for_selector("text=Consent")
    await page.check("input[name=agree]")
    await page.click("text=Continue")
    return page


async def live_game(browser, ctx, base: str) -> dict:
    """Two participants (the first in `ctx`) meet, chat and reach the reveal; their pages by role."""
    other = await browser.new_context(viewport=DESKTOP, bypass_csp=True)  # the helpers wait with eval
    a, b = await consented(ctx, base), await consented(other, base)
    for p in (a, b):
        await p.wait_for_selector("#s-idle:not([hidden])")
        await p.click("#btn-join")
    pages = {await role(a): a, await role(b): b}
    i, w = pages["interrogator"], pages["witness"]
    await type_send(i, "hello from the live study")
    assert await last_theirs(w) == "hello from the live study"
    await type_send(w, "hi, a human here")
    assert await last_theirs(i) == "hi, a human here"
    await give_verdict(i, "human", 70, "felt human")
    await w.wait_for_selector("#s-reveal:not([hidden])")
    assert "You were right." in await i.text_content("#reveal-body")
    return pages


async def judge_session(ctx, base: str) -> str:
    """One judge in `ctx` from the landing page to the completion redirect; returns the judge's id."""
    page = await consented(ctx, base)
    judge = page.url.rstrip("/").rsplit("/", 1)[1]
    n = 0
    while True:
        await page.wait_for_selector("#answer-form, #feedback, #survey-form")
        if await page.is_visible("#feedback"):
            await page.click("#btn-next")
            continue
        if await page.is_visible("#survey-form"):
            break
        await page.check("input[name=answer][value=human]")
        await page.wait_for_selector("#btn-submit:not([disabled])", timeout=20000)
        await submit_item(page)
        n += 1
    await page.fill("input[name=age]", "33")
    await page.click("text=Save and finish")
    await page.wait_for_selector("#done-countdown", state="attached")  # time to withdraw first: the link goes on now
    await page.click("a.button")
    # the study's completion link "/healthz?cc=..." is the study's own page, under its path
    await page.wait_for_url(base + "/healthz?cc=C0MPLETE")
    assert n == 4 and page.js_errors == []
    return judge


async def test_a_live_and_a_static_study_played_side_by_side(chromium_path, sqlite_url):
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, name="judge-word", items=3, feedback=1, min_rt_ms=300)
        static = st.static_study(sid).study
    live = study("Live chat")  # human_ratio 1.0: the two pages meet
    apps = [Served("live-chat", "Live chat", "live", create_app(live, sqlite_url, rng_seed=5, human_timing=FAST,
                                                                 initial_ai_wait_s=0.3, admin_password="pw")),
            Served("judge-word", "Judge words", "static", create_static_app(static, sqlite_url, admin_password="pw",
                                                                              rng_seed=11))]
    async with chromium_on(create_multi_app(apps), chromium_path) as (browser, base):
        live_base, static_base = base + "/s/live-chat", base + "/s/judge-word"
        ctx = await browser.new_context(viewport=DESKTOP, bypass_csp=True)  # one person: the interrogator's tabs and the judge's
        index = await ctx.new_page()
        await index.goto(base + "/")
        assert await index.get_attribute("li[data-slug=live-chat] a", "href") == "/s/live-chat/"
        await index.click("li[data-slug=judge-word] a >> nth=0")
        await index.wait_for_selector("text=Start")
        assert index.url == static_base + "/"
        pages, judge = await asyncio.gather(live_game(browser, ctx, live_base), judge_session(ctx, static_base))
        assert all(p.js_errors == [] for p in pages.values())
        # each study's participant cookie stays under its own path
        mine = {c["path"]: c["value"] for c in await ctx.cookies() if c["name"] == "turinglab_p"}
        assert set(mine) == {"/s/live-chat", "/s/judge-word"} and mine["/s/judge-word"] == judge
        # an admin login of the live study is not one of the static study (cookies scoped per path)
        admin = await browser.new_context(viewport=DESKTOP)
        ap = await admin.new_page()
        await browser_admin_login(ap, live_base, "pw")
        live_admin = await ap.text_content("body")
        await ap.goto(static_base + "/admin")
        assert ap.url.startswith(static_base + "/admin/login")
        await browser_admin_login(ap, static_base, "pw")
        static_admin = await ap.text_content("body")
        games_csv = await (await ap.request.get(live_base + "/admin/export/games.csv")).text()
        people_csv = await (await ap.request.get(live_base + "/admin/export/participants.csv")).text()
        await admin.close()
        await ctx.close()
    with Store(sqlite_url) as st:
        (game,) = st.games()
        live_id = game.study_id
        assert st.get_participant(judge).consent_ms is not None
        assert len(st.trials(sid, judge_id=judge)) == 4 and len(st.trials(sid)) == 4
    rows = list(csv.DictReader(io.StringIO(games_csv)))
    assert [r["game_id"] for r in rows] == [game.id] and rows[0]["study_id"] == str(live_id)
    assert len(list(csv.DictReader(io.StringIO(people_csv)))) == 2  # the two players, not the judge
    assert game.id in live_admin and "judge-word" not in live_admin
    assert "1 complete" in static_admin and game.id not in static_admin and "Live chat" not in static_admin
