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


def test_stray_close_paren_position():
    e = _error("(HI)\nSTART\n(A ((0) (X))))\n" + OK_TAIL)
    assert (e.line, e.col) == (3, 14) and "unexpected ')'" in e.message


def test_missing_start():
    e = _error("(HI)\n(A ((0) (X)))\n" + OK_TAIL)
    assert (e.line, e.col) == (2, 1) and "START" in e.message


def test_missing_greeting():
    e = _error("START\n" + OK_TAIL)
    assert "greeting" in e.message and (e.line, e.col) == (1, 1)


def test_missing_none():
    e = _error("(HI)\nSTART\n(A ((0) (X)))\n()\n")
    assert "NONE" in e.message


def test_part_number_out_of_range_points_at_the_number():
    e = _error("(HI)\nSTART\n(A ((0 A 0) (SEE 4)))\n" + OK_TAIL)
    assert (e.line, e.col) == (3, 18)
    assert "part number 4" in e.message and "3 part(s)" in e.message


def test_link_to_unknown_keyword():
    e = _error("(HI)\nSTART\n(A ((0) (=NOWHERE)))\n" + OK_TAIL)
    assert "NOWHERE" in e.message and e.line == 3


def test_memory_needs_four_transformations():
    e = _error("(HI)\nSTART\n(MY ((0) (X)))\n(MEMORY MY (0 = A) (0 = B) (0 = C))\n" + OK_TAIL)
    assert "exactly four" in e.message and "found 3" in e.message and e.line == 4


def test_memory_transformation_needs_an_equals_sign():
    e = _error("(HI)\nSTART\n(MY ((0) (X)))\n(MEMORY MY (0 A) (0 = B) (0 = C) (0 = D))\n" + OK_TAIL)
    assert "'='" in e.message and (e.line, e.col) == (4, 12)


def test_memory_keyword_must_have_rules():
    e = _error("(HI)\nSTART\n(MEMORY MY (0 = A) (0 = B) (0 = C) (0 = D))\n" + OK_TAIL)
    assert "ordinary keyword" in e.message


def test_duplicate_keyword():
    e = _error("(HI)\nSTART\n(A ((0) (X)))\n(A ((0) (Y)))\n" + OK_TAIL)
    assert "defined twice" in e.message and "line 3" in e.message and e.line == 4


def test_unexpected_word_in_a_keyword_list():
    e = _error("(HI)\nSTART\n(A = B 3 OOPS ((0) (X)))\n" + OK_TAIL)
    assert "OOPS" in e.message and (e.line, e.col) == (3, 10)


def test_bad_pattern_sublist():
    e = _error("(HI)\nSTART\n(A ((0 (WANT NEED) 0) (X)))\n" + OK_TAIL)
    assert "* (alternatives) or / (tags)" in e.message and (e.line, e.col) == (3, 8)


def test_decomposition_without_reassembly():
    e = _error("(HI)\nSTART\n(A ((0 A 0)))\n" + OK_TAIL)
    assert "no reassembly" in e.message


def test_bad_pre():
    e = _error("(HI)\nSTART\n(A ((0) (PRE (X 1))))\n" + OK_TAIL)
    assert "PRE" in e.message


def test_text_after_end_marker():
    e = _error("(HI)\nSTART\n" + OK_TAIL + "(LATE ((0) (X)))\n")
    assert "end marker" in e.message and e.line == 5


def test_word_at_top_level():
    e = _error("(HI)\nSTART\nHELLO\n" + OK_TAIL)
    assert "HELLO" in e.message and (e.line, e.col) == (3, 1)


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
