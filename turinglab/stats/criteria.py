"""Giunti's pass criteria for three-player and two-player Turing tests, and the binomial test.

Three-player: the two identifications in a game are one event, so the machine's success
rate is one binomial and the absolute criterion is P(S_m) >= 0.5; the degree of humanness
is P(S_m) / 0.5. Two-player: machine and human witnesses are two independent binomials;
the machine passes when P(S_m) >= P(S_h) and its degree of humanness is P(S_m) / P(S_h).
A decision is always made from a confidence set at a stated alpha (see results.decide).
"""

from __future__ import annotations

import math


from .binomial import (
    binom_pvalue,
    blaker_pvalue,
    check_alpha,
    check_alternative,
    check_counts,
    check_prob,
)
from .intervals import check_method, interval, one_sided_interval
from .ratio import RATIO_METHODS, ratio_interval
from .results import BinomResult, Estimate, ThreePlayerResult, TwoPlayerResult, decide

# Above this many (n_m * n_h) cells scipy's Boschloo test takes more than about two seconds
# (0.25 s at 100 x 100, 1.5 s at 300 x 300, 7 s at 500 x 500, a minute at 1000 x 1000); test="auto"
# then uses the score test and says so in ``test``. test="boschloo" always runs the exact test.
BOSCHLOO_MAX_CELLS = 120_000
TWO_PLAYER_TESTS = ("auto", "boschloo", "score")


def _two_sided_p(k: int, n: int, p0: float, method: str) -> float:
    """The two-sided p-value that matches the interval method (Sterne's for the approximate ones)."""
    if method == "blaker":
        return blaker_pvalue(k, n, p0)
    if method == "clopper-pearson":
        return min(1.0, 2 * min(binom_pvalue(k, n, p0, "less"), binom_pvalue(k, n, p0, "greater")))
    return binom_pvalue(k, n, p0)


def binom_test(
    k: int,
    n: int,
    p0: float = 0.5,
    alpha: float = 0.05,
    method: str = "sterne",
    alternative: str = "two-sided",
    grid_step: float | None = None,
) -> BinomResult:
    """Exact test of p = p0 for k successes in n, with the matching confidence set.

    Two-sided: the p-value is Giunti's (Sterne's) unless ``method`` is blaker or
    clopper-pearson, whose own tests are used. One-sided: P(X >= k) or P(X <= k) and the
    exact one-sided Clopper-Pearson bound.
    """
    k, n = check_counts(k, n)
    p0 = check_prob(p0, "p0")
    alpha = check_alpha(alpha)
    check_method(method)
    check_alternative(alternative)
    if alternative == "two-sided":
        p = _two_sided_p(k, n, p0, method)
        ci = interval(k, n, alpha, method, grid_step)
    else:
        if grid_step is not None:
            raise ValueError("grid_step reproduces the paper's two-sided interval; drop it for a one-sided test")
        p = binom_pvalue(k, n, p0, alternative)
        ci = one_sided_interval(k, n, alpha, alternative)
    return BinomResult(k, n, p0, alpha, k / n, p, ci, alternative)


def three_player(k: int, n: int, alpha: float = 0.05, method: str = "sterne", closed: bool = True) -> ThreePlayerResult:
    """Three-player criteria from k games (of n) in which the machine was chosen as the human.

    ``closed`` (Giunti's criterion): a set that starts exactly at 0.5 passes; ``closed=False``
    asks for a set wholly above 0.5 (see ``pass_size``).
    """
    k, n = check_counts(k, n)
    alpha = check_alpha(alpha)
    check_method(method)
    ci = interval(k, n, alpha, method)
    est = k / n
    return ThreePlayerResult(
        k=k, n=n, alpha=alpha, method=method, machine_success=Estimate(est, ci.low, ci.high), interval=ci,
        p_value=_two_sided_p(k, n, 0.5, method), decision=decide(ci.pieces, 0.5, closed),
        humanness=Estimate(est / 0.5, ci.low / 0.5, ci.high / 0.5, tuple((a / 0.5, b / 0.5) for a, b in ci.pieces)),
    )


def pass_size(n: int, alpha: float = 0.05, method: str = "sterne", closed: bool = True) -> tuple[float, int | None]:
    """Size of the three-player pass decision at n games: sup over P(S_m) < 0.5 of P(passes).

    The outcomes that pass form an upper set {k >= k*} (the set's lower bound grows with k), so
    P(passes) grows with P(S_m) and its supremum below 0.5 is its value at 0.5, the exact sum
    P(X >= k*) for X ~ Bin(n, 0.5). Returns (size, k*), k* None when no outcome passes. The
    nominal size is alpha / 2 (one side of the two-sided set); the closed criterion can exceed it,
    because 0.5 is always a breakpoint of the exact p-value, where the set keeps its end point.
    """
    n = check_counts(0, n)[1]
    alpha = check_alpha(alpha)

    def passes(k: int) -> bool:
        return decide(interval(k, n, alpha, method).pieces, 0.5, closed) == "passes"

    if not passes(n):
        return 0.0, None
    lo, hi = n // 2, n  # passes(hi); below n/2 the estimate is under 0.5 and never passes
    if passes(lo):
        hi = lo
    else:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if passes(mid) else (mid, hi)
    from .binomial import sf

    return float(sf(hi - 1, n, 0.5)), hi


def two_sample_test(k_m: int, n_m: int, k_h: int, n_h: int, test: str = "auto") -> tuple[float, str]:
    """Two-sided p-value of H0: p_a = p_b for two independent binomials, and the test's name.

    The one test for this question everywhere (the two-player criterion, the report's
    comparisons, the export's rebuild.py): exact unconditional Boschloo up to
    BOSCHLOO_MAX_CELLS = n_a * n_b, else (test="auto") the score test, whose name then says why.
    """
    if test not in TWO_PLAYER_TESTS:
        raise ValueError(f"unknown test {test!r}; use {'|'.join(TWO_PLAYER_TESTS)}")
    cells = n_m * n_h
    if test == "boschloo" or (test == "auto" and cells <= BOSCHLOO_MAX_CELLS):
        table = [[k_m, k_h], [n_m - k_m, n_h - k_h]]
        from scipy import stats

        res = stats.boschloo_exact(table, alternative="two-sided")
        p = float(res.pvalue)
        return (1.0 if math.isnan(p) else min(1.0, p)), "Boschloo exact unconditional, two-sided"
    from statsmodels.stats.proportion import test_proportions_2indep

    res = test_proportions_2indep(k_m, n_m, k_h, n_h, method="score", compare="diff", alternative="two-sided")
    p = float(res.pvalue)
    name = "score (Miettinen-Nurminen), two-sided"
    if test == "auto":
        name += (f"; chosen because the exact Boschloo test at {n_m} x {n_h} games (over {BOSCHLOO_MAX_CELLS:,} cells) "
                 "takes more than a few seconds")
    return (1.0 if math.isnan(p) else p), name


def two_player(
    k_m: int,
    n_m: int,
    k_h: int,
    n_h: int,
    alpha: float = 0.05,
    method: str = "sterne",
    ratio_method: str = "koopman",
    test: str = "auto",
) -> TwoPlayerResult:
    """Two-player criteria: machine witnesses judged human k_m of n_m, humans judged human k_h of n_h.

    p_value and decision come from one test: the two-sided test of H0 p_m = p_h (exact
    unconditional Boschloo; ``test="auto"`` uses the score test when Boschloo would take more
    than a few seconds and names it in ``test``). The decision is ``fails`` when that test
    rejects at alpha with p_m < p_h, ``passes`` when it rejects with p_m > p_h, else
    ``inconclusive``. The degree of humanness is p_m / p_h with its ``ratio_method`` interval,
    which is descriptive: ``note`` says when it sits on the other side of 1 from the decision.
    """
    k_m, n_m = check_counts(k_m, n_m, "k_m", "n_m")
    k_h, n_h = check_counts(k_h, n_h, "k_h", "n_h")
    alpha = check_alpha(alpha)
    check_method(method)
    if ratio_method not in RATIO_METHODS:
        raise ValueError(f"unknown ratio_method {ratio_method!r}; use {'|'.join(RATIO_METHODS)}")
    cm, ch = interval(k_m, n_m, alpha, method), interval(k_h, n_h, alpha, method)
    pm, ph = k_m / n_m, k_h / n_h
    lo, hi = ratio_interval(k_m, n_m, k_h, n_h, alpha, ratio_method)
    ratio = pm / ph if ph > 0 else (math.inf if pm > 0 else math.nan)
    p, test_name = two_sample_test(k_m, n_m, k_h, n_h, test)
    if p < alpha:
        decision = "fails" if pm < ph else "passes"
    else:
        decision = "inconclusive"
    ratio_says = decide([(lo, hi)], 1.0)
    note = ""
    if ratio_says != decision:
        note = (
            f"the {ratio_method} interval of the ratio alone would say {ratio_says}; "
            "the decision follows the test that gives the p-value"
        )
    return TwoPlayerResult(
        k_m=k_m, n_m=n_m, k_h=k_h, n_h=n_h, alpha=alpha, method=method, ratio_method=ratio_method,
        machine_success=Estimate(pm, cm.low, cm.high), threshold=Estimate(ph, ch.low, ch.high),
        p_value=p, decision=decision, humanness=Estimate(ratio, lo, hi, ((lo, hi),)),
        test=test_name, note=note, machine_interval=cm, threshold_interval=ch,
    )

