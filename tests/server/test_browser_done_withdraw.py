"""The done page in Chromium (issue 38): after a game against ELIZA a participant of a Prolific study
sees their completion code, their participant code and "Withdraw my data", and a visible countdown
to the study site; "Stay on this page" stops it, and they withdraw with the completion code still in
hand. Another participant who does nothing is taken on to Prolific's page with the code when the
countdown ends."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import test_browser  # noqa: E402
from test_browser import DESKTOP, ELIZA, give_verdict, last_theirs, newcomer, role, shot, study, type_send, world  # noqa: E402

from turinglab.game.config import Prolific, Withdrawal  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.withdraw import withdrawals  # noqa: E402

pytestmark = pytest.mark.browser
SITE = "https://prolific.invalid/submissions/complete"
WAIT_S = 4


@pytest.fixture(scope="module", autouse=True)
def _shots(tmp_path_factory):
    test_browser.SHOTS = tmp_path_factory.mktemp("shots")


async def _played_to_done(browser, base: str, words: str):
    """A newcomer who plays one game against ELIZA and clicks "I'm done": their page."""
    page = await newcomer(browser, base, DESKTOP)
    await page.context.route(SITE + "*", lambda route: route.fulfill(
        status=200, content_type="text/html", body='<p id="prolific">submission received</p>'))
    await page.click("#btn-join")
    assert await role(page) == "interrogator"
    await type_send(page, words)
    await last_theirs(page)
    await give_verdict(page, "ai", 80, "only questions")
    await page.click("#btn-done")
    await page.wait_for_selector("#completion-code")
    return page


async def test_the_done_page_counts_down_can_be_stopped_and_offers_withdrawal(chromium_path, sqlite_url):
    s = study("b-done", ratio=0.0, witnesses=(ELIZA,)).model_copy(update={
        "prolific": Prolific(completion_codes={"completed": "CDONE77"}, redirect=SITE + "?cc={code}"),
        "withdrawal": Withdrawal(redirect_after_s=WAIT_S)})
    async with world(chromium_path, s, sqlite_url) as (base, browser):
        page = await _played_to_done(browser, base, "my name is Quentin Marblethorpe")
        done_url = page.url
        assert await page.text_content("#completion-code") == "CDONE77"
        assert (await page.text_content("#participant-code")).startswith("P")
        assert await page.is_visible("text=Withdraw my data")
        assert await page.is_visible("#done-countdown")
        first = int(await page.text_content("#done-seconds"))
        await page.wait_for_function(f"Number(document.getElementById('done-seconds').textContent) < {first}")
        await shot(page, "done-countdown")
        await page.click("#done-stay")
        assert await page.is_visible("#done-stayed") and not await page.is_visible("#done-countdown")
        await page.wait_for_timeout((WAIT_S + 1.5) * 1000)  # longer than the countdown: still here
        assert page.url == done_url and not page.js_errors
        await shot(page, "done-stayed")
        await page.click("text=Withdraw my data")
        await page.wait_for_selector("text=Your data is withdrawn")
        assert await page.text_content("#completion-code") == "CDONE77"  # still theirs, e.g. to be paid
        await page.wait_for_timeout(1500)
        assert "prolific.invalid" not in page.url  # nothing moves by itself after a withdrawal
        await page.click("text=Continue to the study site")
        await page.wait_for_selector("#prolific")
        assert page.url == SITE + "?cc=CDONE77"
        # a participant who does nothing is taken on when the countdown ends, with their code
        other = await _played_to_done(browser, base, "hello there")
        await other.wait_for_url(SITE + "?cc=CDONE77", timeout=(WAIT_S + 5) * 1000)
        assert await other.is_visible("#prolific") and not other.js_errors
    with Store(sqlite_url) as store:
        assert [w.who for w in withdrawals(store)] == ["participant"]
        assert "Quentin" not in str([e.payload for g in store.games() for e in store.events(g.id)])
