"""Exact power, Beta posteriors, the always-valid confidence sequence, and d'."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from turinglab.stats import beta_posterior, confidence_sequence, decide, dprime, dprime_2afc, interval, power
from turinglab.stats.bayes import log_mixture_martingale
from turinglab.stats.power import power_curve


def brute_power(rate: float, vs: float, alpha: float, n: int, method: str) -> float:
    """Enumerate outcomes; the test's p-value from scipy (binomtest or the central tails)."""
    total = 0.0
    for x in range(n + 1):
        if method == "sterne":
            p = stats.binomtest(x, n, vs).pvalue
        else:
            p = min(1.0, 2 * min(stats.binom.cdf(x, n, vs), stats.binom.sf(x - 1, n, vs)))
        right_side = x > n * vs if rate > vs else x < n * vs
        if p < alpha and right_side:
            total += stats.binom.pmf(x, n, rate)
    return total


@pytest.mark.parametrize("rate, vs, method", [(0.7, 0.5, "sterne"), (0.3, 0.5, "sterne"), (0.45, 0.3, "sterne"), (0.2, 0.35, "clopper-pearson")])
def test_power_curve_matches_enumeration(rate, vs, method):
    ns = np.array([1, 2, 5, 13, 20, 37, 60, 101])
    got = power_curve(rate, vs, 0.05, method, ns)
    want = [brute_power(rate, vs, 0.05, int(n), method) for n in ns]
    assert got == pytest.approx(want, abs=1e-12)


def test_power_counts_exactly_the_pass_or_fail_decisions():
    # power sums P(X = x) over outcomes whose test rejects vs on the true rate's side; check
    # that these are exactly the outcomes whose Sterne set lies wholly on that side
    for vs in (0.5, 0.3):
        for n in (7, 18, 31):
            for x in range(n + 1):
                ci = interval(x, n)
                rejects = stats.binomtest(x, n, vs).pvalue < 0.05
                expected = ("passes" if x > n * vs else "fails") if rejects else "inconclusive"
                assert decide(ci.pieces, vs) == expected, (vs, n, x)


def test_power_sawtooth_and_sample_sizes():
    res = power(0.6, vs=0.5, alpha=0.05, target=0.8)
    pw = np.array(res.powers)
    assert np.any(np.diff(pw) < 0)  # the sawtooth: power sometimes drops as n grows
    first, stable = res.first_n, res.stable_n
    assert first is not None and stable is not None and first <= stable <= res.n_max
    assert pw[first - 1] >= 0.8 and np.all(pw[: first - 1] < 0.8)
    assert np.all(pw[stable - 1 :] >= 0.8) and pw[stable - 2] < 0.8
    assert res.power_at(first) == pytest.approx(brute_power(0.6, 0.5, 0.05, first, "sterne"), abs=1e-12)
    # the normal approximation is in the same neighbourhood
    assert 150 < first < 260
    d = res.to_dict()
    assert d["first_n"] == first and d["stable_n"] == stable


@pytest.mark.parametrize("method", ["sterne", "blaker", "clopper-pearson"])
@pytest.mark.parametrize("rate, vs", [(0.62, 0.5), (0.2, 0.35)])
def test_skipping_small_n_loses_nothing(method, rate, vs):
    # power() skips n where even the one-sided level-alpha test is short of the target;
    # the full curve must agree on first_n and stable_n
    res = power(rate, vs=vs, method=method, n_max=400)
    full = power_curve(rate, vs, 0.05, method, np.arange(1, 401))
    reach = full >= 0.8
    assert res.first_n == int(np.argmax(reach)) + 1
    assert res.stable_n == int(np.flatnonzero(~reach)[-1]) + 2
    assert np.array(res.powers)[res.first_n - 1 :] == pytest.approx(full[res.first_n - 1 :], abs=1e-15)


def test_power_not_reached_within_n_max():
    res = power(0.52, n_max=50)
    assert res.first_n is None and res.stable_n is None


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(rate=0.5), "no difference"),
        (dict(rate=1.2), "rate"),
        (dict(rate=0.6, alpha=1), "alpha"),
        (dict(rate=0.6, target=1.0), "power"),
        (dict(rate=0.6, method="wilson"), "exact method"),
    ],
)
def test_power_bad_input(kwargs, message):
    with pytest.raises(ValueError, match=message):
        power(**kwargs)


# --- Beta posterior ---------------------------------------------------------------------------


def test_beta_posterior_closed_forms():
    post = beta_posterior(9, 10, threshold=0.5, rope=(0.45, 0.55))
    # Beta(10, 2): cdf(x) = 11 x^10 - 10 x^11
    cdf = lambda x: 11 * x**10 - 10 * x**11  # noqa: E731
    assert (post.a, post.b) == (10, 2)
    assert post.prob_at_or_above == pytest.approx(1 - cdf(0.5), rel=1e-12)
    assert post.prob_in_rope == pytest.approx(cdf(0.55) - cdf(0.45), rel=1e-10)
    assert post.mean == pytest.approx(10 / 12)
    assert cdf(post.low) == pytest.approx(0.025, abs=1e-10)
    assert cdf(post.high) == pytest.approx(0.975, abs=1e-10)


def test_beta_posterior_prior_and_errors():
    assert beta_posterior(3, 10, prior=(0.5, 0.5)).a == 3.5
    with pytest.raises(ValueError, match="prior"):
        beta_posterior(3, 10, prior=(0, 1))
    with pytest.raises(ValueError, match="rope"):
        beta_posterior(3, 10, rope=(0.6, 0.4))


# --- confidence sequence --------------------------------------------------------------------------


def test_confidence_sequence_bounds_are_where_the_martingale_hits_one_over_alpha():
    cs = confidence_sequence(counts=(30, 100), alpha=0.05)
    for b in (cs.low, cs.high):
        assert float(log_mixture_martingale(30, 100, b)) == pytest.approx(math.log(20), abs=1e-8)
    assert cs.low < 0.3 < cs.high
    assert float(log_mixture_martingale(30, 100, (cs.low + cs.high) / 2)) < math.log(20)
    # wider than the fixed-n exact interval: the price of peeking
    cp = proportion_confint(30, 100, 0.05, method="beta")
    assert cs.low < cp[0] and cs.high > cp[1]


def test_confidence_sequence_path_is_nested_and_matches_counts():
    x = np.random.default_rng(3).binomial(1, 0.4, 150)
    cs = confidence_sequence(list(x), alpha=0.1)
    assert np.all(np.diff(cs.lows) >= 0) and np.all(np.diff(cs.highs) <= 0)
    single = confidence_sequence(counts=(int(x.sum()), 150), alpha=0.1)
    assert single.low <= cs.low and cs.high <= single.high  # running intersection is tighter


def test_confidence_sequence_time_uniform_coverage_by_simulation():
    rng = np.random.default_rng(2024)
    alpha, p, paths, steps = 0.1, 0.3, 400, 400
    x = rng.binomial(1, p, size=(paths, steps))
    s = np.cumsum(x, axis=1)
    t = np.arange(1, steps + 1)
    # the CS excludes p at time t exactly when M_t(p) >= 1/alpha
    ever_excluded = (log_mixture_martingale(s, t, p) >= math.log(1 / alpha)).any(axis=1)
    assert ever_excluded.mean() <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / paths)
    # a naive fixed-n interval watched after every game is fooled far more often
    lo, hi = proportion_confint(s, t, alpha, method="wilson")
    naive = ((lo > p) | (hi < p)).any(axis=1).mean()
    assert naive > 2 * alpha


def test_confidence_sequence_bad_input():
    with pytest.raises(ValueError, match="0/1"):
        confidence_sequence([0, 1, 2])
    with pytest.raises(ValueError, match="between 0 and n"):
        confidence_sequence(counts=(5, 3))


# --- d' ------------------------------------------------------------------------------------------


def test_dprime_jones_bergen_smoothing():
    z = NormalDist().inv_cdf
    res = dprime(20, 30, 5, 30)
    h, f = 20.5 / 31, 5.5 / 31
    assert res.d == pytest.approx(z(h) - z(f), rel=1e-12)
    assert res.c == pytest.approx(-(z(h) + z(f)) / 2, rel=1e-12)


def test_dprime_other_smoothings():
    z = NormalDist().inv_cdf
    assert dprime(20, 30, 5, 30, "none").d == pytest.approx(z(20 / 30) - z(5 / 30))
    assert dprime(30, 30, 0, 30, "none").d == math.inf
    clip = dprime(30, 30, 0, 30, "clip")
    assert clip.d == pytest.approx(2 * z(1 - 1 / 60)) and clip.c == pytest.approx(0, abs=1e-12)
    with pytest.raises(ValueError, match="smoothing"):
        dprime(1, 2, 1, 2, "laplace")
    with pytest.raises(ValueError, match="hits"):
        dprime(5, 4, 1, 2)


def test_dprime_2afc():
    assert dprime_2afc(0.5) == 0.0
    for d in (0.3, 1.0, 2.2):
        pc = NormalDist().cdf(d / math.sqrt(2))
        assert dprime_2afc(pc) == pytest.approx(d, rel=1e-12)
    with pytest.raises(ValueError):
        dprime_2afc(1.5)


def test_two_outcomes_are_outcomes_not_counts():
    # (1, 1) as outcomes is two successes in two games, not one success in one game
    two = confidence_sequence((1, 1), alpha=0.05)
    assert (two.k, two.n) == (2, 2)
    assert two.low == confidence_sequence(counts=(2, 2), alpha=0.05).low
    assert confidence_sequence((1, 0)).n == 2
    with pytest.raises(ValueError, match="either"):
        confidence_sequence([1], counts=(1, 1))
