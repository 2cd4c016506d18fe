"""`static generate --task word` and `static conversations` with the real embedded local model (kept
small: 5 cues, one short conversation). Doubles of the models: test_static_generate.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from turinglab.store.api import Store

ROOT = Path(__file__).resolve().parents[2]
WORD = ROOT / "turinglab" / "statictests" / "zhang2023" / "word.json"
pytestmark = pytest.mark.localmodel


def run(*args: str, env: dict, timeout: int = 600) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, "-m", "turinglab", "static", *args], capture_output=True, text=True, env=env,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr + r.stdout
    return r


def test_local_model_answers_five_cues_imported_as_an_agent(tmp_path):
    db = f"sqlite:///{tmp_path / 't.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_CACHE_DIR": str(tmp_path / "cache")}
    run("import", "--task", "word", "--responses", str(WORD), "--study", "w", "--db", db, env=env)
    r = run("generate", "--study", "w", "--limit", "5", "--db", db, "--report", str(tmp_path / "rep.json"), env=env)
    rep = json.loads((tmp_path / "rep.json").read_text())
    assert rep["asked"] == 5 and rep["stored"] + len(rep["failed_stimuli"]) == 5 and rep["stored"] >= 3
    assert rep["model_calls"] == 5 + sum(rep["unusable_answers"].values())  # every unusable answer was counted
    assert "responses stored as agent 'qwen2.5-coder-1.5b-instruct-q4_k_m'" in r.stdout
    with Store(db) as st:
        sid = st.static_study("w").id
        gen = [i for i in st.items(sid) if i.agent.startswith("qwen")]
    first5 = list(json.loads(WORD.read_text()))[:5]
    assert len(gen) == rep["stored"] and {i.stimulus_key for i in gen} <= set(first5)
    for i in gen:
        assert i.truth == "machine" and len(i.text.split()) == 1 and i.text.lower() != i.stimulus_key.lower()
        assert i.payload["raw"].strip() and i.payload["settings"]["model"] == "local"
        assert i.stimulus_key in i.payload["prompt"][0]["content"]
    # resumed: a second run asks the model nothing
    r = run("generate", "--study", "w", "--limit", "5", "--db", db, env=env)
    assert "0 responses stored" in r.stdout and f"{rep['stored']} already had one" in r.stdout


def test_local_model_talks_with_eliza(tmp_path):
    db = f"sqlite:///{tmp_path / 't.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_CACHE_DIR": str(tmp_path / "cache")}
    r = run("conversations", "--study", "c", "--pair", "local:eliza", "--n", "1", "--exchanges", "2", "--lengths", "1,2",
            "--max-resamples", "2", "--db", db, "--log", str(tmp_path / "log.jsonl"), env=env)
    assert "AI-AI: 1 conversations made" in r.stdout  # (a conversation failing every attempt exits 2: nothing to store)
    with Store(db) as st:
        items = st.items(st.static_study("c").id)
    for i in items:
        assert i.payload["speaker_agents"] == {"A": "local", "B": "eliza"}
        assert [t["speaker"] for t in i.payload["turns"]] == ["A", "B"] * i.payload["length"]
