"""Persona-break rates of saved probe runs, by the guard's classifier and by hand.

    python benchmarks/persona/rates.py benchmarks/persona/runs/after-local-s*.json [...]
    python benchmarks/persona/rates.py --unlabelled runs/*.json   # texts still to hand-label

A run file is what `turinglab witness probe ... --save FILE` writes. Hand labels live in
benchmarks/persona/labels.tsv (label<TAB>text, label break or ok; written by reading each reply).
Runs whose names share a prefix before "-s<seed>" are summed (batches of one measurement).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

LABELS = Path(__file__).parent / "labels.tsv"


def load_labels(path: Path = LABELS) -> dict[str, bool]:
    out: dict[str, bool] = {}
    if not path.exists():
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        label, text = line.split("\t", 1)
        if label not in ("break", "ok"):
            sys.exit(f"{path}:{n}: label {label!r} is neither break nor ok")
        out[text] = label == "break"
    return out


def norm(text: str) -> str:
    """One line (labels are TSV lines)."""
    return " ".join(text.split())


def texts(run: dict) -> list[str]:
    out = []
    for r in run["replies"]:
        out += [r["first"], r["shown"]] + [t["text"] for t in r["tries"] if t["text"]]
    return [norm(t) for t in out]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--unlabelled", action="store_true", help="print texts with no hand label (TSV, label blank)")
    args = ap.parse_args()
    labels = load_labels()
    groups: dict[str, list[dict]] = defaultdict(list)
    for f in args.runs:
        groups[re.sub(r"-s\d+\.json$", "", Path(f).name)].append(json.loads(Path(f).read_text(encoding="utf-8")))
    if args.unlabelled:
        seen = set()
        for runs in groups.values():
            for run in runs:
                for t in texts(run):
                    if t not in labels and t not in seen:
                        seen.add(t)
                        print(f"\t{t}")
        return
    print("| run | replies | raw breaks: classifier / hand | shown breaks: classifier / hand | regenerated | fallback | late (guarded) | judged human |")
    print("|---|---|---|---|---|---|---|---|")
    for name, runs in groups.items():
        recs = [r for run in runs for r in run["replies"]]
        missing = {t for run in runs for t in texts(run)} - set(labels)
        n = len(recs)
        raw_c = sum(r["first_why"] != "ok" for r in recs)
        shown_c = sum(r["shown_why"] != "ok" for r in recs)
        raw_h = sum(labels.get(norm(r["first"]), False) for r in recs)
        shown_h = sum(labels.get(norm(r["shown"]), False) for r in recs)
        regen = sum(bool(r["tries"]) for r in recs)
        fb = sum(r["source"] == "fallback" for r in recs)
        late = sum(bool(r.get("late")) for r in recs)
        late_g = sum(bool(r.get("late")) and r["source"] != "model" for r in recs)
        verdicts = [v for run in runs for v in run["verdicts"]]
        jh = sum(v == "human" for v in verdicts)
        judged = sum(v != "unparsed" for v in verdicts)
        pct = lambda k: f"{k} ({100 * k / n:.1f} %)" if n else "-"  # noqa: E731
        flag = f" ({len(missing)} unlabelled)" if missing else ""
        late_s = f"{late} ({late_g})" if any("late" in r for r in recs) else "not measured"
        print(f"| {name}{flag} | {n} | {pct(raw_c)} / {pct(raw_h)} | {pct(shown_c)} / {pct(shown_h)} | {regen} | {fb} | "
              f"{late_s} | {jh}/{judged} |")


if __name__ == "__main__":
    main()
