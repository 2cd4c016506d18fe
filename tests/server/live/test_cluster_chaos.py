"""Chaos: the documented `turinglab serve --workers 2 --db postgresql… --redis …` (two worker
processes on one port, sharing PostgreSQL and Redis); one worker is killed with SIGKILL in the
middle of ~200 games (uvicorn starts a new one). Every acknowledged message and verdict must be
stored, and every game must end normally (on its own worker or resumed by another)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.server.live.test_cluster import prefix, redis_url  # noqa: F401 - the fixture
from tests.server.test_workers import start_serve, stop_serve
from turinglab.server.testing import give_consent

ROUNDS = 3
STUDY = """
name: chaos
rules: {time_limit_s: 150, typing_min_s: 0.2, typing_jitter_s: 0.3}
witnesses:
  - {codename: Eliza, kind: eliza, timing: {base_s: 0.5, s_per_char: 0.02, gamma_shape: 2.0, gamma_scale: 0.2}}
allocation: {human_ratio: 0.6}
"""


def start_workers(study: Path, db: str, redis: str, prefix: str, log: Path) -> tuple[subprocess.Popen, str]:
    """`turinglab serve --workers 2` of the study, up once /healthz answers and both workers started."""
    proc, base = start_serve(["--study", str(study), "--db", db, "--redis", redis, "--workers", "2"],
                             {"TURINGLAB_REDIS_PREFIX": prefix, "TURINGLAB_SECRET": "chaos-test-secret",
                              "TURINGLAB_START_LIMIT": "off"},  # 280 people from one address (issue 24's per-address limit)
                             log, wait_s=60)
    deadline = time.monotonic() + 60
    while len(worker_pids(log)) < 2:
        assert time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.3)
    return proc, base


async def new_participant(c: httpx.AsyncClient, base: str) -> str:
    """A participant as a browser makes one at `base`: start, then consent; their id."""
    r = await c.post(base + "/start")
    pid = r.headers["location"].rsplit("/", 1)[-1]
    await give_consent(c, pid, base)
    return pid


def start_worker(study: Path, db: str, redis: str, prefix: str, log: Path) -> tuple[subprocess.Popen, str]:
    """One `turinglab serve --redis` worker of the study, up once /healthz answers (the Redis
    outage tests start two of them, each with its own log)."""
    return start_serve(["--study", str(study), "--db", db, "--redis", redis],
                       {"TURINGLAB_REDIS_PREFIX": prefix, "TURINGLAB_SECRET": "chaos-test-secret",
                        "TURINGLAB_START_LIMIT": "off"}, log, wait_s=60)


def worker_pids(log: Path) -> list[int]:
    """The worker processes' ids, as each worker logs them when it starts (uvicorn)."""
    return [int(x) for x in re.findall(r"Started server process \[(\d+)\]", log.read_text())]


class Bot:
    """A scripted participant that behaves like the browser client: it resends unacknowledged
    messages after every game state, and reconnects (to the other worker) when its socket drops."""

    def __init__(self, pid: str, bases: list[str], first: int, name: str) -> None:
        self.pid, self.bases, self.i = pid, bases, first
        self.name = name  # in its messages: a random id can read as a filtered word ("f49" as "fag")
        self.acked: dict[str, tuple[str, str]] = {}  # client_id -> (message id, text)
        self.outbox: dict[str, str] = {}
        self.my_ids: set[str] = set()  # by id, as the browser: an ack of a message the snapshot shows counts once
        self.their_ids: set[str] = set()
        self.gid = self.role = None
        self.verdict_sent = False
        self.reveal = None
        self.errors: list[dict] = []
        self.reconnects = 0
        self.log: list = []  # what happened, for a failure's diagnosis

    async def run(self, deadline: float) -> None:
        import websockets

        while self.reveal is None and time.monotonic() < deadline:
            base = self.bases[self.i % len(self.bases)].replace("http", "ws", 1)  # one port: the kernel picks a worker
            try:
                async with websockets.connect(f"{base}/ws/{self.pid}", open_timeout=10, ping_interval=None) as ws:
                    self.ws = ws
                    async for raw in ws:
                        await self.on(json.loads(raw))
                        if self.reveal is not None:
                            return
            except (OSError, asyncio.TimeoutError, websockets.ConnectionClosed, websockets.InvalidHandshake):
                pass
            self.log.append([round(time.monotonic(), 2), "reconnect"])
            self.i += 1  # try the other worker
            self.reconnects += 1
            await asyncio.sleep(0.3)

    async def send(self, obj: dict) -> None:
        await self.ws.send(json.dumps(obj))

    async def say(self, text: str) -> None:
        self.outbox[text] = text
        await self.send({"type": "message", "conv": "A", "text": text, "client_id": text})

    async def on(self, f: dict) -> None:
        t = f["type"]
        self.log.append([round(time.monotonic(), 2), t, f.get("phase"), f.get("client_id") or f.get("text"),
                         f.get("code")])
        if t == "state":
            g = f["game"]
            if f["phase"] == "idle" and self.gid is None:
                await self.send({"type": "join"})
            elif g is not None and f["phase"] == "reveal" and g["game_id"] == self.gid:
                self.reveal = g
            elif g is not None and f["phase"] in ("game", "verdict"):
                self.gid, self.role = g["game_id"], g["role"]
                self.my_ids = {m["id"] for m in g["messages"] if m["from"] == "you"}
                self.their_ids = {m["id"] for m in g["messages"] if m["from"] == "them"}
                for text in list(self.outbox):  # as the browser: resend what was not acknowledged
                    await self.send({"type": "message", "conv": "A", "text": text, "client_id": text})
                await self.act(resend_verdict=True)
        elif t == "message" and f["from"] == "them":
            self.their_ids.add(f["id"])
            await self.act()
        elif t == "ack" and f["client_id"] in self.outbox:
            text = self.outbox.pop(f["client_id"])
            self.acked[f["client_id"]] = (f["id"], text)
            self.my_ids.add(f["id"])
            await self.act()
        elif t == "error":
            self.errors.append(f)
            if f.get("code") == "store_unavailable" and f.get("client_id") in self.outbox:
                await asyncio.sleep(0.5)  # the game's owner died: it comes back on another worker
                await self.send({"type": "message", "conv": "A", "text": f["client_id"], "client_id": f["client_id"]})

    @property
    def mine(self) -> int:
        return len(self.my_ids)

    @property
    def theirs(self) -> int:
        return len(self.their_ids)

    async def act(self, resend_verdict: bool = False) -> None:
        if self.role == "interrogator":
            if self.theirs >= ROUNDS:
                if not self.verdict_sent or resend_verdict:
                    self.verdict_sent = True
                    await self.send({"type": "verdict", "choice": "human", "confidence": 70})
            elif not self.outbox and self.mine == self.theirs:
                await self.say(f"{self.name} q{self.mine}")
        elif self.role == "witness" and not self.outbox and self.theirs > self.mine:
            await self.say(f"{self.name} r{self.mine}")


@pytest.mark.slow
async def test_sigkill_of_one_worker_loses_nothing_acknowledged(postgres_url, redis_url, tmp_path):  # noqa: F811
    from turinglab.store.api import Store

    study = tmp_path / "chaos.yaml"
    study.write_text(STUDY)
    pre = prefix()
    log = tmp_path / "serve.log"
    proc, base = start_workers(study, postgres_url, redis_url, pre, log)
    try:
        async with httpx.AsyncClient(timeout=60) as c:
            sem = asyncio.Semaphore(16)

            async def person(i: int) -> str:
                async with sem:
                    return await new_participant(c, base)

            pids = await asyncio.gather(*(person(i) for i in range(280)))
        bots = [Bot(p, [base], 0, f"bot {i}") for i, p in enumerate(pids)]
        deadline = time.monotonic() + 240
        tasks = [asyncio.create_task(bot.run(deadline)) for bot in bots]
        # kill one worker once games are under way
        t0 = time.monotonic()
        while sum(1 for bot in bots if bot.acked) < 100 and time.monotonic() - t0 < 60:
            await asyncio.sleep(0.2)
        in_flight = sum(1 for bot in bots if bot.gid and bot.reveal is None)
        victim = worker_pids(log)[0]
        os.kill(victim, signal.SIGKILL)
        await asyncio.wait(tasks, timeout=max(1.0, deadline - time.monotonic()))
        unfinished = [bot for bot in bots if bot.reveal is None]
        (tmp_path / "unfinished.json").write_text(json.dumps(
            [{"pid": u.pid, "gid": u.gid, "role": u.role, "mine": u.mine, "theirs": u.theirs, "outbox": list(u.outbox),
              "errors": u.errors, "reconnects": u.reconnects, "i": u.i, "log": u.log} for u in unfinished], indent=1))
        blocked = [(bot.name, e) for bot in bots for e in bot.errors if e.get("code") == "blocked"]
        assert not blocked, f"the content filter refused a bot's message (the test's texts must pass it): {blocked[:3]}"
        assert not unfinished, (len(unfinished), [(u.pid, u.role, u.mine, u.theirs, u.errors[-2:]) for u in unfinished[:5]])
    finally:
        stop_serve(proc)
    served = log.read_text()
    took_over = served.count("took over game")
    assert in_flight > 50 and took_over > 0, (in_flight, took_over)
    assert len(worker_pids(log)) >= 3, "uvicorn started a worker in place of the killed one"
    with Store(postgres_url) as st:
        games = {g.id: g for g in st.games()}
        stored = {gid: st.events(gid) for gid in games}
    bad = [gid for gid, g in games.items() if g.end_reason != "verdict" or g.verdict is None]
    (tmp_path / "bad.json").write_text(json.dumps(
        [{"gid": gid, "info": repr(games[gid]), "events": [repr(e) for e in stored[gid]],
          "bots": [{"pid": b.pid, "role": b.role, "reveal": b.reveal, "log": b.log} for b in bots if b.gid == gid]}
         for gid in bad], indent=1, default=str))
    assert len(games) >= 180
    for bot in bots:
        g = games[bot.gid]
        texts = [e.payload.get("text") for e in stored[bot.gid] if e.type in ("message", "held")]
        for cid, (_, text) in bot.acked.items():  # every acknowledged message is stored, once as a message
            assert text in texts, (bot.pid, text)
            assert [e.payload.get("text") for e in stored[bot.gid] if e.type == "message"].count(text) <= 1
        if bot.role == "interrogator":  # every verdict the player saw acknowledged (the reveal) is stored
            assert g.verdict is not None and g.verdict.choice == "human" and g.end_reason == "verdict", (
                g.end_reason, g.status, bot.verdict_sent, [(e.seq, e.t_ms, e.type, e.actor) for e in stored[bot.gid]],
                bot.log[-12:], [ln for ln in served.splitlines() if bot.gid in ln or bot.pid in ln][-12:])
    assert all(g.end_reason == "verdict" for g in games.values())
