"""Judge trials of a static study as one table, and the `static summary` numbers.

`trial_table(store, study_id)` reads every trial with its item (truth, agent, task fields) and
its judge's demographics in one query. `summary(df)` gives the CLI contract:

    {"trials", "judges", "confusion": {truth: {answer: n}},
     "agents": [{"agent", "n", "judged_human", "judged_human_rate": {"estimate", "low", "high"}}]}

`confusion[truth][answer]`; agents are the machine agents as named in the source data, then
one pooled "human" row (every human-produced item); rates carry an exact (Clopper-Pearson)
interval at `alpha`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from sqlalchemy import select

from turinglab.stats import interval
from turinglab.store.models import ParticipantRow, ResponseRow, StimulusRow
from turinglab.store.models import JudgeTrialRow as T

COLUMNS = ["trial_id", "judge_id", "seq", "phase", "answer", "rt_ms", "feedback_shown", "control_correct",
           "response_id", "truth", "agent", "control", "stimulus", "length"]


def trial_table(store: Any, study_id: int) -> pd.DataFrame:
    """One row per trial (see COLUMNS; `length` is a conversation chunk's exchanges, else NaN),
    plus `judged_human` and `correct` (0/1). Trials and items are read apart and joined here
    (the items are few; a study may have millions of trials)."""
    tq = (select(T.id, T.judge_id, T.seq, T.phase, T.answer, T.rt_ms, T.feedback_shown, T.control_correct,
                 T.response_id).where(T.study_id == study_id).order_by(T.id))
    iq = (select(ResponseRow.id, ResponseRow.truth, ResponseRow.agent, ResponseRow.control, StimulusRow.key,
                 ResponseRow.payload).join(StimulusRow, ResponseRow.stimulus_id == StimulusRow.id)
          .where(ResponseRow.study_id == study_id))
    with store.engine.connect() as conn:
        trials = pd.DataFrame(conn.execute(tq).all(), columns=COLUMNS[:9])
        items = pd.DataFrame([r[:5] + ((r[5] or {}).get("length"),) for r in conn.execute(iq).all()],
                             columns=["response_id", *COLUMNS[9:]])
    df = trials.merge(items, on="response_id", how="left", sort=False)
    df["judged_human"] = (df["answer"] == "human").astype(np.int64)
    df["correct"] = (df["answer"] == df["truth"]).astype(np.int64)
    return df


def judge_table(store: Any, judge_ids: list[str]) -> pd.DataFrame:
    """Judges' demographics (one column per field), indexed by judge id."""
    out: dict[str, dict[str, Any]] = {}
    with store.engine.connect() as conn:
        for i in range(0, len(judge_ids), 500):
            q = select(ParticipantRow.id, ParticipantRow.demographics).where(ParticipantRow.id.in_(judge_ids[i:i + 500]))
            out.update((pid, dict(d or {})) for pid, d in conn.execute(q).all())
    return pd.DataFrame.from_dict(out, orient="index")


def rate(k: int, n: int, alpha: float = 0.05) -> dict[str, float | None]:
    if n == 0:
        return {"estimate": None, "low": None, "high": None}
    ci = interval(int(k), int(n), alpha, "clopper-pearson")
    return {"estimate": k / n, "low": float(ci.low), "high": float(ci.high)}


def confusion(df: pd.DataFrame) -> dict[str, dict[str, int]]:
    """confusion[truth][answer] counts."""
    out = {t: {a: 0 for a in ("human", "machine")} for t in ("human", "machine")}
    if len(df):
        for (t, a), n in df.groupby(["truth", "answer"]).size().items():
            out[str(t)][str(a)] = int(n)
    return out


def agent_rates(df: pd.DataFrame, alpha: float = 0.05) -> list[dict[str, Any]]:
    """Each machine agent (as named in the source), then the pooled human items."""
    rows = []
    machine = df[df["truth"] == "machine"]
    if len(machine):
        g = machine.groupby("agent")["judged_human"].agg(["size", "sum"])
        for agent, (n, k) in g.iterrows():
            rows.append({"agent": str(agent), "truth": "machine", "n": int(n), "judged_human": int(k),
                         "judged_human_rate": rate(int(k), int(n), alpha)})
    human = df[df["truth"] == "human"]
    if len(human):
        n, k = len(human), int(human["judged_human"].sum())
        rows.append({"agent": "human", "truth": "human", "n": n, "judged_human": k,
                     "judged_human_rate": rate(k, n, alpha)})
    return rows


def summary(df: pd.DataFrame, alpha: float = 0.05, *, study: str | None = None, task: str | None = None) -> dict[str, Any]:
    """The `turinglab static summary --json` object (control items excluded from the confusion
    and the agents; counted in `control_trials`)."""
    main = df[~df["control"].astype(bool)]
    c = confusion(main)
    n_h = c["human"]["human"] + c["human"]["machine"]
    n_m = c["machine"]["human"] + c["machine"]["machine"]
    tpr = c["machine"]["machine"] / n_m if n_m else float("nan")  # machine detected
    tnr = c["human"]["human"] / n_h if n_h else float("nan")
    return {
        "study": study, "task": task, "alpha": alpha, "interval": "clopper-pearson",
        "trials": int(len(main)), "control_trials": int(len(df) - len(main)),
        "judges": int(df["judge_id"].nunique()),
        "confusion": c,
        "accuracy": float(main["correct"].mean()) if len(main) else None,
        "balanced_accuracy": float((tpr + tnr) / 2) if n_h and n_m else None,
        "agents": agent_rates(main, alpha),
    }
