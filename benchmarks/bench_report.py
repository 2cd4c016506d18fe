"""Time the full analysis + HTML report for 10 000, 100 000 and 1 000 000 synthetic games.

    python benchmarks/bench_report.py [--sizes 10000 100000 1000000] [--boot 1000]

Games are generated at the DataFrame level (turinglab.analysis.demo.synth), not through the
engine. Above 5 000 games the mixed-effects model is skipped and above 300 000 the GEE too;
the report's methods paragraph says so. Peak memory is the process's, so far (it only grows).
The blinding audit needs stored games and is not run here: `turinglab report` audits a seeded sample
of at most 2 000 games (`--audit-max-games`).
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.report.report import write_report
from turinglab.analysis.demo.synth import SynthSpec, simulate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--boot", type=int, default=1000)
    args = ap.parse_args()
    print(f"{'games':>9} {'generate s':>11} {'analyse s':>10} {'report s':>9} {'total s':>8}  slowest steps")
    for n in args.sizes:
        t0 = time.perf_counter()
        df, parts = simulate(SynthSpec(n_games=n, seed=1, interrogator_sd=0.5))
        t1 = time.perf_counter()
        a = analyse(df, parts, Options(n_boot=args.boot))
        t2 = time.perf_counter()
        with tempfile.TemporaryDirectory() as d:
            write_report(a, Path(d) / "report.html")
            size = (Path(d) / "report.html").stat().st_size
        t3 = time.perf_counter()
        top = sorted(a.seconds.items(), key=lambda kv: -kv[1])[:3]
        steps = ", ".join(f"{k} {v:.1f}" for k, v in top)
        print(f"{n:>9} {t1 - t0:>11.1f} {t2 - t1:>10.1f} {t3 - t2:>9.1f} {t3 - t1:>8.1f}  {steps}; "
              f"report {size / 1e6:.1f} MB; peak memory {peak_gb():.2f} GB; "
              f"notes: {'; '.join(a.regressions['notes']) or 'none'}", flush=True)


def peak_gb() -> float:
    """The process's peak resident memory so far (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


if __name__ == "__main__":
    main()
