"""Practice trials count only apart (issue 35.4): an imported judge file whose first trials of
each judge are a TRAIN phase, and a session with feedback items, give test numbers (confusion,
agents, judges, the static report's, the export's rebuild) recomputed from the raw test trials
alone, and the practice trials counted apart."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

from tests.statictests.test_static_import import JUDGE, WORD, cli
from tests.statictests.test_static_zhang_files import raw_expected
from turinglab.analysis.static.report import analyse_stored
from turinglab.analysis.static.summary import count_table, practice, summary
from turinglab.game.static_config import parse_static_study
from turinglab.store import Store
from turinglab.store.static import ResponseIn, StimulusIn, TrialIn


def test_imported_train_trials_are_left_out_and_reported_apart(sqlite_url, tmp_path):
    raw = json.loads(JUDGE.read_text())
    seen: Counter = Counter()
    train, test = {}, {}
    for name, rec in raw.items():  # each judge's first two trials become practice
        seen[rec["workerID"]] += 1
        if seen[rec["workerID"]] <= 2:
            rec["trialData"]["phase"] = "TRAIN"
            train[name] = rec
        else:
            test[name] = rec
    marked = tmp_path / "judges.json"
    marked.write_text(json.dumps(raw))
    only_test = tmp_path / "test_only.json"
    only_test.write_text(json.dumps(test))
    exp = raw_expected(only_test)  # the raw test trials alone, no turinglab code
    r = cli("static", "import", "--task", "word", "--responses", str(WORD), "--judge-trials", str(marked),
            "--study", "zw", "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    r = cli("static", "summary", "--study", "zw", "--db", sqlite_url, "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert got["trials"] == exp["trials"] == 2000 - 100 and got["confusion"] == exp["conf"]
    assert {a["agent"]: (a["n"], a["judged_human"]) for a in got["agents"]} == exp["agents"]
    right = sum(t["trialData"]["groundtruth"] == t["trialData"]["response_speaker"] for t in train.values())
    assert got["practice"]["trials"] == 100 and got["practice"]["phases"] == {"train": 100}
    assert (got["practice"]["scored"], got["practice"]["correct"]) == (100, right)
    with Store(sqlite_url, upgrade=False) as store:
        info, a = analyse_stored(store, "zw", 0.05)
    assert a.n_trials == exp["trials"] and a.confusion == exp["conf"]
    out = tmp_path / "export"
    r = cli("export", "--db", sqlite_url, "--study", "zw", "--out", str(out))
    assert r.exit_code == 0, r.output
    numbers = json.loads((out / "report_numbers.json").read_text())["numbers"]
    assert numbers["n_trials"] == exp["trials"] and numbers["practice.trials"] == 100
    assert numbers["practice.correct"] == right
    rb = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=600)
    assert rb.returncode == 0, rb.stdout + rb.stderr


def test_a_sessions_feedback_items_are_left_out(sqlite_url):
    with Store(sqlite_url) as st:
        sid = st.register_static_study(parse_static_study(
            "preset: zhang-2023\nname: fb\nsession: {items: 8, feedback_items: 4}\n"))
        st.add_items(sid, [StimulusIn(f"cue{i}", text=f"cue {i}") for i in range(20)],
                     [ResponseIn(f"cue{i}/{w}", f"cue{i}", w, "human" if w == "h" else "machine",
                                 "P" if w == "h" else w) for i in range(20) for w in ("h", "m1", "m2")])
        items = {i.id: i for i in st.items(sid)}
        for j in range(6):  # the judges say "machine" to every feedback item, "human" to every test item
            judge = st.create_participant(label=f"j{j}")
            sess = st.start_judge_session(sid, judge, seed=j)
            st.append_trials(sid, [TrialIn(judge, p.response_id, n, "machine" if p.phase == "feedback" else "human",
                                           phase=p.phase, session_id=sess.id) for n, p in enumerate(sess.items)])
        trials = st.trials(sid)
        tests = [t for t in trials if t.phase == "test"]
        conf = Counter((items[t.response_id].truth, t.answer) for t in tests)
        got = summary(count_table(st, sid))
        assert got["trials"] == len(tests) == 48 and got["confusion"]["human"]["machine"] == 0
        assert got["confusion"] == {a: {b: conf[(a, b)] for b in ("human", "machine")} for a in ("human", "machine")}
        pr = practice(st, sid)
        feedback = [t for t in trials if t.phase == "feedback"]
        assert pr["trials"] == len(feedback) == 24 and pr["phases"] == {"feedback": 24}
        assert pr["correct"] == sum(items[t.response_id].truth == "machine" for t in feedback)
