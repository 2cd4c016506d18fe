"""Issue 27 on several workers (Redis + PostgreSQL, both real): a researcher's action taken on
one worker reaches the others. A game run by worker 1 is ended from worker 2's /admin (worker 1
reads the stored request and ends it: both players see the end, with no reveal), and a pause
taken on worker 1 turns new arrivals away on worker 2."""

from __future__ import annotations

import asyncio
import re

import httpx

from tests.server.live.test_cluster import FAST, RULES, apps, redis_url  # noqa: F401 - redis_url is a fixture
from turinglab.game.config import Allocation, Study
from turinglab.server.testing import AdminLogin, WsPlayer, serve_in_thread
from turinglab.store.api import Store


async def admin_action(base: str, **fields: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base, timeout=30) as c:
        page = await c.get("/admin", auth=AdminLogin("pw"))
        token = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text).group(1)
        return await c.post("/admin/action", data={"csrf": token, **fields}, auth=AdminLogin("pw"))


async def test_end_a_game_run_by_another_worker_and_pause_everywhere(postgres_url, redis_url):  # noqa: F811
    s = Study(name="cl-admin", rules=RULES, allocation=Allocation(human_ratio=1.0))
    a1, a2 = apps(s, postgres_url, redis_url, human_timing=FAST, admin_password="pw", admin_poll_s=0.2)
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        p = await (await WsPlayer.create(b1)).connect()
        q = await (await WsPlayer.create(b2)).connect()
        for x in (p, q):
            await x.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await q.phase("game")
        owner, other = (b1, b2) if gid in a1.state.hub.live else (b2, b1)
        assert gid in (a1.state.hub.live if owner == b1 else a2.state.hub.live)
        r = await admin_action(other, action="end_game", target=gid, reason="stuck on another worker")
        assert r.status_code == 303, r.text[:300]  # the owner ended it within the 5 s the page waits
        for x in (p, q):
            st = await x.phase("reveal")
            assert st["game"]["end_reason"] == "researcher" and st["game"]["reveal"] is None
        with Store(postgres_url, upgrade=False) as store:
            g = store.game(gid)
            assert g.end_reason == "researcher" and g.flags["ended_by_researcher"] is True
        # a pause on one worker: a new arrival on the other is turned away once it has read the action
        assert (await admin_action(b1, action="pause", reason="break")).status_code == 303
        async with httpx.AsyncClient(base_url=b2) as c:
            for _ in range(50):
                r = await c.get("/")
                if "The study is paused" in r.text:
                    break
                await asyncio.sleep(0.1)
            assert "The study is paused" in r.text
        for x in (p, q):
            await x.close()


async def test_an_end_request_reaches_a_game_taken_over_from_a_dead_worker(postgres_url, redis_url):  # noqa: F811
    """The worker that ran a game died before it read the researcher's end request: the worker
    that takes the game over ends it (the request is kept for games not running here)."""
    import time

    from turinglab.game.engine import Game
    from turinglab.server.admin_actions import take
    from turinglab.store import admin_log

    s = Study(name="cl-admin-takeover", rules=RULES, allocation=Allocation(human_ratio=1.0))
    now = int(time.time() * 1000)
    with Store(postgres_url) as st:
        sid = st.register_study(s)
        i, w = st.create_participant(consent_ms=1), st.create_participant(consent_ms=1)
        gid = st.create_game(sid, "two-player", {"A": {"kind": "human", "participant_id": w}}, i, now)
        st.append_events(gid, Game.start("two-player", s.rules, now).log)
        take(st, sid, "rs", "end_game", gid, "its worker died")
        assert [a.action for a in admin_log.actions(st, sid)] == ["end_game"]
    [app] = apps(s, postgres_url, redis_url, n=1, human_timing=FAST, admin_poll_s=0.2)
    with serve_in_thread(app):
        for _ in range(200):
            with Store(postgres_url, upgrade=False) as st:
                g = st.game(gid)
            if g.status == "ended":
                break
            await asyncio.sleep(0.05)
    assert g.status == "ended" and g.end_reason == "researcher" and g.flags["ended_by_researcher"] is True
