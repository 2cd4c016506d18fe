"""Conversations with one truth per speaker: Zhang's conversation judge results (verbatim excerpts,
tests/data/zhang2023/conversations) imported with the look-up, counted again here from the raw JSON;
the HH/HAI/AIH/AIAI report; refusals that name the trial."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from turinglab.game.static_config import preset_study
from turinglab.analysis.static.speakers import speaker_report
from turinglab.statictests.zhang import ImportProblem
from turinglab.statictests.zhang_conversations import parse_results, read_lookup
from turinglab.store.api import Store

DATA = Path(__file__).parents[2] / "data" / "zhang2023" / "conversations"
PROLIFIC = DATA / "compiled_prolific_excerpt.json"
ORIGINAL = DATA / "compiled_original_excerpt.json"
LOOKUP = DATA / "correct_answers_lookup_excerpt.ipynb"


def raw_lookup() -> dict[int, str]:
    """The look-up's printed lines, read here without the importer: {conversation: class}."""
    out = {}
    for line in json.loads(LOOKUP.read_text())["cells"][0]["outputs"][0]["text"]:
        if line.startswith("Conversation "):
            out[int(line.split()[1].rstrip(":"))] = line.rsplit("= ", 1)[1].strip()
    return out


def split(cls: str) -> tuple[str, str]:
    return {"HH": ("human", "human"), "HAI": ("human", "machine"), "AIH": ("machine", "human"),
            "AIAI": ("machine", "machine")}[cls]


def expected(path: Path) -> dict:
    """Per-speaker counts straight from the raw results JSON and the look-up lines: `n` trials with a
    known truth, `n_test` of them without feedback (the test phase, which alone is counted)."""
    truth = raw_lookup()
    conf: Counter = Counter()
    per: Counter = Counter()
    by_len: Counter = Counter()
    n = n_test = skipped = empty = 0
    for block in json.loads(path.read_text()).values():
        for judge in block["datastring"]:
            for rec in judge["data"]:
                t = rec["trialdata"]
                if t["conversationID"] == ".html":
                    empty += 1
                    continue
                if t["hit"] not in truth:
                    skipped += 1
                    continue
                n += 1
                if t.get("hasFeedback") is True:  # a feedback trial: practice, counted apart
                    continue
                n_test += 1
                true_cls, said = truth[t["hit"]], split(t["Aclass"])
                conf[(true_cls, t["Aclass"])] += 1
                for sp, tr, s in zip("AB", split(true_cls), said):
                    per[(sp, tr, "n")] += 1
                    per[(sp, tr, "human")] += s == "human"
                    by_len[(t["hit_len"], tr, "n")] += 1
                    by_len[(t["hit_len"], tr, "human")] += s == "human"
    return {"n": n, "n_test": n_test, "skipped": skipped, "empty": empty, "conf": conf, "per": per, "by_len": by_len}


def imported(url: str, path: Path, name: str) -> int:
    parsed = parse_results(json.loads(path.read_text()), read_lookup(json.loads(LOOKUP.read_text())), str(path),
                           skip_unknown=True)
    with Store(url) as st:
        return st.import_static(preset_study(name, "conversation"), parsed.stimuli, parsed.responses,
                                parsed.judges, parsed.trials)


@pytest.mark.parametrize("path", [PROLIFIC, ORIGINAL])
def test_zhang_conversation_results_per_speaker_counts_match_the_raw_json(path, sqlite_url):
    exp = expected(path)
    sid = imported(sqlite_url, path, "conv-" + path.stem)
    with Store(sqlite_url) as st:
        rep = speaker_report(st, sid)
        trials = st.trials(sid)
        items = {i.id: i for i in st.items(sid)}
    assert exp["n"] > 10 and exp["skipped"] > 0  # the excerpts hold both kinds
    assert len(trials) == exp["n"] and rep["trials"] == exp["n_test"] == sum(t.phase == "test" for t in trials)
    for t_cls, row in rep["confusion"].items():
        for j_cls, k in row.items():
            assert k == exp["conf"][(t_cls, j_cls)], (t_cls, j_cls)
    for r in rep["speakers"]:
        assert r["agent"] == ("human" if r["truth"] == "human" else "machine (model not named)")
        assert (r["n"], r["judged_human"]) == (exp["per"][(r["speaker"], r["truth"], "n")],
                                                exp["per"][(r["speaker"], r["truth"], "human")])
    assert sum(r["n"] for r in rep["speakers"]) == 2 * exp["n_test"]
    for r in rep["by_length"]:
        assert 3 <= r["length"] <= 24
        assert (r["n"], r["judged_human"]) == (exp["by_len"][(r["length"], r["truth"], "n")],
                                                exp["by_len"][(r["length"], r["truth"], "human")])
    # every answer is kept: speakers, genders, topic index, catch and feedback flags
    t0 = trials[0]
    assert set(t0.answers) >= {"speakers", "genders", "class", "topic_index", "is_catch", "has_feedback"}
    assert all(items[t.response_id].payload["class"] in ("HH", "HAI", "AIH", "AIAI") for t in trials)
    if path == PROLIFIC:
        assert {t.phase for t in trials} == {"feedback", "test"}


def test_a_conversation_missing_from_the_look_up_is_refused_naming_the_trial(sqlite_url):
    data = json.loads(PROLIFIC.read_text())
    with pytest.raises(ImportProblem) as e:
        parse_results(data, read_lookup(json.loads(LOOKUP.read_text())), "results.json")
    msg = str(e.value)
    assert "prolific judge 1 trial 0 (conv163_len3): conversation 163 is not in the look-up" in msg
    assert "nothing imported" in msg and "--skip-unknown-truth" in msg


def test_a_trial_whose_fields_name_two_conversations_is_refused(sqlite_url):
    data = json.loads(PROLIFIC.read_text())
    data["prolific"]["datastring"][0]["data"][2]["trialdata"]["hit"] = 240  # page says conv239
    with pytest.raises(ImportProblem, match=r"trial 2: fields 'hit'/'hit_len' are 240/12 but the page is conv239_len12"):
        parse_results(data, read_lookup(json.loads(LOOKUP.read_text())), "results.json", skip_unknown=True)
    data["prolific"]["datastring"][0]["data"][2]["trialdata"].update(hit=239, Aclass="HX")
    with pytest.raises(ImportProblem, match="field 'Aclass' is 'HX'"):
        parse_results(data, read_lookup(json.loads(LOOKUP.read_text())), "results.json", skip_unknown=True)


def test_cli_imports_results_and_summary_gives_the_speaker_classes(sqlite_url, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3])}
    base = [sys.executable, "-m", "turinglab", "static"]
    r = subprocess.run(base + ["import", "--task", "conversation", "--study", "zc", "--judge-trials", str(PROLIFIC),
                               "--db", sqlite_url], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "give the truth look-up with --responses" in (r.stdout + r.stderr)
    r = subprocess.run(base + ["import", "--task", "conversation", "--study", "zc", "--judge-trials", str(PROLIFIC),
                               "--responses", str(LOOKUP), "--db", sqlite_url], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "conv163_len3" in (r.stdout + r.stderr)
    r = subprocess.run(base + ["import", "--task", "conversation", "--study", "zc", "--judge-trials", str(PROLIFIC),
                               "--responses", str(LOOKUP), "--skip-unknown-truth", "--db", sqlite_url],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    exp = expected(PROLIFIC)
    assert f"{exp['n']} trials" in r.stdout and f"{exp['skipped']} trial(s)" in r.stdout
    r = subprocess.run(base + ["summary", "--study", "zc", "--json", "--db", sqlite_url],
                       capture_output=True, text=True, env=env)
    out = json.loads(r.stdout)
    assert out["speakers"]["trials"] == exp["n_test"] and out["practice"]["trials"] == exp["n"] - exp["n_test"]
    assert out["speakers"]["confusion"]["AIAI"]["AIAI"] == exp["conf"][("AIAI", "AIAI")]
    assert sum(out["answers"]["gender"].values()) == 2 * exp["n_test"]
    assert out["answers"]["judges"]["country"] == {"United States": 1}
    rep = tmp_path / "r.html"
    r = subprocess.run([sys.executable, "-m", "turinglab", "report", "--study", "zc", "--out", str(rep),
                        "--db", sqlite_url], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    html = rep.read_text()
    assert "Speaker pairs: HH / HAI / AIH / AIAI" in html and "Per speaker, by conversation length" in html


def test_trials_all_verdicts_still_import_with_one_truth_per_conversation(sqlite_url):
    from turinglab.statictests.zhang import parse_conversation_verdicts, read_json

    src = Path(__file__).parents[3] / "turinglab" / "statictests" / "zhang2023" / "trials_all.json"
    parsed = parse_conversation_verdicts(read_json(src), str(src))
    with Store(sqlite_url) as st:
        sid = st.import_static(preset_study("ta", "conversation"), parsed.stimuli, parsed.responses,
                               parsed.judges, parsed.trials)
        assert len(st.trials(sid)) == 188
        assert speaker_report(st, sid) is None  # no speakers named: the per-speaker analysis is absent


def test_from_games_items_name_each_speaker_and_its_agent(sqlite_url):
    from typer.testing import CliRunner

    from turinglab.analysis.demo.live import DemoSpec, generate
    from turinglab.cli import app
    from turinglab.statictests.speakers import speaker_truths

    res = generate(sqlite_url, DemoSpec(n_games=6, seed=9, format="three-player"))
    r = CliRunner().invoke(app, ["static", "from-games", "--from-study", res["study"], "--lengths", "2",
                                 "--study", "disp", "--db", sqlite_url])
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as st:
        items = st.items(st.static_study("disp").id)
        seats = {g.id: g.seats for g in st.games(res["study_id"])}
    assert items
    for it in items:
        ident = seats[it.payload["game_id"]][it.stimulus_fields["conversation"]]
        truths = speaker_truths(it.payload)
        assert truths["A"] == ("human", "human")  # the interrogator
        assert truths["B"] == (("machine", ident.witness) if ident.kind == "ai" else ("human", "human"))


def test_imported_transcripts_with_named_speakers_give_per_speaker_rates(sqlite_url):
    from turinglab.statictests.zhang import parse_responses
    from turinglab.store.static import TrialIn

    data = {"c1": [{"conversationID": "c1", "response": "A: hi\nB: hello there", "groundtruth": "machine",
                    "human_groundtruth": "", "machine_groundtruth": "GPT-4", "speakers": {"A": "human", "B": "GPT-4"}}],
            "c2": [{"conversationID": "c2", "response": "A: hey\nB: hi!", "groundtruth": "machine",
                    "human_groundtruth": "", "machine_groundtruth": "GPT-4", "speakers": {"A": "GPT-4", "B": "GPT-4"}}]}
    parsed = parse_responses(data, "conversation")
    with Store(sqlite_url) as st:
        sid = st.import_static(preset_study("tr", "conversation"), parsed.stimuli, parsed.responses)
        items = {i.key.split("_")[0]: i for i in st.items(sid)}
        j = st.create_participant(label="j")
        st.append_trials(sid, [TrialIn(j, items["0"].id, 0, "machine", answers={"speakers": {"A": "human", "B": "machine"}}),
                               TrialIn(j, items["1"].id, 1, "machine", answers={"speakers": {"A": "human", "B": "human"}})])
        rep = speaker_report(st, sid)
    assert rep["confusion"]["HAI"]["HAI"] == 1 and rep["confusion"]["AIAI"]["HH"] == 1
    rows = {(r["speaker"], r["truth"], r["agent"]): (r["n"], r["judged_human"]) for r in rep["speakers"]}
    assert rows == {("A", "human", "human"): (1, 1), ("A", "machine", "GPT-4"): (1, 1),
                    ("B", "machine", "GPT-4"): (2, 1)}
