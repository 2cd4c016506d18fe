"""The demo's AI view names who wrote each AI reply (issue 35: the model, a regenerated reply, the
persona's brush-off, the fallback, the last resort), from each message event's source, and only
once the game has ended: the view is opened beside the interrogator's, so before the verdict it
says nothing of it (blinding)."""

from __future__ import annotations

import asyncio
import re

import httpx
from fastapi.testclient import TestClient

from tests.server.live.test_server import ELIZA, running, say, study
from turinglab.game.config import Study
from turinglab.game.engine import Game, GiveVerdict, Send
from turinglab.game.events import Identity
from turinglab.server.app import create_app
from turinglab.server.testing import WsPlayer
from turinglab.store.api import Store

SOURCE = re.compile(r'data-source="(\w+)">\(([^)]*)\)')


async def test_sources_appear_only_after_the_verdict(sqlite_url):
    with running(study(ratio=0.0, witnesses=(ELIZA,)), sqlite_url, demo=True) as base:
        p = await (await WsPlayer.create(base)).connect()
        await p.phase("idle")
        await p.send({"type": "join"})
        gid = (await p.phase("game"))["game"]["game_id"]
        await say(p, "I feel sad about my mother")
        reply = (await p.next("message", timeout=20, **{"from": "them"}))["text"]
        async with httpx.AsyncClient(base_url=base) as c:
            before = (await c.get(f"/demo/ai/{gid}")).text
            assert reply in before.replace("&#39;", "'") and "demo-sources-later" in before
            assert "data-source" not in before and "written by" not in before
            await p.send({"type": "verdict", "choice": "ai", "confidence": 80, "reason": "questions"})
            await p.phase("reveal")
            after = ""
            for _ in range(50):  # the game ends in the hub at once; the page reads it live or stored
                after = (await c.get(f"/demo/ai/{gid}")).text
                if "data-source" in after:
                    break
                await asyncio.sleep(0.1)
        await p.close()
    assert SOURCE.findall(after) == [("model", "written by the model, eliza")]
    assert "demo-sources-later" not in after


def test_each_source_is_named_from_the_stored_events(sqlite_url):
    """A finished demo game whose replies came from four different authors (as the AI seat records
    them), one of them from before sources were recorded."""
    s = study(ratio=0.0, witnesses=(ELIZA,))
    with TestClient(create_app(s, sqlite_url, demo=True)) as client:
        with Store(sqlite_url) as st:
            sid = st.studies()[0].id
            me = st.create_participant(label="demo")
            gid = st.create_game(sid, "two-player", {"A": Identity("ai", witness="Eliza", selection_prob=1.0)}, me,
                                 1_700_000_000_000, flags={"demo": True})
            g = Game.start("two-player", Study(name="d").rules, 1_700_000_000_000)
            authors = [{"source": "regenerated", "model": "<b>m</b>"}, {"source": "brush_off"},
                       {"source": "fallback", "model": "eliza"}, None]
            for k, author in enumerate(authors):
                t = 1_700_000_000_000 + 2000 * (k + 1)
                assert g.apply(Send("interrogator", f"question {k}", "A"), t).ok
                assert g.apply(Send("A", f"answer {k}", "A", author=author), t + 1000).ok
            assert g.apply(GiveVerdict("interrogator", "ai", 70, "x"), 1_700_000_100_000).ok
            st.append_events(gid, g.log)
        page = client.get(f"/demo/ai/{gid}").text
    assert SOURCE.findall(page) == [
        ("regenerated", "written by the model, asked again after a refused reply, &lt;b&gt;m&lt;/b&gt;"),
        ("brush_off", "written by the persona's brush-off (after a task or an accusation"),
        ("fallback", "written by the fallback witness, eliza"), ("unknown", "written by not recorded")]
    assert "<b>m</b>" not in page  # a model's name is escaped like any text
