"""`static generate` and `static conversations` with deterministic model doubles (the real local
model: test_static_generate_local.py): unusable answers counted, retried and reported; resuming;
the conversation failure rules; re-sampling; human-human import; chunking with per-speaker truth."""

from __future__ import annotations

import json

import pytest

from tests.statictests.generate_doubles import fake_chat, stuck_first_attempt
from turinglab.statictests import conversations as cv
from turinglab.game.static_config import preset_study
from turinglab.statictests.failures import Rules, check
from turinglab.statictests.generate import GenerateError, ModelConfig, check_task, check_word, generate_words
from turinglab.store.api import Store
from turinglab.store.static import ResponseIn, StimulusIn

CUES = ["come", "synaptic", "nepal", "wing"]


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TURINGLAB_CACHE_DIR", str(tmp_path / "cache"))


def word_study(st: Store) -> int:
    sid = st.register_static_study(preset_study("w", "word"))
    st.add_items(sid, [StimulusIn(c, text=c, fields={"index": i}) for i, c in enumerate(CUES)],
                 [ResponseIn(f"{c}/h", c, "x" + c, "human", "p1") for c in CUES])
    return sid


@pytest.mark.parametrize("raw,word,reason", [
    ("Together", "together", None), ("  \"brain.\" ", "brain", None), ("**Flap**", "flap", None), ("NASA", "nasa", None),
    ("", None, "empty"), ("   ", None, "empty"), ("I'm sorry, I can't do that", None, "refused"),
    ("As an AI, word", None, "refused"), ("big tree", None, "not one word"), ("...", None, "not one word"),
    ("COME", None, "repeats the cue"), ("come.", None, "repeats the cue"),
])
def test_one_word_answers_are_checked(raw, word, reason):
    assert check_word(raw, "come") == (word, reason)


def test_unusable_answers_are_counted_retried_and_reported(sqlite_url):
    chat = fake_chat({"come": ["", "I'm sorry, I cannot", "together"], "synaptic": ["neurons"],
                      "nepal": ["a big mountain", "nepal", "", "mountains are high"], "wing": ["Bird."]})
    with Store(sqlite_url) as st:
        sid = word_study(st)
        rep = generate_words(st, sid, ModelConfig(temperature=0.0), retries=3, chat=chat, agent="fake-model")
        items = {i.stimulus_key: i for i in st.items(sid) if i.agent == "fake-model"}
    assert rep.stored == 3 and rep.asked == 4 and rep.calls == 3 + 1 + 4 + 1
    assert dict(rep.unusable) == {"empty": 2, "refused": 1, "not one word": 2, "repeats the cue": 1}
    assert [f["cue"] for f in rep.failed] == ["nepal"]  # never silently dropped: every raw answer is in the report
    assert [a["raw"] for a in rep.failed[0]["attempts"]] == ["a big mountain", "nepal", "", "mountains are high"]
    # lower case as all of Zhang's 1 500 words; the raw answer kept beside the item
    assert {k: i.text for k, i in items.items()} == {"come": "together", "synaptic": "neurons", "wing": "bird"}
    assert items["wing"].payload["raw"] == "Bird."
    come = items["come"]
    assert come.truth == "machine" and come.payload["raw"] == "together"
    assert [a["reason"] for a in come.payload["unusable_attempts"]] == ["empty", "refused"]
    assert "My word is: come" in come.payload["prompt"][0]["content"]
    # temperature 0 would repeat itself: retries use the next seed at the retry temperature
    assert come.payload["settings"]["seed"] == 44 and come.payload["settings"]["temperature"] == 0.7
    assert json.dumps(rep.as_dict())  # the --report file


def test_a_rerun_resumes_and_reads_the_cache(sqlite_url):
    chat = fake_chat({c: [c + "ish"] for c in CUES})
    with Store(sqlite_url) as st:
        sid = word_study(st)
        first = generate_words(st, sid, ModelConfig(), limit=2, chat=chat, agent="m")
        again = generate_words(st, sid, ModelConfig(), limit=2, chat=chat, agent="m")
        rest = generate_words(st, sid, ModelConfig(), chat=chat, agent="m")
        other = generate_words(st, sid, ModelConfig(), limit=1, chat=chat, agent="m2")  # same model config: cached
        n = len([i for i in st.items(sid) if i.agent == "m"])
    assert (first.stored, again.stored, again.skipped, rest.stored, rest.skipped) == (2, 0, 2, 2, 2)
    assert n == 4 and sum(chat.calls.values()) == 4
    assert other.stored == 1 and other.cached_calls == 1


def test_generate_refuses_what_it_cannot_do(sqlite_url):
    with pytest.raises(GenerateError, match="reads text only"):
        check_task("caption", ModelConfig())
    with pytest.raises(GenerateError, match="conversations"):
        check_task("conversation", ModelConfig())
    with Store(sqlite_url) as st:
        sid = st.register_static_study(preset_study("c", "conversation"))
        with pytest.raises(GenerateError, match="is a conversation study"):
            generate_words(st, sid, ModelConfig(), chat=fake_chat({}))


# --- conversations ---

def T(*texts):  # noqa: N802 - a conversation as a list of texts
    return list(texts)


@pytest.mark.parametrize("turns,starts", [
    (T("hi what music do you like", ""), "empty"),
    (T("hi", "As an AI language model I do not have taste"), "refusing"),
    (T("hi what do you do", "i am a nurse", "oh cool", "anyway gotta go bye"), "farewell before 6"),
    (T("so what do you think of jazz", "i think jazz is wonderful music", "why",
       "i think jazz is wonderful music"), "repeated sentence (exact)"),
    (T("so what do you think of jazz", "i think jazz is wonderful music", "why",
       "i think jazz is a wonderful music"), "repeated sentence (near"),
    (T("hey", "i like red shoes a lot, i like red shoes a lot"), "repeated sentence (exact)"),
    (T("lol", "ok", "lol", "ok"), "repeated block: the last 1"),
    (T("a", "b", "c", "d", "a", "b", "c", "d"), "repeated block: the last 2"),
    # assistant register: the persona guard's rule, its model, and the register model (statictests/register.py)
    (T("so you into hiking?", "yeah a bit, mostly local trails", "nice", "feel free to ask me anything about trails!"),
     "assistant register: turn 4 (B) (persona guard, rule"),
    (T("hey what music do you like", "Happy to help with any other questions you might have about music!"),
     "assistant register: turn 2 (B) (persona guard, model"),
    (T("what do u read", "Great question! Here are a few books you might enjoy: 1. Dune 2. Educated"),
     "assistant register: turn 2 (B) (register model"),
])
def test_failure_rules(turns, starts):
    for k in range(1, len(turns)):  # a rule fires at its turn, not before
        assert check(turns[:k], Rules()) is None, turns[:k]
    assert check(turns, Rules()).startswith(starts)


def test_the_register_model_is_checked_and_can_be_turned_off():
    from turinglab.statictests.register import cross_validated, examples

    texts, labels = examples()
    assert len(texts) == 120 and sum(labels) == 55
    acc = cross_validated()
    print(f"register model, 5-fold cross-validated accuracy on its 120 turns: {acc:.3f}")
    assert acc >= 0.85
    turns = ["what do u read", "Great question! Here are a few books you might enjoy: 1. Dune 2. Educated"]
    assert check(turns, Rules(assistant=False)) is None


def test_a_sound_conversation_passes_and_a_late_farewell_is_allowed():
    from tests.statictests.generate_doubles import LINES

    turns = ["hey! so what do you think about music these days?", *LINES[:7], "ok bye, nice talking"]
    assert all(check(turns[:k], Rules(min_exchanges=5)) is None for k in range(1, len(turns) + 1))
    assert check(turns, Rules(min_exchanges=6)).startswith("farewell")


def test_a_repeating_model_is_detected_and_resampled():
    make = stuck_first_attempt()
    cfg = {"fake": {"kind": "fake"}}
    out = cv.generate([("fake", "fake")], 3, 4, Rules(min_exchanges=4), max_resamples=2, make_witness=make, configs=cfg)
    assert len(out.made) == 3 and out.failed == [] and out.attempts == 6
    assert [e["attempt"] for e in out.log] == [0, 0, 0]
    assert all(e["reason"].startswith("repeated sentence (exact): turn 3 (A)") for e in out.log)
    for c in out.made:
        assert len(c.turns) == 8 and c.resampled[0]["reason"].startswith("repeated sentence")
        assert check([t["text"] for t in c.turns], Rules(min_exchanges=4)) is None
    assert all(w.closed for w in make.made)
    # the same run again: every attempt from the cache, the same corpus
    again = cv.generate([("fake", "fake")], 3, 4, Rules(min_exchanges=4), max_resamples=2,
                        make_witness=stuck_first_attempt(), configs=cfg)
    assert again.cached == 6 and [c.turns for c in again.made] == [c.turns for c in out.made]


def test_a_model_that_always_repeats_is_left_out_and_reported():
    def make(name, seed):
        from tests.statictests.generate_doubles import FakeWitness
        return FakeWitness(name, seed, stuck=True)

    out = cv.generate([("fake", "fake")], 2, 4, Rules(), max_resamples=1, make_witness=make, configs={"fake": {}})
    assert out.made == [] and len(out.log) == 4
    assert [f["attempts"] for f in out.failed] == [2, 2]


def test_human_jsonl_and_chunking(tmp_path, sqlite_url):
    lines = [{"conversation": "c1", "speaker": "ann", "text": f"ann line {k}", "topic": "Music"} if k % 2 == 0
             else {"conversation": "c1", "speaker": "bob", "text": f"bob line {k}"} for k in range(12)]
    lines += [{"conversation": 2, "speaker": "x", "text": "hi"}, {"conversation": 2, "speaker": "y", "text": "yo"}]
    f = tmp_path / "hh.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines))
    human = cv.read_human_jsonl(f)
    assert [c.key for c in human] == ["hh-c1", "hh-2"] and human[0].topic == "music"
    out = cv.generate([("fake", "fake")], 1, 6, Rules(), make_witness=stuck_first_attempt(), configs={"fake": {}})
    stimuli, items, short = cv.chunk(human + out.made, (3, 6))
    assert short == 1  # hh-2 has one exchange
    assert sorted(i.key for i in items) == ["ai000-fake-fake/3", "ai000-fake-fake/6", "hh-c1/3", "hh-c1/6"]
    by = {i.key: i for i in items}
    assert by["hh-c1/3"].payload["speakers"] == {"A": "human", "B": "human"} and by["hh-c1/3"].truth == "human"
    assert by["hh-c1/3"].text.splitlines()[-1] == "B: bob line 5" and len(by["hh-c1/6"].payload["turns"]) == 12
    ai = by["ai000-fake-fake/3"]
    assert ai.payload["speakers"] == {"A": "machine", "B": "machine"} and ai.agent == "fake"
    assert ai.payload["speaker_agents"] == {"A": "fake", "B": "fake"}
    with Store(sqlite_url) as st:
        sid = st.import_static(preset_study("gen", "conversation"), stimuli, items)
        stored = {i.key: i for i in st.items(sid)}
    assert stored["ai000-fake-fake/3"].stimulus_fields["resampled"][0]["attempt"] == 0
    assert stored["hh-c1/3"].stimulus_fields["control_answer"] == "music"


@pytest.mark.parametrize("lines,msg", [
    ([{"conversation": "c", "speaker": "a", "text": "x"}, {"conversation": "c", "speaker": "b", "text": "y"},
      {"conversation": "c", "speaker": "c", "text": "z"}], "third speaker"),
    ([{"conversation": "c", "speaker": "a"}], "needs non-empty"),
    ([{"conversation": "c", "speaker": "a", "text": "x", "topic": "cooking"}], "not one of Zhang's"),
])
def test_bad_human_jsonl_is_refused(tmp_path, lines, msg):
    f = tmp_path / "bad.jsonl"
    f.write_text("".join(json.dumps(x) + "\n" for x in lines) + "not json\n")
    with pytest.raises(GenerateError, match=msg) as e:
        cv.read_human_jsonl(f)
    assert "not JSON" in str(e.value) and "nothing imported" in str(e.value)


def test_cli_refuses_bad_options(tmp_path):
    from typer.testing import CliRunner

    from turinglab.cli.static import app

    r = CliRunner().invoke(app, ["conversations", "--study", "s", "--pair", "local", "--db", f"sqlite:///{tmp_path}/x.db"])
    assert r.exit_code == 2 and "A:B" in r.output
    r = CliRunner().invoke(app, ["conversations", "--study", "s", "--pair", "local:nobody", "--n", "1",
                                 "--db", f"sqlite:///{tmp_path}/x.db"])
    assert r.exit_code == 2 and "unknown witness 'nobody'" in r.output
    r = CliRunner().invoke(app, ["generate", "--study", "s", "--task", "caption", "--db", f"sqlite:///{tmp_path}/x.db"])
    assert r.exit_code == 2 and "reads text only" in r.output


def test_openers_are_drawn_from_several_templates(tmp_path):
    from turinglab.statictests.topics import ZHANG_TOPICS

    drawn = [cv.draw_opener(ZHANG_TOPICS[i % 9], i, 1) for i in range(36)]
    assert drawn == [cv.draw_opener(ZHANG_TOPICS[i % 9], i, 1) for i in range(36)]  # the same run, the same openers
    templates = sorted(p.name for p in cv.OPENERS.glob("*.j2"))
    assert len(templates) >= 4 and {t for _, t in drawn} == set(templates)
    assert len({text for text, _ in drawn}) >= 30 and all(ZHANG_TOPICS[i % 9] in drawn[i][0] for i in range(36))
    assert [t for t, _ in drawn] != [t for t, _ in (cv.draw_opener(ZHANG_TOPICS[i % 9], i, 2) for i in range(36))]
    (tmp_path / "mine.j2").write_text("{{ hi }}talk to me about {{ topic }}")
    assert cv.draw_opener("music", 0, 1, tmp_path)[0].endswith("talk to me about music")
    with pytest.raises(GenerateError, match="no opener templates"):
        cv.draw_opener("music", 0, 1, tmp_path / "none")
    out = cv.generate([("fake", "fake")], 2, 3, Rules(min_exchanges=3), make_witness=stuck_first_attempt(),
                      configs={"fake": {}}, openers=tmp_path)
    assert all(c.opener == "mine.j2" and c.turns[0]["text"].endswith(f"talk to me about {c.topic}") for c in out.made)
    stimuli, _, _ = cv.chunk(out.made, (3,))
    assert all(s.fields["opener_template"] == "mine.j2" for s in stimuli)
