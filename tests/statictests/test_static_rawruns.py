"""Judge data as psiTurk and jsPsych store it (`static import --format psiturk|jspsych`): Zhang's raw
object run (a pseudonymised excerpt of `out_final.csv`) and a hand-written jsPsych study, each
summary recomputed here from the raw file; ids never stored; wrong task or letter refused."""

from __future__ import annotations

import csv
import json
import sqlite3
import sys
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

from turinglab.cli import app

runner = CliRunner()
DATA = Path(__file__).parents[1] / "data" / "rawruns"
OBJECT = str(Path(__file__).parents[2] / "turinglab" / "statictests" / "zhang2023" / "object.json")
LETTER = {"a": "human", "b": "azure", "c": "detectron", "d": "google", "e": "rekognition"}
FAKE_IDS = ("AFAKEWORKER", "3FAKEASSIGN", "3FAKEHIT", "192.0.2.")


def raw_object_trials() -> list[dict]:
    """Every TEST trial of the excerpt, read here with csv and json alone."""
    csv.field_size_limit(sys.maxsize)
    with (DATA / "object_participants.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return [d["trialdata"] for r in rows if r["datastring"] for d in json.loads(r["datastring"])["data"]
            if d["trialdata"].get("phase") == "TEST"]


def expected(trials: list[dict], drop: bool) -> tuple[int, dict, Counter]:
    """(trials, confusion, judged human per agent) as the authors' notebook counts them."""
    conf = {"human": {"human": 0, "machine": 0}, "machine": {"human": 0, "machine": 0}}
    per_agent: Counter = Counter()
    n = 0
    for t in trials:
        if drop and int(t["topic"]) != int(t["oneWord_curr"]) + 1:
            continue
        agent = LETTER[t["page_name"].split("_")[1]]
        answer = "human" if t["Aclass"] == "H" else "machine"
        conf["human" if agent == "human" else "machine"][answer] += 1
        per_agent[(agent, answer)] += 1
        n += 1
    return n, conf, per_agent


def imp(db: str, judge_trials: str, *extra: str, task: str = "object", fmt: str = "psiturk", study: str = "raw"):
    args = ["static", "import", "--task", task, "--format", fmt, "--judge-trials", judge_trials, "--study", study,
            "--db", db, *extra]
    return runner.invoke(app, args)


def summary(db: str, study: str = "raw", *extra: str) -> dict:
    res = runner.invoke(app, ["static", "summary", "--study", study, "--db", db, "--json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def check_counts(out: dict, trials: list[dict], drop: bool) -> None:
    n, conf, per_agent = expected(trials, drop)
    assert out["trials"] == n and out["confusion"] == conf
    for a in out["agents"]:
        assert a["n"] == per_agent[(a["agent"], "human")] + per_agent[(a["agent"], "machine")]
        assert a["judged_human"] == per_agent[(a["agent"], "human")]


def test_raw_object_run_imports_every_test_trial_and_drops_failed_controls(sqlite_url):
    trials = raw_object_trials()
    res = imp(sqlite_url, str(DATA / "object_participants.csv"), "--responses", OBJECT)
    assert res.exit_code == 0, res.output
    assert f"2 judges, {len(trials)} trials" in res.output and "2 postquestionnaire, 2 prequestionnaire" in res.output
    out = summary(sqlite_url)
    assert out["judges"] == 2 and out["failed_controls_dropped"] is False
    check_counts(out, trials, drop=False)
    dropped = summary(sqlite_url, "raw", "--drop-failed-controls")
    check_counts(dropped, trials, drop=True)
    assert dropped["trials"] < out["trials"]  # the excerpt has failed controls
    raw = Path(sqlite_url.removeprefix("sqlite:///")).read_bytes()
    assert not any(f.encode() in raw for f in FAKE_IDS)  # worker/assignment/HIT ids and IPs never stored


def whole_run_table(path: Path) -> list[dict]:
    """The whole raw object run from its transcribed fields (`object_run_fields.txt`) as a psiTurk
    participants table with fake ids, written to `path`; its TEST trials returned."""
    judges: dict[str, list[dict]] = {}
    for line in (DATA / "object_run_fields.txt").read_text().splitlines():
        if line.startswith("#") or not line.strip():
            continue
        pid, *tokens = line.split()
        for tok in tokens:
            img, letter, aclass, topic, word = tok[:-4], tok[-4], tok[-3], tok[-2], tok[-1]
            judges.setdefault(pid, []).append({"Aclass": "AI" if aclass == "A" else "H", "hit": img, "topic": topic,
                                               "oneWord_curr": word, "imageID": f"static/dataset/coco_val_set/{img}.jpg",
                                               "page_name": f"{img}_{letter}_0.html/", "phase": "TEST"})
    with path.open("w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["uniqueid", "workerid", "assignmentid", "hitid", "datastring"])
        for k, trials in enumerate(judges.values(), 1):
            ids = (f"AFAKEWORKER{k:04d}", f"3FAKEASSIGN{k:04d}")
            data = [{"current_trial": n, "trialdata": dict(t, trial=n)} for n, t in enumerate(trials, 1)]
            out.writerow([":".join(ids), *ids, "3FAKEHIT0001", json.dumps({"workerId": ids[0], "data": data})])
    return [t for trials in judges.values() for t in trials]


def test_whole_raw_object_run_gives_table_1_and_the_notebook_count(sqlite_url, tmp_path):
    trials = whole_run_table(tmp_path / "out_final_fields.csv")
    res = imp(sqlite_url, str(tmp_path / "out_final_fields.csv"), "--responses", OBJECT)
    assert res.exit_code == 0, res.output
    assert "79 judges, 1975 trials" in res.output  # the paper's Table 1: 1,975 object Turing tests
    out, dropped = summary(sqlite_url), summary(sqlite_url, "raw", "--drop-failed-controls")
    check_counts(out, trials, drop=False)
    check_counts(dropped, trials, drop=True)
    assert dropped["trials"] == 1778  # Task5_PreCompileData.ipynb after its control rule
    assert out["confusion"] == {"human": {"human": 497, "machine": 450}, "machine": {"human": 377, "machine": 651}}
    rate = {a["agent"]: 1 - a["judged_human"] / a["n"] for a in out["agents"]}  # judged machine
    assert round(rate["detectron"], 2) == 0.49 and round(rate["google"], 2) == 0.65  # the paper's 49 %, 65 %
    assert out["control_answers"]["judge_min"] == 0.6


def test_psiturk_database_and_datafiles_give_the_same_counts(sqlite_url, tmp_path):
    trials = raw_object_trials()
    with (DATA / "object_participants.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    dbfile = tmp_path / "participants.db"  # the table psiTurk's SQLAlchemy model writes
    con = sqlite3.connect(dbfile)
    cols = list(rows[0])
    con.execute(f"CREATE TABLE turkdemo ({', '.join(c + ' TEXT' for c in cols)})")
    con.executemany(f"INSERT INTO turkdemo VALUES ({', '.join('?' * len(cols))})", [list(r.values()) for r in rows])
    con.commit()
    con.close()
    res = imp(sqlite_url, str(dbfile), "--responses", OBJECT, study="db")  # the one table with a datastring
    assert res.exit_code == 0, res.output
    check_counts(summary(sqlite_url, "db"), trials, drop=False)
    con = sqlite3.connect(dbfile)
    con.execute("CREATE TABLE other (uniqueid TEXT, datastring TEXT)")
    con.commit()
    con.close()
    res = imp(sqlite_url, str(dbfile), "--responses", OBJECT, study="db2")
    assert res.exit_code == 2 and "2 tables with a 'datastring' column" in res.output
    mapfile = tmp_path / "table.yaml"
    mapfile.write_text("table: turkdemo\n")
    res = imp(sqlite_url, str(dbfile), "--responses", OBJECT, "--map", str(mapfile), study="db3")
    assert res.exit_code == 0, res.output
    # trialdata.csv / questiondata.csv as `psiturk download_datafiles` writes them (no header)
    folder = tmp_path / "datafiles"
    folder.mkdir()
    with (folder / "trialdata.csv").open("w", newline="") as td, (folder / "questiondata.csv").open("w", newline="") as qd:
        tw, qw = csv.writer(td), csv.writer(qd)
        for r in rows:
            if r["datastring"]:
                d = json.loads(r["datastring"])
                for x in d["data"]:
                    tw.writerow([x["uniqueid"], x["current_trial"], x["dateTime"], json.dumps(x["trialdata"])])
                for k, v in d["questiondata"].items():
                    qw.writerow([r["uniqueid"], k, v])
    res = imp(sqlite_url, str(folder / "trialdata.csv"), "--responses", OBJECT, study="files")
    assert res.exit_code == 0, res.output
    check_counts(summary(sqlite_url, "files"), trials, drop=False)


def test_database_table_named_in_the_map_is_read(sqlite_url, tmp_path):
    rows = [{"uniqueid": "w1:a1", "datastring": json.dumps({"workerId": "w1", "questiondata": {"age": "30"}, "data": [
        {"current_trial": i, "trialdata": {"phase": "test", "cue": c, "shown": s, "who": w, "said": a, "rt": 900}}
        for i, (c, s, w, a) in enumerate([("sea", "wave", "human", "human"), ("sea", "salt", "bot", "human"),
                                           ("sun", "hot", "bot", "machine")])]})}]
    dbfile = tmp_path / "lab.db"
    con = sqlite3.connect(dbfile)
    con.execute("CREATE TABLE mystudy (uniqueid TEXT, datastring TEXT)")
    con.executemany("INSERT INTO mystudy VALUES (:uniqueid, :datastring)", rows)
    con.commit()
    con.close()
    m = tmp_path / "map.yaml"
    m.write_text("table: mystudy\nphase: phase\nstimulus: cue\nresponse: shown\nagent: who\nanswer: said\n")
    res = imp(sqlite_url, str(dbfile), "--map", str(m), task="word", study="lab")
    assert res.exit_code == 0, res.output
    out = summary(sqlite_url, "lab")
    assert out["confusion"] == {"human": {"human": 1, "machine": 0}, "machine": {"human": 1, "machine": 1}}


def jspsych_expected(records: list[dict]) -> tuple[dict, dict, int]:
    conf = {"human": {"human": 0, "machine": 0}, "machine": {"human": 0, "machine": 0}}
    rates: Counter = Counter()
    right = 0
    for r in records:
        if r["phase"] != "test":
            continue
        truth = "human" if r["source"] == "human" else "machine"
        answer = "human" if str(r["response"]) == "0" else "machine"
        conf[truth][answer] += 1
        rates[(r["source"], answer)] += 1
        right += r["control_response"] == r["control_truth"]
    return conf, rates, right


def test_jspsych_study_summary_is_recomputed_from_the_raw_json(sqlite_url, tmp_path):
    records = json.loads((DATA / "jspsych_words.json").read_text())
    res = imp(sqlite_url, str(DATA / "jspsych_words.json"), "--map", str(DATA / "jspsych_words.yaml"),
              task="word", fmt="jspsych", study="js")
    assert res.exit_code == 0, res.output
    assert "2 practice" in res.output  # practice trials left out, and said so
    out = summary(sqlite_url, "js")
    conf, rates, right = jspsych_expected(records)
    tests = sum(r["phase"] == "test" for r in records)
    assert out["trials"] == tests and out["judges"] == 2 and out["confusion"] == conf
    assert out["control_answers"]["correct"] == right and out["control_answers"]["trials"] == tests
    for a in out["agents"]:
        if a["agent"] != "human":
            assert a["judged_human"] == rates[(a["agent"], "human")]
    dropped = summary(sqlite_url, "js", "--drop-failed-controls")
    assert dropped["trials"] == right
    # the same data as jsPsych's .csv() (nested values as JSON text) gives the same summary
    keys = sorted({k for r in records for k in r})
    with (tmp_path / "data.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows({k: json.dumps(v) if isinstance(v, dict) else v for k, v in r.items()} for r in records)
    res = imp(sqlite_url, str(tmp_path / "data.csv"), "--map", str(DATA / "jspsych_words.yaml"),
              task="word", fmt="jspsych", study="jscsv")
    assert res.exit_code == 0, res.output
    assert summary(sqlite_url, "jscsv")["confusion"] == conf
    raw = Path(sqlite_url.removeprefix("sqlite:///")).read_bytes()
    assert b"S01" not in raw and b"S02" not in raw  # the judges' ids are pseudonymised


def test_unmapped_answer_refuses_the_whole_file(sqlite_url, tmp_path):
    records = json.loads((DATA / "jspsych_words.json").read_text())
    records[5]["response"] = 2
    (tmp_path / "bad.json").write_text(json.dumps(records))
    res = imp(sqlite_url, str(tmp_path / "bad.json"), "--map", str(DATA / "jspsych_words.yaml"),
              task="word", fmt="jspsych", study="bad")
    assert res.exit_code == 2
    assert "1 problem(s), nothing imported" in res.output and "field 'response' is 2" in res.output
    assert "trial 5" in res.output


def feedback(task_folder: str, page: str, model: str, truth: str = "machine") -> dict:
    td = {"rt": 3000, "imageID": f"https://example.org/{task_folder}/{page.split('_')[0]}.jpg", "page_name": page,
          "phase": "TEST", "response_speaker": "human", "groundtruth": truth, "machine_groundtruth": model,
          "response_object": "1", "object_groundtruth": "0"}
    return {"workerID": "judge-0001", "workerData": {}, "trialData": td}


def test_colour_trial_given_as_object_is_refused_naming_trial_and_field(sqlite_url, tmp_path):
    f = tmp_path / "colour.json"  # image 672 is in both color.json and object.json; d is Google in both
    f.write_text(json.dumps({"Trial_Color_1": feedback("color_det", "672_d_0.html/", "Google")}))
    res = imp(sqlite_url, str(f), "--responses", OBJECT, fmt="zhang")
    assert res.exit_code == 2
    assert "trial 'Trial_Color_1'" in res.output and "field 'imageID'" in res.output and "--task color" in res.output


def test_wrong_letter_is_refused(sqlite_url, tmp_path):
    f = tmp_path / "object.json"
    f.write_text(json.dumps({"Trial_Obj_1": feedback("obj_det", "672_b_0.html/", "Google")}))
    res = imp(sqlite_url, str(f), "--responses", OBJECT, fmt="zhang")
    assert res.exit_code == 2 and "letter 'b'" in res.output and "'azure'" in res.output
    rows = (DATA / "object_participants.csv").read_text().replace("4355_b_0", "4355_f_0")
    (tmp_path / "raw.csv").write_text(rows)
    res = imp(sqlite_url, str(tmp_path / "raw.csv"), "--responses", OBJECT, study="raw2")
    assert res.exit_code == 2 and "field 'page_name' is '4355_f_0.html/'" in res.output


def test_object_keeps_its_minimum_time_with_a_study_file(sqlite_url, tmp_path):
    from turinglab.game.static_config import load_static_study, preset_study

    assert preset_study("o", "object").session.min_rt_ms == 1500
    f = tmp_path / "s.yaml"
    f.write_text("preset: zhang-2023\nname: o\ntask: object\nsession: {items: 10}\n")
    assert load_static_study(f).session.min_rt_ms == 1500
    f.write_text("preset: zhang-2023\nname: o\ntask: object\nsession: {min_rt_ms: 0}\n")
    assert load_static_study(f).session.min_rt_ms == 0  # what the file sets wins


def test_judge_pseudonyms_are_the_export_pseudonyms(monkeypatch):
    """rawfiles writes the HMAC out (statictests may not import analysis); it is the export's."""
    from turinglab.analysis.export.pseudonyms import keyed
    from turinglab.statictests.rawfiles import Pseudonyms

    monkeypatch.setenv("TURINGLAB_EXPORT_KEY", "k")
    assert Pseudonyms()("AFAKEWORKER0001") == keyed("AFAKEWORKER0001", b"k", "W")


def test_a_map_for_an_importer_without_one_is_refused(sqlite_url):
    res = imp(sqlite_url, str(DATA / "object_participants.csv"), "--responses", OBJECT, "--map",
              str(DATA / "jspsych_words.yaml"), fmt="zhang", study="nomap")
    assert res.exit_code == 2 and "--format zhang takes no map" in res.output


def test_report_shows_results_with_and_without_failed_controls(sqlite_url, tmp_path):
    trials = raw_object_trials()
    f = tmp_path / "s.yaml"
    f.write_text("preset: zhang-2023\nname: raw\ntask: object\ndrop_failed_controls: true\n")
    res = imp(sqlite_url, str(DATA / "object_participants.csv"), "--responses", OBJECT, "--study-file", str(f))
    assert res.exit_code == 0, res.output
    out = summary(sqlite_url)  # the study's setting is the summary's default
    assert out["failed_controls_dropped"] is True
    check_counts(out, trials, drop=True)
    assert summary(sqlite_url, "raw", "--keep-failed-controls")["trials"] == len(trials)
    res = runner.invoke(app, ["report", "--study", "raw", "--db", sqlite_url, "--out", str(tmp_path / "r.html")])
    assert res.exit_code == 0, res.output
    page = (tmp_path / "r.html").read_text()
    kept = expected(trials, drop=True)[0]
    assert "Failed control answers (Zhang" in page and "setting is on" in page
    assert f"<td>every trial</td><td>{len(trials)}</td>" in page
    assert f"<td>right control answer only *</td><td>{kept}</td>" in page


def test_a_study_file_without_a_task_takes_the_tasks_rules(sqlite_url, tmp_path):
    """`static import --task object --study-file F`: a zhang-2023 file that names no task is the object
    study with object's 1.5 s (not the preset's default task's); a file naming another task is refused."""
    f = tmp_path / "s.yaml"
    f.write_text("preset: zhang-2023\nname: o\nsession: {items: 2}\n")
    res = imp(sqlite_url, str(DATA / "object_participants.csv"), "--responses", OBJECT, "--study-file", str(f))
    assert res.exit_code == 0, res.output
    from turinglab.store.api import Store

    with Store(sqlite_url) as st:
        cfg = st.static_study("raw").study
    assert cfg.task == "object" and cfg.session.min_rt_ms == 1500 and cfg.session.items == 2
    f.write_text("preset: zhang-2023\nname: o\ntask: color\n")
    res = imp(sqlite_url, str(DATA / "object_participants.csv"), "--responses", OBJECT, "--study-file", str(f),
              study="raw3")
    assert res.exit_code == 2 and "the file's task is 'color' but --task is 'object'" in res.output
