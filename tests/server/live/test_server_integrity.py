"""Nothing acknowledged is lost: a real database outage (SQLite locked by another process,
PostgreSQL refusing connections) and kill -9, on SQLite and PostgreSQL."""

from __future__ import annotations

import subprocess
import sys
import time
from contextlib import contextmanager

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from turinglab.game.engine import Game
from turinglab.store.api import Store
from tests.server.live.test_server import in_game, players, running, study

HOLD_LOCK = """
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
c.execute("COMMIT")
"""


@contextmanager
def outage(url: str):
    """The database is away for real while the block runs."""
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        p = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, u.database], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
        assert p.stdout.readline().strip() == "locked"
        try:
            yield
        finally:
            p.stdin.write("\n")
            p.stdin.flush()
            p.wait(10)
        return
    admin = create_engine(u.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'alter database "{u.database}" allow_connections false'))
        c.execute(text("select pg_terminate_backend(pid) from pg_stat_activity where datname = :n"),
                  {"n": u.database})
    try:
        yield
    finally:
        with admin.connect() as c:
            c.execute(text(f'alter database "{u.database}" allow_connections true'))
        admin.dispose()


async def said(p, text_: str, conv: str | None = "A") -> dict:
    """The server's answer (ack or error) to one chat message."""
    cid = f"c{time.monotonic_ns()}"
    await p.send({"type": "message", "conv": conv, "text": text_, "client_id": cid})
    return await p.next(None, timeout=30, client_id=cid)


async def test_a_database_outage_does_not_wedge_the_game(db_url, monkeypatch, capsys):
    monkeypatch.setenv("TURINGLAB_SQLITE_BUSY_S", "0.5")
    acked: list[str] = []
    with running(study(), db_url) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        assert (await said(i, "hello?"))["type"] == "ack"
        acked.append("hello?")
        assert (await said(w, "hi there", None))["type"] == "ack"
        acked.append("hi there")
        await i.next("message", text="hi there")
        with outage(db_url):
            r = await said(i, "are you there?")
            assert r["type"] == "error" and r["code"] == "store_unavailable", r
            told = await w.next("error", timeout=15, code="store_unavailable")
            assert "database" in told["message"]
            r = await said(i, "still there?")  # refused again while the store is away; not acked
            assert r["type"] == "error" and r["code"] == "store_unavailable", r
        # the store is back: the same game goes on (no "does not continue the log")
        r = await said(i, "are you there?")
        assert r["type"] == "ack", r
        acked.append("are you there?")
        assert (await w.next("message", text="are you there?"))["from"] == "them"
        assert (await said(w, "yes", None))["type"] == "ack"
        acked.append("yes")
        await i.next("message", text="yes")
        with outage(db_url):
            await i.send({"type": "verdict", "choice": "human", "confidence": 80, "reason": "typos"})
            err = await i.next("error", timeout=15, code="store_unavailable")
            assert "try again" in err["message"]
        await i.send({"type": "verdict", "choice": "human", "confidence": 80, "reason": "typos"})
        st = await i.phase("reveal", timeout=15)
        gid = st["game"]["game_id"]
    with Store(db_url) as store:
        events = store.events(gid)
        stored = [e.payload["text"] for e in events if e.type == "message"]
        assert stored == acked
        g = store.game(gid)
        assert g.status == "ended" and g.verdict.choice == "human"
        assert Game.replay(events).state == "ended"
    with capsys.disabled():
        print(f"\n[{make_url(db_url).get_backend_name()} outage] messages acknowledged {len(acked)}, "
              f"stored {len(stored)}")


async def test_the_time_limit_fires_after_an_outage(db_url, monkeypatch):
    """A timer whose write fails is retried until the store is back: the game still ends."""
    from tests.server.live.test_server import RULES

    monkeypatch.setenv("TURINGLAB_SQLITE_BUSY_S", "0.5")
    s = study(rules=RULES.model_copy(update={"time_limit_s": 3, "verdict_grace_s": 1}))
    with running(s, db_url) as base:
        seats = await in_game(await players(base, 2))
        i = seats["interrogator"]
        with outage(db_url):
            await i.next("error", timeout=15, code="store_unavailable")  # the time-up write failed
        st = await i.phase("reveal", timeout=30)
        gid = st["game"]["game_id"]
    with Store(db_url) as store:
        events = store.events(gid)
        assert "time_up" in [e.type for e in events]
        assert events[-1].type == "game_ended" and events[-1].payload["reason"] == "verdict_timeout"
        assert store.game(gid).status == "ended"


async def test_a_held_witness_reply_is_stored_before_its_ack_and_recorded_undelivered(db_url):
    from turinglab.game.config import Timing

    slow = Timing(base_s=30, s_per_char=0.0, gamma_shape=1.0, gamma_scale=0.01)
    with running(study(), db_url, human_timing=slow) as base:
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        assert (await said(i, "what did you have for breakfast?"))["type"] == "ack"
        ack = await said(w, "toast and far too much coffee", None)
        assert ack["type"] == "ack"  # held for 30 s, but stored already
        await i.send({"type": "verdict", "choice": "ai", "confidence": 60})
        st = await i.phase("reveal")
        assert not [m for m in st["game"]["messages"] if m["from"] == "them"]  # never shown
        gid = st["game"]["game_id"]
    with Store(db_url) as store:
        events = store.events(gid)
    types = [e.type for e in events]
    held = next(e for e in events if e.type == "held")
    assert held.payload["text"] == "toast and far too much coffee" and held.actor == "A"
    undelivered = [e for e in events if e.type == "refused" and e.payload["code"] == "undelivered"]
    assert [e.payload["text"] for e in undelivered] == ["toast and far too much coffee"]
    assert types.index("refused") < types.index("verdict") < types.index("game_ended") == len(types) - 1
    assert Game.replay(events).conversations["A"].held is None


def _serve(db_url: str, study_file, port: int) -> subprocess.Popen:
    import os

    import httpx

    env = dict(os.environ, PYTHONPATH=os.getcwd())
    proc = subprocess.Popen([sys.executable, "-m", "turinglab", "serve", "--study", str(study_file), "--db", db_url,
                             "--port", str(port), "--no-warm-up"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        assert proc.poll() is None and time.monotonic() < deadline, "serve did not come up"
        time.sleep(0.2)


async def test_kill_9_loses_no_acknowledged_witness_reply(db_url, tmp_path, capsys):
    import os
    import signal

    from turinglab.server.testing import free_port

    study_file = tmp_path / "study.yaml"
    study_file.write_text("name: kill9\nallocation:\n  human_ratio: 1.0\n"
                          "witnesses:\n  - codename: Eliza\n    kind: eliza\n")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    proc = _serve(db_url, study_file, port)
    acked: dict[str, str] = {}  # text -> game id
    try:
        ps = await players(base, 6)
        by_game: dict[str, dict] = {}
        for p in ps:
            st = (await p.phase("game"))["game"]
            by_game.setdefault(st["game_id"], {})[st["seat"]] = p
        assert len(by_game) == 3
        for n, seats in enumerate(by_game.values()):
            i, w = seats["interrogator"], seats["A"]
            assert (await said(i, f"question {n}"))["type"] == "ack"
            await w.next("message", text=f"question {n}")
            reply = f"my answer number {n}, held for a while"  # about 13 s at the default human timing
            r = await said(w, reply, None)
            assert r["type"] == "ack", r
            gid = [f for f in w.frames if f["type"] == "state" and f["game"]][-1]["game"]["game_id"]
            acked[reply] = gid
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    with Store(db_url) as store:
        stored = {e.payload["text"] for gid in set(acked.values()) for e in store.events(gid)
                  if e.type in ("held", "message") and e.actor == "A"}
    assert set(acked) <= stored
    # a restart ends the games left open and records the held replies as undelivered
    proc = _serve(db_url, study_file, free_port())
    proc.terminate()
    proc.wait(20)
    with Store(db_url) as store:
        for reply, gid in acked.items():
            events = store.events(gid)
            assert events[-1].type == "game_ended" and events[-1].payload["reason"] == "server_restart"
            assert [e.payload["text"] for e in events if e.type == "refused"
                    and e.payload["code"] == "undelivered"] == [reply]
    with capsys.disabled():
        print(f"\n[{make_url(db_url).get_backend_name()} kill -9] witness replies acknowledged {len(acked)}, "
              f"stored {len(set(acked) & stored)}")


async def test_flooding_is_limited_per_participant_and_refused_text_is_bounded(db_url):
    import asyncio

    from turinglab.server.live.hub import CLOSE_TOO_MANY, MAX_CONNECTIONS
    from turinglab.server.testing import WsPlayer

    with running(study(), db_url) as base:
        seats = await in_game(await players(base, 2))
        i = seats["interrogator"]
        extra = [await WsPlayer(base, i.pid).connect() for _ in range(8)]  # many sockets, one participant
        await asyncio.sleep(0.5)
        open_ = [p for p in [i, *extra] if p.ws.close_code is None]
        assert len(open_) == MAX_CONNECTIONS
        assert i.ws.close_code == CLOSE_TOO_MANY  # the oldest made way
        for p in open_:  # 4 x 15 frames at once: one budget of 20 for all of them
            for _ in range(15):
                await p.send({"type": "ping"})
        await open_[0].next("error", code="rate_limited")
        await asyncio.sleep(0.3)
        pongs = sum(1 for f in open_[0].frames if f["type"] == "pong")  # every pong reaches every socket
        assert 15 <= pongs <= 26, pongs
        await asyncio.sleep(1.5)
        r = await said(open_[-1], "x" * 20_000)  # refused: too long
        assert r["type"] == "error" and r["code"] == "too_long"
        gid = [f for f in open_[-1].frames if f["type"] == "state" and f["game"]][-1]["game"]["game_id"]
    with Store(db_url) as store:
        refused = [e for e in store.events(gid) if e.type == "refused" and e.payload["code"] == "too_long"]
    assert len(refused) == 1
    assert refused[0].payload["length"] == 20_000 and refused[0].payload["text"] == "x" * 500
