"""Study files: presets, overrides, and errors that name the field, the line and the fix."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from turinglab.game.config import config_hash
from turinglab.game.study_file import (
    EXAMPLE_STUDY,
    StudyFileError,
    dotted,
    load_preset,
    load_study,
    parse_study,
    preset_names,
)


def problems(text: str) -> list[str]:
    with pytest.raises(StudyFileError) as err:
        parse_study(text, source="s.yaml")
    assert str(err.value).startswith("s.yaml: invalid study file")
    return err.value.problems


def test_presets_have_the_papers_numbers():
    assert {"jones-bergen-2023", "jones-bergen-2025"} <= set(preset_names())
    a, b = load_preset("jones-bergen-2023"), load_preset("jones-bergen-2025")
    assert (a.format, a.rules.time_limit_s, a.rules.max_chars) == ("two-player", 300, 300)
    assert (b.format, b.rules.time_limit_s, b.rules.max_chars) == ("three-player", 300, 300)
    assert a.rules.block_paste and a.rules.interrogator_first and a.rules.strict_alternation
    assert (a.rules.typing_min_s, a.rules.typing_jitter_s) == (2, 3)
    t = a.witnesses[0].timing
    assert (t.base_s, t.s_per_char, t.gamma_shape, t.gamma_scale) == (1.0, 0.3, 2.5, 0.25)


def test_preset_overridden_field_by_field():
    s = parse_study("preset: jones-bergen-2023\nname: mine\nrules:\n  time_limit_s: 120\n")
    base = load_preset("jones-bergen-2023")
    assert s.name == "mine" and s.preset == "jones-bergen-2023"
    assert s.rules.time_limit_s == 120 and s.rules.max_chars == base.rules.max_chars
    assert s.witnesses == base.witnesses and s.format == "two-player"


def test_example_file_loads_and_hash_is_stable(tmp_path):
    s = load_study(EXAMPLE_STUDY)
    assert s.rules.time_limit_s == 180 and [w.codename for w in s.witnesses] == ["ELIZA", "Sierra"]
    copy = tmp_path / "copy.yaml"
    copy.write_text("# reformatted\n" + EXAMPLE_STUDY.read_text().replace("time_limit_s: 180", "time_limit_s: 180.0"))
    assert config_hash(load_study(copy)) == config_hash(s)


def test_field_errors_name_path_line_and_fix():
    text = (
        "name: x\n"
        "witnesses:\n"
        "  - codename: A\n"
        "    kind: eliza\n"
        "  - codename: B\n"
        "    kind: llm\n"
        "    model: m\n"
        "    temperature: 3.5\n"
        "rules:\n"
        "  time_limt_s: 3\n"
    )
    got = problems(text)
    assert "witnesses[1].temperature (line 8): Input should be less than or equal to 2 (got 3.5)" in got
    assert "rules.time_limt_s (line 10): unknown field; did you mean 'time_limit_s'?" in got


def test_other_errors():
    assert problems("name: [x\n")[0].startswith("line 2, column 1: YAML syntax error")
    assert problems("name: x\nname: y\n") == ["line 2: field 'name' appears twice (first on line 1); keep one"]
    assert "available: jones-bergen-2023" in problems("preset: nope\n")[0]
    got = problems("format: four\n")
    assert any(p.startswith("name: required field is missing") for p in got)
    assert any(p.startswith("format (line 1)") and "'two-player'" in p for p in got)
    assert "not a list" in problems("- a\n")[0]
    assert "empty" in problems("")[0]
    assert "Dragon" in problems("name: x\nwitnesses: [{codename: Dragon, kind: eliza}, {codename: Dragon, kind: eliza}]\n")[0]
    with pytest.raises(StudyFileError, match="no such file"):
        load_study("/nonexistent/study.yaml")


def test_error_in_a_list_item_points_at_its_line():
    got = problems("preset: jones-bergen-2023\nname: x\nwitnesses:\n  - {codename: Bad, kind: robot}\n")
    assert got[0].startswith("witnesses[0].kind (line 4)")


def test_dotted():
    assert dotted(("witnesses", 1, "timing", "s_per_char")) == "witnesses[1].timing.s_per_char"
    assert dotted(()) == ""


_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 500) | st.floats(-1, 1e4, allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
_keys = st.sampled_from(["name", "format", "preset", "rules", "witnesses", "allocation", "version", "timing",
                         "time_limit_s", "max_chars", "codename", "kind", "temperature", "exclusions", "x"])


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_any_text_is_a_study_or_a_clear_error(text):
    try:
        parse_study(text)
    except StudyFileError as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(_keys, _values | st.dictionaries(_keys, _values, max_size=4), max_size=6))
def test_any_mapping_is_a_study_or_a_clear_error(data):
    try:
        parse_study(yaml.safe_dump(data))
    except StudyFileError as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
