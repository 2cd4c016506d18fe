"""Exact p-values at any n the CLI accepts (40-digit reference up to n = 10^9) and the chunked
Sterne set (same pieces as the breakpoint-by-breakpoint walk, at a fraction of the work)."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

import turinglab.stats.binomial as binomial
import turinglab.stats.intervals as intervals
from turinglab.stats import binom_pvalue, interval


def reference_sterne(k: int, n: int, p: str) -> mp.mpf:
    """Sterne's p-value (tolerance 1e-7) in 40 digits: 1 minus the uncounted run around the mode."""
    with mp.workdps(40):
        p = mp.mpf(p)
        lp = lambda j: mp.loggamma(n + 1) - mp.loggamma(j + 1) - mp.loggamma(n - j + 1) + j * mp.log(p) + (n - j) * mp.log1p(-p)  # noqa: E731
        thr = lp(k) + mp.log1p(mp.mpf("1e-7"))
        mode = int(mp.floor((n + 1) * p))
        if lp(mode) <= thr:
            return mp.mpf(1)
        a, b = -1, mode  # lp(a) <= thr < lp(b): the last counted outcome below the mode
        while b - a > 1:
            m = (a + b) // 2
            a, b = (m, b) if lp(m) <= thr else (a, m)
        lo = a
        a, b = mode, n + 1  # the first counted outcome above the mode
        while b - a > 1:
            m = (a + b) // 2
            a, b = (a, m) if lp(m) <= thr else (m, b)
        hi = b
        assert hi - lo < 300_000, "reference only for short uncounted runs"
        term, total, q = mp.exp(lp(lo + 1)), mp.mpf(0), p / (1 - p)
        for j in range(lo + 1, hi):
            total += term
            term *= mp.mpf(n - j) / (j + 1) * q
        return 1 - total


CASES = [
    (10**9, 0, "0.5"), (10**9, 1, "0.5"), (10**9, 5, "0.5"), (10**9, 10, "0.5"), (10**9, 25, "0.5"),
    (10**9, 40, "0.5"), (10**9, 200, "0.5"), (10**9, 3_000, "0.5"), (10**9, 47_434, "0.5"),
    (10**9, 7, "0.3"), (10**9, 30, "0.3"), (10**8, 13, "0.5"), (10**8, 9_000, "0.5"), (10**7, 3, "0.5"),
]


@pytest.mark.parametrize("n,d,p", CASES)
def test_sterne_p_matches_a_40_digit_reference_at_large_n(n, d, p):
    mean = int(n * float(p))
    for k in (mean + d, mean - d):
        ref = reference_sterne(k, n, p)
        got = binom_pvalue(k, n, float(p))
        assert got == pytest.approx(float(ref), rel=1e-10), (k, n, p)  # betainc: ~4e-12 at 10^9


def test_a_billion_games_near_the_middle_counts_the_tied_outcomes():
    """500000001 of 10^9: pmf(5e8) is only 1 + 2e-9 times pmf(k), a tie within 1e-7, so every
    outcome is counted and p = 1 (float64 alone got 0.99881)."""
    assert binom_pvalue(500_000_001, 10**9) == 1.0


@pytest.mark.parametrize(
    "k,n",
    [(50_000, 100_000), (37, 100_000), (99_990, 100_000), (2_500, 10_000), (1, 30), (60, 100), (9, 10), (123_456, 300_000)],
)
def test_chunked_sterne_set_equals_the_full_walk(k, n, monkeypatch):
    got = interval(k, n).pieces
    monkeypatch.setattr(intervals, "_CHUNK", 10**12)  # every chunk straight to the breakpoint walk
    full = interval(k, n).pieces
    assert len(got) == len(full)
    assert np.allclose(np.array(got), np.array(full), rtol=0, atol=1e-13)


def test_chunked_sterne_set_visits_far_fewer_outcomes(monkeypatch):
    """The middle of 10^7: the chunks hold a few hundred breakpoints, not the ~30 000 the walk
    would cross between the loose range's ends."""
    seen = []
    real = intervals._sterne_breakpoints

    def spy(k, n, a, b):
        out = real(k, n, a, b)
        seen.append(len(out[0]))
        return out

    monkeypatch.setattr(intervals, "_sterne_breakpoints", spy)
    res = interval(5_000_000, 10_000_000)
    assert 0 < sum(seen) < 2_000, seen
    half = 1.959963984540054 * (0.25 / 10_000_000) ** 0.5
    assert res.low == pytest.approx(0.5 - half, abs=2e-6) and res.high == pytest.approx(0.5 + half, abs=2e-6)


def test_float_near_ties_go_to_the_exact_path(monkeypatch):
    calls = []
    real = binomial._log_ratio_exact
    monkeypatch.setattr(binomial, "_log_ratio_exact", lambda *a: calls.append(a) or real(*a))
    binom_pvalue(500_000_010, 10**9)
    assert calls  # at 10^9 float64 cannot decide the tie
    calls.clear()
    binom_pvalue(60, 100)
    assert not calls  # at small n it can
