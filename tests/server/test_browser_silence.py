"""The page (game.js) in Debian chromium: a connection that goes silent without closing (a host or
its network gone behind a proxy, which keeps the browser's side open) is dropped and made again;
a connection whose pings are answered is kept. The page's clock is Playwright's, moved on by hand."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from tests.server.live import tcp_relay
from tests.server.test_browser import DESKTOP, study
from tests.static_judge_data import BROWSER_ARGS
from turinglab.server.app import create_app
from turinglab.server.testing import free_port, serve_in_thread

pytestmark = pytest.mark.browser


async def test_a_silent_connection_is_made_again_and_a_live_one_kept(chromium_path, sqlite_url):
    from playwright.async_api import async_playwright

    app = create_app(study("silence"), sqlite_url, rng_seed=1)
    with serve_in_thread(app) as base:
        port = free_port()  # the browser reaches the server through a relay that can be frozen (SIGSTOP)
        relay = tcp_relay.start("127.0.0.1", port, "127.0.0.1", int(base.rsplit(":", 1)[1]))
        try:
            async with async_playwright() as pw:
                browser = await pw.chromium.launch(executable_path=chromium_path, args=BROWSER_ARGS)
                try:
                    page = await (await browser.new_context(bypass_csp=True, viewport=DESKTOP)).new_page()
                    sockets: list = []
                    page.on("websocket", lambda ws: sockets.append(ws))
                    await page.clock.install()
                    await page.goto(f"http://127.0.0.1:{port}/")
                    await page.click("text=Start")
                    await page.check("input[name=agree]")
                    await page.click("text=Continue")
                    await page.wait_for_selector("#s-idle:not([hidden])")
                    assert len(sockets) == 1
                    for _ in range(4):  # 80 s of pings, each answered: the connection is kept
                        await page.clock.run_for(20_000)
                        await asyncio.sleep(1.0)
                    assert len(sockets) == 1 and not sockets[0].is_closed()
                    os.kill(relay.pid, signal.SIGSTOP)  # silence: nothing closes, nothing arrives
                    try:
                        for _ in range(3):  # 60 s: the third ping finds 50 s without a frame
                            await page.clock.run_for(20_000)
                            await asyncio.sleep(0.5)
                        assert len(sockets) == 2, "the page kept a connection that had been silent for 60 s"
                        assert await page.is_visible("#conn")  # "connecting…" is shown meanwhile
                    finally:
                        os.kill(relay.pid, signal.SIGCONT)
                    await page.wait_for_function("document.getElementById('conn').hidden", timeout=15_000)
                finally:
                    await browser.close()
        finally:
            relay.kill()
            relay.wait()
