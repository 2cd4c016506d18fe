"""The done page leaves time to withdraw (issue 38): when it offers withdrawal and sends the participant
on (a Prolific completion code, or the study's completion_url), it never refreshes away at once; it
counts down the study's `withdrawal.redirect_after_s` (a script; 0: never, the link only), and after a
withdrawal the completion code and link are still there. Without the offer the page is as before.
The countdown itself runs in Chromium: tests/server/test_browser_done_withdraw.py."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.server.live.test_server import ELIZA, running, study
from turinglab.game.config import Prolific, Study, Withdrawal, config_hash
from turinglab.server.testing import WsPlayer
from turinglab.store.api import Store
from turinglab.store.withdraw import withdrawals

REDIRECT = "https://example.org/submissions/complete?cc={code}"
REFRESH = 'http-equiv="refresh"'


def _token(page: str) -> str:
    return re.search(r'class="withdraw-form">.*?name="csrf" value="([0-9a-f]+)"', page, re.S).group(1)


async def test_no_redirect_at_all_and_the_code_after_withdrawing(sqlite_url):
    s = study(ratio=0.0, witnesses=(ELIZA,), prolific=Prolific(completion_codes={"returned": "RET0RN"},
                                                               redirect=REDIRECT),
              withdrawal=Withdrawal(redirect_after_s=0))
    with running(s, sqlite_url) as base:
        p = await WsPlayer.create(base)  # never played: the outcome is "returned"
        async with httpx.AsyncClient(base_url=base) as c:
            page = (await c.get(f"/p/{p.pid}/done")).text
            assert REFRESH not in page and "done-countdown" not in page and "done.js" not in page
            assert 'id="completion-code" class="code">RET0RN<' in page and "withdraw-form" in page
            assert 'href="https://example.org/submissions/complete?cc=RET0RN"' in page
            r = await c.post(f"/p/{p.pid}/withdraw", data={"csrf": _token(page), "confirm": "yes"})
            assert r.status_code == 200 and "Your data is withdrawn" in r.text
            assert "RET0RN" in r.text and 'href="https://example.org/submissions/complete?cc=RET0RN"' in r.text
            assert REFRESH not in r.text  # nothing moves by itself after a withdrawal either
    with Store(sqlite_url, upgrade=False) as store:
        assert [w.who for w in withdrawals(store)] == ["participant"]


async def test_a_completion_url_without_codes_waits_for_the_countdown(sqlite_url):
    url = "https://example.org/thanks"
    with running(study(ratio=0.0, witnesses=(ELIZA,), completion_url=url,
                       withdrawal=Withdrawal(redirect_after_s=25)), sqlite_url) as base:
        p = await WsPlayer.create(base)
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get(f"/p/{p.pid}/done")
            assert r.status_code == 200 and "withdraw-form" in r.text and REFRESH not in r.text
            assert f'id="done-countdown" data-seconds="25" data-href="{url}" hidden' in r.text
            assert 'src="/static/done.js"' in r.text and f'<a class="button" href="{url}">' in r.text
            assert (await c.get("/static/done.js")).status_code == 200


@pytest.mark.parametrize("off", [True, False])
async def test_without_the_offer_the_done_page_goes_on_as_before(sqlite_url, off):
    url = "https://example.org/thanks"
    w = Withdrawal(on_done_page=False)
    kw = {"completion_url": url} if off else {"prolific": Prolific(completion_codes={"returned": "RET0RN"},
                                                                     redirect=REDIRECT)}
    with running(study(ratio=0.0, witnesses=(ELIZA,), withdrawal=w, **kw), sqlite_url) as base:
        p = await WsPlayer.create(base)
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get(f"/p/{p.pid}/done")
    if off:
        assert r.status_code == 303 and r.headers["location"] == url
    else:
        assert REFRESH in r.text and "withdraw-form" not in r.text and "done-countdown" not in r.text


def test_the_default_countdown_keeps_older_study_hashes():
    """A study file written before `redirect_after_s` keeps its hash (its games stay one version)."""
    base = Study(name="h", withdrawal=Withdrawal(on_done_page=False))
    assert config_hash(base) == config_hash(base.model_copy(update={"withdrawal": Withdrawal(
        on_done_page=False, redirect_after_s=60)}))
    assert config_hash(base) != config_hash(base.model_copy(update={"withdrawal": Withdrawal(
        on_done_page=False, redirect_after_s=5)}))
    with pytest.raises(ValueError):
        Withdrawal(redirect_after_s=-1)
