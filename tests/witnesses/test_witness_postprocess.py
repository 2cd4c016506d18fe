"""Post-processing: markdown, lowercase, seeded typos, cutting at a word boundary."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from turinglab.game.config import Postprocess
from turinglab.witnesses.postprocess import _NEIGHBOURS, apply, cut_to_limit, inject_typos, strip_markdown


def test_strip_markdown():
    md = "# Title\n**bold** and *it* and `code` and [link](http://x.y)\n- item one\n1. item two\n> quote"
    assert strip_markdown(md) == "Title\nbold and it and code and link\nitem one\nitem two\nquote"
    assert strip_markdown("2*3*4 = 24 and snake_case_name") == "2*3*4 = 24 and snake_case_name"


def test_cut_at_word_boundary():
    assert cut_to_limit("the quick brown fox", 12) == "the quick"
    assert cut_to_limit("the quick brown fox", 19) == "the quick brown fox"
    assert cut_to_limit("supercalifragilistic", 5) == "super"  # no boundary: hard cut


@given(st.text(min_size=0, max_size=400), st.integers(min_value=1, max_value=300))
def test_cut_never_exceeds_the_limit(text, limit):
    assert len(cut_to_limit(text, limit)) <= limit


def test_typos_are_seeded_and_of_the_three_kinds():
    text = " ".join(["typing"] * 400)
    a = inject_typos(text, 0.5, random.Random(3))
    assert a == inject_typos(text, 0.5, random.Random(3))
    words = a.split(" ")
    changed = [w for w in words if w != "typing"]
    assert 150 < len(changed) < 250  # about half the words, as set
    kinds = set()
    for w in changed:
        if len(w) == 5 and all(c in "typing" for c in w):
            kinds.add("drop")
        elif sorted(w) == sorted("typing"):
            kinds.add("swap")
        elif len(w) == 6:
            i = next(k for k in range(6) if w[k] != "typing"[k])
            assert w[i] in _NEIGHBOURS["typing"[i]]  # substitutions hit a neighbouring key
            kinds.add("substitute")
    assert kinds == {"drop", "swap", "substitute"}


def test_typo_rate_zero_changes_nothing_and_short_words_are_kept():
    assert inject_typos("hello there", 0.0, random.Random(1)) == "hello there"
    assert inject_typos("ok so i am", 1.0, random.Random(1)) == "ok so i am"


def test_apply_order_and_limit():
    pp = Postprocess(lowercase=True, strip_markdown=True, typo_rate=0.0, cut_to_limit=True)
    # markdown gone, lowercased, cut at the last word that fits, trailing comma dropped
    assert apply("**Hello** There, how ARE you", pp, 15, random.Random(0)) == "hello there"
    raw = Postprocess(strip_markdown=False, cut_to_limit=False)
    assert apply("**Hi**", raw, 2, random.Random(0)) == "**Hi**"


def test_sentence_case_turns_eliza_capitals_into_sentences():
    from turinglab.witnesses.postprocess import sentence_case

    assert sentence_case("IN WHAT WAY? I THINK YOU ARE RIGHT. WHY DO YOU SAY I'M SAD") == (
        "In what way? I think you are right. Why do you say I'm sad"
    )


async def test_eliza_witness_speaks_in_sentence_case_by_default_and_can_keep_capitals():
    from datetime import datetime, timezone

    from turinglab.game.config import Postprocess, WitnessSpec
    from turinglab.witnesses.base import GameContext, Turn
    from turinglab.witnesses.registry import build_witness, resolve

    now = datetime.now(timezone.utc)
    ctx = GameContext(game_id="g", started_at=now, now=now, time_limit_s=300, max_chars=300)
    history = [Turn("interrogator", "Men are all alike.", 0)]
    default = await build_witness(resolve("eliza")).reply(history, ctx)
    assert default.text == "In what way"
    keep = WitnessSpec(codename="E", kind="eliza", postprocess=Postprocess(sentence_case=False))
    assert (await build_witness(keep).reply(history, ctx)).text == "IN WHAT WAY"
