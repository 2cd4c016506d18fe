"""Registry: named witnesses, resolution by name or codename, building every kind."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from turinglab.game.config import Postprocess, WitnessSpec
from turinglab.witnesses.base import GameContext, Turn, Witness
from turinglab.witnesses.human import HumanRelayWitness, WitnessLeft
from turinglab.witnesses.llm import LLMWitness
from turinglab.witnesses.registry import UnknownWitness, available, build_witness, resolve

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
CTX = GameContext(game_id="g", started_at=NOW, now=NOW, time_limit_s=300, max_chars=300)


@pytest.fixture
def no_llm(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def test_offline_names(no_llm):
    names = available()
    assert {"eliza", "local"} <= set(names)
    assert names["local"].kind == "local" and names["eliza"].kind == "eliza"
    assert "young" not in names  # LLM personas need an endpoint


def test_llm_personas_appear_when_configured(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TURINGLAB_LLM_MODEL", "my-model")
    names = available()
    assert {"young", "baseline", "ai-aware"} <= set(names)
    assert names["young"].model == "my-model" and names["young"].base_url == "http://127.0.0.1:9/v1"
    assert len({s.codename for s in names.values()}) == len(names)  # codenames are unique


def test_resolve_by_name_or_codename(no_llm):
    assert resolve("ELIZA").kind == "eliza"
    assert resolve(" Local ").codename == "Local"
    with pytest.raises(UnknownWitness) as err:
        resolve("gpt5")
    msg = str(err.value)
    assert "gpt5" in msg and "eliza" in msg and "local" in msg and "OPENAI_API_KEY" in msg


async def test_build_eliza_postprocessed():
    w = build_witness(WitnessSpec(codename="Doc", kind="eliza", postprocess=Postprocess(lowercase=True)), seed=1)
    assert isinstance(w, Witness) and w.codename == "Doc"
    await w.start(CTX)
    r = await w.reply([Turn("interrogator", "Men are all alike.", 0)], CTX)
    assert r.text and r.text == r.text.lower() and r.meta["raw"] != r.text


def test_build_llm_and_local(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    w = build_witness(WitnessSpec(codename="S", kind="llm", model="gpt-4o-mini"), seed=2)
    assert isinstance(w, LLMWitness) and w.kind == "llm"
    loc = build_witness(resolve("local"))
    assert isinstance(loc, LLMWitness) and loc.kind == "local" and loc.model == "local"


async def test_human_relay_awaits_the_message():
    import asyncio

    h = HumanRelayWitness(participant_id="p1")
    task = asyncio.create_task(h.reply([Turn("interrogator", "hi", 0)], CTX))
    await asyncio.sleep(0.05)
    assert not task.done()  # waits for the human
    h.submit("hello!")
    r = await task
    assert r.text == "hello!" and r.latency_s >= 0.04
    h.leave()
    with pytest.raises(WitnessLeft, match="p1"):
        await h.reply([], CTX)


def test_bad_prompt_fails_when_the_witness_is_built(monkeypatch):
    from turinglab.witnesses.persona import PersonaError

    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with pytest.raises(PersonaError, match="unknown prompt 'yung'"):
        build_witness(WitnessSpec(codename="S", kind="llm", model="m", prompt="yung"))
    with pytest.raises(PersonaError, match="IANA"):
        build_witness(WitnessSpec(codename="S", kind="local", persona={"timezone": "Nowhere/Land"}))
