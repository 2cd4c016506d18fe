"""Measure the content filter on the labelled lines of benchmarks/filter/ (issue 36):

    python benchmarks/bench_filter.py            # the development set and the held-out slice
    python benchmarks/bench_filter.py --misses   # and every line decided wrongly

Recall: abusive lines refused (`blocked`) and personal lines masked (or refused); false
refusals: ordinary lines refused; false masks: ordinary lines masked (sent, but with a span
hidden). Each rate with its exact Clopper-Pearson 95 % interval (scipy), overall and per family.
The held-out slice (heldout.tsv) was written before the rules and never tuned on: reported apart.
"""

from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).with_name("filter")
sys.path.insert(0, str(HERE.parents[1]))


def load(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_MINIMAL))


def outcome(text: str) -> str:
    from turinglab.witnesses.content_filter import verdict

    v = verdict(text)
    return "blocked" if v["verdict"] != "ok" else "masked" if v["masked"] is not None else "ok"


def rate(k: int, n: int) -> str:
    from scipy.stats import binomtest

    if n == 0:
        return "n=0"
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{k}/{n} = {100 * k / n:5.1f} % [{100 * ci.low:5.1f}, {100 * ci.high:5.1f}]"


def report(name: str, rows: list[dict[str, str]], misses: bool) -> dict[str, tuple[int, int]]:
    got = [(r, outcome(r["text"])) for r in rows]
    hit = lambda r, o: o == "blocked" if r["label"] == "abusive" else o != "ok"  # noqa: E731
    pos = [(r, o) for r, o in got if r["label"] != "ordinary"]
    neg = [(r, o) for r, o in got if r["label"] == "ordinary"]
    totals = {"recall": (sum(hit(r, o) for r, o in pos), len(pos)),
              "false_refusals": (sum(o == "blocked" for _, o in neg), len(neg)),
              "false_masks": (sum(o == "masked" for _, o in neg), len(neg))}
    print(f"== {name}: {len(rows)} lines")
    print(f"recall (abusive refused, personal masked): {rate(*totals['recall'])}")
    for label in ("abusive", "personal"):
        sub = [(r, o) for r, o in pos if r["label"] == label]
        print(f"  {label:<9}{rate(sum(hit(r, o) for r, o in sub), len(sub))}")
    print(f"false refusals on ordinary lines:          {rate(*totals['false_refusals'])}")
    print(f"false masks on ordinary lines:             {rate(*totals['false_masks'])}")
    fam: dict[tuple[str, str], list[tuple[dict, str]]] = defaultdict(list)
    for r, o in got:
        fam[(r["label"], r["family"])].append((r, o))
    print("per family (abusive/personal: recall; ordinary: refused, masked):")
    for (label, family), sub in sorted(fam.items()):
        if label == "ordinary":
            print(f"  {label:<9}{family:<13}refused {rate(sum(o == 'blocked' for _, o in sub), len(sub))}"
                  f"   masked {sum(o == 'masked' for _, o in sub)}")
        else:
            print(f"  {label:<9}{family:<13}{rate(sum(hit(r, o) for r, o in sub), len(sub))}")
    if misses:
        for r, o in got:
            wrong = (o != "ok") if r["label"] == "ordinary" else not hit(r, o)
            if wrong:
                print(f"  MISS {r['label']}/{r['family']}: {o}: {r['text']}")
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--misses", action="store_true", help="print every line decided wrongly")
    args = ap.parse_args()
    report("development set (labelled.tsv)", load(HERE / "labelled.tsv"), args.misses)
    report("held-out slice (heldout.tsv, never tuned on)", load(HERE / "heldout.tsv"), args.misses)


if __name__ == "__main__":
    main()
