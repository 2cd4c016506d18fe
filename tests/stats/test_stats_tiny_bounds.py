"""Bounds of the exact sets near 0 at n = 10^8 and 10^9 to full relative precision (issue 42
item 6): each bound against the edge of the accepted set found by bisection in 40 digits."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from turinglab.stats import interval
from turinglab.stats.binomial import log_choose

ALPHA = mp.mpf("0.05")
TIE = 1 + mp.mpf("1e-7")  # Blaker's tie tolerance, as in the code


def accepted(k: int, n: int, p, kind: str, terms: int = 120) -> bool:
    """Is p0 = p accepted? The outcomes >= terms are negligible and always counted here."""
    pmf = [mp.binomial(n, j) * p**j * (1 - p) ** (n - j) for j in range(terms)]
    cdf = [mp.fsum(pmf[: j + 1]) for j in range(terms)]
    if kind == "sterne":
        counted = [j for j in range(terms) if pmf[j] <= pmf[k]]
    else:
        tail = lambda j: min(cdf[j], 1 - (cdf[j - 1] if j else 0))  # noqa: E731
        counted = [j for j in range(terms) if tail(j) <= tail(k) * TIE]
    return mp.fsum(pmf[j] for j in counted) + (1 - cdf[-1]) >= ALPHA


def reference_edge(k: int, n: int, bound: float, kind: str, side: str):
    with mp.workdps(40):
        inner, outer = mp.mpf(bound) * (1 + mp.mpf("1e-4")), mp.mpf(bound) * (1 - mp.mpf("1e-4"))
        if side == "high":
            inner, outer = outer, inner
        assert accepted(k, n, inner, kind) and not accepted(k, n, outer, kind)
        for _ in range(110):
            mid = (inner + outer) / 2
            inner, outer = (mid, outer) if accepted(k, n, mid, kind) else (inner, mid)
        return inner


@pytest.mark.parametrize("kind", ["sterne", "blaker"])
@pytest.mark.parametrize("n", [10**8, 10**9])
@pytest.mark.parametrize("k", [0, 1])
def test_tiny_bounds_have_full_relative_precision(kind, n, k):
    s = interval(k, n, 0.05, kind)
    bounds = [("high", s.high)] + ([("low", s.low)] if k else [])
    for side, b in bounds:
        ref = reference_edge(k, n, b, kind, side)
        # before: brentq's absolute xtol and log C(n, j) from log-gammas left up to 6.5e-6
        assert float(abs(b - ref) / ref) < 1e-11, (kind, n, k, side, b, float(ref))


@pytest.mark.parametrize("n", [10**8, 10**9, 10**12])
@pytest.mark.parametrize("j", [1, 5, 30])
def test_log_choose_relative_at_small_j(n, j):
    with mp.workdps(40):
        ref = mp.log(mp.binomial(n, j))
    assert abs(float(log_choose(n, j)) - float(ref)) <= 1e-14 * abs(float(ref))
    assert log_choose(n, j) == log_choose(n, n - j)  # still symmetric to the last bit
    assert np.isfinite(log_choose(n, np.array([0, n // 2, n]))).all()
