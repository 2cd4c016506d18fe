"""Benchmark the live game server: N concurrent two-player human-human games over real websockets.

    python benchmarks/bench_server.py                # step N up: 10, 50, 100, 250, 500, 1000, 1500, 2000
    python benchmarks/bench_server.py --games 1000   # one level
    python benchmarks/bench_server.py --db postgresql+psycopg://postgres@127.0.0.1:5432/bench

The server runs in its own process (uvicorn, loopback); scripted players run here. Designed
delays are off (human timing None, no typing indicator), so the figures are the server's own
relay latency: from a player's send to the partner's receipt, through engine, store (every event
committed before it is relayed) and websocket. Prints p50/p99 latency, messages per second and
lost messages per level, then the largest N with zero lost messages.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time

import numpy as np


def serve(port: int, db: str) -> None:
    import uvicorn

    from turinglab.game.config import Allocation, Rules, Study
    from turinglab.server.app import create_app

    study = Study(name="bench", rules=Rules(time_limit_s=600, typing_min_s=3600, typing_jitter_s=0),
                  allocation=Allocation(human_ratio=1.0))
    app = create_app(study, db, rng_seed=1, human_timing=None)
    if not os.environ.get("BENCH_DEFAULT_GC"):  # as `turinglab serve` does
        from turinglab.server.tuning import tune_gc

        tune_gc()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", ws_ping_interval=None,
                backlog=4096, ws_max_queue=10_000, ws_per_message_deflate=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Player:
    def __init__(self, pid: str, rounds: int, sent: dict, lat: list, got: dict, think: float) -> None:
        self.pid, self.rounds, self.sent, self.lat, self.got = pid, rounds, sent, lat, got
        self.think = think
        self.done = asyncio.Event()
        self.role = None

    async def run(self, base_ws: str, start: asyncio.Event, joined: list) -> None:
        import websockets

        async with websockets.connect(f"{base_ws}/ws/{self.pid}", max_queue=None, open_timeout=60, compression=None,
                                      ping_interval=None) as ws:
            self.ws = ws
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
                        await self._say(f"{self.pid} q{k}")
                elif t == "message" and f["from"] == "them":
                    now = time.perf_counter()
                    self.got[f["text"]] = self.got.get(f["text"], 0) + 1
                    if f["text"] in self.sent:
                        self.lat.append((self.sent[f["text"]], now - self.sent[f["text"]]))
                    if self.think:  # a player's reading and typing time (uniform around --think)
                        await asyncio.sleep(self.think * (0.5 + random.random()))
                    if self.role == "witness":
                        await self._say(f"{self.pid} r{f['text'].rsplit(' ', 1)[1]}")
                    else:
                        k += 1
                        if k < self.rounds:
                            await self._say(f"{self.pid} q{k}")
                        else:
                            await ws.send(json.dumps({"type": "verdict", "choice": "human", "confidence": 50}))
                elif t == "state" and f["phase"] == "reveal":
                    break
                elif t == "error":
                    print("error frame:", f, file=sys.stderr)
        self.done.set()

    async def _say(self, text: str) -> None:
        self.sent[text] = time.perf_counter()
        await self.ws.send(json.dumps({"type": "message", "conv": "A", "text": text, "client_id": text}))


def cpu_times(pid: int) -> tuple[float, float]:
    """User and system CPU time of a process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tck, int(fields[12]) / tck


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process."""
    return sum(cpu_times(pid))


async def level(n_games: int, rounds: int, db: str | None, timeout: float, think: float) -> dict:
    import httpx

    from turinglab.server.testing import give_consent

    tmp = tempfile.mkdtemp(prefix="tl-bench-")
    url = db or f"sqlite:///{tmp}/bench.db"
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), url])
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base, timeout=60) as c:
            for _ in range(300):
                try:
                    if (await c.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            sem = asyncio.Semaphore(32)

            async def person() -> str:
                async with sem:
                    r = await c.post("/start")
                    pid = r.headers["location"].rsplit("/", 1)[-1]
                    await give_consent(c, pid)
                    return pid

            pids = await asyncio.gather(*(person() for _ in range(2 * n_games)))
        sent: dict[str, float] = {}
        got: dict[str, int] = {}
        lat: list[float] = []
        players = [Player(p, rounds, sent, lat, got, think) for p in pids]
        start, joined = asyncio.Event(), []
        tasks = [asyncio.create_task(p.run(base.replace("http", "ws", 1), start, joined)) for p in players]
        await asyncio.sleep(0.5 + n_games / 500)  # let every socket open
        t0 = time.perf_counter()
        cpu0, own0, sys0 = cpu_seconds(proc.pid), time.process_time(), cpu_times(proc.pid)[1]
        # for a profiler attached to the server (py-spy record -p PID): the measured phase starts now
        print(f"bench: measuring (server pid {proc.pid})", file=sys.stderr, flush=True)
        start.set()
        done, pending = await asyncio.wait(tasks, timeout=timeout)
        elapsed = time.perf_counter() - t0
        server_cpu, client_cpu = cpu_seconds(proc.pid) - cpu0, time.process_time() - own0
        server_sys = cpu_times(proc.pid)[1] - sys0
        for t in pending:
            t.cancel()
        errors = [t.exception() for t in done if t.exception() is not None]
        expected = 2 * rounds * n_games
        delivered = sum(1 for text in sent if got.get(text, 0) == 1)
        dupes = sum(1 for v in got.values() if v > 1)
        ms = np.array([x for _, x in lat]) * 1000
        all_in = max((getattr(p, "started", 0.0) for p in players), default=0.0)
        steady = np.array([x for t, x in lat if t > all_in]) * 1000  # sent after every game started
        return {"games": n_games, "messages": expected, "sent": len(sent), "delivered": delivered,
                "lost": expected - delivered, "duplicates": dupes, "unfinished": len(pending),
                "client_errors": len(errors), "seconds": round(elapsed, 2),
                "msgs_per_s": round(delivered / elapsed, 1) if elapsed else 0.0,
                "p50_ms": round(float(np.percentile(ms, 50)), 2) if len(ms) else None,
                "p99_ms": round(float(np.percentile(ms, 99)), 2) if len(ms) else None,
                "max_ms": round(float(ms.max()), 2) if len(ms) else None,
                "start_burst_s": round(all_in - t0, 2), "steady_n": len(steady),
                "steady_p50_ms": round(float(np.percentile(steady, 50)), 2) if len(steady) else None,
                "steady_p99_ms": round(float(np.percentile(steady, 99)), 2) if len(steady) else None,
                "server_cpu_s": round(server_cpu, 2), "server_sys_s": round(server_sys, 2), "client_cpu_s": round(client_cpu, 2), "think_s": think}
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def main(args) -> None:
    levels = [args.games] if args.games else [10, 50, 100, 250, 500, 1000, 1500, 2000]
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
          f"{args.rounds} exchanges per game, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
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
    ap.add_argument("--games", type=int, default=None, help="run one level with N concurrent games")
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
