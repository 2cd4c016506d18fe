"""Exact binomial p-values: the two-sided p-value as Giunti defines it, Blaker's, one-sided.

The two-sided ("minimum likelihood", Sterne) p-value of k successes in n under p0 is the
sum of the probabilities of all outcomes no more probable than k, where "no more probable"
allows a relative tolerance of 1e-7 (as scipy.stats.binomtest does) so that outcomes of
equal probability are not split by rounding.

Both two-sided p-values here count a set of outcomes of the form {0..lo} U {hi..n}: the
outcomes that are *not* counted form one run of integers around the mode, because the
binomial pmf is log-concave (Sterne) and the smaller tail probability is unimodal in the
outcome (Blaker). ``sterne_split`` and ``blaker_split`` find (lo, hi) by vectorised
bisection; the p-value is then F(lo) + S(hi - 1), each tail from the regularised incomplete
beta function (betaincc / betainc, accurate to ~1e-15 relative at any n; bdtr loses digits
past n ~ 1 000).

The tie test log pmf(j) - log pmf(k) <= log(1 + 1e-7) is done in float64 where its error (a
few ulps of log n!, ~1e-6 at n = 10^9) cannot flip it, and in 40-digit arithmetic (mpmath)
for the few outcomes where it could; so the counted set is exact at any n.

Counts are limited to MAX_N games: beyond it float64 cannot hold the outcomes exactly.
"""

from __future__ import annotations

import math
import numbers
from typing import Callable

import numpy as np
from scipy.special import betainc, betaincc, betaln, gammaln

class _LazyScipyStats:
    """scipy.stats, imported on first use (it alone takes about as long as the rest of the CLI)."""

    def __getattr__(self, name: str):
        from scipy import stats

        return getattr(stats, name)


scipy_stats = _LazyScipyStats()

RTOL = 1e-7
LOG_RTOL = math.log1p(RTOL)
ALTERNATIVES = ("two-sided", "greater", "less")
MAX_N = 10**12  # inside float64's exact integers and int64


# --- input checks (shared by the whole package) -------------------------------------------


def check_count(value: object, name: str) -> int:
    """An integer count, or a ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, float)):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    return int(value)


def check_counts(k: object, n: object, kname: str = "k", nname: str = "n") -> tuple[int, int]:
    """Validated (k, n) with 0 <= k <= n and n >= 1."""
    k, n = check_count(k, kname), check_count(n, nname)
    if n < 1:
        raise ValueError(f"{nname} must be at least 1 (number of games), got {n}")
    if n > MAX_N:
        raise ValueError(f"{nname} = {n} is too large: exact computations here support at most {MAX_N:.0e} games")
    if not 0 <= k <= n:
        raise ValueError(f"{kname} must be between 0 and {nname} = {n}, got {k}")
    return k, n


def check_alpha(alpha: object) -> float:
    try:
        a = float(alpha)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}") from None
    if not 0.0 < a < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1 (e.g. 0.05), got {alpha!r}")
    return a


def check_prob(p: object, name: str) -> float:
    try:
        x = float(p)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a probability between 0 and 1, got {p!r}") from None
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{name} must be a probability between 0 and 1, got {p!r}")
    return x


def check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}; got {alternative!r}")
    return alternative


# --- exact cdf / sf that accept out-of-range outcomes ----------------------------------------


def cdf(x, n, p):
    """P(X <= x) for X ~ Bin(n, p) = I_{1-p}(n - x, x + 1); 0 for x < 0, 1 for x >= n."""
    return _tail(betaincc, 0.0, 1.0, x, n, p)


def sf(x, n, p):
    """P(X > x) for X ~ Bin(n, p) = I_p(x + 1, n - x); 1 for x < 0, 0 for x >= n."""
    return _tail(betainc, 1.0, 0.0, x, n, p)


def _tail(beta, below: float, above: float, x, n, p):
    """beta(x + 1, n - x, p) for 0 <= x < n; `below` for x < 0, `above` for x >= n."""
    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    xc = np.clip(x, 0, np.maximum(n - 1, 0))
    with np.errstate(invalid="ignore"):
        inner = beta(xc + 1.0, n - xc, p)
    return np.where(x < 0, below, np.where(x >= n, above, inner))


def log_choose(n: int, j):
    """log C(n, j), symmetric in j and n - j to the last bit (so exact ties stay ties).

    As -log(n + 1) - log B(j + 1, n - j + 1): relative precision for small j at any n (the
    difference of log-gammas loses ~ ulp(log n!), 8e-7 at n = 10^9, j = 1).
    """
    j = np.asarray(j, dtype=float)
    j = np.minimum(j, n - j)
    return -np.log1p(np.asarray(n, dtype=float)) - betaln(j + 1.0, n - j + 1.0)


def logit(p):
    p = np.asarray(p, dtype=float)
    with np.errstate(divide="ignore"):
        return np.log(p) - np.log1p(-p)


# --- the counted set {0..lo} U {hi..n} --------------------------------------------------------


def _first_true(pred: Callable[[np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise smallest x in (a, b] with pred(x) true, given pred false at a, true at b.

    pred must be monotone (false then true) on (a, b]; a and b themselves are never evaluated.
    """
    a = np.asarray(a, dtype=np.int64).copy()
    b = np.asarray(b, dtype=np.int64).copy()
    while True:
        active = b - a > 1
        if not active.any():
            return b
        mid = (a + b) // 2
        t = pred(mid)
        b = np.where(active & t, mid, b)
        a = np.where(active & ~t, mid, a)


def _log_ratio_exact(j: int, k: int, n: int, p: float) -> float:
    """log pmf(j) - log pmf(k) under Bin(n, p) in 40-digit arithmetic (only for near-ties)."""
    import mpmath as mp  # imported only when float64 cannot decide a tie

    with mp.workdps(40):
        lg = mp.loggamma
        pm = mp.mpf(p)
        r = lg(k + 1) + lg(n - k + 1) - lg(j + 1) - lg(n - j + 1) + (j - k) * (mp.log(pm) - mp.log1p(-pm))
        return float(r)


def sterne_split(k, n, p, log_rtol: float = LOG_RTOL) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) such that Sterne's test counts outcomes {0..lo} U {hi..n} at each p in (0, 1).

    k, n and p broadcast against each other. ``log_rtol``: the tie tolerance (0 = exact).
    """
    k, n, p = np.broadcast_arrays(
        np.atleast_1d(np.asarray(k, dtype=np.int64)),
        np.asarray(n, dtype=np.int64),
        np.asarray(p, dtype=float),
    )
    L = logit(p)
    lck = log_choose(n, k)
    # float error of r: a few ulps of log n! (1e-6 at n = 10^9, far above the 1e-7 tolerance)
    scale = 1e-14 * (gammaln(n + 1.0) + 1.0)

    def above(j):  # log pmf(j) - log pmf(k) > log_rtol, in float or, where too close, exactly
        j = np.clip(j, 0, n)
        r = log_choose(n, j) - lck + (j - k) * L
        out = r > log_rtol
        if log_rtol == 0.0:  # the exact sets: float throughout, like their closed-form breakpoints
            return out
        near = np.abs(r - log_rtol) <= scale + 1e-14 * np.abs((j - k) * L)
        for i in zip(*np.nonzero(near)):
            out[i] = _log_ratio_exact(int(j[i]), int(k[i]), int(n[i]), float(p[i])) > log_rtol
        return out

    mode = np.clip(np.floor((n + 1) * p), 0, n).astype(np.int64)
    everything = ~above(mode)
    lo = _first_true(above, np.full_like(mode, -1), mode) - 1
    hi = _first_true(lambda j: ~above(j), mode, n + 1)
    lo = np.where(everything, n, lo)
    hi = np.where(everything, n + 1, hi)
    return lo, hi


def blaker_split(k, n, p) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) such that Blaker's test counts outcomes {0..lo} U {hi..n} at each p in (0, 1).

    Blaker counts the outcomes x whose smaller tail min(P(X <= x), P(X >= x)) is no larger
    than that of k (within the relative tolerance). k, n and p broadcast.
    """
    k, n, p = np.broadcast_arrays(
        np.atleast_1d(np.asarray(k, dtype=np.int64)),
        np.asarray(n, dtype=np.int64),
        np.asarray(p, dtype=float),
    )
    gk = np.minimum(cdf(k, n, p), sf(k - 1, n, p))
    c = gk * (1.0 + RTOL)
    # m: first x whose lower tail is at least its upper tail; below m the smaller tail is F(x).
    m = _first_true(lambda x: cdf(x, n, p) + cdf(x - 1, n, p) >= 1.0, np.full(p.shape, -1, dtype=np.int64), n)
    lo = _first_true(lambda x: cdf(x, n, p) > c, np.full_like(m, -1), m) - 1
    hi = _first_true(lambda x: sf(x - 1, n, p) <= c, m - 1, n + 1)
    return lo, hi


def counted_pvalue(lo, hi, n: int, p):
    """Probability of the counted set {0..lo} U {hi..n} under Bin(n, p)."""
    return np.minimum(1.0, cdf(lo, n, p) + sf(np.asarray(hi) - 1, n, p))


def _degenerate(k: int, n: int, p: float) -> float | None:
    """Two-sided p-value when p is 0 or 1 (all mass on one outcome)."""
    if p == 0.0:
        return 1.0 if k == 0 else 0.0
    if p == 1.0:
        return 1.0 if k == n else 0.0
    return None


def two_sided_pvalues(k: int, n: int, p, kind: str = "sterne") -> np.ndarray:
    """Vectorised two-sided p-value of k in n at each p (kind: 'sterne' or 'blaker')."""
    p = np.atleast_1d(np.asarray(p, dtype=float))
    out = np.empty_like(p)
    edge = (p <= 0.0) | (p >= 1.0)
    for i in np.flatnonzero(edge):
        out[i] = _degenerate(k, n, float(p[i]))
    inner = ~edge
    if inner.any():
        split = sterne_split if kind == "sterne" else blaker_split
        lo, hi = split(k, n, p[inner])
        out[inner] = counted_pvalue(lo, hi, n, p[inner])
    return out


def binom_pvalue(k: int, n: int, p0: float = 0.5, alternative: str = "two-sided") -> float:
    """Exact binomial p-value of k successes in n trials under p = p0.

    two-sided: sum of the probabilities of all outcomes no more probable than k (relative
    tolerance 1e-7), Giunti's definition; greater: P(X >= k); less: P(X <= k).
    """
    k, n = check_counts(k, n)
    p0 = check_prob(p0, "p0")
    check_alternative(alternative)
    if alternative == "greater":
        return float(sf(k - 1, n, p0))
    if alternative == "less":
        return float(cdf(k, n, p0))
    return float(two_sided_pvalues(k, n, p0, "sterne")[0])


def blaker_pvalue(k: int, n: int, p0: float = 0.5) -> float:
    """Blaker's (2000) two-sided exact p-value (acceptability function) of k in n at p0."""
    k, n = check_counts(k, n)
    p0 = check_prob(p0, "p0")
    return float(two_sided_pvalues(k, n, p0, "blaker")[0])
