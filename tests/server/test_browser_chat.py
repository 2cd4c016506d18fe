"""The live chat in Chromium (issue 27, item 5) at a phone's 390x844 and at 1280x800: the chat fills
the screen with the composer at the bottom, messages carry a time and one's own a tick once the
server has stored them (not before), reporting abuse asks first and sits away from "Give verdict",
the reveal (and only the reveal) names the AI, and three-player shows tabs on a phone and the two
conversations side by side on a wide screen.

Screenshots go to this run's temporary folder; with TURINGLAB_DOC_SHOTS=docs/screenshots the ones the
docs show are written there too (docs/protocol.md, "The chat on a phone").
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.server.test_browser import RULES, ELIZA, give_verdict, join, last_theirs, newcomer, role, type_send, world
from turinglab.game.config import Allocation, Study
from turinglab.store.api import Store

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
TIME = re.compile(r"\d{1,2}:\d{2}( ?[AP]M)?")
SHOTS = Path()


def study(name: str, fmt: str = "two-player", ratio: float = 1.0) -> Study:
    """A study with ELIZA and a minute's chat (time enough on a loaded machine)."""
    return Study(name=name, format=fmt, rules=RULES.model_copy(update={"time_limit_s": 60}), witnesses=(ELIZA,),
                 allocation=Allocation(human_ratio=ratio, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))


@pytest.fixture(scope="module", autouse=True)
def _shots(tmp_path_factory):
    global SHOTS
    SHOTS = tmp_path_factory.mktemp("chat-shots")
    print(f"\nscreenshots: {SHOTS}")


async def doc_shot(page, name: str, full: bool = False) -> None:
    """A screenshot in this run's folder, and in the docs' folder when TURINGLAB_DOC_SHOTS names one."""
    vp = page.viewport_size
    file = f"chat-{name}-{vp['width']}x{vp['height']}.png"
    await page.screenshot(path=str(SHOTS / file), full_page=full)
    if os.environ.get("TURINGLAB_DOC_SHOTS"):
        await page.screenshot(path=str(Path(os.environ["TURINGLAB_DOC_SHOTS"]) / file), full_page=full)


async def box(page, sel: str) -> dict:
    b = await page.locator(sel).bounding_box()
    assert b is not None, f"{sel} is not shown"
    return b


async def assert_fills_the_screen(page, conv: str = "A") -> None:
    """The composer of `conv` ends at the bottom of the viewport, its message list fills the space
    above it, and the page itself does not scroll (no empty part under the chat)."""
    h = page.viewport_size["height"]
    pane = f'.conv[data-conv="{conv}"]'
    form, msgs = await box(page, pane + " .compose"), await box(page, pane + " .msgs")
    bottom = form["y"] + form["height"]
    assert h - 24 <= bottom <= h, (bottom, h)
    assert msgs["y"] + msgs["height"] <= form["y"] + 1  # above the composer
    assert form["y"] - (msgs["y"] + msgs["height"]) <= 40, (msgs, form)  # at most the "typing…" line between
    assert msgs["height"] >= 0.5 * h, msgs  # the list takes most of the screen (the old page left a third empty)
    assert await page.evaluate("document.scrollingElement.scrollHeight") <= h + 1


async def after(page, sel: str) -> str:
    """The CSS-drawn ::after text of `sel` (a message's time and tick)."""
    return await page.eval_on_selector(sel, "e => getComputedStyle(e, '::after').content")


async def report_is_small_and_away(page) -> None:
    rep, ver = await box(page, "#btn-report"), await box(page, "#btn-verdict")
    assert rep["width"] * rep["height"] < 0.6 * ver["width"] * ver["height"], (rep, ver)
    assert rep["height"] < ver["height"]
    assert ver["x"] - (rep["x"] + rep["width"]) >= 60, (rep, ver)  # far apart, on either side of the bar


DROP_MESSAGES = """() => { const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (d) { if (JSON.parse(d).type === 'message') return; return send.call(this, d); }; }"""


@pytest.mark.parametrize("vp", [PHONE, DESKTOP], ids=["phone", "desktop"])
async def test_the_chat_fills_the_screen_with_times_ticks_a_confirmed_report_and_the_ai_named(
        chromium_path, sqlite_url, vp):
    async with world(chromium_path, study("b-chat", ratio=0.0), sqlite_url) as (base, browser):
        page = await newcomer(browser, base, vp)
        await join(page)
        assert await role(page) == "interrogator"
        assert await page.evaluate("document.body.classList.contains('in-chat')")
        assert "viewport-fit=cover" in await page.get_attribute("meta[name=viewport]", "content")
        await assert_fills_the_screen(page)
        await report_is_small_and_away(page)

        # a message the server has not stored yet: "sending…", no time, no tick (its frame is dropped)
        await page.evaluate(DROP_MESSAGES)
        await type_send(page, "are you a bot?")
        mine = ".msg.mine"
        await page.wait_for_selector(mine + ".pending")
        await page.wait_for_timeout(800)
        assert await page.get_attribute(mine, "class") == "msg mine pending"
        assert await after(page, mine) == '"sending…"' and await page.get_attribute(mine, "data-time") is None
        # after a reload the page sends it again: stored, acknowledged, then the time and the tick
        await page.reload()
        await page.wait_for_selector(mine + ".sent", timeout=10000)
        assert TIME.fullmatch(await page.get_attribute(mine, "data-time"))
        assert (await after(page, mine)).endswith('✓"')
        assert await page.text_content(mine) == "are you a bot?"  # the mark is not part of the text
        await last_theirs(page)
        theirs = ".msg.theirs"
        assert TIME.fullmatch(await page.get_attribute(theirs, "data-time"))
        assert "✓" not in await after(page, theirs)
        await assert_fills_the_screen(page)
        assert "Eliza" not in await page.content()  # no witness name before the verdict

        # reporting asks first: one click opens a dialog, the game goes on
        await page.click("#btn-report")
        await page.wait_for_selector("#report-dialog[open]")
        await doc_shot(page, "report-dialog")
        await page.wait_for_timeout(800)
        assert await page.is_visible("#s-game") and await page.is_hidden("#s-reveal")
        await page.click("#btn-report-cancel")
        assert await page.get_attribute("#report-dialog", "open") is None
        await type_send(page, "tell me about your weekend")
        await last_theirs(page, count=2)
        assert await page.locator(".msg.mine.sent").count() == 2
        await doc_shot(page, "game")

        await give_verdict(page, "ai", 90, "")
        body = await page.text_content("#reveal-body")
        assert "You were talking to an AI." in body and "The AI witness: Eliza (ELIZA chatbot)" in body
        assert not await page.evaluate("document.body.classList.contains('in-chat')")
        await doc_shot(page, "reveal", full=True)

        # the second game is reported: the dialog's reason goes with it and the game ends
        await page.click("#btn-again")
        await page.click("#btn-skip")
        assert await role(page) == "interrogator"
        await page.click("#btn-report")
        await page.fill("#report-reason", "rude <words>")
        await page.click("#btn-report-confirm")
        await page.wait_for_selector("#s-reveal:not([hidden])")
        assert "ended by a report of abuse" in await page.text_content("#reveal-body")
        assert page.js_errors == []
    with Store(sqlite_url) as store:
        first, second = sorted(store.games(), key=lambda g: g.started_ms)
        assert first.end_reason == "verdict" and second.end_reason == "abuse_report"
        assert not [e for e in store.events(first.id) if e.type == "abuse_report"]
        (rep,) = [e for e in store.events(second.id) if e.type == "abuse_report"]
        assert rep.payload["reason"] == "rude <words>"


async def test_three_player_tabs_on_a_phone_side_by_side_on_a_desktop(chromium_path, sqlite_url):
    s = study("b-chat-three", fmt="three-player")
    async with world(chromium_path, s, sqlite_url) as (base, browser):
        for vp in (PHONE, DESKTOP):
            a, b = await newcomer(browser, base, vp), await newcomer(browser, base, vp)
            await join(a)
            await join(b)
            pages = {await role(a): a, await role(b): b}
            i, w = pages["interrogator"], pages["witness"]
            seat = await w.get_attribute(".conv", "data-conv")
            ai = "B" if seat == "A" else "A"
            await assert_fills_the_screen(w, seat)
            if vp is PHONE:  # one conversation at a time; the tabs switch, and count unseen replies
                assert await i.is_visible("#conv-tabs") and await i.locator("#conv-tabs .tab").count() == 2
                assert await i.is_visible('.conv[data-conv="A"]') and await i.is_hidden('.conv[data-conv="B"]')
                await assert_fills_the_screen(i, "A")
                await type_send(i, "hi A, what's up", "A")
                await i.click('#conv-tabs .tab[data-conv="B"]')
                assert await i.is_hidden('.conv[data-conv="A"]')
                await assert_fills_the_screen(i, "B")
                await type_send(i, "hi B, what's up", "B")
                await i.click(f'#conv-tabs .tab[data-conv="{ai}"]')  # the AI's chat shown from here on
                assert await i.is_hidden(f'#conv-tabs .tab[data-conv="{ai}"] .unread')
                await last_theirs(w, seat)
                await type_send(w, "human here", seat)
                await last_theirs(i, seat)  # the human's reply came while the other tab was shown: counted
                await i.wait_for_selector(f'#conv-tabs .tab[data-conv="{seat}"] .unread:not([hidden])')
                assert await i.text_content(f'#conv-tabs .tab[data-conv="{seat}"] .unread') == "1"
                await last_theirs(i, ai)
                assert await i.is_hidden(f'#conv-tabs .tab[data-conv="{ai}"] .unread')  # shown as it came
                await i.click(f'#conv-tabs .tab[data-conv="{seat}"]')
                assert await i.is_hidden(f'#conv-tabs .tab[data-conv="{seat}"] .unread')
            else:  # both conversations at once, side by side, each with its composer at the bottom
                assert await i.is_hidden("#conv-tabs")
                ba, bb = await box(i, '.conv[data-conv="A"]'), await box(i, '.conv[data-conv="B"]')
                assert abs(ba["y"] - bb["y"]) < 1 and ba["x"] + ba["width"] <= bb["x"]
                for c in "AB":
                    await assert_fills_the_screen(i, c)
                    await type_send(i, f"hi {c}, what's up", c)
                await last_theirs(w, seat)
                await type_send(w, "human here", seat)
                await last_theirs(i, "A")
                await last_theirs(i, "B")
            await report_is_small_and_away(i)
            await w.wait_for_selector(".msg.mine.sent")  # the human witness's reply: stored, ticked
            assert (await after(w, ".msg.mine.sent")).endswith('✓"') and await w.is_hidden("#btn-verdict")
            assert "Eliza" not in await i.content() + await w.content()
            await doc_shot(i, "three-game")
            await give_verdict(i, seat, 70, "")
            await w.wait_for_selector("#s-reveal:not([hidden])")
            ib, wb = await i.text_content("#reveal-body"), await w.text_content("#reveal-body")
            assert f"Witness {ai}: Eliza (ELIZA chatbot)" in ib and f"Witness {seat}:" not in ib
            assert "The other witness: Eliza (ELIZA chatbot)" in wb
            assert i.js_errors == [] and w.js_errors == []
            await i.context.close()
            await w.context.close()
