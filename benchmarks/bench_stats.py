"""Time the exact Sterne interval against statsmodels' proportion_confint(method="binom_test").

Run: python benchmarks/bench_stats.py [--repeat R]
Prints, for n = 10, 1 000, 10 000 and 100 000 and a few k each, the fastest of R timed calls
of each (the least disturbed by other processes on a shared machine), their ratio, and the largest difference between the bounds where the set is one
interval (statsmodels reports one interval even when the exact set has gaps).
"""

from __future__ import annotations

import argparse
import time
import warnings

from statsmodels.stats.proportion import proportion_confint

from turinglab.stats import interval

CASES = {
    10: (0, 1, 5, 9),
    1_000: (3, 100, 500, 990),
    10_000: (7, 2_500, 5_000),
    100_000: (37, 50_000, 99_990),
}


def timed(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    interval(5, 10)  # warm up imports
    proportion_confint(5, 10, method="binom_test")
    print(f"{'n':>7} {'k':>6} {'turinglab ms':>13} {'statsmodels ms':>15} {'speed-up':>9} {'max |diff|':>11}  pieces")
    for n, ks in CASES.items():
        for k in ks:
            t_ours, ours = timed(lambda: interval(k, n, 0.05), args.repeat)
            t_sm, sm = timed(lambda: proportion_confint(k, n, 0.05, method="binom_test"), args.repeat)
            diff = max(abs(ours.low - sm[0]), abs(ours.high - sm[1])) if ours.is_interval else float("nan")
            print(
                f"{n:>7} {k:>6} {1e3 * t_ours:>13.3f} {1e3 * t_sm:>15.3f} {t_sm / t_ours:>8.1f}x "
                f"{diff:>11.2e}  {len(ours.pieces)}"
            )


if __name__ == "__main__":
    main()
