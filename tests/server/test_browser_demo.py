"""Demo mode in Chromium: one browser opens the demo page, the interrogator and the human witness
(two pages of one context), plays a game between them and an AI game, and sees the AI's view;
every page says DEMO, and the games are flagged demo and left out of the analysis and the export."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import test_browser  # noqa: E402
from test_browser import DESKTOP, ELIZA, FAST, give_verdict, last_theirs, role, shot, study, type_send  # noqa: E402

from static_judge_data import chromium_on  # noqa: E402
from turinglab.analysis.export.export import export  # noqa: E402
from turinglab.analysis.live.load import load  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
BANNER = "#demo-banner"


@pytest.fixture(scope="module", autouse=True)
def _shots(tmp_path_factory):
    """`shot` writes under this run's temporary folder (as in test_browser), not the working directory."""
    test_browser.SHOTS = tmp_path_factory.mktemp("shots")
    print(f"\nscreenshots: {test_browser.SHOTS}")


async def banner(page) -> None:
    assert await page.is_visible(BANNER), page.url
    assert "DEMO" in await page.text_content(BANNER)


async def test_demo_every_role_in_one_browser(chromium_path, sqlite_url, tmp_path):
    # ratio 0: a study's own participants would always meet the AI; the demo's pinned pair meet each other
    s = study("b-demo", ratio=0.0, witnesses=(ELIZA,))
    app = create_app(s, sqlite_url, rng_seed=3, human_timing=FAST, initial_ai_wait_s=0.3, admin_password="pw",
                     demo=True)
    async with chromium_on(app, chromium_path) as (browser, base):
        ctx = await browser.new_context(bypass_csp=True, viewport=DESKTOP)
        home = await ctx.new_page()
        await home.goto(base + "/demo")
        await banner(home)
        await home.click("text=Start a demo")
        await home.wait_for_selector("#demo-interrogator")
        await banner(home)
        await shot(home, "demo-home")
        pages = {}
        for r in ("interrogator", "witness", "ai-player"):
            async with ctx.expect_page() as new:
                await home.click(f"#demo-{r}")
            p = await new.value
            await p.wait_for_selector("#s-idle:not([hidden])")  # consent was given for the demo players
            await banner(p)
            pages[r] = p
        i, w, a = pages["interrogator"], pages["witness"], pages["ai-player"]
        await i.click("#btn-join")
        await w.click("#btn-join")
        assert await role(i) == "interrogator" and await role(w) == "witness"
        await banner(i)
        await type_send(i, "hello, are you <b>human</b>?")
        assert await last_theirs(w) == "hello, are you <b>human</b>?"
        await type_send(w, "yes, typing from my kitchen")
        assert await last_theirs(i) == "yes, typing from my kitchen"
        await shot(i, "demo-interrogator")
        await give_verdict(i, "human", 70, "kitchen")
        await w.wait_for_selector("#s-reveal:not([hidden])")
        await banner(w)
        # the third player meets the AI at once; its game shows on the demo page, with the AI's view
        await a.click("#btn-join")
        assert await role(a) == "interrogator"
        await type_send(a, "I feel sad about my mother")
        reply = await last_theirs(a)
        await home.reload()
        await banner(home)
        async with ctx.expect_page() as new:
            await home.click("#demo-ai-games a")
        ai = await new.value
        await ai.wait_for_selector(".demo-turns")
        await banner(ai)
        text = await ai.text_content(".demo-turns")
        assert "Sent to the AI: I feel sad about my mother" in " ".join(text.split())
        assert reply.strip() in text and "The AI replied" in text
        await shot(ai, "demo-ai-view")
        await give_verdict(a, "ai", 90, "questions")
        # outside the demo pages too: the landing page and admin carry the banner
        for path in ("/", "/admin"):
            p = await ctx.new_page()
            await p.goto(base + path)
            await banner(p)
        await ctx.close()
    with Store(sqlite_url) as store:
        games = store.games()
        assert len(games) == 2 and all(g.flags.get("demo") is True for g in games)
        assert sorted(g.seats["A"].kind for g in games) == ["ai", "human"]
        assert all(g.verdict is not None for g in games)
    loaded = load(sqlite_url)  # demo games are no study's data
    assert len(loaded.games) == 0 and len(loaded.judgements) == 0 and len(loaded.messages) == 0
    human_game = next(g.id for g in games if g.seats["A"].kind == "human")
    ai_game = next(g.id for g in games if g.seats["A"].kind == "ai")
    with Store(sqlite_url) as store:  # the AI game without its flag is read: the flag is what excludes a game
        store.set_flag(ai_game, "demo", None)
    loaded = load(sqlite_url)
    assert list(loaded.games["game_id"]) == [ai_game]
    out = export(loaded, tmp_path / "out")
    exported = (tmp_path / "out" / "messages.csv").read_text() + (tmp_path / "out" / "judgements.csv").read_text()
    assert "I feel sad about my mother" in exported and ai_game in exported
    assert "kitchen" not in exported and human_game not in exported
    assert out["rows"]["judgements"] == 1

async def test_demo_routes_only_in_demo_mode(chromium_path, sqlite_url):
    """A study's server has no demo page, no banner, and its games are not flagged."""
    from fastapi.testclient import TestClient

    with TestClient(create_app(study("b-nodemo"), sqlite_url)) as c:
        assert c.get("/demo").status_code == 404
        assert "demo-banner" not in c.get("/").text
    with TestClient(create_app(study("b-nodemo2"), sqlite_url, demo=True)) as c:
        assert "demo-banner" in c.get("/").text and c.get("/demo").status_code == 200
        assert c.get("/demo/ai/nosuchgame").status_code == 404


def test_ai_view_shows_an_llm_witness_its_instructions(tmp_path):
    """The AI's view lists the messages an LLM witness starts from: its filled system prompt first."""
    from datetime import datetime, timezone

    from turinglab.game.config import WitnessSpec
    from turinglab.server.demo import _prompt
    from turinglab.witnesses.base import GameContext
    from turinglab.witnesses.llm import LLMWitness

    prompt = tmp_path / "sam.j2"
    prompt.write_text("You are Sam, a student who types in lowercase.")
    w = LLMWitness(WitnessSpec(codename="L", kind="llm", model="m", base_url="http://127.0.0.1:9/v1",
                               prompt=str(prompt), fallback=None))
    assert _prompt(w) == []  # before the game starts nothing is filled
    now = datetime.now(timezone.utc)
    w._fill(GameContext("g", now, now, 300, 300))
    msgs = _prompt(w)
    assert msgs[0]["role"] == "system" and "Sam, a student" in msgs[0]["content"]
