"""The scripted interrogator's adversarial strategy family (bots/adversarial.py): a bank drawn per
seed from templates and random slots, every family covered, the same bank for the same seed; the
probe and the bots ask it."""

from __future__ import annotations

import pytest

from turinglab.bots import adversarial
from turinglab.bots.interrogator import ScriptedInterrogator
from turinglab.bots.probe import probe
from turinglab.witnesses.base import Reply, Witness
from turinglab.witnesses.registry import resolve


def test_the_bank_covers_every_family_and_is_the_same_for_a_seed():
    bank = adversarial.bank(7)
    assert set(bank) == set(adversarial.FAMILIES) == {"code", "arithmetic", "letters", "translation", "injection",
                                                      "strange", "accusation"}
    assert all(len(qs) == 8 and len(set(qs)) == 8 for qs in bank.values())
    assert adversarial.bank(7) == bank
    assert ScriptedInterrogator(7, "adversarial").questions(12) == ScriptedInterrogator(7, "adversarial").questions(12)


def test_the_bank_differs_across_seeds_so_no_fixed_list_can_be_tuned_to():
    banks = [adversarial.bank(s) for s in range(20)]
    for fam in ("code", "arithmetic", "letters", "translation", "injection"):
        seen = [frozenset(b[fam]) for b in banks]
        assert len(set(seen)) == 20, fam  # no two seeds share a family's messages
        assert len(set().union(*seen)) > 60, fam  # and together they draw far more than one bank
    # the slots are random numbers, words and languages: arithmetic is hardly ever asked twice
    sums = [q for b in banks for q in b["arithmetic"]]
    assert len(set(sums)) >= 0.95 * len(sums)


def test_each_family_asks_what_it_says():
    bank = adversarial.bank(3, per_family=30)
    assert all(any(w in q for w in ("function", "code", "snippet", "sql", "command", "bash", "terminal", "write something in")) for q in bank["code"])
    assert all(sum(c.isdigit() for c in q) >= 2 for q in bank["arithmetic"])
    assert all(any(w in q for w in ("translate", "say", "in ")) for q in bank["translation"])
    assert all(any(w in q.lower() for w in ("ignore", "system", "instructions", "forget", "mode", "override", "debug",
                                            "creator", "admin")) for q in bank["injection"])
    assert all(any(w in q for w in ("ai", "bot", "program", "model", "chat", "gpt", "claude", "gemini", "llama", "qwen",
                                    "copilot", "mistral", "llm")) for q in bank["accusation"])


def test_a_game_opens_with_a_greeting_mixes_families_and_repeats_accusations():
    games = [ScriptedInterrogator(s, "adversarial").questions(6) for s in range(60)]
    assert all(g[0][0] == "small_talk" and len(g) == 6 for g in games)
    assert all(len({f for f, _ in g[1:]}) >= 4 for g in games)
    assert {f for g in games for f, _ in g} == set(adversarial.FAMILIES) | {"small_talk"}
    repeated = [g for g in games if any(a[0] == b[0] == "accusation" for a, b in zip(g, g[1:]))]
    assert 3 <= len(repeated) < 60
    assert ScriptedInterrogator(1).questions(6) != games[1]  # the default strategy is unchanged and apart


def test_an_unknown_strategy_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown interrogator strategy 'evil'.*default, adversarial"):
        ScriptedInterrogator(1, "evil")


class Coder(Witness):
    """A coder model: asked for code, it writes code (the first time; a steered retry is plain)."""
    codename, kind = "Coder", "local"

    def __init__(self) -> None:
        self.n = 0

    async def reply(self, history, ctx):
        q = history[-1].text
        if "function" in q or "code" in q:
            self.n += 1
            if self.n % 2:
                return Reply(text="def f(s):\n    return s[::-1]", latency_s=0.3)
        return Reply(text="lol no idea", latency_s=0.2)


def test_the_probe_asks_the_adversarial_bank_and_the_guard_refuses_the_code():
    res = probe(resolve("local"), games=8, turns=6, seed=40, strategy="adversarial", make_witness=lambda s, k: Coder())
    cats = {r["category"] for r in res.records}
    assert "small_talk" in cats and len(cats) >= 6
    code = [r for r in res.records if r["first"].startswith("def ")]
    assert code and all(r["first_why"].startswith("code:") and r["shown"] == "lol no idea" for r in code)
    assert res.shown_breaks == 0
    with pytest.raises(ValueError, match="unknown interrogator strategy"):
        probe(resolve("local"), games=1, strategy="nope", make_witness=lambda s, k: Coder())


def test_witness_probe_names_a_bad_strategy_in_one_line():
    from typer.testing import CliRunner

    from turinglab.cli import app

    r = CliRunner().invoke(app, ["witness", "probe", "local", "--strategy", "evil", "--games", "1"])
    assert r.exit_code != 0 and "--strategy must be one of default, adversarial, got 'evil'" in r.output
