"""How precise the mixed model is on the report's subsample: its SEs and fit time by subsample size.

    python benchmarks/sim_subsample.py [--sizes 1000 2500 5000 10000 20000] [--reps 3]

Each replicate is a synthetic two-player study (turinglab.analysis.demo.synth: the demo's rates, about 2.5
games per interrogator, interrogator SD 0.5 on the logit) of the given size, fitted exactly as the report
fits its subsample (models.design, then models.glmm). Printed per size: the mean SE of the games-played
slope and of the AI-witness effect, the empirical SD of those estimates over the replicates, the half-width
of the AI-witness effect's 95 % interval and the mean fit time, with the machine's load. The report's cap
(models.regressions, max_games_mixed) is chosen from this table: see docs/analysis.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turinglab.analysis.demo.synth import SynthSpec, simulate  # noqa: E402
from turinglab.analysis.live.models import design, glmm  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2500, 5000, 10000, 20000])
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    print(f"{'games':>7} {'SE slope':>9} {'SD slope':>9} {'SE AI':>7} {'SD AI':>7} {'95% half-width AI':>18} "
          f"{'fit s':>6}  load")
    for n in a.sizes:
        se_s, se_a, est_s, est_a, secs = [], [], [], [], []
        for r in range(a.reps):
            games, parts = simulate(SynthSpec(n_games=n, seed=1000 + r, interrogator_sd=0.5))
            d, formula, _ = design(games, parts)
            t0 = time.perf_counter()
            g = glmm(d, formula).set_index("term")
            secs.append(time.perf_counter() - t0)
            se_s.append(g.loc["game_index", "se"])
            est_s.append(g.loc["game_index", "estimate"])
            se_a.append(g.loc["ai_witness", "se"])
            est_a.append(g.loc["ai_witness", "estimate"])
        sd = (lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else float("nan"))
        print(f"{n:>7} {np.mean(se_s):>9.4f} {sd(est_s):>9.4f} {np.mean(se_a):>7.4f} {sd(est_a):>7.4f} "
              f"{1.96 * np.mean(se_a):>18.3f} {np.mean(secs):>6.1f}  {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
