"""Statistics at the boundary and at scale: exact ties, two-player consistency, tails at large n,
k = 0 and k = n at huge n, oversized input. References: mpmath, scipy, statsmodels, brute force."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats import proportion as sm_proportion
from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.stats import binom_pvalue, interval, three_player, two_player
from turinglab.stats.binomial import MAX_N, cdf, check_counts, sf, two_sided_pvalues

runner = CliRunner()


def brute_sterne(k: int, n: int, p) -> float:
    """Sterne p-value in exact rational arithmetic (p a fractions-friendly mpf)."""
    pm = [mp.binomial(n, j) * p**j * (1 - p) ** (n - j) for j in range(n + 1)]
    return float(mp.fsum(x for x in pm if x <= pm[k]))


# --- exact ties never move a bound across the threshold -----------------------------------


def test_sixty_of_hundred_passes_with_the_exact_set():
    res = three_player(60, 100)
    assert res.interval.pieces[0][0] == 0.5  # exactly: pmf(40) = pmf(60) at p = 1/2
    assert res.decision == "passes"
    # the definition: p = 1/2 is accepted, anything just below is rejected
    mp.mp.dps = 50
    assert brute_sterne(60, 100, mp.mpf(1) / 2) >= 0.05
    assert brute_sterne(60, 100, mp.mpf(1) / 2 - mp.mpf("1e-12")) < 0.05
    # the mirror case touches 0.5 from below: not every plausible rate is below 50%
    assert interval(40, 100).pieces[-1][1] == 0.5 and three_player(40, 100).decision == "inconclusive"


@pytest.mark.parametrize("n", [20, 100, 101])
def test_three_player_decision_matches_brute_force_near_the_threshold(n):
    mp.mp.dps = 50
    half, eps = mp.mpf(1) / 2, mp.mpf("1e-10")
    for k in range(n + 1):
        d = three_player(k, n).decision
        at, below, above = (brute_sterne(k, n, half + s) >= 0.05 for s in (0, -eps, eps))
        # passes: nothing below 0.5 is accepted; fails: 0.5 and the rates just above are rejected
        if d == "passes":
            assert not below, k
        elif d == "fails":
            assert not at and not above, k
        elif at and not below:  # inconclusive although 0.5 is accepted and just below is not:
            assert three_player(k, n).interval.low < 0.5, k  # only a piece further down can say so


# --- two-player: one test gives both the p-value and the decision -------------------------


def test_two_player_p_value_and_decision_agree():
    res = two_player(54, 100, 67, 100)
    ref = stats.boschloo_exact([[54, 67], [46, 33]], alternative="two-sided").pvalue
    assert res.p_value == pytest.approx(ref, rel=1e-12)
    assert res.p_value >= 0.05 and res.decision == "inconclusive"
    assert "Boschloo" in res.test and "two-sided" in res.test
    for km, kh in ((40, 67), (80, 55), (60, 62)):
        r = two_player(km, 100, kh, 100)
        want = "inconclusive" if r.p_value >= 0.05 else ("fails" if km < kh else "passes")
        assert r.decision == want


def test_two_player_large_counts_name_the_score_test():
    r = two_player(5400, 10000, 6700, 10000)
    ref = sm_proportion.test_proportions_2indep(5400, 10000, 6700, 10000, method="score", compare="diff").pvalue
    assert r.p_value == pytest.approx(ref, rel=1e-9)
    assert "score" in r.test and "Boschloo" in r.test  # says why it is not the exact test
    forced = two_player(5400, 10000, 6700, 10000, test="score")
    assert forced.p_value == r.p_value and "chosen because" not in forced.test
    with pytest.raises(ValueError, match="unknown test"):
        two_player(1, 2, 1, 2, test="fisher")


# --- tails accurate at every n ---------------------------------------------------------------


def mp_lower_tail(k: int, n: int, p: float) -> mp.mpf:
    """P(X <= k) by summing terms downwards from k until they no longer matter (k below the mode)."""
    mp.mp.dps = 40
    p = mp.mpf(p)
    term = mp.binomial(n, k) * p**k * (1 - p) ** (n - k)
    total, j = mp.mpf(0), k
    while j >= 0 and term > total * mp.mpf("1e-30"):
        total += term
        term = term * j / (n - j + 1) * (1 - p) / p
        j -= 1
    return total


@pytest.mark.parametrize("n, k, p", [(2_000, 900, 0.5), (20_000, 9_700, 0.5), (10**6, 498_000, 0.5),
                                     (10**7, 2_990, 3e-4), (10**5, 10, 1e-4)])
def test_tails_are_accurate_to_1e_12_relative(n, k, p):
    ref = mp_lower_tail(k, n, p)
    assert abs(float(cdf(k, n, p)) - ref) / ref < 1e-12
    if p == 0.5:  # the upper tail by symmetry (1 - p is exact only here), and Sterne = twice the tail
        assert abs(float(sf(n - k - 1, n, 0.5)) - ref) / ref < 1e-12
        assert abs(binom_pvalue(k, n, 0.5) - 2 * ref) / (2 * ref) < 1e-12


# --- k = 0 and k = n at huge n ----------------------------------------------------------------


def poisson_sterne_upper(alpha: float) -> float:
    """Limit of n * (upper bound) for 0 of n: Sterne's set for a Poisson count of 0."""

    def pv(lam):
        h = 1
        while stats.poisson.pmf(h, lam) > math.exp(-lam):
            h += 1
        return math.exp(-lam) + stats.poisson.sf(h - 1, lam) - alpha

    return optimize.brentq(pv, 1.0, 10.0, xtol=1e-14)


@pytest.mark.parametrize("n", [10**7, 10**9])
def test_zero_of_huge_n_is_exact_and_matches_the_poisson_limit(n):
    lim = poisson_sterne_upper(0.05)
    ci = interval(0, n)
    assert ci.pieces[0][0] == 0.0 and ci.is_interval
    assert n * ci.high == pytest.approx(lim, rel=1e-5)
    b = ci.high
    assert two_sided_pvalues(0, n, b * (1 - 1e-9))[0] >= 0.05 > two_sided_pvalues(0, n, b * (1 + 1e-6))[0]
    top = interval(n, n)  # mirror image
    assert 1 - top.low == pytest.approx(b, rel=1e-6) and top.high == 1.0


# --- oversized input: one clear line ----------------------------------------------------------


def test_counts_past_the_limit_are_refused():
    with pytest.raises(ValueError, match="too large"):
        check_counts(0, MAX_N + 1)
    for args in (["binom", "0", "99999999999999999999"], ["binom", "1", str(10**15)],
                 ["three-player", "--machine-chosen", f"1/{2**64}"],
                 ["two-player", "--machine", "1/10", "--human", f"3/{10**30}"]):
        r = runner.invoke(app, ["stats", *args])
        assert r.exit_code == 2, (args, r.output)
        assert "at most" in r.output and "Traceback" not in r.output
        assert len(r.output.strip().splitlines()) == 1


def test_binom_cli_shows_tiny_bounds_readably():
    r = runner.invoke(app, ["stats", "binom", "0", "1000000000"])
    assert r.exit_code == 0, r.output
    assert "3.76435e-09" in r.output and "[0.000000, 0.000000]" not in r.output
