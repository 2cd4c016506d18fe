"""Issue 27: a researcher acts on a running study, in a real browser (Debian chromium via
Playwright) against a real server: pause and resume recruitment, end a game from /admin, block a
participant, end a game from `turinglab admin`, and a quota reached. Each step checks what the
participants see, and that nothing shown says who was who (the game had no verdict)."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))
from static_judge_data import chromium_on  # noqa: E402

from server.test_browser import ELIZA, FAST, RULES, join, newcomer, role  # noqa: E402
from turinglab.cli import app as cli  # noqa: E402
from turinglab.game.config import Allocation, StopAfter, Study  # noqa: E402
from turinglab.server.app import create_app  # noqa: E402
from turinglab.server.testing import browser_admin_login  # noqa: E402
from turinglab.store.api import Store  # noqa: E402

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
LEAKS = ("a human", "an AI", "You were talking to", "witness was", "Your verdict")


async def visible(page, section: str) -> str:
    await page.wait_for_selector(f"#{section}:not([hidden])", timeout=15000)
    return await page.text_content(f"#{section}")


async def admin_post(ap, base: str, label: str, reason: str | None = None, target: str | None = None) -> None:
    """Fill and submit one of /admin's action forms (the button with this text)."""
    await ap.goto(base + "/admin")
    form = ap.locator("form.admin-form", has=ap.locator(f"button:text-is('{label}')"))
    if target is not None:
        await form.locator("input[name=target]").fill(target)
    if reason is not None:
        await form.locator("input[name=reason]").fill(reason)
    await form.locator(f"button:text-is('{label}')").click()
    await ap.wait_for_url(base + "/admin")


async def test_pause_end_block_quota_in_chromium(chromium_path, sqlite_url, tmp_path):
    # one game that counts fills it: the game the researcher ends does not count (store/counting.py)
    s = Study(name="b-admin", rules=RULES, witnesses=(ELIZA,), stop_after=StopAfter(games=1),
              allocation=Allocation(human_ratio=1.0, ai_fallback_mean_s=60, ai_fallback_noise_sigma=0.01))
    app = create_app(s, sqlite_url, rng_seed=5, human_timing=FAST, initial_ai_wait_s=60, admin_password="pw",
                     admin_poll_s=0.3)
    async with chromium_on(app, chromium_path) as (browser, base):
        actx = await browser.new_context(bypass_csp=True, viewport=PHONE)
        ap = await actx.new_page()
        await browser_admin_login(ap, base, "pw")
        # the admin page at 390 px: no sideways scrolling of the page itself
        width = await ap.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], width
        await ap.screenshot(path=str(tmp_path / "admin-390.png"), full_page=True)

        a = await newcomer(browser, base)
        # 1. pause: a participant who is here sees the paused screen at once (and on reload); a new arrival a page
        await admin_post(ap, base, "Pause recruitment", "lunch break")
        assert await ap.text_content("#recruitment") == "paused"
        assert "The study is paused" in await visible(a, "s-paused")
        await a.reload()
        assert "The study is paused" in await visible(a, "s-paused")
        arrival = await (await browser.new_context(bypass_csp=True)).new_page()
        await arrival.goto(base + "/")
        assert "The study is paused" in await arrival.text_content("main")
        assert await arrival.locator("form[action^='/start']").count() == 0
        # 2. resume: the page is back to its start at once; a second person arrives: a game
        await admin_post(ap, base, "Resume recruitment")
        assert await ap.text_content("#recruitment") == "open"
        await visible(a, "s-idle")
        await join(a)
        await a.wait_for_selector("#s-waiting:not([hidden])")
        b = await newcomer(browser, base)
        await join(b)
        assert {await role(a), await role(b)} == {"interrogator", "witness"}
        # 3. the researcher ends the game from its admin page: both see the end, nobody learns who was who
        await ap.goto(base + "/admin")
        await ap.click("#live a[href^='/admin/game/']")
        gid = ap.url.rsplit("/", 1)[-1]
        await ap.fill("input[name=reason]", "stuck <script>alert(1)</script>")
        await ap.click("text=End the game now")
        await ap.wait_for_url(f"{base}/admin/game/{gid}")
        assert "stuck <script>alert(1)</script>" in await ap.text_content("#live")  # escaped, shown as text
        for p in (a, b):
            text = await visible(p, "s-reveal")
            assert "The researchers ended this game." in text
            assert not any(leak in text for leak in LEAKS), text
        store = Store(sqlite_url, upgrade=False)
        g = store.game(gid)
        assert g.status == "ended" and g.end_reason == "researcher" and g.flags["ended_by_researcher"] is True
        assert g.flags["origins"]["ended_by_researcher"]["reason"] == "stuck <script>alert(1)</script>"
        flag = [e for e in store.events(gid) if e.type == "flag"][0]
        assert flag.payload["by"] == "admin" and flag.actor == "researcher"
        # 4. block: b waits again, the researcher blocks them by the pseudonym the admin page shows
        await b.click("#btn-again")
        await b.click("#btn-skip")
        await b.wait_for_selector("#s-waiting:not([hidden])")
        await ap.goto(base + "/admin")
        pseudonym = (await ap.locator("#live table td").first.text_content()).strip()
        assert re.fullmatch(r"P[0-9a-zA-Z_-]+", pseudonym), pseudonym
        await admin_post(ap, base, "Block (ends their game; no more games)", "abusive messages", pseudonym)
        assert "You can no longer take part" in await visible(b, "s-blocked")
        await b.reload()
        assert "You can no longer take part" in await visible(b, "s-blocked")
        assert "block" in await ap.text_content("#actions")
        # the blocked person's games carry an exclusion flag the analysis can apply
        assert store.game(gid).flags["participant_blocked"] is True
        # 5. a and a newcomer play the second game: the quota (1 game that counts) is reached, a new arrival is told
        await a.click("#btn-again")
        await a.click("#btn-skip")
        c = await newcomer(browser, base)
        await join(c)
        assert {await role(a), await role(c)} == {"interrogator", "witness"}
        late = await (await browser.new_context(bypass_csp=True)).new_page()
        await late.goto(base + "/")
        assert "The study is full" in await late.text_content("main")
        await ap.goto(base + "/admin")
        assert await ap.text_content("#recruitment") == "full"
        # 6. the second game ended from the command line (the same action, applied by the server)
        open_games = [x.id for x in store.games() if x.status != "ended"]
        assert len(open_games) == 1
        r = await asyncio.to_thread(CliRunner().invoke, cli, ["admin", "end-game", open_games[0], "--reason",
                                                               "end of session", "--as", "rs", "--db", sqlite_url])
        assert r.exit_code == 0, r.output
        for p in (a, c):
            text = await visible(p, "s-reveal")
            assert "The researchers ended this game." in text and not any(leak in text for leak in LEAKS)
        await a.click("#btn-again")  # the game the researcher ended does not count: the quota has room again
        await a.wait_for_selector("#s-waiting:not([hidden])")
        assert await a.locator("#s-full:not([hidden])").count() == 0
        assert [x.action for x in __import__("turinglab.store.admin_log", fromlist=["x"]).actions(
            store, g.study_id)] == ["pause", "resume", "end_game", "block", "end_game"]
        store.close()
