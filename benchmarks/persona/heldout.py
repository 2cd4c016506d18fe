"""Write turinglab/witnesses/guard/heldout.tsv: hand-labelled probe replies the guard never trained on.

    python benchmarks/persona/heldout.py benchmarks/persona/runs/before-readme-sierra-s0.json ...
    python benchmarks/persona/heldout.py --out turinglab/witnesses/guard/heldout-adversarial.tsv runs/s31-adv-*.json

Every reply text of the given runs (as generated, regenerated and shown) with the interrogator's
message it answered and its hand label from labels.tsv (in context where one is given), minus
any text of the training set (guard/breaks.tsv). One line per (reply, question). Runs whose replies informed
the guard's rules or training lines (before-local, cand*) must not be given.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from rates import label, load_labels, pairs  # noqa: E402

from turinglab.witnesses.guard import DATA, load_examples  # noqa: E402

OUT = DATA.parent / "heldout.tsv"


def main() -> None:
    args, out = sys.argv[1:], OUT
    if args[:1] == ["--out"] and len(args) > 1:
        out, args = Path(args[1]), args[2:]
    if not args:  # with no runs it would write an empty held-out set over the real one
        sys.exit(f"usage: python {sys.argv[0]} [--out FILE] RUN.json [RUN.json ...] (see the docstring for which runs)")
    labels, train = load_labels(), set(load_examples()[0])
    seen: dict[tuple[str, str], bool] = {}
    for f in args:
        for t, q in pairs(json.loads(Path(f).read_text(encoding="utf-8"))):
            if t in train or (t, q) in seen:
                continue
            said = label(labels, t, q)
            if said is None:
                sys.exit(f"{f}: {t!r} has no hand label in benchmarks/persona/labels.tsv; label it first")
            seen[(t, q)] = said
    runs = ", ".join(sorted({Path(f).name.rsplit("-s", 1)[0] for f in args}))
    head = ("# Held-out evaluation of the persona guard: witness-probe replies labelled by hand (read one by one),\n"
            f"# none in breaks.tsv. label<TAB>reply<TAB>the interrogator's message it answered.\n"
            f"# Runs: {runs}. Written by benchmarks/persona/heldout.py.\n")
    out.write_text(head + "".join(f"{'break' if b else 'ok'}\t{t}\t{q}\n" for (t, q), b in seen.items()), encoding="utf-8")
    print(f"{out}: {len(seen)} replies, {sum(seen.values())} breaks")


if __name__ == "__main__":
    main()
