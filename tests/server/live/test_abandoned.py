"""Abandoned games end in every study (issue 23): the default rules have a verdict grace; an
interrogator who closed the tab ends the game (`abandoned`) after it, freeing the AI witness's
slot; a closed tab frees the waiting room."""

from __future__ import annotations

import asyncio
import time

from tests.server.live.test_server import ELIZA
from turinglab.game.config import Allocation, Rules, Study
from turinglab.server.app import create_app
from turinglab.server.defaults import default_study
from turinglab.server.testing import WsPlayer, serve_in_thread
from turinglab.store.api import Store

GRACE_S = 2.0


def lone_ai_study() -> Study:
    """The default study's rules (no preset), one AI witness with one slot, every game an AI game."""
    d = default_study()
    rules = d.rules.model_copy(update={"verdict_grace_s": GRACE_S, "typing_min_s": 0.1, "typing_jitter_s": 0.1})
    return Study(name=d.name, format=d.format, rules=rules, witnesses=(ELIZA,),
                 allocation=Allocation(human_ratio=0.0, ai_fallback_mean_s=0.2, ai_fallback_noise_sigma=0.01,
                                       capacity={ELIZA.codename: 1}))


def test_the_default_rules_and_study_have_a_verdict_grace():
    assert Rules().verdict_grace_s is not None and 10 <= Rules().verdict_grace_s <= 300
    assert default_study().rules.verdict_grace_s == Rules().verdict_grace_s


async def wait_for(cond, timeout: float) -> float:
    t0 = time.monotonic()
    while not cond():
        assert time.monotonic() - t0 < timeout, f"not within {timeout} s"
        await asyncio.sleep(0.05)
    return time.monotonic() - t0


async def test_a_closed_interrogator_tab_ends_the_game_and_frees_the_slot(sqlite_url):
    app = create_app(lone_ai_study(), sqlite_url, rng_seed=3, initial_ai_wait_s=0.1)
    with serve_in_thread(app) as base:
        cap = app.state.hub.room.capacity
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        assert cap.in_use.get(ELIZA.codename) == 1
        await p.send({"type": "message", "conv": "A", "text": "hello there", "client_id": "c1"})
        await p.next("ack", client_id="c1")
        # a second participant waits: the only slot is taken
        q = await (await WsPlayer.create(base)).connect()
        await q.phase("idle")
        await q.send({"type": "join"})
        await asyncio.sleep(0.5)
        assert q.frames[-1].get("phase") != "game"
        t0 = time.monotonic()
        await p.close()  # the interrogator closes the tab mid-game (time limit 300 s)
        st = await q.phase("game", GRACE_S + 3)  # the freed slot goes to the waiting participant
        took = time.monotonic() - t0
        assert GRACE_S - 0.3 <= took <= GRACE_S + 3, f"the slot came free after {took:.2f} s"
        assert st["game"]["role"] == "interrogator" and cap.in_use.get(ELIZA.codename) == 1
        assert st["game"]["game_id"] != gid
        await q.close()
    with Store(sqlite_url) as s:
        ended = {g.id: g.end_reason for g in s.games() if g.status == "ended"}
    assert ended.get(gid) == "abandoned"


async def test_a_reconnect_within_the_grace_keeps_the_game(sqlite_url):
    app = create_app(lone_ai_study(), sqlite_url, rng_seed=3, initial_ai_wait_s=0.1)
    with serve_in_thread(app) as base:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await p.close()
        await asyncio.sleep(GRACE_S / 3)
        await p.connect()
        await p.phase("game")
        await asyncio.sleep(GRACE_S + 1)
        assert app.state.hub.live.get(gid) is not None  # still in progress
        await p.send({"type": "message", "conv": "A", "text": "still here", "client_id": "c2"})
        assert (await p.next("ack", client_id="c2"))["client_id"] == "c2"
        await p.close()


async def test_a_closed_tab_frees_the_waiting_room(sqlite_url):
    s = lone_ai_study().model_copy(update={"allocation": Allocation(human_ratio=1.0, lone_wait_s=600)})
    app = create_app(s, sqlite_url, rng_seed=3, waiting_grace_s=0.5)
    with serve_in_thread(app) as base:
        room = app.state.hub.room
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        await wait_for(lambda: p.pid in room.waiting, 5)
        await p.close()
        await wait_for(lambda: p.pid not in room.waiting, 3)


async def test_closing_the_interrogators_browser_mid_game_in_the_default_study_frees_the_slot(
        chromium_path, sqlite_url):
    """Done-when of issue 23, in a real browser: the default study (no preset: its rules, format and
    allocation, with its own ELIZA given one slot, every game an AI game, and its 60 s verdict grace
    shortened to GRACE_S); the interrogator's browser is closed mid-game; the game ends `abandoned`
    and a second participant, waiting in another browser, gets the slot within the grace."""
    from tests.server.test_browser import DESKTOP, newcomer, role, type_send
    from tests.static_judge_data import chromium_on

    d = default_study()
    assert d.rules.verdict_grace_s == Rules().verdict_grace_s == 60.0  # what applies when nothing is set
    eliza = next(w for w in d.witnesses if w.kind == "eliza")
    s = d.model_copy(update={
        "rules": d.rules.model_copy(update={"verdict_grace_s": GRACE_S}),
        "witnesses": (eliza,),
        "allocation": d.allocation.model_copy(update={"human_ratio": 0.0, "capacity": {eliza.codename: 1}})})
    assert s.rules.model_dump(exclude={"verdict_grace_s"}) == d.rules.model_dump(exclude={"verdict_grace_s"})
    app = create_app(s, sqlite_url, rng_seed=3, initial_ai_wait_s=0.1)
    from playwright.async_api import async_playwright

    async with chromium_on(app, chromium_path) as (browser_b, base):
        from tests.static_judge_data import BROWSER_ARGS

        async with async_playwright() as pw:  # the interrogator's own browser, closed mid-game
            browser_a = await pw.chromium.launch(executable_path=chromium_path, args=BROWSER_ARGS)
            a = await newcomer(browser_a, base, DESKTOP)
            await a.click("#btn-join")
            assert await role(a) == "interrogator"
            hub = app.state.hub
            gid = next(iter(hub.live))
            await type_send(a, "hello, are you there?")
            await a.wait_for_selector('.conv[data-conv="A"] .msg.mine')
            assert hub.room.capacity.in_use == {eliza.codename: 1}
            b = await newcomer(browser_b, base, DESKTOP)  # waits: the only slot is taken
            await b.click("#btn-join")
            await b.wait_for_selector("#s-waiting:not([hidden])")
            await asyncio.sleep(1.0)
            assert await b.is_visible("#s-waiting") and gid in hub.live
            t0 = time.monotonic()
            await browser_a.close()
        await b.wait_for_selector("#s-game:not([hidden])", timeout=(GRACE_S + 5) * 1000)
        took = time.monotonic() - t0
        assert GRACE_S - 0.3 <= took <= GRACE_S + 3, f"the slot came free after {took:.2f} s"
        assert gid not in hub.live and hub.room.capacity.in_use == {eliza.codename: 1}
        assert b.js_errors == []
        print(f"the slot came free {took:.2f} s after the browser closed (grace {GRACE_S} s)")
    with Store(sqlite_url) as st:
        g = st.game(gid)
    assert g.status == "ended" and g.end_reason == "abandoned", (g.status, g.end_reason)
