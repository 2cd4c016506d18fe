"""Issue 38 on several workers (Redis + PostgreSQL, both real): a participant is withdrawn from
the /admin of the worker that does not run their game, while the game runs. The owner ends the
game, both workers forget the participant's link, and the database keeps none of their words
while the partner's stay and the game replays."""

from __future__ import annotations

import asyncio
import re

import httpx

from tests.server.live.test_cluster import FAST, RULES, apps, redis_url  # noqa: F401 - redis_url is a fixture
from tests.server.live.test_server import say
from tests.store.test_withdraw import _dump_db
from turinglab.game.config import Allocation, Study
from turinglab.game.engine import Game
from turinglab.server.testing import AdminLogin, WsPlayer, serve_in_thread
from turinglab.store.api import Store


async def test_withdraw_a_player_whose_game_runs_on_another_worker(postgres_url, redis_url):  # noqa: F811
    s = Study(name="cl-withdraw", rules=RULES, allocation=Allocation(human_ratio=1.0))
    a1, a2 = apps(s, postgres_url, redis_url, human_timing=FAST, admin_password="pw", admin_poll_s=0.2)
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        p = await (await WsPlayer.create(b1)).connect()
        q = await (await WsPlayer.create(b2)).connect()
        for x in (p, q):
            await x.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await q.phase("game")
        owner_app, other = (a1, b2) if gid in a1.state.hub.live else (a2, b1)
        seats = {k: v.identity.participant_id for k, v in owner_app.state.hub.live[gid].seats.items()}
        inter = p if p.pid not in seats.values() else q
        wit = q if inter is p else p
        await say(inter, "are you real? I am Wilhelmina Oxcart")
        await wit.next("message", timeout=20)
        await say(wit, "yes, partner-words-stay-4471", conv=None)
        await inter.next("message", timeout=20)
        async with httpx.AsyncClient(base_url=other, timeout=30) as c:
            page = await c.get("/admin", auth=AdminLogin("pw"))
            token = re.search(r'action="/admin/withdraw"[^>]*>\s*<input type="hidden" name="csrf" value="([0-9a-f]+)"',
                              page.text).group(1)
            r = await c.post("/admin/withdraw", data={"csrf": token, "target": inter.pid, "reason": "asked"},
                             auth=AdminLogin("pw"))
            assert r.status_code == 200 and "Withdrawn" in r.text, r.text[:300]
        st = await wit.phase("reveal", timeout=20)  # the owner ended the game
        assert st["game"]["end_reason"] == "researcher"
        with Store(postgres_url, upgrade=False) as store:
            for _ in range(100):
                if store.game(gid).status == "ended":
                    break
                await asyncio.sleep(0.1)
            events = store.events(gid)
            Game.replay(events)
            assert store.game(gid).flags["withdrawn"] is True
        for base in (b1, b2):  # both workers forget the link
            async with httpx.AsyncClient(base_url=base) as c:
                for _ in range(50):
                    if (await c.get(f"/p/{inter.pid}")).status_code == 404:
                        break
                    await asyncio.sleep(0.1)
                assert (await c.get(f"/p/{inter.pid}")).status_code == 404
        for x in (p, q):
            await x.close()
    dump = _dump_db(postgres_url)
    assert "Wilhelmina" not in dump and inter.pid not in dump
    assert "partner-words-stay-4471" in dump
