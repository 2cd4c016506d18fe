"""Fallback shares by reply position from bench_capacity.py --trace files (JSON lines).

    python benchmarks/persona/first_replies.py before-b1.jsonl after-b1.jsonl ...

For each file: how many games' k-th reply the fallback (ELIZA) wrote, for k = 1, 2, 3, ..., with
the exact 95 % (Clopper-Pearson) interval of the first reply's share.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scipy.stats import beta

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_capacity import fell_back  # noqa: E402


def exact(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else beta.ppf(0.025, k, n - k + 1)
    hi = 1.0 if k == n else beta.ppf(0.975, k + 1, n - k)
    return lo, hi


def main() -> None:
    for f in sys.argv[1:]:
        games: dict[str, list[dict]] = {}
        for line in Path(f).read_text().splitlines():
            t = json.loads(line)
            games.setdefault(str(t.get("game")), []).append(t)
        longest = max((len(g) for g in games.values()), default=0)
        by = [[fell_back(g[k]) for g in games.values() if len(g) > k] for k in range(longest)]
        k1, n1 = sum(by[0]) if by else 0, len(by[0]) if by else 0
        lo, hi = exact(k1, n1) if n1 else (0.0, 1.0)
        print(f"{f}: {len(games)} games; fallback by reply " + ", ".join(f"{sum(b)}/{len(b)}" for b in by)
              + f"; first reply {k1}/{n1} [{lo:.2f}, {hi:.2f}]")


if __name__ == "__main__":
    main()
