"""`turinglab witness list / show`."""

from __future__ import annotations

import json
from datetime import date

from typer.testing import CliRunner

from turinglab.cli import app

runner = CliRunner()


def test_list_names_the_offline_witnesses(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    res = runner.invoke(app, ["witness", "list", "--json"])
    assert res.exit_code == 0, res.output
    names = {r["name"]: r for r in json.loads(res.stdout)}
    assert names["eliza"]["kind"] == "eliza" and names["local"]["prompt"] == "young"


def test_list_includes_personas_with_an_endpoint(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    res = runner.invoke(app, ["witness", "list", "--json"])
    assert {"young", "baseline", "ai-aware"} <= {r["name"] for r in json.loads(res.stdout)}


def test_show_renders_the_prompt_with_events(tmp_path):
    ev = tmp_path / "ev.yaml"
    ev.write_text(f"- date: {date.today().isoformat()}\n  text: The <b>river</b> froze over\n")
    res = runner.invoke(app, ["witness", "show", "local", "--json", "--events", str(ev)])
    assert res.exit_code == 0, res.output
    info = json.loads(res.stdout)
    assert info["spec"]["kind"] == "local" and "Jamie" in info["prompt"]
    assert "The <b>river</b> froze over" in info["prompt"]  # a prompt is plain text: no HTML escaping
    res = runner.invoke(app, ["witness", "show", "Local"])
    assert res.exit_code == 0 and "prompt for a sample game" in res.stdout


def test_show_unknown_lists_the_names():
    res = runner.invoke(app, ["witness", "show", "hal9000"])
    assert res.exit_code == 2
    assert "hal9000" in res.output and "eliza" in res.output


def test_probe_from_starts_at_a_battery_message_and_says_what_is_wrong(tmp_path):
    f = tmp_path / "battery.tsv"
    f.write_text("family\tmessage\n" + "".join(f"fam{k}\tquestion number {k}\n" for k in range(6)), encoding="utf-8")
    saved = tmp_path / "run.json"
    res = runner.invoke(app, ["witness", "probe", "eliza", "--questions", str(f), "--from", "3", "--games", "1",
                              "--turns", "2", "--no-judge", "--json", "--save", str(saved)])
    assert res.exit_code == 0, res.output
    run = json.loads(saved.read_text(encoding="utf-8"))
    assert [r["question"] for r in run["replies"]] == ["question number 3", "question number 4"]
    res = runner.invoke(app, ["witness", "probe", "eliza", "--questions", str(f), "--from", "6", "--no-judge"])
    assert res.exit_code != 0 and "--from 6" in res.output and "only 6 messages" in res.output
    res = runner.invoke(app, ["witness", "probe", "eliza", "--from", "2", "--no-judge"])
    assert res.exit_code != 0 and "--from needs --questions" in res.output
