"""A static judge who withdraws (issue 38) leaves `static summary`, the static report and the static
export: every count changes by exactly that judge's trials, recomputed here from the raw trial rows;
`--exclude none` counts them again; an unknown flag is refused. On SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import json
import random
import subprocess
import sys
from collections import Counter

from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.game.static_config import parse_static_study
from turinglab.store import Store
from turinglab.store.static import ResponseIn, StimulusIn, TrialIn
from turinglab.store.withdraw import withdrawals

H, M = "human", "machine"
runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args))


def _seed(url: str) -> tuple[int, list[str]]:
    """A word study: 12 cues x (a human, two models) + 2 control items; 5 judges answer at random
    (seeded), each with two practice trials first. Judge 2 is the one who withdraws."""
    rnd = random.Random(38)
    with Store(url) as st:
        sid = st.register_static_study(parse_static_study("preset: zhang-2023\nname: wd\n"))
        st.add_items(sid, [StimulusIn(f"cue{i}", text=f"cue {i}") for i in range(12)] + [StimulusIn("ctl", text="c")],
                     [ResponseIn(f"cue{i}/{w}", f"cue{i}", w, H if w == "h" else M, "P" if w == "h" else w)
                      for i in range(12) for w in ("h", "m1", "m2")]
                     + [ResponseIn(f"ctl/{k}", "ctl", "asdf", M, "control", control=True) for k in range(2)])
        items = [i.id for i in st.items(sid)]
        judges = []
        for j in range(5):
            pid = st.create_participant(label="judge", prolific_pid=f"{j:024x}", demographics={"age": 20 + j})
            judges.append(pid)
            seen = rnd.sample(items, 20 + 3 * j)  # judges of different sizes: a withdrawal is not a share
            st.append_trials(sid, [TrialIn(pid, r, n, rnd.choice((H, M)), rt_ms=rnd.randint(200, 4000),
                                           phase="practice" if n < 2 else "test") for n, r in enumerate(seen)])
    return sid, judges


def _raw(url: str, sid: int, leave_out: str | None) -> dict:
    """Test-phase counts from the raw trial rows, without `leave_out`'s trials (no analysis code)."""
    with Store(url) as st:
        items = {i.id: i for i in st.items(sid)}
        trials = [t for t in st.trials(sid) if t.judge_id != leave_out]
    test = [t for t in trials if t.phase == "test" and not items[t.response_id].control]
    conf = Counter((items[t.response_id].truth, t.answer) for t in test)
    agents = Counter((items[t.response_id].agent if items[t.response_id].truth == M else H, t.answer) for t in test)
    return {"trials": len(test), "all_trials": len(trials),
            "judges": len({t.judge_id for t in trials if t.phase == "test"}),
            "practice": sum(t.phase != "test" for t in trials),
            "conf": {a: {b: conf[(a, b)] for b in (H, M)} for a in (H, M)},
            "agents": {a: (agents[(a, H)] + agents[(a, M)], agents[(a, H)]) for a in ("m1", "m2", H)}}


def _summary(url: str, *extra: str) -> dict:
    r = cli("static", "summary", "--study", "wd", "--db", url, "--json", *extra)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _check(got: dict, exp: dict) -> None:
    assert got["trials"] == exp["trials"] and got["judges"] == exp["judges"]
    assert got["confusion"] == exp["conf"] and got["practice"]["trials"] == exp["practice"]
    assert {a["agent"]: (a["n"], a["judged_human"]) for a in got["agents"]} == exp["agents"]


def test_a_withdrawn_judge_leaves_summary_report_and_export(db_url, tmp_path):
    sid, judges = _seed(db_url)
    before = _summary(db_url)
    _check(before, _raw(db_url, sid, None))
    assert before["excluded"]["withdrawn"]["judges"] == 0
    r = cli("participant", "withdraw", judges[2], "--reason", "asked by email", "--db", db_url)
    assert r.exit_code == 0, r.output
    with Store(db_url) as st:
        gone = withdrawals(st)[-1].placeholder
    with Store(db_url) as st:
        mine = [t for t in st.trials(sid) if t.judge_id == gone]
    assert len(mine) == 26 and all(t.answers.get("withdrawn") for t in mine)
    exp = _raw(db_url, sid, gone)
    after = _summary(db_url)
    _check(after, exp)
    assert after["excluded"]["withdrawn"] == {"judges": 1, "trials": 26, "left_out": True}
    # the counts change exactly by the withdrawn judge's test trials, cell by cell
    mine_test = Counter((t.answer, t.response_id) for t in mine if t.phase == "test")
    assert before["trials"] - after["trials"] == sum(mine_test.values()) - sum(
        n for (_, rid), n in mine_test.items() if rid in _controls(db_url, sid))
    assert before["judges"] - after["judges"] == 1
    kept = _summary(db_url, "--exclude", "none")  # the flag's usual rule: 'none' counts every trial
    _check(kept, _raw(db_url, sid, None))
    assert kept == {**before, "excluded": kept["excluded"]} and kept["excluded"]["withdrawn"]["left_out"] is False
    assert _summary(db_url, "--exclude", "withdrawn") == after
    bad = cli("static", "summary", "--study", "wd", "--db", db_url, "--exclude", "bots")
    assert bad.exit_code == 2 and "one exclusion flag, withdrawn" in bad.output
    # the report: its numbers, and the note saying what was left out
    r = cli("report", "--db", db_url, "--study", "wd", "--out", str(tmp_path / "r.json"), "--format", "json")
    assert r.exit_code == 0, r.output
    nums = json.loads((tmp_path / "r.json").read_text())["numbers"]
    assert nums["n_trials"] == exp["trials"] and nums["n_judges"] == exp["judges"]
    assert {(a, b): nums[f"confusion.{a}.{b}"] for a in (H, M) for b in (H, M)} == {
        (a, b): exp["conf"][a][b] for a in (H, M) for b in (H, M)}
    assert nums["practice.trials"] == exp["practice"]
    r = cli("report", "--db", db_url, "--study", "wd", "--out", str(tmp_path / "r.html"))
    assert r.exit_code == 0, r.output
    assert "26 trials of 1 judge(s) who withdrew are left out" in (tmp_path / "r.html").read_text()
    # the export: only the analysed trials and judges; rebuild.py agrees with every number
    out = tmp_path / "export"
    r = cli("export", "--db", db_url, "--study", "wd", "--out", str(out))
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader((out / "trials.csv").open()))
    assert len(rows) == exp["all_trials"] and len({r["judge_id"] for r in rows}) == 4
    assert len(list(csv.DictReader((out / "judges.csv").open()))) == 4
    meta = json.loads((out / "report_numbers.json").read_text())["meta"]
    assert meta["exclude"] == ["withdrawn"] and meta["withdrawn"] == {"judges": 1, "trials": 26}
    assert "26 trials of 1 judge(s), left out" in (out / "codebook.md").read_text()
    rb = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=600)
    assert rb.returncode == 0, rb.stdout + rb.stderr
    everything = tmp_path / "export_all"
    r = cli("export", "--db", db_url, "--study", "wd", "--out", str(everything), "--exclude", "none")
    assert r.exit_code == 0, r.output
    assert len(list(csv.DictReader((everything / "trials.csv").open()))) == exp["all_trials"] + 26


def _controls(url: str, sid: int) -> set[int]:
    with Store(url) as st:
        return {i.id for i in st.items(sid) if i.control}
