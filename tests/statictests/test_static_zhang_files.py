"""Zhang et al.'s judge files of colour, object detection, free viewing and the ChatGPT word round,
from verbatim excerpts (tests/data/zhang2023): imported through the CLI on SQLite and PostgreSQL, and
the summary recomputed from the raw JSON with plain counting; mismatched pages refused, nothing stored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.store import Store

HERE = Path(__file__).parents[1] / "data" / "zhang2023"
SHIPPED = Path(__file__).parents[2] / "turinglab" / "statictests" / "zhang2023"
runner = CliRunner()


def cli(*args: str):
    return runner.invoke(app, list(args))


def raw_expected(path: Path) -> dict:
    """Confusion, per-agent (n, judged human) and control answers from the raw file only."""
    raw = json.loads(path.read_text())
    conf, per, per_h = Counter(), Counter(), Counter()
    ctl_n = ctl_ok = 0
    for rec in raw.values():
        t = rec["trialData"]
        conf[(t["groundtruth"], t["response_speaker"])] += 1
        agent = t["machine_groundtruth"] if t["groundtruth"] == "machine" else "human"
        per[agent] += 1
        per_h[agent] += t["response_speaker"] == "human"
        if "response_object" in t:  # 1 = Yes, 2 = No; object_groundtruth 0 = the word is in the image
            ctl_n += 1
            ctl_ok += int(t["response_object"]) == int(t["object_groundtruth"]) + 1
    return {"trials": len(raw), "judges": len({r["workerID"] for r in raw.values()}),
            "conf": {a: {b: conf[(a, b)] for b in ("human", "machine")} for a in ("human", "machine")},
            "agents": {a: (per[a], per_h[a]) for a in per}, "control": (ctl_n, ctl_ok)}


def summary(db: str, study: str) -> dict:
    r = cli("static", "summary", "--study", study, "--db", db, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def check_summary(got: dict, exp: dict) -> None:
    assert got["trials"] == exp["trials"] and got["judges"] == exp["judges"]
    assert got["confusion"] == exp["conf"]
    agents = {a["agent"]: (a["n"], a["judged_human"]) for a in got["agents"]}
    assert agents == exp["agents"]  # the judge file's names, one agent each


@pytest.mark.parametrize("task,dictionary,excerpt", [
    ("color", "color.json", "color_judge_excerpt.json"),
    ("object", "object.json", "object_judge_excerpt.json"),
])
def test_vision_judge_excerpt_imports_and_matches_raw(db_url, task, dictionary, excerpt):
    r = cli("static", "import", "--task", task, "--responses", str(SHIPPED / dictionary),
            "--judge-trials", str(HERE / excerpt), "--study", task, "--db", db_url)
    assert r.exit_code == 0, r.output
    exp = raw_expected(HERE / excerpt)
    got = summary(db_url, task)
    check_summary(got, exp)
    ca = got["control_answers"]
    assert (ca["trials"], ca["correct"]) == exp["control"] and ca["trials"] == exp["trials"]
    oq = got["answers"]["object_question"]  # the same answers as the judge pages' true/false question
    assert (oq["answered"], oq["correct"]) == exp["control"]
    # each trial sits on the image its page names, with that agent's response from the dictionary
    raw = json.loads((HERE / excerpt).read_text())
    words = json.loads((SHIPPED / dictionary).read_text())
    with Store(db_url) as st:
        sid = st.static_study(task).id
        items = {i.id: i for i in st.items(sid)}
        agents = {i.agent for i in items.values() if i.truth == "machine"}
        trials = st.trials(sid)
    assert len(agents) == len({a.casefold() for a in agents})  # never "Google" and "google"
    for t in trials:
        td = raw[t.answers["source_trial"]]["trialData"]
        item = items[t.response_id]
        image = td["page_name"].split("_")[0] + ".jpg"
        assert item.stimulus_key == image == td["imageID"].rsplit("/", 1)[1]
        want = [w["response"] for w in words[image]
                if (w["machine_groundtruth"] or "human").casefold() == (td["machine_groundtruth"] or "human").casefold()]
        assert [item.text] == want
        assert t.answer == td["response_speaker"] and t.rt_ms == td["rt"]
        assert t.control_correct == (int(td["response_object"]) == int(td["object_groundtruth"]) + 1)


def test_colour_page_713_is_image_713_not_the_713th_entry(sqlite_url):
    """The issue's case: page 713_a_0 is the file 713.jpg (not position 713 of the dictionary)."""
    r = cli("static", "import", "--task", "color", "--responses", str(SHIPPED / "color.json"),
            "--judge-trials", str(HERE / "color_judge_excerpt.json"), "--study", "c", "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as st:
        sid = st.static_study("c").id
        t = next(t for t in st.trials(sid) if t.answers["source_trial"] == "Trial_Color_4")
        item = st.items(sid, ids=[t.response_id])[0]
    human = [w for w in json.loads((SHIPPED / "color.json").read_text())["713.jpg"] if w["groundtruth"] == "human"]
    assert item.stimulus_key == "713.jpg" and item.truth == "human" and item.text == human[0]["response"]


@pytest.mark.parametrize("trial,change,field", [
    ("Trial_Color_4", {"page_name": "714_a_0.html/"}, "'imageID'"),  # page and picture disagree
    ("Trial_Color_4", {"page_name": "99999_a_0.html/", "imageID": "https://x/99999.jpg"}, "'page_name'"),  # no such image
    ("Trial_Color_2", {"page_name": "1177_b_0.html/"}, "'machine_groundtruth'"),  # b is Azure elsewhere
    ("Trial_Color_3", {"machine_groundtruth": "MCCQ"}, "'machine_groundtruth'"),  # no such agent at 380.jpg
    ("Trial_Color_1", {"response_object": "3"}, "'response_object'"),
])
def test_mismatched_trial_is_refused_and_nothing_stored(db_url, tmp_path, trial, change, field):
    raw = json.loads((HERE / "color_judge_excerpt.json").read_text())
    raw[trial]["trialData"].update(change)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    r = cli("static", "import", "--task", "color", "--responses", str(SHIPPED / "color.json"),
            "--judge-trials", str(bad), "--study", "bad", "--db", db_url)
    assert r.exit_code == 2, r.output
    line = next(ln for ln in r.output.splitlines() if trial in ln)
    assert field in line and ";" in line  # trial, field, then the fix
    assert "nothing imported" in r.output and "Traceback" not in r.output
    with Store(db_url) as st:
        assert st.static_studies() == []


def test_free_viewing_excerpt_pixels_kept_clipped_for_drawing(db_url):
    r = cli("static", "import", "--task", "fv", "--responses", str(HERE / "fv_excerpt.json"),
            "--judge-trials", str(HERE / "fv_judge_excerpt.json"), "--study", "fv", "--db", db_url)
    assert r.exit_code == 0, r.output
    exp = raw_expected(HERE / "fv_judge_excerpt.json")
    check_summary(summary(db_url, "fv"), exp)
    fv = json.loads((HERE / "fv_excerpt.json").read_text())
    raw = json.loads((HERE / "fv_judge_excerpt.json").read_text())
    with Store(db_url) as st:
        sid = st.static_study("fv").id
        items = {i.id: i for i in st.items(sid)}
        trials = st.trials(sid)
    assert len(items) == sum(len(v) for v in fv.values())
    assert {i.agent for i in items.values() if i.truth == "machine"} == {"IVSN", "gbvs", "deepgaze"}
    subj07 = next(i for i in items.values() if i.stimulus_key == "img144.jpg" and i.agent == "07")
    src = next(r for r in fv["img144.jpg"] if r["human_groundtruth"] == "07")
    assert subj07.payload["scanpath_px"] == src["response"]  # kept as it is, [42, 1428] included
    assert subj07.payload["outside_frame"] == 1
    assert all(-1 <= v <= 1 for p in subj07.payload["scanpath"] for v in p)
    assert subj07.payload["scanpath"][11] == [2 * 42 / 1280 - 1, 1.0]  # clipped at the frame's edge
    for t in trials:
        td = raw[t.answers["source_trial"]]["trialData"]
        item = items[t.response_id]
        num = int(td["imageID"].split("_img")[1].split("_")[0])
        assert item.stimulus_key == f"img{num}.jpg"
        if td["groundtruth"] == "human":
            subj = td["imageID"].split("_subj")[1][:2]
            assert item.agent == subj and item.payload["scanpath_px"] == next(
                r["response"] for r in fv[item.stimulus_key] if r["human_groundtruth"] == subj)
        assert t.answers["response_gender"] == td["response_gender"]


def test_free_viewing_clip_of_an_unknown_image_is_refused(sqlite_url, tmp_path):
    raw = json.loads((HERE / "fv_judge_excerpt.json").read_text())
    raw["Trial_12"]["trialData"]["imageID"] = raw["Trial_12"]["trialData"]["imageID"].replace("img144", "img145")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    r = cli("static", "import", "--task", "fv", "--responses", str(HERE / "fv_excerpt.json"),
            "--judge-trials", str(bad), "--study", "fv", "--db", sqlite_url)
    assert r.exit_code == 2 and "trial 'Trial_12'" in r.output and "image 145" in r.output


def test_chatgpt_word_round_from_judge_trials_alone(db_url):
    r = cli("static", "import", "--task", "word", "--judge-trials", str(HERE / "word_chatgpt_judge_excerpt.json"),
            "--study", "chatgpt", "--db", db_url)
    assert r.exit_code == 0, r.output
    got = summary(db_url, "chatgpt")
    check_summary(got, raw_expected(HERE / "word_chatgpt_judge_excerpt.json"))
    assert "ChatGPT" in {a["agent"] for a in got["agents"]}


def test_chatgpt_word_round_with_its_own_responses(db_url, tmp_path):
    word = json.loads((SHIPPED / "word.json").read_text())
    cues = list(word)
    for i in (8, 38):  # the ChatGPT pages of the excerpt: 8_g_0 and 38_g_0
        word[cues[i]].append({"cueWord": cues[i], "response": f"chat-{i}", "groundtruth": "machine",
                              "human_groundtruth": "", "machine_groundtruth": "chatgpt"})
    resp = tmp_path / "word_chatgpt.json"
    resp.write_text(json.dumps(word))
    r = cli("static", "import", "--task", "word", "--responses", str(resp), "--judge-trials",
            str(HERE / "word_chatgpt_judge_excerpt.json"), "--study", "chatgpt2", "--db", db_url)
    assert r.exit_code == 0, r.output
    check_summary(summary(db_url, "chatgpt2"), raw_expected(HERE / "word_chatgpt_judge_excerpt.json"))
    with Store(db_url) as st:
        sid = st.static_study("chatgpt2").id
        chat = [i for i in st.items(sid) if i.agent == "ChatGPT"]
    assert sorted(i.text for i in chat) == ["chat-38", "chat-8"]
    # without the chatgpt records the g pages name no item: refused, with the way out
    r = cli("static", "import", "--task", "word", "--responses", str(SHIPPED / "word.json"), "--judge-trials",
            str(HERE / "word_chatgpt_judge_excerpt.json"), "--study", "chatgpt3", "--db", db_url)
    assert r.exit_code == 2 and "judge trials alone" in r.output


def test_agent_names_differing_in_case_are_one_agent(sqlite_url, tmp_path):
    data = {"come": [{"cueWord": "come", "response": "go", "groundtruth": "machine", "human_groundtruth": "",
                      "machine_groundtruth": "gpt2"},
                     {"cueWord": "come", "response": "here", "groundtruth": "human", "human_groundtruth": "",
                      "machine_groundtruth": ""}],
            "wing": [{"cueWord": "wing", "response": "bird", "groundtruth": "machine", "human_groundtruth": "",
                      "machine_groundtruth": "GPT2"}]}
    f = tmp_path / "w.json"
    f.write_text(json.dumps(data))
    r = cli("static", "import", "--task", "word", "--responses", str(f), "--study", "w", "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as st:
        agents = {i.agent for i in st.items(st.static_study("w").id) if i.truth == "machine"}
    assert agents == {"gpt2"}


def test_free_viewing_page_draws_fv_json_scanpaths_clipped(sqlite_url, tmp_path):
    """A judge page over fv.json's pixel scanpaths: the page gets the path in [-1, 1] clipped to the
    frame, never the raw pixels, the subject or the model."""
    import re

    from fastapi.testclient import TestClient

    from turinglab.server.judging.pages import create_static_app

    pics = tmp_path / "pics"
    pics.mkdir()
    for name in ("img144.jpg", "img146.jpg"):
        (pics / name).write_bytes(b"\xff\xd8\xff\xd9")
    (tmp_path / "fv.yaml").write_text("name: fvx\ntask: fv\nsession: {items: 2, min_rt_ms: 0}\n")
    r = cli("static", "import", "--task", "fv", "--responses", str(HERE / "fv_excerpt.json"), "--images", str(pics),
            "--study-file", str(tmp_path / "fv.yaml"), "--study", "fvx", "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as st:
        study = st.static_study("fvx").study
    with TestClient(create_static_app(study, sqlite_url, admin_password="pw", rng_seed=1)) as c:
        pid = c.post("/start", follow_redirects=False).headers["location"].rsplit("/", 1)[1]
        tok = re.search(r'name="csrf" value="(\w+)"', c.get(f"/p/{pid}").text).group(1)
        assert c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok}).status_code == 200
        html = c.get(f"/p/{pid}").text
    data = json.loads(re.search(r'<script type="application/json" id="item-data">(.*?)</script>', html, re.S).group(1))
    assert data["task"] == "fv" and 1 <= len(data["scanpath"]) <= 15
    assert all(-1 <= v <= 1 for p in data["scanpath"] for v in p)
    assert "scanpath_px" not in html and "ivsn" not in html.lower() and "outside_frame" not in html
