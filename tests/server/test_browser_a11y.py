"""WCAG 2.2 AA (issue 39): axe-core (the copy shipped in axe-playwright-python) finds no violation on
any participant page, live or static, at 390 and 1280 px; text at 200 % and a 390 px screen need no
sideways scrolling; reduced motion draws the scanpath at once. Each test lists the pages it checked."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from a11y_helpers import DESKTOP, PHONE, WIDTHS, axe_violations  # noqa: E402
from static_judge_data import chromium_on, make_study, submit_item  # noqa: E402

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
FAST = Timing(base_s=0.2, s_per_char=0.005, gamma_shape=2.0, gamma_scale=0.05)
ELIZA = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=FAST)
RULES = Rules(time_limit_s=60, typing_min_s=0.1, typing_jitter_s=0.2)
NO_SIDEWAYS = "document.documentElement.scrollWidth <= window.innerWidth + 1"


class Pages:
    """axe on each page as it is reached; the failures and the list of pages checked."""

    def __init__(self) -> None:
        self.checked: list[str] = []
        self.failures: list[str] = []

    async def __call__(self, page, name: str) -> None:
        width = page.viewport_size["width"]
        self.failures += [f"{name} @{width}: {v}" for v in await axe_violations(page)]
        if not await page.evaluate(NO_SIDEWAYS):
            self.failures.append(f"{name} @{width}: the page scrolls sideways")
        self.checked.append(f"{name} @{width}")


async def new_page(browser, vp):  # noqa: ANN001, ANN201
    ctx = await browser.new_context(viewport=vp)
    page = await ctx.new_page()
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    return page


async def test_axe_finds_nothing_on_the_live_pages(chromium_path, sqlite_url):
    s = Study(name="axe-live", rules=RULES, witnesses=(ELIZA,),
              allocation=Allocation(human_ratio=0.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))
    app = create_app(s, sqlite_url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=0.3, admin_password="pw")
    check = Pages()
    async with chromium_on(app, chromium_path) as (browser, base):
        for vp in WIDTHS:
            page = await new_page(browser, vp)
            await page.goto(base + "/")
            await check(page, "landing")
            await page.click("form[action$='/start'] button")
            await page.wait_for_selector("input[name=agree]")
            await check(page, "consent")
            await page.click("form[action$='/consent'] button")  # not ticked: the browser says so (required)
            assert await page.evaluate("!document.querySelector('input[name=agree]').validity.valid")
            await page.check("input[name=agree]")
            await page.click("form[action$='/consent'] button")
            await page.wait_for_selector("#s-idle:not([hidden])")
            await check(page, "instructions")
            await page.click("#btn-join")
            await page.wait_for_selector("#s-waiting:not([hidden]), #s-game:not([hidden])")
            await check(page, "waiting")
            await page.wait_for_selector("#s-game:not([hidden])", timeout=15000)
            await check(page, "game")
            await page.locator(".conv textarea").type("hello")
            await page.keyboard.press("Enter")
            await page.wait_for_selector(".msg.theirs", timeout=15000)
            await check(page, "game with messages")
            await page.click("#btn-report")
            await check(page, "report dialog")
            await page.click("#btn-report-cancel")
            await page.click("#btn-verdict")
            await check(page, "verdict")
            await page.check("input[name=choice][value=ai]")
            await page.click("#verdict-form button[type=submit]")  # the slider untouched: the error toast
            await page.wait_for_selector("#toast:not([hidden])")
            await check(page, "verdict with an error")
            await page.locator("#confidence").fill("70")
            await page.click("#verdict-form button[type=submit]")
            await page.wait_for_selector("#s-reveal:not([hidden])")
            await check(page, "reveal")
            await page.click("#btn-again")
            await page.wait_for_selector("#s-survey:not([hidden])")
            await check(page, "survey")
            await page.goto(page.url + "/done")
            await check(page, "done")
            await page.goto(base + "/p/not-a-link")
            await check(page, "link not found")
            assert page.js_errors == []
            await page.context.close()
    assert len(check.checked) == 2 * 13, check.checked
    assert check.failures == [], "\n".join(check.failures)
    print("\naxe, live pages checked:", ", ".join(check.checked))


async def test_axe_finds_nothing_on_a_three_player_game(chromium_path, sqlite_url):
    s = Study(name="axe-three", format="three-player", rules=RULES, witnesses=(ELIZA,),
              allocation=Allocation(human_ratio=1.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))
    app = create_app(s, sqlite_url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=0.3, admin_password="pw")
    check = Pages()
    async with chromium_on(app, chromium_path) as (browser, base):
        for vp in WIDTHS:
            a, b = await new_page(browser, vp), await new_page(browser, vp)
            for p in (a, b):
                await p.goto(base + "/")
                await p.click("form[action$='/start'] button")
                await p.check("input[name=agree]")
                await p.click("form[action$='/consent'] button")
                await p.wait_for_selector("#s-idle:not([hidden])")
                await p.click("#btn-join")
            await a.wait_for_selector("#s-game:not([hidden])", timeout=15000)
            await b.wait_for_selector("#s-game:not([hidden])", timeout=15000)
            i, w = (a, b) if await a.locator(".conv").count() == 2 else (b, a)
            await check(i, "three-player interrogator")
            await check(w, "three-player witness")
            await a.context.close()
            await b.context.close()
    assert check.failures == [], "\n".join(check.failures)
    print("\naxe, three-player pages checked:", ", ".join(check.checked))


@pytest.mark.parametrize("task", ["word", "caption", "object", "color", "fv", "conversation"])
async def test_axe_finds_nothing_on_the_judge_pages(task, chromium_path, sqlite_url, tmp_path):
    with Store(sqlite_url) as st:
        sid = make_study(st, task, tmp_path / "img", items=2, feedback=1, min_rt_ms=0, completion_url=None,
                         object_words=True, ask_gender=True)
        study = st.static_study(sid).study
    app = create_static_app(study, sqlite_url, admin_password="pw", rng_seed=4)
    check = Pages()
    async with chromium_on(app, chromium_path) as (browser, base):
        for vp in WIDTHS:
            page = await new_page(browser, vp)
            await page.goto(base + "/")
            await check(page, "landing")
            await page.click("form[action$='/start'] button")
            await page.wait_for_selector("input[name=agree]")
            await check(page, "consent")
            await page.check("input[name=agree]")
            await page.click("form[action$='/consent'] button")
            n = 0
            while True:
                await page.wait_for_selector("#answer-form, #feedback, #survey-form")
                if await page.locator("#feedback").count():
                    await check(page, "feedback")
                    await page.click("#btn-next")
                    continue
                if await page.locator("#survey-form").count():
                    break
                await page.wait_for_load_state("load")
                await check(page, f"item {n}")
                for name in await page.eval_on_selector_all("#answer-form input[type=radio]", "rs => [...new Set(rs.map(r => r.name))]"):
                    await page.locator(f"#answer-form input[name={name}]").first.check()
                await page.wait_for_selector("#btn-submit:not([disabled])", timeout=20000)
                await submit_item(page)
                n += 1
            await check(page, "survey")
            await page.click("#btn-skip")
            await page.wait_for_selector("text=Thank you for taking part")
            await check(page, "done")
            assert page.js_errors == []
            await page.context.close()
    assert check.failures == [], "\n".join(check.failures)
    assert {"landing @390", "consent @1280", "item 0 @390", "feedback @1280", "survey @390", "done @1280"} <= set(check.checked)
    print(f"\naxe, {task} judge pages checked:", ", ".join(check.checked))


async def test_text_at_200_percent_loses_nothing(chromium_path, sqlite_url, tmp_path):
    """WCAG 1.4.4: the browser's text size at 200 % (the root font size; the pages size text in rem/em):
    no sideways scrolling, the buttons inside the window, and the chat's message box still on screen."""
    s = Study(name="big-text", rules=RULES, witnesses=(ELIZA,),
              allocation=Allocation(human_ratio=0.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))
    app = create_app(s, sqlite_url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=0.3, admin_password="pw")
    inside = """() => [...document.querySelectorAll('button, a.button, textarea, input, select')].filter(e => e.offsetParent)
        .every(e => { const r = e.getBoundingClientRect(); return r.left >= -1 && r.right <= window.innerWidth + 1; })"""
    checked = []
    async with chromium_on(app, chromium_path) as (browser, base):
        for vp in (PHONE, DESKTOP):
            ctx = await browser.new_context(viewport=vp)
            await ctx.add_init_script("document.addEventListener('DOMContentLoaded', () => { document.documentElement.style.fontSize = '200%'; });")
            page = await ctx.new_page()
            await page.goto(base + "/")
            assert await page.evaluate("parseFloat(getComputedStyle(document.body).fontSize)") == 32
            for name, step in (("landing", None), ("consent", "start"), ("instructions", "consent"), ("game", "join")):
                if step == "start":
                    await page.click("form[action$='/start'] button")
                elif step == "consent":
                    await page.check("input[name=agree]")
                    await page.click("form[action$='/consent'] button")
                    await page.wait_for_selector("#s-idle:not([hidden])")
                elif step == "join":
                    await page.click("#btn-join")
                    await page.wait_for_selector("#s-game:not([hidden])", timeout=15000)
                    box = await page.locator(".conv textarea").bounding_box()
                    assert box and box["y"] + box["height"] <= vp["height"] + 1, (name, vp, box)
                assert await page.evaluate(NO_SIDEWAYS), (name, vp)
                assert await page.evaluate(inside), (name, vp)
                checked.append(f"{name} @{vp['width']}")
            await ctx.close()
    print("\n200 % text, pages checked:", ", ".join(checked))


async def test_reduced_motion_draws_the_scanpath_at_once(chromium_path, sqlite_url, tmp_path):
    with Store(sqlite_url) as st:
        sid = make_study(st, "fv", tmp_path / "img", items=2, min_rt_ms=0, completion_url=None)
        study = st.static_study(sid).study
    app = create_static_app(study, sqlite_url, admin_password="pw", rng_seed=4)
    async with chromium_on(app, chromium_path) as (browser, base):
        counts = {}
        for motion in ("reduce", "no-preference"):
            ctx = await browser.new_context(viewport=DESKTOP, reduced_motion=motion)
            page = await ctx.new_page()
            await page.goto(base + "/")
            await page.click("form[action$='/start'] button")
            await page.check("input[name=agree]")
            await page.click("form[action$='/consent'] button")
            await page.wait_for_selector("#overlay circle")
            n = int(re.search(r"\((\d+) ", await page.text_content(".stimulus .small")).group(1))
            counts[motion] = (await page.locator("#overlay circle").count(), n)
            await ctx.close()
    drawn, n = counts["reduce"]
    assert drawn == n >= 6  # every fixation at once, numbered in order
    assert counts["no-preference"][0] < counts["no-preference"][1]  # one at a time otherwise
