"""/healthz and /admin say `degraded` when the last write of a game failed, and `disk: full` when the
failure says the disk is full (issue 43): injected here by a writer whose appends fail with ENOSPC."""

from __future__ import annotations

import errno

import httpx

from tests.server.live.test_server import FAST, in_game, players, study
from tests.server.live.test_server_integrity import said
from turinglab.server.app import create_app
from turinglab.server.testing import AdminLogin, serve_in_thread


async def test_a_failed_write_and_a_full_disk_show_on_healthz_and_admin(sqlite_url):
    app = create_app(study(), sqlite_url, rng_seed=3, human_timing=FAST, initial_ai_wait_s=0.1, admin_password="pw")
    with serve_in_thread(app) as base:
        async with httpx.AsyncClient(base_url=base) as c:
            fresh = (await c.get("/healthz")).json()
            assert fresh == {"ok": True, "database": "ok", "writes": "none", "disk": "ok"}, fresh
            seats = await in_game(await players(base, 2))
            i, w = seats["interrogator"], seats["A"]
            assert (await said(i, "hello?"))["type"] == "ack"
            ok = (await c.get("/healthz")).json()
            assert ok == {"ok": True, "database": "ok", "writes": "ok", "disk": "ok"}, ok  # no time of a write

            writer = app.state.hub.writer
            real = writer.append

            async def full(game_id, events):
                raise OSError(errno.ENOSPC, "No space left on device")
            writer.append = full
            try:
                r = await said(w, "hi there", None)
                assert r["type"] == "error" and r["code"] == "store_unavailable", r
                h = await c.get("/healthz")
                body = h.json()
                assert h.status_code == 200 and body["status"] == "degraded", body
                assert body["writes"] == "failed" and body["disk"] == "full" and body["failing_for_s"] >= 0, body
                page = (await c.get("/admin", auth=AdminLogin("pw"))).text
                assert "Health: degraded" in page and "Last write of a game: failed" in page, page[:3000]
                assert "Disk: full" in page and "No space left on device" in page
            finally:
                writer.append = real
            assert (await said(w, "hi there", None))["type"] == "ack"  # the store takes writes again
            back = (await c.get("/healthz")).json()
            assert back == {"ok": True, "database": "ok", "writes": "ok", "disk": "ok"}, back
            page = (await c.get("/admin", auth=AdminLogin("pw"))).text
            assert "Health: ok" in page and "Last write of a game: ok," in page
            for p in seats.values():
                await p.close()
