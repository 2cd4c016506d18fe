"""Exact power and sample size for a binomial rate against a threshold.

Power at n is the exact probability, when the true rate is ``rate``, that the two-sided
level-alpha test of p = ``vs`` rejects it *in the direction of the true rate* (so that the
decision is passes/fails rather than inconclusive). It is computed for every n up to n_max
at once: for each n the rejection boundary is found by bisection over outcomes (the test's
p-value is monotone on each side of the mode), and power is an exact binomial tail.

Exact power is a sawtooth in n (the discrete rejection region jumps), so two sample sizes
are reported: ``first_n``, the first n reaching the target power, and ``stable_n``, the n
from which power stays at or above the target for every n up to ``n_max``.

Note: with a Sterne or Blaker set that has gaps, rejecting ``vs`` need not, in principle,
put the whole set on one side of it (the pass decision). A search over n < 80 and
vs in {0.5, 0.3, 0.2, 0.1} at alpha = 0.05 found no such outcome; the tests check a sample.
"""

from __future__ import annotations

import math

import numpy as np

from .binomial import scipy_stats as stats
from .binomial import _first_true, blaker_split, cdf, check_alpha, check_prob, counted_pvalue, sf, sterne_split
from .results import PowerResult

POWER_METHODS = ("sterne", "blaker", "clopper-pearson")


def _pvalues(x: np.ndarray, n: np.ndarray, p0: float, alpha: float, method: str) -> np.ndarray:
    """Two-sided p-value of outcome x in n at p0 (vectorised over x and n)."""
    x = np.clip(x, 0, n)
    if method == "clopper-pearson":
        return np.minimum(1.0, 2 * np.minimum(cdf(x, n, p0), sf(x - 1, n, p0)))
    split = sterne_split if method == "sterne" else blaker_split
    lo, hi = split(x, n, p0)
    return counted_pvalue(lo, hi, n, p0)


def power_curve(rate: float, vs: float, alpha: float, method: str, ns: np.ndarray) -> np.ndarray:
    """Exact power at each n in ``ns`` (see the module docstring)."""
    ns = np.asarray(ns, dtype=np.int64)
    mode = np.clip(np.floor((ns + 1) * vs), 0, ns).astype(np.int64)
    if rate > vs:  # smallest x above the mode whose p-value is below alpha
        b = _first_true(lambda x: _pvalues(x, ns, vs, alpha, method) < alpha, mode, ns + 1)
        return sf(b - 1, ns, rate)
    # largest x below the mode whose p-value is below alpha
    a = _first_true(lambda x: _pvalues(x, ns, vs, alpha, method) >= alpha, np.full_like(ns, -1), mode) - 1
    return cdf(a, ns, rate)


def _one_sided_reach(rate: float, vs: float, alpha: float, target: float, ns: np.ndarray) -> int:
    """First n whose one-sided level-alpha exact test reaches the target power (else n_max)."""
    if rate > vs:  # reject for x >= c with P(X >= c; vs) <= alpha
        c = stats.binom.isf(alpha, ns, vs) + 1
        pw = sf(c - 1, ns, rate)
    else:
        c = stats.binom.ppf(alpha, ns, vs) - 1
        c = np.where(cdf(c + 1, ns, vs) <= alpha, c + 1, c)
        pw = cdf(c, ns, rate)
    hit = np.flatnonzero(pw >= target)
    return int(ns[hit[0]]) if hit.size else int(ns[-1])


def _normal_n(rate: float, vs: float, alpha: float, target: float) -> float:
    za, zb = stats.norm.isf(alpha / 2), stats.norm.ppf(target)
    return ((za * math.sqrt(vs * (1 - vs)) + zb * math.sqrt(rate * (1 - rate))) / (rate - vs)) ** 2


def power(
    rate: float,
    vs: float = 0.5,
    alpha: float = 0.05,
    target: float = 0.8,
    method: str = "sterne",
    n_max: int | None = None,
) -> PowerResult:
    """Exact power and sample size to tell a true ``rate`` from the threshold ``vs``.

    n_max defaults to twice the normal-approximation sample size (at least 100, at most
    200 000); ``stable_n`` is checked up to n_max only. ``powers`` holds the exact power for
    every n from 1 to n_max, except that below the first n where even the one-sided
    level-alpha test reaches the target (an upper bound on this test's power) it holds 0.
    """
    rate, vs = check_prob(rate, "rate"), check_prob(vs, "vs")
    alpha = check_alpha(alpha)
    target = check_prob(target, "power")
    if not 0 < target < 1:
        raise ValueError(f"power must be strictly between 0 and 1 (e.g. 0.8), got {target}")
    if method not in POWER_METHODS:
        raise ValueError(f"power needs an exact method ({'|'.join(POWER_METHODS)}), got {method!r}")
    if not 0 < vs < 1:
        raise ValueError(f"vs must be strictly between 0 and 1, got {vs}")
    if rate == vs:
        raise ValueError("rate equals vs: no difference to detect, so power is undefined")
    if n_max is None:
        n_max = int(min(200_000, max(100, 2 * _normal_n(rate, vs, alpha, target) + 50)))
    if isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 1:
        raise ValueError(f"n_max must be a positive whole number, got {n_max!r}")
    n_max = int(n_max)
    ns = np.arange(1, n_max + 1)
    # Every exact two-sided test here rejects only where the one-sided level-alpha test does,
    # so its power is at most the one-sided power: below n_lo the target cannot be reached.
    n_lo = _one_sided_reach(rate, vs, alpha, target, ns)
    pw = np.zeros(n_max)
    pw[n_lo - 1 :] = power_curve(rate, vs, alpha, method, ns[n_lo - 1 :])
    reach = pw >= target
    first = int(ns[np.argmax(reach)]) if reach.any() else None
    stable = None
    if reach[-1]:
        below = np.flatnonzero(~reach)
        stable = int(ns[below[-1] + 1]) if below.size else 1
    return PowerResult(
        rate=rate, vs=vs, alpha=alpha, target=target, method=method, first_n=first, stable_n=stable, n_max=n_max,
        power_at_first_n=float(pw[first - 1]) if first else None,
        power_at_stable_n=float(pw[stable - 1]) if stable else None,
        ns=tuple(int(v) for v in ns),
        powers=tuple(float(v) for v in pw),
    )
