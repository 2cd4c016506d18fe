"""`turinglab replicate`: the guide to the published studies, and every deviation of a study file
from a preset named (each setting of the papers' table in docs/protocol.md is checked)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.game.test_presets import paper_table, setting
from turinglab.game import replicate as rep
from turinglab.game.config import Study
from turinglab.game.study_file import load_preset, parse_study

GPT = ("witnesses:\n  - {codename: ELIZA, kind: eliza, timing: {base_s: 1.0, s_per_char: 0.3, gamma_shape: 2.5, "
       "gamma_scale: 0.25}}\n  - {codename: Dragon, kind: llm, model: gpt-4, prompt: young, timing: {base_s: 1.0, "
       "s_per_char: 0.3, gamma_shape: 2.5, gamma_scale: 0.25}}\n")


def _other(v):
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return v - 1
    if isinstance(v, float):
        return v / 2 if v else 0.5
    if isinstance(v, list):
        return v[:-1]
    return {"two-player": "three-player", "relay": "equalised", "thompson": "uniform", "groups": "uniform",
            "last": "first", "first": "last"}[v]


def _set(d: dict, dotted: str, value) -> None:
    *head, last = dotted.split(".")
    for k in head:
        d = d[k]
    d[last] = value


def test_a_study_as_published_has_no_deviation_and_every_table_setting_is_checked():
    s23 = parse_study("preset: jones-bergen-2023\nname: mine\n" + GPT)
    assert rep.deviations("jones-bergen-2023", s23) == []
    checked = 0
    for preset, key, _paper, _ in paper_table():
        if key.startswith("witnesses[") or key in ("allocation.witness_policy", "allocation.session_rounds", "format"):
            continue  # witnesses are checked by kind and timing; policy/rounds/format need other settings along
        d = load_preset(preset).model_dump(mode="json")
        _set(d, key, _other(setting(d, key)))
        found = rep.deviations(preset, Study.model_validate(d))
        assert any(line.startswith(f"{key}:") for line in found), (preset, key, found)
        checked += 1
    assert checked >= 25


def test_witness_deviations_are_named():
    s = parse_study("preset: jones-bergen-2023\nname: mine\npersona_draw: false\nwitnesses:\n"
                    "  - {codename: Dragon, kind: llm, model: gpt-4, timing: {s_per_char: 0.2}}\n")
    found = "\n".join(rep.deviations("jones-bergen-2023", s))
    assert "no ELIZA" in found and "Dragon: timing {'s_per_char': 0.2}" in found
    assert "Dragon: persona_draw is off" in found and "persona_draw: False where the paper has True" in found
    s25 = load_preset("jones-bergen-2025")
    assert rep.deviations("jones-bergen-2025", s25) == [
        "witnesses Local-NO-PERSONA, Local-PERSONA: the local model stands in for the paper's API models "
        "(GPT-4.5, LLaMa-3.1-405B, GPT-4o)"]
    one = parse_study("preset: jones-bergen-2025\nname: x\nwitnesses:\n  - {codename: ELIZA, kind: eliza, timing: "
                      "{base_s: 1.0, s_per_char: 0.3, gamma_shape: 2.5, gamma_scale: 0.25}}\n"
                      "  - {codename: G, kind: llm, model: gpt-4.5, prompt: young, timing: {base_s: 1.0, "
                      "s_per_char: 0.3, gamma_shape: 2.5, gamma_scale: 0.25}}\n"
                      "allocation: {witness_groups: [[ELIZA], [G]]}\n")
    assert any("gpt-4.5 has only the PERSONA condition" in x for x in rep.deviations("jones-bergen-2025", one))


def test_the_command(tmp_path):
    ok = tmp_path / "ok.yaml"
    ok.write_text("preset: jones-bergen-2023\nname: mine\n" + GPT, encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text("preset: jones-bergen-2023\nname: mine\nrules: {time_limit_s: 180}\n" + GPT, encoding="utf-8")
    run = lambda *a: subprocess.run([sys.executable, "-m", "turinglab", "replicate", *a],  # noqa: E731
                                    capture_output=True, text=True, env={**__import__("os").environ, "COLUMNS": "300"})  # wide: no wrapped paths
    r = run("jones-bergen-2025")
    assert r.returncode == 0 and "GPT-4.5 and LLaMa-3.1-405B" in r.stdout and "witness_groups" in r.stdout
    r = run("jones-bergen-2023", "--check", str(ok))
    assert r.returncode == 0 and "no deviation from jones-bergen-2023" in r.stdout
    r = run("jones-bergen-2023", "--check", str(bad))
    assert r.returncode == 1 and "rules.time_limit_s: 180.0 where the paper has 300.0" in r.stdout
    r = run("jones-bergen-2099")
    assert r.returncode == 2 and "unknown preset 'jones-bergen-2099'" in r.stderr
    r = run("jones-bergen-2023", "--check", str(tmp_path / "nope.yaml"))
    assert r.returncode == 2 and "no such file" in r.stderr
