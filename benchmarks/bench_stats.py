"""Time the exact Sterne interval against statsmodels' proportion_confint(method="binom_test").

Run: python benchmarks/bench_stats.py [--repeat R] [--max-n N]
Prints, for n = 10 up to 10^7 with k = 0, 1, a gap case (the exact set has two pieces) and
middle values, the fastest of R timed calls of each (the least disturbed by other processes
on a shared machine), their ratio, and the largest difference between the bounds where the
set is one interval (statsmodels reports one interval even when the exact set has gaps, and
its tie tolerance of 1e-7 moves a bound by ~1e-9). "-" where statsmodels takes too long
(over --sm-limit seconds on the first call) and is not repeated.
"""

from __future__ import annotations

import argparse
import time
import warnings

from statsmodels.stats.proportion import proportion_confint

from turinglab.stats import interval

CASES = {  # the gap case: 1 of 30 (two pieces at 5%)
    10: (0, 1, 5, 9, 10),
    30: (1,),
    1_000: (0, 1, 3, 100, 500, 990),
    10_000: (0, 1, 7, 2_500, 5_000),
    100_000: (0, 1, 37, 50_000, 99_990),
    1_000_000: (0, 1, 500_000),
    10_000_000: (0, 1, 10, 5_000_000),
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
    ap.add_argument("--max-n", type=int, default=10_000_000)
    ap.add_argument("--sm-limit", type=float, default=20.0)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    interval(5, 10)  # warm up imports
    proportion_confint(5, 10, method="binom_test")
    print(f"{'n':>9} {'k':>8} {'turinglab ms':>13} {'statsmodels ms':>15} {'speed-up':>9} {'max |diff|':>11}  pieces")
    for n, ks in CASES.items():
        if n > args.max_n:
            continue
        for k in ks:
            t_ours, ours = timed(lambda: interval(k, n, 0.05), args.repeat)
            t0 = time.perf_counter()
            sm = proportion_confint(k, n, 0.05, method="binom_test")
            t_sm = time.perf_counter() - t0
            if t_sm < args.sm_limit:
                t_sm, sm = timed(lambda: proportion_confint(k, n, 0.05, method="binom_test"), args.repeat)
            diff = max(abs(ours.low - sm[0]), abs(ours.high - sm[1])) if ours.is_interval else float("nan")
            print(
                f"{n:>9} {k:>8} {1e3 * t_ours:>13.3f} {1e3 * t_sm:>15.3f} {t_sm / t_ours:>8.1f}x "
                f"{diff:>11.2e}  {len(ours.pieces)}",
                flush=True,
            )


if __name__ == "__main__":
    main()
