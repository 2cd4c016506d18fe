"""The conversation judge (the `conversation` static task) through the AI-judge plugin hook: its
per-speaker turn features counted against a hand count, its task restriction, and an end-to-end
run on a stored conversation study (human-human conversations read from JSONL by the platform's
importer, machine-machine ones chunked by the same code as generated conversations).

The conversations here are constructed in the test (no conversation transcripts of Zhang et al. are
public): the machine speakers use an assistant register, the human ones a chat register, so the
test checks that the judge reads each speaker's turns, not a figure for real conversations."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from turinglab.judges import conversation as conv

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_CACHE_DIR", str(tmp_path / "cache"))


def test_turns_and_per_speaker_features_match_a_hand_count():
    text = ("A: hey lol how r u\nB: Great question! Feel free to ask me anything.\nA: haha ok\n  i'm fine\n"
            "B: I'd be happy to talk about music. What do you like?")
    t = conv.turns(text)
    assert t == [("A", "hey lol how r u"), ("B", "Great question! Feel free to ask me anything."),
                 ("A", "haha ok i'm fine"), ("B", "I'd be happy to talk about music. What do you like?")]
    f = dict(zip(conv.NAMES, conv.features(text)))
    assert f["s1_turns"] == 2 and f["s2_turns"] == 2
    assert f["s1_words_per_turn"] == pytest.approx((5 + 4) / 2)
    assert f["s2_words_per_turn"] == pytest.approx((8 + 11) / 2)
    assert f["s1_chat_marker"] == 1.0 and f["s2_chat_marker"] == 0.0
    assert f["s2_assistant_phrase"] == 1.0 and f["s1_assistant_phrase"] == 0.0
    assert f["s1_lower_start"] == 1.0 and f["s2_lower_start"] == 0.0
    assert f["s2_question"] == 0.5 and f["s2_exclamation"] == 0.5 and f["s1_contraction"] == 0.5
    assert f["words_per_turn_gap"] == pytest.approx(9.5 - 4.5) and f["assistant_gap"] == 1.0
    assert len(conv.NAMES) == len(conv.features("A: hi")) == conv.turn_features(["A: hi", "B: yo"]).shape[1]


def test_conversation_judge_is_registered_and_refuses_other_tasks():
    from turinglab.judges.evaluate import Config, evaluate
    from turinglab.judges.trained import JudgeError
    from turinglab.plugins.manager import ai_judges

    j = ai_judges()["conversation"]
    assert j.tasks == ("conversation", "transcript") and j.features == "turns"
    items = pd.DataFrame([{"item_id": str(i), "stimulus_id": str(i), "task": "word", "stimulus": "come",
                           "response": w, "truth": t, "agent": "human" if t == "human" else "gpt2"}
                          for i, (w, t) in enumerate([("go", "human"), ("here", "machine")] * 10)])
    with pytest.raises(JudgeError, match="judges the task\\(s\\) conversation, transcript, not 'word'"):
        evaluate(items, Config(judge="conversation", folds=2), use_cache=False)


HUMAN = ["lol yeah", "idk tbh", "haha same", "nah not really", "omg i love that", "hmm maybe", "yeah totally",
         "gonna watch it later", "wait what", "ok cool", "i think so", "its fine lol", "not sure tbh", "haha yes"]
MACHINE = ["That is a great point, and I would be happy to explain more.", "Certainly! There are many options.",
           "I hope this helps. Let me know if you have other questions.", "Feel free to share your thoughts.",
           "Absolutely, it is a wonderful topic to explore together.", "Here are some ideas you might enjoy.",
           "That sounds interesting. What do you enjoy most about it?", "Is there anything else you would like?"]


def _corpus(tmp_path: Path):
    from turinglab.statictests import conversations as cv

    rng = np.random.default_rng(5)
    lines = []
    for c in range(14):
        for k in range(12):
            lines.append({"conversation": f"h{c}", "speaker": "ann" if k % 2 == 0 else "bob",
                          "text": str(rng.choice(HUMAN))})
    f = tmp_path / "hh.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    human = cv.read_human_jsonl(f)
    machine = [cv.Conversation(f"ai{c}", [{"speaker": "AB"[k % 2], "text": str(rng.choice(MACHINE))}
                                          for k in range(12)],
                               {"A": "machine", "B": "machine"}, {"A": "bot", "B": "bot"}) for c in range(14)]
    return cv.chunk(human + machine, (3, 6))


def test_conversation_judge_on_a_stored_conversation_study(tmp_path, sqlite_url):
    from turinglab.game.static_config import preset_study
    from turinglab.store.api import Store

    stimuli, items, short = _corpus(tmp_path)
    assert short == 0 and len(items) == 56
    with Store(sqlite_url) as st:
        st.import_static(preset_study("talk", "conversation"), stimuli, items)
    r = subprocess.run([sys.executable, "-m", "turinglab.cli", "judges", "evaluate", "--judge", "conversation",
                        "--study", "talk", "--db", sqlite_url, "--folds", "4", "--group-by-stimulus", "--json"],
                       capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_CACHE_DIR": str(tmp_path / "c")})
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)
    assert res["task"] == "conversation" and res["n"] == 56 and res["features"] == ["turns"]
    assert "conversation judge" in res["judge_provenance"]
    assert res["accuracy"] > 0.9  # the registers differ by speaker: out-of-fold, whole conversations held out
