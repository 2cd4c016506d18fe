"""`turinglab serve --workers 2 --db postgresql… --redis redis://…`: the documented command starts
N worker processes on one port, and a two-player game is played across both of them."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.server.live.test_cluster import prefix, redis_url  # noqa: F401 - the fixture
from turinglab.server.testing import WsPlayer, free_port

ROOT = Path(__file__).resolve().parents[2]
STUDY = """
name: served
rules: {time_limit_s: 60, typing_min_s: 0.05, typing_jitter_s: 0.05}
allocation: {human_ratio: 1.0}
"""


def start_serve(args: list[str], env_extra: dict[str, str], log: Path, wait_s: float = 120) -> tuple:
    """`turinglab serve ARGS` as a subprocess; returns (process, base URL) once /healthz answers."""
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_SECRET": "serve-test-secret", **env_extra}
    proc = subprocess.Popen([sys.executable, "-m", "turinglab.cli", "serve", *args, "--port", str(port),
                             "--no-warm-up"], env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"serve exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                return proc, base
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    stop_serve(proc)
    raise RuntimeError(f"serve did not answer within {wait_s} s: {log.read_text()[-2000:]}")


def stop_serve(proc: subprocess.Popen) -> None:
    import signal

    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the parent and its worker processes
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def workers_started(log: Path) -> int:
    return log.read_text().count("Application startup complete")


async def test_serve_workers_2_plays_a_game_across_both_workers(postgres_url, redis_url, tmp_path):  # noqa: F811
    import redis.asyncio as aioredis

    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    log = tmp_path / "serve.log"
    pre = prefix()
    proc, base = start_serve(["--study", str(study), "--db", postgres_url, "--redis", redis_url, "--workers", "2"],
                             {"TURINGLAB_REDIS_PREFIX": pre}, log)
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    players: list[WsPlayer] = []
    try:
        deadline = time.monotonic() + 60
        while workers_started(log) < 2:
            assert time.monotonic() < deadline, log.read_text()[-2000:]
            time.sleep(0.3)
        p = await (await WsPlayer.create(base)).connect()
        q = await (await WsPlayer.create(base)).connect()
        players += [p, q]

        async def worker_of(x: WsPlayer) -> str | None:
            for _ in range(100):
                w = await r.get(f"{pre}:at:{x.pid}")
                if w:
                    return w
                await asyncio.sleep(0.05)
            return None

        # the kernel spreads connections over the two processes: reconnect q until it is on the other one
        for _ in range(40):
            if await worker_of(p) != await worker_of(q):
                break
            await q.close()
            await r.delete(f"{pre}:at:{q.pid}")
            await q.connect()
        wp, wq = await worker_of(p), await worker_of(q)
        assert wp and wq and wp != wq, f"both players on worker {wp}: the second worker took no connection"
        for x in (p, q):
            await x.send({"type": "join"})
        sp, sq = await p.phase("game", 20), await q.phase("game", 20)
        assert sp["game"]["game_id"] == sq["game"]["game_id"]
        inter, wit = (p, q) if sp["game"]["role"] == "interrogator" else (q, p)
        for k in range(2):
            await inter.send({"type": "message", "conv": "A", "text": f"hello {k}", "client_id": f"q{k}"})
            await inter.next("ack", 10, client_id=f"q{k}")
            await wit.next("message", 10, text=f"hello {k}")
            await wit.send({"type": "message", "text": f"hi back {k}", "client_id": f"w{k}"})
            await wit.next("ack", 10, client_id=f"w{k}")
            await inter.next("message", 10, text=f"hi back {k}")
        await inter.send({"type": "verdict", "choice": "human", "confidence": 70})
        assert (await inter.phase("reveal", 10))["game"]["reveal"]["correct"] is True
        await wit.phase("reveal", 10)
    finally:
        for x in players:
            await x.close()
        await r.aclose()
        stop_serve(proc)
    from turinglab.store.api import Store

    with Store(postgres_url) as st:
        g = st.games()[0]
        texts = [e.payload["text"] for e in st.events(g.id) if e.type == "message"]
    assert texts == ["hello 0", "hi back 0", "hello 1", "hi back 1"]
    assert "PicklingError" not in log.read_text()


def test_serve_without_redis_exits_2_in_one_line(postgres_url, tmp_path):
    """Issue 43: Redis is checked once, in the parent, before any worker starts."""
    url = f"redis://127.0.0.1:{free_port()}/0"  # nobody listens there
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_SECRET": "serve-test-secret"}
    r = subprocess.run([sys.executable, "-m", "turinglab.cli", "serve", "--db", postgres_url, "--redis", url,
                        "--workers", "2", "--port", str(free_port()), "--no-warm-up"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Redis" in lines[0] and url in lines[0], r.stderr
    assert "Started server process" not in r.stdout + r.stderr


async def play_across_workers(base: str, r, pre: str, players: list[WsPlayer]) -> None:  # noqa: ANN001
    """One game to its reveal with one player on each of the two workers (the kernel spreads
    connections: the second player reconnects until it lands on the other worker)."""
    p = await (await WsPlayer.create(base)).connect()
    q = await (await WsPlayer.create(base)).connect()
    players += [p, q]

    async def worker_of(x: WsPlayer) -> str | None:
        for _ in range(100):
            if w := await r.get(f"{pre}:at:{x.pid}"):
                return w
            await asyncio.sleep(0.05)
        return None

    for _ in range(40):
        if await worker_of(p) != await worker_of(q):
            break
        await q.close()
        await r.delete(f"{pre}:at:{q.pid}")
        await q.connect()
    assert await worker_of(p) != await worker_of(q), "one worker took every connection"
    for x in (p, q):
        await x.send({"type": "join"})
    sp, sq = await p.phase("game", 20), await q.phase("game", 20)
    assert sp["game"]["game_id"] == sq["game"]["game_id"]
    inter = p if sp["game"]["role"] == "interrogator" else q
    await inter.send({"type": "verdict", "choice": "human", "confidence": 70})
    await p.phase("reveal", 10)
    await q.phase("reveal", 10)


async def test_a_redis_blip_while_the_second_worker_starts_stops_no_worker(postgres_url, tmp_path):
    """Issue 43: Redis killed for 3 s while the second of two workers is held in its start-up (the test
    hook $TURINGLAB_TEST_HOLD_START): it serves as degraded and joins once Redis is back, and the first
    worker goes on; afterwards a game is played with one player on each worker."""
    import shutil

    import redis.asyncio as aioredis

    from tests.server.live.test_redis_outage import start_redis

    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed")
    port = free_port()
    own = start_redis(port)
    url = f"redis://127.0.0.1:{port}/0"
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    hold = tmp_path / "hold"
    hold.mkdir()
    log = tmp_path / "serve.log"
    proc, base = start_serve(["--study", str(study), "--db", postgres_url, "--redis", url, "--workers", "2"],
                             {"TURINGLAB_REDIS_PREFIX": "blip", "TURINGLAB_TEST_HOLD_START": str(hold)}, log)
    players: list[WsPlayer] = []
    r = None
    try:
        deadline = time.monotonic() + 60
        while not list(hold.glob("held-*")):
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.1)
        own.kill()
        own.wait()
        killed = time.monotonic()
        (hold / "go").touch()  # the second worker goes on with its start-up, Redis away
        while "Redis is not reachable at start" not in log.read_text():  # it builds its app first (seconds)
            assert time.monotonic() < deadline + 60 and proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        time.sleep(max(0.0, 3 - (time.monotonic() - killed)))  # away for 3 s at least
        own = start_redis(port)
        since = len(log.read_text())  # the first worker's "Redis is back" from now on (both serve then)
        while not ("joined the cluster blip late" in log.read_text() and "Redis is back" in log.read_text()[since:]):
            assert time.monotonic() < deadline + 60 and proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.3)
        text = log.read_text()
        assert "Redis is not reachable at start" in text and "failed to start" not in text, text[-3000:]
        r = aioredis.Redis.from_url(url, decode_responses=True)
        await play_across_workers(base, r, "blip", players)
        assert (await asyncio.to_thread(httpx.get, base + "/healthz")).json()["redis"] == "ok"
    finally:
        for x in players:
            await x.close()
        if r is not None:
            await r.aclose()
        stop_serve(proc)
        own.kill()
        own.wait()


async def busy_socket_seen(base: str, tries: int = 60) -> bool:
    """Whether a websocket (any token) was answered `error/busy` and closed with 1013 (try again
    later), as a worker not started yet answers; the kernel spreads the tries over both workers."""
    import json

    import websockets

    for _ in range(tries):
        try:
            async with websockets.connect(base.replace("http", "ws", 1) + "/ws/pnone", open_timeout=5) as ws:
                first = json.loads(await asyncio.wait_for(ws.recv(), 5))
                await asyncio.wait_for(ws.wait_closed(), 5)
                if first.get("code") == "busy" and ws.close_code == 1013:
                    return True
        except (OSError, asyncio.TimeoutError, websockets.ConnectionClosed, websockets.InvalidHandshake, ValueError):
            pass
    return False


async def test_a_database_outage_while_the_second_worker_starts_stops_no_worker(postgres_url, redis_url,  # noqa: F811
                                                                               tmp_path):
    """Issue 43: PostgreSQL unreachable (a TCP relay in front of it, killed) while the second of two
    workers is held in its start-up: it does not fail (uvicorn would stop both), answers /healthz 503
    `degraded`, `started: false`, `database: down` meanwhile, and starts once the database is back;
    then a game is played with one player on each worker."""
    import redis.asyncio as aioredis
    from sqlalchemy.engine import make_url

    from tests.server.live import tcp_relay

    pg = make_url(postgres_url)
    relay_port = free_port()
    relay = tcp_relay.start("127.0.0.1", relay_port, pg.host or "127.0.0.1", pg.port or 5432)
    db = pg.set(port=relay_port).render_as_string(hide_password=False)
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    hold = tmp_path / "hold"
    hold.mkdir()
    log = tmp_path / "serve.log"
    pre = prefix()
    proc, base = start_serve(["--study", str(study), "--db", db, "--redis", redis_url, "--workers", "2"],
                             {"TURINGLAB_REDIS_PREFIX": pre, "TURINGLAB_TEST_HOLD_START": str(hold)}, log)
    players: list[WsPlayer] = []
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        deadline = time.monotonic() + 60
        while not list(hold.glob("held-*")):
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()[-2000:]
            time.sleep(0.1)
        relay.kill()
        relay.wait()
        tcp_relay.wait_closed("127.0.0.1", relay_port)
        (hold / "go").touch()  # the second worker goes on with its start-up, the database away
        while "worker cannot start: the database is not reachable" not in log.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.2)
        seen = None  # the held worker's answer (the kernel spreads requests over both workers)
        for _ in range(200):
            resp = await asyncio.to_thread(httpx.get, base + "/healthz", timeout=5)
            if resp.json().get("started") is False:
                seen = resp
                break
        assert seen is not None and seen.status_code == 503, log.read_text()[-3000:]
        assert seen.json() == {"ok": False, "status": "degraded", "started": False, "database": "down"}
        assert await busy_socket_seen(base), "no websocket was answered busy (1013) by the worker not started"
        time.sleep(2)
        relay = tcp_relay.start("127.0.0.1", relay_port, pg.host or "127.0.0.1", pg.port or 5432)
        while "worker started late: the database answers again" not in log.read_text():
            assert time.monotonic() < deadline + 60 and proc.poll() is None, log.read_text()[-3000:]
            time.sleep(0.3)
        assert "failed to start" not in log.read_text() and proc.poll() is None
        await play_across_workers(base, r, pre, players)
        for _ in range(20):  # both workers answer healthy now
            assert (await asyncio.to_thread(httpx.get, base + "/healthz", timeout=5)).json()["ok"] is True
    finally:
        for x in players:
            await x.close()
        await r.aclose()
        stop_serve(proc)
        relay.kill()
        relay.wait()


def test_serve_with_the_database_away_exits_2_in_one_line(redis_url, tmp_path):  # noqa: F811
    """Issue 43: the database is checked once, in the parent, before any worker starts; the line names
    the URL without its password."""
    port = free_port()  # nobody listens there
    url = f"postgresql+psycopg://postgres:s3cret-pw@127.0.0.1:{port}/test"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TURINGLAB_SECRET": "serve-test-secret"}
    r = subprocess.run([sys.executable, "-m", "turinglab.cli", "serve", "--db", url, "--redis", redis_url,
                        "--workers", "2", "--port", str(free_port()), "--no-warm-up"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"postgresql+psycopg://postgres:***@127.0.0.1:{port}/test" in lines[0], r.stderr
    assert "s3cret-pw" not in r.stdout + r.stderr and "Started server process" not in r.stdout + r.stderr
