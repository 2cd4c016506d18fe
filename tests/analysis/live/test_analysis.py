"""Analysis over the tidy tables: published numbers, flags, resampling, IPW, models."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm

from turinglab.analysis.live import accuracy, resample, tables
from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.live.flags import apply_exclusions, flag_table, knows_witness_from_reason, three_previous_ai
from turinglab.analysis.live.schema import SchemaError, validate_judgements
from turinglab.analysis.demo.synth import SynthSpec, from_counts, simulate

# Jones & Bergen (2023) table 1: SR (n) overall and in first games. k = round(SR * n);
# Dragon's 0.497 is the paper's text ("49.7%"), i.e. 425 of 855.
JB_TABLE1 = {
    "ELIZA": ((38, 171), (6, 39)),
    "GPT-4 Sierra": ((35, 90), (14, 37)),
    "GPT-4 Dragon": ((425, 855), (362, 709)),
}
JB_HUMAN = ((523, 793), (194, 308))
FAST = Options(n_boot=200, max_games_mixed=0)


@pytest.fixture(scope="module")
def jb():
    df = from_counts(
        {w: v[0] for w, v in JB_TABLE1.items()},
        human=JB_HUMAN[0],
        first_games={**{w: v[1] for w, v in JB_TABLE1.items()}, "Human": JB_HUMAN[1]},
        study="jones-bergen-2023-table1",
    )
    return analyse(df, None, Options(n_boot=200, max_games_mixed=0, exclude=()))


def test_jb_table1_counts_are_rebuilt(jb):
    sr = jb.success.set_index("witness")
    assert sr.loc["GPT-4 Dragon", "n"] == 855 and round(sr.loc["GPT-4 Dragon", "sr"], 3) == 0.497
    assert sr.loc["Human", "n"] == 793 and round(sr.loc["Human", "sr"], 2) == 0.66
    assert sr.loc["ELIZA", "n"] == 171 and round(sr.loc["ELIZA", "sr"], 2) == 0.22
    assert sr.loc["GPT-4 Dragon", "n_first"] == 709 and round(sr.loc["GPT-4 Dragon", "sr_first"], 2) == 0.51
    assert sr.loc["Human", "n_first"] == 308 and round(sr.loc["Human", "sr_first"], 2) == 0.63


def test_jb_conclusions(jb):
    sr = jb.success.set_index("witness")
    # best prompt not different from 50%; humans above; ELIZA below
    assert sr.loc["GPT-4 Dragon", "p_value"] > 0.05 and sr.loc["GPT-4 Dragon", "low"] < 0.5 < sr.loc["GPT-4 Dragon", "high"]
    assert sr.loc["Human", "low"] > 0.5 and sr.loc["Human", "p_value"] < 0.001
    assert sr.loc["ELIZA", "high"] < 0.5 and sr.loc["ELIZA", "p_value"] < 0.001
    # Sierra, the next best, is (just) below 50% at the 5% level, as in the paper
    assert sr.loc["GPT-4 Sierra", "p_value"] < 0.05 and sr.loc["GPT-4 Sierra", "high"] < 0.5
    # the p-value is the exact two-sided one (scipy's "minlike" is the same rule)
    assert sr.loc["GPT-4 Dragon", "p_value"] == pytest.approx(binomtest(425, 855, 0.5).pvalue, rel=1e-6)
    # humans judged human significantly more often than Dragon (J&B: z = 6.63)
    comp = jb.comparisons.set_index(["a", "b"])
    assert comp.loc[("GPT-4 Dragon", "Human"), "p_holm"] < 0.001
    # Giunti's two-player criterion: Dragon fails against the humans' own rate
    crit = jb.criteria.set_index("witness")
    assert crit.loc["GPT-4 Dragon", "decision"] == "fails"
    assert crit.loc["GPT-4 Dragon", "threshold"] == pytest.approx(523 / 793)
    assert crit.loc["GPT-4 Dragon", "humanness"] == pytest.approx((425 / 855) / (523 / 793))


def test_jb_report_states_the_conclusions(jb):
    from turinglab.analysis.report.report import render_html

    html = render_html(jb)
    NO_SPEC = r'<td class="l"></td><td class="l"></td>'  # type and model: no study file given
    p_dragon = binomtest(425, 855, 0.5).pvalue
    # Dragon's row: SR 0.50, n 855, p (vs 50%) as in the paper's "not different from 50%"
    assert re.search(rf"GPT-4 Dragon</td><td class=\"l\">ai</td>{NO_SPEC}<td>0.497</td><td>855</td><td>\[0.4\d\d, 0.5\d\d\]</td><td>{p_dragon:.3f}</td>", html)
    assert re.search(r"Human</td><td class=\"l\">human</td><td class=\"l\">human</td><td class=\"l\"></td><td>0.66\d</td><td>793</td><td>\[0.6\d\d, 0.6\d\d\]</td><td>&lt; 0.001</td>", html)
    assert re.search(r"ELIZA</td><td class=\"l\">ai</td>" + NO_SPEC + r"<td>0.2\d\d</td><td>171</td><td>\[0.1\d\d, 0.2\d\d\]</td><td>&lt; 0.001</td>", html)
    assert re.search(r"GPT-4 Dragon</td><td>0.497</td>.*?<td class=\"l fails\">fails</td>", html)


def test_giunti_worked_example_three_player():
    # 9 correct identifications in 10 three-player games: the machine was chosen once
    df = from_counts({"M": (1, 10)}, format="three-player")
    a = analyse(df, None, Options(n_boot=200, max_games_mixed=0, exclude=()))
    crit = a.criteria.set_index("witness").loc["M"]
    assert crit["p_value"] == pytest.approx(0.021484375, rel=1e-9)
    assert crit["decision"] == "fails"
    assert crit["threshold"] == 0.5
    assert crit["humanness"] == pytest.approx(0.2)
    # the paper's grid walk gives [0.56, 0.99] for correct identification at 5%: exact bounds are wider
    assert 1 - crit["ms_high"] < 0.56 and 1 - crit["ms_low"] > 0.99
    assert a.comparisons.empty  # never two-sample tests in three-player
    sr = a.success.set_index("witness")
    assert sr.loc["Human", "k"] == 9 and sr.loc["Human", "n"] == 10
    assert a.accuracy.iloc[0]["k"] == 9 and a.accuracy.iloc[0]["n"] == 10


def test_three_previous_ai_matches_a_loop():
    rng = np.random.default_rng(5)
    n = 400
    games = pd.DataFrame({
        "game_id": [f"g{i}" for i in range(n)],
        "interrogator_id": rng.choice(["a", "b", "c", "d"], size=n),
        "started_ms": rng.permutation(n) * 1000,
        "has_ai": rng.random(n) < 0.6,
    })
    got = three_previous_ai(games)
    expect = {}
    for _, g in games.sort_values("started_ms").groupby("interrogator_id"):
        kinds = list(g["has_ai"])
        for pos, gid in enumerate(g["game_id"]):
            expect[gid] = pos >= 3 and all(kinds[pos - 3:pos])
    assert got.tolist() == [expect[g] for g in games["game_id"]]
    assert 0 < got.sum() < n


def test_knows_witness_reason():
    r = pd.Series(["I know her personally", "my friend Tom", "typos", None, "knowledge of maths", "I knew who it was"])
    assert knows_witness_from_reason(r).tolist() == [True, True, False, False, False, True]
    # the paper's own examples fire; a comparison with a friend does not
    fire = ["we sit in the same room", "they are from my class", "its my mate", "I know her, she is my sister"]
    quiet = ["sounds like my friend lol", "reminds me of my friend", "talks like my mate", "my friends say bots are slow"]
    assert knows_witness_from_reason(pd.Series(fire)).all()
    assert not knows_witness_from_reason(pd.Series(quiet)).any()


def test_exclusions_are_flags_not_deletions():
    df, _ = simulate(SynthSpec(n_games=600, seed=3))
    df.loc[df.index[df["witness_kind"].eq("human")][:3], "reason"] = "I know them personally"
    df = flag_table(df)
    assert df["flag_knows_witness"].sum() == 3
    kept, ex = apply_exclusions(df, ["knows_witness", "three_previous_ai"])
    assert len(df) == 600  # the input is untouched
    assert ex.games_flagged["knows_witness"] == 3
    assert ex.games_after == len(kept) == 600 - (df["flag_knows_witness"] | df["flag_three_previous_ai"]).sum()
    with pytest.raises(ValueError, match="unknown exclusion flag.*bogus"):
        apply_exclusions(df, ["bogus"])


def test_bad_tables_are_refused_clearly():
    df, _ = simulate(SynthSpec(n_games=50, seed=1))
    with pytest.raises(SchemaError, match="lacks column.*judged_human"):
        validate_judgements(df.drop(columns=["judged_human"]))
    bad = df.copy()
    bad.loc[bad.index[0], "witness_kind"] = "robot"
    with pytest.raises(SchemaError, match="witness_kind"):
        validate_judgements(bad)
    with pytest.raises(ValueError, match="alpha"):
        analyse(df, None, Options(alpha=1.5))


def test_dprime_and_brier_against_hand_computation():
    df, _ = simulate(SynthSpec(n_games=800, seed=9))
    games = accuracy.per_game(df)
    d = accuracy.dprime_table(games)
    ai = games["witness_kind"] == "ai"
    said_ai = ~games["judged_human"].astype(bool)
    h = ((ai & said_ai).sum() + 0.5) / (ai.sum() + 1)
    f = ((~ai & said_ai).sum() + 0.5) / ((~ai).sum() + 1)
    assert d["pooled"] == pytest.approx(norm.ppf(h) - norm.ppf(f))
    _, brier = accuracy.calibration(games, 0.05)
    p = 0.5 + games["confidence"].astype(float) / 200
    y = games["correct"].astype(float)
    assert brier["all"] == pytest.approx(float(((p - y) ** 2).mean()))


def test_sterne_intervals_cover_true_rates_at_nominal_rate():
    """Coverage simulation on the DataFrame level: the report's SR intervals contain the true rates."""
    rates = {"Dragon": 0.5, "Sierra": 0.35, "ELIZA": 0.2}
    hits = total = 0
    for seed in range(120):
        df, _ = simulate(SynthSpec(n_games=240, rates=rates, human_rate=0.66, seed=seed, adaptive=False))
        sr = tables.success_table(df, 0.05).set_index("witness")
        for w, p in {**rates, "Human": 0.66}.items():
            hits += sr.loc[w, "low"] <= p <= sr.loc[w, "high"]
            total += 1
    cover = hits / total
    assert 0.93 <= cover <= 0.995, cover


def test_cluster_bootstrap_widens_with_interrogator_effects():
    """With strong per-interrogator effects, resampling interrogators gives wider intervals than
    resampling games would; without them, about the same."""
    widths = {}
    for sd in (0.0, 2.0):
        df, _ = simulate(SynthSpec(n_games=3000, seed=4, interrogator_sd=sd, mean_games_per_interrogator=8, adaptive=False))
        games = accuracy.per_game(df)
        b = resample.bootstrap_table(df, games, 0.05, n_boot=300, seed=0).set_index("quantity")
        n = b.loc["Human", "n"]
        p = b.loc["Human", "estimate"]
        iid = 2 * 1.96 * np.sqrt(p * (1 - p) / n)
        widths[sd] = (b.loc["Human", "high"] - b.loc["Human", "low"]) / iid
    assert 0.8 < widths[0.0] < 1.25
    assert widths[2.0] > 1.4


def test_ipw_recovers_the_all_games_rate_under_adaptive_allocation():
    """Interrogators get more lenient over time while allocation favours witness W late: the naive
    SR of W is biased upward; the IPW estimate targets its rate over all AI games."""
    rng = np.random.default_rng(0)
    n = 60_000
    t = np.arange(n) / n
    base = {"W": 0.3, "V": 0.3}
    p_w = 0.1 + 0.8 * t  # probability of choosing W grows over time
    choose_w = rng.random(n) < p_w
    lenient = 0.4 * t  # later interrogators say "human" more often
    p = np.where(choose_w, base["W"], base["V"]) + lenient
    y = rng.random(n) < p
    df = pd.DataFrame({
        "game_id": [f"g{i}" for i in range(n)], "interrogator_id": [f"i{i // 3}" for i in range(n)],
        "started_ms": np.arange(n) * 1000, "witness_kind": "ai", "witness": np.where(choose_w, "W", "V"),
        "judged_human": y, "selection_prob": np.where(choose_w, p_w, 1 - p_w),
    })
    out = resample.ipw_table(df, 0.05, n_boot=100).set_index("witness")
    truth = base["W"] + float(lenient.mean())  # W's rate had it played every game
    assert abs(out.loc["W", "ipw"] - truth) < 0.01
    assert out.loc["W", "naive"] - truth > 0.04  # the bias the correction removes
    assert out.loc["W", "low"] <= truth <= out.loc["W", "high"]


def test_regressions_find_a_learning_effect():
    rng = np.random.default_rng(2)
    rows = []
    for i in range(400):
        u = rng.normal(0, 0.8)
        for gi in range(1, 6):
            p = 1 / (1 + np.exp(-(-0.3 + 0.35 * gi + u)))
            rows.append((f"g{i}-{gi}", f"p{i}", gi, rng.random() < p, rng.random() < 0.5))
    d = pd.DataFrame(rows, columns=["game_id", "interrogator_id", "game_index", "correct", "is_ai"])
    d["witness_kind"] = np.where(d["is_ai"], "ai", "human")
    from turinglab.analysis.live.models import regressions

    r = regressions(d, None, 0.05)
    gee = r["gee"].set_index("term").loc["game_index"]
    mixed = r["mixed"].set_index("term").loc["game_index"]
    assert gee["p_value"] < 0.001 and 0.15 < gee["estimate"] < 0.5
    # the mixed model's conditional slope is larger than GEE's marginal one, and near the truth
    assert mixed["p_value"] < 0.001 and 0.2 < mixed["estimate"] < 0.55


def test_analysis_numbers_cover_every_table():
    df, parts = simulate(SynthSpec(n_games=500, seed=11))
    a = analyse(df, parts, FAST)
    nums = a.numbers()
    assert nums["n_games"] == a.n_games
    for w in a.success["witness"]:
        assert f"success.{w}.low" in nums
    assert any(k.startswith("gee.") for k in nums) and any(k.startswith("ipw.") for k in nums)
    assert "mixed model skipped" in " ".join(a.regressions["notes"])


def _boschloo_brute(k1: int, n1: int, k2: int, n2: int) -> float:
    """Boschloo's two-sided p-value from its definition (scipy's convention: twice the smaller
    one-sided p), by enumerating every pair of outcomes over a fine grid of the common rate."""
    from scipy.stats import binom, hypergeom

    def fisher_greater(x1, x2):  # P(X1 >= x1 | margins): sample 1 has the higher rate
        return hypergeom.sf(x1 - 1, n1 + n2, x1 + x2, n1)

    def fisher_less(x1, x2):
        return hypergeom.cdf(x1, n1 + n2, x1 + x2, n1)

    x1, x2 = np.meshgrid(np.arange(n1 + 1), np.arange(n2 + 1), indexing="ij")
    grid = np.linspace(1e-6, 1 - 1e-6, 4001)
    out = []
    for stat in (fisher_greater, fisher_less):
        s = stat(x1, x2)
        extreme = s <= stat(k1, k2) * (1 + 1e-9)
        p1, p2 = binom.pmf(x1[..., None], n1, grid), binom.pmf(x2[..., None], n2, grid)
        out.append(float((p1 * p2 * extreme[..., None]).sum(axis=(0, 1)).max()))
    return min(1.0, 2 * min(out))


@pytest.mark.parametrize("k1,n1,k2,n2", [(3, 10, 9, 12), (1, 8, 6, 9), (5, 7, 2, 11)])
def test_witness_comparison_tests_the_two_samples(k1, n1, k2, n2):
    method, p = tables.two_sample(k1, n1, k2, n2)
    assert method == "boschloo"
    assert p == pytest.approx(_boschloo_brute(k1, n1, k2, n2), rel=2e-3)


def test_criteria_survive_no_human_judged_human():
    # a pilot where no human witness was judged human: the humanness ratio is unbounded
    a = analyse(from_counts({"X": (3, 12)}, human=(0, 8)))
    row = a.criteria.set_index("witness").loc["X"]
    assert row["threshold"] == 0 and row["hu_high"] == np.inf
    numbers = a.numbers()
    assert all(v is None or np.isfinite(v) for v in numbers.values())


def test_three_player_timing_check_has_both_witness_kinds():
    df, parts = simulate(SynthSpec(n_games=200, format="three-player", seed=3))
    t = analyse(df, parts).timing.set_index("kind")
    assert t.loc["human", "n"] == t.loc["ai", "n"] == 200
    assert np.isfinite(t.loc["human", "duration_median"])


def test_ipw_never_prints_a_degenerate_interval():
    import pandas as pd

    from turinglab.analysis.live.resample import ipw_table
    from turinglab.stats import interval

    rows = []
    for i in range(12):  # witness S: 3 games, all judged AI, one interrogator -> bootstrap [0, 0]
        w = "S" if i < 3 else "T"
        rows.append({"game_id": f"g{i}", "interrogator_id": "a" if w == "S" else f"i{i % 4}", "started_ms": i,
                     "witness": w, "witness_kind": "ai", "selection_prob": 0.05 if w == "S" else 0.9,
                     "judged_human": 0 if w == "S" else i % 2})
    t = ipw_table(pd.DataFrame(rows), 0.05, n_boot=200).set_index("witness")
    s = t.loc["S"]
    ci = interval(0, 3, 0.05)
    assert (s["low"], s["high"]) == (ci.low, ci.high) and s["high"] > s["low"]
    assert "exact interval of 0/3" in s["note"]
    assert t.loc["T", "note"] == "" and t.loc["T", "high"] > t.loc["T", "low"]
