"""Three- and two-player pass criteria, the decision rule, and the ratio intervals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats
from statsmodels.stats.proportion import confint_proportions_2indep

from turinglab.stats import binom_test, decide, interval, three_player, two_player
from turinglab.stats.ratio import bootstrap, katz, koopman


# --- decide -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "pieces, threshold, expected",
    [
        ([(0.5, 0.9)], 0.5, "passes"),  # at the threshold counts as passing
        ([(0.2, 0.4999)], 0.5, "fails"),
        ([(0.3, 0.6)], 0.5, "inconclusive"),
        ([(0.1, 0.4), (0.55, 0.6)], 0.5, "inconclusive"),  # a gap does not hide the upper piece
        ([(0.6, 0.7), (0.8, 0.9)], 0.5, "passes"),
        ([(0.2, 0.8)], 1.0, "fails"),
        ([(0.7, math.inf)], 1.0, "inconclusive"),
    ],
)
def test_decide(pieces, threshold, expected):
    assert decide(pieces, threshold) == expected


def test_decide_needs_pieces():
    with pytest.raises(ValueError):
        decide([], 0.5)


# --- three-player -----------------------------------------------------------------------------


def test_three_player_paper_example():
    # 9 correct identifications of 10 = the machine chosen as the human once
    at5, at1 = three_player(1, 10, 0.05), three_player(1, 10, 0.01)
    exact5, exact1 = interval(9, 10, 0.05), interval(9, 10, 0.01)
    assert at5.p_value == pytest.approx(0.021484375, abs=1e-15)
    assert at5.decision == "fails" and at1.decision == "inconclusive"
    assert at5.machine_success.estimate == pytest.approx(0.1)
    assert at5.machine_success.low == pytest.approx(1 - exact5.high, abs=1e-12)
    assert at5.machine_success.high == pytest.approx(1 - exact5.low, abs=1e-12)
    assert at1.machine_success.high == pytest.approx(1 - exact1.low, abs=1e-12)
    assert at5.humanness.estimate == pytest.approx(0.2)
    assert at5.humanness.low == pytest.approx(at5.machine_success.low / 0.5)
    assert at5.humanness.high == pytest.approx(at5.machine_success.high / 0.5)
    # the paper's grid figures give the humanness range 2% to 88% (1 - 0.99, 1 - 0.56 over 0.5)
    grid = interval(9, 10, 0.05, grid_step=0.01)
    assert ((1 - grid.high) / 0.5, (1 - grid.low) / 0.5) == pytest.approx((0.02, 0.88))


@pytest.mark.parametrize("k, n, expected", [(70, 100, "passes"), (50, 100, "inconclusive"), (30, 100, "fails"), (0, 3, "inconclusive")])
def test_three_player_decisions(k, n, expected):
    res = three_player(k, n)
    assert res.decision == expected
    assert res.decision == decide(res.interval.pieces, 0.5)
    d = res.to_dict()
    assert d["format"] == "three-player" and d["threshold"] == 0.5 and d["n"] == n


def test_three_player_methods_use_their_own_test():
    assert three_player(1, 10, method="blaker").p_value == pytest.approx(0.021484375)
    cp = three_player(2, 10, method="clopper-pearson")
    assert cp.p_value == pytest.approx(2 * stats.binom.cdf(2, 10, 0.5))


def test_binom_test_one_sided_interval_is_clopper_pearson():
    res = binom_test(9, 10, alternative="greater", alpha=0.05)
    assert res.p_value == pytest.approx(11 / 1024)
    assert res.interval.low == pytest.approx(stats.beta.ppf(0.05, 9, 2))
    assert res.interval.high == 1.0


# --- ratio intervals ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None)
@given(
    n1=st.integers(2, 300), n2=st.integers(2, 300), f1=st.floats(0, 1), f2=st.floats(0, 1),
    alpha=st.sampled_from([0.01, 0.05, 0.1]),
)
def test_koopman_matches_statsmodels_score(n1, n2, f1, f2, alpha):
    x1, x2 = round(f1 * n1), round(f2 * n2)
    if not (0 < x1 < n1 and 0 < x2 < n2):
        return  # statsmodels' cubic is unreliable at the boundary; covered by the next test
    lo, hi = koopman(x1, n1, x2, n2, alpha)
    ref = confint_proportions_2indep(x1, n1, x2, n2, method="score", compare="ratio", alpha=alpha, correction=False)
    assert lo == pytest.approx(float(np.real(ref[0])), rel=1e-6)
    assert hi == pytest.approx(float(np.real(ref[1])), rel=1e-6)


def _score_stat_by_direct_mle(theta, x1, n1, x2, n2):
    """Score statistic with the restricted MLE found numerically (independent of the quadratic)."""
    def nll(p2):
        p1 = theta * p2
        return -(stats.binom.logpmf(x1, n1, p1) + stats.binom.logpmf(x2, n2, p2))
    upper = min(1.0, 1.0 / theta) - 1e-12
    p2 = optimize.minimize_scalar(nll, bounds=(1e-12, upper), method="bounded", options={"xatol": 1e-13}).x
    p1 = theta * p2
    return (x1 / n1 - theta * x2 / n2) ** 2 / (p1 * (1 - p1) / n1 + theta**2 * p2 * (1 - p2) / n2)


@pytest.mark.parametrize("x1, n1, x2, n2", [(66, 189, 124, 124), (6, 6, 24, 169), (3, 3, 15, 175), (20, 174, 3, 3), (5, 40, 30, 40)])
def test_koopman_bounds_solve_the_score_equation(x1, n1, x2, n2):
    z2 = stats.chi2.isf(0.05, 1)
    lo, hi = koopman(x1, n1, x2, n2, 0.05)
    assert lo < (x1 / n1) / (x2 / n2) < hi
    for bound in (lo, hi):
        assert _score_stat_by_direct_mle(bound, x1, n1, x2, n2) == pytest.approx(z2, rel=1e-4)


def test_koopman_edges():
    assert koopman(0, 20, 10, 20, 0.05)[0] == 0.0
    assert koopman(5, 20, 0, 20, 0.05)[1] == math.inf
    assert koopman(0, 20, 0, 20, 0.05) == (0.0, math.inf)


def test_katz_matches_statsmodels_log():
    for x1, n1, x2, n2 in [(10, 30, 20, 30), (3, 50, 40, 41), (12, 12, 6, 20)]:
        ref = confint_proportions_2indep(x1, n1, x2, n2, method="log", compare="ratio")
        assert katz(x1, n1, x2, n2, 0.05) == pytest.approx(tuple(ref), rel=1e-12)
    with pytest.raises(ValueError, match="koopman"):
        katz(0, 10, 3, 10, 0.05)


def test_bootstrap_is_reproducible_and_near_koopman():
    a = bootstrap(40, 100, 60, 100, 0.05)
    assert a == bootstrap(40, 100, 60, 100, 0.05)
    k = koopman(40, 100, 60, 100, 0.05)
    assert a[0] == pytest.approx(k[0], abs=0.05) and a[1] == pytest.approx(k[1], abs=0.05)


# --- two-player ----------------------------------------------------------------------------------


def test_two_player_fields_and_decision():
    res = two_player(10, 30, 20, 30)
    assert res.machine_success.estimate == pytest.approx(1 / 3)
    assert res.threshold.estimate == pytest.approx(2 / 3)
    assert res.humanness.estimate == pytest.approx(0.5)
    assert (res.humanness.low, res.humanness.high) == pytest.approx(koopman(10, 30, 20, 30, 0.05))
    assert res.decision == "fails" and res.p_value < 0.05
    cm = interval(10, 30)
    assert (res.machine_success.low, res.machine_success.high) == (cm.low, cm.high)
    d = res.to_dict()
    assert d["format"] == "two-player"
    assert set(d["threshold"]) == {"estimate", "low", "high"}


@pytest.mark.parametrize(
    "counts, expected",
    [((20, 30, 20, 30), "inconclusive"), ((28, 30, 10, 30), "passes"), ((2, 40, 30, 40), "fails")],
)
def test_two_player_decisions(counts, expected):
    assert two_player(*counts).decision == expected


def test_boschloo_is_two_sided_and_no_less_powerful_than_fisher():
    low_machine = two_player(5, 40, 25, 40)
    high_machine = two_player(25, 40, 5, 40)
    # two-sided: the mirror table gives the same p-value, and the decision follows its sign
    assert low_machine.p_value == pytest.approx(high_machine.p_value, rel=1e-9)
    assert low_machine.p_value < 0.001
    assert (low_machine.decision, high_machine.decision) == ("fails", "passes")
    for km, nm, kh, nh in [(5, 40, 25, 40), (8, 20, 12, 20), (3, 15, 9, 14)]:
        fisher = stats.fisher_exact([[km, kh], [nm - km, nh - kh]], alternative="two-sided").pvalue
        assert two_player(km, nm, kh, nh).p_value <= fisher + 1e-12


def test_two_player_large_samples_use_the_score_test():
    res = two_player(300, 1000, 350, 1000)
    assert "score" in res.test
    assert 0 < res.p_value < 0.05


@pytest.mark.parametrize(
    "args, kwargs, message",
    [
        ((11, 10, 3, 10), {}, "k_m"),
        ((3, 10, 3, 0), {}, "n_h"),
        ((3, 10, 3, 10), {"ratio_method": "wald"}, "ratio_method"),
        ((3, 10, 3, 10), {"alpha": 0.0}, "alpha"),
        ((3, 10, 3, 10), {"method": "exact"}, "method"),
    ],
)
def test_two_player_bad_input(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        two_player(*args, **kwargs)


def test_humanness_carries_the_gaps_of_the_confidence_set():
    """1 of 30 has a Sterne set with a gap: the degree of humanness keeps both pieces (each / 0.5)."""
    res = three_player(1, 30, 0.05, "sterne")
    assert not res.interval.is_interval and len(res.interval.pieces) == 2
    hu = res.humanness
    # pytest.approx takes flat sequences only (pytest >= 9 refuses nested ones): compare piece by piece
    assert len(hu.pieces) == len(res.interval.pieces)
    for got, (a, b) in zip(hu.pieces, res.interval.pieces):
        assert tuple(got) == pytest.approx((a / 0.5, b / 0.5))
    gap = (res.interval.pieces[0][1] + res.interval.pieces[1][0]) / 2 / 0.5
    assert hu.low < gap < hu.high and not any(a <= gap <= b for a, b in hu.pieces)
    assert res.to_dict()["humanness"]["pieces"] == [list(p) for p in hu.pieces]
    two = two_player(3, 10, 5, 10)
    assert two.to_dict()["humanness"]["pieces"] == [[two.humanness.low, two.humanness.high]]
