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
from turinglab.store.counting import not_counting


def admin_tables(store_url: str):  # noqa: ANN201 - the /admin export tables
    from turinglab.server.admin import tables

    with Store(store_url, upgrade=False) as store:
        return tables(store, store.studies()[0].id)


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


async def test_admin_actions_need_the_form_token_and_a_same_site_post(sqlite_url):
    import re

    from turinglab.server.testing import AdminLogin

    with running(study(witnesses=(ELIZA,)), sqlite_url, admin_password="pw") as base:
        async with httpx.AsyncClient(base_url=base) as c:
            auth = AdminLogin("pw")
            token = re.search(r'name="csrf" value="([0-9a-f]+)"', (await c.get("/admin", auth=auth)).text).group(1)
            r = await c.post("/admin/action", data={"csrf": "0" * 32, "action": "pause"}, auth=auth)
            assert r.status_code == 403 and "token is missing or out of date" in r.text
            r = await c.post("/admin/action", data={"csrf": token, "action": "pause"}, auth=auth,
                             headers={"Origin": "https://evil.example"})
            assert r.status_code == 403 and "another site" in r.text
            r = await c.post("/admin/action", data={"csrf": token, "action": "block", "target": "<b>x</b>",
                                                    "reason": "r"}, auth=auth)
            assert r.status_code == 400 and "&lt;b&gt;x&lt;/b&gt;" in r.text and "<b>x</b>" not in r.text
            # without a login: the login form, nothing done
            async with httpx.AsyncClient(base_url=base) as anon:
                r = await anon.post("/admin/action", data={"csrf": token, "action": "resume"})
                assert r.status_code == 303 and r.headers["location"].startswith("/admin/login")
        with Store(sqlite_url, upgrade=False) as store:
            from turinglab.store import admin_log

            assert [a.action for a in admin_log.actions(store, store.studies()[0].id)] == []


async def test_instant_games_do_not_fill_the_games_quota(sqlite_url):
    """Issue 36.2: one client cannot fill `stop_after: {games: N}` with instant verdicts: such a game
    does not count (the export's games table says too_short) and frees its place; a game with a
    message counts."""
    s = study(ratio=0.0, witnesses=(ELIZA,), stop_after=StopAfter(games=1))
    with running(s, sqlite_url, admin_poll_s=0.2) as base:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        for _ in range(3):  # join, verdict at once, again
            await p.send({"type": "join"})
            gid = (await p.phase("game"))["game"]["game_id"]
            await p.send({"type": "verdict", "choice": "ai", "confidence": 50})
            await p.phase("reveal")
            with Store(sqlite_url, upgrade=False) as store:
                for _ in range(50):  # the game's end is in the store (its writer commits in the background)
                    if store.game(gid).status == "ended":
                        break
                    await asyncio.sleep(0.1)
                assert not_counting(store, store.game(gid).study_id, (1, 0.0))[gid] == "too_short"
            async with httpx.AsyncClient(base_url=base) as c:
                assert "The study is full" not in (await c.get("/")).text
        shown = admin_tables(store_url=sqlite_url)["games"].set_index("game_id")["does_not_count"]
        assert shown[gid] == "too_short"  # flagged where researchers look (the games export)
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await say(p, "hello")
        await p.send({"type": "verdict", "choice": "ai", "confidence": 50})
        await p.phase("reveal")
        await asyncio.sleep(5.5)  # the quota's count is read again from the store (COUNT_EVERY_S): the same
        async with httpx.AsyncClient(base_url=base) as c:
            assert "The study is full" in (await c.get("/")).text
        with Store(sqlite_url, upgrade=False) as store:
            assert gid not in not_counting(store, store.game(gid).study_id, (1, 0.0))
        await p.close()
