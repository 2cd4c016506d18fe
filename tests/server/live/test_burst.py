"""A connect burst on two cluster workers (issue 43): every websocket opened at once joins the
waiting room, Redis never sees more clients than the workers' pools allow (`CLIENT LIST`), and a
handshake the pool cannot serve in time is answered `busy, retrying` (the client comes back, as
the page does), never with a traceback. $TURINGLAB_BURST sets the number of sockets (default 4000, as issue 43 asks)."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest

from tests.server.live.test_cluster_chaos import start_worker
from tests.server.live.test_redis_outage import own_redis  # noqa: F401 - the fixture
from turinglab.server.live.cluster import REDIS_POOL

STUDY = """
name: burst
rules: {time_limit_s: 120, typing_min_s: 0.2, typing_jitter_s: 0.2}
allocation: {human_ratio: 1.0}
"""


@pytest.mark.slow
@pytest.mark.timeout(1800)
async def test_a_burst_of_websockets_all_join_within_the_redis_pool(postgres_url, own_redis, tmp_path):  # noqa: F811
    import redis.asyncio as aioredis
    import websockets

    from turinglab.store.api import Store

    n = int(os.environ.get("TURINGLAB_BURST", "4000"))
    study = tmp_path / "burst.yaml"
    study.write_text(STUDY)
    url = f"redis://127.0.0.1:{own_redis['port']}/0"
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    workers = [start_worker(study, postgres_url, url, "tl-burst", log) for log in logs]
    with Store(postgres_url) as st:
        now = int(time.time() * 1000)
        pids = [st.create_participant(consent_ms=now, t_ms=now) for _ in range(n)]
    r = aioredis.Redis.from_url(url, decode_responses=True)
    joined: set[str] = set()
    busy = {"frames": 0}
    peak = {"clients": 0}
    all_in = asyncio.Event()
    release = asyncio.Event()

    async def sample() -> None:
        while not release.is_set():
            peak["clients"] = max(peak["clients"], len(await r.client_list()) - 1)  # not this sampler
            await asyncio.sleep(0.2)

    async def player(i: int, pid: str) -> None:
        base = workers[i % 2][1].replace("http", "ws", 1)
        while pid not in joined:
            try:
                async with websockets.connect(f"{base}/ws/{pid}", open_timeout=120, ping_interval=None,
                                              close_timeout=1) as ws:
                    async for raw in ws:
                        f = json.loads(raw)
                        if f["type"] == "error" and f["code"] == "busy":  # a handshake or the join
                            if f.get("client_id") is None and ws.state.name == "OPEN":
                                await asyncio.sleep(0.5)
                                await ws.send(json.dumps({"type": "join"}))
                            busy["frames"] += 1
                            assert f["message"].startswith("busy, retrying"), f
                        elif f["type"] == "state" and f["phase"] == "idle":
                            await ws.send(json.dumps({"type": "join"}))
                        elif f["type"] == "state" and f["phase"] in ("waiting", "game"):
                            joined.add(pid)
                            if len(joined) == n:
                                all_in.set()
                            await release.wait()  # keep the socket open: the burst stays up
                            return
            except (OSError, asyncio.TimeoutError, websockets.ConnectionClosed, websockets.InvalidHandshake):
                pass
            await asyncio.sleep(0.5)  # as the page: back off, then connect again

    sampler = asyncio.create_task(sample())
    t0 = time.monotonic()
    tasks = [asyncio.create_task(player(i, pid)) for i, pid in enumerate(pids)]
    try:
        await asyncio.wait_for(all_in.wait(), timeout=60 + n / 10)
        took = time.monotonic() - t0
        text = "".join(log.read_text() for log in logs)  # before the workers stop
    finally:
        release.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await sampler
        await r.aclose()
        for proc, _ in workers:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
    print(f"\n{n} websockets on 2 workers: all joined in {took:.1f} s, {busy['frames']} answered busy, "
          f"at most {peak['clients']} Redis clients (bound {2 * REDIS_POOL}), load {os.getloadavg()[0]:.1f}")
    assert len(joined) == n
    assert peak["clients"] <= 2 * REDIS_POOL, peak
    assert "Traceback" not in text, text[max(0, text.index("Traceback") - 500):][:3000]
