"""The "self-judge" (issue 40 item 2): the local model asked whether its own reply gives it away.

    PYTHONPATH=. python benchmarks/persona/self_judge.py --dev 40            # rubric checked on labels.tsv
    PYTHONPATH=. python benchmarks/persona/self_judge.py --heldout RUN.json [...]  # once, on the held-out labels

One model server (1 thread, 1 slot), the fixed RUBRIC (written before any result was seen, not
tuned on the held-out labels) with the interrogator's message and the reply after it, max_tokens
1, temperature 0: "yes" = the reply breaks persona. For each labelled text: the judge's verdict
and the call's wall time. Prints the judge alone (breaks caught, ok refused, exact 95 %
intervals) and as a second opinion on the guard's soft refusals (its classifier below SURE, or
the persona's languages): a soft refusal stands only if the judge says yes. Latency: median and
90th percentile of a call, with the 1-minute load average.

--dev N: N break and N ok texts drawn (seed 0) from benchmarks/persona/labels.tsv's labels in
context. --heldout: every text of the given runs with a label in heldout/labels.tsv. --soft: only
the texts the guard refuses softly (where a second opinion could change the verdict).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from rates import LABELS, exact, judged, label, load_labels  # noqa: E402

from turinglab.witnesses.guard import SURE, classify, lang  # noqa: E402

HELDOUT = Path(__file__).parent / "heldout" / "labels.tsv"
RUBRIC = ("You check replies in an online chat game. A human player pretends to be an ordinary young person. "
          "Answer yes if the reply gives away that the writer is an AI, a chatbot, a program or an assistant: "
          "it says so, names a company or model that made it, talks about its instructions, prompt or training, "
          "offers help or service like an assistant, writes code, or says it has no body, feelings or place. "
          "Answer no if an ordinary person could have typed it (jokes, denials, rudeness, refusing a task, "
          "short or odd answers are fine). Answer with one word: yes or no.")


def items_dev(n: int) -> list[tuple[str, str, bool, list[str]]]:
    rows = [(k[0], k[1], v) for k, v in load_labels(LABELS).items() if isinstance(k, tuple)]
    rng = random.Random(0)
    breaks, oks = [r for r in rows if r[2]], [r for r in rows if not r[2]]
    return [(t, q, b, ["English"]) for t, q, b in rng.sample(breaks, n) + rng.sample(oks, n)]


def items_heldout(runs: list[str]) -> list[tuple[str, str, bool, list[str]]]:
    labels, out, seen = load_labels(HELDOUT), [], set()
    for f in runs:
        run = json.loads(Path(f).read_text(encoding="utf-8"))
        personas = run.get("personas") or []
        first = min((r["game"] for r in run["replies"]), default=0)
        for r in run["replies"]:
            k = r["game"] - first
            langs = personas[k]["languages"] if k < len(personas) else ["English"]
            for t, _ in judged(r):
                h = label(labels, t, r["question"])
                if h is not None and (t, r["question"]) not in seen:
                    seen.add((t, r["question"]))
                    out.append((t, r["question"], h, langs))
    return out


def soft(t: str, q: str, hand: bool, langs: list[str]) -> bool:
    """The guard refuses `t` only by its classifier's score below SURE or by the persona's languages."""
    broke, why = classify(t, q)
    if broke:
        return why.startswith("model p=") and float(why.split("=")[1]) < SURE
    return bool(lang.unspoken(t, langs))


async def judge_all(items: list) -> list[tuple[bool, float, float]]:
    from openai import AsyncOpenAI

    from turinglab.witnesses.local.server import LocalServer

    server = LocalServer(threads=1, slots=1)
    client = AsyncOpenAI(base_url=await server.astart(), api_key="local", timeout=600)
    out = []
    try:
        for t, q, _, _ in items:
            msgs = [{"role": "system", "content": RUBRIC},
                    {"role": "user", "content": f"Message: {q}\nReply: {t}\nDoes the reply give it away?"}]
            t0 = time.monotonic()
            r = await client.chat.completions.create(model="local", messages=msgs, max_tokens=1, temperature=0,
                                                     extra_body={"id_slot": 0})
            said = (r.choices[0].message.content or "").strip().lower()
            out.append((said.startswith("yes"), time.monotonic() - t0, os.getloadavg()[0]))
            print(f"{'yes' if out[-1][0] else 'no '} {out[-1][1]:5.1f} s  {t[:70]!r}", file=sys.stderr, flush=True)
    finally:
        server.stop()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dev", type=int, default=0)
    ap.add_argument("--heldout", nargs="*", default=[])
    ap.add_argument("--soft", action="store_true", help="judge only the texts the guard refuses softly")
    args = ap.parse_args()
    items = items_dev(args.dev) if args.dev else items_heldout(args.heldout)
    if args.soft:
        items = [x for x in items if soft(*x)]
    if not items:
        sys.exit("nothing to judge: give --dev N or --heldout RUN.json with labelled texts")
    verdicts = asyncio.run(judge_all(items))
    rows = []
    for (t, q, hand, langs), (yes, _, _) in zip(items, verdicts):
        guard, weak = classify(t, q)[0] or bool(lang.unspoken(t, langs)), soft(t, q, hand, langs)
        rows.append((hand, yes, guard, (guard and not weak) or (weak and yes)))
    breaks, oks = [r for r in rows if r[0]], [r for r in rows if not r[0]]
    print(f"{len(rows)} labelled texts: {len(breaks)} breaks, {len(oks)} ok")
    for i, name in ((1, "self-judge alone"), (2, "guard (classifier + languages)"),
                    (3, "guard, soft refusals kept only if the judge says yes")):
        print(f"  {name}: breaks caught {exact(sum(r[i] for r in breaks), len(breaks))}; "
              f"ok refused {exact(sum(r[i] for r in oks), len(oks))}")
    secs = sorted(v[1] for v in verdicts)
    print(f"  a judge call: median {statistics.median(secs):.1f} s, 90th percentile {secs[int(0.9 * (len(secs) - 1))]:.1f} s; "
          f"load {min(v[2] for v in verdicts):.1f}-{max(v[2] for v in verdicts):.1f}")


if __name__ == "__main__":
    main()
