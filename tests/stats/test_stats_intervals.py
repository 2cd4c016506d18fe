"""Exact Sterne/Blaker sets and the usual intervals, against the paper, scipy and statsmodels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from turinglab.stats import interval
from turinglab.stats.binomial import two_sided_pvalues



def exact_pvalue(k: int, n: int, p: float) -> float:
    """An independent two-sided (Sterne) p-value straight from the definition, exact ties only.

    scipy's binomtest counts outcomes within 1e-7 relative of pmf(k), which moves the edge of
    the counted set by ~1e-9 in p; this reference allows only 1e-11 in log pmf for rounding.
    """
    if p <= 0 or p >= 1:
        return float(two_sided_pvalues(k, n, p)[0])
    x = np.arange(n + 1)
    lp = stats.binom.logpmf(x, n, p)
    return float(min(1.0, np.exp(lp[lp <= lp[k] + 1e-11]).sum()))


# --- the paper --------------------------------------------------------------------------------


def test_paper_grid_figures_are_reproduced():
    five = interval(9, 10, 0.05, grid_step=0.01)
    one = interval(9, 10, 0.01, grid_step=0.01)
    assert (five.low, five.high) == (0.56, 0.99)
    assert (one.low, one.high) == (0.49, 0.99)
    assert five.is_interval and "grid" in five.method


def test_paper_example_exact_bounds_are_wider_than_the_grid():
    five, one = interval(9, 10, 0.05), interval(9, 10, 0.01)
    # the 5% lower bound is where pmf(2) = pmf(9) exactly: logit p = log(45 / 10) / 7
    assert five.low == pytest.approx(1 / (1 + math.exp(-math.log(4.5) / 7)), abs=1e-13)
    assert five.high == pytest.approx(0.9948838031, abs=1e-9)
    assert one.low == pytest.approx(0.4876760713, abs=1e-9)
    assert one.high == pytest.approx(0.9989954713, abs=1e-9)
    for ci, grid, alpha in ((five, (0.56, 0.99), 0.05), (one, (0.49, 0.99), 0.01)):
        assert ci.low < grid[0] and ci.high > grid[1]
        for bound, outward in ((ci.low, -1), (ci.high, 1)):  # the definition as the reference
            assert exact_pvalue(9, 10, bound - outward * 1e-11) >= alpha - 1e-9
            # scipy counts ties within 1e-7 relative, which reaches ~4e-9 past an exact jump
            assert exact_pvalue(9, 10, bound + outward * 1e-7) < alpha
    # three bounds are roots of p-value = alpha ...
    for bound, alpha in ((five.high, 0.05), (one.low, 0.01), (one.high, 0.01)):
        assert exact_pvalue(9, 10, bound) == pytest.approx(alpha, abs=1e-9)
    # ... but at 5% the lower bound is a jump: outcome 2 leaves the counted set there
    assert exact_pvalue(9, 10, five.low - 1e-7) == pytest.approx(0.0286920, abs=1e-6)
    assert exact_pvalue(9, 10, five.low + 1e-11) == pytest.approx(0.0504665, abs=1e-6)
    # footnote 8: at 1% every p in [0, 0.48] and p = 1 is rejected
    assert all(exact_pvalue(9, 10, p) < 0.01 for p in np.linspace(0.001, 0.48, 50))
    assert not one.contains(1.0) and not one.contains(0.48)


def test_machine_success_is_one_minus_the_bounds():
    a, b = interval(9, 10, 0.05), interval(1, 10, 0.05)
    assert b.low == pytest.approx(1 - a.high, abs=1e-12)
    assert b.high == pytest.approx(1 - a.low, abs=1e-12)


# --- sets with gaps ------------------------------------------------------------------------


def test_one_in_thirty_is_not_an_interval():
    ci = interval(1, 30, 0.05)
    assert not ci.is_interval
    assert len(ci.pieces) == 2
    (a, b), (c, d) = ci.pieces
    assert ci.low == a and ci.high == d and b < c
    gap = np.linspace(b, c, 12)[1:-1]
    assert all(exact_pvalue(1, 30, p) < 0.05 for p in gap)
    assert all(exact_pvalue(1, 30, p) >= 0.05 for p in np.linspace(c, d, 12)[1:-1])
    assert ci.contains((c + d) / 2) and not ci.contains((b + c) / 2)
    # statsmodels finds the first piece only
    sm = proportion_confint(1, 30, 0.05, method="binom_test")
    assert (a, b) == pytest.approx(sm, abs=1e-8)  # statsmodels' tie tolerance moves its bound ~2e-9


def brute_accepts(k: int, n: int, grid: np.ndarray, alpha: float, method: str) -> np.ndarray:
    """Acceptance of each p in grid straight from the definitions (vectorised, scipy.stats)."""
    p = grid[1:-1, None]
    x = np.arange(n + 1)[None, :]
    pmf = stats.binom.pmf(x, n, p)
    if method == "sterne":
        stat = pmf
    else:
        stat = np.minimum(stats.binom.cdf(x, n, p), stats.binom.sf(x - 1, n, p))
    counted = stat <= stat[:, [k]] * (1 + 1e-7)
    pv = np.minimum(1.0, (pmf * counted).sum(axis=1))
    ends = [k == 0, k == n]  # p = 0 and p = 1: all mass on one outcome
    return np.concatenate([[ends[0]], pv >= alpha, [ends[1]]])


def test_dense_grid_agrees_with_exact_set():
    # every point of a fine grid is accepted by the definition exactly when it lies in the set
    rng = np.random.default_rng(7)
    grid = np.linspace(0, 1, 3001)
    for _ in range(25):
        n = int(rng.integers(1, 60))
        k = int(rng.integers(0, n + 1))
        alpha = float(rng.choice([0.01, 0.05, 0.1, 0.2]))
        for method in ("sterne", "blaker"):
            ci = interval(k, n, alpha, method)
            acc = brute_accepts(k, n, grid, alpha, method)
            inside = np.zeros(grid.shape, bool)
            for a, b in ci.pieces:
                inside |= (grid >= a) & (grid <= b)
            ends = np.array([e for piece in ci.pieces for e in piece])
            off = np.flatnonzero(acc != inside)
            assert all(np.min(np.abs(ends - grid[i])) < 1e-9 for i in off), (k, n, alpha, method)


# --- properties -------------------------------------------------------------------------------


@settings(max_examples=120, deadline=None)
@given(n=st.integers(1, 150), frac=st.floats(0, 1), alpha=st.sampled_from([0.01, 0.05, 0.1, 0.2, 0.5]))
def test_pvalue_at_each_bound_is_alpha_or_jumps_across_it(n, frac, alpha):
    k = round(frac * n)
    ci = interval(k, n, alpha)
    for a, b in ci.pieces:
        for bound, outward in ((a, -1.0), (b, 1.0)):
            if bound in (0.0, 1.0):
                continue
            p_at = exact_pvalue(k, n, bound)
            p_in = exact_pvalue(k, n, bound - outward * 1e-11)
            p_out = exact_pvalue(k, n, bound + outward * 1e-9)
            if ci.contains(bound + outward * 1e-9):
                continue
            assert p_in >= alpha - 1e-9  # the bound is accepted (closed set)
            assert p_out < alpha  # just outside is rejected
            # either continuous through alpha, or a jump across alpha at a breakpoint
            continuous = abs(p_at - alpha) <= 1e-8
            jump = p_in - p_out > 1e-7  # the counted set changes at the bound
            assert continuous or jump, (k, n, alpha, bound, p_at, p_in, p_out)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(150, 30_000), frac=st.floats(0, 1), alpha=st.sampled_from([0.001, 0.05, 0.2]))
def test_large_n_bounds_separate_accepted_from_rejected(n, frac, alpha):
    k = round(frac * n)
    ci = interval(k, n, alpha)
    for a, b in ci.pieces:
        for bound, outward in ((a, -1.0), (b, 1.0)):
            if bound in (0.0, 1.0) or ci.contains(bound + outward * 1e-9):
                continue
            assert exact_pvalue(k, n, bound - outward * 1e-12) >= alpha - 1e-9
            assert exact_pvalue(k, n, bound + outward * 1e-9) < alpha


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 120), frac=st.floats(0, 1), alpha=st.sampled_from([0.01, 0.05, 0.1, 0.3]))
def test_blaker_bounds_separate_accepted_from_rejected(n, frac, alpha):
    k = round(frac * n)
    ci = interval(k, n, alpha, "blaker")
    pv = lambda p: brute_accepts(k, n, np.array([0.0, p, 1.0]), alpha, "blaker")[1]  # noqa: E731
    for a, b in ci.pieces:
        for bound, outward in ((a, -1.0), (b, 1.0)):
            if bound in (0.0, 1.0) or ci.contains(bound + outward * 1e-9):
                continue
            assert pv(bound - outward * 1e-11) and not pv(bound + outward * 1e-9)


@pytest.mark.parametrize("method", ["sterne", "blaker", "clopper-pearson"])
@pytest.mark.parametrize("n, alpha", [(5, 0.05), (10, 0.05), (23, 0.1), (40, 0.01)])
def test_exact_coverage_at_least_one_minus_alpha(method, n, alpha):
    sets = [interval(x, n, alpha, method) for x in range(n + 1)]
    for p in np.linspace(0.0005, 0.9995, 300):
        pmf = stats.binom.pmf(np.arange(n + 1), n, p)
        coverage = sum(pmf[x] for x in range(n + 1) if sets[x].contains(p))
        assert coverage >= 1 - alpha - 1e-12, (method, n, alpha, p, coverage)


def test_wilson_coverage_can_fall_below_nominal():
    # a check that the coverage test above can fail: Wilson is not exact
    n, alpha = 10, 0.05
    sets = [interval(x, n, alpha, "wilson") for x in range(n + 1)]
    worst = min(
        sum(stats.binom.pmf(x, n, p) for x in range(n + 1) if sets[x].contains(p))
        for p in np.linspace(0.001, 0.999, 400)
    )
    assert worst < 1 - alpha


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 400), frac=st.floats(0, 1), alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_matches_statsmodels_binom_test_when_one_interval(n, frac, alpha):
    k = round(frac * n)
    ci = interval(k, n, alpha)
    if ci.is_interval:
        for ours, theirs in zip((ci.low, ci.high), proportion_confint(k, n, alpha, method="binom_test")):
            if abs(ours - theirs) > 1e-7:
                # statsmodels' root search can stop past a jump of the p-value: its bound is
                # then a rejected point (e.g. 0 of 265 at 5%: upper 0.014300 has p = 0.037)
                assert exact_pvalue(k, n, theirs) < alpha and not ci.contains(theirs)


def test_statsmodels_misses_a_jump_that_we_find():
    ci = interval(0, 265, 0.05)
    _, theirs = proportion_confint(0, 265, 0.05, method="binom_test")
    assert ci.high == pytest.approx(0.0141914777, abs=1e-9)
    assert ci.high < theirs
    assert exact_pvalue(0, 265, ci.high - 1e-11) > 0.059
    assert exact_pvalue(0, 265, theirs) < 0.04


@pytest.mark.parametrize("ours, theirs", [("clopper-pearson", "beta"), ("wilson", "wilson"), ("jeffreys", "jeffreys")])
def test_usual_intervals_match_statsmodels(ours, theirs):
    for n in (1, 2, 7, 30, 250):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            if not 0 <= k <= n:
                continue
            ci = interval(k, n, 0.05, ours)
            lo, hi = proportion_confint(k, n, 0.05, method=theirs)
            assert ci.is_interval
            assert ci.low == pytest.approx(lo, abs=1e-10), (ours, k, n)
            assert ci.high == pytest.approx(hi, abs=1e-10), (ours, k, n)


def test_blaker_is_inside_clopper_pearson_and_edges():
    for n in (1, 5, 17, 60):
        for k in range(0, n + 1, max(1, n // 6)):
            b, cp = interval(k, n, 0.05, "blaker"), interval(k, n, 0.05, "clopper-pearson")
            assert cp.low - 1e-12 <= b.low and b.high <= cp.high + 1e-12
    assert interval(0, 10).low == 0.0 and interval(10, 10).high == 1.0
    half = interval(50, 100)
    assert half.low == pytest.approx(1 - half.high, abs=1e-12)


def test_large_n_is_exact():
    ci = interval(50_000, 100_000)
    assert ci.is_interval
    for bound, outward in ((ci.low, -1), (ci.high, 1)):
        assert exact_pvalue(50_000, 100_000, bound - outward * 1e-12) >= 0.05 - 1e-9
        assert exact_pvalue(50_000, 100_000, bound + outward * 1e-9) < 0.05
    lo, hi = proportion_confint(50_000, 100_000, 0.05, method="binom_test")
    assert (ci.low, ci.high) == pytest.approx((lo, hi), abs=1e-9)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(k=3, n=10, method="wald"), "unknown method"),
        (dict(k=3, n=10, alpha=0), "alpha"),
        (dict(k=3, n=10, alpha=1.2), "alpha"),
        (dict(k=3, n=10, grid_step=0), "grid_step"),
        (dict(k=3, n=10, method="wilson", grid_step=0.01), "grid_step"),
        (dict(k=12, n=10), "between 0 and n"),
        (dict(k=504_000, n=1_000_000, grid_step=0.01), "too coarse"),
    ],
)
def test_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        interval(**kwargs)
