"""Benchmark the embedded local model as a witness: latency, tokens/s, delays absorbed.

    python benchmarks/bench_local_model.py [--games 2] [--threads 1] [--read-time 8] [--gguf PATH] [--parallel]

Plays scripted interrogator messages against the `local` witness (young persona) through the
same OpenAI-compatible path as a real game. Each game's prompt is pre-read at game start (as the
engine's `start` call does) while the "interrogator" types the first message for `--read-time`
seconds. Prints the reply latency p50/p95, generation tokens/s, how many replies the model gave
and how many its fallback gave (and why), and the share of replies whose latency exceeded their
designed human-like delay (SPEC §1), i.e. the replies that came later than the timing model
intended, of all replies and of the model's own. Replies stream with their deadline as in a
server game (deadline-aware generation: cut before they would be late); `--no-deadline` waits
for whole replies instead. Games run without the server's capacity limit: for that, see
bench_capacity.py.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import time
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

from turinglab.witnesses.base import GameContext, Turn
from turinglab.witnesses.llm import LLMWitness
from turinglab.witnesses.local.server import LocalServer
from turinglab.witnesses.registry import resolve
from turinglab.witnesses.timing import delay_for

MESSAGES = [
    "hi",
    "where are you from?",
    "what did you do this weekend",
    "are you a bot?",
    "whats 17 times 23",
    "what's the weather like there right now",
    "ok last one: favourite food?",
]


async def play(server: LocalServer, game: int, read_time: float, rng: np.random.Generator, deadline: bool = True,
               **overrides) -> list[dict]:
    spec = resolve("local").model_copy(update={k: v for k, v in overrides.items() if v is not None})
    w = LLMWitness(spec, seed=game, local_server=server)
    t0 = datetime.now(timezone.utc)
    ctx = GameContext(game_id=f"bench{game}", started_at=t0, now=t0, time_limit_s=300, max_chars=300)
    await w.start(ctx)
    await asyncio.sleep(read_time)  # the interrogator types the first message
    history: list[Turn] = []
    rows = []
    for i, msg in enumerate(MESSAGES):
        history.append(Turn("interrogator", msg, i))
        now = t0 + timedelta(seconds=read_time + i * 20)
        delay = delay_for(spec.timing, rng, prev_chars=len(msg))  # drawn before the reply, as the server does
        asked = time.monotonic()
        due = (lambda n: asked + delay(n) - time.monotonic()) if deadline else None
        r = await w.reply(history, GameContext(ctx.game_id, t0, now, 300, 300, reply_due=due))
        designed = delay(len(r.text))
        tm = r.meta.get("timings") or {}
        rows.append({"latency": r.latency_s, "designed": designed, "tokens": r.tokens or 0,
                     "gen_tps": tm.get("predicted_per_second"), "prompt_n": tm.get("prompt_n"),
                     "fallback": r.fallback, "error": r.error, "text": r.text, "msg": msg,
                     "deadline": r.meta.get("deadline")})
        history.append(Turn("witness", r.text, i))
    await w.close()
    return rows


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--read-time", type=float, default=8.0, help="seconds before the first message")
    ap.add_argument("--quiet", action="store_true", help="do not print the conversation")
    ap.add_argument("--gguf", type=Path, default=None, help="another chat GGUF to compare (default: the shipped one)")
    ap.add_argument("--prompt", default=None, help="prompt name or .j2 path (default: the local witness's)")
    ap.add_argument("--temperature", type=float, default=None)
    ap.add_argument("--parallel", action="store_true", help="play the games simultaneously")
    ap.add_argument("--no-deadline", action="store_true", help="wait for whole replies (no deadline-aware generation)")
    args = ap.parse_args()
    load0 = os.getloadavg()[0]
    server = LocalServer(args.gguf, threads=args.threads)
    t = time.monotonic()
    await server.astart()
    print(f"model loaded in {time.monotonic() - t:.1f} s (threads={args.threads}, slots={server.slots})")
    rng = np.random.default_rng(0)
    rows: list[dict] = []
    kw = {"prompt": args.prompt, "temperature": args.temperature, "deadline": not args.no_deadline}
    if args.parallel:  # all games at once, sharing the one server
        for part in await asyncio.gather(*(play(server, g, args.read_time, rng, **kw) for g in range(args.games))):
            rows += part
    else:
        for g in range(args.games):
            rows += await play(server, g, args.read_time, rng, **kw)
    server.stop()
    if not args.quiet:
        for r in rows:
            print(f"  {r['latency']:5.2f}s / designed {r['designed']:5.2f}s  {r['msg']!r} -> {r['text']!r}")
    lat = np.array([r["latency"] for r in rows])
    tps = [r["gen_tps"] for r in rows if r["gen_tps"]]
    late = sum(r["latency"] > r["designed"] for r in rows)
    model = [r for r in rows if not r["fallback"]]
    print(f"machine load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print(f"replies: {len(rows)}  by the model: {len(model)}  by the fallback: {len(rows) - len(model)}")
    if len(model) < len(rows):
        why = Counter((r["error"] or "no reason given").split(":")[0] for r in rows if r["fallback"])
        print("  fallback because:", dict(why))
    if not model:
        print("NOTE: every reply was the fallback's: the model answered none in time (the machine is busy?). "
              "The figures below time the fallback, not the model: run again on a quieter machine.")
    print(f"reply latency (model or fallback) p50 {np.percentile(lat, 50):.2f} s  p95 {np.percentile(lat, 95):.2f} s  max {lat.max():.2f} s")
    if tps:
        print(f"generation: {statistics.median(tps):.1f} tokens/s (median over replies, llama.cpp timings)")
    print(f"tokens per reply: median {statistics.median(r['tokens'] for r in rows):.0f}")
    late_model = sum(r["latency"] > r["designed"] for r in model)
    print(f"latency > designed delay: {late}/{len(rows)} = {late / len(rows):.1%} of all replies; "
          f"{late_model}/{len(model)} of the model's own")
    print("deadline:", dict(Counter(r["deadline"] for r in rows)))


if __name__ == "__main__":
    random.seed(0)
    asyncio.run(main())
