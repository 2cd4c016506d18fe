"""Hand tags with the Jones & Bergen taxonomies and agreement between taggers."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from turinglab.analysis.live import taxonomy as tx
from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.analysis.live.load import load
from turinglab.analysis.report.report import render_html
from turinglab.cli import app
from turinglab.store import Store


def test_taxonomies_match_the_appendices():
    reasons, strategies = tx.load("reason"), tx.load("strategy")
    assert [c["name"] for c in reasons["categories"]] == [
        "Linguistic Style", "Knowledge & Content", "Social & Emotional", "Situational Awareness", "Meta", "Uninformative"]
    assert [c["name"] for c in strategies["categories"]] == [
        "Small Talk", "Situational Awareness", "Direct", "Knowledge & Reasoning", "Social & Emotional", "Other"]
    assert [len(c["sub"]) for c in reasons["categories"]] == [11, 5, 8, 6, 5, 5]
    assert [len(c["sub"]) for c in strategies["categories"]] == [3, 7, 2, 8, 6, 4]
    assert tx.codes("reason")["5b"] == "Meta: Responses too slow"
    assert tx.check("strategy", " 4H ") == "4h"
    with pytest.raises(ValueError, match="unknown strategy category '7a'"):
        tx.check("strategy", "7a")


def hand_kappa(a: list[str], b: list[str]) -> float:
    """Cohen's kappa from its definition, as an independent reference."""
    n = len(a)
    po = sum(x == y for x, y in zip(a, b)) / n
    cats = set(a) | set(b)
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in cats)
    return (po - pe) / (1 - pe)


def test_kappa_against_definition():
    a = ["1a", "1b", "2a", "2a", "3c", "1a", "4b", "4b", "1b", "2a"]
    b = ["1a", "1b", "2a", "3c", "3c", "1b", "4b", "2a", "1b", "2a"]
    tags = pd.DataFrame({"game_id": [f"g{i}" for i in range(10)] * 2, "taxonomy": "strategy",
                         "category": a + b, "tagger": ["ann"] * 10 + ["bob"] * 10})
    r = tx.agreement(tags, "strategy")
    assert r["games"] == 10 and r["kappa"] == pytest.approx(hand_kappa(a, b))
    top = tx.agreement(tags, "strategy", level="top")
    assert top["kappa"] == pytest.approx(hand_kappa([x[0] for x in a], [x[0] for x in b]))
    with pytest.raises(ValueError, match="name the two taggers"):
        tx.agreement(tags[tags["tagger"] == "ann"], "strategy")


def test_tag_cli_and_report(db_url):
    generate(db_url, DemoSpec(n_games=6, seed=3))
    with Store(db_url) as s:
        ids = [g.id for g in s.games()]
    run = CliRunner().invoke
    for i, gid in enumerate(ids):
        mine = "1a" if i < 3 else "4b"
        assert run(app, ["tag", gid, "--db", db_url, "--taxonomy", "strategy", "--category", mine, "--tagger", "ann"]).exit_code == 0
        cat = "1a" if i % 2 else "4b"
        assert run(app, ["tag", gid, "--db", db_url, "--taxonomy", "strategy", "--category", cat, "--tagger", "bob"]).exit_code == 0
    r = run(app, ["tag", "agreement", "--db", db_url, "--taxonomy", "strategy"])
    assert r.exit_code == 0, r.output
    assert f"kappa {hand_kappa(['1a'] * 3 + ['4b'] * 3, ['1a' if i % 2 else '4b' for i in range(6)]):.3f}" in r.output
    bad = run(app, ["tag", ids[0], "--db", db_url, "--taxonomy", "reason", "--category", "1z", "--tagger", "ann"])
    assert bad.exit_code == 2 and "unknown reason category" in bad.output
    loaded = load(db_url)
    assert len(loaded.tags) == 12
    html = render_html(analyse(loaded.judgements, loaded.participants, Options(n_boot=50, max_games_mixed=0, exclude=()),
                               tags=loaded.tags))
    assert "Small Talk: How are you?" in html and "Strategies and reasons" in html


def test_tag_bad_database_is_a_clear_error(tmp_path):
    run = CliRunner().invoke
    r = run(app, ["tag", "g-1", "--db", "mysql://x@y/z", "--category", "1a", "--tagger", "ann"])
    assert r.exit_code == 2 and "unsupported database" in r.stderr, r.output
    typo = tmp_path / "typo.db"
    r = run(app, ["tag", "g-1", "--db", f"sqlite:///{typo}", "--category", "1a", "--tagger", "ann"])
    assert r.exit_code == 2 and "no database at" in r.stderr and not typo.exists(), r.output
