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
from sqlalchemy import case, func, or_, select

from turinglab.statictests.topics import has_topic_control
from turinglab.stats import interval
from turinglab.store.db import raw_rows
from turinglab.store.models import ParticipantRow, ResponseRow, StaticStudyRow, StimulusRow
from turinglab.store.models import JudgeTrialRow as T
from turinglab.store.withdraw import MARK as WITHDRAWN
from turinglab.store.withdraw import kept_trials, withdrawn_judges

# the phase whose trials are the test: feedback / practice / train trials (a session's feedback_items,
# an imported file's TRAIN phase) are stored with their phase, left out of every count here, the
# confusion matrices, agent rates, Giunti's criteria and the AI-judge comparisons, and reported
# apart (`practice`)
TEST = "test"
# the exclusion flags of a static study's trials: `withdrawn`, a judge who withdrew (issue 38). Every
# function here leaves their trials out unless `exclude` leaves the flag out (`--exclude none`)
FLAGS = (WITHDRAWN,)

COLUMNS = ["trial_id", "judge_id", "seq", "phase", "answer", "rt_ms", "feedback_shown", "control_correct",
           "response_id", "truth", "agent", "control", "stimulus", "length"]


def trial_table(store: Any, study_id: int, exclude: tuple[str, ...] = FLAGS) -> pd.DataFrame:
    """One row per trial (see COLUMNS; `length` is a conversation chunk's exchanges, else NaN),
    plus `judged_human` and `correct` (0/1). Trials and items are read apart and joined here
    (the items are few; a study may have millions of trials)."""
    iq = (select(ResponseRow.id, ResponseRow.truth, ResponseRow.agent, ResponseRow.control, StimulusRow.key,
                 ResponseRow.payload).join(StimulusRow, ResponseRow.stimulus_id == StimulusRow.id)
          .where(ResponseRow.study_id == study_id))
    with store.engine.connect() as conn:
        tq = (select(T.id, T.judge_id, T.seq, T.phase, T.answer, T.rt_ms, T.feedback_shown, T.control_correct,
                     T.response_id).where(T.study_id == study_id, *kept_trials(conn, study_id, exclude)).order_by(T.id))
        trials = pd.DataFrame.from_records(raw_rows(conn, tq), columns=COLUMNS[:9])
        items = pd.DataFrame([r[:5] + ((r[5] or {}).get("length"),) for r in conn.execute(iq).all()],
                             columns=["response_id", *COLUMNS[9:]])
    df = trials.merge(items, on="response_id", how="left", sort=False)
    df["judged_human"] = (df["answer"] == "human").astype(np.int64)
    df["correct"] = (df["answer"] == df["truth"]).astype(np.int64)
    return df


def _items(conn: Any, study_id: int) -> pd.DataFrame:
    """The study's items: response_id, truth, agent, control, length, topic (the stimulus carries a
    scored choice question: `topics.has_topic_control`) (few rows; read once)."""
    q = (select(ResponseRow.id, ResponseRow.truth, ResponseRow.agent, ResponseRow.control, ResponseRow.payload,
                StimulusRow.fields).join(StimulusRow, ResponseRow.stimulus_id == StimulusRow.id)
         .where(ResponseRow.study_id == study_id))
    return pd.DataFrame([(i, t, a, bool(c), (p or {}).get("length"), has_topic_control(f or {}))
                         for i, t, a, c, p, f in conn.execute(q).all()],
                        columns=["response_id", "truth", "agent", "control", "length", "topic"])


def _is_conversation(conn: Any, study_id: int) -> bool:
    return conn.execute(select(StaticStudyRow.task).where(StaticStudyRow.id == study_id)).scalar() == "conversation"


def topic_coverage(store: Any, study_id: int) -> tuple[int, int]:
    """(non-control items whose stimulus has a topic control, non-control items)."""
    with store.engine.connect() as conn:
        items = _items(conn, study_id)
    main = items[~items["control"]]
    return int(main["topic"].sum()), len(main)


def count_table(store: Any, study_id: int, drop_failed_controls: bool = False,
                exclude: tuple[str, ...] = FLAGS) -> tuple[pd.DataFrame, int]:
    """Trials counted by (truth, agent, control, answer), and the number of judges: what `summary`
    needs. The database counts per item and answer (a covering index, no sort); items are joined here.
    Only test trials count (practice and feedback trials are apart, `practice`).
    `drop_failed_controls`: Zhang et al.'s rule, a trial counts only when its control answer is
    right (trials without a control question count)."""
    keep = [T.study_id == study_id, T.phase == TEST]
    if drop_failed_controls:
        keep.append(or_(T.control_correct.is_(None), T.control_correct == True))  # noqa: E712
    with store.engine.connect() as conn:
        keep += kept_trials(conn, study_id, exclude)
        q = select(T.response_id, T.answer, func.count()).where(*keep).group_by(T.response_id, T.answer)
        per_item = pd.DataFrame.from_records(raw_rows(conn, q), columns=["response_id", "answer", "n"])
        judges = conn.execute(select(func.count(func.distinct(T.judge_id))).where(*keep)).scalar()
        items = _items(conn, study_id)
    m = per_item.merge(items, on="response_id", how="left")
    counts = m.groupby(["truth", "agent", "control", "answer"], sort=True)["n"].sum().reset_index()
    counts["control"] = counts["control"].astype(bool)
    return counts, int(judges or 0)


MAX_SQL_AGENTS = 40


def judge_counts(store: Any, study_id: int, fast_rt_ms: int = 300,
                 exclude: tuple[str, ...] = FLAGS) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The inputs of `analysis.static.analyse_counts`: judge counts per (judge_id, truth, agent,
    control, answer) with n, n_fast, n_ctl, n_ctl_correct (the last three are per-judge totals: only
    their sum over a judge's rows means anything), n_topic, n_topic_ok (that row's trials with a
    topic answer, and with the right topic); length counts per (length, truth, answer).

    In a conversation study a control answer on a non-control item is the topic control (n_topic),
    and n_ctl counts control items only; in other studies every control answer is in n_ctl.

    The database groups by judge with one conditional sum per machine agent and answer (human
    items pooled as agent "human", control items as "(control)"), streaming in judge order; with
    more than MAX_SQL_AGENTS machine agents the trials are read and counted here instead."""
    with store.engine.connect() as conn:
        items = _items(conn, study_id)
        topic = _is_conversation(conn, study_id)
        agents = sorted(items.loc[(items["truth"] == "machine") & ~items["control"], "agent"].astype(str).unique())
        keep = kept_trials(conn, study_id, exclude)
        if len(agents) <= MAX_SQL_AGENTS:
            return _judge_counts_sql(conn, study_id, fast_rt_ms, items, agents, topic, keep)
    return _judge_counts_py(store, study_id, fast_rt_ms, topic, keep)


def _judge_counts_sql(conn: Any, study_id: int, fast_rt_ms: int, items: pd.DataFrame,
                      agents: list[str], topic: bool = False, keep: list | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    R = ResponseRow
    groups = [("human", "human", False, (R.control == False) & (R.truth == "human"))]  # noqa: E712
    groups += [("machine", a, False, (R.control == False) & (R.truth == "machine") & (R.agent == a))  # noqa: E712
               for a in agents]
    groups.append(("machine", "(control)", True, R.control == True))  # noqa: E712
    cols = []
    for *_, cond in groups:
        for ans in ("human", "machine"):
            cols.append(func.sum(case((cond & (T.answer == ans), 1), else_=0)))
    ctl = T.control_correct.is_not(None)
    if topic:  # the topic answers on the other items are counted apart (_topic_counts_sql)
        ctl = ctl & (R.control == True)  # noqa: E712
    cols += [func.sum(case((T.rt_ms < int(fast_rt_ms), 1), else_=0)),
             func.sum(case((ctl, 1), else_=0)),
             func.sum(case((ctl & (T.control_correct == True), 1), else_=0))]  # noqa: E712
    keep = [T.study_id == study_id, T.phase == TEST, *(keep or [])]
    q = select(T.judge_id, *cols).join(R, R.id == T.response_id).where(*keep).group_by(T.judge_id)
    rows = raw_rows(conn, q)
    per_item = pd.DataFrame.from_records(
        raw_rows(conn, select(T.response_id, T.answer, func.count()).where(*keep)
             .group_by(T.response_id, T.answer)), columns=["response_id", "answer", "n"])
    out = []
    for r in rows:
        first = True
        for gi, (truth, agent, ctl, _) in enumerate(groups):
            for ai, ans in enumerate(("human", "machine")):
                n = int(r[1 + 2 * gi + ai] or 0)
                if n:
                    extra = [int(x or 0) for x in r[-3:]] if first else [0, 0, 0]
                    first = False
                    out.append((r[0], truth, agent, ctl, ans, n, *extra))
    jc = pd.DataFrame(out, columns=["judge_id", "truth", "agent", "control", "answer", "n", "n_fast", "n_ctl",
                                    "n_ctl_correct"])
    jc["control"] = jc["control"].astype(bool)
    jc = _with_topic_counts(jc, _topic_counts_sql(conn, keep) if topic else None)
    return jc, _length_counts(per_item, items)


def _topic_counts_sql(conn: Any, keep: list) -> pd.DataFrame:
    """Topic answers per (judge_id, truth, agent, answer) of non-control items: n_topic, n_topic_ok
    (human items pooled as agent "human", as in _judge_counts_sql)."""
    R = ResponseRow
    q = (select(T.judge_id, R.truth, R.agent, T.answer, func.count(),
                func.sum(case((T.control_correct == True, 1), else_=0)))  # noqa: E712
         .join(R, R.id == T.response_id)
         .where(*keep, R.control == False, T.control_correct.is_not(None))  # noqa: E712
         .group_by(T.judge_id, R.truth, R.agent, T.answer))
    t = pd.DataFrame.from_records(raw_rows(conn, q), columns=["judge_id", "truth", "agent", "answer", "n_topic",
                                                          "n_topic_ok"])
    t.loc[t["truth"] == "human", "agent"] = "human"
    return t.groupby(["judge_id", "truth", "agent", "answer"], as_index=False)[["n_topic", "n_topic_ok"]].sum()


def _with_topic_counts(jc: pd.DataFrame, topic: pd.DataFrame | None) -> pd.DataFrame:
    """jc with n_topic, n_topic_ok (0 without topic answers) joined on its non-control rows."""
    if topic is None or topic.empty:
        return jc.assign(n_topic=0, n_topic_ok=0)
    m = jc.merge(topic.assign(control=False), on=["judge_id", "truth", "agent", "control", "answer"], how="left")
    for c in ("n_topic", "n_topic_ok"):
        m[c] = m[c].fillna(0).astype(np.int64)
    return m


def _length_counts(per_item: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    m = per_item.merge(items, on="response_id", how="left")
    m = m[~m["control"].astype(bool) & m["length"].notna()]
    if m.empty:
        return pd.DataFrame(columns=["length", "truth", "answer", "n"])
    return m.groupby(["length", "truth", "answer"])["n"].sum().reset_index()


def _judge_counts_py(store: Any, study_id: int, fast_rt_ms: int, topic: bool = False,
                     keep: list | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """judge_counts by reading the trials' five needed columns and counting with numpy."""
    q = (select(T.judge_id, T.response_id, T.answer, T.rt_ms, T.control_correct)
         .where(T.study_id == study_id, T.phase == TEST, *(keep or [])))
    with store.engine.connect() as conn:
        t = pd.DataFrame.from_records(raw_rows(conn, q), columns=["judge_id", "response_id", "answer", "rt_ms",
                                                              "control_correct"])
        items = _items(conn, study_id)
    n_t = len(t)
    jcode, jids = pd.factorize(t["judge_id"])
    item_row = pd.Index(items["response_id"]).get_indexer(t["response_id"])
    gcode_item = items.groupby(["truth", "agent", "control"], sort=True).ngroup().to_numpy(dtype=np.int64)
    gtab = items.assign(g=gcode_item).drop_duplicates("g").sort_values("g")[["truth", "agent", "control"]]
    G = max(len(gtab), 1)
    said_h = (t["answer"].to_numpy() == "human").astype(np.int64)
    key = (jcode.astype(np.int64) * G + gcode_item[item_row]) * 2 + said_h
    size = len(jids) * G * 2
    rt = pd.to_numeric(t["rt_ms"], errors="coerce").to_numpy()
    cc = t["control_correct"]
    answered, ok = cc.notna().to_numpy(), cc.isin([True, 1]).to_numpy()
    on_ctl = items["control"].to_numpy(dtype=bool)[item_row] if n_t else np.zeros(0, bool)
    on_main = ~on_ctl if topic else np.zeros(n_t, bool)  # conversation: topic answers apart
    if topic:
        answered, ok = answered & on_ctl, ok & on_ctl
    sums = {"n": np.bincount(key, minlength=size),
            "n_fast": np.bincount(key, weights=(rt < fast_rt_ms).astype(float), minlength=size),
            "n_ctl": np.bincount(key, weights=answered.astype(float), minlength=size),
            "n_ctl_correct": np.bincount(key, weights=ok.astype(float), minlength=size),
            "n_topic": np.bincount(key, weights=(cc.notna().to_numpy() & on_main).astype(float), minlength=size),
            "n_topic_ok": np.bincount(key, weights=(cc.isin([True, 1]).to_numpy() & on_main).astype(float),
                                      minlength=size)}
    nz = np.flatnonzero(sums["n"])
    j, rest = np.divmod(nz, G * 2)
    gi, ans = np.divmod(rest, 2)
    jc = pd.DataFrame({"judge_id": np.asarray(jids)[j], "truth": gtab["truth"].to_numpy()[gi],
                       "agent": gtab["agent"].to_numpy()[gi], "control": gtab["control"].to_numpy()[gi].astype(bool),
                       "answer": np.where(ans == 1, "human", "machine"),
                       **{k: v[nz].astype(np.int64) for k, v in sums.items()}})
    # lengths: per item and answer, then by the item's length (conversation items)
    per_item = np.bincount(item_row * 2 + said_h, minlength=len(items) * 2).reshape(len(items), 2)
    lc = pd.DataFrame(columns=["length", "truth", "answer", "n"])
    it = items.assign(human=per_item[:, 1], machine=per_item[:, 0])
    it = it[~it["control"] & it["length"].notna()]
    if n_t and len(it):
        lc = (it.melt(id_vars=["length", "truth"], value_vars=["human", "machine"], var_name="answer", value_name="n")
              .groupby(["length", "truth", "answer"])["n"].sum().reset_index())
        lc = lc[lc["n"] > 0].reset_index(drop=True)
    return jc, lc


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


def _counts(df: pd.DataFrame) -> pd.DataFrame:
    """A trial table -> counts by (truth, agent, control, answer)."""
    return (df.groupby(["truth", "agent", "control", "answer"], observed=True).size()
            .rename("n").reset_index())


def confusion(counts: pd.DataFrame) -> dict[str, dict[str, int]]:
    """confusion[truth][answer] counts."""
    out = {t: {a: 0 for a in ("human", "machine")} for t in ("human", "machine")}
    for (t, a), n in counts.groupby(["truth", "answer"])["n"].sum().items():
        out[str(t)][str(a)] = int(n)
    return out


def agent_rates(counts: pd.DataFrame, alpha: float = 0.05) -> list[dict[str, Any]]:
    """Each machine agent (as named in the source), then the pooled human items."""
    rows = []
    m = counts[counts["truth"] == "machine"]
    for agent, part in m.groupby("agent", sort=True):
        n, k = int(part["n"].sum()), int(part.loc[part["answer"] == "human", "n"].sum())
        rows.append({"agent": str(agent), "truth": "machine", "n": n, "judged_human": k,
                     "judged_human_rate": rate(k, n, alpha)})
    h = counts[counts["truth"] == "human"]
    if len(h):
        n, k = int(h["n"].sum()), int(h.loc[h["answer"] == "human", "n"].sum())
        rows.append({"agent": "human", "truth": "human", "n": n, "judged_human": k,
                     "judged_human_rate": rate(k, n, alpha)})
    return rows


def summary(data: pd.DataFrame | tuple[pd.DataFrame, int], alpha: float = 0.05, *, study: str | None = None,
            task: str | None = None) -> dict[str, Any]:
    """The `turinglab static summary --json` object, from a trial table or from `count_table`'s
    (counts, judges). Control items are left out of the confusion and the agents (counted in
    `control_trials`)."""
    if isinstance(data, tuple):
        counts, judges = data
    else:
        data = test_trials(data)
        counts, judges = _counts(data), int(data["judge_id"].nunique())
    ctl = counts["control"].astype(bool)
    main = counts[~ctl]
    c = confusion(main)
    n_h = c["human"]["human"] + c["human"]["machine"]
    n_m = c["machine"]["human"] + c["machine"]["machine"]
    total = n_h + n_m
    return {
        "study": study, "task": task, "alpha": alpha, "interval": "clopper-pearson",
        "trials": int(total), "control_trials": int(counts.loc[ctl, "n"].sum()),
        "judges": judges,
        "confusion": c,
        "accuracy": (c["human"]["human"] + c["machine"]["machine"]) / total if total else None,
        "balanced_accuracy": (c["human"]["human"] / n_h + c["machine"]["machine"] / n_m) / 2 if n_h and n_m else None,
        "agents": agent_rates(main, alpha),
    }


def test_trials(df: pd.DataFrame) -> pd.DataFrame:
    """The test-phase rows of a trial table (all of a table without phases)."""
    return df[df["phase"] == TEST] if "phase" in df.columns else df


def practice(store: Any, study_id: int, alpha: float = 0.05, exclude: tuple[str, ...] = FLAGS) -> dict[str, Any]:
    """The trials outside the test phase, reported apart: their count per phase, and on non-control
    items their count, right answers and accuracy (exact interval)."""
    R = ResponseRow
    with store.engine.connect() as conn:
        q = (select(T.phase, R.control, func.count(), func.sum(case((T.answer == R.truth, 1), else_=0)))
             .join(R, R.id == T.response_id)
             .where(T.study_id == study_id, T.phase != TEST, *kept_trials(conn, study_id, exclude))
             .group_by(T.phase, R.control))
        rows = conn.execute(q).all()
    phases: dict[str, int] = {}
    n = k = 0
    for phase, control, count, right in rows:
        phases[str(phase)] = phases.get(str(phase), 0) + int(count)
        if not control:
            n, k = n + int(count), k + int(right or 0)
    return {"trials": sum(phases.values()), "phases": phases, "scored": n, "correct": k, "accuracy": rate(k, n, alpha)}


def control_answers(store: Any, study_id: int, alpha: float = 0.05,
                    exclude: tuple[str, ...] = FLAGS) -> dict[str, Any] | None:
    """The scored control answers of the study's trials (Zhang's yes/no object word, the topic, control
    items): overall right share with its exact interval, and the per-judge mean and minimum (the
    paper's "all above 85 %, mean 91 %"). None when no trial has a scored control answer."""
    with store.engine.connect() as conn:
        q = (select(T.judge_id, func.count(), func.sum(case((T.control_correct == True, 1), else_=0)))  # noqa: E712
             .where(T.study_id == study_id, T.phase == TEST, T.control_correct.is_not(None),
                    *kept_trials(conn, study_id, exclude)).group_by(T.judge_id))
        rows = [(j, int(n), int(k or 0)) for j, n, k in conn.execute(q).all()]
    if not rows:
        return None
    n, k = sum(r[1] for r in rows), sum(r[2] for r in rows)
    per = [r[2] / r[1] for r in rows]
    return {"trials": n, "correct": k, "accuracy": rate(k, n, alpha), "judges": len(rows),
            "judge_mean": float(np.mean(per)), "judge_min": float(min(per))}


def left_out(store: Any, study_id: int, exclude: tuple[str, ...] = FLAGS) -> dict[str, Any]:
    """What the exclusion flags left out of the analyses: per flag, its judges and their trials (every
    phase); the flags applied under "exclude"."""
    out: dict[str, Any] = {"exclude": list(exclude)}
    with store.engine.connect() as conn:
        ids = withdrawn_judges(conn, study_id)
        n = conn.execute(select(func.count()).select_from(T).where(T.study_id == study_id, T.judge_id.in_(ids))).scalar() if ids else 0
    out[WITHDRAWN] = {"judges": len(ids), "trials": int(n or 0), "left_out": WITHDRAWN in exclude}
    return out
