"""Bayesian summaries of a rate and an always-valid confidence sequence for watched data.

``beta_posterior``: the conjugate Beta posterior after k successes in n, with an
equal-tailed credible interval, P(rate >= threshold) and the mass in a region of practical
equivalence (ROPE).

``confidence_sequence``: Robbins' beta-binomial mixture martingale. For a candidate rate p,

    M_t(p) = B(a + S_t, b + t - S_t) / B(a, b) / (p^S_t (1 - p)^(t - S_t))

is a nonnegative martingale with mean 1 when p is the true rate, so by Ville's inequality
P(exists t: M_t(p) >= 1/alpha) <= alpha. The set {p: M_t(p) < 1/alpha} therefore covers the
true rate at every time simultaneously with probability >= 1 - alpha: a dashboard may look
after every game and stop whenever it likes. log M_t(p) is convex in p, so the set is one
interval; along a path we also intersect it with all earlier ones (still valid).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy import special

from .binomial import scipy_stats as stats
from .binomial import check_alpha, check_counts, check_prob
from .results import BetaPosterior, ConfidenceSequence


def _check_prior(prior: tuple[float, float]) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in prior)
    except (TypeError, ValueError):
        raise ValueError(f"prior must be two positive numbers (a, b), got {prior!r}") from None
    if not (a > 0 and b > 0):
        raise ValueError(f"prior parameters must be positive, got {prior!r}")
    return a, b


def beta_posterior(
    k: int,
    n: int,
    threshold: float = 0.5,
    rope: tuple[float, float] | None = None,
    prior: tuple[float, float] = (1, 1),
    level: float = 0.95,
) -> BetaPosterior:
    """Beta(a + k, b + n - k) posterior summaries (equal-tailed interval at ``level``)."""
    k, n = check_counts(k, n)
    a0, b0 = _check_prior(prior)
    threshold = check_prob(threshold, "threshold")
    level = check_prob(level, "level")
    if not 0 < level < 1:
        raise ValueError(f"level must be strictly between 0 and 1, got {level}")
    d = stats.beta(a0 + k, b0 + n - k)
    in_rope = None
    if rope is not None:
        lo, hi = (check_prob(v, "rope") for v in rope)
        if lo > hi:
            raise ValueError(f"rope must be (low, high) with low <= high, got {rope!r}")
        rope = (lo, hi)
        in_rope = float(d.cdf(hi) - d.cdf(lo))
    tail = (1 - level) / 2
    return BetaPosterior(
        a=a0 + k,
        b=b0 + n - k,
        level=level,
        mean=float(d.mean()),
        low=float(d.ppf(tail)),
        high=float(d.isf(tail)),
        threshold=threshold,
        prob_at_or_above=float(d.sf(threshold)),
        rope=rope,
        prob_in_rope=in_rope,
    )


def log_mixture_martingale(s, t, p, prior: tuple[float, float] = (1, 1)):
    """log M_t(p) of the beta-binomial mixture (vectorised over s, t, p)."""
    a, b = prior
    s, t, p = (np.asarray(v, dtype=float) for v in (s, t, p))
    log_mix = special.betaln(a + s, b + t - s) - special.betaln(a, b)
    return log_mix - special.xlogy(s, p) - special.xlog1py(t - s, -p)


def _cs_bounds(s, t, alpha: float, prior: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Bounds {p: M_t(p) < 1/alpha} for arrays of (s, t), by vectorised bisection.

    log M_t(p) is convex in p with its minimum at the MLE s/t, where M_t <= 1 < 1/alpha; so
    each side has a single crossing (or none, when the bound is 0 or 1).
    """
    s = np.atleast_1d(np.asarray(s, dtype=float))
    t = np.atleast_1d(np.asarray(t, dtype=float))
    thr = math.log(1 / alpha)
    m = s / t
    f = lambda p: log_mixture_martingale(s, t, p, prior) - thr  # noqa: E731

    def crossing(inner, outer):
        inner, outer = inner.copy(), outer.copy()
        for _ in range(60):  # 2^-60: below float resolution of p
            mid = 0.5 * (inner + outer)
            above = f(mid) >= 0
            outer = np.where(above, mid, outer)
            inner = np.where(above, inner, mid)
        return inner  # the last point still inside the set

    with np.errstate(divide="ignore", invalid="ignore"):
        zero, one = np.zeros_like(m), np.ones_like(m)
        low = np.where(f(zero) < 0, 0.0, crossing(m, zero))
        high = np.where(f(one) < 0, 1.0, crossing(m, one))
    return low, high


def confidence_sequence(
    successes_so_far: Sequence[int] | None = None,
    alpha: float = 0.05,
    prior: tuple[float, float] = (1, 1),
    *,
    counts: tuple[int, int] | None = None,
) -> ConfidenceSequence:
    """Always-valid (time-uniform) 1 - alpha confidence sequence for a rate.

    Give either ``successes_so_far``, the 0/1 outcomes in order (the result then also holds the
    bounds after every game, intersected over time), or ``counts=(k, n)``, the current counts
    (the bound at time n, valid however often it has been looked at before). They are separate
    arguments because two outcomes such as ``(1, 1)`` would otherwise read as counts.
    Method: Robbins' beta-binomial mixture martingale with a Beta(prior) mixing distribution.
    The mixing distribution is not a Bayesian prior: coverage holds for every choice; it
    only moves where the sequence is tightest (Beta(1, 1) spreads it evenly over rates).
    """
    alpha = check_alpha(alpha)
    prior = _check_prior(prior)
    if (successes_so_far is None) == (counts is None):
        raise ValueError("give either the 0/1 outcomes or counts=(k, n), not both or neither")
    if counts is not None:
        k, n = check_counts(*counts)
        low, high = _cs_bounds(k, n, alpha, prior)
        return ConfidenceSequence(alpha, prior, k, n, float(low[0]), float(high[0]))
    x = np.asarray(successes_so_far)
    if x.ndim != 1 or x.size == 0 or not np.isin(x, (0, 1)).all():
        raise ValueError("successes_so_far must be a non-empty sequence of 0/1 outcomes (counts go in counts=(k, n))")
    s = np.cumsum(x.astype(np.int64))
    t = np.arange(1, x.size + 1)
    low, high = _cs_bounds(s, t, alpha, prior)
    lows = np.maximum.accumulate(low)  # running intersection: still valid, never wider
    highs = np.minimum.accumulate(high)
    return ConfidenceSequence(
        alpha, prior, int(s[-1]), int(x.size), float(lows[-1]), float(highs[-1]),
        tuple(lows.tolist()), tuple(highs.tolist()), intersected=True,
    )
