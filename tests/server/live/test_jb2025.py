"""The jones-bergen-2025 preset as published: sessions of 8 rounds with rotating roles, the
witness groups of the pre-registration (PERSONA / NO-PERSONA per model, ELIZA), the −100…100
scale; over real websockets, and in Chromium through a participant's rounds with the reveal."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from tests.server.live.test_server import in_game, players, running
from turinglab.game.config import WitnessSpec
from turinglab.game.study_file import parse_study
from turinglab.matchmaking.room import WaitingRoom
from turinglab.store.api import Store
from turinglab.witnesses.registry import build_witness

STAND_IN = WitnessSpec(codename="Stand-in", kind="eliza", fallback=None)


def stand_in_factory(spec, seed):
    """The local model's witnesses answered by ELIZA (no model load on a shared test machine)."""
    return build_witness(spec if spec.kind == "eliza" else STAND_IN, seed=seed)


def preset_2025(name: str, extra: str = ""):
    return parse_study(f"preset: jones-bergen-2025\nname: {name}\n"
                       "rules: {typing_min_s: 0.1, typing_jitter_s: 0.1}\n" + extra)


def test_the_preset_holds_both_prompt_conditions_per_model_and_the_groups():
    s = preset_2025("p")
    prompts = {w.codename: (w.kind, w.prompt) for w in s.witnesses}
    assert prompts == {"ELIZA": ("eliza", None), "Local-NO-PERSONA": ("local", "no-persona"),
                       "Local-PERSONA": ("local", "young")}
    a = s.allocation
    assert a.witness_policy == "groups" and a.session_rounds == 8 and s.rules.confidence_min == -100
    with pytest.raises(ValueError, match="leaves out Local-PERSONA"):
        preset_2025("p", "allocation: {witness_groups: [[ELIZA], [Local-NO-PERSONA]]}\n")
    with pytest.raises(ValueError, match="'GPT'"):
        preset_2025("p", "allocation: {witness_groups: [[ELIZA, GPT], [Local-NO-PERSONA], [Local-PERSONA]]}\n")


def test_groups_each_interrogator_meets_every_group_before_any_twice():
    s = preset_2025("g", "allocation: {witness_groups: [[ELIZA], [Local-NO-PERSONA, Local-PERSONA]]}\n")
    room = WaitingRoom(s, np.random.default_rng(3))
    for k in range(400):
        pid = f"p{k % 20}"
        slot, _ = room._ai_slot(pid)
        seen = room.faced[pid]
        assert max(seen.values()) - min(seen.get(i, 0) for i in range(2)) <= 1
        # the probability of this draw: the group among the least-met ones, then the witness in it
        assert slot.selection_prob in (1.0, 0.5, 0.25)
    picks = Counter(room._ai_slot(f"q{k}")[0].witness for k in range(3000))  # newcomers: both groups even
    assert abs(picks["ELIZA"] / 3000 - 0.5) < 0.04
    assert abs(picks["Local-PERSONA"] / 3000 - 0.25) < 0.04


async def test_a_session_of_8_rounds_rotates_roles_and_then_is_done(sqlite_url):
    s = preset_2025("rounds")
    with running(s, sqlite_url, witness_factory=stand_in_factory) as base:
        a, b = await players(base, 2)
        for rnd in range(8):
            seats = await in_game([a, b])
            i = seats["interrogator"]
            (hseat,) = [k for k in seats if k != "interrogator"]
            conf = (30 + 10 * rnd) * (-1 if hseat == "A" else 1)  # directional: the human seat's side
            await i.send({"type": "verdict", "choice": hseat, "confidence": conf})
            for p in (a, b):
                st = await p.phase("reveal")
                assert st["game"]["verdict"]["confidence"] == conf
            for p in (a, b):
                await p.send({"type": "join"})
        for p in (a, b):
            st = await p.phase("done")
            assert st["participant"]["games_played"] == 8 and st["game"] is None
        await a.send({"type": "join"})  # no ninth round
        st = await a.phase("done")
    with Store(sqlite_url) as store:
        games = store.games()
        assert len(games) == 8
        as_i = Counter(g.interrogator_id for g in games)
        assert as_i == {a.pid: 4, b.pid: 4}  # each interrogates half of their rounds
        groups = {"ELIZA": 0, "Local-NO-PERSONA": 1, "Local-PERSONA": 2}
        for pid in (a.pid, b.pid):
            met = Counter(groups[ident.witness] for g in games if g.interrogator_id == pid
                          for ident in g.seats.values() if ident.kind == "ai")
            assert set(met) == {0, 1, 2} and sorted(met.values()) == [1, 1, 2]
        for g in games:
            (ai,) = [x for x in g.seats.values() if x.kind == "ai"]
            assert ai.selection_prob in (1.0, 1 / 2, 1 / 3)
            assert g.verdict is not None and -100 <= g.verdict.confidence <= 100


def test_a_cluster_refuses_the_sessions_it_cannot_keep(sqlite_url):
    from turinglab.server.app import create_app

    with pytest.raises(ValueError, match="single server process"):
        create_app(preset_2025("cl"), sqlite_url, redis_url="redis://127.0.0.1:6379/9")
