"""`turinglab bots --strategy adversarial`: the bots' scripted interrogators ask the adversarial
bank of their seed (bots/adversarial.py), through the real command line, server and store."""

from __future__ import annotations

import random

from typer.testing import CliRunner

from turinglab.bots import adversarial
from turinglab.bots.interrogator import STRATEGIES, ScriptedInterrogator
from turinglab.cli import app
from turinglab.game import events as ev
from turinglab.store import Store

runner = CliRunner()
STUDY = """\
name: bots-cli
version: 1
rules: {time_limit_s: 20, typing_min_s: 0.1, typing_jitter_s: 0.1}
witnesses:
  - codename: Eliza
    kind: eliza
    timing: {base_s: 0.05, s_per_char: 0.002, gamma_shape: 1.0, gamma_scale: 0.01}
allocation: {human_ratio: 0.0, ai_fallback_mean_s: 0.2, ai_fallback_noise_sigma: 0.01}
"""


def _asked(url: str) -> list[str]:
    with Store(url) as store:
        return [e.payload["text"] for g in store.games() for e in store.events(g.id)
                if e.type == ev.MESSAGE and e.actor == ev.INTERROGATOR]


def test_bots_strategy_adversarial_asks_each_bots_seeded_bank(tmp_path):
    (tmp_path / "s.yaml").write_text(STUDY, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'b.db'}"
    res = runner.invoke(app, ["bots", "--study", str(tmp_path / "s.yaml"), "--db", url, "--games", "2",
                              "--parallel", "2", "--turns", "4", "--strategy", "adversarial", "--seed", "11"])
    assert res.exit_code == 0, res.output
    assert "2/2 bots finished" in res.output
    asked = _asked(url)
    # each bot's script is its seed's adversarial plan (play.py draws the interrogator's seed from the bot's)
    plans = [ScriptedInterrogator(random.Random(11 + i).randrange(2**31), "adversarial").questions(4) for i in (0, 1)]
    assert sorted(asked) == sorted(q for p in plans for _, q in p)
    assert {f for p in plans for f, _ in p} - {"small_talk"} <= set(adversarial.FAMILIES)
    adv = [q for p in plans for f, q in p if f != "small_talk"]
    assert len(adv) == 6 and not {q for qs in STRATEGIES.values() for q in qs} & set(adv)


def test_bots_default_strategy_is_unchanged_and_a_bad_one_is_named(tmp_path):
    (tmp_path / "s.yaml").write_text(STUDY, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'b.db'}"
    res = runner.invoke(app, ["bots", "--study", str(tmp_path / "s.yaml"), "--db", url, "--games", "1", "--turns", "3"])
    assert res.exit_code == 0, res.output
    default = {q for qs in STRATEGIES.values() for q in qs}
    assert len(_asked(url)) == 3 and set(_asked(url)) <= default
    bad = runner.invoke(app, ["bots", "--games", "1", "--strategy", "nasty"])
    assert bad.exit_code != 0 and "--strategy must be one of default, adversarial, got 'nasty'" in bad.output
    llm = runner.invoke(app, ["bots", "--games", "1", "--interrogator", "llm", "--strategy", "adversarial"])
    assert llm.exit_code != 0 and "--interrogator scripted" in llm.output
