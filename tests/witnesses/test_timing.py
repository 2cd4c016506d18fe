"""The timing model against its formula (SPEC §1), checked statistically with scipy."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import stats

from turinglab.game.config import Rules, Timing
from turinglab.witnesses.timing import hold_for, reply_delay, typing_delay

N = 4000


def _residuals(timing: Timing, rng, n_chars: int, prev: int = 0) -> np.ndarray:
    d = np.array([reply_delay(n_chars, timing, rng, prev_chars=prev) for _ in range(N)])
    return d - timing.base_s - timing.s_per_char * n_chars - timing.read_s_per_char * prev


@pytest.mark.parametrize("make_rng", [lambda: np.random.default_rng(7), lambda: random.Random(7)])
def test_reply_delay_residual_is_the_configured_gamma(make_rng):
    t = Timing()  # paper defaults: 1 + 0.3 n + Gamma(2.5, 0.25)
    res = _residuals(t, make_rng(), n_chars=42)
    assert stats.kstest(res, stats.gamma(a=2.5, scale=0.25).cdf).pvalue > 0.01
    # a wrong shape or scale is detected with this many samples
    assert stats.kstest(res, stats.gamma(a=2.0, scale=0.25).cdf).pvalue < 1e-4
    assert stats.kstest(res, stats.gamma(a=2.5, scale=0.30).cdf).pvalue < 1e-4


def test_every_parameter_is_used():
    t = Timing(base_s=0.5, s_per_char=0.05, gamma_shape=4.0, gamma_scale=0.1, read_s_per_char=0.02)
    res = _residuals(t, np.random.default_rng(3), n_chars=100, prev=50)
    assert stats.kstest(res, stats.gamma(a=4.0, scale=0.1).cdf).pvalue > 0.01
    assert res.min() > 0  # nothing below the deterministic part


def test_max_s_caps_the_delay():
    t = Timing(max_s=5.0)
    rng = np.random.default_rng(1)
    delays = [reply_delay(300, t, rng) for _ in range(50)]
    assert max(delays) == 5.0


def test_seed_reproduces():
    t = Timing()
    a = [reply_delay(10, t, np.random.default_rng(11)) for _ in range(3)]
    b = [reply_delay(10, t, np.random.default_rng(11)) for _ in range(3)]
    assert a == b


def test_negative_lengths_refused():
    with pytest.raises(ValueError, match="n_chars"):
        reply_delay(-1, Timing(), np.random.default_rng(0))


def test_typing_indicator_is_uniform_after_minimum():
    rules = Rules()  # 2 + U(0, 3)
    rng = np.random.default_rng(5)
    x = np.array([typing_delay(rules, rng) for _ in range(N)])
    assert x.min() >= 2.0 and x.max() <= 5.0
    assert stats.kstest(x, stats.uniform(loc=2.0, scale=3.0).cdf).pvalue > 0.01
    assert stats.kstest(x, stats.uniform(loc=2.0, scale=2.5).cdf).pvalue < 1e-4


def test_hold_for_absorbs_model_latency():
    assert hold_for(4.0, 1.5) == pytest.approx(2.5)
    assert hold_for(4.0, 6.0) == 0.0  # a slow model is not delayed further
