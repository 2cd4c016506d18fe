"""The paper's judge-page controls (Zhang et al.) over HTTP with a real SQLite store: the colour page
shows the whole picture and the colour named for it; colour and object end with the true/false
object question (stored and scored); the speaker-gender question follows the study setting;
the survey asks native language and country; the per-task rules of the zhang-2023 preset; the
native-speaker flag in the report."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import OBJECTS, make_study  # noqa: E402
from tests.server.judging.test_judge_pages import app_for, consented, form_of, item_json  # noqa: E402

from turinglab.analysis.static.report import analyse_counts  # noqa: E402
from turinglab.analysis.static.answers import answer_summary  # noqa: E402
from turinglab.game.static_config import StaticStudy, preset_study, static_hash  # noqa: E402
from turinglab.analysis.static.summary import judge_counts, judge_table  # noqa: E402
from turinglab.store.api import Store  # noqa: E402


@pytest.mark.parametrize("task", ["color", "object"])
def test_object_question_is_asked_stored_and_scored(task, sqlite_url, tmp_path):
    with Store(sqlite_url) as st:
        sid = make_study(st, task, tmp_path / "img", items=8, n_stimuli=8, min_rt_ms=0, object_words=True,
                         ask_gender=True)
        items = {i.id: i for i in st.items(sid)}
    truths = set()
    with TestClient(app_for(sqlite_url, sid)) as c:
        pid, tok = consented(c)
        html = c.get(f"/p/{pid}").text
        n_done = 0
        while 'id="answer-form"' in html:
            data = item_json(html)
            assert "point" not in data and 'id="point"' not in html
            if task == "color":
                assert "Main colour named for this picture" in html and "marked point" not in html
            word = data["object_word"]
            assert f"Does this picture contain the following: “{word}”?" in html
            assert 'name="gender"' in html  # ask_gender: on every task
            form = form_of(html, tok)
            bad = c.post(f"/p/{pid}/answer", data=form)  # neither the object nor the gender answered
            assert bad.status_code == 400 and "Nothing was saved" in bad.text and "contains" in bad.text
            # answer yes on even items, no on odd ones: right or wrong depending on the word
            form.update(object="yes" if n_done % 2 == 0 else "no", gender="male")
            html = c.post(f"/p/{pid}/answer", data=form).text
            n_done += 1
    with Store(sqlite_url) as st:
        trials = st.trials(sid, judge_id=pid)
    assert len(trials) == 8
    for t in trials:
        fields = items[t.response_id].stimulus_fields
        word = t.answers["object_word"]
        right = "yes" if word in fields["object_present"] else "no"
        assert word in fields["object_present"] + fields["object_absent"]
        assert t.answers["object_truth"] == right
        assert t.control_correct is (t.answers["object_answer"] == right)
        assert t.answers["gender"] == "male"
        truths.add(right)
    assert truths == {"yes", "no"}  # both kinds of word were asked
    with Store(sqlite_url) as st:
        ans = answer_summary(st, sid, st.static_study(sid).study.exclusions)
    k = sum(t.control_correct is True for t in trials)
    assert ans["object_question"] == {"answered": 8, "correct": k, "accuracy": k / 8}
    assert ans["controls"]["answered"] == 8 and ans["gender"] == {"male": 8}
    assert OBJECTS  # the pictures' objects come from the test data


def test_gender_question_follows_the_study_setting(sqlite_url):
    with Store(sqlite_url) as st:
        word = make_study(st, "word", None, name="w-default", items=2, min_rt_ms=0)
        conv_off = make_study(st, "conversation", None, name="c-off", items=2, min_rt_ms=0, ask_gender=False)
    with TestClient(app_for(sqlite_url, word)) as c:
        pid, tok = consented(c)
        html = c.get(f"/p/{pid}").text
        assert 'name="gender"' not in html  # default: only conversations ask it
        c.post(f"/p/{pid}/answer", data=form_of(html, tok))
    with TestClient(app_for(sqlite_url, conv_off)) as c:
        pid2, tok = consented(c)
        html = c.get(f"/p/{pid2}").text
        assert 'name="gender_0"' not in html and 'name="speaker_0"' in html
        form = {k: v for k, v in form_of(html, tok).items() if not k.startswith("gender")}
        assert c.post(f"/p/{pid2}/answer", data=form).status_code == 200
    with Store(sqlite_url) as st:
        assert "gender" not in st.trials(word, judge_id=pid)[0].answers
        t = st.trials(conv_off, judge_id=pid2)[0]
        assert "genders" not in t.answers and set(t.answers["speakers"]) == {"A", "B"}


def test_survey_asks_native_language_and_country_and_the_report_flags_non_native(sqlite_url, tmp_path):
    with Store(sqlite_url) as st:
        sid = make_study(st, "caption", tmp_path / "img", items=2, min_rt_ms=0)
    judges = []
    with TestClient(app_for(sqlite_url, sid)) as c:
        for lang in ("English", "Portuguese", None):
            c.cookies.clear()
            pid, tok = consented(c)
            html = c.get(f"/p/{pid}").text
            while 'id="answer-form"' in html:
                html = c.post(f"/p/{pid}/answer", data=form_of(html, tok)).text
            assert 'name="native_language"' in html and 'name="country"' in html
            body = {"age": 33, **({"native_language": lang, "country": "  Brazil\n"} if lang else {})}
            assert c.post(f"/p/{pid}/survey", json=body, headers={"X-CSRF-Token": tok}).status_code == 200
            judges.append(pid)
        r = c.post(f"/p/{pid}/survey", json={"country": "x" * 61}, headers={"X-CSRF-Token": tok})
        assert r.status_code == 422
    with Store(sqlite_url) as st:
        assert st.get_participant(judges[1]).demographics["country"] == "Brazil"  # spaces folded
        info = st.static_study(sid)
        jc, lc = judge_counts(st, sid, 0)  # fast = under 0 ms: the test client answers at once
        table = judge_table(st, sorted(jc["judge_id"].unique()))
    rule = preset_study("x", "caption").exclusions
    assert rule.native_language == "english"
    rule = rule.model_copy(update={"fast_rt_ms": 0})  # the test client answers at once: no fast flags here
    a = analyse_counts(jc, lc, table, study=info.name, task="caption", exclusions=rule, n_boot=50)
    flagged = dict(zip(a.flags["judge_id"], a.flags["flag_native"]))
    assert flagged == {judges[0]: False, judges[1]: True, judges[2]: False}  # unknown language: not flagged
    assert a.sensitivity["judges_flagged"] == 1


def test_zhang_preset_carries_each_tasks_rules_and_old_hashes_stay():
    col, cap, fv, conv = (preset_study("s", t) for t in ("color", "caption", "fv", "conversation"))
    assert col.session.min_rt_ms == 1500 and cap.session.min_rt_ms == 3000
    assert fv.exclusions.min_control_accuracy == pytest.approx(7 / 12)
    assert col.ask_gender is True and conv.ask_gender is True
    assert col.exclusions.native_language is None and cap.exclusions.native_language == "english"
    plain = StaticStudy(name="old", task="word")
    import hashlib
    import json

    old = plain.model_dump(mode="json")
    del old["ask_gender"], old["exclusions"]["native_language"], old["language"], old["drop_failed_controls"]
    del old["withdrawal"]  # issue 38: a study that sets no withdrawal keeps its hash
    assert static_hash(plain) == hashlib.sha256(json.dumps(old, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert static_hash(plain.model_copy(update={"ask_gender": True})) != static_hash(plain)


def test_feedback_speaker_rows_use_per_speaker_truth(sqlite_url):
    with Store(sqlite_url) as st:
        sid = make_study(st, "conversation", None, items=2, feedback=2, min_rt_ms=0)
    with TestClient(app_for(sqlite_url, sid)) as c:
        pid, tok = consented(c)
        html = c.get(f"/p/{pid}").text
        fb = c.post(f"/p/{pid}/answer", data=form_of(html, tok, "machine")).text
    assert re.search(r"Speaker A.*?human.*?machine", fb, re.S)  # truth human, said machine
