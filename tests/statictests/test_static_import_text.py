"""Issue 24 item 6: every text field of a static import is checked once, before the database, with one
line naming the trial (or stimulus, item, judge), the field and the fix, the same on SQLite and
PostgreSQL: a NUL or an over-long key never reaches PostgreSQL ("is the URL right?"), a lone
surrogate never gives a traceback, and nothing is stored."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.store import Store
from turinglab.store.textcheck import text_problem

runner = CliRunner()


def word(resp: str = "together", cue: str = "come", worker: str = "w1", demo: dict | None = None) -> tuple[dict, dict]:
    data = {cue: [{"cueWord": cue, "response": resp, "groundtruth": "human", "human_groundtruth": "",
                   "machine_groundtruth": ""},
                  {"cueWord": cue, "response": "go", "groundtruth": "machine", "human_groundtruth": "",
                   "machine_groundtruth": "gpt2"}]}
    trials = {"Trial_Word_1": {"workerID": worker, "workerData": demo or {"age": "30"},
                               "trialData": {"rt": 1200, "page_name": "x/0_a_0.html", "response_speaker": "human",
                                             "groundtruth": "human", "machine_groundtruth": "", "phase": "TEST"}}}
    return data, trials


def run(tmp_path, db: str, data: dict, trials: dict | None = None, study: str = "t"):
    # ensure_ascii (the default) writes a lone surrogate as the escape \ud800, as real files carry it
    (tmp_path / "r.json").write_text(json.dumps(data))
    args = ["static", "import", "--task", "word", "--responses", str(tmp_path / "r.json"), "--study", study,
            "--db", db]
    if trials is not None:
        (tmp_path / "j.json").write_text(json.dumps(trials))
        args += ["--judge-trials", str(tmp_path / "j.json")]
    return runner.invoke(app, args)


def refused(r, db: str, *words: str) -> str:
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    out = r.output
    assert "Traceback" not in out and "URL right" not in out, out
    assert "nothing imported" in out
    for w in words:
        assert w in out, out
    with Store(db) as st:
        assert st.static_studies() == []
    return out


CASES = {
    "nul in a response": (dict(resp="to\x00gether"), "item", "field 'text'", "NUL"),
    "lone surrogate in a response": (dict(resp="to\ud800gether"), "item", "field 'text'", "lone surrogate"),
    "nul in a stimulus key": (dict(cue="co\x00me"), "stimulus", "field 'key'", "NUL"),
    "key over 200 characters": (dict(cue="c" * 201), "stimulus", "field 'key'", "over the limit of 200"),
    "lone surrogate in a worker id": (dict(worker="w\udc801"), "judge", "field 'workerID'", "lone surrogate"),
    "worker id over 200 characters": (dict(worker="w" * 300), "judge", "field 'workerID'", "over the limit of 200"),
    "nul in the demographics": (dict(demo={"country": "U\x00S"}), "judge", "field 'workerData.country'", "NUL"),
    "nul in a demographics key": (dict(demo={"cou\x00ntry": "US"}), "judge", "workerData key", "NUL"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_text_is_refused_in_one_line_on_both_databases(db_url, tmp_path, case):
    kwargs, what, field, why = CASES[case]
    data, trials = word(**kwargs)
    out = refused(run(tmp_path, db_url, data, trials), db_url, field, why)
    line = next(ln for ln in out.splitlines() if field in ln)
    assert line.startswith(what) and "; " in line  # who, field, what is wrong; then the fix


def test_bad_text_in_a_trial_names_the_source_trial(db_url, tmp_path):
    data, trials = word()
    trials["Trial_Word_1"]["trialData"]["hit"] = "40_g_0\x00.html"
    out = refused(run(tmp_path, db_url, data, trials), db_url, "trial 'Trial_Word_1'", "field 'trialData.hit'", "NUL")
    assert "remove it from the file" in out


def test_a_study_name_over_200_characters_is_refused(db_url, tmp_path):
    data, _ = word()
    refused(run(tmp_path, db_url, data, study="s" * 201), db_url, "field 'name'", "over the limit of 200")


def test_good_text_with_unicode_still_imports(db_url, tmp_path):
    data, trials = word(resp="naïve 日本 🙂", cue="c" * 200, worker="w" * 200)
    r = run(tmp_path, db_url, data, trials)
    assert r.exit_code == 0, r.output
    with Store(db_url) as st:
        items = st.items(st.static_study("t").id)
    assert {i.text for i in items} == {"naïve 日本 🙂", "go"}


def test_text_problem_rules():
    assert text_problem("fine") is None and text_problem("x" * 10, 10) is None
    assert "NUL" in text_problem("a\x00b")
    assert "lone surrogate (\\udfff)" in text_problem("a\udfffb")
    assert "11 characters" in text_problem("x" * 11, 10)
