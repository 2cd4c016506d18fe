"""Analysis of a static Turing test (Zhang et al.): judge trials -> tables, figures, report.

A static test is a two-player design: each item is a machine's or a human's response, judged
human or machine. Reported, from the trial table of `analysis.static.summary.trial_table`:

* confusion matrices (ground truth x answer): overall, per agent (that agent's items against all
  human items), per task, per conversation length, per demographic group of the judges;
* each agent's "judged human" rate with its exact (Clopper-Pearson) interval, and a cluster
  bootstrap interval that resamples judges (each judge rates many items);
* Zhang's criterion: the rate within 0.45-0.55; Giunti's two-player criteria at alpha
  (`turinglab.stats.two_player`: the agent's items against the human items);
* detectability: balanced accuracy (mean of the machine and the human items' accuracy), overall
  and per agent, with the judge-clustered interval;
* exclusion flags per judge (control accuracy below the study's minimum; too many answers
  faster than `fast_rt_ms`): counted and shown, never deleted; a sensitivity line re-computes
  the headline numbers without flagged judges;
* conversation studies: Zhang's topic-control rule as flags (judge-level: fewer than 75% of topic
  answers right; trial-level: the topic answered wrong), with the results with and without them,
  and how many items had no topic control.
Control (vigilance) items are left out of every rate.
"""

from __future__ import annotations

import base64
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from turinglab.analysis.live.resample import cluster_sums
from turinglab.analysis.pformat import p_text
from turinglab.analysis.static.answers import native_flags
from turinglab.statictests.topics import MIN_TOPIC_ACCURACY
from turinglab.stats import interval, two_player
from turinglab.store.withdraw import MARK as WITHDRAWN

ZHANG_BAND = (0.45, 0.55)
STERNE_MAX_N = 20_000  # above this, Giunti's criteria use Clopper-Pearson intervals (Sterne is slow)
MAX_GROUP_LEVELS = 12


@dataclass
class StaticAnalysis:
    study: str
    task: str
    alpha: float
    n_trials: int
    n_judges: int
    confusion: dict[str, dict[str, int]]
    agents: pd.DataFrame  # agent, truth, n, judged_human, rate, exact low/high, boot low/high, zhang, giunti...
    detectability: pd.DataFrame  # group, balanced_accuracy, low, high
    by_length: pd.DataFrame
    by_task: pd.DataFrame
    by_group: pd.DataFrame
    per_agent_confusion: dict[str, dict[str, dict[str, int]]]
    flags: pd.DataFrame  # judge_id, trials, control_trials, control_accuracy, fast_share, flag_control, flag_fast
    sensitivity: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    topic: dict[str, Any] | None = None  # conversation studies: Zhang's topic rule (see _topic_rule)
    answers: dict[str, Any] | None = None  # the other answers (analysis.static.answers.answer_summary)
    speakers: dict[str, Any] | None = None  # conversations: per-speaker truth (analysis/static/speakers.py)
    failed_controls: dict[str, Any] | None = None  # Zhang's control rule: summaries with and without (see analyse_stored)
    practice: dict[str, Any] | None = None  # trials outside the test phase, apart (summary.practice)
    excluded: dict[str, Any] | None = None  # the exclusion flags applied and what they left out (summary.left_out)
    prereg: dict[str, Any] | None = None  # the check against a pre-registration (report/prereg_check.py)


KEYS = ["judge_id", "truth", "agent", "control", "answer"]


def aggregate(df: pd.DataFrame, fast_rt_ms: int = 300, topic: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A trial table -> (judge counts, length counts), the two inputs of `analyse_counts`.

    judge counts: per (judge_id, truth, agent, control, answer): n, n_fast (rt < fast_rt_ms),
    n_ctl (control trials with a known answer), n_ctl_correct, n_topic, n_topic_ok (topic answers,
    right ones). `topic` (a conversation study): a control answer on a non-control item is a topic
    answer, and n_ctl counts control items only. length counts: per (length, truth, answer): n
    (conversation items only)."""
    ctl = df["control"].fillna(False).astype(bool)
    answered, ok = df["control_correct"].notna(), df["control_correct"].eq(True)
    on_main = ~ctl if topic else pd.Series(False, index=df.index)
    if topic:
        answered, ok = answered & ctl, ok & ctl
    d = df.assign(control=ctl, _fast=(df["rt_ms"].notna() & (df["rt_ms"] < fast_rt_ms)).astype(int),
                  _ctl=answered.astype(int), _ok=ok.astype(int),
                  _top=(df["control_correct"].notna() & on_main).astype(int),
                  _top_ok=(df["control_correct"].eq(True) & on_main).astype(int))
    jc = (d.groupby(KEYS, observed=True, sort=False)
          .agg(n=("answer", "size"), n_fast=("_fast", "sum"), n_ctl=("_ctl", "sum"), n_ctl_correct=("_ok", "sum"),
               n_topic=("_top", "sum"), n_topic_ok=("_top_ok", "sum"))
          .reset_index())
    lc = pd.DataFrame(columns=["length", "truth", "answer", "n"])
    if "length" in d and d["length"].notna().any():
        lc = d[~d["control"]].groupby(["length", "truth", "answer"]).size().rename("n").reset_index()
    return jc, lc


def _conf(c: pd.DataFrame) -> dict[str, dict[str, int]]:
    out = {t: {a: 0 for a in ("human", "machine")} for t in ("human", "machine")}
    if len(c):
        for (t, a), n in c.groupby(["truth", "answer"], observed=True)["n"].sum().items():
            out[str(t)][str(a)] = int(n)
    return out


def _bal(c: dict[str, dict[str, int]]) -> float:
    n_h, n_m = sum(c["human"].values()), sum(c["machine"].values())
    if not n_h or not n_m:
        return float("nan")
    return (c["human"]["human"] / n_h + c["machine"]["machine"] / n_m) / 2


def _cp(k: int, n: int, alpha: float) -> tuple[float, float]:
    if n == 0:
        return float("nan"), float("nan")
    ci = interval(int(k), int(n), alpha, "clopper-pearson")
    return float(ci.low), float(ci.high)


def judge_flags(jc: pd.DataFrame, min_control_accuracy: float, max_fast_share: float,
                min_topic_accuracy: float | None = None) -> pd.DataFrame:
    """One row per judge. With `min_topic_accuracy` (conversation studies) also topic_trials,
    topic_accuracy and flag_topic (accuracy below the minimum; judges without topic answers unflagged)."""
    topic = min_topic_accuracy is not None
    g = jc.groupby("judge_id", sort=True)[["n", "n_fast", "n_ctl", "n_ctl_correct"]
                                          + (["n_topic", "n_topic_ok"] if topic else [])].sum()
    out = pd.DataFrame({"judge_id": g.index, "trials": g["n"].to_numpy(), "control_trials": g["n_ctl"].to_numpy()})
    with np.errstate(invalid="ignore", divide="ignore"):
        out["control_accuracy"] = np.where(g["n_ctl"] > 0, g["n_ctl_correct"] / g["n_ctl"].where(g["n_ctl"] > 0), np.nan)
        out["fast_share"] = (g["n_fast"] / g["n"]).to_numpy()
    out["flag_control"] = out["control_accuracy"].notna() & (out["control_accuracy"] < min_control_accuracy)
    out["flag_fast"] = out["fast_share"] > max_fast_share
    if topic:
        nt = g["n_topic"].to_numpy(dtype=float)
        out["topic_trials"] = g["n_topic"].to_numpy()
        with np.errstate(invalid="ignore", divide="ignore"):
            out["topic_accuracy"] = np.where(nt > 0, g["n_topic_ok"].to_numpy(dtype=float) / nt, np.nan)
        out["flag_topic"] = out["topic_accuracy"].notna() & (out["topic_accuracy"] < min_topic_accuracy)
    return out


def analyse_static(df: pd.DataFrame, judges: pd.DataFrame | None, *, study: str, task: str, alpha: float = 0.05,
                   exclusions: Any = None, n_boot: int = 1000, seed: int = 0,
                   topic_items: tuple[int, int] | None = None) -> StaticAnalysis:
    """`df`: a trial table (`analysis.static.summary.trial_table`); see `analyse_counts`."""
    from turinglab.analysis.static.summary import test_trials

    df = test_trials(df)
    if df.empty:
        raise ValueError(f"static study {study!r} has no judge trials yet")
    jc, lc = aggregate(df, getattr(exclusions, "fast_rt_ms", 300), topic=task == "conversation")
    return analyse_counts(jc, lc, judges, study=study, task=task, alpha=alpha, exclusions=exclusions,
                          n_boot=n_boot, seed=seed, topic_items=topic_items)


def analyse_counts(jc: pd.DataFrame, lc: pd.DataFrame, judges: pd.DataFrame | None, *, study: str, task: str,
                   alpha: float = 0.05, exclusions: Any = None, n_boot: int = 1000, seed: int = 0,
                   topic_items: tuple[int, int] | None = None) -> StaticAnalysis:
    """`jc`, `lc`: judge and length counts (`aggregate`, or `analysis.static.summary.judge_counts`
    straight from the database); `judges`: demographics indexed by judge id; `exclusions`: the
    study's `Exclusions` (min_control_accuracy, fast_rt_ms, max_fast_share); `topic_items`: (items
    with a topic control, items), `summary.topic_coverage`, for a conversation study's report."""
    if jc.empty:
        raise ValueError(f"static study {study!r} has no judge trials yet")
    is_conv = task == "conversation"
    if "n_topic" not in jc:
        jc = jc.assign(n_topic=0, n_topic_ok=0)
    flags = judge_flags(jc, getattr(exclusions, "min_control_accuracy", 0.58),
                        getattr(exclusions, "max_fast_share", 0.25), MIN_TOPIC_ACCURACY if is_conv else None)
    native_rule = getattr(exclusions, "native_language", None)
    flags["flag_native"] = native_flags(judges, flags["judge_id"], native_rule).to_numpy()
    main = jc[~jc["control"].astype(bool)].reset_index(drop=True)
    notes: list[str] = []
    conf = _conf(main)
    hum = main[main["truth"] == "human"]
    k_h, n_h = int(hum.loc[hum["answer"] == "human", "n"].sum()), int(hum["n"].sum())

    # clusters = judges, numbered in sorted id order (the same whichever way the counts were made)
    codes, uniq = pd.factorize(main["judge_id"].astype(str), sort=True)
    codes = codes.astype(np.int64)
    n_c = len(uniq)
    agents = sorted(main.loc[main["truth"] == "machine", "agent"].astype(str).unique())
    groups = agents + ["human"]
    is_h = main["truth"].to_numpy() == "human"
    acode = pd.Index(agents).get_indexer(main["agent"].astype(str)).astype(np.int64)
    gi = np.where(is_h | (acode < 0), len(agents), acode).astype(np.int64)
    w = main["n"].to_numpy(dtype=float)
    said_h = main["answer"].to_numpy() == "human"
    k_mat = cluster_sums(codes, n_c, gi, len(groups), w * said_h)
    n_mat = cluster_sums(codes, n_c, gi, len(groups), w)
    correct = w * (said_h == is_h)
    c_mat = cluster_sums(codes, n_c, gi, len(groups), correct)
    (low_b, high_b), ba_rows = _bootstrap(k_mat, c_mat, n_mat, agents, alpha, n_boot, seed)

    rows = []
    for i, a in enumerate(groups):
        n, k = int(n_mat[:, i].sum()), int(k_mat[:, i].sum())
        lo, hi = _cp(k, n, alpha)
        r = {"agent": a, "truth": "human" if a == "human" else "machine", "n": n, "judged_human": k,
             "rate": k / n if n else float("nan"), "low": lo, "high": hi,
             "boot_low": float(low_b[i]), "boot_high": float(high_b[i]),
             "judges": int((n_mat[:, i] > 0).sum()),
             # Zhang's band judges machine agents only: a human row has no band verdict
             "zhang_in_band": (bool(ZHANG_BAND[0] <= k / n <= ZHANG_BAND[1]) if n else False) if a != "human" else None}
        if a != "human" and n and n_h:
            method = "sterne" if max(n, n_h) <= STERNE_MAX_N else "clopper-pearson"
            g = two_player(k, n, k_h, n_h, alpha, method)
            r.update({"giunti_decision": g.decision, "giunti_p": g.p_value, "humanness": g.humanness.estimate,
                      "humanness_low": g.humanness.low, "humanness_high": g.humanness.high, "giunti_method": method,
                      "giunti_test": g.test})
        rows.append(r)
    agents_df = pd.DataFrame(rows)
    if "giunti_method" in agents_df and (agents_df["giunti_method"] == "clopper-pearson").any():
        notes.append(f"Giunti's criteria used Clopper-Pearson intervals for counts above {STERNE_MAX_N}.")

    per_agent_conf = {a: {"human": conf["human"],
                          "machine": _conf(main[(main["truth"] == "machine") & (main["agent"] == a)])["machine"]}
                      for a in agents}
    by_length = _levels(lc, "length", alpha) if len(lc) else pd.DataFrame()
    by_task = _levels(main.assign(task=task), "task", alpha)
    by_group = _by_group(main, judges, alpha)

    flagged = set(flags.loc[flags["flag_control"] | flags["flag_fast"] | flags["flag_native"], "judge_id"])
    kept = main[~main["judge_id"].isin(flagged)]
    kc = _conf(kept)
    sensitivity = {"judges_flagged": len(flagged), "trials_without_flagged": int(kept["n"].sum()),
                   "balanced_accuracy_without_flagged": _bal(kc), "confusion_without_flagged": kc}
    topic = _topic_rule(main, flags, alpha, topic_items) if is_conv else None
    return StaticAnalysis(study, task, alpha, int(main["n"].sum()), int(n_c), conf, agents_df,
                          ba_rows, by_length, by_task, by_group, per_agent_conf, flags, sensitivity, notes, topic)


def analyse_stored(store: Any, study: str | int | None, alpha: float,
                   exclude: tuple[str, ...] = (WITHDRAWN,)) -> tuple[Any, StaticAnalysis]:
    """(the stored study's `StaticStudyInfo`, its analysis) of a static study in `store` (a Store;
    `study`: name or id, None for the first); its own exclusions, for conversations topics, and
    the answers and speakers of `analysis.static.answers.static_extras`. `exclude`: the trials'
    exclusion flags (`summary.FLAGS`: a withdrawn judge's trials are left out by default)."""
    from turinglab.analysis.static.answers import static_extras
    from turinglab.analysis.static.summary import judge_counts, judge_table, left_out, practice, topic_coverage

    info = store.static_study(study if study is not None else store.static_studies()[0].id)
    jc, lc = judge_counts(store, info.id, info.study.exclusions.fast_rt_ms, exclude)
    judges = judge_table(store, sorted(jc["judge_id"].unique()))
    a = analyse_counts(jc, lc, judges, study=info.name, task=info.task, alpha=alpha,
                       exclusions=info.study.exclusions,
                       topic_items=topic_coverage(store, info.id) if info.task == "conversation" else None)
    extras = static_extras(store, info, alpha, exclude)
    a.answers, a.speakers = extras["answers"], extras.get("speakers")
    a.failed_controls = failed_control_results(store, info, alpha, exclude)
    a.practice = practice(store, info.id, alpha, exclude)
    a.excluded = w = left_out(store, info.id, exclude)
    if w[WITHDRAWN]["judges"]:
        a.notes.append(f"{w[WITHDRAWN]['trials']} trials of {w[WITHDRAWN]['judges']} judge(s) who withdrew are "
                       + ("left out (flag withdrawn)." if w[WITHDRAWN]["left_out"] else "counted (--exclude none)."))
    return info, a


def failed_control_results(store: Any, info: Any, alpha: float,
                           exclude: tuple[str, ...] = (WITHDRAWN,)) -> dict[str, Any] | None:
    """Zhang et al.'s rule for colour and object (a trial counts only when its control answer is
    right): `static summary` with every trial and without those, and which one the study's
    `drop_failed_controls` setting chooses. None when no trial has a scored control answer."""
    from turinglab.analysis.static.summary import control_answers, count_table, summary

    if info.task == "conversation" or control_answers(store, info.id, alpha, exclude) is None:
        return None
    rows = [(label, summary(count_table(store, info.id, drop, exclude), alpha)) for label, drop in
            (("every trial", False), ("right control answer only", True))]
    return {"setting": bool(getattr(info.study, "drop_failed_controls", False)), "rows": rows}


def _topic_rule(main: pd.DataFrame, flags: pd.DataFrame, alpha: float,
                topic_items: tuple[int, int] | None) -> dict[str, Any]:
    """Zhang's topic-control exclusions as flags, and the results with and without them: all
    trials; without the judges below MIN_TOPIC_ACCURACY (judge-level); without the trials whose
    topic was wrong (trial-level); both (Zhang's rule). Trials without a topic answer stay in."""
    wrong = (main["n_topic"] - main["n_topic_ok"]).to_numpy()
    flagged = set(flags.loc[flags["flag_topic"], "judge_id"])
    judge_ok = ~main["judge_id"].isin(flagged).to_numpy()
    n = main["n"].to_numpy()
    variants = [("all trials (as above)", n), (f"without judges below {MIN_TOPIC_ACCURACY:.0%} topic accuracy", n * judge_ok),
                ("without trials with a wrong topic", n - wrong), ("without both (Zhang's rule)", (n - wrong) * judge_ok)]
    rows = []
    for label, kept in variants:
        part = main.assign(n=kept)
        part = part[part["n"] > 0]
        cf = _conf(part)
        n_m, k_m = sum(cf["machine"].values()), cf["machine"]["human"]
        n_h, k_h = sum(cf["human"].values()), cf["human"]["human"]
        lo, hi = _cp(k_m, n_m, alpha)
        rows.append({"variant": label, "trials": int(part["n"].sum()), "judges": int(part["judge_id"].nunique()),
                     "hh": cf["human"]["human"], "hm": cf["human"]["machine"], "mh": cf["machine"]["human"],
                     "mm": cf["machine"]["machine"], "machine_judged_human": k_m / n_m if n_m else float("nan"),
                     "low": lo, "high": hi, "human_judged_human": k_h / n_h if n_h else float("nan"),
                     "balanced_accuracy": _bal(cf)})
    return {"items_with_topic": None if topic_items is None else int(topic_items[0]),
            "items": None if topic_items is None else int(topic_items[1]),
            "topic_trials": int(main["n_topic"].sum()), "topic_wrong": int(wrong.sum()),
            "judges_with_topic": int((flags["topic_trials"] > 0).sum()), "judges_flagged": len(flagged),
            "min_accuracy": MIN_TOPIC_ACCURACY, "results": pd.DataFrame(rows)}


def _levels(c: pd.DataFrame, col: str, alpha: float, extra: dict[str, Any] | None = None) -> pd.DataFrame:
    out = []
    for level, part in c.groupby(col, dropna=True, sort=True):
        cf = _conf(part)
        n_m = sum(cf["machine"].values())
        k_m = cf["machine"]["human"]
        lo, hi = _cp(k_m, n_m, alpha)
        row = {col: level}
        if "judge_id" in part:
            row["judges"] = int(part["judge_id"].nunique())
        out.append({**row, "trials": int(part["n"].sum()), "hh": cf["human"]["human"], "hm": cf["human"]["machine"],
                    "mh": cf["machine"]["human"], "mm": cf["machine"]["machine"],
                    "machine_judged_human": k_m / n_m if n_m else float("nan"), "low": lo, "high": hi,
                    "balanced_accuracy": _bal(cf)})
    return pd.DataFrame(out)


def _ba(c: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Balanced accuracy per agent (its items against all human items, the last column), then all
    machine items pooled: (machine items' accuracy + human items' accuracy) / 2."""
    h = c.shape[-1] - 1
    with np.errstate(invalid="ignore", divide="ignore"):
        acc_h = c[..., h] / n[..., h]
        per = c[..., :h] / n[..., :h]
        pooled = c[..., :h].sum(-1) / n[..., :h].sum(-1)
        return np.concatenate([((per.T + acc_h.T) / 2).T, ((pooled + acc_h) / 2)[..., None]], axis=-1)


def _bootstrap(k_mat: np.ndarray, c_mat: np.ndarray, n_mat: np.ndarray, agents: list[str], alpha: float,
               n_boot: int, seed: int) -> tuple[tuple[np.ndarray, np.ndarray], pd.DataFrame]:
    """One judge-clustered percentile bootstrap (judges drawn with replacement, all their trials
    along; `resample.draw_weights`) for the judged-human rates (k/n per group) and the balanced
    accuracies."""
    from turinglab.analysis.live.resample import draw_weights

    n_c, G = n_mat.shape
    est = _ba(c_mat.sum(0), n_mat.sum(0))
    if n_c < 2:
        nan = np.full(G, np.nan)
        return (nan, nan), pd.DataFrame({"group": agents + ["all machine items"], "balanced_accuracy": est,
                                         "low": np.full(len(est), np.nan), "high": np.full(len(est), np.nan)})
    rate_reps, ba_reps = [], []
    both = np.hstack([k_mat, c_mat, n_mat])  # one product per block of replicates
    for wts in draw_weights(n_c, n_boot, seed):
        kcn = wts @ both
        k, c, n = kcn[:, :G], kcn[:, G:2 * G], kcn[:, 2 * G:]
        with np.errstate(invalid="ignore", divide="ignore"):
            rate_reps.append(k / n)
        ba_reps.append(_ba(c, n))
    r, b = np.vstack(rate_reps), np.vstack(ba_reps)
    q = (alpha / 2, 1 - alpha / 2)
    rates = (np.nanquantile(r, q[0], axis=0), np.nanquantile(r, q[1], axis=0))
    ba = pd.DataFrame({"group": agents + ["all machine items"], "balanced_accuracy": est,
                       "low": np.nanquantile(b, q[0], axis=0), "high": np.nanquantile(b, q[1], axis=0)})
    return rates, ba


def zhang_age_bin(value: Any) -> str | None:
    """An age ("51") or age band ("36-40", "41-45") -> Zhang's bins "below 35", "35-45", "above 45"
    (a band by its middle); None when it is neither."""
    nums = [int(x) for x in re.findall(r"\d+", str(value))] if value is not None else []
    if not nums or len(nums) > 2:
        return None
    age = sum(nums) / len(nums)
    return "below 35" if age < 35 else "35-45" if age <= 45 else "above 45"


def _by_group(main: pd.DataFrame, judges: pd.DataFrame | None, alpha: float) -> pd.DataFrame:
    if judges is None or judges.empty:
        return pd.DataFrame()
    parts = []
    if "age" in judges.columns:  # the paper's figures bin age: below 35, 35-45, above 45
        judges = judges.assign(**{"age (Zhang's bins)": judges["age"].map(zhang_age_bin)})
    for var in sorted(c for c in judges.columns if c != "source"):
        col = judges[var].astype(str)
        if var.startswith("age (Zhang"):
            col = judges[var].dropna().astype(str)
        if col.nunique() < 2 or col.nunique() > MAX_GROUP_LEVELS:
            continue
        t = _levels(main.assign(group=main["judge_id"].map(col)), "group", alpha)
        parts.append(t.assign(variable=var))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# --- figures ---


def figures(a: StaticAnalysis, svg: bool = True) -> list[Any]:
    """Confusion heat maps and per-agent bars (PNG, and SVG unless svg=False: HTML only needs PNG)."""
    import io

    import matplotlib.pyplot as plt

    from turinglab.analysis.report.figures import AI_COLOR, HUMAN_COLOR, Figure, _render

    if not svg:
        def _render(fig, name, title, caption):  # noqa: ANN001, ANN202 - PNG only
            png = io.BytesIO()
            fig.savefig(png, format="png", dpi=130, bbox_inches="tight")
            plt.close(fig)
            return Figure(name, title, caption, png.getvalue(), "")

    figs = []
    mats = {"all items": a.confusion, **a.per_agent_confusion}
    n = len(mats)
    cols = min(3, n)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.9 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    for ax, (name, c) in zip(axes.flat, mats.items()):
        m = np.array([[c["human"]["human"], c["human"]["machine"]], [c["machine"]["human"], c["machine"]["machine"]]], float)
        share = m / np.maximum(m.sum(1, keepdims=True), 1)
        ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
        for i in range(2):
            for j in range(2):
                ax.text(j, i, f"{int(m[i, j])}\n{share[i, j]:.2f}", ha="center", va="center",
                        color="white" if share[i, j] > 0.6 else "black", fontsize=9)
        ax.set_xticks([0, 1], ["human", "machine"])
        ax.set_yticks([0, 1], ["human", "machine"])
        ax.set_xlabel("answer")
        ax.set_ylabel("truth")
        ax.set_title(str(name)[:30], fontsize=9)
    fig.tight_layout()
    figs.append(_render(fig, "static_confusion", "Confusion matrices",
                        "Rows: ground truth; columns: the judges' answer; count and row share. Per agent: its items "
                        "against all human items."))
    t = a.agents.sort_values("rate").reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(t) + 1.4))
    y = np.arange(len(t))
    ax.barh(y, t["rate"], color=[HUMAN_COLOR if x == "human" else AI_COLOR for x in t["truth"]], alpha=0.85, height=0.65)
    ax.errorbar(t["rate"], y, xerr=np.vstack([t["rate"] - t["low"], t["high"] - t["rate"]]), fmt="none",
                ecolor="black", capsize=3, lw=1)
    ax.set_yticks(y, [f"{w}  (n={k})" for w, k in zip(t["agent"], t["n"])])
    ax.axvspan(*ZHANG_BAND, color="#bbbbbb", alpha=0.35, label="Zhang's band 0.45-0.55")
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of items judged human")
    ax.legend(loc="lower right", frameon=False, fontsize=8)
    pct = int(round(100 * (1 - a.alpha)))
    figs.append(_render(fig, "static_agents", "Judged-human rate per agent",
                        f"Bars: rate; whiskers: exact {pct}% Clopper-Pearson interval. Grey: Zhang's 0.45-0.55 band."))
    return figs


# --- report ---


def _fmt(x: Any, d: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (float, np.floating)):
        return f"{float(x):.{d}f}"
    return str(x)


def _tests(agents: pd.DataFrame) -> str:
    """The two-sample tests the agents' rows used, named once each."""
    names = sorted({str(t) for t in agents.get("giunti_test", pd.Series(dtype=str)).dropna()})
    return "; ".join(names) if names else "none (no agent with human items beside it)"


def _tables(a: StaticAnalysis) -> list[tuple[str, str, list[str], list[list[Any]]]]:
    """(section, intro, header, rows) of the report, in order."""
    pct = int(round(100 * (1 - a.alpha)))
    c = a.confusion
    out = [("Confusion matrix (all items)", "Rows: ground truth; columns: answer.",
            ["truth", "judged human", "judged machine"],
            [["human", c["human"]["human"], c["human"]["machine"]], ["machine", c["machine"]["human"], c["machine"]["machine"]]])]
    ag = a.agents
    out.append(("Judged-human rate per agent",
                f"Exact {pct}% Clopper-Pearson interval; judge-clustered bootstrap {pct}% interval (judges resampled); "
                f"Zhang's criterion: the rate within {ZHANG_BAND[0]}-{ZHANG_BAND[1]}. Giunti's two-player criteria: "
                f"the agent's items against the human items. Decision and p from one test of p_m = p_h: {_tests(ag)}; "
                f"it passes if the test rejects at α = {a.alpha:g} with the agent's rate above the humans', fails if it "
                "rejects with it below, else inconclusive. The ratio p_m / p_h and its interval are descriptive.",
                ["agent", "n", "judges", "judged human", "rate", f"{pct}% exact", f"{pct}% clustered", "Zhang band",
                 "Giunti", "p", "humanness p_m/p_h"],
                [[r["agent"], r["n"], r["judges"], r["judged_human"], _fmt(r["rate"]), f"[{_fmt(r['low'])}, {_fmt(r['high'])}]",
                  f"[{_fmt(r['boot_low'])}, {_fmt(r['boot_high'])}]", ("–" if r["zhang_in_band"] is None else "in" if r["zhang_in_band"] else "out"),
                  r.get("giunti_decision", "–") if isinstance(r.get("giunti_decision"), str) else "–",
                  p_text(r.get("giunti_p")), (f"{_fmt(r.get('humanness'), 2)} [{_fmt(r.get('humanness_low'), 2)}, "
                                            f"{_fmt(r.get('humanness_high'), 2)}]") if r["agent"] != "human" else "–"]
                 for r in ag.to_dict("records")]))
    out.append(("Detectability (balanced accuracy)",
                "Mean of the accuracy on machine items and on human items; 0.5 = judges cannot tell. "
                f"{pct}% judge-clustered bootstrap interval.",
                ["machine items", "balanced accuracy", f"{pct}% interval"],
                [[r["group"], _fmt(r["balanced_accuracy"]), f"[{_fmt(r['low'])}, {_fmt(r['high'])}]"]
                 for r in a.detectability.to_dict("records")]))
    hdr = ["trials", "H→H", "H→M", "M→H", "M→M", "machine judged human", f"{pct}% exact", "balanced accuracy"]

    def rows(df: pd.DataFrame, first: list[str]) -> list[list[Any]]:
        return [[*(r[k] for k in first), r["trials"], r["hh"], r["hm"], r["mh"], r["mm"], _fmt(r["machine_judged_human"]),
                 f"[{_fmt(r['low'])}, {_fmt(r['high'])}]", _fmt(r["balanced_accuracy"])] for r in df.to_dict("records")]

    out.append(("Per task", "", ["task", *hdr], rows(a.by_task, ["task"])))
    if len(a.by_length):
        out.append(("Per conversation length", "Length in exchanges.", ["length", *hdr],
                    rows(a.by_length, ["length"])))
    if len(a.by_group):
        out.append(("Per demographic group of the judges", "Descriptive.", ["variable", "group", "judges", *hdr],
                    rows(a.by_group, ["variable", "group", "judges"])))
    f = a.flags
    s = a.sensitivity
    tp = a.topic
    n_ctl = int(f["control_trials"].sum())
    ctl_line = ""
    if n_ctl:
        ok = float((f["control_accuracy"].fillna(0) * f["control_trials"]).sum())
        acc = f["control_accuracy"].dropna()
        ctl_line = (f"Control answers: {round(ok)} of {n_ctl} right ({ok / n_ctl:.1%}); per judge mean {acc.mean():.1%}, "
                    f"lowest {acc.min():.1%}. ")
    intro = ctl_line + (f"{int(f['flag_control'].sum())} judge(s) below the control-accuracy minimum, {int(f['flag_fast'].sum())} "
             f"with too many fast answers. Without the {s['judges_flagged']} flagged judge(s): {s['trials_without_flagged']} "
             f"trials, balanced accuracy {_fmt(s['balanced_accuracy_without_flagged'])}. Every table above includes them.")
    header = ["judge", "trials", "control trials", "control accuracy", "fast share", "flag control", "flag fast",
              "flag non-native"]
    shown = f["flag_control"] | f["flag_fast"] | f["flag_native"]
    if f["flag_native"].any():
        intro += f" {int(f['flag_native'].sum())} judge(s) flagged as non-native speakers (Zhang's captioning rule)."
    if tp is not None:
        intro += (f" Zhang's topic rule: {tp['judges_flagged']} judge(s) below {tp['min_accuracy']:.0%} of topic answers "
                  f"right (judge-level flag), {tp['topic_wrong']} trial(s) with a wrong topic (trial-level flag); "
                  "see the next section.")
        header += ["topic answers", "topic accuracy", "flag topic"]
        shown = shown | f["flag_topic"]
    out.append(("Exclusion flags (kept, never deleted)", intro, header,
                [[r["judge_id"], r["trials"], r["control_trials"], _fmt(r["control_accuracy"]), _fmt(r["fast_share"]),
                  "yes" if r["flag_control"] else "", "yes" if r["flag_fast"] else "",
                  "yes" if r["flag_native"] else "",
                  *([r["topic_trials"], _fmt(r["topic_accuracy"]), "yes" if r["flag_topic"] else ""] if tp else [])]
                 for r in f[shown].to_dict("records")]))
    if tp is not None:
        out.append(_topic_section(tp, pct))
    if a.failed_controls:
        out.append(_failed_controls_section(a.failed_controls, pct))
    if a.answers:
        out.append(_answers_section(a.answers))
    if a.speakers:
        from turinglab.analysis.static.speakers import report_sections

        out.extend(report_sections(a.speakers))
    return out


def _answers_section(ans: dict[str, Any]) -> tuple[str, str, list[str], list[list[Any]]]:
    """The other questions: controls (answered, right), speaker gender, native language and country."""
    rows = [[name, r["answered"], r["correct"], _fmt(r["accuracy"])] for name, r in (
        ("true/false object question", ans["object_question"]), ("choice question (1 of 3, topic)", ans["choice_question"]),
        ("control items", ans["control_items"]), ("all controls", ans["controls"])) if r["answered"]]
    j = ans["judges"]
    rows += [["speaker gender answers", sum(ans["gender"].values()), "", ", ".join(f"{k} {v}" for k, v in ans["gender"].items())]]
    rows += [["judges' native language", sum(j["native_language"].values()), "",
              ", ".join(f"{k} {v}" for k, v in list(j["native_language"].items())[:8])],
             ["judges' country", sum(j["country"].values()), "", ", ".join(f"{k} {v}" for k, v in list(j["country"].items())[:8])]]
    intro = ("Every answer besides human/machine. " + (f"Native-speaker rule ({j['native_rule']}): "
             f"{j['native_flagged']} judge(s) flagged, kept." if j["native_rule"] else ""))
    return ("Control, gender and background answers", intro, ["question", "answers", "right", "accuracy / counts"], rows)


def _failed_controls_section(fc: dict[str, Any], pct: int) -> tuple[str, str, list[str], list[list[Any]]]:
    """The results with and without the trials whose control answer is wrong (Zhang's rule)."""
    chosen = 1 if fc["setting"] else 0
    intro = ("Zhang et al. count a trial only when its control answer is right (`static summary "
             "--drop-failed-controls`); both are shown. The study's drop_failed_controls setting is "
             f"{'on' if fc['setting'] else 'off'} (marked *); every other table includes every trial.")
    rows = []
    for i, (label, s) in enumerate(fc["rows"]):
        c = s["confusion"]
        m = [r for r in s["agents"] if r["truth"] == "machine"]
        mn, mk = sum(r["n"] for r in m), sum(r["judged_human"] for r in m)
        lo, hi = _cp(mk, mn, s["alpha"]) if mn else (None, None)
        hh = c["human"]["human"] / (c["human"]["human"] + c["human"]["machine"]) if c["human"]["human"] + c["human"]["machine"] else None
        rows.append([label + (" *" if i == chosen else ""), s["trials"], s["judges"], c["human"]["human"], c["human"]["machine"],
                     c["machine"]["human"], c["machine"]["machine"], _fmt(mk / mn if mn else None), f"[{_fmt(lo)}, {_fmt(hi)}]",
                     _fmt(hh), _fmt(s["balanced_accuracy"])])
    header = ["trials kept", "trials", "judges", "H→H", "H→M", "M→H", "M→M", "machine judged human", f"{pct}% exact",
              "human judged human", "balanced accuracy"]
    return ("Failed control answers (Zhang's rule)", intro, header, rows)


def _topic_section(tp: dict[str, Any], pct: int) -> tuple[str, str, list[str], list[list[Any]]]:
    """The conversation studies' topic control: coverage, Zhang's rule as flags, results with and without."""
    if tp["items"] is None:
        cover = ""
    elif tp["items_with_topic"] == tp["items"]:
        cover = f"All {tp['items']} conversation items had a topic control. "
    else:
        cover = (f"{tp['items'] - tp['items_with_topic']} of {tp['items']} conversation items had no topic control "
                 "(no topic known: no topic question was shown, and their trials are never excluded by this rule). ")
    title = "Topic control (Zhang's exclusion rule, as flags)"
    if not tp["topic_trials"]:
        return (title, cover + "No topic answers were stored, so Zhang's topic rule could not be applied.", [], [])
    intro = (cover + f"{tp['topic_trials']} topic answers by {tp['judges_with_topic']} judge(s) (the correct topic among 5). "
             f"Zhang et al. kept only judges with at least 15 of 20 topics right and dropped trials with a wrong topic; "
             f"here both are flags: {tp['judges_flagged']} judge(s) below {tp['min_accuracy']:.0%} (judge-level), "
             f"{tp['topic_wrong']} trial(s) with a wrong topic (trial-level). The rows give the results with and "
             "without them (every other table includes them).")
    header = ["trials kept", "trials", "judges", "H→H", "H→M", "M→H", "M→M", "machine judged human", f"{pct}% exact",
              "human judged human", "balanced accuracy"]
    rows = [[r["variant"], r["trials"], r["judges"], r["hh"], r["hm"], r["mh"], r["mm"], _fmt(r["machine_judged_human"]),
             f"[{_fmt(r['low'])}, {_fmt(r['high'])}]", _fmt(r["human_judged_human"]), _fmt(r["balanced_accuracy"])]
            for r in tp["results"].to_dict("records")]
    return (title, intro, header, rows)


def write_static_report(a: StaticAnalysis, out: str | Path, fmt: str = "html",
                        ai_results: list[dict[str, Any]] | None = None) -> list[Path]:
    """One self-contained HTML file, or Markdown plus a figures folder. All text is escaped.
    `ai_results`: AI judges evaluated on the same items (`judges.evaluate.results_for`), shown in an
    "AI judges" section with a figure; None or [] (none run) leaves the section out."""
    from html import escape

    from turinglab.analysis.static import judges as static_judges
    from turinglab.analysis.report.figures import save
    from turinglab.analysis.report.prereg_check import block as prereg_block
    from turinglab.analysis.report.report import md_escape

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    figs = figures(a, svg=fmt != "html")
    head = (f"{a.n_trials} trials · {a.n_judges} judges · task {a.task} · α = {a.alpha}; control items left out of every rate")
    secs = _tables(a)
    if a.practice and a.practice["trials"]:  # apart: in none of the numbers above
        pr, acc = a.practice, a.practice["accuracy"]
        secs.append(("Practice trials", "Trials outside the test phase (a session's feedback items, an imported "
                     "file's practice or training phase): left out of every number above, counted here.",
                     ["phase", "trials"], [*[[ph, n] for ph, n in sorted(pr["phases"].items())],
                     ["right answers (non-control items)", f"{pr['correct']} of {pr['scored']}" + (
                         f" = {acc['estimate']:.3f} [{acc['low']:.3f}, {acc['high']:.3f}]" if pr["scored"] else "")]]))
    fig_after = {0: "static_confusion", 1: "static_agents"}
    if ai_results:  # the section only when `judges evaluate` was run on these items (issue 41)
        ai = static_judges.sections(ai_results, a.study, a.alpha)
        at = next(i for i, sec in enumerate(secs) if sec[0].startswith("Detectability")) + 1
        secs[at:at] = ai
        fg = static_judges.figure(ai_results)
        if fg is not None:
            figs.append(fg)
            fig_after[at] = fg.name
    if fmt == "html":
        parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Static Turing test: {escape(a.study)}</title>"
                 "<style>body{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em}"
                 "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}"
                 "img{max-width:100%}</style></head><body>",
                 f"<h1>Static Turing test report: {escape(a.study)}</h1><p><i>{escape(head)}</i></p>",
                 prereg_block(a.prereg, "html")]
        figmap = {fg.name: fg for fg in figs}
        for i, (title, intro, header, rows) in enumerate(secs):
            parts.append(f"<h2>{escape(title)}</h2><p>{escape(intro)}</p>")
            if header:
                parts.append("<table><tr>" + "".join(f"<th>{escape(str(h))}</th>" for h in header) + "</tr>"
                             + "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in r) + "</tr>"
                                       for r in rows) + "</table>")
            name = fig_after.get(i)
            if name:
                fg = figmap[name]
                parts.append(f"<figure><img alt='{escape(fg.title)}' src='data:image/png;base64,"
                             f"{base64.b64encode(fg.png).decode()}'><figcaption><b>{escape(fg.title)}.</b> "
                             f"{escape(fg.caption)}</figcaption></figure>")
        parts += [f"<p><i>{escape(n)}</i></p>" for n in a.notes]
        out.write_text("".join(parts) + "</body></html>", encoding="utf-8")
        return [out]
    fig_dir = out.with_name(out.stem + "_figures")
    paths = save(figs, fig_dir)
    md = [f"# Static Turing test report: {md_escape(a.study)}", f"*{md_escape(head)}*", prereg_block(a.prereg, "md", md_escape)]
    for i, (title, intro, header, rows) in enumerate(secs):
        md += [f"## {title}", md_escape(intro) if intro else ""]
        if header:
            md.append("| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
                      + "\n".join("| " + " | ".join(md_escape(c) for c in r) + " |" for r in rows))
        name = fig_after.get(i)
        if name:
            fg = next(x for x in figs if x.name == name)
            md.append(f"![{fg.title}]({fig_dir.name}/{name}.svg)\n\n*{fg.title}.* {fg.caption}")
    md += [f"*{md_escape(n)}*" for n in a.notes]
    out.write_text("\n\n".join(md) + "\n", encoding="utf-8")
    return [out, *paths]
