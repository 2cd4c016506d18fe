"""How every report prints a p-value (issue 42 item 5): enough digits near the usual thresholds."""

from __future__ import annotations

import math

import pytest

from turinglab.analysis.pformat import THRESHOLDS, p_text


@pytest.mark.parametrize(
    "x, shown",
    [(0.0504, "0.0504"), (0.0496, "0.0496"), (0.05, "0.050"), (0.5, "0.500"), (0.0123, "0.012"),
     (0.00104, "0.00104"), (0.0009, "< 0.001"), (1e-12, "< 0.001"), (0.0999, "0.0999"), (0.1004, "0.1004"),
     (1.0, "1.000"), (float("nan"), "–"), (None, "–")],
)
def test_p_text(x, shown):
    assert p_text(x) == shown


def test_printed_p_is_never_on_the_wrong_side_of_a_threshold():
    # every p on a fine grid: the printed number reads on the same side of each threshold as p
    grid = [i * 1e-6 + d for i in range(1000, 120000, 7) for d in (-3e-9, 3e-9)]
    near = [t + d for t in THRESHOLDS for d in (-4e-7, -1e-9, 0.0, 1e-9, 4e-7, -4.9e-5, 4.9e-5)]
    for x in grid + near:
        s = p_text(x)
        if x < 0.001:
            assert s == "< 0.001"
            continue
        v = float(s)
        for t in THRESHOLDS:
            assert (v < t) == (x < t) and (v != t or 0 <= x - t < 5e-7), (x, s, t)
        assert len(s) <= 8 and math.isclose(v, x, abs_tol=5e-4)
