"""Static-study analysis and `turinglab report` for static studies."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from turinglab.analysis.demo.static import data_dir
from turinglab.analysis.static.report import analyse_static
from turinglab.cli import app
from turinglab.game.static_config import parse_static_study
from turinglab.store import Store
from turinglab.store.static import ResponseIn, StimulusIn, TrialIn

DATA = data_dir()  # the shipped copy (turinglab/statictests/zhang2023), or $TURINGLAB_ZHANG_DATA
JUDGE = DATA / "humanjudge_Word_Feedback_testphase.json"
runner = CliRunner()


def _table(rows):
    df = pd.DataFrame(rows)
    for col, val in (("control", False), ("control_correct", None), ("length", np.nan), ("rt_ms", 2000)):
        df[col] = df[col].fillna(val) if col in df and val is not None else df.get(col, val)
    df["judged_human"] = (df["answer"] == "human").astype(int)
    df["correct"] = (df["answer"] == df["truth"]).astype(int)
    return df


def test_clustered_interval_widens_when_judges_are_dependent():
    # each judge answers "human" to everything or "machine" to everything: 20 judges x 50 items
    rows = []
    for j in range(20):
        ans = "human" if j % 2 else "machine"
        for i in range(50):
            rows.append({"judge_id": f"j{j}", "truth": "machine" if i % 2 else "human",
                         "agent": "m1" if i % 2 else "human", "answer": ans})
    a = analyse_static(_table(rows), None, study="t", task="word", n_boot=400)
    m1 = a.agents.set_index("agent").loc["m1"]
    assert m1["rate"] == 0.5
    exact, clustered = m1["high"] - m1["low"], m1["boot_high"] - m1["boot_low"]
    assert clustered > 2 * exact  # 500 trials but only 20 independent judges
    assert m1["zhang_in_band"]


def test_flags_are_kept_and_counted():
    rows = []
    for j in range(6):
        for i in range(20):
            rows.append({"judge_id": f"j{j}", "truth": "machine" if i % 2 else "human", "agent": "m" if i % 2 else "human",
                         "answer": "machine" if i % 2 else "human", "rt_ms": 100 if j == 0 else 2000})
        rows.append({"judge_id": f"j{j}", "truth": "machine", "agent": "ctl", "answer": "human" if j == 1 else "machine",
                     "control": True, "control_correct": j != 1})
    a = analyse_static(_table(rows), None, study="t", task="word", n_boot=50)
    f = a.flags.set_index("judge_id")
    assert bool(f.loc["j0", "flag_fast"]) and not f.loc["j0", "flag_control"]
    assert bool(f.loc["j1", "flag_control"]) and not f.loc["j1", "flag_fast"]
    assert a.n_trials == 120 and a.n_judges == 6  # flagged judges are still in, control items are not
    assert a.sensitivity["judges_flagged"] == 2 and a.sensitivity["trials_without_flagged"] == 80
    assert "ctl" not in set(a.agents["agent"])


def test_report_of_imported_word_study_matches_raw(tmp_path, sqlite_url):
    r = runner.invoke(app, ["static", "import", "--task", "word", "--responses", str(DATA / "word.json"),
                            "--judge-trials", str(JUDGE), "--study", "zw", "--db", sqlite_url])
    assert r.exit_code == 0, r.output
    out = tmp_path / "r.md"
    r = runner.invoke(app, ["report", "--study", "zw", "--db", sqlite_url, "--out", str(out), "--format", "md"])
    assert r.exit_code == 0, r.output
    md = out.read_text()
    raw = json.loads(JUDGE.read_text())
    conf = Counter((t["trialData"]["groundtruth"], t["trialData"]["response_speaker"]) for t in raw.values())
    assert f"| human | {conf[('human', 'human')]} | {conf[('human', 'machine')]} |" in md
    assert f"| machine | {conf[('machine', 'human')]} | {conf[('machine', 'machine')]} |" in md
    ba = (conf[("human", "human")] / 1000 + conf[("machine", "machine")] / 1000) / 2
    assert f"| all machine items | {ba:.3f} |" in md
    per = Counter()
    for t in raw.values():
        td = t["trialData"]
        if td["groundtruth"] == "machine":
            per[td["machine_groundtruth"]] += td["response_speaker"] == "human"
    for agent, k in per.items():
        name = agent.replace("(", "\\(").replace(")", "\\)")
        assert f"| {name} | 200 | 50 | {k} | {k / 200:.3f} |" in md
    assert (tmp_path / "r_figures" / "static_confusion.svg").is_file()
    assert (tmp_path / "r_figures" / "static_agents.svg").is_file()
    html = tmp_path / "r.html"
    assert runner.invoke(app, ["report", "--study", "zw", "--db", sqlite_url, "--out", str(html)]).exit_code == 0
    assert "data:image/png;base64" in html.read_text()


def test_per_length_and_escaped_names(tmp_path, sqlite_url):
    with Store(sqlite_url) as st:
        sid = st.register_static_study(parse_static_study("preset: zhang-2023\nname: c\ntask: conversation\n"))
        st.add_items(sid, [StimulusIn("s1"), StimulusIn("s2")],
                     [ResponseIn("s1/3", "s1", "A: hi", "machine", "<b>bot</b>", payload={"length": 3}),
                      ResponseIn("s1/6", "s1", "A: hi", "machine", "<b>bot</b>", payload={"length": 6}),
                      ResponseIn("s2/3", "s2", "A: yo", "human", "human", payload={"length": 3})])
        items = {i.key: i.id for i in st.items(sid)}
        j = st.create_participant(label="j")
        st.append_trials(sid, [TrialIn(j, items["s1/3"], 0, "human"), TrialIn(j, items["s1/6"], 1, "machine"),
                               TrialIn(j, items["s2/3"], 2, "human")])
    out = tmp_path / "c.html"
    r = runner.invoke(app, ["report", "--study", "c", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    html = out.read_text()
    assert "<b>bot</b>" not in html and "&lt;b&gt;bot&lt;/b&gt;" in html
    assert "Per conversation length" in html


def test_database_aggregation_equals_trial_table(db_url):
    import random

    from turinglab.analysis.static.report import analyse_counts
    from turinglab.analysis.static.summary import judge_counts, trial_table

    rng = random.Random(5)
    with Store(db_url) as st:
        sid = st.register_static_study(parse_static_study("preset: zhang-2023\nname: eq\ntask: conversation\n"))
        stimuli = [StimulusIn(f"s{i}") for i in range(30)]
        resp = [ResponseIn(f"s{i}/{a}", f"s{i}", "t", "human" if a == "h" else "machine", a,
                           payload={"length": 3 if i % 2 else 6}) for i in range(30) for a in ("h", "m1", "m2")]
        resp.append(ResponseIn("ctl", "s0", "obvious", "machine", "ctl", control=True))
        st.add_items(sid, stimuli, resp)
        ids = [i.id for i in st.items(sid)]
        for j in range(8):
            pid = st.create_participant(label=f"j{j}", demographics={"g": "ab"[j % 2]})
            picks = rng.sample(ids, 25)
            st.append_trials(sid, [TrialIn(pid, r, n, rng.choice(["human", "machine"]),
                                           rt_ms=rng.choice([100, 200, 1500, 3000, None])) for n, r in enumerate(picks)])
        df = trial_table(st, sid)
        jc, lc = judge_counts(st, sid, 300)  # grouped in the database
        import turinglab.analysis.static.summary as summary_mod

        limit, summary_mod.MAX_SQL_AGENTS = summary_mod.MAX_SQL_AGENTS, 0
        try:
            jc_py, lc_py = judge_counts(st, sid, 300)  # counted in numpy
        finally:
            summary_mod.MAX_SQL_AGENTS = limit
        jt = None
    a1 = analyse_static(df, jt, study="eq", task="conversation", n_boot=200)
    a2 = analyse_counts(jc, lc, jt, study="eq", task="conversation", n_boot=200)
    a3 = analyse_counts(jc_py, lc_py, jt, study="eq", task="conversation", n_boot=200)
    cols3 = ["agent", "n", "judged_human", "rate", "low", "high", "boot_low", "boot_high"]
    pd.testing.assert_frame_equal(a3.agents[cols3].reset_index(drop=True), a2.agents[cols3].reset_index(drop=True))
    pd.testing.assert_frame_equal(a3.flags.set_index("judge_id").sort_index(), a2.flags.set_index("judge_id").sort_index(),
                                  check_dtype=False)
    assert a1.confusion == a2.confusion and a1.n_trials == a2.n_trials
    cols = ["agent", "n", "judged_human", "rate", "low", "high", "boot_low", "boot_high"]
    pd.testing.assert_frame_equal(a1.agents[cols].reset_index(drop=True), a2.agents[cols].reset_index(drop=True))
    pd.testing.assert_frame_equal(a1.by_length.reset_index(drop=True), a2.by_length.reset_index(drop=True),
                                  check_dtype=False)
    f1, f2 = a1.flags.set_index("judge_id").sort_index(), a2.flags.set_index("judge_id").sort_index()
    pd.testing.assert_frame_equal(f1, f2, check_dtype=False)
    assert f1["flag_fast"].any()
