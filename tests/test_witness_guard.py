"""The persona-break classifier (witnesses/guard): rules + a model trained on the shipped set,
checked on held-out replies it never saw (none of these lines are in breaks.tsv)."""

from __future__ import annotations

import pytest

from turinglab.witnesses import guard

HELD_OUT_BREAKS = [
    "As an AI developed by OpenAI, I don't have a favourite food.",
    "i'm just an ai so i can't really go to concerts",
    "I'm a chatbot, I don't have a hometown.",
    "Being a language model, I have no age.",
    "I don't have personal preferences, but pizza is popular.",
    "Sorry, I can't assist with that.",
    "I'm an artificial intelligence, not a person.",
    "How can I help you today?",
    "I'm not a human, I'm a program.",
    "i'm a machine lol you got me",
]
HELD_OUT_OK = [
    "lol no im a person",
    "i'm not an ai, stop asking",
    "no way im a bot",
    "robots cant eat pizza and i just did",
    "hey, not much, you?",
    "i'm from porto",
    "my favourite food is ramen",
    "idk maybe 42",
    "i'm a teacher, it's exhausting",
    "my friend built a chatbot once",
    "sorry, what was the question?",
    "yeah i have a dog called max",
]


def test_the_shipped_set_loads_and_has_both_labels():
    texts, labels = guard.load_examples()
    assert len(texts) == len(labels) > 100
    assert 0.3 < sum(labels) / len(labels) < 0.7


@pytest.mark.parametrize("text", HELD_OUT_BREAKS)
def test_held_out_breaks_are_caught(text):
    assert guard.is_break(text), guard.classify(text)


@pytest.mark.parametrize("text", HELD_OUT_OK)
def test_held_out_in_persona_replies_pass(text):
    assert not guard.is_break(text), guard.classify(text)


def test_the_model_alone_generalises_beyond_the_rules():
    """Without the rules the trained model still separates held-out replies mostly right
    (it is what catches assistant register no rule names)."""
    right = sum(guard.p_break(t) >= 0.5 for t in HELD_OUT_BREAKS) + sum(guard.p_break(t) < 0.5 for t in HELD_OUT_OK)
    assert right / (len(HELD_OUT_BREAKS) + len(HELD_OUT_OK)) >= 0.8


def test_a_model_trained_on_flipped_labels_disagrees():
    """The model learns from the labels (not a constant): flipping them flips its answers."""
    texts, labels = guard.load_examples()
    flipped = guard.train(texts, [1 - y for y in labels])
    assert guard.p_break("As an AI language model, I don't have feelings.", flipped) < 0.5


def test_refusals_are_told_apart():
    assert guard.is_refusal("I'm sorry, but I can't help with that.")
    assert not guard.is_refusal("sorry, i can't make it tonight")


def test_a_bad_label_in_a_labelled_file_is_named(tmp_path):
    p = tmp_path / "x.tsv"
    p.write_text("maybe\thello\n", encoding="utf-8")
    with pytest.raises(ValueError, match="maybe"):
        guard.load_examples(p)


def test_a_job_in_software_is_not_a_break():
    assert not guard.is_break("i'm a software engineer.")
    assert guard.is_break("i'm just software")


def test_a_denial_must_negate_the_ai_word_itself():
    """'no' answering the question, then an admission, is a break; 'not a bot' is a denial."""
    assert guard.is_break("nope, i'm just a bot, sorry")
    assert guard.is_break("yes. i'm an ai, not a person you can meet")
    assert not guard.is_break("nope, not a bot")
    assert not guard.is_break("no way im a robot lol")


def test_assistant_register_is_a_break_and_lacking_things_is_not():
    assert guard.is_break("haha i'm just here to help, ask me anything")
    assert guard.is_break("sure! do you have any other questions?")
    assert not guard.is_break("i don't have a cat, my landlord hates them")
    assert not guard.is_break("here to kill time before my shift")


HELD_OUT_FILE = guard.DATA.parent / "heldout.tsv"


def test_the_held_out_probe_replies_are_not_in_the_training_set():
    train = set(guard.load_examples()[0])
    held, labels = guard.load_examples(HELD_OUT_FILE)
    assert len(held) >= 120 and sum(labels) >= 15  # enough breaks for recall to mean something
    assert not train & set(held)


def test_recall_and_precision_on_hand_labelled_probe_replies():
    """Replies of the witness probe (local model, README's Sierra, other shipped prompts) that a
    person labelled by reading them, none used in training: the guard must catch nearly all
    breaks without refusing many ordinary replies."""
    texts, labels = guard.load_examples(HELD_OUT_FILE)
    said = [guard.is_break(t) for t in texts]
    tp = sum(s and y for s, y in zip(said, labels))
    recall, precision = tp / sum(labels), tp / max(1, sum(said))
    missed = [t for t, s, y in zip(texts, said, labels) if y and not s]
    wrong = [t for t, s, y in zip(texts, said, labels) if s and not y]
    assert recall >= 0.9, missed
    assert precision >= 0.8, wrong
