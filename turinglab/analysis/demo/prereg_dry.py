"""The plan of a pre-registration from a study file (issue 42 item 7): the planned sample from the
exact power analysis, then the report's own analysis run on a synthetic study of that design and
size, so that the list of analyses (tests, models, corrections) is what the report runs, not a
list written by hand. Live studies: `synth.simulate` + `analysis.live.core.analyse`; static
studies: a synthetic trial table + `analysis.static.report.analyse_static`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from turinglab.analysis.report import prereg
from turinglab.analysis.report.prereg_check import live_analyses, static_analyses

AUDIT_MAX_GAMES = 2000  # `turinglab report`'s default --audit-max-games


def live_settings(study: Any, alpha: float, audit: bool = True, audit_max_games: int = AUDIT_MAX_GAMES,
                  exclude: list[str] | None = None, include_bots: bool = False) -> dict[str, Any]:
    """The analysis settings a report of this study uses (`turinglab report`'s defaults); `exclude`
    None: the study's exclusions and `withdrawn`, as analysis/live/load.py gives them."""
    from turinglab.analysis.live.core import Options

    o = Options()
    return {"alpha": alpha, "exclude": list(exclude) if exclude is not None else [*study.exclusions, "withdrawn"],
            "pass_decisions": study.pass_decisions or "holm",
            "closed_criterion": True if study.criteria is None else study.criteria.closed,
            "include_bots": include_bots, "audit": audit, "audit_max_games": audit_max_games if audit else None,
            "n_boot": o.n_boot, "seed": o.seed, "max_games_mixed": o.max_games_mixed, "max_games_gee": o.max_games_gee}


def live_plan(study: Any, *, alpha: float = 0.05, rate: float = 0.6, threshold: float = 0.5, target: float = 0.8,
              audit: bool = True) -> dict[str, Any]:
    """The pre-registration plan of a live study (game.config.Study)."""
    from turinglab.analysis.demo.synth import SynthSpec, simulate
    from turinglab.analysis.live.core import Options, analyse
    from turinglab.game.config import canonical_json, config_hash
    import json

    settings = live_settings(study, alpha, audit)
    names = [w.codename for w in study.witnesses]
    sample = prereg.planned_sample(fmt=study.format, witnesses=names,
                                   human_ratio=study.allocation.human_ratio, rate=rate, threshold=threshold,
                                   target=target, alpha=alpha, family=settings["pass_decisions"])
    analyses: list[dict[str, Any]] = []
    if names:  # the report's analysis of a synthetic study of this design, at the planned size
        spec = SynthSpec(n_games=sample["games"], rates={w: rate for w in names}, human_rate=threshold,
                         format=study.format, human_share=sample["human_games"] / sample["games"],
                         adaptive=study.allocation.witness_policy == "thompson", seed=0, study=study.name)
        judgements, participants = simulate(spec)
        present = tuple(f for f in settings["exclude"] if "flag_" + f in judgements.columns)
        opt = Options(alpha=alpha, exclude=present, pass_decisions=settings["pass_decisions"],
                      closed_criterion=settings["closed_criterion"], language=study.language)
        a = analyse(judgements, participants, opt, witnesses=study.witnesses)
        analyses = live_analyses(a, audit=audit, beliefs=study.rules.belief_tracking)
    return prereg.plan(kind="live", name=study.name, version=study.version, config_hash=config_hash(study),
                       config=json.loads(canonical_json(study)), fmt=study.format, witnesses=names,
                       settings=settings, sample=sample, exclusions=prereg.exclusion_rules(settings["exclude"]),
                       analyses=analyses, closed=settings["closed_criterion"])


def static_settings(alpha: float) -> dict[str, Any]:
    return {"alpha": alpha}


def static_plan(study: Any, *, agents: list[str] | None = None, alpha: float = 0.05, rate: float = 0.6,
                threshold: float = 0.5, target: float = 0.8) -> dict[str, Any]:
    """The pre-registration plan of a static study (game.static_config.StaticStudy); `agents`: the
    machine agents whose items the study will show (the study file does not name them)."""
    import json
    import math

    from turinglab.analysis.static.report import analyse_static
    from turinglab.game.static_config import static_hash

    agents = list(agents or ["each agent"])
    # Zhang's agents are separate hypotheses, each decided at α (the static report adjusts none)
    sample = prereg.planned_sample(fmt="static", witnesses=agents, human_ratio=0.0, rate=rate,
                                   threshold=threshold, target=target, alpha=alpha, family="per-witness")
    ses = study.session
    per_judge = ses.items * (1 - ses.human_share) / len(agents)  # machine items per agent per judge
    judges = math.ceil(sample["per_witness"] / per_judge) if per_judge > 0 else 0
    for key in ("ai_games", "human_games", "games"):  # a static study plans judges and items, not games
        sample.pop(key)
    sample.update(judges=judges, items_per_judge=ses.items)
    a = analyse_static(_trials(study, agents, judges, rate, threshold), None, study=study.name, task=study.task,
                       alpha=alpha, exclusions=study.exclusions)
    ex = study.exclusions
    rules = [{"flag": "control", "rule": f"control (vigilance) accuracy below {ex.min_control_accuracy}"},
             {"flag": "fast", "rule": f"more than {ex.max_fast_share:.0%} of answers faster than {ex.fast_rt_ms} ms"}]
    if ex.native_language:
        rules.append({"flag": "native", "rule": f"not a native speaker of {ex.native_language}"})
    if study.task == "conversation":
        rules.append({"flag": "topic", "rule": "Zhang's topic-control rule (judges and trials)"})
    if study.drop_failed_controls:
        rules.append({"flag": "failed_control", "rule": "a trial whose control answer is wrong does not count"})
    return prereg.plan(kind="static", name=study.name, version=study.version, config_hash=static_hash(study),
                       config=json.loads(json.dumps(study.model_dump(mode="json"))), fmt=study.task, witnesses=agents,
                       settings=static_settings(alpha), sample=sample, exclusions=rules,
                       analyses=static_analyses(a))


def _trials(study: Any, agents: list[str], judges: int, rate: float, human_rate: float) -> pd.DataFrame:
    """A synthetic trial table of the design: each judge rates `session.items` items, the human
    share of them human, the rest spread over the agents."""
    rng = np.random.default_rng(0)
    ses = study.session
    n_h = int(round(ses.items * ses.human_share))
    per_agent = (ses.items - n_h) // max(1, len(agents))
    rows = []
    for j in range(max(judges, 2)):
        items = [("human", "") for _ in range(n_h)] + [("machine", a) for a in agents for _ in range(per_agent)]
        for truth, agent in items:
            p = human_rate if truth == "human" else rate
            rows.append({"judge_id": f"j{j}", "truth": truth, "agent": agent, "control": False,
                         "answer": "human" if rng.random() < p else "machine", "control_correct": None,
                         "rt_ms": 2000, "length": 3 if study.task == "conversation" else None})
    return pd.DataFrame(rows)
