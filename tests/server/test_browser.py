"""The game in a real browser (Debian chromium driven by Playwright), against a real server.

Screenshots of every page at 360 px and desktop width go to a per-run temporary folder
(pytest's basetemp, `shots*/`; printed at the start of the first browser test).
"""

from __future__ import annotations

import re
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1]))
from static_judge_data import BROWSER_ARGS as ARGS, chromium_on  # noqa: E402,F401 - ARGS: test_browser_jb2025 imports it from here

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.testing import browser_admin_login  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
SHOTS = Path()  # set per run by the `_shots` fixture below
FAST = Timing(base_s=0.2, s_per_char=0.005, gamma_shape=2.0, gamma_scale=0.05)
RULES = Rules(time_limit_s=20, typing_min_s=0.1, typing_jitter_s=0.2)
ELIZA = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=FAST)
PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 800}


def study(name: str, fmt="two-player", ratio=1.0, witnesses=()) -> Study:
    return Study(name=name, format=fmt, rules=RULES, witnesses=witnesses,
                 allocation=Allocation(human_ratio=ratio, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))


@pytest.fixture(scope="module", autouse=True)
def _shots(tmp_path_factory):
    """Screenshots go under this run's temporary folder, not a fixed path shared between runs and users."""
    global SHOTS
    SHOTS = tmp_path_factory.mktemp("shots")
    print(f"\nscreenshots: {SHOTS}")


@asynccontextmanager
async def world(chromium_path: str, s: Study, url: str, **kw):
    app = create_app(s, url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=0.3, admin_password="pw", **kw)
    async with chromium_on(app, chromium_path) as (browser, base):
        yield base, browser


async def shot(page, name: str) -> None:
    await page.screenshot(path=str(SHOTS / f"{name}-{page.viewport_size['width']}.png"), full_page=True)


async def admin_text(browser, base: str, vp: dict, name: str) -> str:
    """The admin page's text at viewport `vp`, shot as `name`."""
    admin = await browser.new_context(bypass_csp=True, viewport=vp)
    ap = await admin.new_page()
    await browser_admin_login(ap, base, "pw")
    await ap.goto(base + "/admin")
    text = await ap.text_content("body")
    await shot(ap, name)
    await admin.close()
    return text


async def newcomer(browser, base: str, viewport=DESKTOP, tag: str | None = None):
    """A participant from the landing page through consent to the instructions; returns the page."""
    ctx = await browser.new_context(bypass_csp=True, viewport=viewport)
    page = await ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.js_errors = errors
    await page.goto(base + "/")
    if tag:
        await shot(page, f"{tag}-landing")
    await page.click("text=Start")
    await page.wait_for_selector("text=Consent")
    if tag:
        await shot(page, f"{tag}-consent")
    await page.check("input[name=agree]")
    await page.click("text=Continue")
    await page.wait_for_selector("#s-idle:not([hidden])")
    if tag:
        await shot(page, f"{tag}-instructions")
    return page


async def join(page) -> None:
    await page.click("#btn-join")


async def role(page) -> str:
    await page.wait_for_selector("#s-game:not([hidden])", timeout=15000)
    return "interrogator" if (await page.text_content("#role-line")).startswith("You are the interrogator") else "witness"


async def two_in_a_game(browser, base: str, viewport=DESKTOP) -> dict:
    """Two newcomers who join and are matched: their pages by role ("interrogator", "witness")."""
    a = await newcomer(browser, base, viewport)
    b = await newcomer(browser, base, viewport)
    await join(a)
    await join(b)
    return {await role(a): a, await role(b): b}


async def type_send(page, text: str, conv: str = "A") -> None:
    tab = page.locator(f'#conv-tabs .tab[data-conv="{conv}"]')
    if await tab.is_visible():  # three-player on a phone: one conversation at a time, as tabs
        await tab.click()
    box = page.locator(f'.conv[data-conv="{conv}"] textarea')
    await page.wait_for_selector(f'.conv[data-conv="{conv}"] button:not([disabled])')
    await box.fill(text)
    await box.press("Enter")


async def last_theirs(page, conv: str = "A", count: int = 1) -> str:
    sel = f'.conv[data-conv="{conv}"] .msg.theirs'
    await page.wait_for_function(f"document.querySelectorAll('{sel}').length >= {count}", timeout=15000)
    return await page.locator(sel).nth(count - 1).text_content()


async def give_verdict(page, choice: str, confidence: int, reason: str) -> None:
    if await page.is_visible("#btn-verdict"):
        await page.click("#btn-verdict")
    if await page.is_visible("#choices"):  # a directional scale has no choice buttons: the slider's side is it
        await page.check(f"input[name=choice][value={choice}]")
    await page.locator("#confidence").fill(str(confidence))
    await page.fill("#reason", reason)
    await page.click("#verdict-form button[type=submit]")
    await page.wait_for_selector("#s-reveal:not([hidden])")


async def test_two_humans_play_to_the_stored_verdict(chromium_path, sqlite_url):
    async with world(chromium_path, study("b-human"), sqlite_url) as (base, browser):
        for vp, tag in ((PHONE, "phone"), (DESKTOP, "desktop")):
            a = await newcomer(browser, base, vp, tag="human")
            b = await newcomer(browser, base, vp)
            await join(a)
            await a.wait_for_selector("#s-waiting:not([hidden])")
            await shot(a, "human-waiting")
            await join(b)
            pages = {await role(a): a, await role(b): b}
            i, w = pages["interrogator"], pages["witness"]
            # untrusted text is shown as text, never run as HTML
            evil = "<img src=x onerror=\"window.pwned=1\"><b>hi</b>"
            await type_send(i, evil)
            assert await last_theirs(w) == evil
            assert await w.evaluate("window.pwned") is None
            assert await w.locator(".msg b").count() == 0
            # paste is blocked and recorded
            await w.locator(".conv textarea").focus()
            await w.evaluate("""() => { const t = document.querySelector('.conv textarea');
                const e = new ClipboardEvent('paste', {clipboardData: new DataTransfer(), cancelable: true, bubbles: true});
                e.clipboardData.setData('text/plain', 'pasted words'); t.dispatchEvent(e); }""")
            await w.wait_for_selector("#toast:not([hidden])")
            assert await w.input_value(".conv textarea") == ""
            # the character counter at the limit
            await w.locator(".conv textarea").fill("y" * 400)
            assert await w.input_value(".conv textarea") == "y" * 300
            assert await w.text_content(".counter") == "300/300"
            assert "over" in await w.get_attribute(".counter", "class")
            await shot(w, "human-game-witness")
            await type_send(w, "not a bot, promise")
            assert await last_theirs(i) == "not a bot, promise"
            timer = await i.text_content("#timer")
            assert re.fullmatch(r"0:[012]\d", timer), timer
            await shot(i, "human-game-interrogator")
            await i.click("#btn-verdict")
            await shot(i, "human-verdict")
            await give_verdict(i, "human", 80, "typos & <feelings>")
            await w.wait_for_selector("#s-reveal:not([hidden])")
            assert "You were right." in await i.text_content("#reveal-body")
            assert "typos & <feelings>" in await w.text_content("#reveal-body")
            await shot(i, "human-reveal")
            await i.click("#btn-again")  # first game: the survey comes first
            await i.wait_for_selector("#s-survey:not([hidden])")
            await shot(i, "human-survey")
            await i.fill("input[name=age]", "41")
            await i.select_option("select[name=chatbot_use]", "daily")
            await i.click("#survey-form button[type=submit]")
            await i.wait_for_selector("#s-waiting:not([hidden])")
            await i.click("#btn-leave-queue")
            await i.wait_for_selector("#s-idle:not([hidden])")
            assert a.js_errors == [] and b.js_errors == []
            await a.context.close()
            await b.context.close()
    with Store(sqlite_url) as store:
        games = store.games()
        assert len(games) == 2 and all(g.verdict and g.verdict.choice == "human" and g.verdict.correct for g in games)
        assert all(g.verdict.confidence == 80 and g.verdict.reason == "typos & <feelings>" for g in games)
        pastes = [e for g in games for e in store.events(g.id) if e.type == "paste"]
        assert len(pastes) == 2
        i_pid = games[0].interrogator_id
        assert store.get_participant(i_pid).demographics["age"] == 41


async def test_play_against_eliza(chromium_path, sqlite_url):
    async with world(chromium_path, study("b-eliza", ratio=0.0, witnesses=(ELIZA,)), sqlite_url) as (base, browser):
        page = await newcomer(browser, base, PHONE)
        await join(page)
        assert await role(page) == "interrogator"
        def secs(t: str) -> int:
            m, s_ = t.split(":")
            return int(m) * 60 + int(s_)

        # the header's placeholder (5:00) is replaced by the game's own clock on its first state frame
        await page.wait_for_function("() => { const t = document.querySelector('#timer');"
                                     " return t && !t.hidden && t.textContent.trim() !== '5:00'; }")
        before = secs(await page.text_content("#timer"))
        await page.wait_for_timeout(2300)
        after = secs(await page.text_content("#timer"))
        assert 2 <= before - after <= 3, (before, after)  # the countdown runs
        await type_send(page, "I am unhappy about my mother")
        reply = await last_theirs(page)
        assert reply.strip()
        await shot(page, "eliza-game")
        await give_verdict(page, "ai", 95, "it only asks questions")
        body = await page.text_content("#reveal-body")
        assert "You were talking to an AI." in body and "You were right." in body
        await shot(page, "eliza-reveal")
        for vp in (PHONE, DESKTOP):
            assert "Eliza" in await admin_text(browser, base, vp, "admin")
    with Store(sqlite_url) as store:
        (g,) = store.games()
        assert g.seats["A"].witness == "Eliza" and g.verdict.correct is True


async def test_three_player_game(chromium_path, sqlite_url):
    s = study("b-three", fmt="three-player", witnesses=(ELIZA,))
    async with world(chromium_path, s, sqlite_url) as (base, browser):
        for vp in (PHONE, DESKTOP):
            pages = await two_in_a_game(browser, base, vp)
            i, w = pages["interrogator"], pages["witness"]
            assert await i.locator(".conv").count() == 2 and await w.locator(".conv").count() == 1
            seat = await w.get_attribute(".conv", "data-conv")
            other = "B" if seat == "A" else "A"
            await type_send(i, "hi A, what's up", "A")
            await type_send(i, "hi B, what's up", "B")
            assert await last_theirs(w, seat) == f"hi {seat}, what's up"
            await type_send(w, "human here, honest", seat)
            assert await last_theirs(i, seat) == "human here, honest"
            assert (await last_theirs(i, other)).strip()
            await shot(i, "three-game-interrogator")
            await shot(w, "three-game-witness")
            await give_verdict(i, seat, 70, "")
            assert "You were right." in await i.text_content("#reveal-body")
            await shot(i, "three-reveal")
            await i.context.close()
            await w.context.close()
    with Store(sqlite_url) as store:
        assert all(g.verdict.correct for g in store.games()) and len(store.games()) == 2


async def test_reload_mid_game_resumes_with_nothing_lost(chromium_path, sqlite_url):
    async with world(chromium_path, study("b-reload"), sqlite_url) as (base, browser):
        pages = await two_in_a_game(browser, base)
        i, w = pages["interrogator"], pages["witness"]
        await type_send(i, "first")
        await last_theirs(w)
        await type_send(w, "second")
        await last_theirs(i)
        await w.locator(".conv textarea").fill("a draft, not sent yet")
        await w.reload()  # the witness refreshes in the middle of the game
        await w.wait_for_selector("#s-game:not([hidden])")
        texts = await w.locator(".msg").all_text_contents()
        assert texts == ["first", "second"]
        assert await w.input_value(".conv textarea") == "a draft, not sent yet"
        await w.locator(".conv textarea").fill("")
        await type_send(i, "third")
        assert await last_theirs(w, count=2) == "third"
        await i.reload()
        await i.wait_for_selector("#s-game:not([hidden])")
        assert await i.locator(".msg").all_text_contents() == ["first", "second", "third"]
        # the interrogator is waiting for a reply: the send button stays off after the reload
        assert await i.is_disabled(".conv button")
        await type_send(w, "fourth")
        assert await last_theirs(i, count=2) == "fourth"
        await give_verdict(i, "ai", 30, "")
    with Store(sqlite_url) as store:
        (g,) = store.games()
        msgs = [e.payload["text"] for e in store.events(g.id) if e.type == "message"]
        assert msgs == ["first", "second", "third", "fourth"]


# ---- items 9-12 of issue 10: abandoned games end, blocked AI replies regenerated, the lone
# three-player participant, participant polish (display name, decline, background-tab alert,
# plain reveal, placeholder, confidence slider, favicon, live admin with transcripts)


async def test_polish_display_name_decline_alert_slider_reveal_and_live_admin(chromium_path, sqlite_url):
    from turinglab.game.study_file import load_preset

    preset = load_preset("jones-bergen-2023")
    assert preset.rules.verdict_grace_s is not None  # item 9: the preset ends abandoned games
    rules = preset.rules.model_copy(update={"time_limit_s": 12, "verdict_grace_s": 2.5, "typing_min_s": 0.1,
                                            "typing_jitter_s": 0.2})
    s = Study(name="b-polish-internal", display_name="Chat study: human or AI?", rules=rules,
              allocation=Allocation(human_ratio=1.0), no_consent_url="/static/favicon.svg?no-consent")
    async with world(chromium_path, s, sqlite_url) as (base, browser):
        # decline: the consent page offers a way out, to the study's no-consent link
        ctx = await browser.new_context(bypass_csp=True, viewport=PHONE)
        d = await ctx.new_page()
        await d.goto(base + "/")
        assert await d.text_content(".brand") == "Chat study: human or AI?"
        assert "b-polish-internal" not in await d.content() and "Chat study" in await d.title()
        await d.click("text=Start")
        await d.wait_for_selector("#btn-decline")
        await shot(d, "polish-consent")
        await d.click("#btn-decline")
        await d.wait_for_url("**/static/favicon.svg?no-consent")
        await ctx.close()
        # a live admin page, open before the game starts
        adm_ctx = await browser.new_context(bypass_csp=True, viewport=DESKTOP)
        adm = await adm_ctx.new_page()
        await browser_admin_login(adm, base, "pw")
        await adm.goto(base + "/admin")
        assert "Games in progress (0)" in await adm.text_content("#live")
        a = await newcomer(browser, base, DESKTOP)
        b = await newcomer(browser, base, DESKTOP)
        # the favicon is linked and served
        icon = await a.get_attribute("link[rel=icon]", "href")
        assert (await a.request.get(base + icon)).ok
        # a waits in a "background tab" with the sound alert on
        await a.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
                                    window.__beeps = 0; const C = window.AudioContext;
                                    window.AudioContext = function () { const c = new C(); const o = c.createOscillator.bind(c);
                                      c.createOscillator = () => { window.__beeps++; return o(); }; return c; }; }""")
        await join(a)
        await a.wait_for_selector("#s-waiting:not([hidden])")
        await a.check("#sound")
        await shot(a, "polish-waiting")
        await join(b)
        pages = {await role(a): a, await role(b): b}
        assert (await a.title()).startswith("● Your game has started!")
        assert await a.evaluate("window.__beeps") >= 2  # the test beep when ticked, then the alert
        assert not (await b.title()).startswith("●")  # b was looking
        await a.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});
                                    document.dispatchEvent(new Event('visibilitychange')); }""")
        assert not (await a.title()).startswith("●")
        i, w = pages["interrogator"], pages["witness"]
        # no "Wait for a reply" before anything was said
        assert await w.get_attribute(".conv textarea", "placeholder") == "The interrogator writes first…"
        assert "write first" in await i.get_attribute(".conv textarea", "placeholder")
        await shot(w, "polish-witness-before-first-message")
        # the admin page refreshed itself: the game is listed without a reload
        await adm.wait_for_function("document.getElementById('live').textContent.includes('Games in progress (1)')",
                                    timeout=10000)
        await type_send(i, "hello <there> & you")
        assert await last_theirs(w) == "hello <there> & you"
        assert await w.get_attribute(".conv textarea", "placeholder") == "Type a message"
        await type_send(w, "hi, who's asking")
        await last_theirs(i)
        # the confidence slider must be moved (or clicked) before the verdict goes
        await i.click("#btn-verdict")
        await i.check("input[name=choice][value=human]")
        assert await i.text_content("#conf-out") == "move the slider"
        assert "just guessing" in await i.text_content(".range-ends")
        await i.click("#verdict-form button[type=submit]")
        await i.wait_for_selector("#toast:not([hidden])")
        assert "move the slider" in await i.text_content("#toast")
        assert await i.is_visible("#s-verdict")
        await shot(i, "polish-verdict-slider-untouched")
        await i.locator("#confidence").click()  # a click confirms (here at the middle)
        assert await i.text_content("#conf-out") == "50"
        await i.click("#verdict-form button[type=submit]")
        await i.wait_for_selector("#s-reveal:not([hidden])")
        await w.wait_for_selector("#s-reveal:not([hidden])")
        ib, wb = await i.text_content("#reveal-body"), await w.text_content("#reveal-body")
        assert "You were talking to a human." in ib and "You were right." in ib
        assert "You were the witness" in wb and "The interrogator said you were a human" in wb
        assert "You convinced them." in wb and "Witness A" not in ib + wb and "witness A" not in ib + wb
        await shot(i, "polish-reveal-interrogator")
        await shot(w, "polish-reveal-witness")
        # the transcript, from the admin page (text shown as text)
        await adm.click("#live a[href^='/admin/game/']")
        await adm.wait_for_selector("table.transcript")
        assert "hello <there> & you" in await adm.text_content("table.transcript")
        await shot(adm, "polish-admin-transcript")
        # item 9: a game abandoned after time-up ends as verdict_timeout
        await i.click("#btn-again")
        await i.click("#btn-skip")
        await w.click("#btn-again")
        await w.click("#btn-skip")
        pages = {await role(i): i, await role(w): w}
        i2, w2 = pages["interrogator"], pages["witness"]
        await type_send(i2, "are you there?")
        await i2.wait_for_selector("#s-verdict:not([hidden])", timeout=20000)  # time is up
        await i2.context.close()  # the interrogator walks away instead of deciding
        await w2.wait_for_selector("#s-reveal:not([hidden])", timeout=15000)
        assert "No verdict was given in time." in await w2.text_content("#reveal-body")
        await shot(w2, "polish-abandoned-reveal")
        assert w2.js_errors == [] and adm.url.startswith(base + "/admin/game/")
        await adm_ctx.close()
    with Store(sqlite_url) as store:
        games = sorted(store.games(), key=lambda g: g.started_ms)
        assert [g.end_reason for g in games] == ["verdict", "verdict_timeout"]
        assert games[0].verdict.confidence == 50


class _RudeOnce:
    def __new__(cls):
        from turinglab.witnesses.base import Reply, Witness

        class RudeOnce(Witness):
            codename, kind = "Fresh", "local"
            calls = 0

            async def reply(self, history, ctx):
                self.calls += 1
                return Reply(text="fuck off" if self.calls == 1 else "lol hi, just chilling, you?")

        return RudeOnce()


async def test_blocked_ai_reply_regenerated_and_lone_three_player(chromium_path, sqlite_url):
    slow = Timing(base_s=1.2, s_per_char=0.005, gamma_shape=2.0, gamma_scale=0.05)
    spec = WitnessSpec(codename="Fresh", kind="local", timing=slow)
    s = Study(name="b-regen", rules=RULES, witnesses=(spec,), allocation=Allocation(human_ratio=0.0))
    async with world(chromium_path, s, sqlite_url, witness_factory=lambda spec, seed: _RudeOnce()) as (base, browser):
        page = await newcomer(browser, base, PHONE)
        await join(page)
        assert await role(page) == "interrogator"
        await type_send(page, "hey, how are you")
        assert await last_theirs(page) == "lol hi, just chilling, you?"  # the model again, not ELIZA
        await shot(page, "regen-game")
        assert "Blocked AI outputs: 1" in await admin_text(browser, base, DESKTOP, "regen-admin")
    s3 = Study(name="b-lone", format="three-player", rules=RULES, witnesses=(ELIZA,),
               allocation=Allocation(lone_wait_s=3), completion_url="/static/favicon.svg?done")
    async with world(chromium_path, s3, sqlite_url) as (base, browser):
        page = await newcomer(browser, base, PHONE)
        await join(page)
        await page.wait_for_selector("#s-waiting:not([hidden])")
        assert "1 of 2 needed" in await page.text_content("#lone-count")
        assert "within 3 seconds" in await page.text_content("#s-waiting")
        await shot(page, "lone-waiting")
        await page.wait_for_selector("#s-alone:not([hidden])", timeout=10000)
        await shot(page, "lone-ended")
        assert (await page.get_attribute("#btn-finish", "href")).endswith("/done")  # to the completion link
        await page.click("#btn-wait-more")  # waiting again, and a second person arrives
        await page.wait_for_selector("#s-waiting:not([hidden])")
        other = await newcomer(browser, base, PHONE)
        await join(other)
        await role(page)
        await role(other)
        assert page.js_errors == []
