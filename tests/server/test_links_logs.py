"""Issue 24 items 3 and 5: participant tokens out of the logs, pseudonyms on /admin, participants
made only by a same-site POST, POST /start limited per address; a failing /healthz logs once per
outage, and every kind of log line has a bounded rate under a flood."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from types import SimpleNamespace

import httpx
from sqlalchemy import create_engine

from turinglab.analysis.export.pseudonyms import export_key, keyed
from turinglab.server.app import create_app
from turinglab.server.guards import START_BURST
from turinglab.server.logs import RateCap, install, token_hash
from turinglab.server.testing import AdminLogin, WsPlayer, serve_in_thread
from turinglab.store.api import Store
from tests.server.live.test_server import FAST, study


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def text(self) -> list[str]:
        return [r.getMessage() for r in self.records]


@contextmanager
def captured(*names: str):
    h = Lines()
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.addHandler(h)
        lg.setLevel(logging.INFO)
    try:
        yield h
    finally:
        for lg, lvl in zip(loggers, levels):
            lg.removeHandler(h)
            lg.setLevel(lvl)


def _app(url, **kw):
    return create_app(study(), url, rng_seed=1, human_timing=FAST, initial_ai_wait_s=0.1, admin_password="pw", **kw)


async def _participants(url) -> int:
    with Store(url) as s:
        return len(s.participants())


async def test_tokens_never_reach_the_logs_and_admin_shows_pseudonyms(db_url):
    web = _app(db_url)
    with serve_in_thread(web, log_level="info") as base, \
            captured("uvicorn.access", "uvicorn.error", "turinglab.server") as lines:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        await p.phase("waiting")
        async with httpx.AsyncClient(base_url=base) as c:
            assert (await c.get(f"/p/{p.pid}")).status_code == 200
            await c.post(f"/p/{p.pid}/decline")  # refused (no form token): logged with the path
            assert (await c.get("/p/pdeadbeefdeadbeef")).status_code == 404
            admin = (await c.get("/admin", auth=AdminLogin("pw"))).text
        await p.close()
        with Store(db_url) as s:
            key = export_key(s)
    assert p.pid not in admin and keyed(p.pid, key) in admin  # the waiting room shows pseudonyms
    text = "\n".join(lines.text())
    assert f"/p/{token_hash(p.pid)}" in text and f"/ws/{token_hash(p.pid)}" in text  # access and websocket lines
    assert "refused a POST to /p/" + token_hash(p.pid) in text
    assert p.pid not in text and "pdeadbeefdeadbeef" not in text


async def test_a_link_from_another_site_creates_nobody_and_keeps_the_cookie(db_url):
    with serve_in_thread(_app(db_url)) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            first = await c.post("/start")
            mine = first.headers["location"].rsplit("/", 1)[1]
            n = await _participants(db_url)
            r = await c.get("/?PROLIFIC_PID=victim&STUDY_ID=s&SESSION_ID=x",
                            headers={"Sec-Fetch-Site": "cross-site", "Referer": "https://evil.example/"})
            assert r.status_code == 200 and "set-cookie" not in r.headers
            assert 'action="/start?PROLIFIC_PID=victim&amp;STUDY_ID=s&amp;SESSION_ID=x"' in r.text  # the button
            assert await _participants(db_url) == n and c.cookies["turinglab_p"] == mine
            r = await c.post("/start?PROLIFIC_PID=victim", headers={"Origin": "https://evil.example"})
            assert r.status_code == 403 and await _participants(db_url) == n and c.cookies["turinglab_p"] == mine
            r = await c.post("/start?PROLIFIC_PID=victim")  # the button, on this site
            assert r.status_code == 303 and await _participants(db_url) == n + 1
            made = r.headers["location"].rsplit("/", 1)[1]
            r = await c.get("/?PROLIFIC_PID=victim")  # the same browser comes back to its participant
            assert r.headers["location"] == f"/p/{made}" and await _participants(db_url) == n + 1


async def test_post_start_is_limited_per_address_with_a_clear_page(db_url):
    web = _app(db_url, bot_token="bot-secret")
    with serve_in_thread(web) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            codes = [(await c.post("/start", headers={"X-Forwarded-For": f"10.1.{n}.1"})).status_code
                     for n in range(START_BURST + 5)]
            assert codes[:START_BURST] == [303] * START_BURST and set(codes[START_BURST + 1:]) == {429}
            r = await c.post("/start")
            assert r.status_code == 429 and "Wait" in r.text and "press Start again" in r.text
            assert 1 <= int(r.headers["Retry-After"]) <= 3
            assert (await c.post("/start", headers={"X-Turinglab-Bot": "bot-secret"})).status_code == 303
    assert await _participants(db_url) <= START_BURST + 3


async def test_a_failing_health_check_logs_once_per_outage(sqlite_url, tmp_path):
    web = _app(sqlite_url)
    with serve_in_thread(web) as base, captured("turinglab.server") as lines:
        async with httpx.AsyncClient(base_url=base) as c:
            real = web.state.store
            web.state.store = SimpleNamespace(engine=create_engine(f"sqlite:///{tmp_path}/no/such/dir/x.db"))
            try:
                for _ in range(200):
                    assert (await c.get("/healthz")).status_code == 503
            finally:
                web.state.store = real
            for _ in range(3):
                assert (await c.get("/healthz")).status_code == 200
    health = [r for r in lines.records if "health check" in r.getMessage()]
    assert [r.levelno for r in health] == [logging.ERROR, logging.WARNING], lines.text()
    assert all(r.exc_info is None for r in health) and "answers again" in health[1].getMessage()


async def test_every_log_line_has_a_bounded_rate_under_a_flood(sqlite_url):
    now = [0.0]
    cap = install(RateCap(per_kind=10, total=40, period_s=10.0, clock=lambda: now[0]))
    try:
        with serve_in_thread(_app(sqlite_url), log_level="info") as base, \
                captured("uvicorn.access", "turinglab.server") as lines:
            async with httpx.AsyncClient(base_url=base) as c:
                for _ in range(150):  # cross-site POSTs: a warning and an access line each
                    await c.post("/start", headers={"Origin": "https://evil.example"})
                for _ in range(100):
                    await c.get("/healthz")
                refused = [t for t in lines.text() if t.startswith("refused a POST")]
                access = [r for r in lines.records if r.name == "uvicorn.access"]
                assert len(refused) == 10 and len(lines.records) <= 40
                assert 0 < len(access) <= 20
                now[0] += 10.5  # the next window: the first line of a kind says how many were left out
                await c.post("/start", headers={"Origin": "https://evil.example"})
                assert any("[140 more line(s) like this were left out]" in t for t in lines.text()[-2:])
    finally:
        install(RateCap())  # the default cap again
    assert cap is not None


def test_the_start_limit_setting(monkeypatch):
    from turinglab.server.app import PerAddress

    monkeypatch.setenv("TURINGLAB_START_LIMIT", "off")
    assert all(PerAddress().wait("h") == 0 for _ in range(100))
    monkeypatch.setenv("TURINGLAB_START_LIMIT", "2/0.001")
    lim = PerAddress()
    assert [lim.wait("h") == 0 for _ in range(3)] == [True, True, False] and lim.wait("other") == 0
    monkeypatch.setenv("TURINGLAB_START_LIMIT", "lots")
    import pytest

    with pytest.raises(ValueError, match="BURST/PER_S"):
        PerAddress()
