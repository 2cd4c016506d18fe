"""Measure `turinglab export --redact`'s redactor (turinglab/witnesses/redact.py) on the corpus
of benchmarks/redact/ (issue 38.3):

    python benchmarks/bench_redact.py            # recall and false-redaction rate
    python benchmarks/bench_redact.py --misses   # and every line decided wrongly

Recall: planted items that are gone from the redacted line, overall and per kind (names and
towns also split into those on the shipped lists and those not). False-redaction rate: ordinary
lines changed at all. Each rate with its exact Clopper-Pearson 95 % interval
(turinglab.stats.intervals). Rebuild the corpus with benchmarks/redact/build_corpus.py.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).with_name("redact")
sys.path.insert(0, str(HERE.parents[1]))


def rate(k: int, n: int) -> str:
    from turinglab.stats.intervals import interval

    if n == 0:
        return "n=0"
    ci = interval(k, n, 0.05, method="clopper-pearson")
    return f"{k}/{n} = {k / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def main() -> None:
    from turinglab.witnesses.redact import redact

    sys.path.insert(0, str(HERE))
    from build_corpus import LISTED_NAMES, LISTED_TOWNS

    ap = argparse.ArgumentParser()
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args()
    with (HERE / "corpus.tsv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    hit: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    changed, clean, misses = 0, 0, []
    for r in rows:
        out = redact(r["text"])
        if r["label"] == "planted":
            ok = r["planted"] not in out
            groups = ["all", r["kind"]]
            if r["kind"] in ("name", "place"):
                listed = r["planted"] in (LISTED_NAMES if r["kind"] == "name" else LISTED_TOWNS)
                groups.append(f"{r['kind']} ({'on the shipped list' if listed else 'not on it'})")
            for g in groups:
                hit[g][0] += ok
                hit[g][1] += 1
            if not ok:
                misses.append(("missed", r["text"], out))
        else:
            clean += 1
            if out != r["text"]:
                changed += 1
                misses.append(("false redaction", r["text"], out))
    print(f"corpus: {sum(r['label'] == 'planted' for r in rows)} lines with a planted item, {clean} ordinary lines")
    for g in sorted(hit, key=lambda g: (g != "all", g)):
        print(f"recall {g}: {rate(*hit[g])}")
    print(f"false-redaction rate (ordinary lines changed): {rate(changed, clean)}")
    if args.misses:
        for what, text, out in misses:
            print(f"{what}: {text!r} -> {out!r}")


if __name__ == "__main__":
    main()
