"""How wide the blinding audit's interval is, and how long it takes, by the number of games it audits.

    python benchmarks/sim_audit_cap.py --db URL [--study ID] [--caps 500 1000 2000 4000] [--seeds 2]

Audits a stored study (e.g. `turinglab demo-data --games 10000`) on seeded samples of whole interrogators
of each size, as `turinglab report` does above its cap (audit.audit_blinding, max_games), and prints per
size: the primary AUROC, the width of its 95 % interval (mean over the seeds), the permutation p and the
seconds, with the machine's load. The cap (audit.AUDIT_MAX_GAMES) is chosen from this table: docs in
turinglab/analysis/README.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from turinglab.analysis.audit.audit import audit_blinding  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--study", default=None)
    ap.add_argument("--caps", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    ap.add_argument("--seeds", type=int, default=2)
    a = ap.parse_args()
    print(f"{'cap':>6} {'games':>6} {'AUROC':>6} {'95% width':>10} {'perm p':>7} {'seconds':>8}  load")
    for cap in a.caps:
        widths, aucs, ps, secs, n = [], [], [], [], 0
        for seed in range(a.seeds):
            t0 = time.perf_counter()
            r = audit_blinding(a.db, a.study, max_games=cap, sample_seed=seed)
            secs.append(time.perf_counter() - t0)
            b = r.channel.primary
            widths.append(b.high - b.low)
            aucs.append(b.auroc)
            ps.append(r.channel.p_value)
            n = r.n_games
        print(f"{cap:>6} {n:>6} {np.mean(aucs):>6.3f} {np.mean(widths):>10.3f} {max(ps):>7.3f} {np.mean(secs):>8.1f}"
              f"  {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
