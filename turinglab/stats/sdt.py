"""Signal detection: d' and criterion c, and d' from a two-alternative forced choice.

In a two-player Turing test take "the witness is an AI" as the signal: a hit is an AI
witness judged AI, a false alarm is a human witness judged AI (Jones & Bergen, appendix F).
"""

from __future__ import annotations

import math


from .binomial import scipy_stats as stats
from .binomial import check_count, check_prob
from .results import DPrimeResult

SMOOTHINGS = ("loglinear", "clip", "none")


def _rate(x: int, n: int, smoothing: str) -> float:
    if smoothing == "loglinear":  # Hautus (1995); Jones & Bergen: (x + 0.5) / (n + 1)
        return (x + 0.5) / (n + 1)
    r = x / n
    if smoothing == "clip":  # Macmillan & Kaplan (1985): keep 1/(2n) away from 0 and 1
        return min(max(r, 1 / (2 * n)), 1 - 1 / (2 * n))
    return r


def dprime(
    hits: int, n_signal: int, false_alarms: int, n_noise: int, smoothing: str = "loglinear"
) -> DPrimeResult:
    """d' = z(hit rate) - z(false-alarm rate) and c = -(z(H) + z(F)) / 2.

    smoothing: ``loglinear`` (x + 0.5)/(n + 1) as in Jones & Bergen; ``clip`` moves rates of 0
    and 1 to 1/(2n) and 1 - 1/(2n); ``none`` uses raw rates (d' is then infinite at 0 or 1).
    """
    if smoothing not in SMOOTHINGS:
        raise ValueError(f"unknown smoothing {smoothing!r}; use {'|'.join(SMOOTHINGS)}")
    counts = {}
    for name, x, n in (("hits", hits, n_signal), ("false_alarms", false_alarms, n_noise)):
        x = check_count(x, name)
        n = check_count(n, f"n for {name}")
        if n < 1 or not 0 <= x <= n:
            raise ValueError(f"{name} must be between 0 and its number of trials (>= 1); got {x} of {n}")
        counts[name] = (x, n)
    h = _rate(*counts["hits"], smoothing)
    f = _rate(*counts["false_alarms"], smoothing)
    zh, zf = float(stats.norm.ppf(h)), float(stats.norm.ppf(f))
    if math.isinf(zh) and math.isinf(zf) and zh == zf:
        d = math.nan
    else:
        d = zh - zf
    c = -(zh + zf) / 2 if not (math.isinf(zh) and math.isinf(zf) and zh != zf) else math.nan
    return DPrimeResult(d=d, c=c, hit_rate=h, false_alarm_rate=f, smoothing=smoothing)


def dprime_2afc(pc: float) -> float:
    """d' from the proportion correct of an unbiased 2AFC (three-player) test: sqrt(2) * z(pc)."""
    pc = check_prob(pc, "pc")
    return math.sqrt(2) * float(stats.norm.ppf(pc))
