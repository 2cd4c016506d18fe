"""ELIZA script notation: the DOCTOR transcription, another script from a file, clear errors."""

from __future__ import annotations

import pytest

from turinglab.witnesses.eliza import DOCTOR_PATH, Eliza, Script, ScriptError, doctor_script, parse_script

OK_TAIL = "(NONE ((0) (GO ON)))\n()\n"


def test_doctor_script_structure():
    s = doctor_script()
    assert s.greeting == "HOW DO YOU DO. PLEASE TELL ME YOUR PROBLEM"
    kw = s.keywords
    assert (kw["COMPUTER"].rank, kw["NAME"].rank, kw["ALIKE"].rank, kw["ALWAYS"].rank) == (50, 15, 10, 1)
    assert (kw["MY"].substitute, kw["MY"].rank, len(kw["MY"].rules)) == ("YOUR", 2, 2)
    assert (kw["DREAMED"].substitute, kw["DREAMED"].rank, kw["DREAMED"].link) == ("DREAMT", 4, "DREAMT")
    assert kw["ME"].substitute == "YOU" and not kw["ME"].is_key
    assert kw["MOTHER"].tags == {"NOUN", "FAMILY"} and not kw["MOTHER"].is_key
    assert kw["MOM"].substitute == "MOTHER" and kw["MOM"].tags == {"FAMILY"}
    assert s.tags["THINK"] == {"BELIEF"}
    assert kw["WHY"].link == "WHAT" and len(kw["WHY"].rules) == 2
    assert len(kw["I"].rules) == 12 and len(kw["YOU"].rules) == 4
    assert [len(r.reassemblies) for r in kw["I"].rules][:3] == [6, 4, 4]
    assert s.memory_key == "MY" and len(s.memory) == 4
    assert len(s.none.rules[0].reassemblies) == 4
    pre = kw["I'M"].rules[0].reassemblies[0]
    assert (pre.kind, pre.parts, pre.target) == ("pre", ("YOU", "ARE", 3), "I")
    alt = kw["I"].rules[1].pattern[4]
    assert (alt.kind, alt.words) == ("alt", {"SAD", "UNHAPPY", "DEPRESSED", "SICK"})


def test_doctor_file_loads_with_from_file():
    eliza = Eliza.from_file(DOCTOR_PATH)
    assert eliza.respond("Men are all alike.") == "IN WHAT WAY"


def test_another_script_from_a_file(tmp_path):
    path = tmp_path / "parrot.txt"
    path.write_text(
        "; a tiny test script\n"
        "(SQUAWK. HELLO)\nSTART\n"
        "(CRACKER 3 ((0 WANT 1 CRACKER 0) (ALL 3 CRACKERS ARE MINE) (=POLLY)))\n"
        "(WANT = WANT)\n"
        "(POLLY ((0) (POLLY IS A GOOD BIRD)))\n"
        "(FOOD DLIST(/EDIBLE))\n(SEED DLIST(/EDIBLE))\n"
        "(EAT ((0 EAT (/EDIBLE) 0) (YUM 3)) ((0) (NEWKEY)))\n"
        "(MEMORY EAT (0 EAT 0 = ONCE YOU ATE 3) (0 EAT 0 = YOU ATE 3) (0 = NO) (0 = NOPE))\n"
        "(NONE ((0) (SQUAWK)))\n()\n",
        encoding="utf-8",
    )
    eliza = Eliza.from_file(path)
    assert eliza.greeting == "SQUAWK. HELLO"
    assert eliza.respond("I want a cracker now") == "ALL A CRACKERS ARE MINE"
    assert eliza.respond("I want a cracker") == "POLLY IS A GOOD BIRD"
    assert eliza.respond("Birds eat seed") == "YUM SEED"
    assert eliza.respond("Birds eat rocks") == "SQUAWK"
    assert len(eliza.memories) == 2


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="ELIZA script not found"):
        Script.from_file(tmp_path / "nope.txt")


def _error(text: str) -> ScriptError:
    with pytest.raises(ScriptError) as info:
        parse_script(text, source="t.txt")
    return info.value


def test_unclosed_list_says_where_it_opened():
    e = _error("(HI)\nSTART\n(SORRY\n  ((0) (NO NEED))\n" + OK_TAIL)
    assert "opened at line 3, column 1" in e.message and "1 more ')'" in e.message
    assert str(e).startswith("t.txt:")


# (case, script, what the message says, line, column); None: not checked
BAD_SCRIPTS = [
    ("stray_close_paren_position", "(HI)\nSTART\n(A ((0) (X))))\n" + OK_TAIL, ("unexpected ')'",), 3, 14),
    ("missing_start", "(HI)\n(A ((0) (X)))\n" + OK_TAIL, ("START",), 2, 1),
    ("missing_greeting", "START\n" + OK_TAIL, ("greeting",), 1, 1),
    ("missing_none", "(HI)\nSTART\n(A ((0) (X)))\n()\n", ("NONE",), None, None),
    ("part_number_out_of_range_points_at_the_number", "(HI)\nSTART\n(A ((0 A 0) (SEE 4)))\n" + OK_TAIL,
     ("part number 4", "3 part(s)"), 3, 18),
    ("link_to_unknown_keyword", "(HI)\nSTART\n(A ((0) (=NOWHERE)))\n" + OK_TAIL, ("NOWHERE",), 3, None),
    ("memory_needs_four_transformations", "(HI)\nSTART\n(MY ((0) (X)))\n(MEMORY MY (0 = A) (0 = B) (0 = C))\n" + OK_TAIL,
     ("exactly four", "found 3"), 4, None),
    ("memory_transformation_needs_an_equals_sign",
     "(HI)\nSTART\n(MY ((0) (X)))\n(MEMORY MY (0 A) (0 = B) (0 = C) (0 = D))\n" + OK_TAIL, ("'='",), 4, 12),
    ("memory_keyword_must_have_rules", "(HI)\nSTART\n(MEMORY MY (0 = A) (0 = B) (0 = C) (0 = D))\n" + OK_TAIL,
     ("ordinary keyword",), None, None),
    ("duplicate_keyword", "(HI)\nSTART\n(A ((0) (X)))\n(A ((0) (Y)))\n" + OK_TAIL, ("defined twice", "line 3"), 4, None),
    ("unexpected_word_in_a_keyword_list", "(HI)\nSTART\n(A = B 3 OOPS ((0) (X)))\n" + OK_TAIL, ("OOPS",), 3, 10),
    ("bad_pattern_sublist", "(HI)\nSTART\n(A ((0 (WANT NEED) 0) (X)))\n" + OK_TAIL, ("* (alternatives) or / (tags)",), 3, 8),
    ("decomposition_without_reassembly", "(HI)\nSTART\n(A ((0 A 0)))\n" + OK_TAIL, ("no reassembly",), None, None),
    ("bad_pre", "(HI)\nSTART\n(A ((0) (PRE (X 1))))\n" + OK_TAIL, ("PRE",), None, None),
    ("text_after_end_marker", "(HI)\nSTART\n" + OK_TAIL + "(LATE ((0) (X)))\n", ("end marker",), 5, None),
    ("word_at_top_level", "(HI)\nSTART\nHELLO\n" + OK_TAIL, ("HELLO",), 3, 1),
]


@pytest.mark.parametrize(("script", "says", "line", "col"), [c[1:] for c in BAD_SCRIPTS],
                         ids=[c[0] for c in BAD_SCRIPTS])
def test_bad_script_is_a_clear_error(script, says, line, col):
    e = _error(script)
    for fragment in says:
        assert fragment in e.message
    if line is not None:
        assert e.line == line
    if col is not None:
        assert e.col == col


def test_comments_and_free_layout_are_accepted():
    script = parse_script("; c\n(HI) ; c\nSTART\n(A   ((0)\n\t(X  Y)))  ; c\n(NONE((0)(N)))")
    assert script.keywords["A"].rules[0].reassemblies[0].parts == ("X", "Y")
    assert Eliza(script).respond("a") == "X Y"


def test_terminal_runner(tmp_path):
    import subprocess
    import sys

    run = [sys.executable, "-m", "turinglab.witnesses.eliza"]
    out = subprocess.run(run, input="Men are all alike.\n\n", capture_output=True, text=True, timeout=60)
    assert out.returncode == 0
    assert out.stdout.splitlines() == ["HOW DO YOU DO. PLEASE TELL ME YOUR PROBLEM", "IN WHAT WAY"]
    bad = tmp_path / "bad.txt"
    bad.write_text("(HI)\nSTART\n(A ((0 A 0) (X 4)))\n", encoding="utf-8")
    out = subprocess.run([*run, str(bad)], input="", capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and "bad.txt:3:16: part number 4" in out.stderr
