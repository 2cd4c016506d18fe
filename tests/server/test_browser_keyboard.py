"""Keyboard only (issue 39): a two-player game against ELIZA to the reveal, a three-player game and a
static judge session to the done page, played with `page.keyboard` alone (no clicks, no `fill`), in
Chromium against a real server; what the live regions announce is recorded and checked."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from a11y_helpers import DESKTOP, PHONE, RECORD_ANNOUNCEMENTS, said, tab_to  # noqa: E402
from static_judge_data import chromium_on, make_study  # noqa: E402

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
FAST = Timing(base_s=0.2, s_per_char=0.005, gamma_shape=2.0, gamma_scale=0.05)
ELIZA = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=FAST)
# replies at least 2.5 s after the question: a second message sent at once is refused, however busy the machine
SLOW = Timing(base_s=2.5, s_per_char=0.005, gamma_shape=2.0, gamma_scale=0.05)
ELIZA_SLOW = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=SLOW)


async def keyboard_page(browser, viewport=DESKTOP):  # noqa: ANN201
    ctx = await browser.new_context(viewport=viewport, bypass_csp=True)  # the test's own waits evaluate strings
    await ctx.add_init_script(RECORD_ANNOUNCEMENTS)
    page = await ctx.new_page()
    page.js_errors = []
    page.on("pageerror", lambda e: page.js_errors.append(str(e)))
    return page


async def press(page, selector: str, key: str = "Enter", back: bool = False) -> None:
    await tab_to(page, selector, back=back)
    await page.keyboard.press(key)


async def to_instructions(page, base: str) -> None:
    """Landing, consent and the instructions, by keyboard."""
    await page.goto(base + "/")
    await press(page, "form[action$='/start'] button")
    await page.wait_for_selector("input[name=agree]")
    await press(page, "input[name=agree]", "Space")
    await press(page, "form[action$='/consent'] button")
    await page.wait_for_selector("#s-idle:not([hidden])")


async def test_keyboard_only_game_against_eliza_announces_what_the_page_shows(chromium_path, sqlite_url):
    s = Study(name="kb-two", witnesses=(ELIZA_SLOW,), rules=Rules(time_limit_s=63, typing_min_s=0.1, typing_jitter_s=0.2),
              allocation=Allocation(human_ratio=0.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))
    # the AI game starts 5 s after joining: time to leave the waiting room by keyboard at the end
    app = create_app(s, sqlite_url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=5, admin_password="pw")
    async with chromium_on(app, chromium_path) as (browser, base):
        page = await keyboard_page(browser)
        await to_instructions(page, base)
        await press(page, "#btn-join")
        await page.wait_for_selector("#s-game:not([hidden])", timeout=15000)
        # the game starts with the focus in the message box
        assert await page.evaluate("document.activeElement.matches('.conv textarea')")
        await page.keyboard.type("hello, who are you?")
        await page.keyboard.press("Enter")
        await page.keyboard.type("still there?")  # a second message before the reply is refused
        await page.keyboard.press("Enter")
        await page.wait_for_selector("#toast:not([hidden])")
        reply = (await page.locator(".msg.theirs").first.text_content(timeout=15000)).strip()
        await page.wait_for_function("window.__said.some((a) => a.text === 'One minute left.')", timeout=15000)
        texts = [a["text"] for a in await said(page)]
        assert "Witness is typing…" in texts  # the typing indicator, as shown
        assert f"Witness: {reply}" in texts  # the new message
        toast = (await page.text_content("#toast")).strip()
        assert toast and any(a["region"] == "toast" and a["text"] == toast for a in await said(page))  # the error
        assert "One minute left." in texts  # the timer's last minute
        # nothing a sighted interrogator cannot see: no codename, no kind, no source before the verdict
        assert not [t for t in texts if any(w in t.lower() for w in ("eliza", "ai witness", "human witness", "fallback"))]
        # the verdict, by keyboard: back from the message box to "Give verdict"
        await page.keyboard.press("Control+a")
        await page.keyboard.press("Delete")
        await press(page, "#btn-verdict", back=True)
        await page.wait_for_selector("#s-verdict:not([hidden])")
        await tab_to(page, "input[name=choice][value=human]")
        await page.keyboard.press("ArrowDown")  # the radio group: the arrow picks "AI"
        assert await page.is_checked("input[name=choice][value=ai]")
        await tab_to(page, "#confidence")
        for _ in range(3):
            await page.keyboard.press("ArrowRight")
        await tab_to(page, "#reason")
        await page.keyboard.type("it turned my words around")
        await press(page, "#verdict-form button[type=submit]")
        await page.wait_for_selector("#s-reveal:not([hidden])")
        assert "You were talking to an AI." in await page.text_content("#reveal-body")
        assert await page.evaluate("document.activeElement.closest('#s-reveal') !== null")  # focus moved to the reveal
        await press(page, "#btn-again")
        await page.wait_for_selector("#s-survey:not([hidden])")
        await tab_to(page, "input[name=age]")
        await page.keyboard.type("33")
        await tab_to(page, "select[name=chatbot_use]")
        await page.keyboard.press("ArrowDown")  # a closed select takes arrows: "never"
        await press(page, "#survey-form button[type=submit]")
        await page.wait_for_selector("#s-waiting:not([hidden])")
        await press(page, "#btn-leave-queue")
        await page.wait_for_selector("#s-idle:not([hidden])")
        assert page.js_errors == []
    with Store(sqlite_url) as st:
        (g,) = st.games()
        assert (g.verdict.choice, g.verdict.confidence, g.verdict.reason) == ("ai", 53, "it turned my words around")
        assert st.get_participant(g.interrogator_id).demographics.items() >= {"age": 33, "chatbot_use": "never"}.items()


async def test_keyboard_only_three_player_game(chromium_path, sqlite_url):
    s = Study(name="kb-three", format="three-player", witnesses=(ELIZA,),
              rules=Rules(time_limit_s=40, typing_min_s=0.1, typing_jitter_s=0.2),
              allocation=Allocation(human_ratio=1.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))
    app = create_app(s, sqlite_url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=0.3, admin_password="pw")
    async with chromium_on(app, chromium_path) as (browser, base):
        a, b = await keyboard_page(browser, PHONE), await keyboard_page(browser, PHONE)
        for p in (a, b):
            await to_instructions(p, base)
            await press(p, "#btn-join")
        for p in (a, b):
            await p.wait_for_selector("#s-game:not([hidden])", timeout=15000)
        i, w = (a, b) if await a.locator(".conv").count() == 2 else (b, a)
        seat = await w.get_attribute(".conv", "data-conv")
        # on a phone the conversations are tabs: the keyboard reaches each and types in it
        for c in ("A", "B"):
            await press(i, f'#conv-tabs .tab[data-conv="{c}"]', back=True)
            assert await i.get_attribute(f'#conv-tabs .tab[data-conv="{c}"]', "aria-selected") == "true"
            await tab_to(i, f'.conv[data-conv="{c}"] textarea')
            await i.keyboard.type(f"hi {c}")
            await i.keyboard.press("Enter")
        await w.wait_for_selector(".msg.theirs", timeout=15000)
        await tab_to(w, ".conv textarea")
        await w.keyboard.type("human here")
        await w.keyboard.press("Enter")
        await i.wait_for_function(f"document.querySelectorAll('.conv[data-conv=\"{seat}\"] .msg.theirs').length > 0", timeout=15000)
        # the open tab is B (typed in last): its news is read out, a message behind the other tab only announced
        heard = [x["text"] for x in await said(i)]
        assert (f"Witness {seat}: human here" if seat == "B" else f"New message from Witness {seat}") in heard, heard
        assert not any("human here" in x for x in heard) if seat == "A" else True
        await press(i, "#btn-verdict", back=True)
        await i.wait_for_selector("#s-verdict:not([hidden])")
        await tab_to(i, "input[name=choice][value=A]")
        await i.keyboard.press("ArrowDown" if seat == "B" else "Space")
        assert await i.is_checked(f"input[name=choice][value={seat}]")
        await tab_to(i, "#confidence")
        await i.keyboard.press("End")
        await press(i, "#verdict-form button[type=submit]")
        await i.wait_for_selector("#s-reveal:not([hidden])")
        await w.wait_for_selector("#s-reveal:not([hidden])")
        assert "You were right." in await i.text_content("#reveal-body")
        assert i.js_errors == [] and w.js_errors == []
    with Store(sqlite_url) as st:
        (g,) = st.games()
        assert g.verdict.correct and g.verdict.confidence == 100


async def test_keyboard_only_static_session_to_the_done_page(chromium_path, sqlite_url):
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, items=3, feedback=1, min_rt_ms=300, completion_url=None)
        study = st.static_study(sid).study
    app = create_static_app(study, sqlite_url, admin_password="pw", rng_seed=2)
    async with chromium_on(app, chromium_path) as (browser, base):
        page = await keyboard_page(browser, PHONE)
        await page.goto(base + "/")
        await press(page, "form[action$='/start'] button")
        await page.wait_for_selector("input[name=agree]")
        await press(page, "input[name=agree]", "Space")
        await press(page, "form[action$='/consent'] button")
        answered = 0
        while True:
            await page.wait_for_selector("#answer-form, #feedback, #survey-form")
            if await page.locator("#feedback").count():
                await press(page, "#btn-next")
                continue
            if await page.locator("#survey-form").count():
                break
            await press(page, "input[name=answer][value=human]", "ArrowDown")  # into the group, then the arrow: machine
            assert await page.is_checked("input[name=answer][value=machine]")
            await page.wait_for_selector("#btn-submit:not([disabled])")
            await press(page, "#btn-submit")
            await page.wait_for_load_state()
            answered += 1
        await tab_to(page, "input[name=age]")
        await page.keyboard.type("41")
        await press(page, "#survey-form button[type=submit]")
        await page.wait_for_selector("text=Thank you for taking part")
        assert page.js_errors == []
    with Store(sqlite_url) as st:
        trials = st.trials(sid)
        assert [t.answer for t in trials] == ["machine"] * answered and answered >= 3
        assert st.get_participant(trials[0].judge_id).demographics["age"] == 41
