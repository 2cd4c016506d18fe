import pytest
from pydantic import ValidationError

from turinglab.game.config import Study, WitnessSpec, config_hash


def test_hash_ignores_key_order_but_not_values():
    a = Study.model_validate({"name": "s", "rules": {"time_limit_s": 300, "max_chars": 300}})
    b = Study.model_validate({"rules": {"max_chars": 300, "time_limit_s": 300}, "name": "s"})
    c = Study.model_validate({"name": "s", "rules": {"time_limit_s": 301}})
    assert config_hash(a) == config_hash(b)
    assert config_hash(a) != config_hash(c)


def test_unknown_field_is_refused_with_its_name():
    with pytest.raises(ValidationError) as err:
        Study.model_validate({"name": "s", "rules": {"time_limt_s": 10}})
    assert "time_limt_s" in str(err.value)


def test_duplicate_codenames_refused():
    w = {"codename": "Dragon", "kind": "eliza"}
    with pytest.raises(ValidationError, match="Dragon"):
        Study.model_validate({"name": "s", "witnesses": [w, w]})


def test_llm_witness_needs_model():
    with pytest.raises(ValidationError, match="model"):
        WitnessSpec(codename="Sierra", kind="llm")


def test_criteria_closed_is_a_study_setting_that_leaves_old_hashes_alone():
    plain = Study.model_validate({"name": "s"})
    assert plain.criteria is None and '"criteria"' not in __import__("turinglab.game.config", fromlist=["x"]).canonical_json(plain)
    open_ = Study.model_validate({"name": "s", "criteria": {"closed": False}})
    assert open_.criteria.closed is False and config_hash(open_) != config_hash(plain)
    with pytest.raises(ValidationError, match="closd"):
        Study.model_validate({"name": "s", "criteria": {"closd": False}})
