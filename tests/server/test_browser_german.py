"""A German study end to end in Chromium (issue 39): every page a participant sees, live and static
(static in Spanish too), is compared with the catalogue: once every message of it is taken out of the
page's text (and the chat's own messages, which are the players'), no word is left; the attributes
read out (placeholders, labels) are messages too, and so is every live-region announcement."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from a11y_helpers import DESKTOP, PHONE, RECORD_ANNOUNCEMENTS, axe_violations, said  # noqa: E402
from static_judge_data import chromium_on, make_study, submit_item  # noqa: E402

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec  # noqa: E402
from turinglab.i18n import tools  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
FAST = Timing(base_s=0.2, s_per_char=0.005, gamma_shape=2.0, gamma_scale=0.05)
ELIZA = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=FAST)
# replies at least 2.5 s after the question: a second message sent at once is refused, however busy the machine
SLOW = Timing(base_s=2.5, s_per_char=0.005, gamma_shape=2.0, gamma_scale=0.05)
ELIZA_SLOW = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=SLOW)
# the page's text a person reads, without the players' own words (messages, the announcement log)
PAGE_TEXT = """(hide) => {
  const gone = [...document.querySelectorAll(hide)];
  for (const e of gone) { e.dataset.was = e.style.display; e.style.display = 'none'; }
  const text = document.body.innerText;
  for (const e of gone) e.style.display = e.dataset.was;
  const attrs = [...document.querySelectorAll('[placeholder], [aria-label], [title], img[alt]')]
    .filter((e) => e.checkVisibility() && !e.closest(hide))
    .map((e) => e.getAttribute('placeholder') || e.getAttribute('aria-label') || e.getAttribute('title') || e.getAttribute('alt'));
  return { text: text, attrs: attrs, title: document.title, lang: document.documentElement.lang };
}"""


def catalogue_patterns(lang: str = "de") -> list[re.Pattern]:
    """Each message of the `lang` catalogue as a pattern: placeholders and a tag's content match anything, tags go,
    spaces are any space; longest first. Messages of placeholders alone ("{who}: {text}") are left
    out: they would match any text."""
    out = []
    for m in tools.read(tools.LOCALE_DIR / lang / "LC_MESSAGES" / "messages.po"):
        if not m.id or not m.string:
            continue
        s = re.sub(r"<span[^>]*>.*?</span>", "\0", m.string)
        s = re.sub(r"<[^>]+>", "", s)
        if not re.sub(r"%\(\w+\)s|\{\w+\}|\0", "", s).strip(" :"):
            continue
        parts = re.split(r"(%\(\w+\)s|\{\w+\}|\0)", s)
        rx = "".join((r"[^\n]*" if not "".join(parts[k + 1:]).strip() else r"[^\n]+?") if p and (p == "\0" or re.fullmatch(r"%\(\w+\)s|\{\w+\}", p)) else
                     r"\s+".join(map(re.escape, p.split())) + (r"\s*" if p.endswith(" ") else "") for k, p in enumerate(parts))
        out.append((len(s), re.compile(rx.replace(r"\s+\s*", r"\s+"))))
    return [p for _, p in sorted(out, key=lambda x: -x[0])]


PATTERNS = {lang: catalogue_patterns(lang) for lang in ("de", "es")}


def not_german(text: str, lang: str = "de") -> str:
    """What is left of `text` after every message of the catalogue is taken out: words not in it."""
    for p in PATTERNS[lang]:
        text = p.sub(" ", text)
    return " ".join(w for w in text.split() if re.search(r"[^\W\d_]", w))


async def read_german(page, name: str, hide: str = ".msg, #sr-live", lang: str = "de") -> None:
    got = await page.evaluate(PAGE_TEXT, hide)
    assert got["lang"] == lang, name
    assert not_german(got["text"], lang) == "", (name, not_german(got["text"], lang))
    for a in got["attrs"] + [got["title"]]:
        assert any(p.fullmatch(a.strip()) for p in PATTERNS[lang]) or not re.search(r"[^\W\d_]", a), (name, a)


async def test_a_german_study_plays_in_german_from_start_to_end(chromium_path, sqlite_url):
    s = Study(name="de-live", language="de", witnesses=(ELIZA_SLOW,), rules=Rules(time_limit_s=63, typing_min_s=0.1, typing_jitter_s=0.2),
              allocation=Allocation(human_ratio=0.0, ai_fallback_mean_s=1.0, ai_fallback_noise_sigma=0.01))
    # the AI game starts 8 s after joining: the waiting screen stays long enough to be read
    app = create_app(s, sqlite_url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=8, admin_password="pw")
    checked = []
    async with chromium_on(app, chromium_path) as (browser, base):
        for vp in (PHONE, DESKTOP):
            ctx = await browser.new_context(viewport=vp, bypass_csp=True)  # bypass: the test's own waits
            await ctx.add_init_script(RECORD_ANNOUNCEMENTS)
            page = await ctx.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))

            async def step(name: str) -> None:
                await read_german(page, name)
                assert await axe_violations(page) == [], name  # longer German text: still WCAG AA
                checked.append(f"{name} @{vp['width']}")

            await page.goto(base + "/")
            await step("landing")
            await page.click("form[action$='/start'] button")
            await page.wait_for_selector("input[name=agree]")
            await step("consent")
            await page.check("input[name=agree]")
            await page.click("form[action$='/consent'] button")
            await page.wait_for_selector("#s-idle:not([hidden])")
            assert "Ein Spiel dauert 63 Sekunden." in await page.text_content("#s-idle")
            await step("instructions")
            await page.click("#btn-join")
            await page.wait_for_selector("#s-waiting:not([hidden])")
            await step("waiting")
            await page.wait_for_selector("#s-game:not([hidden])", timeout=20000)
            await step("game")
            box = page.locator(".conv textarea")
            assert await box.get_attribute("placeholder") == "Sie schreiben zuerst: Nachricht eingeben"
            await box.type("Hallo, wer bist du?")
            await box.press("Enter")
            await box.type("Noch da?")  # before the reply: refused, in German
            await box.press("Enter")
            await page.wait_for_selector("#toast:not([hidden])")
            assert (await page.text_content("#toast")).strip() == "Warten Sie auf die Antwort, bevor Sie eine weitere Nachricht senden."
            await page.wait_for_selector(".msg.theirs", timeout=15000)
            await step("game with messages")
            await page.wait_for_function("window.__said.some((a) => a.text === 'Noch eine Minute.')", timeout=15000)
            for a in await said(page):  # every announcement: German, or a player's own words after "Gegenüber: "
                t = a["text"]
                assert t.startswith("Gegenüber: ") or not_german(t) == "", t
            assert "Gegenüber schreibt …" in [a["text"] for a in await said(page)]
            await page.click("#btn-verdict")
            await step("verdict")
            await page.check("input[name=choice][value=ai]")
            await page.click("#verdict-form button[type=submit]")
            await page.wait_for_selector("#toast:not([hidden])")
            await step("verdict with an error")
            await page.locator("#confidence").fill("70")
            await page.fill("#reason", "zu glatt")
            await page.click("#verdict-form button[type=submit]")
            await page.wait_for_selector("#s-reveal:not([hidden])")
            assert "Sie haben mit einer KI gesprochen." in await page.text_content("#reveal-body")
            await read_german(page, "reveal", ".msg, #sr-live, .which-ai b")  # the AI's codename is the study's
            checked.append(f"reveal @{vp['width']}")
            await page.click("#btn-again")
            await page.wait_for_selector("#s-survey:not([hidden])")
            await step("survey")
            assert "täglich" in await page.inner_text("select[name=chatbot_use]")
            await page.select_option("select[name=chatbot_use]", "daily")
            await page.click("#survey-form button[type=submit]")
            await page.wait_for_selector("#s-waiting:not([hidden]), #s-game:not([hidden])")
            await page.goto(page.url + "/done")
            await step("done")
            assert errors == []
            await ctx.close()
    assert len(checked) == 2 * 11, checked
    with Store(sqlite_url) as st:
        games = [g for g in st.games() if g.verdict]  # (a later game may have started from the queue)
        assert len(games) == 2 and {g.verdict.reason for g in games} == {"zu glatt"}
        assert all(st.get_participant(g.interrogator_id).demographics["chatbot_use"] == "daily" for g in games)


@pytest.mark.parametrize("lang", ["de", "es"])
async def test_a_judge_session_is_in_the_studys_language_on_every_page(lang, chromium_path, sqlite_url, tmp_path):
    """The same for a static study, in German and in Spanish."""
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, items=3, feedback=1, min_rt_ms=200, completion_url=None, language=lang)
        study = st.static_study(sid).study.model_copy(update={"display_name": None})
    app = create_static_app(study, sqlite_url, admin_password="pw", rng_seed=2)
    names = []
    async with chromium_on(app, chromium_path) as (browser, base):
        ctx = await browser.new_context(viewport=PHONE)
        page = await ctx.new_page()
        await page.goto(base + "/")
        await read_german(page, "landing", lang=lang)
        await page.click("form[action$='/start'] button")
        await read_german(page, "consent", lang=lang)
        await page.check("input[name=agree]")
        await page.click("form[action$='/consent'] button")
        n = 0
        while True:
            await page.wait_for_selector("#answer-form, #feedback, #survey-form")
            if await page.locator("#feedback").count():
                await read_german(page, "feedback", lang=lang)
                names.append("feedback")
                await page.click("#btn-next")
                continue
            if await page.locator("#survey-form").count():
                break
            await read_german(page, f"item {n}", "#cue, #response", lang)  # the item's words are the study's data
            names.append(f"item {n}")
            await page.check("input[name=answer][value=human]")
            await page.wait_for_selector("#btn-submit:not([disabled])")
            await submit_item(page)
            n += 1
        await read_german(page, "survey", lang=lang)
        await page.click("#btn-skip")
        await page.wait_for_selector({"de": "text=Danke für Ihre Teilnahme", "es": "text=Gracias por participar"}[lang])
        await read_german(page, "done", lang=lang)
        await ctx.close()
    assert "feedback" in names and n >= 3
