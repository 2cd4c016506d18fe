"""Metrics of a judge's verdicts, the same for AI and human judges so they can stand side by side.

Positive class = machine (a judge 'detects' the machine). Verdicts are 'human', 'machine' or
'unparsed' (an LLM answer we could not read): an unparsed verdict is counted in n and as wrong,
never dropped. Intervals are exact (turinglab.stats, Sterne by default). The balanced-accuracy
interval is (TNR + TPR) / 2 over the two exact per-class intervals at alpha/2 each (Bonferroni:
coverage at least 1 - alpha).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from turinglab.stats import binom_pvalue, interval, two_player

VERDICTS = ("human", "machine", "unparsed")


def _num(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def rate(k: int, n: int, alpha: float = 0.05, method: str = "sterne") -> dict[str, Any]:
    """k of n with its exact interval (null when n = 0)."""
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "low": None, "high": None}
    ci = interval(int(k), int(n), alpha, method)
    return {"k": int(k), "n": int(n), "rate": k / n, "low": ci.low, "high": ci.high}


def confusion(truth: Sequence[str], verdict: Sequence[str]) -> dict[str, dict[str, int]]:
    """{truth: {verdict: count}}; the 'unparsed' column appears only when there are such verdicts."""
    t, v = np.asarray(truth, dtype=object), np.asarray(verdict, dtype=object)
    cols = ["human", "machine"] + (["unparsed"] if (v == "unparsed").any() else [])
    bad = set(v) - set(VERDICTS)
    if bad:
        raise ValueError(f"verdicts must be one of {VERDICTS}, got {sorted(map(str, bad))[:3]}")
    return {tr: {c: int(((t == tr) & (v == c)).sum()) for c in cols} for tr in ("human", "machine")}


def _scored(truth: Sequence[str], score: Sequence[float]) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(is machine, score) of the items that have a score, and how many are machine and human."""
    t = np.asarray(truth) == "machine"
    s = np.asarray(score, dtype=float)
    ok = ~np.isnan(s)
    t, s = t[ok], s[ok]
    return t, s, int(t.sum()), int((~t).sum())


def auroc(truth: Sequence[str], score: Sequence[float]) -> float | None:
    """P(score of a machine item > score of a human item) + half the ties (Mann-Whitney)."""
    t, s, n1, n0 = _scored(truth, score)
    if n1 == 0 or n0 == 0:
        return None
    from scipy.stats import rankdata

    r = rankdata(s)
    return float((r[t].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def tpr_at_fpr(truth: Sequence[str], score: Sequence[float], max_fpr: float = 0.05) -> float | None:
    """Highest share of machine items flagged at a threshold that flags at most `max_fpr` of humans
    (flag = score >= threshold; thresholds at the observed scores)."""
    t, s, n1, n0 = _scored(truth, score)
    if n1 == 0 or n0 == 0:
        return None
    best = 0.0
    for thr in np.unique(s):
        flagged = s >= thr
        if (flagged & ~t).sum() / n0 <= max_fpr:
            best = max(best, (flagged & t).sum() / n1)
    return float(best)


def balanced_accuracy_ci(tnr: tuple[int, int], tpr: tuple[int, int], alpha: float, method: str):
    a = interval(tnr[0], tnr[1], alpha / 2, method) if tnr[1] else None
    b = interval(tpr[0], tpr[1], alpha / 2, method) if tpr[1] else None
    if a is None or b is None:
        return None, None
    return (a.low + b.low) / 2, (a.high + b.high) / 2


def summarize(
    truth: Sequence[str],
    verdict: Sequence[str],
    agent: Sequence[str],
    score: Sequence[float] | None = None,
    alpha: float = 0.05,
    method: str = "sterne",
) -> dict[str, Any]:
    """Every metric of one judge over its verdicts (one row per judgement)."""
    t = np.asarray(truth, dtype=object)
    v = np.asarray(verdict, dtype=object)
    a = np.asarray(agent, dtype=object)
    conf = confusion(t, v)
    n = len(t)
    correct = int((t == v).sum())
    n_h, n_m = int((t == "human").sum()), int((t == "machine").sum())
    tn = conf["human"]["human"]
    tp = conf["machine"]["machine"]
    tnr = tn / n_h if n_h else None
    tpr = tp / n_m if n_m else None
    ba = (tnr + tpr) / 2 if tnr is not None and tpr is not None else None
    ba_lo, ba_hi = balanced_accuracy_ci((tn, n_h), (tp, n_m), alpha, method)
    acc = rate(correct, n, alpha, method)
    k_h = int(((t == "human") & (v == "human")).sum())  # humans judged human
    agents = []
    for name in sorted(set(a[t == "machine"])):
        sel = (a == name) & (t == "machine")
        n_a = int(sel.sum())
        judged_h = int((v[sel] == "human").sum())
        entry = {"agent": name, "n": n_a,
                 "detected": rate(int((v[sel] == "machine").sum()), n_a, alpha, method),
                 "judged_human": rate(judged_h, n_a, alpha, method)}
        if n_a and n_h:
            tp_res = two_player(judged_h, n_a, k_h, n_h, alpha=alpha, method=method)
            entry["giunti"] = tp_res.to_dict()
        if score is not None:
            both = sel | (t == "human")
            entry["auroc"] = auroc(t[both], np.asarray(score, dtype=float)[both])
        agents.append(entry)
    out = {
        "n": n,
        "n_human": n_h,
        "n_machine": n_m,
        "unparsed": int((v == "unparsed").sum()),
        "accuracy": acc["rate"],
        "accuracy_ci": [_num(acc["low"]), _num(acc["high"])],
        "balanced_accuracy": _num(ba),
        "balanced_accuracy_ci": [_num(ba_lo), _num(ba_hi)],
        "true_negative_rate": rate(tn, n_h, alpha, method),
        "true_positive_rate": rate(tp, n_m, alpha, method),
        "humans_judged_human": rate(k_h, n_h, alpha, method),
        "auroc": auroc(t, score) if score is not None else None,
        "tpr_at_5fpr": tpr_at_fpr(t, score, 0.05) if score is not None else None,
        "confusion": conf,
        "agents": agents,
        "alpha": alpha,
        "interval_method": method,
    }
    return out


def mcnemar(ai_correct: Sequence[bool], human_correct: Sequence[bool]) -> dict[str, Any]:
    """Exact McNemar test over paired judgements (the same item, AI vs human judge): the discordant
    pairs b (AI right, human wrong) and c (AI wrong, human right); two-sided exact binomial p at 1/2."""
    ai = np.asarray(ai_correct, dtype=bool)
    hu = np.asarray(human_correct, dtype=bool)
    if ai.shape != hu.shape:
        raise ValueError("paired outcomes must have the same length")
    b = int((ai & ~hu).sum())
    c = int((~ai & hu).sum())
    p = binom_pvalue(b, b + c, 0.5) if b + c else 1.0
    return {"pairs": int(len(ai)), "ai_right_human_wrong": b, "ai_wrong_human_right": c,
            "both_right": int((ai & hu).sum()), "both_wrong": int((~ai & ~hu).sum()),
            "p_value": float(p), "test": "exact McNemar (two-sided binomial on discordant pairs)"}


def compare_with_humans(ai: pd.DataFrame, trials: pd.DataFrame) -> dict[str, Any]:
    """Pair each human-judge trial with the AI's verdict on the same item (ai: item_id, verdict, truth)."""
    m = trials.merge(ai[["item_id", "verdict"]].rename(columns={"verdict": "ai_verdict"}), on="item_id",
                     how="inner")
    if len(m) == 0:
        return {"pairs": 0}
    res = mcnemar(m["ai_verdict"] == m["truth"], m["verdict"] == m["truth"])
    res["items"] = int(m["item_id"].nunique())
    res["ai_accuracy_on_pairs"] = float((m["ai_verdict"] == m["truth"]).mean())
    res["human_accuracy_on_pairs"] = float((m["verdict"] == m["truth"]).mean())
    return res
