"""Capacity honesty (issue 23 item 6): /admin shows each limited AI witness's live estimate and why
it is what it is (warm-up, the measured reply latency, the machine's load), with its changes; no
participant's page or frame carries any of it."""

from __future__ import annotations

import json
import re

import httpx

from turinglab.game.config import Allocation, Study
from turinglab.server.app import create_app
from turinglab.server.testing import AdminLogin, WsPlayer, serve_in_thread
from tests.server.live.test_server import ELIZA, FAST, RULES


def _why(admin: str) -> str:
    cell = re.search(r'<td class="cap-why">(.*?)</td>', admin, re.S)
    assert cell, admin[:2000]
    return cell.group(1)


async def test_admin_shows_why_the_capacity_estimate_changed_and_participants_never_see_it(db_url):
    s = Study(name="cap-why", rules=RULES, witnesses=[ELIZA],
              allocation=Allocation(human_ratio=0.0, capacity={"Eliza": "auto"}, ai_fallback_mean_s=0.2,
                                    ai_fallback_noise_sigma=0.01))
    app = create_app(s, db_url, rng_seed=2, human_timing=FAST, initial_ai_wait_s=0.1, admin_password="pw")
    with serve_in_thread(app) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            before = _why((await c.get("/admin", auth=AdminLogin("pw"))).text)
            assert "not measured yet" in before and "warming up" in before, before

            p = await (await WsPlayer.create(base)).connect()  # a real game: ELIZA's reply is timed
            await p.phase("idle")
            await p.send({"type": "join"})
            await p.phase("game", timeout=20)
            await p.send({"type": "message", "conv": "A", "text": "hello, who are you?", "client_id": "c1"})
            await p.next("ack", client_id="c1")
            await p.next("message", timeout=15)
            page = (await c.get(f"/p/{p.pid}")).text

            admin = (await c.get("/admin", auth=AdminLogin("pw"))).text
            first = _why(admin)
            assert "first live timing" in first and "a whole reply in" in first, first
            assert "load average" in first  # Linux has one: the change names the load it was measured at
            est = app.state.hub.room.capacity.estimates["Eliza"]
            assert est.limit > 1 and est.changes[-1]["from"] == 1 and est.changes[-1]["to"] == est.limit
            assert f"1 → {est.limit}" in admin  # the change is listed

            # the input changes: replies become far slower (as under load); the reason follows
            old = est.limit
            app.state.hub.room.capacity.observe("Eliza", 50.0, 1, load=7.5, at_ms=1_700_000_000_000)
            admin = (await c.get("/admin", auth=AdminLogin("pw"))).text
            slower = _why(admin)
            assert slower != first and "measured reply latency rose" in slower and "load average 7.5" in slower, slower
            assert est.limit < old and f"{old} → {est.limit}" in admin and "22:13:20 UTC" in admin
            assert f"floor(0.7 × {est.delay_s:.2f} s ÷ {est.t1_s:.2f} s) = {est.limit}" in slower

        await p.send({"type": "verdict", "choice": "ai", "confidence": 80, "reason": "quick"})
        await p.phase("reveal")
        await p.close()
    seen = json.dumps(p.frames) + page  # what the participant received: none of the estimate
    for word in ("load average", "reply latency", "warming up", "capacity", "first live timing"):
        assert word not in seen, word


async def test_the_timed_reply_at_start_gives_the_first_reason(sqlite_url):
    """The server's calibration (one timed reply after the warm-up) is named as the reason, with the load."""
    s = Study(name="cap-cal", rules=RULES, witnesses=[ELIZA],
              allocation=Allocation(human_ratio=0.0, capacity={"Eliza": "auto"}))
    app = create_app(s, sqlite_url, rng_seed=2, human_timing=FAST, admin_password="pw")
    with serve_in_thread(app):
        hub = app.state.hub
        est = hub.room.capacity.estimates["Eliza"]
        assert est.changes == [] and "warming up" in est.why
        await hub._calibrate(ELIZA)  # a real ELIZA reply, timed as the local model's is at start
    assert est.why.startswith("timed at start, after the model's warm-up: a whole reply in ")
    assert "load average" in est.why and est.samples == 1
    assert est.changes and est.changes[-1]["from"] == 1 and est.changes[-1]["to"] == est.limit > 1
    assert isinstance(est.changes[-1]["at_ms"], int)
