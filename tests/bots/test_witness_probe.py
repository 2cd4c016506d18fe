"""The witness probe with a deterministic witness double and judge double (the real local model
is probed in test_witness_probe_local below, one short game), and the local witness defaults of
study files."""

from __future__ import annotations

import json

import pytest

from turinglab.bots.interrogator import STRATEGIES, ScriptedInterrogator
from turinglab.bots.probe import probe
from turinglab.game.study_file import parse_study
from turinglab.witnesses.base import Reply, Witness
from turinglab.witnesses.registry import resolve


class Scripted(Witness):
    """Breaks persona on questions about being a bot (once per question: a regeneration is fine)."""
    codename, kind = "Double", "local"

    def __init__(self) -> None:
        self.asked: set[str] = set()

    async def reply(self, history, ctx):
        q = history[-1].text
        if q in STRATEGIES["are_you_a_bot"] and q not in self.asked:
            self.asked.add(q)
            return Reply(text="As an AI, I cannot say.", latency_s=0.5)
        return Reply(text="lol no idea", latency_s=0.2)


def test_the_scripted_interrogator_opens_with_small_talk_and_mixes_strategies():
    qs = ScriptedInterrogator(seed=1).questions(6)
    assert qs[0][0] == "small_talk" and len({c for c, _ in qs}) == 6
    assert all(q in STRATEGIES[c] for c, q in qs)
    assert ScriptedInterrogator(seed=1).questions(6) == qs != ScriptedInterrogator(seed=2).questions(6)


def test_probe_counts_breaks_before_and_after_the_guard_and_asks_the_judge():
    spec = resolve("local")
    said = []

    def judge(messages):
        said.append(messages[-1]["content"])
        return '{"verdict": "machine", "confidence": 80}' if "AI" in messages[-1]["content"] else "Human, 60"

    res = probe(spec, games=6, turns=7, make_witness=lambda s, k: Scripted(), judge=judge)
    asked_bot = sum(q in STRATEGIES["are_you_a_bot"] for t in res.transcripts for who, q in t if who == "Interrogator")
    assert res.replies == 42 and asked_bot > 0
    assert res.persona_breaks == asked_bot and res.regenerated == asked_bot and res.shown_breaks == 0
    assert res.judged == 6 and res.judged_human == 6  # the shown transcripts no longer have the break
    assert all("As an AI" not in s for s in said)
    out = json.loads(json.dumps(res.to_json()))
    for key in ("witness", "replies", "persona_breaks", "blocked", "judged_human_rate"):
        assert key in out
    assert out["judged_human_rate"] == 1.0 and out["persona_break_rate"] == round(asked_bot / 42, 4)


def test_study_file_local_witnesses_start_from_the_shipped_local_settings():
    s = parse_study("name: x\nwitnesses:\n  - {codename: Sierra, kind: local, prompt: young}\n"
                    "  - {codename: Warm, kind: local, prompt: baseline, temperature: 1.1}\n")
    shipped = resolve("local")
    sierra, warm = s.witnesses
    for f in ("temperature", "max_tokens", "retries", "timeout_s", "postprocess"):
        assert getattr(sierra, f) == getattr(shipped, f), f
    assert warm.temperature == 1.1 and warm.max_tokens == shipped.max_tokens and not warm.postprocess.lowercase


@pytest.mark.localmodel  # on the heavy xdist group (tests/conftest.py), left out of the quick subset
@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_witness_probe_local(monkeypatch):
    """The real local model, one short game: the probe runs offline and reports real replies.
    Measured at load 18-20 on the 2 shared cores (issue 41): the two replies took 48 and 43 s (the shipped
    `timeout_s` is 30, so ELIZA answered and `fallbacks` was 1) and the whole probe 827 s with the model's
    start. The model may take 300 s a reply here, and the test 1 800 s."""
    monkeypatch.setenv("TURINGLAB_LOCAL_THREADS", "1")
    res = probe(resolve("local").model_copy(update={"timeout_s": 300.0}), games=1, turns=2)
    assert res.replies == 2 and all(n > 0 for n in res.lengths)
    assert res.fallbacks == 0, res.examples


class Stubborn(Witness):
    codename, kind = "Stubborn", "local"

    async def reply(self, history, ctx):
        return Reply(text="I'm a computer program, not a human.", latency_s=0.1)


def test_a_witness_that_keeps_breaking_gets_the_fallback_as_in_a_live_game():
    res = probe(resolve("local"), games=2, turns=3, make_witness=lambda s, k: Stubborn())
    assert res.persona_breaks == res.replies == 6
    from turinglab.witnesses.ai_seat import REGENERATE_TRIES, TASK_TRIES
    from turinglab.witnesses.guard import task

    # each reply asked again as often as allowed: once after an accusation (guard/task.py), else twice
    tries = sum(TASK_TRIES if task.kind(r["question"]) else REGENERATE_TRIES for r in res.records)
    assert res.regenerated == tries and 6 < tries <= 12 and res.guard_fallbacks == 6 and res.shown_breaks == 0
    shown = [m for t in res.transcripts for who, m in t if who == "Witness"]
    assert all(m and "computer program" not in m for m in shown)


def test_a_question_file_is_asked_in_order_and_personas_are_drawn(tmp_path):
    from turinglab.bots.interrogator import BatteryError, load_battery
    from turinglab.witnesses import persona_draw

    f = tmp_path / "battery.tsv"
    f.write_text("# comment\nfamily\tlang\tmessage\n" + "".join(f"fam{k}\ten\tquestion {k}\n" for k in range(7)),
                 encoding="utf-8")
    battery = load_battery(f)
    assert battery[0] == ("fam0", "question 0") and len(battery) == 7
    specs = []

    def make(spec, k):
        specs.append(spec)
        return Scripted()

    res = probe(resolve("local"), games=3, turns=3, seed=40, make_witness=make, questions=battery, draw_persona=True)
    assert [r["question"] for r in res.records] == [f"question {k % 7}" for k in range(9)]  # in order, wrapping
    assert [r["category"] for r in res.records][:3] == ["fam0", "fam1", "fam2"]
    assert res.personas == [persona_draw.draw(40 + k) for k in range(3)]
    assert [s.persona["name"] for s in specs] == [p["name"] for p in res.personas]
    (tmp_path / "bad.tsv").write_text("question\nhi\n", encoding="utf-8")
    with pytest.raises(BatteryError, match="'family' and 'message'"):
        load_battery(tmp_path / "bad.tsv")


def test_the_shipped_held_out_battery_loads():
    from pathlib import Path

    from turinglab.bots.interrogator import load_battery

    battery = load_battery(Path(__file__).resolve().parents[2] / "benchmarks/persona/heldout/battery.tsv")
    assert len(battery) >= 200 and len({m for _, m in battery}) == len(battery)
