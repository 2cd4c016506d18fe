"""Run the app for real (uvicorn on a free loopback port, in a thread): for tests and benchmarks."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from fastapi import FastAPI


WS_MAX_BYTES = 64 * 1024  # no protocol frame comes near this; larger ones are refused


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_in_thread(app: FastAPI, port: int | None = None, **uvicorn_kw) -> Iterator[str]:
    """Start `app` on 127.0.0.1 and yield its base URL; stop it on exit."""
    port = port or free_port()
    from turinglab.server.slowclients import protocol_class

    uvicorn_kw.setdefault("http", protocol_class())
    from turinglab.server.proxies import proxy_settings

    for k, v in proxy_settings(uvicorn_kw.pop("forwarded_allow_ips", None)).items():
        uvicorn_kw.setdefault(k, v)
    uvicorn_kw.setdefault("log_level", "warning")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, lifespan="on",
                            ws_ping_interval=None, ws_max_size=WS_MAX_BYTES, **uvicorn_kw)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the test server did not start on port {port}")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def csrf_token(html: str) -> str:
    """The participant's form token in a consent or game page (`csrf` field / `data-csrf`)."""
    import re

    m = re.search(r'(?:name="csrf" value|data-csrf)="([0-9a-f]+)"', html)
    if m is None:
        raise ValueError("no form token in the page")
    return m.group(1)


async def give_consent(client, pid: str, base: str = "") -> None:  # noqa: ANN001 - an httpx.AsyncClient
    """Consent as the browser does: load the consent page, post the form with its token (at `base`,
    or the client's own base URL)."""
    token = csrf_token((await client.get(f"{base}/p/{pid}")).text)
    r = await client.post(f"{base}/p/{pid}/consent", data={"agree": "yes", "csrf": token})
    if r.status_code != 303:
        raise RuntimeError(f"consent of {pid} failed: {r.status_code} {r.text[:200]}")


class WsPlayer:
    """A scripted participant over a real websocket: records every frame it receives."""

    def __init__(self, base: str, pid: str) -> None:
        self.base = base
        self.pid = pid
        self.frames: list[dict] = []
        self.recv_times: list[float] = []  # time.monotonic() of each frame
        self._cursor = 0
        self._new = None
        self.ws = None
        self._reader = None

    @classmethod
    async def create(cls, base: str, consent: bool = True, query: str = "",
                     headers: dict[str, str] | None = None) -> "WsPlayer":
        import httpx

        async with httpx.AsyncClient(base_url=base, timeout=30) as c:
            r = await c.post("/start" + query, headers=headers)
            pid = r.headers["location"].rsplit("/", 1)[-1]
            if consent:
                await give_consent(c, pid)
        return cls(base, pid)

    async def connect(self) -> "WsPlayer":
        import asyncio

        import websockets

        self._new = asyncio.Event()
        self.ws = await websockets.connect(self.base.replace("http", "ws", 1) + f"/ws/{self.pid}", max_queue=None)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        import json

        try:
            async for raw in self.ws:
                self.frames.append(json.loads(raw))
                self.recv_times.append(time.monotonic())
                self._new.set()
        except Exception:  # noqa: BLE001 - closed
            pass

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            await self._reader

    async def send(self, obj: dict | str) -> None:
        import json

        await self.ws.send(obj if isinstance(obj, str) else json.dumps(obj))

    async def next(self, type_: str | None = None, timeout: float = 10.0, **match) -> dict:
        """The next unread frame of `type_` (and matching fields); earlier frames are skipped."""
        import asyncio

        deadline = time.monotonic() + timeout
        while True:
            while self._cursor < len(self.frames):
                f = self.frames[self._cursor]
                self._cursor += 1
                if (type_ is None or f.get("type") == type_) and all(f.get(k) == v for k, v in match.items()):
                    return f
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{self.pid}: no {type_} frame {match or ''} within {timeout} s; "
                                   f"last frames: {self.frames[-3:]}")
            self._new.clear()
            try:
                await asyncio.wait_for(self._new.wait(), left)
            except TimeoutError:
                pass

    async def phase(self, phase: str, timeout: float = 10.0) -> dict:
        return await self.next("state", timeout, phase=phase)


class AdminLogin(httpx.Auth):
    """httpx auth for the admin pages: when a request is sent to the login form, log in with the
    form (account `name`, default the $TURINGLAB_ADMIN_PASSWORD account) and send it again; a wrong
    password gives the login's own answer (401, 429). The client keeps the session cookie."""

    requires_request_body = requires_response_body = False

    def __init__(self, password: str, name: str = "admin") -> None:
        self.password, self.name = password, name

    def _login(self, request):  # noqa: ANN001, ANN202
        return httpx.Request("POST", request.url.copy_with(path="/admin/login", query=None),
                             data={"name": self.name, "password": self.password, "next": "/admin"},
                             headers={"Cookie": request.headers.get("Cookie", "")} if "Cookie" in request.headers else {})

    def _flow(self, request):  # noqa: ANN001, ANN202
        response = yield request
        if response.status_code != 303 or not response.headers.get("location", "").startswith("/admin/login"):
            return
        login = yield self._login(request)
        if login.status_code != 303:
            return
        jar = dict(c.split("=", 1) for c in request.headers.get("Cookie", "").split("; ") if "=" in c)
        jar.update(login.cookies.items())
        request.headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in jar.items())
        yield request

    def auth_flow(self, request):  # noqa: ANN001, ANN201
        yield from self._flow(request)


async def browser_admin_login(page, base: str, password: str, name: str = "admin") -> None:  # noqa: ANN001
    """Log a Playwright page in to /admin with the login form."""
    await page.goto(f"{base}/admin/login")
    await page.fill("input[name=name]", name)
    await page.fill("input[name=password]", password)
    await page.click("button[type=submit]")
    await page.wait_for_url(f"{base}/admin")


async def prolific_start(client, query: str):  # noqa: ANN001, ANN201 - httpx.AsyncClient -> Response
    """A Prolific link as a browser follows it (issue 24): GET /?query shows the Start button (or
    sends a returning browser to its link), and the button POSTs /start?query."""
    r = await client.get("/?" + query)
    if r.status_code != 200:
        return r
    assert 'action="/start?' in r.text, r.text[:300]
    return await client.post("/start?" + query)


async def lone_player_in_game(app: FastAPI, base: str, warm_s: float = 30) -> WsPlayer:
    """After the app's warm-up (the persona guard trains then; its first use would make a reply late),
    one participant joins and is in a game: with no other human that is an AI game."""
    for _ in range(int(warm_s * 10)):
        if app.state.hub._warm_task.done():
            break
        await asyncio.sleep(0.1)
    p = await (await WsPlayer.create(base)).connect()
    await p.phase("idle")
    await p.send({"type": "join"})
    await p.phase("game", timeout=10)
    return p
