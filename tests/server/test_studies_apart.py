"""Issue 35.5: participants belong to their study, on one server with several studies. A token of
study A opens nothing of study B (404, no consent carried over); a Prolific id that took part in B
is admitted to C unless C excludes B's participants (`exclude_participants_of`), and B's own
`block_repeat` screens it out of B only; B's /admin/game shows nothing of A's games; demo games
are left out of a study's admin counts and exports."""

from __future__ import annotations

import re

import httpx

from tests.server.live.test_server import ELIZA, FAST, study
from turinglab.game.config import Prolific, Study
from turinglab.server.app import create_app
from turinglab.server.studies import Served, create_multi_app
from turinglab.server.testing import serve_in_thread
from turinglab.store.api import Store

PP = "5f0c1a2b3c4d5e6f70819a2b"


def q(pp: str = PP) -> str:
    return f"?PROLIFIC_PID={pp}&STUDY_ID=st&SESSION_ID=se"


async def start(c: httpx.AsyncClient, mount: str, query: str = "") -> httpx.Response:
    landing = await c.get(f"{mount}/{query}")
    return await c.post(f"{mount}/start{query}", headers={"Origin": str(c.base_url)}) if landing.status_code == 200 \
        else landing


async def test_studies_keep_their_participants_apart(sqlite_url):
    def named(name: str, **kw) -> Study:
        return study(witnesses=(ELIZA,)).model_copy(update={"name": name, **kw})

    a, c_ = named("study-a"), named("study-c")
    b = named("study-b", prolific=Prolific(block_repeat=True))
    d = named("study-d", exclude_participants_of=("study-b",))
    apps = [create_app(s, sqlite_url, human_timing=FAST, admin_password="pw", rng_seed=1) for s in (a, b, c_, d)]
    web = create_multi_app([Served(x.name, x.name, "live", w) for x, w in zip((a, b, c_, d), apps)])
    with serve_in_thread(web) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            r = await start(c, "/s/study-a")
            assert r.status_code == 303, r.text[:300]
            token = r.headers["location"].rsplit("/", 1)[1]
            tok = re.search(r'name="csrf" value="(\w+)"', (await c.get(f"/s/study-a/p/{token}")).text).group(1)
            assert (await c.post(f"/s/study-a/p/{token}/consent", data={"agree": "yes", "csrf": tok},
                                 headers={"Origin": base})).status_code in (200, 303)
            # the token of A in B: nothing (no play page, no consent carried over)
            r = await c.get(f"/s/study-b/p/{token}")
            assert r.status_code == 404 and "Link not found" in r.text
            # a Prolific id that took part in B
            async with httpx.AsyncClient(base_url=base) as first:
                r = await start(first, "/s/study-b", q())
                assert r.status_code == 303 and "/p/" in r.headers["location"]
            async with httpx.AsyncClient(base_url=base) as other:  # another browser, same id
                r = await start(other, "/s/study-b", q())
                assert "You have taken part already" in r.text  # B's own block_repeat
                r = await start(other, "/s/study-c", q())
                assert r.status_code == 303 and "/p/" in r.headers["location"]  # C does not exclude B
                r = await start(other, "/s/study-d", q())
                assert "You have taken part already" in r.text  # D excludes B's participants
        with Store(sqlite_url, upgrade=False) as store:
            studies = {s.name: s.id for s in store.studies()}
            made = {p.study for p in store.participants() if p.prolific_pid == PP}
            assert made == {"live:study-b", "live:study-c"}
            gid = store.create_game(studies["study-a"], "two-player",
                                    {"A": {"kind": "ai", "witness": ELIZA.codename, "selection_prob": 1.0}}, token, 1)
            demo = store.create_game(studies["study-b"], "two-player",
                                     {"A": {"kind": "ai", "witness": ELIZA.codename, "selection_prob": 1.0}}, None, 2,
                                     flags={"demo": True})
        async with httpx.AsyncClient(base_url=base) as adm:
            for mount in ("/s/study-a", "/s/study-b"):  # each study's own admin login (cookie under its mount)
                r = await adm.post(f"{mount}/admin/login", data={"name": "admin", "password": "pw", "next": "/admin"})
                assert r.status_code == 303, r.text[:200]
            r = await adm.get(f"/s/study-b/admin/game/{gid}")
            assert r.status_code == 404 and token not in r.text and ELIZA.codename not in r.text
            assert (await adm.get(f"/s/study-a/admin/game/{gid}")).status_code == 200
            games = await adm.get("/s/study-b/admin/export/games.csv")
            assert games.status_code == 200 and demo not in games.text  # a demo game is not the study's
