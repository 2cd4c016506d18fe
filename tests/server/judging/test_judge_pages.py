"""Judge pages of static studies over HTTP (the app in-process, a real SQLite store): blinding,
refresh/resubmit safety, the server-side minimum reaction time, safe images, feedback, CSRF,
Prolific ids and the resumable link, serve's study detection. The browser runs are in
test_browser_static.py."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import AGENTS, EVIL, TOPICS, make_study  # noqa: E402

from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.game.static_config import Session, StaticStudy  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.static import ResponseIn, StimulusIn  # noqa: E402

TASKS = ("word", "caption", "object", "color", "fv", "conversation")
PUBLIC_KEYS = {"task", "cue", "text", "image", "labels", "boxes", "color", "point", "scanpath", "frame", "turns",
               "speakers", "control_choices", "control_question"}


class Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000_000

    def __call__(self) -> int:
        return self.t


def app_for(url: str, sid: int, **kw):  # noqa: ANN201
    with Store(url) as st:
        study = st.static_study(sid).study
    return create_static_app(study, url, admin_password="pw", rng_seed=3, **kw)


def consented(c: TestClient) -> tuple[str, str]:
    """A new judge through the consent form: (id, form token)."""
    pid = c.post("/start", follow_redirects=False).headers["location"].rsplit("/", 1)[1]
    tok = re.search(r'name="csrf" value="(\w+)"', c.get(f"/p/{pid}").text).group(1)
    assert c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok}).status_code == 200
    return pid, tok


def form_of(html: str, tok: str, answer: str = "human") -> dict[str, str]:
    data = {"csrf": tok, "n": re.search(r'name="n" value="(\d+)"', html).group(1),
            "shown": re.search(r'name="shown" value="([\w.]+)"', html).group(1), "answer": answer}
    for i in range(2):
        data[f"speaker_{i}"], data[f"gender_{i}"] = answer, "female"
    m = re.search(r'name="control" value="([^"]+)"', html)
    if m:
        data["control"] = m.group(1)
    return data


def item_json(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="item-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1))


def _made(url: str, task: str, img, **kw) -> tuple[int, dict]:
    """A stored static study made by make_study: (its id, its items by id)."""
    with Store(url) as st:
        sid = make_study(st, task, img, **kw)
        return sid, {i.id: i for i in st.items(sid)}


@pytest.mark.parametrize("task", TASKS)
def test_pages_carry_no_truth_agent_or_key_and_escape_text(task, sqlite_url, tmp_path):
    sid, items = _made(sqlite_url, task, tmp_path / "img", items=8, n_stimuli=8, min_rt_ms=0)
    with TestClient(app_for(sqlite_url, sid)) as c:
        pid, tok = consented(c)
        html = c.get(f"/p/{pid}").text
        seen_evil = False
        while 'id="answer-form"' in html:
            for secret in (*AGENTS, "person-1", "/human/", "/machine/", "witness_speaker", "s0/"):
                assert secret not in html, f"{secret!r} leaked into the {task} page"
            data = item_json(html)
            assert set(data) <= PUBLIC_KEYS
            assert "<img src=x" not in html  # user text is escaped, never markup
            seen_evil |= "&lt;img src=x" in html or "\\u003cimg src=x" in html
            html = c.post(f"/p/{pid}/answer", data=form_of(html, tok)).text
        with Store(sqlite_url) as st:
            trials = st.trials(sid, judge_id=pid)
        assert len(trials) == 8 and [t.seq for t in trials] == list(range(8))
        shown_truths = [items[t.response_id].truth for t in trials]
        assert shown_truths.count("human") == 4  # the store's balanced sample
        if task in ("word", "caption", "conversation"):
            assert seen_evil == any(items[t.response_id].stimulus_key == "s0" and EVIL in (items[t.response_id].text or "")
                                    for t in trials)


def test_refresh_and_repeated_posts_never_lose_or_duplicate(db_url, tmp_path):
    with Store(db_url) as st:
        sid = make_study(st, "word", None, min_rt_ms=0)
    with TestClient(app_for(db_url, sid)) as c:
        pid, tok = consented(c)
        first = c.get(f"/p/{pid}").text
        assert item_json(c.get(f"/p/{pid}").text) == item_json(first)  # a refresh shows the same item
        data = form_of(first, tok)
        assert c.post(f"/p/{pid}/answer", data=data).status_code == 200
        again = c.post(f"/p/{pid}/answer", data=data, follow_redirects=False)  # back button + resubmit
        assert again.status_code == 303
        ahead = dict(data, n="3")
        assert c.post(f"/p/{pid}/answer", data=ahead).status_code == 409
        with Store(db_url) as st:
            trials = st.trials(sid, judge_id=pid)
        assert [t.seq for t in trials] == [0]
        # the link alone (another browser, no cookie) resumes at the next item
        with TestClient(c.app) as other:
            assert re.search(r'name="n" value="1"', other.get(f"/p/{pid}").text)


def test_minimum_reaction_time_is_checked_by_the_server(sqlite_url):
    clock = Clock()
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, min_rt_ms=1500)
    with TestClient(app_for(sqlite_url, sid, clock_ms=clock)) as c:
        pid, tok = consented(c)
        data = form_of(c.get(f"/p/{pid}").text, tok)
        clock.t += 900
        r = c.post(f"/p/{pid}/answer", data=dict(data, rt_ms="2000"))  # the client's claim is not enough
        assert r.status_code == 400 and "Too fast" in r.text
        clock.t += 1000
        r = c.post(f"/p/{pid}/answer", data=dict(data, rt_ms="1000"))  # the client says it was too fast
        assert r.status_code == 400
        forged = dict(data, shown=str(clock.t - 10_000) + "." + "0" * 24)  # an earlier stamp, not signed
        assert c.post(f"/p/{pid}/answer", data=forged).status_code == 400
        with Store(sqlite_url) as st:
            assert st.trials(sid) == []
        assert c.post(f"/p/{pid}/answer", data=dict(data, rt_ms="1800")).status_code == 200
        with Store(sqlite_url) as st:
            [t] = st.trials(sid)
        assert t.rt_ms == 1800


def test_images_only_inside_image_dir_and_only_the_current_or_past_item(sqlite_url, tmp_path):
    img = tmp_path / "img"
    (tmp_path / "outside.png").write_bytes(b"\x89PNG secret")
    with Store(sqlite_url) as st:
        sid = make_study(st, "caption", img, min_rt_ms=0, n_stimuli=4, items=2)
        (img / "link.png").symlink_to(tmp_path / "outside.png")
        study = st.static_study(sid).study
        bad = st.register_static_study(study.model_copy(update={"name": "bad-images"}))
        st.add_items(bad, [StimulusIn("a", image="../outside.png"), StimulusIn("b", image="link.png"),
                           StimulusIn("c", image="/etc/passwd"), StimulusIn("d", image="coffee.png")],
                     [ResponseIn(f"{k}/h", k, "x", "human", "p") for k in "abc"]
                     + [ResponseIn(f"{k}/m", k, "x", "machine", "m") for k in "abc"])
    with TestClient(app_for(sqlite_url, sid)) as c:
        pid, tok = consented(c)
        r = c.get(f"/p/{pid}/image/0")
        assert r.status_code == 200 and r.headers["content-type"] == "image/png" and r.content[:4] == b"\x89PNG"
        assert c.get(f"/p/{pid}/image/1").status_code == 404  # not shown yet
        assert c.get(f"/p/{pid}/image/..%2F..%2Foutside.png").status_code in (404, 422)
        assert c.get("/p/nobody/image/0").status_code == 404
    with TestClient(app_for(sqlite_url, bad)) as c:
        pid, tok = consented(c)
        for _ in range(2):
            html = c.get(f"/p/{pid}").text
            n = re.search(r'name="n" value="(\d+)"', html).group(1)
            r = c.get(f"/p/{pid}/image/{n}")
            assert r.status_code == 404 and b"secret" not in r.content and b"root:" not in r.content
            c.post(f"/p/{pid}/answer", data=form_of(html, tok))


def test_feedback_page_only_after_the_answer_and_only_in_the_feedback_phase(sqlite_url):
    sid, items = _made(sqlite_url, "word", None, min_rt_ms=0, feedback=2, items=2)
    with TestClient(app_for(sqlite_url, sid)) as c:
        pid, tok = consented(c)
        html = c.get(f"/p/{pid}").text
        assert "Practice" in html
        assert c.get(f"/p/{pid}/feedback/0", follow_redirects=False).status_code == 303  # not answered yet
        r = c.post(f"/p/{pid}/answer", data=form_of(html, tok, "machine"))
        assert r.url.path == f"/p/{pid}/feedback/0"
        with Store(sqlite_url) as st:
            [t] = st.trials(sid)
        truth = items[t.response_id].truth
        assert f"was a <b>{truth}</b>" in r.text and ("correct" if truth == "machine" else "wrong") in r.text
        assert t.phase == "feedback" and t.feedback_shown
        for agent in AGENTS:
            assert agent not in r.text  # human or machine only, never which model
        html = c.get(f"/p/{pid}").text
        html = c.post(f"/p/{pid}/answer", data=form_of(html, tok)).text  # second practice item -> feedback
        html = c.get(f"/p/{pid}").text
        assert "The practice is over" in html
        c.post(f"/p/{pid}/answer", data=form_of(html, tok))
        assert c.get(f"/p/{pid}/feedback/2", follow_redirects=False).status_code == 303  # test phase: no truth
        with Store(sqlite_url) as st:
            assert [t.phase for t in st.trials(sid)] == ["feedback", "feedback", "test"]


def test_conversation_trial_answers_and_topic_control(db_url):
    sid, items = _made(db_url, "conversation", None, min_rt_ms=0, items=2, n_stimuli=4)
    with TestClient(app_for(db_url, sid)) as c:
        pid, tok = consented(c)
        html = c.get(f"/p/{pid}").text
        shown = item_json(html)
        assert shown["speakers"] == ["A", "B"] and sorted(shown["control_choices"]) == sorted(TOPICS)
        data = form_of(html, tok)
        incomplete = {k: v for k, v in data.items() if k != "gender_1"}
        r = c.post(f"/p/{pid}/answer", data=incomplete)
        assert r.status_code == 400 and "gender of speaker B" in r.text
        data.update(speaker_0="human", speaker_1="machine", gender_0="male", gender_1="female")
        with Store(db_url) as st:
            sess = st.start_judge_session(sid, pid)
        item = items[sess.items[0].response_id]
        data["control"] = item.stimulus_fields["control_answer"]
        c.post(f"/p/{pid}/answer", data=data)
        html = c.get(f"/p/{pid}").text
        wrong = next(t for t in TOPICS if t != items[sess.items[1].response_id].stimulus_fields["control_answer"])
        c.post(f"/p/{pid}/answer", data=dict(form_of(html, tok), control=wrong, speaker_1="human"))
        with Store(db_url) as st:
            t0, t1 = st.trials(sid)
        assert t0.answer == "machine" and t0.answers["speakers"] == {"A": "human", "B": "machine"}
        assert t0.answers["genders"] == {"A": "male", "B": "female"} and t0.control_correct is True
        assert t1.answer == "human" and t1.control_correct is False  # the label of B, the speaker judged


def test_forged_or_cross_site_answers_are_refused(sqlite_url):
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, min_rt_ms=0)
    with TestClient(app_for(sqlite_url, sid)) as c:
        pid, tok = consented(c)
        data = form_of(c.get(f"/p/{pid}").text, tok)
        assert c.post(f"/p/{pid}/answer", data=dict(data, csrf="0" * 32)).status_code == 403
        r = c.post(f"/p/{pid}/answer", data=data, headers={"Origin": "http://evil.example"})
        assert r.status_code == 403
        with Store(sqlite_url) as st:
            assert st.trials(sid) == []


def test_prolific_ids_demographics_completion_and_admin(sqlite_url):
    with Store(sqlite_url) as st:
        sid = make_study(st, "word", None, min_rt_ms=0, items=2, controls=1)
    with TestClient(app_for(sqlite_url, sid)) as c:
        r = c.get("/?PROLIFIC_PID=pp1&STUDY_ID=st1&SESSION_ID=se1", follow_redirects=False)
        assert r.status_code == 200 and "set-cookie" not in r.headers  # issue 24: a GET shows the button
        r = c.post("/start?PROLIFIC_PID=pp1&STUDY_ID=st1&SESSION_ID=se1", follow_redirects=False)
        pid = r.headers["location"].rsplit("/", 1)[1]
        assert c.get("/?PROLIFIC_PID=pp1", follow_redirects=False).headers["location"] == f"/p/{pid}"  # same browser
        with TestClient(c.app) as other:  # the same Prolific id from elsewhere: a new, flagged judge
            dup = other.post("/start?PROLIFIC_PID=pp1", follow_redirects=False).headers["location"].rsplit("/", 1)[1]
        assert dup != pid
        tok = re.search(r'name="csrf" value="(\w+)"', c.get(f"/p/{pid}").text).group(1)
        c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok})
        assert c.get(f"/p/{pid}/done", follow_redirects=False).headers["location"] == f"/p/{pid}"  # not finished
        html = c.get(f"/p/{pid}").text
        while 'id="answer-form"' in html:
            html = c.post(f"/p/{pid}/answer", data=form_of(html, tok)).text
        assert 'id="survey-form"' in html
        assert c.post(f"/p/{pid}/survey", json={"age": 30, "gender": "female"}).status_code == 403  # no token
        assert c.post(f"/p/{pid}/survey", json={"age": 30, "gender": "female"},
                      headers={"X-CSRF-Token": tok}).status_code == 200
        r = c.get(f"/p/{pid}/done", follow_redirects=False)  # the completion link after the withdrawal offer
        assert 'data-href="/healthz?cc=C0MPLETE"' in r.text and 'href="/healthz?cc=C0MPLETE"' in r.text
        assert c.get("/admin", follow_redirects=False).headers["location"] == "/admin/login?next=/admin"  # the form
        assert c.post("/admin/login", data={"name": "admin", "password": "pw"}).status_code == 200
        admin = c.get("/admin").text
        assert "1 complete" in admin and "3 / 3" in admin and "1/1" in admin  # the vigilance item answered right
    with Store(sqlite_url) as st:
        p, d = st.get_participant(pid), st.get_participant(dup)
        assert (p.prolific_pid, p.prolific_study_id, p.prolific_session_id) == ("pp1", "st1", "se1")
        assert p.demographics == {"age": 30, "gender": "female", "skipped": False}
        assert d.label == "duplicate_prolific_pid"
        assert sum(t.control_correct is True for t in st.trials(sid)) == 1


def test_serve_finds_static_study_files_and_names(sqlite_url, tmp_path):
    import typer
    from typer.testing import CliRunner

    from turinglab.cli import app
    from turinglab.cli.serve import _static_to_serve

    f = tmp_path / "static-study.yaml"
    f.write_text("preset: zhang-2023\nname: words\ntask: word\nsession: {items: 4}\n")
    got = _static_to_serve(str(f), sqlite_url)
    assert isinstance(got, StaticStudy) and got.name == "words" and got.session.items == 4
    live = tmp_path / "live.yaml"
    live.write_text("preset: jones-bergen-2023\nname: chat\n")
    assert _static_to_serve(str(live), sqlite_url) is None
    with Store(sqlite_url) as st:
        st.register_static_study(StaticStudy(name="by-name", task="caption", session=Session(items=2)))
    assert _static_to_serve("by-name", sqlite_url).task == "caption"
    with pytest.raises(typer.Exit):
        _static_to_serve("no-such-study", sqlite_url)
    r = CliRunner().invoke(app, ["serve", "--study", "no-such-study", "--db", sqlite_url])
    assert r.exit_code == 2 and "no static study 'no-such-study'" in r.output
    r = CliRunner().invoke(app, ["serve", "--study", "by-name", "--db", sqlite_url])  # no items yet
    assert r.exit_code == 2 and "has no items yet" in r.output


def test_serve_tunes_the_garbage_collector_for_static_pages(sqlite_url, monkeypatch):
    """`turinglab serve` of a static study freezes the start-up objects (`tune_gc`) before it
    serves, as for the live game: a full collection of them paused every judge's answer."""
    import uvicorn
    from typer.testing import CliRunner

    import turinglab.server.tuning as tuning
    from turinglab.cli import app

    with Store(sqlite_url) as st:
        make_study(st, "word", None, name="gc-words")
    calls: list[str] = []
    monkeypatch.setattr(tuning, "tune_gc", lambda: calls.append("tune_gc"))
    monkeypatch.setattr(uvicorn, "run", lambda web, **kw: calls.append(f"run {type(web).__name__}"))
    r = CliRunner().invoke(app, ["serve", "--study", "gc-words", "--db", sqlite_url])
    assert r.exit_code == 0, r.output
    assert calls == ["tune_gc", "run FastAPI"]
