"""Benchmark `static generate` and `static conversations` with the embedded local model (issue 26).

    python benchmarks/bench_generate.py [--cues 10] [--conversations 1] [--exchanges 3] [--pair local:local]

Word association: the first `--cues` cues of the shipped word data (Zhang et al.), asked with a
fresh cache (every answer a model call), stored in a temporary SQLite study; prints responses per
second (the model's start is timed apart). Conversations: `--conversations` AI-AI conversations of
`--exchanges` exchanges for `--pair`, failures re-sampled (counted); prints conversations per
minute, attempts included. One local-model process, 1 thread (TURINGLAB_LOCAL_THREADS).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cues", type=int, default=10)
    ap.add_argument("--conversations", type=int, default=1)
    ap.add_argument("--exchanges", type=int, default=3)
    ap.add_argument("--pair", default="local:local")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-generate-"))
    os.environ["TURINGLAB_CACHE_DIR"] = str(tmp / "cache")  # nothing from earlier runs

    from turinglab.statictests import conversations as cv
    from turinglab.statictests.failures import Rules
    from turinglab.statictests.generate import ModelConfig, generate_words
    from turinglab.statictests.importing import parse_import
    from turinglab.game.static_config import preset_study
    from turinglab.store.api import Store
    from turinglab.witnesses.local.server import shared_server

    t0 = time.monotonic()
    shared_server().start()
    print(f"local model started in {time.monotonic() - t0:.1f} s ({shared_server().threads} thread(s))")

    word = ROOT / "turinglab" / "statictests" / "zhang2023" / "word.json"
    parsed = parse_import("word", str(word), None, None)
    with Store(f"sqlite:///{tmp / 'bench.db'}") as st:
        sid = st.import_static(preset_study("bench-word", "word"), parsed.stimuli, parsed.responses)
        rep = generate_words(st, sid, ModelConfig(), limit=args.cues)
    bad = sum(rep.unusable.values())
    print(f"word association: {rep.stored} responses for {rep.asked} cues in {rep.seconds:.1f} s = "
          f"{rep.stored / rep.seconds:.3f} responses/s ({rep.calls} model calls, {bad} unusable answers "
          f"{dict(rep.unusable)}, {len(rep.failed)} cues without a usable answer)")

    a, b = args.pair.split(":")
    out = cv.generate([(a, b)], args.conversations, args.exchanges, Rules(min_exchanges=args.exchanges))
    per_min = 60 * len(out.made) / out.seconds if out.seconds else 0.0
    reasons = [e["reason"].split(":")[0] for e in out.log]
    print(f"conversations ({args.pair}, {args.exchanges} exchanges): {len(out.made)} made in {out.attempts} attempts, "
          f"{out.seconds:.1f} s = {per_min:.2f} conversations/min; re-sampled: {reasons or 'none'}; "
          f"failed every attempt: {len(out.failed)}")


if __name__ == "__main__":
    main()
