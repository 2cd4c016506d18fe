"""The ML binomial GLMM (turinglab.analysis.models.glmm) by simulation: false-positive rate on null
studies and coverage of a known games-played effect. Prints FPR, coverage and time.

    python benchmarks/bench_glmm.py [--null 200] [--cover 200] [--interrogators 100]

Wald tests over few clusters run a little liberal: with 60 interrogators FPR was 0.070 and coverage 0.925
(200 + 200 studies); with 100 interrogators FPR 0.050, coverage 0.925.
"""

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scipy.stats import binomtest  # noqa: E402

from turinglab.analysis.models import glmm  # noqa: E402
from tests.test_analysis_glmm import FORMULA, study  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--null", type=int, default=200)
    ap.add_argument("--cover", type=int, default=200)
    ap.add_argument("--interrogators", type=int, default=100, help="per study, 6 games each")
    a = ap.parse_args()
    t0 = time.perf_counter()
    rej = sum(glmm(study(s, n_int=a.interrogators), FORMULA).set_index("term").loc["game_index", "p_value"] < 0.05 for s in range(a.null))
    t1 = time.perf_counter()
    rows = [glmm(study(10_000 + s, n_int=a.interrogators, slope=0.15), FORMULA).set_index("term").loc["game_index"] for s in range(a.cover)]
    t2 = time.perf_counter()
    cov = sum(r["low"] <= 0.15 <= r["high"] for r in rows)
    fpr, ci = rej / a.null, binomtest(rej, a.null).proportion_ci()
    print(f"null studies: {a.null} ({a.interrogators} interrogators x 6 games), rejected at 5%: {rej} -> FPR {fpr:.3f} "
          f"(95% CI {ci.low:.3f}-{ci.high:.3f}); target [0.03, 0.07]: {'ok' if 0.03 <= fpr <= 0.07 else 'OUT'}")
    print(f"coverage of slope 0.15: {cov}/{a.cover} = {cov / a.cover:.3f}; mean estimate "
          f"{np.mean([r['estimate'] for r in rows]):.4f}")
    print(f"time: {t1 - t0:.1f} s for the null studies, {t2 - t1:.1f} s for coverage "
          f"({(t2 - t0) / (a.null + a.cover) * 1000:.0f} ms a fit)")
    return 0 if 0.03 <= fpr <= 0.07 else 1


if __name__ == "__main__":
    sys.exit(main())
