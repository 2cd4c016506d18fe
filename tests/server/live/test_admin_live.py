"""Issue 27 over real websockets: a researcher removes a participant in a game (the game ends for
everyone, the participant may play again), and the participants' quota lets those who played
finish their rounds while newcomers are told the study is full."""

from __future__ import annotations

import asyncio

import httpx

from tests.server.live.test_server import ELIZA, running, say, study
from turinglab.game.config import StopAfter
from turinglab.server.admin_actions import take
from turinglab.server.testing import WsPlayer
from turinglab.store.api import Store


async def test_remove_ends_the_game_and_the_participants_quota(sqlite_url):
    s = study(ratio=0.0, witnesses=(ELIZA,), stop_after=StopAfter(participants=1))
    with running(s, sqlite_url, admin_poll_s=0.2) as base:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await say(p, "hello")
        # the one participant the quota allows is playing: a newcomer is told the study is full
        async with httpx.AsyncClient(base_url=base) as c:
            assert "The study is full" in (await c.get("/")).text
            assert "The study is full" in (await c.post("/start")).text
        with Store(sqlite_url, upgrade=False) as store:
            sid = store.game(gid).study_id
            await asyncio.to_thread(take, store, sid, "rs", "remove", p.pid, "testing remove")
            st = await p.phase("reveal")
            assert st["game"]["end_reason"] == "researcher" and st["game"]["reveal"] is None
            g = store.game(gid)
            assert g.flags["ended_by_researcher"] is True and "participant_blocked" not in g.flags
        # removed, not blocked, and inside the quota: they may play again
        await p.send({"type": "join"})
        st = await p.phase("game")
        assert st["game"]["game_id"] != gid
        await p.close()
