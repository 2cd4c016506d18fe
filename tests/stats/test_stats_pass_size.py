"""The size of the three-player pass decision (issue 42 item 4): computed exactly, checked by
enumeration and by simulation; the open criterion keeps the nominal alpha / 2."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from turinglab.stats import decide, interval, pass_size, three_player


def brute(n: int, closed: bool, alpha: float = 0.05) -> float:
    ks = [k for k in range(n + 1) if decide(interval(k, n, alpha).pieces, 0.5, closed) == "passes"]
    assert ks == list(range(ks[0], n + 1)) if ks else True  # an upper set, as pass_size assumes
    return float(binom.pmf(ks, n, 0.5).sum()) if ks else 0.0


@pytest.mark.parametrize("n", [1, 2, 7, 10, 25, 50, 51, 100])
def test_size_equals_the_sum_over_every_outcome(n):
    for closed in (True, False):
        assert pass_size(n, closed=closed)[0] == pytest.approx(brute(n, closed), rel=1e-12, abs=1e-300)


def test_closed_size_exceeds_nominal_and_open_keeps_it():
    closed50, k50 = pass_size(50)
    assert closed50 == pytest.approx(0.03245432353613609, rel=1e-12) and k50 == 32  # the referee's 3.25 %
    for n in (100, 200, 300):
        assert 0.0275 < pass_size(n)[0] < 0.029  # "2.8 % at n = 100…300"
    for n in (10, 50, 100, 300, 1000):
        assert pass_size(n, closed=False)[0] <= 0.025
    # 60 of 100: the set starts exactly at 0.5; closed passes, open does not
    assert three_player(60, 100).decision == "passes"
    assert three_player(60, 100, closed=False).decision == "inconclusive"


@pytest.mark.parametrize("n", [50, 100])
def test_size_by_simulation_just_below_half(n):
    rng = np.random.default_rng(n)
    p = 0.5 - 1e-9
    k = rng.binomial(n, p, size=200_000)
    for closed in (True, False):
        size, kstar = pass_size(n, closed=closed)
        rate = float((k >= kstar).mean())
        se = (size * (1 - size) / k.size) ** 0.5
        assert abs(rate - size) < 4 * se, (closed, rate, size)
        # and the decision itself, on a few simulated outcomes around k*
        for kk in (kstar - 1, kstar):
            assert (three_player(int(kk), n, closed=closed).decision == "passes") == (kk >= kstar)
