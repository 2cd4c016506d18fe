"""Pre-registration (issue 42 item 7): `turinglab preregister` on both Jones & Bergen presets and a
Zhang static study, and `turinglab report --prereg` listing exactly the planted deviations (none
on an unchanged study), in HTML, Markdown and JSON."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from scipy.stats import binom
from typer.testing import CliRunner

from turinglab.analysis.report.prereg import read_plan
from turinglab.analysis.report.prereg_check import block, deviations
from turinglab.cli import app
from turinglab.game.config import canonical_json, config_hash
from turinglab.game.study_file import load_preset

runner = CliRunner()
OSF = ["## Study information", "### Hypotheses", "## Design plan", "## Sampling plan", "## Variables",
       "## Analysis plan", "## Other"]


def cli(*args: str):
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, r.output
    return r


def sterne_power(n: int, rate: float, p0: float, alpha: float) -> float:
    """Independent exact power: P(reject p0 towards `rate`) with Sterne's p (sum of the outcomes
    no more probable than the one seen), from scipy's pmf outcome by outcome."""
    x = np.arange(n + 1)
    pmf = binom.pmf(x, n, p0)
    pv = np.array([pmf[pmf <= pmf[k] * (1 + 1e-7)].sum() for k in x])
    side = x > n * p0 if rate > p0 else x < n * p0
    return float(binom.pmf(x[(pv < alpha) & side], n, rate).sum())


@pytest.mark.parametrize("preset,fmt", [("jones-bergen-2023", "two-player"), ("jones-bergen-2025", "three-player")])
def test_preregister_jones_bergen_presets(tmp_path, preset, fmt):
    src = tmp_path / "study.yaml"
    src.write_text(f"preset: {preset}\n")
    out = tmp_path / "prereg.md"
    cli("preregister", "--study", str(src), "--out", str(out), "--no-audit")
    text = out.read_text()
    assert [h for h in OSF if h in text] == OSF
    assert [text.index(h) for h in OSF] == sorted(text.index(h) for h in OSF)  # the template's order
    plan = read_plan(out)
    study = load_preset(preset)
    assert plan["study"]["hash"] == config_hash(study) and plan["study"]["hash"] in text
    assert plan["config"] == json.loads(canonical_json(study))
    names = [w.codename for w in study.witnesses]
    assert [h["witness"] for h in plan["hypotheses"]] == names
    assert {h["alpha"] for h in plan["hypotheses"]} == {0.05}
    assert {h["threshold"] for h in plan["hypotheses"]} == ({0.5} if fmt == "three-player" else {"P(S_h)"})
    s = plan["sample"]
    a = 0.05 / len(names) if len(names) > 1 else 0.05  # Holm's first step
    assert s["alpha_per_test"] == pytest.approx(a)
    n = s["per_witness"]
    assert sterne_power(n, 0.6, 0.5, a) >= 0.8 > sterne_power(n - 1, 0.6, 0.5, a)
    assert s["power_at_n"] == pytest.approx(sterne_power(n, 0.6, 0.5, a), rel=1e-9)
    assert s["games"] == n * len(names) * (2 if fmt == "two-player" else 1)  # human_ratio 0.5 in both presets
    assert [e["flag"] for e in plan["exclusions"]] == [*study.exclusions, "withdrawn"]
    ids = [x["id"] for x in plan["analyses"]]
    assert {"success", "criteria", "accuracy", "bootstrap", "timing"} <= set(ids)
    assert ("comparisons" in ids) == (fmt == "two-player") and "audit" not in ids
    crit = next(x for x in plan["analyses"] if x["id"] == "criteria")
    assert crit["correction"] == "holm"
    assert ("Boschloo" in crit["method"]) == (fmt == "two-player")


def _demo(tmp_path, fmt="two-player", games=200):
    """A demo study whose data reach the plan of `--rate 0.8` (27 games per AI witness): the plan's
    analyses are those of a report at the planned size, and a much smaller study fits fewer models."""
    from turinglab.analysis.demo.live import DemoSpec, generate
    from turinglab.store import Store

    url = f"sqlite:///{tmp_path}/demo.db"
    generate(url, DemoSpec(n_games=games, seed=5, rates={"Dragon": 0.5, "Sierra": 0.45}, format=fmt))
    st = Store(url)
    try:
        study = st.studies()[0].study
    finally:
        st.close()
    return url, study


def _report(url, prereg, out, *more):
    cli("report", "--db", url, "--out", str(out), "--no-audit", "--prereg", str(prereg), *more)


def test_report_lists_exactly_the_planted_deviations(tmp_path):
    url, study = _demo(tmp_path)
    same = tmp_path / "same.yaml"
    same.write_text(canonical_json(study))  # the stored, frozen study as a study file
    cli("preregister", "--study", str(same), "--out", str(tmp_path / "same.md"), "--rate", "0.8", "--no-audit")
    _report(url, tmp_path / "same.md", tmp_path / "r.json", "--format", "json")
    check = json.loads((tmp_path / "r.json").read_text())["prereg"]
    assert check["deviations"] == [] and check["prereg"]["hash"] == config_hash(study)
    _report(url, tmp_path / "same.md", tmp_path / "r.html")
    assert "no deviation." in (tmp_path / "r.html").read_text()

    # planted: the study ran with 300 s games where 240 were pre-registered; the report is at α = 0.1
    data = json.loads(canonical_json(study))
    data["rules"]["time_limit_s"] = 240.0
    planted = tmp_path / "planted.yaml"
    planted.write_text(json.dumps(data))
    cli("preregister", "--study", str(planted), "--out", str(tmp_path / "plan.md"), "--rate", "0.8", "--no-audit")
    for fmt in ("json", "md", "html"):
        _report(url, tmp_path / "plan.md", tmp_path / f"p.{fmt}", "--format", fmt, "--alpha", "0.1")
    devs = json.loads((tmp_path / "p.json").read_text())["prereg"]["deviations"]
    assert [(d["what"], d["planned"], d["actual"]) for d in devs] == [
        ("study setting rules.time_limit_s", 240.0, 300.0), ("analysis setting alpha", 0.05, 0.1)]
    md = (tmp_path / "p.md").read_text()
    top = md[:md.index("## Methods")]  # at the top, before everything else
    assert "2 deviations" in top and "rules.time\\_limit\\_s" in top and "analysis setting alpha" in top
    html = (tmp_path / "p.html").read_text()
    table = re.search(r'<table class="deviations">.*?</table>', html, re.S).group(0)
    rows = re.findall(r'<tr><td class="l">([^<]+)</td><td class="l">([^<]+)</td>', table)
    assert rows == [("setting", "study setting rules.time_limit_s"), ("analysis setting", "analysis setting alpha")]
    assert html.index("Deviations from the pre-registration") < html.index("<h2>Methods</h2>")


def test_unchanged_three_player_study_has_no_deviation(tmp_path):
    url, study = _demo(tmp_path, "three-player", 120)
    same = tmp_path / "same.yaml"
    same.write_text(canonical_json(study))
    cli("preregister", "--study", str(same), "--out", str(tmp_path / "plan.md"), "--rate", "0.8", "--no-audit")
    plan = read_plan(tmp_path / "plan.md")
    assert {"bradley_terry", "leaderboard"} <= {x["id"] for x in plan["analyses"]}
    assert "comparisons" not in {x["id"] for x in plan["analyses"]}
    _report(url, tmp_path / "plan.md", tmp_path / "r.json", "--format", "json")
    assert json.loads((tmp_path / "r.json").read_text())["prereg"]["deviations"] == []
    _report(url, tmp_path / "plan.md", tmp_path / "r2.json", "--format", "json", "--exclude", "none")
    devs = json.loads((tmp_path / "r2.json").read_text())["prereg"]["deviations"]
    assert [(d["what"], d["actual"]) for d in devs] == [("analysis setting exclude", [])]


def test_short_sample_and_missing_extra_analyses():
    plan = {"kind": "live", "study": {"hash": "h"}, "config": {"a": 1}, "settings": {"alpha": 0.05},
            "sample": {"games": 100, "per_witness": 30, "witnesses": ["X", "Y"]},
            "analyses": [{"id": "success", "what": "s", "method": "m"}, {"id": "gee", "what": "g", "method": "m"}]}
    ran = [{"id": "success", "what": "s", "method": "m2"}, {"id": "mixed", "what": "x", "method": "m"}]
    devs = deviations(plan, config_hash="h", config={"a": 1}, settings={"alpha": 0.05}, analyses=ran,
                      sample={"games": 120, "per_witness": {"X": 40, "Y": 29}})
    assert [d["kind"] for d in devs] == ["changed analysis", "missing analysis", "extra analysis", "sample"]
    assert devs[-1]["what"] == "sample short of plan: Y: 29 games, 30 planned"
    assert deviations(plan, config_hash="h", config={"a": 1}, settings={"alpha": 0.05}, analyses=plan["analyses"],
                      sample={"games": 100, "per_witness": {"X": 30, "Y": 30}}) == []


def test_deviations_block_escapes_text():
    check = {"prereg": {"file": "<i>p.md", "hash": "0" * 64},
             "deviations": [{"kind": "sample", "what": "short: <script>alert(1)</script>", "planned": 3, "actual": {"<b>": 1}}]}
    html = block(check, "html")
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;b&gt;" in html and "&lt;i&gt;p.md" in html
    assert block(None, "html") == "" and block(None, "md") == ""


def test_static_zhang_study(tmp_path):
    from turinglab.analysis.demo.static import data_dir
    from turinglab.game.static_config import static_hash
    from turinglab.store import Store

    url = f"sqlite:///{tmp_path}/w.db"
    cli("static", "import", "--task", "word", "--responses", str(data_dir() / "word.json"), "--judge-trials",
        str(data_dir() / "humanjudge_Word_Feedback_testphase.json"), "--study", "w", "--db", url)
    st = Store(url)
    try:
        info = st.static_studies()[0]
    finally:
        st.close()
    src = tmp_path / "w.yaml"
    src.write_text(json.dumps(info.study.model_dump(mode="json")))
    agents = ["GPT2", "GPT3(Emb)", "GPT3(pr, Curie)", "GPT3(pr, DaVinci)", "Word2Vec"]
    # 0.39: 171 items per agent from 43 judges, within the data (200, 50); at that size the dry run
    # already uses the score test, as the report on the real 200 x 1000 items does
    cli("preregister", "--study", str(src), "--out", str(tmp_path / "w.md"), "--rate", "0.39",
        *[x for a in agents for x in ("--agent", a)])
    text = (tmp_path / "w.md").read_text()
    assert [h for h in OSF if h in text] == OSF
    plan = read_plan(tmp_path / "w.md")
    assert plan["kind"] == "static" and plan["study"]["hash"] == static_hash(info.study) == info.config_hash
    assert [h["witness"] for h in plan["hypotheses"]] == agents
    s = plan["sample"]
    assert sterne_power(s["per_witness"], 0.39, 0.5, 0.05) >= 0.8 > sterne_power(s["per_witness"] - 1, 0.39, 0.5, 0.05)
    assert "score" in next(x["method"] for x in plan["analyses"] if x["id"] == "criteria")
    assert s["judges"] == -(-s["per_witness"] // 4)  # 40 items, half human, over 5 agents: 4 per agent per judge
    cli("report", "--db", url, "--study", "w", "--out", str(tmp_path / "r.json"), "--format", "json",
        "--prereg", str(tmp_path / "w.md"))
    assert json.loads((tmp_path / "r.json").read_text())["prereg"]["deviations"] == []
    cli("report", "--db", url, "--study", "w", "--out", str(tmp_path / "r.md"), "--format", "md",
        "--prereg", str(tmp_path / "w.md"), "--alpha", "0.01")
    md = (tmp_path / "r.md").read_text()
    assert "1 deviation." in md and md.index("Deviations from the pre-registration") < md.index("## Confusion")


def test_bad_prereg_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "x.md"
    bad.write_text("# not a pre-registration\n")
    r = runner.invoke(app, ["report", "--db", f"sqlite:///{tmp_path}/none.db", "--out", str(tmp_path / "r.md"),
                            "--prereg", str(bad)])
    assert r.exit_code == 2 and "0 turinglab-prereg blocks" in r.output


def test_a_changed_witness_setting_is_named_by_its_path():
    study = load_preset("jones-bergen-2025")
    plan = {"kind": "live", "study": {"hash": config_hash(study)}, "config": json.loads(canonical_json(study)),
            "settings": {}, "sample": {"games": 0, "per_witness": 0, "witnesses": []}, "analyses": []}
    changed = study.model_copy(update={"witnesses": tuple(
        w.model_copy(update={"timing": w.timing.model_copy(update={"s_per_char": 0.2})}) if w.codename == "ELIZA" else w
        for w in study.witnesses)})
    devs = deviations(plan, config_hash=config_hash(changed), config=json.loads(canonical_json(changed)),
                      settings={}, analyses=[], sample={"games": 0})
    assert [(d["what"], d["planned"], d["actual"]) for d in devs] == [
        ("study setting witnesses.ELIZA.timing.s_per_char", 0.3, 0.2)]
    assert deviations(plan, config_hash=config_hash(study), config=plan["config"], settings={}, analyses=[],
                      sample={"games": 0}) == []


def test_study_text_cannot_break_the_document(tmp_path):
    name = "x```\n# <script>alert(1)</script>"
    src = tmp_path / "s.yaml"
    src.write_text("preset: jones-bergen-2023\n" + f"name: {json.dumps(name)}\n" + "exclusions: [knows_witness, 'a`b<i>']\n")
    cli("preregister", "--study", str(src), "--out", str(tmp_path / "p.md"), "--no-audit")
    text = (tmp_path / "p.md").read_text()
    plan = read_plan(tmp_path / "p.md")  # the fence held: one block, the name intact inside it
    assert plan["study"]["name"] == name and plan["config"]["exclusions"] == ["knows_witness", "a`b<i>"]
    outside = text[:text.index("```json turinglab-prereg")]
    assert "<script>" not in outside and "<i>" not in outside and "```" not in outside


@pytest.mark.parametrize("args,says", [(["--rate", "1.5"], "--rate must be between 0 and 1"),
                                       (["--rate", "0.5"], "no difference to power"),
                                       (["--agent", "GPT2"], "--agent is for static studies")])
def test_preregister_bad_input_is_one_clear_error(tmp_path, args, says):
    src = tmp_path / "s.yaml"
    src.write_text("preset: jones-bergen-2023\n")
    r = runner.invoke(app, ["preregister", "--study", str(src), "--out", str(tmp_path / "p.md"), *args])
    assert r.exit_code == 2 and says in r.output and not (tmp_path / "p.md").exists()
    r = runner.invoke(app, ["preregister", "--study", str(tmp_path / "none.yaml"), "--out", str(tmp_path / "p.md")])
    assert r.exit_code == 2 and "no study file" in r.output
