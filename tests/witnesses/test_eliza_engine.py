"""ELIZA engine: the paper's conversation, each mechanism on its own, odd input."""

from __future__ import annotations

import pytest

from turinglab.witnesses.eliza import Eliza, parse_script
from turinglab.witnesses.eliza.engine import match, tokenize
from turinglab.witnesses.eliza.script import Element
from turinglab.witnesses.eliza.slip import bcd_word, last_cell, memory_index, slip_hash

# The sample conversation printed in Weizenbaum's CACM paper (1966), p. 36-37.
PAPER_CONVERSATION = [
    ("Men are all alike.", "IN WHAT WAY"),
    ("They're always bugging us about something or other.", "CAN YOU THINK OF A SPECIFIC EXAMPLE"),
    ("Well, my boyfriend made me come here.", "YOUR BOYFRIEND MADE YOU COME HERE"),
    ("He says I'm depressed much of the time.", "I AM SORRY TO HEAR YOU ARE DEPRESSED"),
    ("It's true. I am unhappy.", "DO YOU THINK COMING HERE WILL HELP YOU NOT TO BE UNHAPPY"),
    ("I need some help, that much seems certain.", "WHAT WOULD IT MEAN TO YOU IF YOU GOT SOME HELP"),
    ("Perhaps I could learn to get along with my mother.", "TELL ME MORE ABOUT YOUR FAMILY"),
    ("My mother takes care of me.", "WHO ELSE IN YOUR FAMILY TAKES CARE OF YOU"),
    ("My father.", "YOUR FATHER"),
    ("You are like my father in some ways.", "WHAT RESEMBLANCE DO YOU SEE"),
    (
        "You are not very aggressive but I think you don't want me to notice that.",
        "WHAT MAKES YOU THINK I AM NOT VERY AGGRESSIVE",
    ),
    ("You don't argue with me.", "WHY DO YOU THINK I DON'T ARGUE WITH YOU"),
    ("You are afraid of me.", "DOES IT PLEASE YOU TO BELIEVE I AM AFRAID OF YOU"),
    ("My father is afraid of everybody.", "WHAT ELSE COMES TO MIND WHEN YOU THINK OF YOUR FATHER"),
    ("Bullies.", "DOES THAT HAVE ANYTHING TO DO WITH THE FACT THAT YOUR BOYFRIEND MADE YOU COME HERE"),
]


def test_paper_conversation_verbatim():
    eliza = Eliza()
    got = [eliza.respond(text) for text, _ in PAPER_CONVERSATION]
    assert got == [reply for _, reply in PAPER_CONVERSATION]


def test_paper_conversation_last_reply_is_a_recalled_memory():
    eliza = Eliza()
    traces = [eliza.trace(text) for text, _ in PAPER_CONVERSATION]
    assert [t.source for t in traces].count("memory") == 1
    assert traces[-1].source == "memory" and traces[-1].keystack == ()


def test_but_as_delimiter_comes_from_the_listing_not_the_paper():
    # With only the paper's delimiters (comma, period) reply 11 keeps the whole sentence.
    eliza = Eliza(word_delimiters=())
    replies = [eliza.respond(text) for text, _ in PAPER_CONVERSATION[:11]]
    assert replies[-1] == (
        "WHAT MAKES YOU THINK I AM NOT VERY AGGRESSIVE BUT YOU THINK I DON'T WANT YOU TO NOTICE THAT"
    )


def test_greeting_is_the_scripts_first_list():
    assert Eliza().greeting == "HOW DO YOU DO. PLEASE TELL ME YOUR PROBLEM"


# ---------------------------------------------------------------- SLIP hash (memory choice)


def _mid_square_reference(d: int, n: int) -> int:
    """Independent reference: square as a 70-digit binary string and read the middle n digits."""
    bits = format((d & (2**35 - 1)) ** 2, "070b")  # bit 69 first ... bit 0 last
    lo = 35 - n // 2  # lowest bit kept
    return int(bits[70 - lo - n : 70 - lo], 2) if n else 0


def test_hash_of_always_is_14_as_the_paper_says():
    # CACM p. 38: "The word 'always', for example, yields the integer 14" (7-bit hash).
    assert bcd_word("ALWAYS") == 0o214366217062
    assert slip_hash(bcd_word("ALWAYS"), 7) == 14


@pytest.mark.parametrize(
    ("word", "index"),
    # HERE: the paper's conversation recalls the 4th memory of "...COME HERE".
    # KIDS, TIME: recalls in Weizenbaum's 1965 archive conversation (as analysed by A. Hay).
    [("HERE", 3), ("KIDS", 1), ("TIME", 0)],
)
def test_memory_index_known_cases(word, index):
    assert memory_index(["X", word]) == index


@pytest.mark.parametrize("word", ["ALWAYS", "HERE", "KIDS", "TIME", "MOTHER", "Z", "12345", "ZZZZZZ", "A'B-C"])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 7, 15])
def test_slip_hash_matches_independent_mid_square(word, n):
    d = bcd_word(word)
    assert slip_hash(d, n) == _mid_square_reference(d, n)


def test_slip_hash_rejects_more_than_15_bits():
    with pytest.raises(ValueError, match="0..15"):
        slip_hash(1, 16)


def test_last_cell_of_long_words():
    assert last_cell("HERE") == "HERE"
    assert last_cell("INVENTED") == "ED"
    assert last_cell("ABCDEFGHIJKL") == "GHIJKL"
    assert last_cell("ABCDEFGHIJKLM") == "M"


# ---------------------------------------------------------------- scanning: delimiters, substitution, keystack

TINY = """
(HELLO THERE)
START
(ALPHA 1 ((0) (SAW ALPHA)))
(BETA 5 ((0) (SAW BETA)))
(GAMMA ((0) (SAW GAMMA)))
(THEE = YOU)
(NONE ((0) (NOTHING) (STILL NOTHING)))
()
"""


def test_keystack_higher_rank_on_top_lower_at_bottom():
    eliza = Eliza(parse_script(TINY))
    r = eliza.trace("gamma alpha beta gamma")
    # GAMMA (0) first; ALPHA (1 > 0) on top; BETA (5 > 1) on top; GAMMA (0) at the bottom.
    assert r.keystack == ("BETA", "ALPHA", "GAMMA", "GAMMA")
    assert r.text == "SAW BETA"


def test_equal_rank_keeps_the_first_keyword_on_top():
    eliza = Eliza(parse_script(TINY))
    assert eliza.trace("alpha gamma alpha").keystack == ("ALPHA", "GAMMA", "ALPHA")


def test_ranking_in_doctor():
    r = Eliza().trace("I am sorry my computer is broken")
    assert r.keystack[0] == "COMPUTER"
    assert r.text == "DO COMPUTERS WORRY YOU"


def test_text_before_a_delimiter_without_keyword_is_dropped_and_after_a_keyword_is_cut():
    r = Eliza().trace("Well, I need coffee. My mother hates me.")
    assert r.words == ("YOU", "NEED", "COFFEE")
    assert r.text == "WHAT WOULD IT MEAN TO YOU IF YOU GOT COFFEE"


def test_substitutions_apply_to_the_kept_phrase():
    r = Eliza().trace("I remember my mother")
    assert r.keyword == "REMEMBER"
    assert r.words == ("YOU", "REMEMBER", "YOUR", "MOTHER")
    assert r.text == "DO YOU OFTEN THINK OF YOUR MOTHER"


def test_substitution_only_words_are_not_keywords():
    eliza = Eliza(parse_script(TINY))
    r = eliza.trace("thee")
    assert r.source == "none" and r.words == ("YOU",)


def test_substitution_entry_with_rank_dreamed():
    r = Eliza().trace("I dreamed about flying")  # DREAMED = DREAMT 4 (=DREAMT)
    assert r.keystack[0] == "DREAMED"
    assert r.text == "REALLY, ABOUT FLYING"


def test_tokenize_delimiters_and_apostrophes():
    assert tokenize("Well, they\u2019re here?") == ["WELL", ",", "THEY'RE", "HERE", "."]
    assert tokenize("  ") == []


# ---------------------------------------------------------------- decomposition

E0, W = Element("any"), (lambda w: Element("word", words=frozenset([w])))


def test_match_zero_takes_as_few_words_as_possible():
    assert match((E0, W("YOU"), E0), ["YOU", "SEE", "YOU"], {}) == [[], ["YOU"], ["SEE", "YOU"]]


def test_match_n_takes_exactly_n_words():
    two = Element("count", count=2)
    assert match((two, W("X"), E0), ["A", "B", "X", "C"], {}) == [["A", "B"], ["X"], ["C"]]
    assert match((two, W("X"), E0), ["A", "X", "C"], {}) is None
    assert match((E0, two), ["A", "B", "C"], {}) == [["A"], ["B", "C"]]


def test_match_alternatives_and_tags():
    alt = Element("alt", words=frozenset(["WANT", "NEED"]))
    assert match((E0, W("YOU"), alt, E0), "YOU NEED HELP".split(), {}) == [[], ["YOU"], ["NEED"], ["HELP"]]
    assert match((E0, W("YOU"), alt, E0), "YOU LIKE HELP".split(), {}) is None
    fam = Element("tag", words=frozenset(["FAMILY"]))
    tags = {"MOTHER": frozenset(["NOUN", "FAMILY"])}
    assert match((E0, W("YOUR"), E0, fam, E0), "YOUR OLD MOTHER".split(), tags) == [
        [], ["YOUR"], ["OLD"], ["MOTHER"], []
    ]
    assert match((E0, fam, E0), "YOUR OLD DOG".split(), tags) is None


def test_decomposition_with_n_in_a_script():
    script = parse_script(
        "(HI) START (LIKES ((1 LIKES 0) (WHO IS 1)) ((0 LIKES 0) (SOMEONE LIKES 3))) (NONE ((0) (GO ON)))"
    )
    eliza = Eliza(script)
    assert eliza.respond("John likes tea") == "WHO IS JOHN"
    assert eliza.respond("John Smith likes tea") == "SOMEONE LIKES TEA"


def test_doctor_family_tag_rule():
    assert Eliza().respond("I worry about my sister") == "TELL ME MORE ABOUT YOUR FAMILY"


# ---------------------------------------------------------------- reassembly cycling


def test_reassemblies_cycle_and_wrap():
    eliza = Eliza()
    replies = [eliza.respond("Men are all alike.") for _ in range(9)]
    assert replies[:8] == [
        "IN WHAT WAY",
        "WHAT RESEMBLANCE DO YOU SEE",
        "WHAT DOES THAT SIMILARITY SUGGEST TO YOU",
        "WHAT OTHER CONNECTIONS DO YOU SEE",
        "WHAT DO YOU SUPPOSE THAT RESEMBLANCE MEANS",
        "WHAT IS THE CONNECTION, DO YOU SUPPOSE",
        "COULD THERE REALLY BE SOME CONNECTION",
        "HOW",
    ]
    assert replies[8] == "IN WHAT WAY"


def test_each_decomposition_rule_cycles_on_its_own():
    script = parse_script("(HI) START (K ((0 A 0) (A1) (A2)) ((0) (B1) (B2))) (NONE ((0) (N)))")
    eliza = Eliza(script)
    assert [eliza.respond(t) for t in ["k a", "k", "k a", "k", "k a"]] == ["A1", "B1", "A2", "B2", "A1"]


def test_cycling_is_per_conversation():
    first, second = Eliza(), Eliza()
    first.respond("Men are all alike.")
    assert second.respond("Men are all alike.") == "IN WHAT WAY"


# ---------------------------------------------------------------- links, NEWKEY, PRE


def test_equals_keyword_redirection():
    r = Eliza().trace("How are you?")  # (HOW (=WHAT))
    assert r.keystack[0] == "HOW" and r.keyword == "WHAT"
    assert r.text == "WHY DO YOU ASK"


def test_reassembly_link_inside_a_rule():
    r = Eliza().trace("You remind me of Bob")  # (0 I REMIND YOU OF 0) (=DIT)
    assert r.keyword == "DIT" and r.text == "IN WHAT WAY"


def test_newkey_moves_to_the_next_keyword():
    r = Eliza().trace("I like you")  # LIKE (rank 10) has no "is like": NEWKEY, then I
    assert r.keystack == ("LIKE", "I", "YOU")
    assert r.keyword == "I"
    assert r.text == "PERHAPS IN YOUR FANTASY WE LIKE EACH OTHER"


def test_newkey_with_an_empty_stack_gives_none():
    script = parse_script("(HI) START (K ((0) (NEWKEY))) (NONE ((0) (FALLBACK)))")
    assert Eliza(script).trace("k").source == "none"


def test_pre_rebuilds_the_text_then_links():
    assert Eliza().respond("I'm sad") == "I AM SORRY TO HEAR YOU ARE SAD"
    assert Eliza().respond("You're happy") == "WHAT MAKES YOU THINK I AM HAPPY"


def test_bare_link_after_rules_is_used_when_no_rule_matches():
    assert Eliza().trace("Why me").keyword == "WHAT"  # (WHY ... (=WHAT))


def test_link_loops_end_in_none():
    script = parse_script("(HI) START (A (=B)) (B (=A)) (NONE ((0) (LOOPED)))")
    r = Eliza(script).trace("a")
    assert r.source == "none" and r.text == "LOOPED"


def test_keyword_whose_rules_all_fail_answers_nomatch_by_limit_as_the_listing_does():
    """The 1965 listing (branch at line 001490, messages at 002200-002260): a keyword whose
    decomposition rules all fail prints NOMATCH(LIMIT), not a NONE remark."""
    eliza = Eliza()
    got = [eliza.trace("Can we go") for _ in range(5)]  # CAN has only (0 CAN I 0) and (0 CAN YOU 0)
    assert [r.text for r in got] == ["HMMM", "GO ON, PLEASE", "I SEE", "PLEASE CONTINUE", "HMMM"]
    assert {r.source for r in got} == {"nomatch"} and got[0].keyword == "CAN"
    # LIMIT advances with every text, matched or not: a NONE answer in between moves it on
    eliza = Eliza()
    assert eliza.respond("Bananas") == "I AM NOT SURE I UNDERSTAND YOU FULLY"  # LIMIT 2
    assert eliza.respond("Can we go") == "GO ON, PLEASE"  # LIMIT 3
    # the NONE cycle is not advanced by a no-match answer
    assert eliza.respond("Bananas") == "PLEASE GO ON"


def test_keyword_whose_rules_all_fail_gives_none_behind_the_switch():
    eliza = Eliza(nomatch="none")
    r = eliza.trace("Can we go")
    assert r.source == "none" and r.text == "I AM NOT SURE I UNDERSTAND YOU FULLY"
    with pytest.raises(ValueError, match="nomatch"):
        Eliza(nomatch="sometimes")


# ---------------------------------------------------------------- NONE and MEMORY


def test_none_cycles_when_nothing_matches():
    eliza = Eliza()
    assert [eliza.respond("Bananas") for _ in range(5)] == [
        "I AM NOT SURE I UNDERSTAND YOU FULLY",
        "PLEASE GO ON",
        "WHAT DOES THAT SUGGEST TO YOU",
        "DO YOU FEEL STRONGLY ABOUT DISCUSSING SUCH THINGS",
        "I AM NOT SURE I UNDERSTAND YOU FULLY",
    ]


MEMORY_FORMS = [
    "LETS DISCUSS FURTHER WHY YOUR {}",
    "EARLIER YOU SAID YOUR {}",
    "BUT YOUR {}",
    "DOES THAT HAVE ANYTHING TO DO WITH THE FACT THAT YOUR {}",
]


def _expected_memory(rest: str) -> str:
    last = rest.split()[-1]
    return MEMORY_FORMS[_mid_square_reference(bcd_word(last_cell(last)), 2)].format(rest)


def test_memory_is_recalled_only_on_every_fourth_text():
    eliza = Eliza()
    assert eliza.trace("My car is broken.").keyword == "MY"  # text 1
    assert eliza.trace("Bananas.").source == "none"  # text 2: counter not ready
    r = eliza.trace("Bananas.")  # text 3: counter ready, memory queued
    assert r.source == "memory"
    assert r.text == _expected_memory("CAR IS BROKEN")
    assert eliza.trace("Bananas.").source == "none"  # queue now empty


def test_memory_queue_is_first_in_first_out():
    eliza = Eliza()
    eliza.respond("My dog bites.")  # 1
    eliza.respond("My cat scratches.")  # 2
    first = eliza.trace("Apples.")  # 3 -> recall
    for _ in range(3):  # 4, 5, 6: not the counter's turn
        assert eliza.trace("Apples.").source == "none"
    second = eliza.trace("Apples.")  # 7 -> recall
    assert (first.text, second.text) == (_expected_memory("DOG BITES"), _expected_memory("CAT SCRATCHES"))


def test_no_memory_without_the_memory_keyword_on_top():
    eliza = Eliza()
    eliza.respond("My computer hates me.")  # COMPUTER (50) outranks MY: no memory laid down
    eliza.respond("Bananas.")
    assert eliza.trace("Bananas.").source == "none"
    assert eliza.memories == []


def test_random_memory_choice_is_seeded():
    def choices(seed: int) -> list[str]:
        eliza = Eliza(memory_choice="random", seed=seed)
        for i in range(12):
            eliza.respond(f"My dog number {i} here")
        return eliza.memories

    assert choices(1) == choices(1)
    starts = {m.split(" YOUR ")[0] for m in choices(1) + choices(2)}
    assert len(starts) >= 2  # more than one of the four forms is used
    with pytest.raises(ValueError, match="memory_choice"):
        Eliza(memory_choice="sometimes")


# ---------------------------------------------------------------- odd input


@pytest.mark.parametrize("text", ["", "   ", "?!.,;:", "...", "'''", "---", "\n\t"])
def test_empty_or_punctuation_only_gives_none(text):
    r = Eliza().trace(text)
    assert r.source == "none" and r.text == "I AM NOT SURE I UNDERSTAND YOU FULLY"


@pytest.mark.timeout(20)
@pytest.mark.parametrize(
    "text",
    ["x " * 1000, "YOU THINK " * 200, "I " + "YOU " * 400 + "FEEL", "my " * 666, "a" * 2000, "Well, " * 333],
)
def test_two_thousand_characters(text):
    r = Eliza().trace(text[:2000])
    assert r.text and r.text == r.text.upper()


def test_unicode_text():
    eliza = Eliza()
    assert eliza.respond("My café is très naïve 😀") == "YOUR CAFÉ IS TRÈS NAÏVE"
    assert eliza.respond("Straße") in {"PLEASE GO ON", "I AM NOT SURE I UNDERSTAND YOU FULLY"}


def test_html_is_not_echoed_as_markup():
    r = Eliza().respond("my <script>alert('x')</script> <b>mother</b> & \"friends\"")
    assert "<" not in r and ">" not in r and "&" not in r and '"' not in r
    assert r == "TELL ME MORE ABOUT YOUR FAMILY"


def test_non_text_is_a_clear_error():
    with pytest.raises(TypeError, match="str"):
        Eliza().respond(None)  # type: ignore[arg-type]
