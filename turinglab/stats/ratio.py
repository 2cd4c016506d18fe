"""Confidence intervals for the ratio of two independent binomial rates, p1 / p2.

``koopman``: the score interval of Koopman (1984): the theta whose score statistic
(p1_hat - theta * p2_hat)^2 / (p1~ q1~ / n1 + theta^2 p2~ q2~ / n2), with p1~ = theta p2~ the
maximum-likelihood rates under p1 = theta * p2, stays below the chi-square(1) quantile. It is
solved here by root finding on the score (not Nam's cubic, which statsmodels uses), so the
tests compare two independent computations.
``katz``: the log interval of Katz et al. (1978). ``bootstrap``: parametric percentile bootstrap.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

RATIO_METHODS = ("koopman", "katz", "bootstrap")


def _constrained_p2(theta: float, x1: int, n1: int, x2: int, n2: int) -> float:
    """MLE of p2 under p1 = theta * p2 (root of A p^2 + B p + C, Koopman 1984)."""
    a = theta * (n1 + n2)
    b = -(theta * n1 + x1 + n2 + theta * x2)
    c = x1 + x2
    disc = max(b * b - 4 * a * c, 0.0)
    return (-b - math.sqrt(disc)) / (2 * a)


def _score_z(theta: float, x1: int, n1: int, x2: int, n2: int) -> float:
    p2 = _constrained_p2(theta, x1, n1, x2, n2)
    p1 = min(theta * p2, 1.0)
    var = p1 * (1 - p1) / n1 + theta * theta * p2 * (1 - p2) / n2
    diff = x1 / n1 - theta * x2 / n2
    if var <= 0:
        return math.copysign(math.inf, diff) if diff else 0.0
    return diff / math.sqrt(var)


def koopman(x1: int, n1: int, x2: int, n2: int, alpha: float) -> tuple[float, float]:
    """Koopman score interval for p1 / p2. Bounds 0 and inf when the data allow them."""
    if x1 + x2 == 0:
        return 0.0, math.inf
    z = float(-special.ndtri(alpha / 2))
    # z(theta) decreases in theta; work in log(theta)
    g_low = lambda t: _score_z(math.exp(t), x1, n1, x2, n2) - z  # noqa: E731
    g_high = lambda t: _score_z(math.exp(t), x1, n1, x2, n2) + z  # noqa: E731
    lim = 60.0
    low = 0.0 if x1 == 0 else math.exp(_bracket_root(g_low, x1, n1, x2, n2, lim))
    high = math.inf if x2 == 0 else math.exp(_bracket_root(g_high, x1, n1, x2, n2, lim))
    return low, high


def _bracket_root(g, x1, n1, x2, n2, lim) -> float:
    centre = math.log((x1 / n1) / (x2 / n2)) if x1 and x2 else 0.0
    a, b = centre - 1.0, centre + 1.0
    while g(a) < 0 and a > -lim:
        a -= 2.0
    while g(b) > 0 and b < lim:
        b += 2.0
    return optimize.brentq(g, a, b, xtol=1e-13, rtol=1e-14)


def katz(x1: int, n1: int, x2: int, n2: int, alpha: float) -> tuple[float, float]:
    """Katz log interval: exp(log r +- z * sqrt(1/x1 - 1/n1 + 1/x2 - 1/n2)); needs x1, x2 > 0."""
    if x1 == 0 or x2 == 0:
        raise ValueError("Katz's interval needs a success in each group; use ratio_method koopman")
    z = float(-special.ndtri(alpha / 2))
    r = (x1 / n1) / (x2 / n2)
    se = math.sqrt(1 / x1 - 1 / n1 + 1 / x2 - 1 / n2)
    return r * math.exp(-z * se), r * math.exp(z * se)


def bootstrap(
    x1: int, n1: int, x2: int, n2: int, alpha: float, draws: int = 20000, seed: int = 0
) -> tuple[float, float]:
    """Parametric percentile bootstrap: redraw both binomials at their observed rates."""
    rng = np.random.default_rng(seed)
    b1 = rng.binomial(n1, x1 / n1, draws) / n1
    b2 = rng.binomial(n2, x2 / n2, draws) / n2
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(b2 > 0, b1 / np.where(b2 > 0, b2, 1.0), np.where(b1 > 0, np.inf, np.nan))
    r = r[~np.isnan(r)]
    lo, hi = np.quantile(r, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def ratio_interval(x1: int, n1: int, x2: int, n2: int, alpha: float, method: str = "koopman") -> tuple[float, float]:
    if method == "koopman":
        return koopman(x1, n1, x2, n2, alpha)
    if method == "katz":
        return katz(x1, n1, x2, n2, alpha)
    if method == "bootstrap":
        return bootstrap(x1, n1, x2, n2, alpha)
    raise ValueError(f"unknown ratio_method {method!r}; use {'|'.join(RATIO_METHODS)}")
