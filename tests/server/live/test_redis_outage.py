"""Redis lost mid-games (issues 23, 43): two real `turinglab serve --redis` workers share PostgreSQL and
a Redis of this test's own, which is killed for 3 s, 30 s or 120 s and started again empty (every key
lost), or flushed (FLUSHALL) while it stays up, in the middle of about 50 games (80 players, half on
each worker). /healthz answers within 2 s throughout (`degraded` meanwhile), every acknowledged
message is stored, and every game ends by its verdict (the bots play each game on after Redis is back)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time

import httpx
import pytest

from tests.server.live.test_cluster_chaos import STUDY, Bot, new_participant, start_worker
from turinglab.server.testing import free_port


def start_redis(port: int) -> subprocess.Popen:
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--daemonize", "no"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import redis

    for _ in range(100):
        try:
            redis.Redis(port=port).ping()
            return proc
        except redis.ConnectionError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


@pytest.fixture
def own_redis():
    import shutil

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    port = free_port()
    box = {"proc": start_redis(port), "port": port}
    yield box
    if box["proc"].poll() is None:
        box["proc"].kill()
        box["proc"].wait()


async def outage(postgres_url, own_redis, tmp_path, down_s: float, people: int, flush: bool = False) -> None:
    """`down_s` seconds without Redis, then an empty Redis; `flush`: FLUSHALL instead, Redis staying up."""
    from turinglab.store.api import Store

    study = tmp_path / "outage.yaml"
    study.write_text(STUDY)
    url = f"redis://127.0.0.1:{own_redis['port']}/0"
    a, base_a = start_worker(study, postgres_url, url, "tl-outage", tmp_path / "a.log")
    b, base_b = start_worker(study, postgres_url, url, "tl-outage", tmp_path / "b.log")
    health: list[tuple[float, str, float, str]] = []  # (when, worker, seconds, status)
    stop = asyncio.Event()

    async def probe() -> None:
        async with httpx.AsyncClient(timeout=5) as c:
            while not stop.is_set():
                for base in (base_a, base_b):
                    t = time.monotonic()
                    try:
                        r = await c.get(base + "/healthz")
                        status = r.json().get("status", "ok") if r.status_code == 200 else f"http {r.status_code}"
                    except httpx.HTTPError as exc:
                        status = type(exc).__name__
                    health.append((t, base, time.monotonic() - t, status))
                await asyncio.sleep(0.25)
    try:
        async with httpx.AsyncClient(timeout=60) as c:
            pids = [await new_participant(c, (base_a, base_b)[i % 2]) for i in range(people)]
        bots = [Bot(p, [base_a, base_b], i % 2, f"bot {i}") for i, p in enumerate(pids)]
        deadline = time.monotonic() + 150 + down_s
        prober = asyncio.create_task(probe())
        tasks = [asyncio.create_task(bot.run(deadline)) for bot in bots]
        t0 = time.monotonic()
        while sum(1 for bot in bots if bot.acked) < people // 3 and time.monotonic() - t0 < 60:
            await asyncio.sleep(0.2)
        in_flight = sum(1 for bot in bots if bot.gid and bot.reveal is None)
        killed = time.monotonic()
        if flush:  # every key lost, the subscriptions kept
            import redis

            redis.Redis(port=own_redis["port"]).flushall()
        else:
            own_redis["proc"].kill()  # Redis lost
            own_redis["proc"].wait()
            await asyncio.sleep(down_s)
            own_redis["proc"] = start_redis(own_redis["port"])  # back, empty
        back = time.monotonic()
        await asyncio.wait(tasks, timeout=max(1.0, deadline - time.monotonic()))
        stop.set()
        await prober
        unfinished = [bot for bot in bots if bot.reveal is None]
        (tmp_path / "unfinished.json").write_text(json.dumps(
            [{"pid": u.pid, "gid": u.gid, "role": u.role, "mine": u.mine, "theirs": u.theirs, "outbox": list(u.outbox),
              "errors": u.errors[-3:], "log": u.log[-30:]} for u in unfinished], indent=1))
        assert not unfinished, (len(unfinished), tmp_path, [(u.pid, u.role, u.mine, u.theirs) for u in unfinished[:5]])
    finally:
        stop.set()
        for p in (a, b):
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=30)
    assert in_flight >= people // 4, in_flight
    slowest = max(h[2] for h in health)
    assert slowest < 2.0, sorted(health, key=lambda h: -h[2])[:5]
    during = [h for h in health if killed + 0.5 < h[0] < back]
    assert flush or (during and all(h[3] == "degraded" for h in during)), during[:6]
    assert all(h[3] == "ok" for h in health if h[0] > back + 15), [h for h in health if h[0] > back + 15][:6]
    logs = (tmp_path / "a.log").read_text() + (tmp_path / "b.log").read_text()
    healed = "Redis lost its keys" if flush else "Redis is back"
    assert logs.count(healed) >= 2, logs[-3000:]
    with Store(postgres_url) as st:
        games = {g.id: g for g in st.games()}
        stored = {gid: st.events(gid) for gid in games}
    for bot in bots:
        texts = [e.payload.get("text") for e in stored[bot.gid] if e.type in ("message", "held")]
        for _cid, (_, text) in bot.acked.items():  # every acknowledged message is stored, once
            assert text in texts, (bot.pid, text)
            assert [e.payload.get("text") for e in stored[bot.gid] if e.type == "message"].count(text) <= 1
    assert all(g.end_reason == "verdict" for g in games.values()), [g.end_reason for g in games.values()]
    print(f"{'FLUSHALL' if flush else f'{down_s:g} s outage'}: {len(games)} games, {in_flight} players in a game at the kill, "
          f"slowest /healthz {slowest:.2f} s")


async def test_a_3_s_redis_outage_mid_games_loses_nothing(postgres_url, own_redis, tmp_path):
    await outage(postgres_url, own_redis, tmp_path, down_s=3.0, people=80)


async def test_redis_losing_every_key_mid_games_loses_nothing(postgres_url, own_redis, tmp_path):
    """FLUSHALL with Redis up: no outage to notice; each worker sees its mark gone and rebuilds."""
    await outage(postgres_url, own_redis, tmp_path, down_s=0.0, people=80, flush=True)


@pytest.mark.slow
async def test_a_30_s_redis_outage_mid_games_loses_nothing(postgres_url, own_redis, tmp_path):
    await outage(postgres_url, own_redis, tmp_path, down_s=30.0, people=80)


@pytest.mark.slow
async def test_a_120_s_redis_outage_mid_games_loses_nothing(postgres_url, own_redis, tmp_path):
    """Longer than a game's designed chat time is long: games close and their verdicts wait for Redis."""
    await outage(postgres_url, own_redis, tmp_path, down_s=120.0, people=80)
