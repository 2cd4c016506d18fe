"""The zero-shot LLM judge against the real embedded local model (kept short: a few items, 24 tokens).
A deterministic fake of the same interface is tested beside it in test_judges.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.localmodel

ITEMS = pd.DataFrame({
    "item_id": ["1", "2", "3", "4"], "stimulus_id": ["a", "a", "b", "b"], "task": ["word"] * 4,
    "stimulus": ["come", "come", "synaptic", "synaptic"], "response": ["together", "hither", "brain", "neurons"],
    "truth": ["human", "machine", "human", "machine"], "agent": ["human", "gpt2", "human", "word2vec"],
})


def test_local_model_judges_word_items(tmp_path, monkeypatch):
    from turinglab.judges.evaluate import Config, evaluate

    monkeypatch.setenv("TURINGLAB_CACHE_DIR", str(tmp_path))
    res = evaluate(ITEMS, Config(judge="llm"))
    assert res["n"] == 4
    verdicts = [v["verdict"] for v in res["item_verdicts"]]
    assert set(verdicts) <= {"human", "machine", "unparsed"}
    assert verdicts.count("unparsed") <= 1  # the template asks for a two-line answer the parser reads
    assert res["errors"] == 0 and res["items_per_second"] > 0
    assert res["model"]["model"] == "local"


def test_inverted_test_on_a_stored_live_study(tmp_path):
    """`judges run --from-study`: the embedded model reads stored transcripts; interrogators are paired."""
    db = f"sqlite:///{tmp_path / 'live.db'}"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_CACHE_DIR": str(tmp_path / "c")}
    r = subprocess.run([sys.executable, "-m", "turinglab", "demo-data", "--db", db, "--games", "12"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "turinglab", "judges", "run", "--judge", "llm", "--from-study",
                        "demo-two-player-seed0", "--db", db, "--limit", "4", "--json"], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    # a balanced sample of 4 of the 12 transcripts, each paired with its interrogator's verdict
    assert res["task"] == "transcript" and res["n"] == 4
    assert res["mcnemar_vs_humans"]["pairs"] == 4
    assert res["human_judges"]["n"] == 4
