"""The example plugin package (examples/turinglab-example-plugin), installed with pip into a venv of
its own: its witness kind and static task appear in the commands, a live game in Chromium against its
witness reaches the reveal, a study of its task is imported and judged in Chromium, and
`turinglab report` covers both."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "turinglab-example-plugin"
pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A venv seeing the system's packages, with the example plugin installed (editable) into it."""
    d = tmp_path_factory.mktemp("plugin-venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(d)], check=True, timeout=120)
    py = d / "bin" / "python"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(EXAMPLE)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return py


def run(py: Path, *args: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("TURINGLAB_DISABLE_PLUGINS", None)
    return subprocess.run([str(py), *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def test_the_commands_show_the_plugin(venv, tmp_path):
    kinds = run(venv, "-m", "turinglab", "witness", "list", "--kinds", "--json", cwd=tmp_path)
    assert kinds.returncode == 0, kinds.stderr
    scripted = {r["kind"]: r for r in json.loads(kinds.stdout)}["scripted"]
    assert scripted["plugin"] == "example" and scripted["options"] == ["replies"]
    names = run(venv, "-m", "turinglab", "witness", "list", "--json", cwd=tmp_path)
    assert {"name": "scripted", "kind": "scripted"}.items() <= {r["name"]: r for r in json.loads(names.stdout)}[
        "scripted"].items()
    tasks = {r["task"]: r for r in json.loads(run(venv, "-m", "turinglab", "static", "tasks", "--json",
                                                  cwd=tmp_path).stdout)}
    assert tasks["haiku"]["plugin"] == "example" and "word" in tasks
    plugins = {p["plugin"]: p for p in json.loads(run(venv, "-m", "turinglab", "plugins", "--json", cwd=tmp_path).stdout)}
    assert plugins["example"]["package"] == "turinglab-example-plugin 0.1.0"
    assert plugins["example"]["hooks"] == {"turinglab_static_tasks": ["haiku"], "turinglab_witness_kinds": ["scripted"]}
    # without the plugin (this python) the kind is refused in one line naming the kinds there are
    study = tmp_path / "s.yaml"
    study.write_text("name: s\nwitnesses:\n  - codename: Echo\n    kind: scripted\n    options: {replies: [hi]}\n")
    plain = run(Path(sys.executable), "-m", "turinglab", "chat", "--study", str(study), "--no-delay", cwd=tmp_path)
    assert plain.returncode != 0 and "unknown kind 'scripted'" in plain.stderr


def test_a_live_game_against_the_plugin_witness(venv, tmp_path, chromium_path):
    db = f"sqlite:///{tmp_path / 'live.db'}"
    r = run(venv, str(Path(__file__).with_name("example_e2e.py")), "live", db, chromium_path, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["replies"] == ["hey there", "not much, just got home from work"]
    # the server applied the study's human-like delay (base 1.2 s) to the plugin's instant replies
    assert all(w >= 1.2 for w in out["waits_s"]), out["waits_s"]
    assert out["identity_before_verdict"] is False and out["js_errors"] == []
    assert "You were talking to an AI." in out["reveal"] and "You were right." in out["reveal"]
    assert out["stored"] == {"witness": "Echo", "choice": "ai", "correct": True,
                             "messages": ["hi", "hey there", "what's up?", "not much, just got home from work"]}
    rep = run(venv, "-m", "turinglab", "report", "--db", db, "--study", "plugin-live", "--out", "live.html", cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    html = (tmp_path / "live.html").read_text()
    assert "Echo" in html


def test_a_static_study_on_the_plugin_task(venv, tmp_path, chromium_path):
    db = f"sqlite:///{tmp_path / 'static.db'}"
    rows = ["stimulus_id,task,text,response,truth,agent"]
    poems = {"rain": ("soft rain on the roof / the kettle starts to whistle / nobody is home",
                      "Rain falls gently down / Nature's tears refresh the earth / Peace in every drop"),
             "snow": ("snow on the bike seat / i brush it off with my sleeve / late again", "White snow blankets all / "
                      "Silent beauty fills the night / Winter's gentle touch")}
    for theme, (human, machine) in poems.items():
        rows += [f"{theme},haiku,{theme},{human},human,p1", f"{theme},haiku,{theme},{machine},machine,gpt-4o"]
    (tmp_path / "haiku.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "haiku.yaml").write_text("name: haiku-study\ntask: haiku\nsession: {items: 2, min_rt_ms: 0}\n"
                                         "completion_url: /healthz\n")
    bad = tmp_path / "bad.csv"
    bad.write_text(rows[0] + "\nrain,haiku,rain,one / two / three / four,human,p1\n")
    refused = run(venv, "-m", "turinglab", "static", "import", "--task", "haiku", "--format", "plain", "--responses",
                  str(bad), "--study", "bad", "--db", db, cwd=tmp_path)
    assert refused.returncode != 0 and "has 4 lines; a haiku has up to three" in refused.stderr
    imp = run(venv, "-m", "turinglab", "static", "import", "--task", "haiku", "--format", "plain", "--responses",
              "haiku.csv", "--study", "haiku-study", "--study-file", "haiku.yaml", "--db", db, cwd=tmp_path)
    assert imp.returncode == 0, imp.stderr
    assert "4 items" in imp.stdout
    r = run(venv, str(Path(__file__).with_name("example_e2e.py")), "static", db, chromium_path, "haiku-study",
            cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert "a short poem written to a theme word" in out["landing"]
    assert out["question"].strip() == "Was this haiku written by a human or a machine?"
    assert out["trials"] == 2 and out["js_errors"] == []
    for shown in out["shown"]:
        lines = poems[shown["cue"]]
        assert shown["lines"].count("<br>") == 3 and any(p.split(" / ")[0] in shown["lines"] for p in lines)
    rep = run(venv, "-m", "turinglab", "report", "--db", db, "--study", "haiku-study", "--out", "static.html",
              cwd=tmp_path)
    assert rep.returncode == 0, rep.stderr
    html = (tmp_path / "static.html").read_text()
    assert "haiku" in html and "gpt-4o" in html
