"""Withdrawal on a running server (issue 38): from /admin (with the form's token) while the
participant's game runs, and from the done page with the participant's own form. Afterwards
the database holds none of their text or ids, every game replays, and their link opens nothing."""

from __future__ import annotations

import asyncio
import re

import httpx

from tests.server.live.test_server import ELIZA, running, say, study
from tests.store.test_withdraw import _dump_db
from turinglab.game.config import Retention, Withdrawal
from turinglab.game.engine import Game
from turinglab.server.testing import AdminLogin, WsPlayer
from turinglab.store.api import Store
from turinglab.store.withdraw import withdrawals


async def _ended(url: str, gid: str) -> None:
    with Store(url, upgrade=False) as store:
        for _ in range(100):  # the writer commits in the background
            if store.game(gid).status == "ended":
                return
            await asyncio.sleep(0.1)
    raise AssertionError(f"game {gid} did not end")


async def test_admin_withdraws_a_participant_in_a_running_game(db_url):
    with running(study(ratio=0.0, witnesses=(ELIZA,)), db_url, admin_password="pw", admin_poll_s=0.2) as base:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await say(p, "my name is Zanzibar Quillfeather")
        await p.next("message", timeout=20)  # ELIZA's reply: the counterpart's text, which stays
        async with httpx.AsyncClient(base_url=base) as c:
            auth = AdminLogin("pw")
            token = re.search(r'action="/admin/withdraw"[^>]*>\s*<input type="hidden" name="csrf" value="([0-9a-f]+)"',
                              (await c.get("/admin", auth=auth)).text).group(1)
            r = await c.post("/admin/withdraw", data={"csrf": "0" * 32, "target": p.pid, "reason": "x"}, auth=auth)
            assert r.status_code == 403  # without the form's token nothing happens
            r = await c.post("/admin/withdraw", data={"csrf": token, "target": p.pid, "reason": "emailed us"},
                             auth=auth)
            assert r.status_code == 200 and "Withdrawn" in r.text, r.text
            await _ended(db_url, gid)
            assert (await c.get(f"/p/{p.pid}")).status_code == 404  # their link opens nothing now
            shown = (await c.get("/admin", auth=auth)).text
            assert "Withdrawals: 1" in shown and "no retention set" in shown
        await p.close()
    dump = _dump_db(db_url)
    assert "Zanzibar" not in dump and p.pid not in dump
    with Store(db_url, upgrade=False) as store:
        events = store.events(gid)
        Game.replay(events)
        assert any(e.type == "message" and e.payload.get("withdrawn") for e in events), events
        assert any(e.type == "message" and e.actor == "A" and e.payload.get("text") for e in events)  # ELIZA's stay
        assert store.game(gid).flags["withdrawn"] is True
        assert [(w.who, w.reason) for w in withdrawals(store)] == [("admin", "emailed us")]


async def test_done_page_offers_withdrawal_with_the_participants_code(sqlite_url):
    with running(study(ratio=0.0, witnesses=(ELIZA,)), sqlite_url) as base:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await say(p, "I live in Thistlewick-on-Sea")
        await p.send({"type": "verdict", "choice": "ai", "confidence": 70, "reason": "Thistlewick told me"})
        await p.phase("reveal")
        await p.close()
        await _ended(sqlite_url, gid)
        async with httpx.AsyncClient(base_url=base) as c:
            page = (await c.get(f"/p/{p.pid}/done")).text
            code = re.search(r'id="participant-code">(P[0-9a-f]{16})<', page).group(1)
            token = re.search(r'class="withdraw-form">.*?name="csrf" value="([0-9a-f]+)"', page, re.S).group(1)
            r = await c.post(f"/p/{p.pid}/withdraw", data={"csrf": token, "confirm": "yes"})
            assert r.status_code == 200 and "Your data is withdrawn" in r.text
            assert (await c.get(f"/p/{p.pid}/done")).status_code == 404
    dump = _dump_db(sqlite_url)
    assert "Thistlewick" not in dump and p.pid not in dump and code not in dump
    with Store(sqlite_url, upgrade=False) as store:
        Game.replay(store.events(gid))
        assert store.game(gid).verdict.reason is None
        assert [w.who for w in withdrawals(store)] == ["participant"]


async def test_a_study_may_turn_the_done_page_withdrawal_off(sqlite_url):
    s = study(ratio=0.0, witnesses=(ELIZA,), withdrawal=Withdrawal(on_done_page=False))
    with running(s, sqlite_url) as base:
        p = await WsPlayer.create(base)
        async with httpx.AsyncClient(base_url=base) as c:
            assert "withdraw-form" not in (await c.get(f"/p/{p.pid}/done")).text
            r = await c.post(f"/p/{p.pid}/withdraw", data={"confirm": "yes"})
            assert r.status_code == 404
    with Store(sqlite_url, upgrade=False) as store:
        assert withdrawals(store) == [] and store.get_participant(p.pid)


async def test_admin_shows_the_retention_figures(sqlite_url):
    s = study(witnesses=(ELIZA,), retention=Retention(payment_ids_days=30, raw_chat_days=7))
    with running(s, sqlite_url, admin_password="pw") as base:
        await WsPlayer.create(base, query="?PROLIFIC_PID=aaaaaaaaaaaaaaaaaaaaaaaa&STUDY_ID=s&SESSION_ID=n")
        async with httpx.AsyncClient(base_url=base) as c:
            shown = (await c.get("/admin", auth=AdminLogin("pw"))).text
    assert "Withdrawals: 0" in shown
    assert "raw Prolific ids: kept 30 days after a participant&#39;s last game; 1 participant(s) kept, 0 due" in shown
    assert "raw chat: redacted 7 days after a game ended; 0 game(s) kept, 0 due" in shown
