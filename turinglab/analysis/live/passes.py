"""Companions of the pass decisions: the family adjustment and a cluster-robust test.

* Family: with several AI witnesses the pass decisions are a family. Unless the study file
  declares them per-witness confirmatory (``pass_decisions: per-witness``), they are adjusted
  by Holm's step-down: ordered by p, the r-th (0-based) of m is decided at alpha / (m - r)
  with the same rule as the unadjusted decision (the Sterne set for three-player, the
  two-sample test for two-player), and once one is inconclusive so are all after it.
* Clustered: games are clustered in interrogators. Three-player: the machine's SR against
  0.5; two-player: the machine's SR against the human witnesses' (`clustered.cluster_diff_test`);
  both with a sandwich SE over interrogators and t with G - 1 df. Its decision says "passes"
  or "fails" only when it rejects at alpha, in the direction of the estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist
from statsmodels.stats.multitest import multipletests

from turinglab.analysis.live.clustered import cluster_diff_test

FAMILIES = ("holm", "per-witness")
CLOSED_NOTE = (
    "Giunti's criterion is closed: a machine passes when every rate in its {pct}% set is at or above the "
    "threshold, the threshold included, so a set that starts exactly at the threshold (e.g. 60 of 100: "
    "[0.500, 0.694], p = 0.057) passes although the test of p = threshold does not reject."
)
OPEN_NOTE = (
    "The study file sets criteria.closed: false, so a machine passes only when its whole {pct}% set lies above 0.5 "
    "(the open criterion: a set that starts exactly at 0.5 is inconclusive), which keeps the nominal size."
)


def closed_text(crit: pd.DataFrame, pct: int, alpha: float, closed: bool = True) -> str:
    """The three-player criterion used (closed or open) and its exact size at each witness's n."""
    head = (CLOSED_NOTE if closed else OPEN_NOTE).format(pct=pct)
    if crit.empty or "size" not in crit:
        return head
    by_n = crit.drop_duplicates("n").sort_values("n")
    sizes = ", ".join(f"{s:.2%} at n = {int(n)}" for n, s in zip(by_n["n"], by_n["size"]))
    return (f"{head} Its size (the chance of “passes” as P(S_m) rises to 0.5 from below, summed exactly over "
            f"the outcomes that pass): {sizes}; nominal {alpha / 2:.2%} (α/2, one side of the {pct}% set)."
            + (" The study file can choose the open criterion (criteria.closed: false)." if closed else ""))


def cluster_one_sample_test(y, c, p0: float) -> dict:
    """Test mean(y) = p0 for 0/1 outcomes y clustered by c (CR1 sandwich SE, t with G - 1 df)."""
    y = np.asarray(y, float)
    n = len(y)
    if n == 0:
        return {"diff": np.nan, "se": np.nan, "p_value": np.nan}
    m = y.mean()
    codes, uniq = pd.factorize(np.asarray(c, object))
    g = len(uniq)
    u = np.bincount(codes, weights=(y - m) / n, minlength=g)
    se = float(np.sqrt(g / (g - 1) * np.sum(u**2))) if g > 1 else np.nan
    diff = m - p0
    if not np.isfinite(se):
        return {"diff": diff, "se": se, "p_value": np.nan}
    if se == 0:
        return {"diff": diff, "se": se, "p_value": 1.0 if diff == 0 else 0.0}
    return {"diff": diff, "se": se, "p_value": float(2 * t_dist.sf(abs(diff / se), g - 1))}


def _direction(diff: float, p: float, alpha: float) -> str:
    if not np.isfinite(p) or p >= alpha:
        return "inconclusive"
    return "passes" if diff > 0 else "fails"


def holm_decisions(crit: pd.DataFrame, fmt: str, alpha: float, human: tuple[int, int] | None,
                   closed: bool = True) -> tuple[list, list]:
    """(Holm-adjusted p, decision under Holm's step-down) per row of a criteria table."""
    from turinglab import stats

    p = crit["p_value"].to_numpy(float)
    m = len(p)
    adj = multipletests(p, alpha=alpha, method="holm")[1].tolist() if m else []
    out = ["inconclusive"] * m
    for r, i in enumerate(np.argsort(p, kind="mergesort")):
        level = alpha / (m - r)
        k, n = int(crit["k"].iloc[i]), int(crit["n"].iloc[i])
        if fmt == "three-player":
            d = stats.three_player(k, n, alpha=level, closed=closed).decision
        else:
            d = stats.two_player(k, n, human[0], human[1], alpha=level).decision
        if d == "inconclusive":
            break
        out[i] = d
    return adj, out


def add_companions(crit: pd.DataFrame, df: pd.DataFrame, fmt: str, alpha: float, family: str = "holm",
                   first_only: bool = False, closed: bool = True) -> pd.DataFrame:
    """The criteria table with p_holm, decision_family, se_cluster, p_cluster, decision_cluster."""
    if family not in FAMILIES:
        raise ValueError(f"pass_decisions must be one of {', '.join(FAMILIES)}; got {family!r}")
    out = crit.copy()
    cols = ("p_holm", "decision_family", "se_cluster", "p_cluster", "decision_cluster")
    if out.empty:
        for c in cols:
            out[c] = pd.Series(dtype=object if c.startswith("decision") else float)
        return out
    d = df[df["game_index"] == 1] if first_only else df
    y = d["judged_human"].astype(bool).to_numpy()
    w = d["witness"].astype(str).to_numpy()
    c = d["interrogator_id"].astype(str).to_numpy()
    hm = (d["witness_kind"] == "human").to_numpy()
    human = (int(y[hm].sum()), int(hm.sum())) if hm.any() else None
    res = []
    for r in out.itertuples(index=False):
        mw = w == str(r.witness)
        if fmt == "three-player":
            res.append(cluster_one_sample_test(y[mw], c[mw], 0.5))
        else:
            res.append(cluster_diff_test(y[mw], c[mw], y[hm], c[hm]))
    adj, fam = holm_decisions(out, fmt, alpha, human, closed)
    out["p_holm"] = adj
    out["decision_family"] = fam if family == "holm" else out["decision"].tolist()
    out["se_cluster"] = [x["se"] for x in res]
    out["p_cluster"] = [x["p_value"] for x in res]
    out["decision_cluster"] = [_direction(x["diff"], x["p_value"], alpha) for x in res]
    return out
