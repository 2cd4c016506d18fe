"""Exact binomial p-values against the paper, scipy and brute-force definitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from turinglab.stats import binom_pvalue, blaker_pvalue


def brute_sterne(k: int, n: int, p: float) -> float:
    pmf = stats.binom.pmf(np.arange(n + 1), n, p)
    return float(min(1.0, pmf[pmf <= pmf[k] * (1 + 1e-7)].sum()))


def brute_blaker(k: int, n: int, p: float) -> float:
    x = np.arange(n + 1)
    gamma = np.minimum(stats.binom.cdf(x, n, p), stats.binom.sf(x - 1, n, p))
    pmf = stats.binom.pmf(x, n, p)
    return float(min(1.0, pmf[gamma <= gamma[k] * (1 + 1e-7)].sum()))


def test_paper_worked_example_pvalue():
    # Giunti: P(E9) + P(E1) + P(E10) + P(E0) for 9 of 10 under p = 0.5
    expected = sum(stats.binom.pmf(j, 10, 0.5) for j in (9, 1, 10, 0))
    assert binom_pvalue(9, 10, 0.5) == pytest.approx(0.021484375, abs=1e-15)
    assert binom_pvalue(9, 10) == pytest.approx(expected, rel=1e-13)
    assert binom_pvalue(1, 10) == binom_pvalue(9, 10)


def test_one_sided_values():
    assert binom_pvalue(9, 10, alternative="greater") == pytest.approx(11 / 1024)
    assert binom_pvalue(9, 10, alternative="less") == pytest.approx(1 - 1 / 1024)
    assert binom_pvalue(0, 10, alternative="greater") == 1.0


@settings(max_examples=300, deadline=None)
@given(
    n=st.integers(1, 400),
    frac=st.floats(0, 1),
    p=st.one_of(st.floats(0.001, 0.999), st.sampled_from([0.5, 0.1, 0.25, 0.3, 0.7, 0.75, 0.9])),
    alternative=st.sampled_from(["two-sided", "greater", "less"]),
)
def test_matches_scipy_binomtest(n, frac, p, alternative):
    k = round(frac * n)
    ref = stats.binomtest(k, n, p, alternative=alternative).pvalue
    assert binom_pvalue(k, n, p, alternative) == pytest.approx(ref, rel=1e-9, abs=1e-14)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 120), frac=st.floats(0, 1), p=st.floats(1e-6, 1 - 1e-6))
def test_matches_brute_force_definitions(n, frac, p):
    k = round(frac * n)
    if 0 < p < 1:
        assert binom_pvalue(k, n, p) == pytest.approx(brute_sterne(k, n, p), rel=1e-9, abs=1e-14)
        assert blaker_pvalue(k, n, p) == pytest.approx(brute_blaker(k, n, p), rel=1e-9, abs=1e-14)


def test_degenerate_null_rates():
    assert binom_pvalue(0, 5, 0.0) == 1.0
    assert binom_pvalue(1, 5, 0.0) == 0.0
    assert binom_pvalue(5, 5, 1.0) == 1.0
    assert binom_pvalue(4, 5, 1.0) == 0.0


def test_exact_ties_are_counted_with_tolerance():
    # at p = 0.5, outcomes k and n - k have equal probability: both are always counted
    for n in (7, 20, 101):
        for k in range(n + 1):
            assert binom_pvalue(k, n) == pytest.approx(binom_pvalue(n - k, n), rel=1e-12)
    # the MLE is the most probable outcome: nothing is excluded
    assert binom_pvalue(3, 10, 0.3) == 1.0


@pytest.mark.parametrize(
    "args, message",
    [
        ((11, 10), "between 0 and n"),
        ((3, 0), "at least 1"),
        ((-1, 10), "between 0 and n"),
        ((2.5, 10), "whole number"),
        ((True, 10), "whole number"),
        (("3", 10), "whole number"),
        ((3, 10, 1.5), "probability"),
        ((3, 10, 0.5, "sideways"), "alternative"),
    ],
)
def test_bad_input_is_a_clear_value_error(args, message):
    with pytest.raises(ValueError, match=message):
        binom_pvalue(*args)
