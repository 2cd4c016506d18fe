"""Time `turinglab report` on 10 000, 100 000 and 1 000 000 stored games, every analysis on.

    python benchmarks/bench_report.py [--sizes 10000 100000 1000000] [--db-dir DIR] [--keep]

For each size, benchmarks/report_fill.py stores that many finished two-player demo games in a new SQLite
database (the demo's study, participants and engine-played chat, batched), then the report command runs
as a user runs it: `python -m turinglab.cli report --db URL --out report.html` in a child process with its
defaults (blinding audit on, at most 2 000 games' interrogators; GEE on every game up to 300 000; the
mixed model on its 5 000-game subsample, see benchmarks/sim_subsample.py). Printed per size: fill time,
report wall time, the report's peak resident memory (the child's ru_maxrss: the largest child so far,
so sizes run smallest first) and the machine's load average before and after. Targets (issue 42.6):
1 M games under 120 s and 4 GB.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.report_fill import fill  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--db-dir", default=None, help="where the databases go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the databases and reports")
    a = ap.parse_args()
    folder = Path(a.db_dir or tempfile.mkdtemp(prefix="bench-report-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    ok = True
    print(f"{'games':>9} {'fill s':>7} {'report s':>9} {'peak GB':>8}  load before/after (1 min)  targets 120 s, 4 GB")
    for n in sorted(a.sizes):
        db = folder / f"report-{n}.db"
        db.unlink(missing_ok=True)
        url = f"sqlite:///{db}"
        t0 = time.perf_counter()
        fill(url, n)
        t1 = time.perf_counter()
        load0 = os.getloadavg()[0]
        out = folder / f"report-{n}.html"
        r = subprocess.run([sys.executable, "-m", "turinglab.cli", "report", "--db", url, "--out", str(out)],
                           env=env, capture_output=True, text=True)
        t2 = time.perf_counter()
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
        if r.returncode:
            print(f"{n:>9} report failed: {r.stderr.strip()[-800:]}")
            return 1
        hit = (t2 - t1) < 120 and peak < 4
        said = " ".join(r.stdout.split())
        ok &= hit or n < 1_000_000
        print(f"{n:>9} {t1 - t0:>7.1f} {t2 - t1:>9.1f} {peak:>8.2f}  {load0:.2f}/{os.getloadavg()[0]:.2f}"
              f"{'' if n < 1_000_000 else ('  ok' if hit else '  OUT')}  ({said})",
              flush=True)
        if not a.keep:
            db.unlink(missing_ok=True)
            out.unlink(missing_ok=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
