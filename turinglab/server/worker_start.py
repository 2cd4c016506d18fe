"""One worker of `turinglab serve --workers N` that starts like a service (issue 43).

uvicorn stops every worker when one fails to start (its app factory or lifespan raises), so a
database or Redis outage met by one worker while it starts must not raise. `WorkerApp` is what
uvicorn runs: its lifespan builds the study's app (database, migrations check, Redis secret) and
enters that app's lifespan; when that fails it logs one line, serves at once as not ready, and
tries again with back-off (0.5 s doubling to 10 s) until it works:

- `GET /healthz` answers 503 `{"ok": false, "status": "degraded", "started": false, ...}` naming
  what is away (`"database": "down"` or `"redis": "down"`);
- websockets get `error/busy` and close code 1013 (the page connects again by itself);
- any other request gets 503 with `Retry-After`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any, Callable

log = logging.getLogger("turinglab.cluster")

RETRY_FIRST_S = 0.5
RETRY_MAX_S = 10.0
LOG_EVERY_S = 30.0  # the same failure is logged again at most this often


def _away(exc: BaseException) -> str:
    """What a start-up failure says is away: "redis" or "database"."""
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__module__.split(".")[0] == "redis":
            return "redis"
        seen = seen.__cause__ or seen.__context__
    return "database"


def _reason(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


class WorkerApp:
    """The ASGI app of one worker process: the study's app once it could be built, meanwhile a
    not-ready answer to everything (see the module's text)."""

    def __init__(self, build: Callable[[], Any], before: Callable[[], Any] | None = None) -> None:
        self.build = build  # the study's app (blocking: database work), run in a thread
        self.before = before  # awaited first (the test hook that holds a worker in its start-up)
        self.app: Any = None
        self.away = "database"
        self.error = ""
        self._stack: contextlib.AsyncExitStack | None = None
        self._retry: asyncio.Task | None = None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif self.app is not None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await self._busy_socket(receive, send)
        else:
            await self._not_ready(scope, send)

    # ---- start and stop ------------------------------------------------------------
    async def _lifespan(self, receive: Callable, send: Callable) -> None:
        await receive()  # lifespan.startup
        if self.before is not None:
            await self.before()
        try:
            await self._start()
        except Exception as exc:  # noqa: BLE001 - away now: retried in the background
            self._failed(exc, first=True)
            self._retry = asyncio.create_task(self._start_later())
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        if self._retry is not None:
            self._retry.cancel()
            with contextlib.suppress(BaseException):
                await self._retry
        if self._stack is not None:
            with contextlib.suppress(Exception):
                await self._stack.aclose()
        await send({"type": "lifespan.shutdown.complete"})

    async def _start(self) -> None:
        app = await asyncio.to_thread(self.build)
        stack = contextlib.AsyncExitStack()
        try:
            await stack.enter_async_context(app.router.lifespan_context(app))
        except BaseException:
            with contextlib.suppress(Exception):
                await stack.aclose()
            raise
        self._stack, self.app = stack, app

    async def _start_later(self) -> None:
        wait, logged = RETRY_FIRST_S, time.monotonic()
        while True:
            await asyncio.sleep(wait)
            try:
                await self._start()
            except Exception as exc:  # noqa: BLE001 - still away
                if _reason(exc) != self.error or time.monotonic() - logged > LOG_EVERY_S:
                    self._failed(exc)
                    logged = time.monotonic()
                wait = min(RETRY_MAX_S, wait * 2)
                continue
            log.warning("worker started late: the %s answers again (%s was away at start)", self.away, self.away)
            return

    def _failed(self, exc: BaseException, first: bool = False) -> None:
        self.away, self.error = _away(exc), _reason(exc)
        log.warning("worker %s: the %s is not reachable (%s); not ready, retrying with back-off",
                    "cannot start" if first else "still waiting", self.away, self.error)

    # ---- while not ready -----------------------------------------------------------
    async def _not_ready(self, scope: dict, send: Callable) -> None:
        if scope["type"] != "http":
            return
        if scope["path"] == "/healthz":
            body = json.dumps({"ok": False, "status": "degraded", "started": False, self.away: "down"})
            kind = b"application/json"
        else:
            body, kind = "not ready: the server is starting, try again in a moment", b"text/plain; charset=utf-8"
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", kind), (b"retry-after", b"2"), (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": body.encode()})

    async def _busy_socket(self, receive: Callable, send: Callable) -> None:
        from turinglab.server.live import protocol as proto

        if (await receive())["type"] != "websocket.connect":
            return
        await send({"type": "websocket.accept"})
        await send({"type": "websocket.send", "text": json.dumps(proto.error("busy", proto.TEXTS["busy"]))})
        await send({"type": "websocket.close", "code": 1013, "reason": "busy, retrying"})
