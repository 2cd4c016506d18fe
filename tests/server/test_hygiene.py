"""Issue 10 item 8: strict frames and forms, robust parsing, invisible text, the normalising word
filter, client ids, the end of the log, security headers, cookies, openapi, close codes."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets

from turinglab.game.config import Rules
from turinglab.game.engine import Disconnect, Game, GiveVerdict, Send
from turinglab.server.live import protocol as proto
from turinglab.server.content_filter import ContentFilter
from turinglab.server.testing import WsPlayer, browser_admin_login, csrf_token
from turinglab.store.api import Store
from tests.server.live.test_server import in_game, players, running, study
from tests.server.live.test_server_integrity import said


@pytest.mark.parametrize("frame", [
    {"type": "verdict", "choice": "ai", "confidence": "50"},
    {"type": "verdict", "choice": "ai", "confidence": True},
    {"type": "verdict", "choice": "ai", "confidence": 50.0},
    {"type": "paste", "length": "3"},
    {"type": "paste", "length": 10**30},
    {"type": "message", "text": 5, "client_id": "c"},
    {"type": "message", "text": "hi", "client_id": 7},
])
def test_frames_are_strict(frame):
    with pytest.raises(proto.BadFrame):
        proto.parse(json.dumps(frame))


@pytest.mark.parametrize("raw", ['{"type": "verdict", "choice": "ai", "confidence": ' + "9" * 5000 + "}",
                                 "[" * 100_000 + "]" * 100_000,
                                 '{"type": "message", "text": ' + "[" * 100_000 + "]" * 100_000 + "}"])
def test_huge_numbers_and_deep_nesting_are_bad_frames(raw):
    with pytest.raises(proto.BadFrame):
        proto.parse(raw)


def test_invisible_only_messages_are_empty_and_nothing_follows_game_ended():
    g = Game.start("two-player", Rules(), 0)
    for text in ("\u200b", "\u200b\u200c\u200d\ufeff", " \u00ad\u2060 "):
        assert g.apply(Send("interrogator", text, "A"), 1).code == "empty"
    assert g.apply(Send("interrogator", "\u200bhi", "A"), 2).ok
    assert g.apply(GiveVerdict("interrogator", "ai", 50), 3).ok
    n = len(g.log)
    assert g.log[-1].type == "game_ended"
    out = g.apply(GiveVerdict("interrogator", "human", 90), 4)
    assert (out.ok, out.code, out.events) == (False, "already_decided", [])
    assert g.apply(Send("A", "late", "A"), 5).code == "game_over"
    assert g.apply(Disconnect("A"), 6).events == []
    assert g.refuse(Send("A", "rude", "A"), "blocked", "x", 7).events == []
    assert len(g.log) == n and g.log[-1].type == "game_ended"


@pytest.mark.parametrize("text", ["r\u200bude", "ru\u00adde", "ｒｕｄｅ", "rud\u0435", "r\u03c5de", "RUDE",
                                  "\U0001d42b\U0001d42e\U0001d41d\U0001d41e", "r\u2060u\u200dde!"])
async def test_the_word_filter_normalises_before_matching(text):
    f = ContentFilter(["rude"], use_default=False)
    assert await f.check(text) is not None


async def test_the_word_filter_still_matches_whole_words_only():
    f = ContentFilter(["rude"], use_default=False)
    assert await f.check("that was prudent") is None
    assert await f.check("cаfé") is None


async def test_client_ids_second_verdicts_headers_cookies_openapi_and_close_codes(sqlite_url):
    with running(study(), sqlite_url, forwarded_allow_ips="127.0.0.1") as base:  # X-Forwarded-Proto below
        seats = await in_game(await players(base, 2))
        i, w = seats["interrogator"], seats["A"]
        cid = "same-id"
        assert (await said_cid(i, "first text", cid))["type"] == "ack"
        r = await said_cid(i, "another text", cid)
        assert r["type"] == "error" and r["code"] == "client_id_reused"
        assert (await said_cid(i, "first text", cid))["type"] == "ack"  # a true resend is acked again
        await w.next("message", text="first text")
        await i.send({"type": "verdict", "choice": "ai", "confidence": 40})
        gid = (await i.phase("reveal"))["game"]["game_id"]
        await i.send({"type": "verdict", "choice": "human", "confidence": 90})
        assert (await i.next("error"))["code"] == "already_decided"
        await w.close()  # a disconnect after the end is not recorded
        await asyncio.sleep(0.3)
        async with httpx.AsyncClient(base_url=base) as c:
            r = await c.get("/")
            csp = r.headers["content-security-policy"]
            assert "connect-src 'self'" in csp and "frame-ancestors 'none'" in csp and "script-src 'self'" in csp
            assert r.headers["referrer-policy"] == "same-origin" and r.headers["x-frame-options"] == "DENY"
            assert (await c.get("/openapi.json")).status_code == 404
            r = await c.post("/start?PROLIFIC_PID=abc", headers={"X-Forwarded-Proto": "https"})
            assert "secure" in r.headers["set-cookie"].lower()
            r = await c.post("/start?PROLIFIC_PID=abd")
            assert "secure" not in r.headers["set-cookie"].lower()
            p = await WsPlayer.create(base)
            html = (await c.get(f"/p/{p.pid}")).text
            token = csrf_token(html)
            bad = await c.post(f"/p/{p.pid}/survey", json={"age": True}, headers={"X-CSRF-Token": token})
            assert bad.status_code == 422
            bad = await c.post(f"/p/{p.pid}/survey", json={"skipped": "yes"}, headers={"X-CSRF-Token": token})
            assert bad.status_code == 422
            ok = await c.post(f"/p/{p.pid}/survey", json={"age": "34"}, headers={"X-CSRF-Token": token})
            assert ok.status_code == 200, ok.text
        ws = await websockets.connect(base.replace("http", "ws", 1) + "/ws/pnosuchparticipant")
        with pytest.raises(websockets.ConnectionClosed):
            await ws.recv()
        assert ws.close_code == 4404
    with Store(sqlite_url) as store:
        events = store.events(gid)
    assert events[-1].type == "game_ended" and [e.type for e in events].count("verdict") == 1
    assert [e.payload["text"] for e in events if e.type == "message"] == ["first text"]


async def said_cid(p, text: str, cid: str) -> dict:
    p._cursor = len(p.frames)  # only frames after this send
    await p.send({"type": "message", "conv": "A", "text": text, "client_id": cid})
    return await p.next(None, client_id=cid)


def test_openapi_can_be_switched_on(sqlite_url):
    from fastapi.testclient import TestClient

    from turinglab.server.app import create_app

    with TestClient(create_app(study(), sqlite_url, openapi=True)) as c:
        assert c.get("/openapi.json").status_code == 200


async def test_the_pages_work_under_the_content_security_policy(chromium_path, sqlite_url):
    """Two real browsers, no CSP bypass: consent, a game with one message each way, the admin page;
    no CSP violation and no script error."""
    from tests.server.test_browser import DESKTOP, role, study as bstudy, type_send, world

    async with world(chromium_path, bstudy("csp"), sqlite_url) as (base, browser):
        pages, problems = [], []
        for _ in range(2):
            ctx = await browser.new_context(viewport=DESKTOP)
            page = await ctx.new_page()
            page.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            await page.goto(base + "/")
            await page.click("text=Start")
            await page.check("input[name=agree]")
            await page.click("text=Continue")
            await page.wait_for_selector("#s-idle:not([hidden])")
            await page.click("#btn-join")
            pages.append(page)
        by_role = {await role(p): p for p in pages}
        i, w = by_role["interrogator"], by_role["witness"]
        await type_send(i, "hello under csp")
        await w.wait_for_selector('.msg.theirs:has-text("hello under csp")', timeout=15000)
        await type_send(w, "hi back")
        await i.wait_for_selector('.msg.theirs:has-text("hi back")', timeout=15000)
        adm = await (await browser.new_context(viewport=DESKTOP)).new_page()
        adm.on("console", lambda m: problems.append(m.text) if "Content Security Policy" in m.text else None)
        await browser_admin_login(adm, base, "pw")
        await adm.goto(base + "/admin")
        await adm.wait_for_timeout(1500)  # admin.js refreshes with fetch (connect-src 'self')
        assert problems == []


async def test_slow_request_headers_are_cut_off_but_websockets_and_keep_alive_live_on(sqlite_url):
    import socket
    import time

    from turinglab.server.app import create_app
    from turinglab.server.slowclients import protocol_class
    from turinglab.server.testing import serve_in_thread

    base_cls = protocol_class()
    fast = type("Fast", (base_cls,), {"header_timeout_s": 1.0})
    with serve_in_thread(create_app(study(), sqlite_url), http=fast) as base:
        port = int(base.rsplit(":", 1)[1])
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the rest
        slow.settimeout(5)
        t0 = time.monotonic()
        assert slow.recv(100) == b""  # closed by the server
        assert 0.8 < time.monotonic() - t0 < 4
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await asyncio.sleep(1.8)  # an upgraded connection is not an HTTP request in progress
        await p.send({"type": "ping"})
        await p.next("pong")
        async with httpx.AsyncClient(base_url=base) as c:  # one kept-alive connection, two requests
            assert (await c.get("/healthz")).status_code == 200
            await asyncio.sleep(1.5)
            assert (await c.get("/healthz")).status_code == 200

