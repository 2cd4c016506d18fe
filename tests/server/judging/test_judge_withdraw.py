"""A static study's judge can withdraw from the done page too (issue 38): after the last item the page
shows their code and the form, counts down to the completion link instead of leaving at once, and a
withdrawal erases their ids and demographics and takes their trials out of `static summary`. A study
file's `withdrawal: {on_done_page: false}` goes straight on to the completion link, as before."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import make_study  # noqa: E402

from test_judge_pages import form_of  # noqa: E402
from turinglab.analysis.static.summary import count_table, summary  # noqa: E402
from turinglab.game.config import Withdrawal  # noqa: E402
from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.withdraw import withdrawals  # noqa: E402

LINK = "/healthz?cc=C0MPLETE"


def _finished(c: TestClient, pp: str, country: str = "Wolfhampton-Reach") -> tuple[str, str]:
    """A judge with a Prolific id through consent, every item and the survey: (id, form token)."""
    pid = c.post(f"/start?PROLIFIC_PID={pp}", follow_redirects=False).headers["location"].rsplit("/", 1)[1]
    tok = re.search(r'name="csrf" value="(\w+)"', c.get(f"/p/{pid}").text).group(1)
    c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok})
    html = c.get(f"/p/{pid}").text
    while 'id="answer-form"' in html:
        html = c.post(f"/p/{pid}/answer", data=form_of(html, tok)).text
    assert c.post(f"/p/{pid}/survey", json={"age": 41, "country": country},
                  headers={"X-CSRF-Token": tok}).status_code == 200
    return pid, tok


def _app(url: str, sid: int, **update):  # noqa: ANN202
    with Store(url) as st:
        study = st.static_study(sid).study.model_copy(update=update)
    return create_static_app(study, url, rng_seed=3)


def test_a_judge_withdraws_from_the_done_page(sqlite_url):
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, min_rt_ms=0, items=4)
    with TestClient(_app(sqlite_url, sid)) as c:
        stay, _ = _finished(c, "a" * 24, "Norway")
        pid, _ = _finished(c, "b" * 24)
        with Store(sqlite_url) as st:
            before = summary(count_table(st, sid))
        page = c.get(f"/p/{pid}/done", follow_redirects=False)
        assert page.status_code == 200 and 'http-equiv="refresh"' not in page.text
        assert f'id="done-countdown" data-seconds="60" data-href="{LINK}"' in page.text
        code = re.search(r'id="participant-code">(P[0-9a-f]{16})<', page.text).group(1)
        token = re.search(r'class="withdraw-form">.*?name="csrf" value="([0-9a-f]+)"', page.text, re.S).group(1)
        assert c.post(f"/p/{pid}/withdraw", data={"csrf": "0" * 32, "confirm": "yes"}).status_code == 403
        r = c.post(f"/p/{pid}/withdraw", data={"csrf": token, "confirm": "yes"})
        assert r.status_code == 200 and "Your data is withdrawn" in r.text and f'href="{LINK}"' in r.text
        assert c.get(f"/p/{pid}/done", follow_redirects=False).status_code == 404  # the link opens nothing now
        assert c.get(f"/p/{stay}/done").status_code == 200
    with Store(sqlite_url) as st:
        (w,) = withdrawals(st)
        assert (w.who, w.reason) == ("participant", "asked from the done page")
        people = st.participants()
        assert pid not in {p.id for p in people} and "b" * 24 not in {p.prolific_pid for p in people}
        assert not any("Wolfhampton" in str(p.demographics) for p in people)
        mine = [t for t in st.trials(sid) if t.judge_id == w.placeholder]
        after = summary(count_table(st, sid))
    assert len(mine) == 4 and code.startswith("P")
    assert (before["judges"] - after["judges"], before["trials"] - after["trials"]) == (1, 4)


def test_a_study_may_turn_it_off(sqlite_url):
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, min_rt_ms=0, items=2)
    with TestClient(_app(sqlite_url, sid, withdrawal=Withdrawal(on_done_page=False))) as c:
        pid, tok = _finished(c, "c" * 24)
        r = c.get(f"/p/{pid}/done", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == LINK
        assert c.post(f"/p/{pid}/withdraw", data={"csrf": tok, "confirm": "yes"}).status_code == 404
    with Store(sqlite_url) as st:
        assert withdrawals(st) == [] and st.get_participant(pid)
