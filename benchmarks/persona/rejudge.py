"""The guard's verdicts on a saved probe run, again, offline: the classifier alone and the seat's
whole check (the classifier, then a reply in a language the game's persona does not speak).

    python benchmarks/persona/rejudge.py --labels benchmarks/persona/heldout/labels.tsv RUN.json [...]

For every reply text the guard read (as generated and each regeneration) that has a hand label:
breaks caught and ok replies refused, with exact 95 % intervals; and of the shown replies that
break persona by hand, how many the whole check would have refused. The game's persona is the one
the run saved (`personas`, one per game, in game order), else the default (English only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from rates import LABELS, exact, judged, label, load_labels  # noqa: E402

from turinglab.witnesses.guard import classify, lang  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--labels", type=Path, default=LABELS)
    args = ap.parse_args()
    labels = load_labels(args.labels)
    rows, shown = [], []
    for f in args.runs:
        run = json.loads(Path(f).read_text(encoding="utf-8"))
        personas = run.get("personas") or []
        first_game = min((r["game"] for r in run["replies"]), default=0)
        for r in run["replies"]:
            k = r["game"] - first_game
            langs = personas[k]["languages"] if k < len(personas) else ["English"]
            whole = lambda t: classify(t, r["question"])[0] or bool(lang.unspoken(t, langs))  # noqa: E731
            for t, _ in judged(r):
                h = label(labels, t, r["question"])
                if h is not None:
                    rows.append((h, classify(t, r["question"])[0], whole(t)))
            if label(labels, r["shown"], r["question"]):
                shown.append(whole(r["shown"]))
    breaks, oks = [x for x in rows if x[0]], [x for x in rows if not x[0]]
    print(f"{len(rows)} labelled texts the guard read: {len(breaks)} breaks, {len(oks)} ok")
    for i, name in ((1, "classifier alone"), (2, "classifier + persona's languages")):
        print(f"  {name}: breaks caught {exact(sum(x[i] for x in breaks), len(breaks))}; "
              f"ok refused {exact(sum(x[i] for x in oks), len(oks))}")
    print(f"  shown breaks the whole check would have refused: {sum(shown)} of {len(shown)}")


if __name__ == "__main__":
    main()
