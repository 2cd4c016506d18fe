"""The jones-bergen-2025 preset in Chromium: two participants play a whole session (8 rounds, roles
rotating) on the directional −100…100 scale (the slider's side is the verdict), each round ending
with the reveal shown, the exit survey after the last round, then the `done` page with the
completion link."""

from __future__ import annotations

import pytest

from tests.server.test_browser import ARGS, DESKTOP, PHONE, give_verdict, last_theirs, newcomer, role, shot, type_send
from tests.server.live.test_jb2025 import preset_2025, stand_in_factory
from turinglab.server.app import create_app
from turinglab.server.testing import serve_in_thread
from turinglab.store.api import Store

pytestmark = pytest.mark.browser


async def test_a_2025_session_in_chromium_with_the_minus_100_to_100_scale(chromium_path, sqlite_url, tmp_path):
    from playwright.async_api import async_playwright

    import tests.server.test_browser as tb

    tb.SHOTS = tmp_path
    s = preset_2025("b-2025", "completion_url: https://example.org/done?cc=JB25\n")
    app = create_app(s, sqlite_url, rng_seed=9, witness_factory=stand_in_factory, initial_ai_wait_s=0.3)
    strength = [60, 40, 100, 100, 1, 15, 75, 80]  # how far towards the human seat's end
    with serve_in_thread(app) as base:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=chromium_path, args=ARGS)
            try:
                a = await newcomer(browser, base, PHONE)
                b = await newcomer(browser, base, DESKTOP)
                await a.click("#btn-join")
                await b.click("#btn-join")
                interrogated = {"a": 0, "b": 0}
                said = []
                for rnd, strength_now in enumerate(strength):
                    ra, rb = await role(a), await role(b)
                    i, w = (a, b) if ra == "interrogator" else (b, a)
                    interrogated["a" if i is a else "b"] += 1
                    assert {ra, rb} == {"interrogator", "witness"}
                    seat = await w.get_attribute(".conv", "data-conv")
                    if rnd == 0:  # a real exchange in the first round: the human's words as typed
                        await type_send(i, "hi, where are you right now?", seat)
                        assert await last_theirs(w, seat) == "hi, where are you right now?"
                        await type_send(w, "at home, its raining", seat)
                        assert await last_theirs(i, seat) == "at home, its raining"
                    slider = i.locator("#confidence")
                    await i.click("#btn-verdict")
                    assert (await slider.get_attribute("min"), await slider.get_attribute("max")) == ("-100", "100")
                    ends = await i.text_content("#conf-ends")
                    assert "-100 · sure A is the human" in ends and "100 · sure B is the human" in ends
                    assert not await i.is_visible("#choices")  # the slider's side is the verdict
                    if rnd == 0:  # 0 says nothing: refused in the page, nothing sent
                        await slider.fill("0")
                        await i.click("#verdict-form button[type=submit]")
                        assert "towards the one you think is the human" in await i.text_content("body")
                        assert await i.is_visible("#s-verdict")
                    conf = strength_now * (-1 if seat == "A" else 1)
                    said.append(conf)
                    await give_verdict(i, seat, conf, "")
                    await w.wait_for_selector("#s-reveal:not([hidden])")
                    mine = await i.text_content("#reveal-body")
                    theirs = await w.text_content("#reveal-body")
                    assert f"confidence {conf} on -100 to 100" in mine and "You were right." in mine
                    assert f"confidence {conf} on -100 to 100" in theirs and "picked you as the human" in theirs
                    if rnd == 0:
                        await shot(i, "jb2025-reveal")
                    for p in (a, b):
                        await p.click("#btn-again")
                        if rnd == len(strength) - 1:  # survey_after: last: the exit survey after the last round
                            await p.wait_for_selector("#s-survey:not([hidden])")
                            await p.select_option("select[name=prior_visits]", "once")
                            await p.click("#survey-form button[type=submit]")
                        else:
                            assert not await p.is_visible("#s-survey")
                for p in (a, b):
                    await p.wait_for_selector("#s-done:not([hidden])")
                    assert "all 8 rounds" in await p.text_content("#s-done")
                    assert await p.get_attribute("#btn-finish-rounds", "href") == f"/p/{p.url.rsplit('/', 1)[-1]}/done"
                await shot(a, "jb2025-done")
                assert interrogated == {"a": 4, "b": 4}
                assert a.js_errors == [] and b.js_errors == []
            finally:
                await browser.close()
    with Store(sqlite_url) as store:
        games = sorted(store.games(), key=lambda g: g.started_ms)
        assert [g.verdict.confidence for g in games] == said and all(g.verdict.correct for g in games)
        assert all(p.demographics.get("prior_visits") == "once" for p in store.participants())
