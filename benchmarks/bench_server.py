"""Benchmark the live game server: N concurrent two-player human-human games over real websockets.

    python benchmarks/bench_server.py                # step N up: 10, 50, 100, 250, 500, 1000, 1500, 2000
    python benchmarks/bench_server.py --games 1000   # one level
    python benchmarks/bench_server.py --db postgresql+psycopg://postgres@127.0.0.1:5432/bench
    python benchmarks/bench_server.py --workers 1,2 --games 1000,2000 --think 5 --rounds 3 \
        --db postgresql+psycopg://postgres@127.0.0.1:5432/bench --redis redis://127.0.0.1:6379/0

    python benchmarks/bench_server.py --workers 1,2,sqlite --games 1000 --think 5 --rounds 3 \
        --db postgresql+psycopg://postgres@127.0.0.1:5432/bench --redis redis://127.0.0.1:6379/0

With --redis, --workers N (1 included) serves the study by N worker processes of one cluster sharing
the database and Redis (each on its own port, players spread over them round-robin, so the two
players of a game often sit on different workers); without --redis, 1 is the single-process server
on --db. `sqlite` in the list is one process on a temporary SQLite file (the embedded default, no
Redis). Lists run every combination and end with a table side by side. Every figure is printed with
the machine's load average (1 min) at the start and the end of its run: the server, the database,
Redis and the scripted players share this machine's cores, so a busy machine shows in the figures.

The server runs in its own process (uvicorn, loopback); scripted players run here. Messages are
ordinary chat lines (`chat_line`: no ids or hex; any the content filter refuses are counted as
`refused_by_filter`). Designed
delays are off (human timing None, no typing indicator), so the figures are the server's own
relay latency: from a player's send to the partner's receipt, through engine, store (every event
committed before it is relayed) and websocket. Prints p50/p99 latency, messages per second and
lost messages per level, then the largest N with zero lost messages.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("TURINGLAB_START_LIMIT", "off")  # every simulated person comes from 127.0.0.1


def serve(port: int, db: str, redis: str | None = None, prefix: str | None = None) -> None:
    import uvicorn

    from turinglab.game.config import Allocation, Rules, Study
    from turinglab.server.app import create_app

    study = Study(name="bench", rules=Rules(time_limit_s=600, typing_min_s=3600, typing_jitter_s=0),
                  allocation=Allocation(human_ratio=1.0))
    app = create_app(study, db, rng_seed=None if redis else 1, human_timing=None, redis_url=redis,
                     redis_prefix=prefix)
    if not os.environ.get("BENCH_DEFAULT_GC"):  # as `turinglab serve` does
        from turinglab.server.tuning import tune_gc

        tune_gc()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws_ping_interval=None,
                backlog=4096, ws_max_queue=10_000, ws_per_message_deflate=False)


# Realistic chat (issue 36): every message is an ordinary line people type, made unique by its
# three parts (23 x 29 x 31 lists: the n-th message has parts n mod 23, 29, 31, all different
# for n < 20 677), with no ids, hex or digits in it; the filter must refuse none of them.
OPEN_Q = ["hey", "hi there", "ok so", "right then", "hello", "morning", "quick one", "go on then", "so tell me",
          "alright", "good evening", "yo", "hmm", "ok next", "fair enough", "cool", "haha ok", "nice one", "sure",
          "got it", "lovely", "interesting", "oh really"]
ASK = ["where did you grow up?", "what did you have for breakfast?", "do you prefer tea or coffee?",
       "what's the last film you watched?", "have you ever been to Scunthorpe?", "what do you do for work?",
       "cats or dogs?", "what's your favourite band?", "did you see the match last night?",
       "what's the weather like where you are?", "what are you reading at the moment?",
       "what would you cook for a first date?", "which season do you like best?", "can you drive?",
       "what's the best holiday you've had?", "do you play any instruments?", "what annoys you most on trains?",
       "have you seen Moby Dick or Die Hard?", "what's a cocktail you'd order?", "do you like shiitake mushrooms?",
       "what did you study?", "who is your favourite comedian?", "what's your go-to takeaway?",
       "do you ever kill time on your phone?", "what's your favourite word?", "what's the capital of Peru?",
       "how do you take your eggs?", "what's the Battle of Hastings famous for?", "what's in your fridge?"]
CLOSE = ["", " just curious", " be honest", " no wrong answers", " lol", " go on", " take your time", " :)",
         " I'll go next", " if you don't mind", " quick answer", " first thing that comes to mind", " haha",
         " tell me more", " I'm nosy", " don't overthink it", " for science", " short answer is fine",
         " in a few words", " no pressure", " if you like", " seriously", " for real", " asking for a friend",
         " thanks", " cheers", " mate", " pal", " please", " ok?", " yeah?"]
OPEN_R = ["honestly", "um", "ha", "well", "oh", "right", "ok", "hmm", "good question", "easy", "ooh", "yeah",
          "ahh", "let me think", "tough one", "oof", "no idea really", "funny you ask", "so", "ah", "gosh", "blimey",
          "to be fair"]
SAY = ["a small town near the coast", "toast and marmalade", "tea, always tea", "some rom com on the telly",
       "never been, heard it's fine", "I work in a shop", "dogs every time", "probably Radiohead",
       "missed it, was asleep", "grey and drizzly as usual", "a crime novel, pretty gripping",
       "pasta, can't go wrong", "autumn for sure", "yes but badly", "Cornwall with my family", "a bit of guitar",
       "people eating loudly", "Die Hard is a Christmas film", "a mojito probably", "love them in a stir fry",
       "history at uni", "someone dry and British", "a curry from down the road", "all the time, too much",
       "probably serendipity", "Lima I think", "scrambled on toast", "the year everyone forgets except 1066 lol",
       "cheese and sad lettuce"]
END_R = ["", " you?", " what about you?", " haha", " anyway", " lol", " if I'm honest", " I reckon", " ha",
         " why do you ask?", " and you?", " your turn", " :)", " ngl", " tbh", " I guess", " innit", " y'all?",
         " same as everyone", " nothing exciting", " boring I know", " classic", " right?", " obviously",
         " mostly", " usually", " these days", " as you do", " sort of", " kind of", " basically"]
_N = {False: itertools.count(), True: itertools.count()}  # questions, replies
_CID = itertools.count()


def chat_line(witness: bool) -> str:
    """A unique, ordinary chat line (a question, or a reply when `witness`)."""
    n = next(_N[witness])
    if n >= 23 * 29 * 31:
        raise SystemExit("bench: more messages than unique chat lines (20 677 of each kind)")
    a, b, c = (OPEN_R, SAY, END_R) if witness else (OPEN_Q, ASK, CLOSE)
    return f"{a[n % 23]} {b[n % 29]}{c[n % 31]}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Player:
    def __init__(self, pid: str, rounds: int, sent: dict, lat: list, got: dict, think: float,
                 refused: list | None = None) -> None:
        self.pid, self.rounds, self.sent, self.lat, self.got = pid, rounds, sent, lat, got
        self.refused = refused if refused is not None else []
        self.think = think
        self.done = asyncio.Event()
        self.role = None

    async def run(self, base_ws: str, start: asyncio.Event, joined: list, opened: list) -> None:
        self.base_ws = base_ws
        import websockets

        async with websockets.connect(f"{base_ws}/ws/{self.pid}", max_queue=None, open_timeout=60, compression=None,
                                      ping_interval=None) as ws:
            self.ws = ws
            await ws.recv()  # the server's first state frame: this connection is set up
            opened.append(self.pid)
            await start.wait()
            await ws.send(json.dumps({"type": "join"}))
            joined.append(self.pid)
            k = 0
            async for raw in ws:
                f = json.loads(raw)
                t = f["type"]
                if t == "state" and f["phase"] == "game" and self.role is None:
                    self.role = f["game"]["role"]
                    self.started = time.perf_counter()
                    if self.role == "interrogator":
                        if self.think:  # games do not all start typing in the same millisecond
                            await asyncio.sleep(self.think * random.random())
                        await self._say(chat_line(False))
                elif t == "message" and f["from"] == "them":
                    now = time.perf_counter()
                    self.got[f["text"]] = self.got.get(f["text"], 0) + 1
                    if f["text"] in self.sent:
                        self.lat.append((self.sent[f["text"]], now - self.sent[f["text"]]))
                    if self.think:  # a player's reading and typing time (uniform around --think)
                        await asyncio.sleep(self.think * (0.5 + random.random()))
                    if self.role == "witness":
                        await self._say(chat_line(True))
                    else:
                        k += 1
                        if k < self.rounds:
                            await self._say(chat_line(False))
                        else:
                            await ws.send(json.dumps({"type": "verdict", "choice": "human", "confidence": 50}))
                elif t == "state" and f["phase"] == "reveal":
                    break
                elif t == "error":
                    if f.get("code") == "blocked":
                        self.refused.append(f.get("client_id"))
                    print("error frame:", f, file=sys.stderr)
        self.done.set()

    async def _say(self, text: str) -> None:
        self.sent[text] = time.perf_counter()
        await self.ws.send(json.dumps({"type": "message", "conv": "A", "text": text, "client_id": f"c{next(_CID)}"}))


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU time of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tck, int(fields[12]) / tck


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process."""
    return sum(cpu_times(pid))


async def wait_healthy(base: str, proc: subprocess.Popen) -> None:
    import httpx

    async with httpx.AsyncClient(base_url=base, timeout=10) as c:
        for _ in range(600):
            if proc.poll() is not None:
                raise SystemExit(f"bench: the server on {base} exited with {proc.returncode}")
            try:
                if (await c.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise SystemExit(f"bench: the server on {base} did not become healthy")


def load() -> float:
    return round(os.getloadavg()[0], 2)


async def level(n_games: int, rounds: int, db: str | None, timeout: float, think: float,
                workers: int | str = 1, redis: str | None = None) -> dict:
    from rawhttp import Conn

    from turinglab.server.testing import csrf_token

    load0 = load()
    tmp = tempfile.mkdtemp(prefix="tl-bench-")
    config = "sqlite" if workers == "sqlite" else f"{workers} worker(s)" + (" + Redis" if redis else "")
    if workers == "sqlite":  # the embedded default: one process, a SQLite file, no Redis
        db, redis, workers = None, None, 1
    url = db or f"sqlite:///{tmp}/bench.db"
    if (workers > 1 or redis) and (not redis or url.startswith("sqlite")):
        raise SystemExit("bench: --workers above 1 needs --redis redis://HOST:6379/0 and --db postgresql+psycopg://...")
    extra = [redis, f"tlbench:{os.getpid()}:{time.time_ns()}"] if redis else []
    procs, bases = [], []
    for _ in range(workers):  # the first one migrates the database before the others start
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, __file__, "--serve", str(port), url, *extra]))
        bases.append(f"http://127.0.0.1:{port}")
        await wait_healthy(bases[-1], procs[-1])
    proc, base = procs[0], bases[0]
    try:
        sem = asyncio.Semaphore(32)

        async def person(i: int) -> str:
            """A participant as a browser makes one: start, the consent page, its form (a light
            client: httpx spent minutes of CPU here at 4000 participants)."""
            async with sem:
                c = await Conn.open("127.0.0.1", int(bases[i % workers].rsplit(":", 1)[1]))
                try:
                    _, head, _ = await c.request("POST", "/start")
                    pid = head["location"].rsplit("/", 1)[-1]
                    _, _, page = await c.request("GET", f"/p/{pid}")
                    status, _, body = await c.request("POST", f"/p/{pid}/consent",
                                                      {"agree": "yes", "csrf": csrf_token(page.decode())})
                    if status != 303:
                        raise RuntimeError(f"consent of {pid} failed: {status} {body[:200]!r}")
                    return pid
                finally:
                    c.close()

        pids = await asyncio.gather(*(person(i) for i in range(2 * n_games)))
        sent: dict[str, float] = {}
        got: dict[str, int] = {}
        lat: list[float] = []
        refused: list = []
        players = [Player(p, rounds, sent, lat, got, think, refused) for p in pids]
        start, joined, opened = asyncio.Event(), [], []
        tasks = [asyncio.create_task(p.run(bases[i % workers].replace("http", "ws", 1), start, joined, opened))
                 for i, p in enumerate(players)]
        for _ in range(1200):  # let every socket open (connections are not part of the measured phase)
            if len(opened) == len(players) or any(t.done() for t in tasks):
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1.0)  # and the server settle after them
        t0 = time.perf_counter()
        cpu0, own0 = sum(cpu_seconds(p.pid) for p in procs), time.process_time()
        sys0 = sum(cpu_times(p.pid)[1] for p in procs)
        # for a profiler attached to the server (py-spy record -p PID): the measured phase starts now
        print(f"bench: measuring (server pids {[p.pid for p in procs]})", file=sys.stderr, flush=True)
        start.set()
        done, pending = await asyncio.wait(tasks, timeout=timeout)
        elapsed = time.perf_counter() - t0
        server_cpu, client_cpu = sum(cpu_seconds(p.pid) for p in procs) - cpu0, time.process_time() - own0
        server_sys = sum(cpu_times(p.pid)[1] for p in procs) - sys0
        for t in pending:
            t.cancel()
        errors = [t.exception() for t in done if t.exception() is not None]
        expected = 2 * rounds * n_games
        delivered = sum(1 for text in sent if got.get(text, 0) == 1)
        dupes = sum(1 for v in got.values() if v > 1)
        ms = np.array([x for _, x in lat]) * 1000
        all_in = max((getattr(p, "started", 0.0) for p in players), default=0.0)
        steady = np.array([x for t, x in lat if t > all_in]) * 1000  # sent after every game started
        burst = np.array([x for t, x in lat if t <= all_in]) * 1000  # sent while games were still starting
        return {"games": n_games, "workers": workers, "config": config, "db": url.split(":", 1)[0].split("+")[0],
                "load_start": load0, "load_end": load(), "messages": expected, "sent": len(sent), "delivered": delivered,
                "lost": expected - delivered, "refused_by_filter": len(refused), "duplicates": dupes, "unfinished": len(pending),
                "client_errors": len(errors), "seconds": round(elapsed, 2),
                "msgs_per_s": round(delivered / elapsed, 1) if elapsed else 0.0,
                "p50_ms": round(float(np.percentile(ms, 50)), 2) if len(ms) else None,
                "p99_ms": round(float(np.percentile(ms, 99)), 2) if len(ms) else None,
                "max_ms": round(float(ms.max()), 2) if len(ms) else None,
                "start_burst_s": round(all_in - t0, 2), "burst_n": len(burst),
                "burst_p99_ms": round(float(np.percentile(burst, 99)), 2) if len(burst) else None,
                "burst_max_ms": round(float(burst.max()), 2) if len(burst) else None, "steady_n": len(steady),
                "steady_p50_ms": round(float(np.percentile(steady, 50)), 2) if len(steady) else None,
                "steady_p99_ms": round(float(np.percentile(steady, 99)), 2) if len(steady) else None,
                "server_cpu_s": round(server_cpu, 2), "server_sys_s": round(server_sys, 2), "client_cpu_s": round(client_cpu, 2), "think_s": think}
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


async def main(args) -> None:
    levels = [int(x) for x in args.games.split(",")] if args.games else [10, 50, 100, 250, 500, 1000, 1500, 2000]
    worker_counts = [x if x == "sqlite" else int(x) for x in str(args.workers).split(",")]
    print(f"bench: load average {os.getloadavg()} on {os.cpu_count()} CPUs at the start", flush=True)
    if len(worker_counts) > 1 or worker_counts != [1] or args.redis:
        rows = []
        for n in levels:
            for w in worker_counts:
                r = await level(n, args.rounds, args.db, args.timeout, args.think, w, args.redis)
                print(json.dumps(r), flush=True)
                rows.append(r)
        print(f"{'config':>30} {'games':>6} {'lost':>5} {'dupes':>5} {'p50_ms':>8} {'p99_ms':>8} {'max_ms':>8} "
              f"{'burst_s':>7} {'burst_max':>9} {'cpu_s':>7} {'load':>11}")
        for r in rows:
            print(f"{r['config'] + ' ' + r['db']:>30} {r['games']:>6} {r['lost']:>5} {r['duplicates']:>5} "
                  f"{r['p50_ms']!s:>8} {r['p99_ms']!s:>8} {r['max_ms']!s:>8} {r['start_burst_s']:>7} "
                  f"{r['burst_max_ms']!s:>9} {r['server_cpu_s']:>7} {r['load_start']:>5}-{r['load_end']:<5}")
        return
    best = None
    started = time.monotonic()
    for n in levels:
        r = await level(n, args.rounds, args.db, args.timeout, args.think)
        print(json.dumps(r), flush=True)
        if r["lost"] == 0 and r["unfinished"] == 0 and r["duplicates"] == 0:
            best = n
        else:
            break
        if time.monotonic() - started > args.budget:
            print(f"time budget of {args.budget:.0f} s spent; stopping", flush=True)
            break
    print(f"largest N with zero lost messages: {best} (db: {args.db or 'sqlite (temp file)'}, "
          f"{args.rounds} exchanges per game, {os.cpu_count()} CPUs, load average {os.getloadavg()} at the end)")


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--serve":  # a worker of several
        serve(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        if os.environ.get("BENCH_PROFILE"):  # write a cProfile of the server process
            import cProfile
            import signal

            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            cProfile.run("serve(int(sys.argv[2]), sys.argv[3])", os.environ["BENCH_PROFILE"])
        else:
            serve(int(sys.argv[2]), sys.argv[3])
        sys.exit(0)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=None, help="run one level with N concurrent games (or a list: 1000,2000)")
    ap.add_argument("--workers", default="1", help="worker processes (or a list: 1,2,sqlite); above 1 needs --redis; "
                    "sqlite: one process on a temporary SQLite file")
    ap.add_argument("--redis", default=None, help="Redis URL shared by the workers (redis://127.0.0.1:6379/0)")
    ap.add_argument("--rounds", type=int, default=5, help="question/answer exchanges per game")
    ap.add_argument("--think", type=float, default=0.0,
                    help="mean seconds a player waits before answering (0: as fast as possible)")
    ap.add_argument("--db", default=None, help="database URL (default: a temporary SQLite file)")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds allowed per level")
    ap.add_argument("--budget", type=float, default=600.0, help="stop stepping up after this many seconds")
    from turinglab.server.tuning import tune_gc

    tune_gc()  # the scripted players' own GC pauses would count as relay latency
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    asyncio.run(main(ap.parse_args()))
