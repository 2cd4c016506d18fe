"""Per-witness tables (Jones & Bergen table 1) and Giunti's criteria, from a judgements table.

SR (success rate) = share of a witness's games in which it was judged human.
All exact inference goes through `turinglab.stats`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from turinglab.stats.criteria import BOSCHLOO_MAX_CELLS  # noqa: F401  (n_a * n_b above which the score test is used)

HUMAN = "Human"


def counts(df: pd.DataFrame, first_only: bool = False) -> pd.DataFrame:
    """k (judged human) and n per witness, with kind; optionally only interrogators' first games."""
    d = df[df["game_index"] == 1] if first_only else df
    g = d.groupby(["witness", "witness_kind"], observed=True)["judged_human"]
    out = pd.DataFrame({"k": g.sum().astype(int), "n": g.size().astype(int)}).reset_index()
    return out


def _interval_cols(k: int, n: int, alpha: float) -> dict:
    from turinglab import stats

    if n == 0:
        return {"sr": np.nan, "low": np.nan, "high": np.nan, "p_value": np.nan, "is_interval": True, "pieces": []}
    r = stats.binom_test(int(k), int(n), p0=0.5, alpha=alpha)
    iv = r.interval
    return {
        "sr": k / n,
        "low": float(iv.low),
        "high": float(iv.high),
        "p_value": float(r.p_value),
        "is_interval": bool(iv.is_interval),
        "pieces": [[float(a), float(b)] for a, b in iv.pieces],
    }


def success_table(df: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Per witness: SR with n, exact Sterne interval, two-tailed exact test against 50%,
    and the same for interrogators' first games."""
    all_ = counts(df)
    first = counts(df, first_only=True).rename(columns={"k": "k_first", "n": "n_first"})
    t = all_.merge(first, on=["witness", "witness_kind"], how="left").fillna({"k_first": 0, "n_first": 0})
    rows = []
    for r in t.itertuples(index=False):
        a = _interval_cols(r.k, r.n, alpha)
        f = _interval_cols(int(r.k_first), int(r.n_first), alpha)
        rows.append({
            "witness": r.witness, "kind": r.witness_kind, "k": int(r.k), "n": int(r.n), **a,
            "k_first": int(r.k_first), "n_first": int(r.n_first), "sr_first": f["sr"],
            "low_first": f["low"], "high_first": f["high"], "p_value_first": f["p_value"],
        })
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    out["_h"] = out["kind"].eq("human")
    out = out.sort_values(["_h", "sr"], ascending=[True, False]).drop(columns="_h").reset_index(drop=True)
    return out


def two_sample(k1: int, n1: int, k2: int, n2: int) -> tuple[str, float]:
    """The two-sided test of two independent binomials: `turinglab.stats.two_sample_test`, the
    same test the two-player criterion uses. Returns ("boschloo" | "score", p)."""
    from turinglab import stats

    p, name = stats.two_sample_test(k1, n1, k2, n2)
    return ("boschloo" if name.startswith("Boschloo") else "score"), p


def comparisons(sr: pd.DataFrame, fmt: str, alpha: float) -> pd.DataFrame:
    """Two-player only: each AI witness against human witnesses, and AI witnesses pairwise.

    Three-player games never get two-sample tests (SPEC §3): the machine's and the
    human's success in a game are one event seen twice, P(S_m) = 1 - P(S_h).
    p-values are Holm-adjusted over the whole family.
    """
    cols = ["a", "b", "k_a", "n_a", "k_b", "n_b", "diff", "method", "test", "p_value", "p_holm", "significant"]
    if fmt != "two-player" or sr.empty:
        return pd.DataFrame(columns=cols)
    ai = sr[sr["kind"] == "ai"].reset_index(drop=True)
    hum = sr[sr["kind"] == "human"]
    pairs = []
    if not hum.empty:
        h = hum.iloc[0]
        pairs += [(a, h) for _, a in ai.iterrows()]
    for i in range(len(ai)):
        for j in range(i + 1, len(ai)):
            pairs.append((ai.iloc[i], ai.iloc[j]))
    rows = []
    for a, b in pairs:
        if a["n"] == 0 or b["n"] == 0:
            continue
        from turinglab import stats

        p, name = stats.two_sample_test(int(a["k"]), int(a["n"]), int(b["k"]), int(b["n"]))
        method = "boschloo" if name.startswith("Boschloo") else "score"
        rows.append({"a": a["witness"], "b": b["witness"], "k_a": int(a["k"]), "n_a": int(a["n"]),
                     "k_b": int(b["k"]), "n_b": int(b["n"]), "diff": a["k"] / a["n"] - b["k"] / b["n"],
                     "method": method, "test": name,
                     "p_value": p})
    out = pd.DataFrame(rows, columns=cols[:-2])
    if out.empty:
        return pd.DataFrame(columns=cols)
    _, p_holm, _, _ = multipletests(out["p_value"].to_numpy(), alpha=alpha, method="holm")
    out["p_holm"] = p_holm
    out["significant"] = out["p_holm"] < alpha
    return out


def criteria(sr: pd.DataFrame, fmt: str, alpha: float, closed: bool = True) -> pd.DataFrame:
    """Giunti's absolute criterion (pass decision) and degree of humanness per AI witness.

    Three-player: ``closed`` (the study file's criteria.closed) chooses Giunti's closed criterion or
    the open one; ``size`` is the decision's exact size at the witness's n (stats.pass_size)."""
    from turinglab import stats

    cols = ["witness", "k", "n", "machine_success", "ms_low", "ms_high", "threshold", "p_value",
            "decision", "humanness", "hu_low", "hu_high", "test", "size"]
    ai = sr[sr["kind"] == "ai"]
    hum = sr[sr["kind"] == "human"]
    rows = []
    for r in ai.itertuples(index=False):
        if r.n == 0:
            continue
        if fmt == "three-player":
            res = stats.three_player(int(r.k), int(r.n), alpha=alpha, closed=closed)
        else:
            if hum.empty or int(hum.iloc[0]["n"]) == 0:
                continue  # no human witnesses: no two-player threshold to compare with
            res = stats.two_player(int(r.k), int(r.n), int(hum.iloc[0]["k"]), int(hum.iloc[0]["n"]), alpha=alpha)
        ms, hu = res.machine_success, res.humanness
        test = (f"two-sided exact binomial test of P(S_m) = 0.5 (Sterne); decision from the {1 - alpha:.0%} Sterne set"
                if fmt == "three-player" else res.test)
        thr = getattr(res.threshold, "estimate", res.threshold)
        rows.append({"witness": r.witness, "k": int(r.k), "n": int(r.n), "machine_success": ms.estimate,
                     "ms_low": ms.low, "ms_high": ms.high, "threshold": float(thr), "p_value": float(res.p_value),
                     "decision": res.decision, "humanness": hu.estimate, "hu_low": hu.low, "hu_high": hu.high,
                     "test": test,
                     "size": stats.pass_size(int(r.n), alpha, closed=closed)[0] if fmt == "three-player" else np.nan})
    return pd.DataFrame(rows, columns=cols)
