"""Judge sessions of the six static tasks in a real browser (Debian chromium driven by Playwright)
against a real server and SQLite store: from the link to stored trials, at 390 and 1280 px.

Screenshots go to a per-run temporary folder (printed; `pytest -s` shows it)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import chromium_on, make_study, submit_item  # noqa: E402

from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.server.testing import browser_admin_login  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
WIDTHS = ({"width": 390, "height": 844}, {"width": 1280, "height": 900})
MIN_RT = 800


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("judge-shots")
    print(f"\nscreenshots: {d}")
    return d


async def shot(page, shots: Path, name: str) -> None:
    await page.evaluate("window.scrollTo(0, 0)")  # a scrolled page draws the sticky header mid-shot
    await page.screenshot(path=str(shots / f"{name}-{page.viewport_size['width']}.png"), full_page=True)


@pytest.mark.parametrize("task", ["word", "caption", "object", "color", "fv", "conversation"])
async def test_judge_session_from_link_to_stored_trials(task, chromium_path, sqlite_url, tmp_path, shots):
    with Store(sqlite_url) as st:
        sid = make_study(st, task, tmp_path / "img", items=4, feedback=1, controls=1, min_rt_ms=MIN_RT)
        study = st.static_study(sid).study
        items = {i.id: i for i in st.items(sid)}
    app = create_static_app(study, sqlite_url, admin_password="pw", rng_seed=11)
    async with chromium_on(app, chromium_path) as (browser, base):
        for k, vp in enumerate(WIDTHS):
            judge = await run_judge(browser, base, vp, task, shots, prolific=(k == 0))
            with Store(sqlite_url) as st:
                trials = st.trials(sid, judge_id=judge)
                sess = st.start_judge_session(sid, judge)
                person = st.get_participant(judge)
            assert [t.seq for t in trials] == list(range(len(sess.items))) == list(range(6))
            assert [t.response_id for t in trials] == [p.response_id for p in sess.items]
            assert [t.phase for t in trials] == ["feedback"] + ["test"] * 5
            assert all(t.rt_ms >= MIN_RT for t in trials)
            assert sum(items[t.response_id].control for t in trials) == 1
            assert person.demographics["age"] == 41 and person.consent_ms is not None
            if k == 0:
                assert (person.prolific_pid, person.prolific_study_id) == (f"PP-{task}", "ST1")
            if task == "conversation":
                assert all(set(t.answers["speakers"]) == {"A", "B"} and set(t.answers["genders"]) == {"A", "B"}
                           and t.answers["control"] for t in trials)
            if task == "word" and k == 1:  # the back button and a second submit stored nothing twice
                assert len({t.response_id for t in trials}) == 6
        admin = await browser.new_context(viewport=WIDTHS[1])
        ap = await admin.new_page()
        await browser_admin_login(ap, base, "pw")
        await ap.goto(base + "/admin")
        await ap.wait_for_selector("text=2 complete")
        await shot(ap, shots, f"{task}-admin")


async def run_judge(browser, base: str, vp: dict, task: str, shots: Path, prolific: bool) -> str:
    """One judge from the link to the completion redirect; returns the judge's id."""
    ctx = await browser.new_context(viewport=vp)
    await ctx.add_init_script("document.addEventListener('DOMContentLoaded', () => {"
                              " const b = document.getElementById('btn-submit'); if (b) window.__gated = b.disabled; });")
    page = await ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if prolific:
        await page.goto(f"{base}/?PROLIFIC_PID=PP-{task}&STUDY_ID=ST1&SESSION_ID=SE1")
        await page.click("text=Start")  # issue 24: the link's page has a button (a same-site POST)
    else:
        await page.goto(base + "/")
        await shot(page, shots, f"{task}-landing")
        await page.click("text=Start")
    await page.wait_for_selector("text=Consent")
    if task == "word":
        await shot(page, shots, "consent")
    judge = page.url.rstrip("/").rsplit("/", 1)[1]
    await page.check("input[name=agree]")
    await page.click("text=Continue")
    n_items = gated = 0
    while True:
        await page.wait_for_selector("#answer-form, #feedback, #survey-form")
        if await page.is_visible("#feedback"):
            await shot(page, shots, f"{task}-feedback")
            await page.click("#btn-next")
            continue
        if await page.is_visible("#survey-form"):
            break
        # an item: the answer waits for the minimum viewing time (and, for eye movements, one playback)
        # disabled as the page came up (recorded by the init script), so never answerable too soon
        # (the page may still be loading: wait until its DOMContentLoaded listener has run)
        await page.wait_for_function("window.__gated !== undefined")
        assert await page.evaluate("window.__gated") is True
        gated += 1
        if n_items == 0:
            await shot(page, shots, f"{task}-item-start")
        await answer(page, task)
        await page.wait_for_selector("#btn-submit:not([disabled])", timeout=20000)
        if n_items in (0, 1):
            await shot(page, shots, f"{task}-item{n_items}")
            await check_drawing(page, task)
        await submit_item(page)
        n_items += 1
        if task == "word" and n_items == 2 and not prolific:
            await resubmit_from_history(page)
    await shot(page, shots, f"{task}-survey")
    await page.fill("input[name=age]", "41")
    await page.select_option("select[name=gender]", "female")
    await page.click("text=Save and finish")
    await page.wait_for_selector("#done-countdown", state="attached")  # time to withdraw first: the link goes on now
    await page.click("a.button")
    await page.wait_for_url("**/healthz?cc=C0MPLETE")
    assert n_items == gated == 6
    assert await page.evaluate("window.pwned") is None  # user text never ran as markup
    assert errors == []
    await ctx.close()
    return judge


async def answer(page, task: str) -> None:
    if task == "conversation":
        for i, (lab, gen) in enumerate((("human", "female"), ("machine", "male"))):
            await page.check(f"input[name=speaker_{i}][value={lab}]")
            await page.check(f"input[name=gender_{i}][value={gen}]")
    else:
        await page.check("input[name=answer][value=machine]")
    if await page.locator("input[name=control]").count():
        await page.locator("input[name=control]").first.check()


async def check_drawing(page, task: str) -> None:
    """The picture is loaded and what belongs over it is drawn."""
    if task in ("word", "conversation"):
        text = await page.text_content("#cue" if task == "word" else "#transcript")
        assert text.strip()
        if task == "conversation":
            assert await page.locator("#transcript li").count() == 6
        return
    assert await page.evaluate("document.getElementById('picture').naturalWidth") > 100
    if task == "color":  # the whole picture, nothing drawn over it (Zhang: no marked point)
        assert await page.locator("#overlay *").count() == 0
    if task == "fv":
        n = await page.evaluate("JSON.parse(document.getElementById('item-data').textContent).scanpath.length")
        assert await page.locator("#overlay circle.fixation").count() == n
        await page.click("#btn-replay")  # replayable: starts again from the first fixation
        assert await page.locator("#overlay circle.fixation").count() == 1


async def resubmit_from_history(page) -> None:
    """Back to an item already answered and answer it again: the server stores nothing twice and
    the judge lands on the item they were on (the browser may also re-fetch the current item)."""
    n_now = await page.get_attribute("input[name=n]", "value")
    await page.go_back()
    await page.wait_for_selector("#answer-form, #feedback")
    if await page.is_visible("#answer-form"):
        n_back = await page.get_attribute("input[name=n]", "value")
        if n_back != n_now:  # a stale copy of an answered item: submit it again
            await answer(page, "word")
            await page.wait_for_selector("#btn-submit:not([disabled])", timeout=20000)
            await page.click("#btn-submit")
            await page.wait_for_selector("#answer-form, #feedback")
    await page.goto(page.url.split("/p/")[0] + "/p/" + page.url.split("/p/")[1].split("/")[0])
    await page.wait_for_selector("#answer-form")
    await page.reload()
    await page.wait_for_selector("#answer-form")
    assert await page.get_attribute("input[name=n]", "value") == n_now


async def test_a_displaced_test_from_live_games_plays_in_the_browser(chromium_path, sqlite_url, tmp_path, shots):
    """Live three-player games played over the real protocol (HTTP + websockets, ELIZA and a human
    witness), cut into conversation items by `from-games`, judged in Chromium: the judge sees exactly
    the stored messages, and the trials are stored against those items."""
    import asyncio

    from tests.server.live.test_server import ELIZA, running, study
    from turinglab.bots.play import play_one
    from turinglab.game.static_config import Session, preset_study
    from turinglab.statictests.displaced import build

    live = study("three-player", witnesses=(ELIZA,))
    with running(live, sqlite_url) as base:
        played = await asyncio.gather(*(play_one(base, None, 40 + i, turns=2) for i in range(4)))
    assert [p.error for p in played] == [None] * 4
    cfg = preset_study("displaced", "conversation").model_copy(
        update={"conversation_lengths": (1, 2), "session": Session(items=2, min_rt_ms=0)})
    with Store(sqlite_url) as st:
        game_ids = [g.id for g in st.games()]
    topics = tmp_path / "topics.csv"  # the researcher's topic per game: the judge's control question
    topics.write_text("game_id,topic\n" + "".join(f"{g},{t}\n" for g, t in zip(game_ids, ("sports", "music"))))
    with Store(sqlite_url) as st:
        sid, n_stim, n_items, n_topic = build(st, live.name, cfg, str(topics))
        assert (n_stim, n_items, n_topic) == (4, 8, 4)  # two games, a human and an AI conversation each, two lengths
        study_cfg = st.static_study(sid).study
        items = {i.id: i for i in st.items(sid)}
        said = {}  # game/conv -> the stored message texts, in order
        for g in st.games():
            for conv in g.seats:
                said[f"{g.id}/{conv}"] = [e.payload["text"] for e in st.events(g.id)
                                          if e.type == "message" and e.conversation == conv]
    app = create_static_app(study_cfg, sqlite_url, rng_seed=3)
    shown: list[list[str]] = []
    choices: list[list[str]] = []
    async with chromium_on(app, chromium_path) as (browser, base):
        page = await (await browser.new_context(viewport=WIDTHS[0])).new_page()
        await page.goto(base + "/")
        await page.click("text=Start")
        await page.check("input[name=agree]")
        await page.click("text=Continue")
        while True:
            await page.wait_for_selector("#answer-form, #survey-form")
            if await page.is_visible("#survey-form"):
                break
            shown.append(await page.evaluate(
                "[...document.querySelectorAll('#transcript li')].map(li => li.lastChild.textContent)"))
            choices.append(await page.eval_on_selector_all("input[name=control]", "es => es.map(e => e.value)"))
            if len(shown) == 1:
                await shot(page, shots, "displaced-item")
            await answer(page, "conversation")
            await page.wait_for_selector("#btn-submit:not([disabled])")
            n_before = await page.get_attribute("input[name=n]", "value")
            await page.click("#btn-submit")
            await page.wait_for_function(f"!document.querySelector('input[name=n]') || "
                                         f"document.querySelector('input[name=n]').value !== '{n_before}'")
        judge = page.url.rstrip("/").rsplit("/", 1)[1]
    with Store(sqlite_url) as st:
        trials = st.trials(sid, judge_id=judge)
    assert len(trials) == len(shown) == 2
    got = [items[t.response_id] for t in trials]
    assert {i.truth for i in got} == {"human", "machine"}  # balanced: one of each
    for item, texts in zip(got, shown):
        k = item.payload["length"]
        assert texts == said[item.stimulus_key][:2 * k]  # exactly what the interrogator saw, in order
        assert trials[got.index(item)].answers["speakers"] == {"A": "human", "B": "machine"}
    for item, offered in zip(got, choices):  # the topic question: the true topic among five
        assert len(offered) == 5 and item.stimulus_fields["topic"] in offered
