"""Static studies: `report --format json` holds every number of the analysis, the export's rebuild.py
recomputes each of them from the exported trials alone."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.analysis.demo.static import data_dir

DATA = data_dir()
STUDIES = {"word": ["--responses", str(DATA / "word.json"), "--judge-trials",
                    str(DATA / "humanjudge_Word_Feedback_testphase.json")],
           "conversation": ["--judge-trials", str(DATA / "trials_all.json")]}


def synthetic(db_url) -> None:
    """A conversation study played by 24 judges: topic controls (some wrong), vigilance items (some
    failed), fast answers and non-native speakers, so every flag and the topic rule have something to count."""
    import random

    from turinglab.game.static_config import parse_static_study
    from turinglab.store import Store
    from turinglab.store.static import ResponseIn, StimulusIn, TrialIn

    rng = random.Random(7)
    with Store(db_url) as st:
        sid = st.register_static_study(parse_static_study(
            "preset: zhang-2023\nname: s\ntask: conversation\nexclusions:\n  native_language: english\n"))
        topic = {"control_answer": "travel", "control_choices": ["travel", "food", "sport"]}
        stimuli = [StimulusIn(f"s{i}", fields=topic if i % 3 else {}) for i in range(24)]
        resp = [ResponseIn(f"s{i}/{a}", f"s{i}", "t", "human" if a == "h" else "machine", a,
                           payload={"length": 3 if i % 2 else 6}) for i in range(24) for a in ("h", "m1", "m2")]
        resp += [ResponseIn(f"ctl{c}", "s0", "obvious", "machine", "ctl", control=True) for c in range(3)]
        st.add_items(sid, stimuli, resp)
        items = st.items(sid)
        for j in range(24):
            demo = {"age": str(rng.randint(18, 70)), "gender": rng.choice(["woman", "man"]),
                    "native_language": rng.choice(["English", "English", "German"])}
            pid = st.create_participant(label=f"j{j}", demographics=demo)
            picks = rng.sample(items, 20)
            st.append_trials(sid, [TrialIn(pid, it.id, n, rng.choice(["human", "machine"]),
                                           rt_ms=rng.choice([150, 1500, 3000, None] if j % 4 else [150, 200]),
                                           answers={"control": rng.choice(["travel", "travel", "food"])})
                                   for n, it in enumerate(picks)])


@pytest.mark.parametrize("task", [*sorted(STUDIES), "synthetic"])
def test_static_rebuild_recomputes_every_number_of_the_report_json(sqlite_url, tmp_path, task):
    run = CliRunner().invoke
    if task == "synthetic":
        synthetic(sqlite_url)
    else:
        if not all(pd.io.common.file_exists(f) for f in STUDIES[task] if f.endswith(".json")):
            pytest.skip("Zhang's data not present")
        r = run(app, ["static", "import", "--task", task, *STUDIES[task], "--study", "s", "--db", sqlite_url])
        assert r.exit_code == 0, r.output
    out, rep = tmp_path / "export", tmp_path / "report.json"
    r = run(app, ["report", "--study", "s", "--db", sqlite_url, "--format", "json", "--out", str(rep)])
    assert r.exit_code == 0, r.output
    r = run(app, ["export", "--study", "s", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    report = json.loads(rep.read_text())["numbers"]
    saved = json.loads((out / "report_numbers.json").read_text())["numbers"]
    assert report == saved and len(report) > 100
    assert any(k.startswith("agents.") and k.endswith(".boot_low") and v is not None for k, v in report.items())
    if task != "word":
        assert report["topic.items"] and report["topic.results.3.trials"] is not None
    if task == "synthetic":  # every flag and the topic rule count something here
        assert all(report[f"flags.{f}"] for f in ("control", "fast", "native", "topic")), report
        assert report["topic.topic_wrong"] and report["topic.items_with_topic"] < report["topic.items"]
        assert any(k.startswith("by_group.native_language.") for k in report)
    # pseudonymous: no stored judge id is in the export
    raw = pd.read_csv(out / "trials.csv", dtype=str)["judge_id"]
    assert raw.str.fullmatch(r"P[0-9a-f]{16}").all()
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "; 0 differ;" in r.stdout, r.stdout + r.stderr
    done, total = map(int, re.search(r"rebuilt (\d+)/(\d+)", r.stdout).groups())
    print(f"\nstatic {task}: rebuilt {done} of {total} numbers of report --format json")
    assert done == total == len(report)
    # an edited answer changes the rebuilt numbers
    t = pd.read_csv(out / "trials.csv", dtype=str, keep_default_na=False)
    row = t.index[(t["control"] == "False") & (t["truth"] == "machine")][0]
    t.loc[row, "answer"] = "human" if t.loc[row, "answer"] == "machine" else "machine"
    t.to_csv(out / "trials.csv", index=False)
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "MISMATCH agents." in r.stdout and " 0 differ" not in r.stdout, r.stdout
