"""Cluster bootstrap (resampling interrogators) and inverse-probability weighting.

Interrogators play several games, so games are not independent. The cluster bootstrap
draws interrogators with replacement (all of a drawn interrogator's games come along)
and takes percentile intervals.

Adaptive allocation (Thompson sampling) gives better witnesses more games, at times and
to interrogators that differ from the rest. The IPW (Hájek) estimate weights each AI game
by 1/selection_prob of its witness:

    SR_ipw(w) = Σ_games[w] Y/π  /  Σ_games[w] 1/π

Estimand: the success rate witness w would have had if it had been chosen in every AI
game of the study (the same interrogators at the same points in their sequence), i.e.
an average over all the study's AI games, each counted once, rather than over the games
w happened to receive. It is consistent when every π > 0 is the true probability given
the history, which matchmaking records with each game.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CHUNK = 25  # bootstrap replicates drawn per block (fixed: the export's rebuild.py repeats it)


def interrogator_codes(df: pd.DataFrame) -> tuple[np.ndarray, int]:
    """Integer code per row: interrogators numbered by their first game (start time, game id).

    The order does not depend on the ids themselves, so pseudonymised exports resample
    the same way as the database.
    """
    first = (
        df[["interrogator_id", "started_ms", "game_id"]]
        .sort_values(["started_ms", "game_id"], kind="mergesort")
        .drop_duplicates("interrogator_id")
    )
    code = pd.Series(np.arange(len(first)), index=first["interrogator_id"].to_numpy())
    return df["interrogator_id"].map(code).to_numpy(dtype=np.int64), len(first)


def draw_weights(n_clusters: int, n_boot: int, seed: int):
    """Yield blocks of bootstrap weights (how often each cluster was drawn), CHUNK rows at a time."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_boot:
        m = min(CHUNK, n_boot - done)
        idx = rng.integers(0, n_clusters, size=(m, n_clusters))
        w = np.zeros((m, n_clusters), dtype=np.float64)
        for r in range(m):
            w[r] = np.bincount(idx[r], minlength=n_clusters)
        done += m
        yield w


def cluster_sums(codes: np.ndarray, n_clusters: int, groups: np.ndarray, n_groups: int, values: np.ndarray) -> np.ndarray:
    """Matrix [cluster, group] of sums of `values`."""
    flat = codes * n_groups + groups
    return np.bincount(flat, weights=values, minlength=n_clusters * n_groups).reshape(n_clusters, n_groups)


def ratio_bootstrap(num: np.ndarray, den: np.ndarray, n_boot: int, seed: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of Σnum/Σden per column, resampling rows (clusters)."""
    reps = []
    for w in draw_weights(num.shape[0], n_boot, seed):
        with np.errstate(invalid="ignore", divide="ignore"):
            reps.append((w @ num) / (w @ den))
    r = np.vstack(reps)
    low = np.nanquantile(r, alpha / 2, axis=0)
    high = np.nanquantile(r, 1 - alpha / 2, axis=0)
    return low, high


def exact_fallback(low: np.ndarray, high: np.ndarray, k: np.ndarray, n: np.ndarray, alpha: float):
    """Replace degenerate bootstrap intervals (width 0 or undefined) by the exact Sterne interval
    of the raw counts k of n; returns (low, high, note) with a note on each replaced cell.

    A tiny cell (all games judged alike, or one interrogator) makes every resample give the same
    ratio, so the percentile interval collapses to a point such as [0.000, 0.000].
    """
    from turinglab.stats import interval

    low, high = np.array(low, dtype=float), np.array(high, dtype=float)
    note = [""] * len(low)
    for i in range(len(low)):
        if not (np.isfinite(low[i]) and np.isfinite(high[i]) and high[i] - low[i] > 1e-12) and n[i] >= 1:
            ci = interval(int(round(k[i])), int(round(n[i])), alpha)
            low[i], high[i] = ci.low, ci.high
            note[i] = f"exact interval of {int(round(k[i]))}/{int(round(n[i]))} (bootstrap interval degenerate)"
    return low, high, note


def bootstrap_table(df: pd.DataFrame, games: pd.DataFrame, alpha: float, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Per witness SR, and overall accuracy, with cluster-bootstrap percentile intervals."""
    witnesses = sorted(df["witness"].astype(str).unique())
    wcode = pd.Series(np.arange(len(witnesses)), index=witnesses)
    codes, n_c = interrogator_codes(df)
    g = df["witness"].astype(str).map(wcode).to_numpy()
    k = cluster_sums(codes, n_c, g, len(witnesses), df["judged_human"].to_numpy(dtype=float))
    n = cluster_sums(codes, n_c, g, len(witnesses), np.ones(len(df)))
    gcodes, _ = interrogator_codes(games)
    # accuracy as one more column, per game
    k = np.column_stack([k, np.bincount(gcodes, weights=games["correct"].to_numpy(dtype=float), minlength=n_c)])
    n = np.column_stack([n, np.bincount(gcodes, minlength=n_c).astype(float)])
    low, high = ratio_bootstrap(k, n, n_boot, seed, alpha)
    low, high, note = exact_fallback(low, high, k.sum(0), n.sum(0), alpha)
    est = k.sum(0) / n.sum(0)
    names = witnesses + ["accuracy (all games)"]
    return pd.DataFrame({"quantity": names, "estimate": est, "low": low, "high": high,
                         "n": n.sum(0).astype(int), "n_interrogators": int(n_c), "note": note})


def ipw_table(df: pd.DataFrame, alpha: float, n_boot: int = 1000, seed: int = 1) -> pd.DataFrame:
    """IPW (Hájek) success rate per AI witness with a cluster-bootstrap interval.

    Uses AI rows with a recorded selection_prob in (0, 1]; says how many had one.
    """
    cols = ["witness", "n", "n_with_prob", "naive", "ipw", "low", "high", "note"]
    ai = df[df["witness_kind"] == "ai"]
    ok = ai[ai["selection_prob"].notna() & (ai["selection_prob"] > 0) & (ai["selection_prob"] <= 1)]
    if ok.empty:
        return pd.DataFrame(columns=cols)
    witnesses = sorted(ok["witness"].astype(str).unique())
    wcode = pd.Series(np.arange(len(witnesses)), index=witnesses)
    codes, n_c = interrogator_codes(ok)
    g = ok["witness"].astype(str).map(wcode).to_numpy()
    inv = 1.0 / ok["selection_prob"].to_numpy(dtype=float)
    y = ok["judged_human"].to_numpy(dtype=float)
    num = cluster_sums(codes, n_c, g, len(witnesses), y * inv)
    den = cluster_sums(codes, n_c, g, len(witnesses), inv)
    low, high = ratio_bootstrap(num, den, n_boot, seed, alpha)
    n_g = np.bincount(g, minlength=len(witnesses))
    low, high, note = exact_fallback(low, high, np.bincount(g, weights=y, minlength=len(witnesses)), n_g, alpha)
    n_all = ai.groupby(ai["witness"].astype(str)).size()
    naive = ok.groupby(ok["witness"].astype(str))["judged_human"].mean()
    return pd.DataFrame({
        "witness": witnesses,
        "n": [int(n_all.get(w, 0)) for w in witnesses],
        "n_with_prob": np.bincount(g, minlength=len(witnesses)),
        "naive": [float(naive[w]) for w in witnesses],
        "ipw": num.sum(0) / den.sum(0), "low": low, "high": high, "note": note,
    }, columns=cols)
