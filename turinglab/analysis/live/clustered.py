"""A cluster-aware two-sample test: games are clustered in interrogators.

The exact tests in `tables` treat every game as independent. Here the difference of two
success rates gets a cluster-robust (sandwich) standard error over interrogators: each
game's influence on p_a − p_b is summed within its interrogator, the variance is
G/(G−1)·Σ_c u_c², and the statistic is referred to t with G−1 degrees of freedom (G =
interrogators in the two groups). This is the difference-in-means regression y ~ group with
cluster-robust errors (CR1), without the (N−1)/(N−K) factor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import t as t_dist


def cluster_diff_test(y_a, c_a, y_b, c_b) -> dict:
    """Test p_a = p_b for 0/1 outcomes y with cluster labels c. Returns diff, se, t, df, p."""
    y_a, y_b = np.asarray(y_a, float), np.asarray(y_b, float)
    n_a, n_b = len(y_a), len(y_b)
    if n_a == 0 or n_b == 0:
        return {"diff": np.nan, "se": np.nan, "t": np.nan, "df": 0, "p_value": np.nan}
    pa, pb = y_a.mean(), y_b.mean()
    infl = np.r_[(y_a - pa) / n_a, -(y_b - pb) / n_b]
    codes, uniq = pd.factorize(np.r_[np.asarray(c_a, object), np.asarray(c_b, object)])
    g = len(uniq)
    u = np.bincount(codes, weights=infl, minlength=g)
    var = g / (g - 1) * float(np.sum(u ** 2)) if g > 1 else np.nan
    diff = pa - pb
    se = float(np.sqrt(var)) if var == var else np.nan
    if not se or se != se:
        return {"diff": diff, "se": se, "t": np.nan, "df": g - 1, "p_value": np.nan if se != se else (1.0 if diff == 0 else 0.0)}
    tt = diff / se
    return {"diff": diff, "se": se, "t": tt, "df": g - 1, "p_value": float(2 * t_dist.sf(abs(tt), g - 1))}


def add_cluster_tests(comp: pd.DataFrame, df: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """Beside each exact comparison, the cluster-aware p (and its Holm adjustment)."""
    from statsmodels.stats.multitest import multipletests

    out = comp.copy()
    if out.empty:
        for c in ("se_cluster", "p_cluster", "p_cluster_holm"):
            out[c] = pd.Series(dtype=float)
        return out
    y = df["judged_human"].astype(bool).to_numpy()
    w = df["witness"].to_numpy()
    c = df["interrogator_id"].astype(str).to_numpy()
    res = []
    for r in out.itertuples(index=False):
        ma, mb = w == r.a, w == r.b
        res.append(cluster_diff_test(y[ma], c[ma], y[mb], c[mb]))
    out["se_cluster"] = [r["se"] for r in res]
    out["p_cluster"] = [r["p_value"] for r in res]
    p = out["p_cluster"].to_numpy(float)
    ok = np.isfinite(p)
    holm = np.full(len(p), np.nan)
    if ok.any():
        holm[ok] = multipletests(p[ok], alpha=alpha, method="holm")[1]
    out["p_cluster_holm"] = holm
    return out
