"""The report: self-contained HTML and Markdown, untrusted text escaped, CLI end to end, browser render."""

from __future__ import annotations

import re
import subprocess

import pytest
from typer.testing import CliRunner

from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.report.report import md_escape, render_html, write_report
from turinglab.analysis.demo.synth import SynthSpec, from_counts, simulate
from turinglab.cli import app

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)> | **bold** [link](javascript:x)'


@pytest.fixture(scope="module")
def analysis():
    df, parts = simulate(SynthSpec(n_games=400, seed=2))
    df["reason"] = EVIL  # every reason is hostile
    return analyse(df, parts, Options(n_boot=100, max_games_mixed=0))


def test_html_is_self_contained_and_escapes_user_text(analysis, tmp_path):
    out = tmp_path / "r.html"
    write_report(analysis, out)
    html = out.read_text()
    assert "<script" not in html and "<img src=x" not in html
    assert "&lt;script&gt;" in html  # shown, as text
    n_figs = html.count("data:image/png;base64,")  # all figures inline, each numbered once
    assert n_figs >= 10 and len(set(re.findall(r"<b>Figure (\d+)\.", html))) == n_figs
    assert not re.search(r'src="(?!data:)', html)  # nothing fetched from elsewhere
    for heading in ("Methods", "Success rate per witness", "Pass criteria", "Interrogator accuracy",
                    "Confidence calibration", "Correction for adaptive allocation", "Timing-leak check"):
        assert heading in html
    assert "α = 0.05" in html and "three_previous_ai" in html


def test_methods_state_alpha_exclusions_and_counts(analysis):
    html = render_html(analysis)
    ex = analysis.exclusions
    assert f"{ex.games_before} games before, {ex.games_after} analysed" in html
    assert "mixed model skipped" in html  # said, not silently dropped
    assert "100 resamples" in html


def test_markdown_escapes_and_writes_figures(analysis, tmp_path):
    paths = write_report(analysis, tmp_path / "r.md", "md")
    md = (tmp_path / "r.md").read_text()
    assert "<script" not in md and "&lt;script&gt;" in md
    assert "\\[link\\]\\(javascript:x\\)" in md
    assert {p.suffix for p in paths[1:]} == {".png", ".svg"} and all(p.exists() for p in paths)
    assert "](r_figures/success_rates.svg)" in md
    assert md_escape("a|b\nc") == "a\\|b c"


def test_three_player_report_says_no_two_sample_tests(tmp_path):
    df = from_counts({"M": (3, 30), "N": (12, 30)}, format="three-player")
    a = analyse(df, None, Options(n_boot=50, max_games_mixed=0, exclude=()))
    html = render_html(a)
    assert "two-sample tests do not apply" in html
    assert "fails" in html and "2AFC" in html


def test_cli_report_from_demo_database(sqlite_url, tmp_path, chromium_path):
    r = CliRunner().invoke(app, ["demo-data", "--db", sqlite_url, "--games", "40", "--seed", "2"])
    assert r.exit_code == 0, r.output
    out = tmp_path / "report.html"
    r = CliRunner().invoke(app, ["report", "--db", sqlite_url, "--out", str(out), "--alpha", "0.1"])
    assert r.exit_code == 0, r.output
    html = out.read_text()
    assert "90% interval" in html and "demo-two-player-seed2" in html
    shot = tmp_path / "shot.png"
    subprocess.run([chromium_path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1000,3000", f"--screenshot={shot}", out.as_uri()],
                   check=True, timeout=90, capture_output=True)
    from PIL import Image

    im = Image.open(shot).convert("L")
    assert im.size == (1000, 3000)
    # the page rendered (not blank): many distinct grey levels from text, tables and figures
    assert len(im.getcolors(maxcolors=256) or []) > 50


def test_cli_report_bad_input(sqlite_url, tmp_path):
    assert CliRunner().invoke(app, ["db", "upgrade", "--db", sqlite_url]).exit_code == 0
    r = CliRunner().invoke(app, ["report", "--db", sqlite_url, "--out", str(tmp_path / "x.html")])
    assert r.exit_code == 2 and "no studies" in r.output
    CliRunner().invoke(app, ["demo-data", "--db", sqlite_url, "--games", "10"])
    r = CliRunner().invoke(app, ["report", "--db", sqlite_url, "--out", str(tmp_path / "x.html"), "--format", "pdf"])
    assert r.exit_code == 2 and "html, md or json" in r.output
    r = CliRunner().invoke(app, ["report", "--db", sqlite_url, "--out", str(tmp_path / "x.html"), "--exclude", "nope"])
    assert r.exit_code == 2 and "unknown exclusion flag" in r.output
    assert not (tmp_path / "x.html").exists()


def test_cli_report_picks_a_study(sqlite_url, tmp_path):
    run = CliRunner().invoke
    run(app, ["demo-data", "--db", sqlite_url, "--games", "6", "--seed", "1"])
    run(app, ["demo-data", "--db", sqlite_url, "--games", "6", "--seed", "2", "--three-player"])
    out = tmp_path / "r.html"
    r = run(app, ["report", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 2 and "several studies" in r.output and "demo-three-player-seed2" in r.output
    r = run(app, ["report", "--db", sqlite_url, "--out", str(out), "--study", "demo-three-player-seed2", "--exclude", "none"])
    assert r.exit_code == 0, r.output
    assert "three-player format · 6 games" in out.read_text()
    r = run(app, ["report", "--db", sqlite_url, "--out", str(out), "--study", "99"])
    assert r.exit_code == 2 and "no study '99'" in r.output


def test_markdown_escapes_a_hostile_study_name(tmp_path):
    df = from_counts({"M": (3, 30)}, human=(20, 30), study=EVIL)
    a = analyse(df, None, Options(n_boot=50, max_games_mixed=0, exclude=()))
    write_report(a, tmp_path / "r.md", "md")
    md = (tmp_path / "r.md").read_text()
    assert "<script" not in md and "<img" not in md
    assert md.count("&lt;script&gt;") >= 2  # the title and the methods paragraph


def test_report_counts_blocked_ai_outputs():
    """The methods say how many AI replies the content filter blocked (from the stored games'
    `ai_output_blocked` counts, which the loader puts in `ai_outputs_blocked`)."""
    df, parts = simulate(SynthSpec(n_games=60, seed=5))
    a = analyse(df, parts, Options(n_boot=20, max_games_mixed=0, max_games_gee=0))
    assert "Blocked AI outputs: not recorded" in render_html(a)
    games = list(dict.fromkeys(a.judgements["game_id"]))  # analysed (not excluded) games
    df["ai_outputs_blocked"] = 0
    df.loc[df["game_id"] == games[0], "ai_outputs_blocked"] = 2
    df.loc[df["game_id"] == games[3], "ai_outputs_blocked"] = 1
    html = render_html(analyse(df, parts, Options(n_boot=20, max_games_mixed=0, max_games_gee=0)))
    assert "Blocked AI outputs: 3 in 2 games" in html
    df["ai_outputs_blocked"] = 0
    assert "Blocked AI outputs: none" in render_html(analyse(df, parts, Options(n_boot=20, max_games_mixed=0, max_games_gee=0)))


def test_json_report_has_every_number_and_each_model_terms(analysis, tmp_path):
    import json

    [path] = write_report(analysis, tmp_path / "r.json", "json")
    doc = json.loads(path.read_text())
    # keyed like the export's rebuild numbers; the further analyses' numbers are added beside them
    extra = analysis.extra_numbers()
    assert not set(extra) & set(analysis.numbers())
    assert doc["numbers"] == {**analysis.numbers(), **extra}
    for key in ("by_index_kind.ai.1.rate", "participation.interrogator.mean", "length.ai.duration_sd",
                "leaderboard.two-player.Human.rate", "dprime_reg.n"):
        assert key in doc["numbers"], key
    for prefix in ("criteria_first.", "distribution.", "compare."):
        assert any(k.startswith(prefix) and k.endswith((".p_value", ".share", ".p_cluster")) for k in doc["numbers"]), prefix
    assert doc["meta"]["alpha"] == analysis.options.alpha and doc["meta"]["n_boot"] == 100
    assert any("interrogator" in m for m in doc["methods"])
    reg = analysis.regressions
    assert set(doc["models"]) == {k for k in ("mixed", "gee") if reg.get(k) is not None} and doc["models"]
    for name, model in doc["models"].items():
        t = reg[name]
        assert [r["term"] for r in model["terms"]] == list(t["term"])
        for r, (_, row) in zip(model["terms"], t.iterrows()):
            assert set(r) == {"term", "estimate", "se", "p"}
            assert r["estimate"] == row["estimate"] and r["se"] == row["se"] and r["p"] == row["p_value"]
            assert doc["numbers"][f"{name}.{r['term']}.estimate"] == r["estimate"]


def test_methods_state_the_studys_language(analysis):
    """Issue 39: the methods say the study's language, and for another language that ELIZA stayed English."""
    from dataclasses import replace

    from turinglab.analysis.report.report import methods

    assert "Language: English (en)" in methods(analysis)[0]
    de = " ".join(methods(replace(analysis, options=replace(analysis.options, language="de"))))
    assert "Language: German (de): the participant pages were shown in it" in de and "ELIZA's DOCTOR script is English" in de


def test_a_stored_german_study_reports_german(sqlite_url):
    from turinglab.analysis.live.load import load
    from turinglab.cli.report import _analysis_options
    from turinglab.game.config import Study
    from turinglab.store.api import Store

    with Store(sqlite_url) as st:
        st.register_study(Study(name="auf-deutsch", language="de"))
    loaded = load(sqlite_url, "auf-deutsch")
    assert loaded.language == "de" and _analysis_options(loaded, None, 0.05).language == "de"
