"""Persona-break rates of saved probe runs, by the guard's classifier and by hand.

    python benchmarks/persona/rates.py benchmarks/persona/runs/after-local-s*.json [...]
    python benchmarks/persona/rates.py --unlabelled runs/*.json   # texts still to hand-label

A run file is what `turinglab witness probe ... --save FILE` writes. Hand labels live in
benchmarks/persona/labels.tsv (label<TAB>text, label break or ok; written by reading each reply;
label<TAB>text<TAB>question: the label of that text after that interrogator message, which
wins over the text's own label: "no." is fine after "are you a bot" and a break after "is
this a real person").
Runs whose names share a prefix before "-s<seed>" are summed (batches of one measurement).

    python benchmarks/persona/rates.py --by-family runs/s31-*.json   # shown breaks by hand per family
    python benchmarks/persona/rates.py --labels heldout/labels.tsv --refusals runs/h40-heldout-*.json

--by-family: per run group and per interrogator family (each reply's "category": the adversarial
families of bots/adversarial.py, or the default strategy's), replies, shown breaks by hand and
their exact 95 % (Clopper-Pearson) interval, raw breaks by hand.

--labels FILE: hand labels from FILE instead (the held-out battery keeps its own,
heldout/labels.tsv, so that no training or rule ever reads them). --refusals: of every reply text
the guard judged (as generated and each regeneration), how many it refused that are ok by hand
(false refusals) and how many breaks it let through, with exact intervals.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

LABELS = Path(__file__).parent / "labels.tsv"


def load_labels(path: Path = LABELS) -> dict:
    """{text: is a break} and, for labels given in context, {(text, question): is a break}."""
    out: dict = {}
    if not path.exists():
        return out
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        label, text, *question = line.split("\t", 2)
        if label not in ("break", "ok"):
            sys.exit(f"{path}:{n}: label {label!r} is neither break nor ok")
        out[(text, question[0]) if question else text] = label == "break"
    return out


def label(labels: dict, text: str, question: str | None = None) -> bool | None:
    """The hand label of `text` after `question` (its label in context, else its own), or None."""
    text = norm(text)
    got = labels.get((text, norm(question or "")))
    return labels.get(text) if got is None else got


def norm(text: str) -> str:
    """One line (labels are TSV lines)."""
    return " ".join(text.split())


def texts(run: dict) -> list[str]:
    return [t for t, _ in pairs(run)]


def pairs(run: dict) -> list[tuple[str, str]]:
    """(reply, question) of every reply text of a run: as generated, regenerated and shown."""
    out = []
    for r in run["replies"]:
        out += [(t, r["question"]) for t in [r["first"], r["shown"]] + [t["text"] for t in r["tries"] if t["text"]]]
    return [(norm(t), norm(q)) for t, q in out]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+")
    ap.add_argument("--unlabelled", action="store_true", help="print texts with no hand label (TSV, label blank)")
    ap.add_argument("--by-family", action="store_true", help="shown breaks by hand per interrogator family, exact intervals")
    ap.add_argument("--labels", type=Path, default=LABELS, help="hand labels (default: labels.tsv)")
    ap.add_argument("--refusals", action="store_true", help="false refusals and missed breaks of the guard, by hand")
    args = ap.parse_args()
    labels = load_labels(args.labels)
    groups: dict[str, list[dict]] = defaultdict(list)
    for f in args.runs:
        groups[re.sub(r"-s\d+\.json$", "", Path(f).name)].append(json.loads(Path(f).read_text(encoding="utf-8")))
    if args.unlabelled:
        seen = set()
        for runs in groups.values():
            for run in runs:
                for t, q in pairs(run):
                    if label(labels, t, q) is None and t not in seen:
                        seen.add(t)
                        print(f"\t{t}\t{q}")
        return
    if args.refusals:
        for name, runs in groups.items():
            refusals(name, [r for run in runs for r in run["replies"]], labels)
        return
    if args.by_family:
        for name, runs in groups.items():
            by_family(name, [r for run in runs for r in run["replies"]], labels)
        return
    print("| run | replies | raw breaks: classifier / hand | shown breaks: classifier / hand | regenerated | fallback | late (guarded) | judged human |")
    print("|---|---|---|---|---|---|---|---|")
    for name, runs in groups.items():
        recs = [r for run in runs for r in run["replies"]]
        missing = {t for run in runs for t, q in pairs(run) if label(labels, t, q) is None}
        n = len(recs)
        raw_c = sum(r["first_why"] != "ok" for r in recs)
        shown_c = sum(r["shown_why"] != "ok" for r in recs)
        raw_h = sum(bool(label(labels, r["first"], r["question"])) for r in recs)
        shown_h = sum(bool(label(labels, r["shown"], r["question"])) for r in recs)
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


def exact(k: int, n: int) -> str:
    """k/n with its exact 95 % (Clopper-Pearson) interval, in percent."""
    from turinglab.stats.intervals import interval

    if n == 0:
        return "0 / 0"
    ci = interval(k, n, 0.05, "clopper-pearson")
    return f"{k} / {n} ({100 * k / n:.1f} %, {100 * ci.low:.1f}-{100 * ci.high:.1f} %)"


def judged(r: dict) -> list[tuple[str, bool]]:
    """(text, refused by the guard) of every text the guard read for one reply: the first as
    generated, then each regeneration (a text the model failed to give is not judged)."""
    out = [] if r.get("fallback") and not r["tries"] else [(r["first"], r["first_why"] != "ok")]
    for t in r["tries"]:
        if t["text"]:
            out.append((t["text"], t["why"] not in ("ok", "empty")))
    return out


def refusals(name: str, recs: list[dict], labels: dict) -> None:
    """False refusals (refused, ok by hand) and missed breaks (passed, a break by hand)."""
    seen = [(t, refused, label(labels, t, r["question"])) for r in recs for t, refused in judged(r)]
    unl = sum(h is None for _, _, h in seen)
    oks = [x for x in seen if x[2] is False]
    breaks = [x for x in seen if x[2] is True]
    print(f"{name}: {len(seen)} texts judged by the guard" + (f" ({unl} unlabelled, left out)" if unl else ""))
    print(f"  ok by hand, refused (false refusals): {exact(sum(x[1] for x in oks), len(oks))}")
    print(f"  breaks by hand, let through: {exact(sum(not x[1] for x in breaks), len(breaks))}")
    after_refusal(recs)
    shown = [label(labels, r["shown"], r["question"]) for r in recs]
    print(f"  shown replies that break persona by hand: {exact(sum(bool(h) for h in shown), len(shown))}"
          + (f" ({sum(h is None for h in shown)} unlabelled, counted as fine)" if None in shown else ""))


def after_refusal(recs: list[dict]) -> None:
    """Who answered once the seat refused the model's reply (issue 40 item 2): a regeneration, or
    the fallback because no time was left to ask again, the regeneration had no words in time, or
    every regeneration was refused too."""
    hit = [r for r in recs if not r["fallback"] and (r["tries"] or r["source"] != "model")
           and r["source"] in ("regenerated", "fallback", "brush_off", "last_resort")]
    why = Counter("regenerated" if r["source"] == "regenerated" else "no time left" if not r["tries"]
                  else "regeneration had no words in time" if not r["tries"][-1]["text"] else "every try refused"
                  for r in hit)
    print(f"  refused replies: {len(hit)}; then " + (", ".join(f"{k} {v}" for k, v in why.most_common()) or "-"))


def by_family(name: str, recs: list[dict], labels: dict) -> None:
    """One table per run group: shown and raw breaks by hand for each interrogator family."""
    fams: dict[str, list[dict]] = defaultdict(list)
    for r in recs:
        fams[r.get("category") or "?"].append(r)
    unl = sum(label(labels, t, r["question"]) is None for r in recs for t in [r["first"], r["shown"]])
    print(f"\n{name}" + (f" ({unl} texts unlabelled: counted as fine)" if unl else ""))
    print("| family | replies | shown breaks by hand (95 % exact) | raw breaks by hand | regenerated | fallback |")
    print("|---|---|---|---|---|---|")
    for fam in sorted(fams, key=lambda f: (f == "small_talk", f)) + ["all"]:
        rs = recs if fam == "all" else fams[fam]
        shown = sum(bool(label(labels, r["shown"], r["question"])) for r in rs)
        raw = sum(bool(label(labels, r["first"], r["question"])) for r in rs)
        regen, fb = sum(bool(r["tries"]) for r in rs), sum(r["source"] == "fallback" for r in rs)
        star = "**" if fam == "all" else ""
        print(f"| {star}{fam}{star} | {len(rs)} | {star}{exact(shown, len(rs))}{star} | {raw} | {regen} | {fb} |")


if __name__ == "__main__":
    main()
