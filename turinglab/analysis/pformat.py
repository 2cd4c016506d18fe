"""How a p-value is printed in every report (live, static, the audit's section).

Below 0.001: "< 0.001". Otherwise 3 decimals, with more (up to 6) where 3 would put p on or
across a usual threshold: 0.0504 prints "0.0504", not "0.050"; 0.0496 prints "0.0496"; a p just under a threshold
never prints as the threshold, and one at or just over it may.
"""

from __future__ import annotations

import math

THRESHOLDS = (0.001, 0.005, 0.01, 0.05, 0.1)
RULE = ("p-values to 3 decimals, or to as many as 6 where 3 would put one on or across 0.001, 0.005, 0.01, "
        "0.05 or 0.1 (0.0504, not 0.050); below 0.001 as “< 0.001”")


def p_text(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    x = float(x)
    if math.isnan(x):
        return "–"
    if x < 0.001:
        return "< 0.001"
    for d in (3, 4, 5, 6):
        r = round(x, d)
        if all((r < t) == (x < t) and (r != t or x == t) for t in THRESHOLDS):
            return f"{x:.{d}f}"
    # within 5e-7 of a threshold: below it, cut (not round) so it still reads below
    below = any(x < t <= round(x, 6) for t in THRESHOLDS)
    return f"{(math.floor(x * 1e6) / 1e6 if below else x):.6f}"
