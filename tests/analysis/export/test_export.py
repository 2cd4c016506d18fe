"""Export: pseudonymous CSV/Parquet dataset with a codebook and a rebuild.py that reproduces the report."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pandas as pd
import pytest
from typer.testing import CliRunner

from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.analysis.export.export import read_tables
from turinglab.cli import app
from turinglab.store import Store


@pytest.fixture
def exported(db_url, tmp_path):
    generate(db_url, DemoSpec(n_games=60, seed=4))
    with Store(db_url) as s:
        g = s.games()[0].id
        s.add_tag(g, "ann", "strategy", "1a")
        s.set_flag(g, "knows_witness", True)
        stored_ids = {p.id for p in s.participants()}
        labels = {p.label for p in s.participants()}
    out = tmp_path / "export"
    r = CliRunner().invoke(app, ["export", "--db", db_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out, stored_ids, labels


def test_export_rebuilds_and_is_pseudonymous(exported):
    """One export per database: rebuild.py reproduces every number, notices a changed value,
    and the dataset is pseudonymous and documented."""
    check_rebuild(exported)
    check_pseudonymous(exported)
    check_tamper(exported)  # last: it edits the export


def check_rebuild(exported):
    out, _, _ = exported
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 differ" in r.stdout
    n = json.loads((out / "report_numbers.json").read_text())["numbers"]
    assert len(n) > 100 and any(k.startswith("criteria.") for k in n)
    assert any(k.startswith("mixed.game_index:ai_witness") for k in n)  # the ML GLMM, rebuilt too


def check_tamper(exported):
    out, _, _ = exported
    j = pd.read_csv(out / "judgements.csv")
    row = j.index[~j["flag_knows_witness"] & ~j["flag_three_previous_ai"]][0]  # a game the analysis uses
    j.loc[row, "judged_human"] = not bool(j.loc[row, "judged_human"])
    j.to_csv(out / "judgements.csv", index=False)
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=120)
    # (the first 50 mismatches are listed, every differing section named: success and sources among them)
    sections = next(x for x in r.stdout.splitlines() if x.startswith("differing sections: "))
    assert r.returncode == 1 and {"success", "sources"} <= set(sections.split(": ")[1].split(", "))


def check_pseudonymous(exported):
    out, stored_ids, labels = exported
    t = read_tables(out)
    ids = set(t["judgements"]["interrogator_id"]) | set(t["participants"]["participant_id"])
    assert ids and not ids & stored_ids
    text = "".join((out / f"{n}.csv").read_text() for n in ("judgements", "participants", "messages", "tags"))
    assert not any(i in text for i in stored_ids) and not any(lbl in text for lbl in labels if lbl)
    assert "ann" not in set(t["tags"]["tagger"])
    # every column of every table is in the codebook, and the Parquet files hold the same rows
    cb = json.loads((out / "codebook.json").read_text())
    for name, df in t.items():
        assert set(df.columns) <= set(cb["tables"][name]), name
        assert len(pd.read_parquet(out / f"{name}.parquet")) == len(df) == cb["rows"][name]
    assert "knows_witness" in (out / "codebook.md").read_text()
    # the stored flag came through, and the export's default analysis applied it
    assert t["judgements"]["flag_knows_witness"].sum() >= 1
    assert "knows_witness" in cb["default_analysis"]["exclude"]


def test_export_refuses_a_non_empty_directory(sqlite_url, tmp_path):
    generate(sqlite_url, DemoSpec(n_games=8, seed=1))
    (tmp_path / "keep.txt").write_text("mine")
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(tmp_path)])
    assert r.exit_code == 2 and "not empty" in r.output
    assert (tmp_path / "keep.txt").read_text() == "mine"


def test_export_keeps_integer_answers_integers(sqlite_url, tmp_path):
    """Age and the ordinal survey answers are collected as whole numbers: exported as `34`, not `34.0`."""
    generate(sqlite_url, DemoSpec(n_games=30, seed=5))
    out = tmp_path / "export"
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    raw = pd.read_csv(out / "participants.csv", dtype=str, keep_default_na=False)
    for col in ("age", "chatbot_freq", "llm_knowledge"):
        answered = [v for v in raw[col] if v != ""]
        assert answered and all(v.isdigit() for v in answered), (col, answered[:5])
        assert pd.api.types.is_integer_dtype(pd.read_parquet(out / "participants.parquet")[col])
        assert read_tables(out)["participants"][col].dtype == "Int64"


def tag_and_flag(db_url, seed: int) -> None:
    """Two taggers code most games in both taxonomies (so the tag tables and kappa are reported) and
    three games are flagged bot (so the leaderboard has its bot rows)."""
    import random

    from turinglab.analysis.live.taxonomy import codes

    rng = random.Random(seed)
    with Store(db_url) as s:
        games = s.games()
        for g in games[:-3]:
            for tax in ("strategy", "reason"):
                pool = [c for c in sorted(codes(tax)) if c.endswith("a")]  # one code per top-level category
                first = rng.choice(pool)
                s.add_tag(g.id, "ann", tax, first)
                s.add_tag(g.id, "bob", tax, first if rng.random() < 0.6 else rng.choice(pool))
        for g in games[-3:]:
            s.set_flag(g.id, "bot", True)


def same(a, b) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and abs(a - b) <= 1e-9 * max(1, abs(a)))


@pytest.mark.parametrize("fmt", ["two-player", "three-player"])
def test_rebuild_recomputes_every_number_of_the_report_json(sqlite_url, tmp_path, fmt):
    """`report --format json` and the export's report_numbers.json hold the same numbers, and rebuild.py
    recomputes every one of them from the exported files alone, none differing (counts printed per design)."""
    generate(sqlite_url, DemoSpec(n_games=120, seed=4, format=fmt))
    tag_and_flag(sqlite_url, 4)
    out, rep = tmp_path / "export", tmp_path / "report.json"
    assert CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out)]).exit_code == 0
    r = CliRunner().invoke(app, ["report", "--db", sqlite_url, "--format", "json", "--no-audit", "--out", str(rep)])
    assert r.exit_code == 0, r.output
    saved = json.loads((out / "report_numbers.json").read_text())["numbers"]
    report = json.loads(rep.read_text())["numbers"]
    assert saved.keys() == report.keys(), sorted(saved.keys() ^ report.keys())[:10]
    assert [k for k in report if not same(report[k], saved[k])] == []
    for section in ("distribution", "dprime_reg" if fmt == "two-player" else "bradley_terry", "length", "roster",
                    "timing_check", "strategy_top", "reason_by_verdict", "kappa", "leaderboard"):
        assert any(k.startswith(section + ".") for k in report), section  # the fixture reaches every section
    assert any(k.startswith(f"leaderboard.{fmt}.bot.") for k in report)
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "; 0 differ;" in r.stdout, r.stdout + r.stderr
    done, total = map(int, re.search(r"rebuilt (\d+)/(\d+)", r.stdout).groups())
    print(f"\n{fmt}: rebuilt {done} of {total} numbers of report --format json")
    assert total == len(report) and done == total, r.stdout
    if fmt == "two-player":
        check_sections_read_their_files(out)


def check_sections_read_their_files(out):
    """Edit the messages, tags and roster files: the sections built on them no longer match."""
    m = pd.read_csv(out / "messages.csv", keep_default_na=False)
    m.loc[m["actor"] == "interrogator", "text"] += " and two"
    m.to_csv(out / "messages.csv", index=False)
    t = pd.read_csv(out / "tags.csv", keep_default_na=False)
    t.loc[t["tagger"] == t["tagger"].max(), "category"] = "6a"
    t.to_csv(out / "tags.csv", index=False)
    with open(out / "witnesses.csv", "a") as f:
        f.write("Unplayed,eliza,\n")
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout
    differ = re.search(r"differing sections: (.*)", r.stdout).group(1).split(", ")
    assert {"length", "kappa", "roster", "strategy_top"} <= set(differ), r.stdout
    assert "leaderboard" not in differ and "success" not in differ  # the judgements were not touched


def test_rebuild_imports_no_analysis_code():
    """The shipped scripts stand alone: of turinglab they import only turinglab.stats."""
    import ast
    from importlib import resources

    for name in ("rebuild.py", "rebuild_more.py", "rebuild_glmm.py"):
        tree = ast.parse(resources.files("turinglab.analysis.export").joinpath(name).read_text())
        mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        mods |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        ours = {m for m in mods if m.split(".")[0] == "turinglab"}
        assert all(m in ("turinglab", "turinglab.stats") or m.startswith("turinglab.stats.") for m in ours), (name, ours)
        assert "from turinglab import" not in resources.files("turinglab.analysis.export").joinpath(name).read_text().replace(
            "from turinglab import stats", "")


@pytest.mark.parametrize("three", [False, True])
def test_rebuild_recomputes_the_belief_block(sqlite_url, tmp_path, three):
    """Issue 42 item 1: the beliefs block (Kaplan-Meier medians and their intervals, the interrogator
    bootstrap, trajectories, the biggest moves) is in the report's numbers and rebuilt; a changed slider
    move is noticed."""
    from typer.testing import CliRunner

    from turinglab.cli import app

    args = ["demo-data", "--db", sqlite_url, "--games", "90", "--beliefs", "--seed", "5"] + (["--three-player"] if three else [])
    assert CliRunner().invoke(app, args).exit_code == 0
    out = tmp_path / "export"
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    n = json.loads((out / "report_numbers.json").read_text())["numbers"]
    keys = [k for k in n if k.startswith("beliefs.")]
    assert any(".median_s_boot_high" in k for k in keys) and any(".trajectory." in k for k in keys)
    assert "beliefs.moves.1.change" in n and len(keys) > 100
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and " 0 differ; 0 not rebuilt" in r.stdout, r.stdout + r.stderr
    b = pd.read_csv(out / "beliefs.csv")
    b.loc[b["value"] < 50, "value"] = 100 - b.loc[b["value"] < 50, "value"]  # every move flipped to one side
    b.to_csv(out / "beliefs.csv", index=False)
    r = subprocess.run([sys.executable, "rebuild.py"], cwd=out, capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "MISMATCH beliefs." in r.stdout
