"""Issue 36.2: researchers' actions are applied or reported, never dropped. A block of a participant
this server never loaded (created in the store only: another study's, before a restart, another
worker's) and an end_game stored just after it are read in one poll: both are applied, /admin
answers with what happened (never a 500), a blocked Prolific id cannot come back from a fresh
browser, and a Prolific id seen from two browsers is blocked by the pseudonym the researcher saw.
On one process (SQLite) and on two workers (PostgreSQL + Redis)."""

from __future__ import annotations

import asyncio
import re

import httpx

from tests.server.live.test_cluster import FAST, RULES, apps, redis_url  # noqa: F401 - redis_url is a fixture
from tests.server.live.test_server import ELIZA, running, study
from turinglab.analysis.export.pseudonyms import export_key, keyed
from turinglab.game.config import Allocation, Study
from turinglab.server.admin_actions import ActionError, find_participant
from turinglab.server.testing import AdminLogin, WsPlayer, serve_in_thread
from turinglab.store import admin_log
from turinglab.store.api import Store

PP = "5f0c1a2b3c4d5e6f70819a2b"


async def admin_action(c: httpx.AsyncClient, **fields: str) -> httpx.Response:
    page = await c.get("/admin", auth=AdminLogin("pw"))
    token = re.search(r'name="csrf" value="([0-9a-f]+)"', page.text).group(1)
    return await c.post("/admin/action", data={"csrf": token, **fields}, auth=AdminLogin("pw"))


async def test_block_of_an_unloaded_participant_and_end_game_in_one_poll(sqlite_url):
    s = study(ratio=0.0, witnesses=(ELIZA,))
    with running(s, sqlite_url, admin_poll_s=1.0, admin_password="pw") as base:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        with Store(sqlite_url, upgrade=False) as store:
            sid = store.game(gid).study_id
            stranger = store.create_participant(t_ms=1, prolific_pid=PP)  # never seen by the server
            admin_log.record(store, sid, "ana", "block", stranger, "abuse", 1)
            admin_log.record(store, sid, "ana", "end_game", gid, "stuck", 2)
        st = await p.phase("reveal", timeout=10)  # the end_game after the failing-prone block is applied
        assert st["game"]["end_reason"] == "researcher"
        async with httpx.AsyncClient(base_url=base) as c:
            # the blocked Prolific id from a fresh browser: turned away, nobody created
            with Store(sqlite_url, upgrade=False) as store:
                n = len(store.participants())
            r = await c.get(f"/?PROLIFIC_PID={PP}&STUDY_ID=s&SESSION_ID=x")
            assert "You can no longer take part" in r.text
            r = await c.post(f"/start?PROLIFIC_PID={PP}&STUDY_ID=s&SESSION_ID=y")
            assert "You can no longer take part" in r.text
            with Store(sqlite_url, upgrade=False) as store:
                assert len(store.participants()) == n
            # through /admin: a block of someone not on this server is stored and reported, not a 500
            with Store(sqlite_url, upgrade=False) as store:
                other = store.create_participant(t_ms=2)
            r = await admin_action(c, action="block", target=other, reason="spam")
            assert r.status_code == 200 and "Action stored" in r.text and "not on this server" in r.text
            with Store(sqlite_url, upgrade=False) as store:
                assert other in admin_log.blocked(store, sid)
        await p.close()


def test_a_prolific_id_of_two_browsers_is_named_by_pseudonym(sqlite_url):
    with Store(sqlite_url) as store:
        store.register_study(Study(name="x"))
        a = store.create_participant(t_ms=1, prolific_pid=PP)
        b = store.create_participant(t_ms=2, prolific_pid=PP, label="duplicate_prolific_pid")
        key = export_key(store)
        try:
            find_participant(store, PP, key)
            raise AssertionError("an ambiguous Prolific id was taken")
        except ActionError as exc:
            assert "2 browsers" in str(exc) and keyed(a, key) in str(exc) and keyed(b, key) in str(exc)
        assert find_participant(store, keyed(b, key), key) == b
        # the same Prolific id in two studies: a study's action names its own participant
        other = "60aa1b2c3d4e5f60718293a4"
        in_b = store.create_participant(t_ms=3, prolific_pid=other, study="live:b")
        in_c = store.create_participant(t_ms=4, prolific_pid=other, study="live:c")
        assert find_participant(store, other, key, "live:c") == in_c
        assert find_participant(store, other, key, "live:b") == in_b


async def test_two_workers_apply_both_actions(postgres_url, redis_url):  # noqa: F811
    s = Study(name="cl-unloaded", rules=RULES, allocation=Allocation(human_ratio=1.0))
    a1, a2 = apps(s, postgres_url, redis_url, human_timing=FAST, admin_password="pw", admin_poll_s=1.0)
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        p = await (await WsPlayer.create(b1)).connect()
        q = await (await WsPlayer.create(b2)).connect()
        for x in (p, q):
            await x.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await q.phase("game")
        with Store(postgres_url, upgrade=False) as store:
            sid = store.game(gid).study_id
            stranger = store.create_participant(t_ms=1)
            admin_log.record(store, sid, "ana", "block", stranger, "abuse", 1)
            admin_log.record(store, sid, "ana", "end_game", gid, "stuck", 2)
        for x in (p, q):
            st = await x.phase("reveal", timeout=10)
            assert st["game"]["end_reason"] == "researcher"
        for hub in (a1.state.hub, a2.state.hub):
            for _ in range(30):
                if stranger in hub.admin.blocked:
                    break
                await asyncio.sleep(0.1)
            assert stranger in hub.admin.blocked
        async with httpx.AsyncClient(base_url=b2, timeout=30) as c:
            with Store(postgres_url, upgrade=False) as store:
                other = store.create_participant(t_ms=2)
            r = await admin_action(c, action="block", target=other, reason="spam")
            assert r.status_code == 200 and "not on this server" in r.text
        for x in (p, q):
            await x.close()
