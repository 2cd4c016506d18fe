"""Capacity-aware allocation with the real local model: N lone participants arrive together.

    python benchmarks/bench_capacity.py [--participants 8] [--messages 3] [--think 3] [--capacity auto|N|unlimited]
        [--max-tokens N] [--trace FILE] [--persona-draw] [--stagger S] [--first-after S] [--busy N]
        (TURINGLAB_LOCAL_SLOTS / TURINGLAB_LOCAL_THREADS set the model server)
    python benchmarks/bench_capacity.py --loads 1 4 8 [--overflow] [--messages 3] [--think 3]
        [--workers 2 --db postgresql+psycopg://USER@HOST/DB --redis redis://HOST:6379/0]

Serves a study whose only witness is the embedded local model (all games AI games), on a real
server (SQLite, websockets). Every participant joins at once, plays `--messages` questions with
`--think` seconds between a reply and the next question, then gives a verdict. Prints JSON:
games served, the most games at once, participants deferred (kept in the masked wait because the
model was full), their waits, AI replies delivered and how many came later than designed, and
the capacity estimate. `--capacity unlimited` shows what happens without the limit.

The first replies (issue 40): `--persona-draw` draws a persona per game as the Jones & Bergen
presets do, `--stagger S` lets participant i join i*S seconds after the first, `--first-after S`
waits S seconds in the game before the first question (the interrogator typing it), and `--busy N`
starts N busy processes for the run (extra load on a shared machine). `fallback_by_reply` gives,
for the k-th reply of the games, how many of them ELIZA (the fallback) wrote; `load` is the 1-minute
load average at the start and the end.

The fallback share at several loads (issue 35): `--loads 1 4 8` runs one fresh server (and
database) per load, that many participants joining at once, and prints one row per load: the
games the local model played, its shown replies and the share the fallback wrote, read from the
stored events (`events.source_of`, as the exports do), the games given to the overflow witness
(`--overflow`: an ELIZA witness that plays only when the model is withheld or full) and
`os.getloadavg()` at the start and the end of the row. The model is loaded once for all rows.
`--workers 2`: two cluster workers (in this process, sharing its model server) on PostgreSQL and
Redis, the participants joining them in turn, as `serve --workers 2` shares one study.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from turinglab.game.config import Allocation, Study, WitnessSpec
from turinglab.game.events import MESSAGE, source_of
from turinglab.server.app import create_app
from turinglab.server.testing import WsPlayer, serve_in_thread
from turinglab.witnesses.local.server import shared_server
from turinglab.witnesses.registry import resolve

QUESTIONS = ["hi, how's it going?", "where are you from?", "what did you do this weekend?", "are you a bot?",
             "what's your favourite food?"]


async def participant(base: str, i: int, messages: int, think: float, app, stagger: float = 0.0,  # noqa: ANN001
                      first_after: float = 0.0) -> dict:
    await asyncio.sleep(i * stagger)
    p = await (await WsPlayer.create(base)).connect()
    await p.phase("idle")
    t0 = time.monotonic()
    await p.send({"type": "join"})
    await p.phase("game", timeout=3600)
    waited = time.monotonic() - t0
    await asyncio.sleep(first_after)
    unanswered = 0
    for k in range(messages):
        cid = f"p{i}m{k}"
        await p.send({"type": "message", "conv": "A", "text": QUESTIONS[k % len(QUESTIONS)], "client_id": cid})
        await p.next("ack", client_id=cid, timeout=60)
        try:
            await p.next("message", timeout=300)
        except TimeoutError:  # no reply before the game's time ran out
            unanswered += 1
            break
        await asyncio.sleep(think)
    await p.send({"type": "verdict", "choice": "ai", "confidence": 60, "reason": "bench"})
    await p.phase("reveal", timeout=60)
    await p.close()
    print(f"participant {i}: waited {waited:.1f} s, game over", file=sys.stderr, flush=True)
    return {"waited_s": waited, "unanswered": unanswered}


def fell_back(t: dict) -> bool:
    """The fallback (ELIZA) wrote this reply: the witness gave up on its model (`witness_fallback`:
    no words in time, an error) or the seat replaced a refused reply (`eliza`)."""
    return bool(t.get("eliza") or "witness_fallback" in t)


def _p50(xs: list) -> float | None:
    return round(statistics.median(xs), 2) if xs else None


class Timings(logging.Handler):
    """Collects the server's per-reply timing records (log `extra` reply_timing)."""

    def __init__(self, path: Path | None = None) -> None:
        super().__init__(logging.INFO)
        self.rows: list[dict] = []
        self.path = path  # each record is appended as it comes (a run cut short keeps its data)
        if path is not None:
            path.write_text("")

    def emit(self, record: logging.LogRecord) -> None:
        if isinstance(getattr(record, "reply_timing", None), dict):
            record.reply_timing["game"] = record.args[0] if record.args else None
            self.rows.append(record.reply_timing)
            if self.path is not None:
                with self.path.open("a") as f:
                    f.write(json.dumps(record.reply_timing) + "\n")


def sources(store, study_id: int) -> dict:  # noqa: ANN001
    """Per witness of the stored games: games, shown witness replies, and those by source."""
    out: dict[str, dict] = {}
    for g in store.games(study_id):
        for seat, ident in g.seats.items():
            if ident.kind != "ai":
                continue
            row = out.setdefault(ident.witness, {"games": 0, "replies": 0, "by_source": Counter()})
            row["games"] += 1
            for e in store.events(g.id):
                if e.type == MESSAGE and e.actor == seat:
                    row["replies"] += 1
                    row["by_source"][source_of(e.payload, "ai")] += 1
    return out


def forget_keys(url: str, prefix: str) -> None:
    """The run's Redis keys go with it."""
    import redis

    r = redis.Redis.from_url(url)
    for k in r.scan_iter(f"{prefix}:*", count=1000):
        r.delete(k)
    r.close()


async def at_load(args: argparse.Namespace, n: int) -> dict:
    """One row of `--loads`: n participants join at once a fresh server of the local model."""
    spec = resolve("local").model_copy(update={"codename": "Local"})
    witnesses = [spec] + ([WitnessSpec(codename="Spare", kind="eliza")] if args.overflow else [])
    study = Study(name=f"bench-load-{n}", witnesses=witnesses, allocation=Allocation(
        human_ratio=0.0, capacity={"Local": "auto"}, overflow_witness="Spare" if args.overflow else None))
    if args.workers > 1:
        pre = f"bench:{os.getpid()}:{time.time_ns()}"
        study = study.model_copy(update={"name": f"{study.name}-{time.time_ns()}"})
        apps = [create_app(study, args.db, rng_seed=i, initial_ai_wait_s=1.0, warm_up=True, redis_url=args.redis,
                           redis_prefix=pre) for i in range(args.workers)]
    else:
        db = Path(tempfile.mkdtemp()) / "bench.db"
        apps = [create_app(study, f"sqlite:///{db}", rng_seed=1, initial_ai_wait_s=1.0, warm_up=True)]
    with contextlib.ExitStack() as stack:
        if args.workers > 1:
            stack.callback(forget_keys, args.redis, pre)
        bases = [stack.enter_context(serve_in_thread(app)) for app in apps]
        hubs = [app.state.hub for app in apps]
        for hub in hubs:
            while hub._warm_task is not None and not hub._warm_task.done():
                await asyncio.sleep(0.5)
        load0, t0 = os.getloadavg(), time.monotonic()
        await asyncio.gather(*(participant(bases[i % len(bases)], i, args.messages, args.think, None)
                               for i in range(n)))
        load1 = os.getloadavg()
        await asyncio.sleep(1.0)  # the last events reach the store
        hub = hubs[0]
        by = sources(hub.store, hub.study_id)
        caps = [h.room.capacity for h in hubs if h.room.capacity is not None]  # none: capacity off (before)
        est = caps[0].estimates.get("Local") if caps else None
        local = by.get("Local", {"games": 0, "replies": 0, "by_source": Counter()})
        fell = local["by_source"]["fallback"]
        return {"games_at_once": n, "workers": args.workers, "local_games": local["games"],
                "local_replies": local["replies"], "fallback_replies": fell,
                "fallback_share": round(fell / local["replies"], 3) if local["replies"] else None,
                "by_source": dict(local["by_source"]), "overflow_games": by.get("Spare", {}).get("games", 0),
                "capacity": "on" if caps else "off", "deferred": sum(c.deferred for c in caps),
                "limit_at_end": est.limit if est else None, "estimate_why": est.why if est else None,
                "loadavg_start": [round(x, 2) for x in load0], "loadavg_end": [round(x, 2) for x in load1],
                "wall_s": round(time.monotonic() - t0, 1)}


async def loads(args: argparse.Namespace) -> list[dict]:
    rows = []
    for n in args.loads:
        rows.append(await at_load(args, n))
        print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    return rows


async def main(args: argparse.Namespace) -> dict:
    timings = Timings(args.trace)
    server_log = logging.getLogger("turinglab")  # the AI seat (turinglab.witnesses.ai_seat) logs the records
    server_log.addHandler(timings)
    server_log.setLevel(logging.INFO)
    update = {"codename": "Local"} | ({"max_tokens": args.max_tokens} if args.max_tokens else {})
    spec = resolve("local").model_copy(update=update)
    # "unlimited" as a huge number, so late replies are still counted
    cap = {"auto": "auto", "unlimited": 10**6}.get(args.capacity) or int(args.capacity)
    study = Study(name=f"bench-capacity-{args.capacity}", witnesses=[spec], persona_draw=args.persona_draw,
                  allocation=Allocation(human_ratio=0.0, capacity={"Local": cap}))
    db = Path(tempfile.mkdtemp()) / "bench.db"
    # warm_up as `turinglab serve` does: the model loads, every slot reads the prompt, one reply is timed
    app = create_app(study, f"sqlite:///{db}", rng_seed=1, initial_ai_wait_s=1.0, warm_up=True)
    peak = 0
    with serve_in_thread(app) as base:
        hub = app.state.hub
        deadline = time.monotonic() + 900  # the model's start and (auto) its timed calibration reply
        while hub._warm_task is not None and not hub._warm_task.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.5)
        warm_s = round(time.monotonic() - (deadline - 900), 1)
        t0 = time.monotonic()
        load0 = os.getloadavg()[0]
        tasks = [asyncio.create_task(participant(base, i, args.messages, args.think, app, args.stagger,
                                                 args.first_after))
                 for i in range(args.participants)]
        while not all(t.done() for t in tasks):
            peak = max(peak, len(hub.live))
            await asyncio.sleep(0.2)
        rows = [t.result() for t in tasks]
        c = hub.room.capacity
        est = c.estimates.get("Local")
        waits = [r["waited_s"] for r in rows]
        ready = sorted(t["ready_ms"] for t in timings.rows)
        by_game: dict[str, list[dict]] = {}
        for t in timings.rows:
            by_game.setdefault(str(t.get("game")), []).append(t)
        by_reply = [[g[k] for g in by_game.values() if len(g) > k] for k in range(args.messages)]
        return {
            "fallback_by_reply": [f"{sum(map(fell_back, ts))}/{len(ts)}" for ts in by_reply],
            "fallback_all": f"{sum(map(fell_back, timings.rows))}/{len(timings.rows)}",
            "load": [round(load0, 2), round(os.getloadavg()[0], 2)], "busy": args.busy,
            "persona_draw": args.persona_draw,
            "first_reply_model_s": [t.get("model_s") for t in (by_reply[0] if by_reply else [])],
            "first_reply_prompt_n": [t.get("prompt_n") for t in (by_reply[0] if by_reply else [])],
            "participants": args.participants, "capacity_rule": args.capacity, "games_served": hub.finished,
            "max_games_at_once": peak, "deferred": c.deferred, "reallocated": c.reallocated,
            "wait_s": {"p50": round(statistics.median(waits), 1), "max": round(max(waits), 1)},
            "questions_never_answered": sum(r["unanswered"] for r in rows),
            "ai_replies": est.replies if est else None, "late_replies": est.late if est else None,
            "late_share": round(est.late / est.replies, 3) if est and est.replies else None,
            "estimate": est.to_dict() if est else None, "warm_up_s": warm_s,
            "ready_ms": {"p50": ready[len(ready) // 2], "max": ready[-1]} if ready else None,
            "late_detail": [t for t in timings.rows if t["late_ms"] > 100],
            "deadline": dict(Counter(d for t in timings.rows for d in t.get("deadline", []))),
            "gen_tokens_p50": _p50([n for t in timings.rows for n in t.get("gen_n", []) if n is not None]),
            "first_token_s_p50": _p50([f for t in timings.rows for f in t.get("first_s", []) if f is not None]),
            "first_words_s_p50": _p50([f for t in timings.rows for f in t.get("usable_s", []) if f is not None]),
            "model_server": {"slots": shared_server().slots, "threads": shared_server().threads,
                             "max_tokens": spec.max_tokens}, "wall_s": round(time.monotonic() - t0, 1),
        }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--participants", type=int, default=8)
    ap.add_argument("--messages", type=int, default=3)
    ap.add_argument("--think", type=float, default=3.0)
    ap.add_argument("--capacity", default="auto", help="auto | a number | unlimited")
    ap.add_argument("--max-tokens", type=int, default=None, help="the witness's token budget (default: the shipped one)")
    ap.add_argument("--trace", type=Path, default=None, help="write every AI reply's timing record here (JSON lines)")
    ap.add_argument("--persona-draw", action="store_true", help="a persona drawn per game (Jones & Bergen presets)")
    ap.add_argument("--stagger", type=float, default=0.0, help="participant i joins i*S seconds after the first")
    ap.add_argument("--first-after", type=float, default=0.0, help="seconds in the game before the first question")
    ap.add_argument("--busy", type=int, default=0, help="busy processes to start for the run (extra load)")
    ap.add_argument("--loads", type=int, nargs="+", default=None,
                    help="one row per number of games at once: the local model's fallback share")
    ap.add_argument("--overflow", action="store_true", help="with --loads: an ELIZA overflow witness")
    ap.add_argument("--workers", type=int, default=1, help="with --loads: cluster workers (needs --db and --redis)")
    ap.add_argument("--db", default="postgresql+psycopg://postgres@127.0.0.1:5432/test", help="with --workers")
    ap.add_argument("--redis", default="redis://127.0.0.1:6379/0", help="with --workers")
    a = ap.parse_args()
    busy = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(a.busy)]
    try:
        print(json.dumps(asyncio.run(loads(a) if a.loads else main(a)), indent=1))
    finally:
        for b in busy:
            b.kill()
