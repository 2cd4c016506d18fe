"""Leaderboard: exact intervals, bot games apart, Bradley–Terry against an MM fit (Hunter 2004)
and its intervals' coverage by simulation; the cluster-robust comparison against statsmodels
and its false-positive rate under clustering."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact

from turinglab import stats
from turinglab.analysis.live.clustered import cluster_diff_test
from turinglab.analysis.live.leaderboard import bradley_terry, humanlikeness, leaderboard, three_player_pairs


def mm_bradley_terry(pairs: pd.DataFrame, iters: int = 5000) -> dict[str, float]:
    """Hunter's (2004) MM algorithm: γ_i ← W_i / Σ_j n_ij / (γ_i + γ_j); returned as log γ."""
    players = sorted(set(pairs["winner"]) | set(pairs["loser"]))
    ix = {p: i for i, p in enumerate(players)}
    k = len(players)
    wins = np.zeros(k)
    n = np.zeros((k, k))
    for w, l_ in zip(pairs["winner"], pairs["loser"]):
        wins[ix[w]] += 1
        n[ix[w], ix[l_]] += 1
        n[ix[l_], ix[w]] += 1
    g = np.ones(k)
    for _ in range(iters):
        denom = (n / (g[:, None] + g[None, :])).sum(1)
        g = wins / denom
        g /= g.sum()
    return dict(zip(players, np.log(g)))


def tournament(strength: dict[str, float], n: int, rng) -> pd.DataFrame:
    names = list(strength)
    rows = []
    for _ in range(n):
        a, b = rng.choice(len(names), 2, replace=False)
        pa = 1 / (1 + np.exp(-(strength[names[a]] - strength[names[b]])))
        rows.append((names[a], names[b]) if rng.random() < pa else (names[b], names[a]))
    return pd.DataFrame(rows, columns=["winner", "loser"])


def test_bradley_terry_mle_matches_the_mm_algorithm():
    rng = np.random.default_rng(3)
    pairs = tournament({"Human": 0.0, "A": 0.8, "B": -0.5, "C": 0.2, "D": -1.0}, 600, rng)
    ours = bradley_terry(pairs, reference="Human").set_index("player")["beta"]
    mm = mm_bradley_terry(pairs)
    for p in ours.index:
        assert ours[p] == pytest.approx(mm[p] - mm["Human"], abs=1e-6)
    assert ours["Human"] == 0.0 and ours["A"] > ours["D"]


def test_bradley_terry_wald_intervals_cover_at_the_stated_rate():
    rng = np.random.default_rng(11)
    truth = {"Human": 0.0, "A": 0.6, "B": -0.4}
    hits, reps = 0, 300
    for _ in range(reps):
        bt = bradley_terry(tournament(truth, 150, rng), reference="Human").set_index("player")
        hits += bt.loc["A", "low"] <= truth["A"] <= bt.loc["A", "high"]
    assert 0.91 <= hits / reps <= 0.98, hits / reps  # 95% nominal, MC error about ±0.013


def rows_three_player(rates: dict[str, float], n: int, rng, bot: bool = False) -> pd.DataFrame:
    out = []
    for gi in range(n):
        w = list(rates)[gi % len(rates)]
        machine_wins = rng.random() < rates[w]
        gid = f"{'b' if bot else 'g'}{gi}"
        out += [{"game_id": gid, "format": "three-player", "seat": "A", "witness_kind": "ai", "witness": w,
                 "judged_human": machine_wins, "bot": bot},
                {"game_id": gid, "format": "three-player", "seat": "B", "witness_kind": "human", "witness": "Human",
                 "judged_human": not machine_wins, "bot": bot}]
    return pd.DataFrame(out)


def test_leaderboard_exact_intervals_bots_apart_and_bradley_terry_from_three_player_games():
    rng = np.random.default_rng(5)
    real = rows_three_player({"Dragon": 0.45, "ELIZA": 0.2}, 300, rng)
    bots = rows_three_player({"Dragon": 0.9}, 40, rng, bot=True)
    res = leaderboard(pd.concat([real, bots], ignore_index=True))
    t = res["table"]
    assert set(t.loc[t["bot"], "witness"]) == {"Dragon", "Human"}
    real_dragon = t[(t["witness"] == "Dragon") & ~t["bot"]].iloc[0]
    iv = stats.interval(int(real_dragon["k"]), int(real_dragon["n"]), alpha=0.05)
    assert (real_dragon["low"], real_dragon["high"]) == pytest.approx((iv.low, iv.high))
    assert real_dragon["n"] == 150  # the bot games are not in the real row
    assert list(t[~t["bot"]]["rank"]) == [1, 2, 3]
    bt = res["bradley_terry"].set_index("player")
    pairs = three_player_pairs(real)
    assert len(pairs) == 300 and bt.loc["Dragon", "comparisons"] == 150  # bots left out of the fit
    k = int(real_dragon["k"])
    # with only AI-vs-human comparisons, the MLE is the logit of the AI's win share
    assert bt.loc["Dragon", "beta"] == pytest.approx(np.log(k / (150 - k)), abs=1e-6)
    assert any("Bot games" in n for n in res["notes"])


def test_humanlikeness_two_player_and_a_witness_that_always_loses():
    d = pd.DataFrame({"game_id": ["1", "2", "3"], "format": "two-player", "seat": "A", "witness_kind": "ai",
                      "witness": "X", "judged_human": [False, False, False], "bot": False})
    t = humanlikeness(d)
    assert t.loc[0, "rate"] == 0 and t.loc[0, "low"] == 0 and t.loc[0, "high"] > 0.5


def test_cluster_test_equals_statsmodels_cluster_robust_ols():
    import statsmodels.api as sm

    rng = np.random.default_rng(2)
    n = 400
    cl = rng.integers(0, 60, n)
    grp = rng.random(n) < 0.5
    y = (rng.random(n) < 0.4 + 0.1 * grp).astype(float)
    ours = cluster_diff_test(y[grp], cl[grp], y[~grp], cl[~grp])
    fit = sm.OLS(y, sm.add_constant(grp.astype(float))).fit(cov_type="cluster", cov_kwds={"groups": cl})
    # statsmodels' CR1 also multiplies by (N−1)/(N−K); ours leaves that factor out
    assert ours["diff"] == pytest.approx(fit.params[1])
    assert ours["se"] * np.sqrt((n - 1) / (n - 2)) == pytest.approx(fit.bse[1], rel=1e-9)


def test_cluster_test_keeps_its_false_positive_rate_where_the_exact_test_does_not():
    """Under H0 (the witness does not matter) with interrogators who differ and who mostly
    meet one witness, the exact test (games independent) rejects too often; the
    cluster-robust one stays near α."""
    rng = np.random.default_rng(7)
    reps, g, m = 400, 60, 8
    rej_exact = rej_cluster = 0
    for _ in range(reps):
        bias = rng.normal(0, 2.0, g)
        own = rng.random(g) < 0.5  # the witness each interrogator mostly meets
        cl = np.repeat(np.arange(g), m)
        a = np.where(rng.random(g * m) < 0.9, np.repeat(own, m), ~np.repeat(own, m))
        y = rng.random(g * m) < 1 / (1 + np.exp(-np.repeat(bias, m)))
        ka, na, kb, nb = y[a].sum(), a.sum(), y[~a].sum(), (~a).sum()
        rej_exact += fisher_exact([[ka, kb], [na - ka, nb - kb]]).pvalue < 0.05
        rej_cluster += cluster_diff_test(y[a], cl[a], y[~a], cl[~a])["p_value"] < 0.05
    assert rej_exact / reps > 0.15, rej_exact / reps  # about 0.22 with this seed
    assert 0.02 <= rej_cluster / reps <= 0.08, rej_cluster / reps
