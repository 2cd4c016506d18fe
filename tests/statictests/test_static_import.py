"""Importing Zhang et al.'s published data: the word-association items and their 2 000 judge
trials; the summary recomputed independently from the raw JSON; one-line errors, nothing stored."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from scipy import stats as sps
from sqlalchemy import func, select
from typer.testing import CliRunner

from tests.statictests.test_static_zhang_files import raw_expected
from turinglab.analysis.demo.static import data_dir
from turinglab.cli import app
from turinglab.store import Store
from turinglab.store.models import ResponseRow

DATA = data_dir()  # the shipped copy (turinglab/statictests/zhang2023), or $TURINGLAB_ZHANG_DATA
WORD, JUDGE = DATA / "word.json", DATA / "humanjudge_Word_Feedback_testphase.json"
runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args))


def expected_from_raw() -> dict:
    """Recompute the summary from the raw judge file only (no turinglab code)."""
    return raw_expected(JUDGE)


def test_word_data_and_judge_trials_import_and_summary_match_raw(db_url):
    r = cli("static", "import", "--task", "word", "--responses", str(WORD), "--judge-trials", str(JUDGE),
            "--study", "zhang-word", "--db", db_url)
    assert r.exit_code == 0, r.output
    assert "150 stimuli, 1500 items, 50 judges, 2000 trials" in r.output
    # the cue-index mapping is checked, and its limit is said rather than hidden
    out = " ".join(r.output.split())
    assert "75 cues used, all within 0..149" in out and "the data cannot confirm" in out
    r = cli("static", "summary", "--study", "zhang-word", "--db", db_url, "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    exp = expected_from_raw()
    assert got["trials"] == exp["trials"] == 2000 and got["judges"] == exp["judges"] == 50
    for truth in ("human", "machine"):
        for answer in ("human", "machine"):
            assert got["confusion"][truth][answer] == exp["conf"][truth][answer]
    agents = {a["agent"]: a for a in got["agents"]}
    assert set(agents) == set(exp["agents"])  # the judge file's machine_groundtruth names + pooled human
    assert "GPT3(pr, DaVinci)" in agents and "gpt3promptdav" not in agents
    for name, (n, k) in exp["agents"].items():
        a = agents[name]
        assert (a["n"], a["judged_human"]) == (n, k)
        lo = sps.beta.ppf(0.025, k, n - k + 1) if k else 0.0
        hi = sps.beta.isf(0.025, k + 1, n - k) if k < n else 1.0
        assert a["judged_human_rate"]["estimate"] == pytest.approx(k / n)
        assert a["judged_human_rate"]["low"] == pytest.approx(lo, abs=1e-9)
        assert a["judged_human_rate"]["high"] == pytest.approx(hi, abs=1e-9)
    # every trial's item is the one its page names, with the trial's truth and model
    raw = json.loads(JUDGE.read_text())
    words = json.loads(WORD.read_text())
    with Store(db_url) as st:
        sid = st.static_study("zhang-word").id
        items = {i.id: i for i in st.items(sid)}
        trials = st.trials(sid)
        for t, rec in zip(trials, raw.values()):
            td = rec["trialData"]
            page = re.search(r"(\d+)_([a-f])_(\d+)\.html$", td["page_name"])
            item = items[t.response_id]
            assert item.key == "_".join(page.groups())
            assert item.truth == td["groundtruth"] and t.rt_ms == td["rt"] and t.answer == td["response_speaker"]
            assert item.stimulus_key == list(words)[int(page.group(1))]
            if td["groundtruth"] == "machine":
                assert item.agent == td["machine_groundtruth"]
        judge = st.get_participant(trials[0].judge_id)
        assert judge.label == "judge-0001" and judge.demographics["gender"] == "female"


def _write(tmp_path: Path, name: str, obj) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(obj))
    return str(p)


def _n_items(url: str) -> int:
    with Store(url) as st, st.engine.connect() as c:
        return c.execute(select(func.count()).select_from(ResponseRow)).scalar()


def test_bad_record_one_line_naming_stimulus_field_fix(tmp_path, sqlite_url):
    good = {"come": [{"cueWord": "come", "response": "go", "groundtruth": "human", "human_groundtruth": "",
                      "machine_groundtruth": ""}]}
    bad = {**good, "wing": [{"cueWord": "wing", "response": "bird", "groundtruth": "robot",
                             "human_groundtruth": "", "machine_groundtruth": ""}]}
    r = cli("static", "import", "--task", "word", "--responses", _write(tmp_path, "bad.json", bad),
            "--study", "b", "--db", sqlite_url)
    assert r.exit_code == 2
    line = [x for x in r.output.splitlines() if "wing" in x]
    assert len(line) == 1 and "'groundtruth'" in line[0] and 'set it to "human" or "machine"' in line[0]
    assert _n_items(sqlite_url) == 0
    nomodel = {"come": [{"cueWord": "come", "response": "x", "groundtruth": "machine", "machine_groundtruth": ""}]}
    r = cli("static", "import", "--task", "word", "--responses", _write(tmp_path, "m.json", nomodel),
            "--study", "b", "--db", sqlite_url)
    assert r.exit_code == 2 and "'machine_groundtruth' is empty" in r.output and "name the model" in r.output


def test_bad_judge_trial_nothing_imported(tmp_path, sqlite_url):
    raw = json.loads(JUDGE.read_text())
    first = next(iter(raw))
    raw[first]["trialData"]["page_name"] = raw[first]["trialData"]["page_name"].replace("78_e_0", "78_b_0")
    r = cli("static", "import", "--task", "word", "--responses", str(WORD), "--study", "x", "--db", sqlite_url,
            "--judge-trials", _write(tmp_path, "j.json", raw))
    assert r.exit_code == 2
    assert "trial 'Trial_Word_1' (page 78_b_0)" in r.output and "letter 'b' means Word2Vec" in r.output
    assert _n_items(sqlite_url) == 0  # the items were valid, but nothing was half-imported
    raw = json.loads(JUDGE.read_text())
    raw[first]["trialData"]["page_name"] = "https://x/static/responses_wordassoc/150_a_0.html"
    r = cli("static", "import", "--task", "word", "--responses", str(WORD), "--study", "x", "--db", sqlite_url,
            "--judge-trials", _write(tmp_path, "j2.json", raw))
    assert r.exit_code == 2 and "cue index 150 but the responses have 150 stimuli" in r.output


CONV = DATA / "trials_all.json"


@pytest.mark.skipif(not CONV.is_file(), reason="Zhang conversation verdicts not present")
def test_conversation_verdicts_import_alone_and_summary_is_the_raw_file(tmp_path):
    """trials_all.json (verdicts on transcripts, no transcript text): one item per transcript and one
    trial per verdict; the summary's confusion matrix and rates are what the raw file says."""
    import json as _json
    from collections import Counter as _Counter

    from typer.testing import CliRunner

    from turinglab.cli import app

    url = f"sqlite:///{tmp_path / 'c.db'}"
    run = CliRunner().invoke
    r = run(app, ["static", "import", "--task", "conversation", "--judge-trials", str(CONV), "--study", "conv",
                  "--db", url])
    assert r.exit_code == 0, r.output
    raw = _json.loads(CONV.read_text())
    pairs = _Counter((v["groundtruth"], v["response"]) for vs in raw.values() for v in vs)
    r = run(app, ["static", "summary", "--study", "conv", "--db", url, "--json"])
    assert r.exit_code == 0, r.output
    s = _json.loads(r.stdout)
    assert s["trials"] == sum(pairs.values()) == sum(len(v) for v in raw.values())
    assert s["confusion"] == {t: {a: pairs[(t, a)] for a in ("human", "machine")} for t in ("human", "machine")}
    machine = next(a for a in s["agents"] if a["agent"] != "human")
    assert machine["n"] == pairs[("machine", "human")] + pairs[("machine", "machine")]
    assert machine["judged_human"] == pairs[("machine", "human")]
    r = run(app, ["report", "--study", "conv", "--db", url, "--out", str(tmp_path / "c.md"), "--format", "md"])
    assert r.exit_code == 0, r.output
    # without --judge-trials there is nothing to import: one clear line
    r = run(app, ["static", "import", "--task", "conversation", "--study", "c2", "--db", url])
    assert r.exit_code == 2 and "--responses is needed" in r.output
    bad = tmp_path / "bad.json"
    bad.write_text(_json.dumps({"1.txt": [{"groundtruth": "human", "response": "maybe"}]}))
    r = run(app, ["static", "import", "--task", "conversation", "--judge-trials", str(bad), "--study", "c3", "--db", url])
    assert r.exit_code == 2 and "field 'response' is 'maybe'" in r.output
