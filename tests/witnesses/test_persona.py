"""Persona prompts: time zones, time left, recent events, templates, clear errors."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

import pytest

from turinglab.witnesses.base import GameContext
from turinglab.witnesses.persona import (
    Event,
    PersonaError,
    load_events,
    persona_context,
    recent_events,
    render,
    shipped_prompts,
)

# 23:58 UTC on 31 Dec: already 1 January in Tokyo, still 31 December afternoon in Chicago
START = datetime(2025, 12, 31, 23, 58, tzinfo=timezone.utc)


def ctx(elapsed_s: float = 0, limit: float = 300) -> GameContext:
    return GameContext(game_id="g", started_at=START, now=START + timedelta(seconds=elapsed_s),
                       time_limit_s=limit, max_chars=300)


def test_times_are_in_the_persona_time_zone():
    tokyo = persona_context({"timezone": "Asia/Tokyo"}, ctx(90))
    chicago = persona_context({"timezone": "America/Chicago"}, ctx(90))
    assert tokyo["start_time"] == "Thursday 1 January 2026, 8:58 am"
    assert tokyo["now_time"] == "Thursday 1 January 2026, 8:59 am"
    assert chicago["start_time"] == "Wednesday 31 December 2025, 5:58 pm"


def test_daylight_saving_is_respected():
    summer = GameContext(game_id="g", started_at=datetime(2026, 7, 1, 12, 0, tzinfo=timezone.utc),
                         now=datetime(2026, 7, 1, 12, 0, tzinfo=timezone.utc), time_limit_s=300, max_chars=300)
    assert persona_context({"timezone": "Europe/London"}, summer)["start_time"].endswith("1:00 pm")


@pytest.mark.parametrize(("elapsed", "left"), [(0, "5 minutes"), (30, "4 minutes 30 seconds"),
                                               (299, "1 second"), (400, "0 seconds")])
def test_time_left(elapsed, left):
    assert persona_context({}, ctx(elapsed))["time_left"] == left


def test_recent_events_window_order_and_future():
    evs = [Event(date(2025, 12, 1), "old"), Event(date(2025, 12, 20), "a"), Event(date(2025, 12, 30), "b"),
           Event(date(2026, 1, 5), "future")]
    shown = recent_events(evs, date(2025, 12, 31), days=14)
    assert [e.text for e in shown] == ["b", "a"]


def test_events_file_filtered_by_the_persona_local_date(tmp_path):
    f = tmp_path / "events.yaml"
    f.write_text("- {date: 2026-01-01, text: New year fireworks in Tokyo Bay}\n"
                 "- {date: 2025-11-01, text: Something long ago}\n")
    tokyo = render("young", {"timezone": "Asia/Tokyo", "events": str(f)}, ctx())
    chicago = render("young", {"timezone": "America/Chicago", "events": str(f)}, ctx())
    assert "fireworks" in tokyo  # it is already 1 January there
    assert "fireworks" not in chicago  # still 31 December: the event has not happened yet
    assert "long ago" not in tokyo


def test_bad_events_file_says_what_to_fix(tmp_path):
    f = tmp_path / "e.yaml"
    f.write_text("- {date: 31/12/2025, text: x}\n")
    with pytest.raises(PersonaError, match="YYYY-MM-DD"):
        load_events(f)
    f.write_text("- {text: no date}\n")
    with pytest.raises(PersonaError, match="entry 1"):
        load_events(f)
    with pytest.raises(PersonaError, match="cannot read"):
        load_events(tmp_path / "missing.yaml")


@pytest.mark.parametrize("name", ["young", "baseline", "ai-aware"])
def test_shipped_prompts_render(name):
    assert name in shipped_prompts()
    text = render(name, {"name": "Robin", "city": "Leeds"}, ctx(60))
    assert "{{" not in text and "{%" not in text and len(text) > 80
    if name != "baseline":
        assert "Robin" in text and "Leeds" in text and "4 minutes" in text


def test_persona_overrides_and_custom_template(tmp_path):
    t = tmp_path / "mine.j2"
    t.write_text("I am {{ persona.name }} ({{ persona.languages | join('/') }}), {{ persona.hobby }}.")
    out = render(str(t), {"name": "Ana", "languages": ["Spanish", "English"], "hobby": "chess"}, ctx())
    assert out == "I am Ana (Spanish/English), chess."


def test_errors_name_the_problem(tmp_path):
    with pytest.raises(PersonaError, match="unknown prompt 'nope'.*young"):
        render("nope", {}, ctx())
    with pytest.raises(PersonaError, match="IANA"):
        render("young", {"timezone": "Mars/Olympus"}, ctx())
    t = tmp_path / "x.j2"
    t.write_text("{{ persona.pet }}")
    with pytest.raises(PersonaError, match="pet"):
        render(str(t), {}, ctx())


def test_custom_templates_are_sandboxed(tmp_path):
    t = tmp_path / "evil.j2"
    t.write_text("{{ persona.name.__class__.__mro__[1].__subclasses__() }}")
    with pytest.raises(PersonaError, match="unsafe|access"):
        render(str(t), {}, ctx())
    t.write_text("{% if %}")
    with pytest.raises(PersonaError, match="evil.j2"):
        render(str(t), {}, ctx())


def test_witness_events_from_env_or_persona(tmp_path, monkeypatch):
    from turinglab.game.config import WitnessSpec
    from turinglab.witnesses.llm import LLMWitness

    today = START.date().isoformat()
    env_file, own_file = tmp_path / "env.yaml", tmp_path / "own.yaml"
    env_file.write_text(f"- {{date: {today}, text: from the environment}}\n")
    own_file.write_text(f"- {{date: {today}, text: from the persona}}\n")
    monkeypatch.setenv("TURINGLAB_EVENTS", str(env_file))
    plain = LLMWitness(WitnessSpec(codename="A", kind="local", persona={"timezone": "UTC"}))
    own = LLMWitness(WitnessSpec(codename="B", kind="local", persona={"timezone": "UTC", "events": str(own_file)}))
    assert "from the environment" in plain.system_prompt(ctx())
    assert "from the persona" in own.system_prompt(ctx()) and "environment" not in own.system_prompt(ctx())
    monkeypatch.setenv("TURINGLAB_EVENTS", str(tmp_path / "missing.yaml"))
    with pytest.raises(PersonaError, match="missing.yaml"):
        LLMWitness(WitnessSpec(codename="C", kind="local"))


def test_templates_are_compiled_once_and_again_when_the_file_changes(tmp_path):
    from turinglab.witnesses import persona

    assert persona._template("young") is persona._template(None)  # the default, compiled once
    assert shipped_prompts() is not shipped_prompts() and shipped_prompts() == shipped_prompts()
    t = tmp_path / "mine.j2"
    t.write_text("I am {{ persona.name }}.")
    first = persona._template(str(t))
    assert persona._template(str(t)) is first
    t.write_text("Call me {{ persona.name }}!")
    assert render(str(t), {"name": "Ana"}, ctx()) == "Call me Ana!"
