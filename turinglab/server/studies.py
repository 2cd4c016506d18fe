"""Several studies on one server (`turinglab serve --study a.yaml --study b.yaml`, issue 27).

Each study keeps its own app (`create_app` for a live study, `create_static_app` for a static one),
mounted under `/s/<slug>`: its own waiting room, admin and exports, unchanged. The app's pages
prefix their links with the mount (`root` in the templates, `data-root` for the scripts), and
`Prefixed` puts the mount in front of the app's redirects and cookie paths, so a participant
cookie or an admin login of one study is never sent to another. `/` lists the studies; `/healthz` gathers
each study's own `/healthz` (a load balancer points at the server's root).
"""

from __future__ import annotations

import re
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from turinglab.server.web import HERE, SECURITY_HEADERS, templates

PREFIX = "/s"


def slug(name: str) -> str:
    """The study's path segment: its name in lower case, runs of other characters as one '-'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@dataclass(frozen=True)
class Served:
    """One study of the server: its slug, title, kind ("live" or "static") and app."""

    slug: str
    title: str
    kind: str
    app: Any


class Prefixed:
    """ASGI wrapper of a mounted app: a redirect to `/x` goes to `<mount>/x`, and a cookie's
    `Path=/x` becomes `Path=<mount>/x` (`Path=/` becomes the mount), so each study's cookies
    stay under its own path."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        root = scope.get("root_path", "")
        if scope["type"] != "http" or not root:
            await self.app(scope, receive, send)
            return
        rb = root.encode("latin-1")

        async def prefixed(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [(k, _moved(k, v, rb)) for k, v in message.get("headers", [])]
            await send(message)

        await self.app(scope, receive, prefixed)


def _moved(key: bytes, value: bytes, root: bytes) -> bytes:
    k = key.lower()
    if k == b"location" and value.startswith(b"/") and not value.startswith(b"//") and not value.startswith(root + b"/"):
        return root + value
    if k == b"set-cookie":
        parts = value.split(b";")
        for i, part in enumerate(parts):
            name, _, path = part.strip().partition(b"=")
            if name.lower() == b"path" and path.startswith(b"/"):
                parts[i] = b" Path=" + (root if path == b"/" else root + path)
        return b";".join(parts)
    return value


def check_slugs(studies: list[tuple[str, str]]) -> None:
    """`studies`: (where it came from, study name). ValueError naming both sources when two
    studies share a slug, or the source of a name with no letters or digits."""
    seen: dict[str, tuple[str, str]] = {}
    for source, name in studies:
        s = slug(name)
        if not s:
            raise ValueError(f"{source}: the study name {name!r} has no letters or digits to make its path "
                             "from; give the study a name such as `name: my-study`")
        if s in seen:
            first, other = seen[s]
            raise ValueError(f"{first} and {source} would both be served at {PREFIX}/{s}/ (study names "
                             f"{other!r} and {name!r}); give one of them another name")
        seen[s] = (source, name)


def create_multi_app(studies: list[Served]) -> FastAPI:
    """One server for several studies: each app at `/s/<slug>/`, the list of studies at `/`.
    The studies' start-up and shutdown (database, hub, model) run with the server's."""

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        async with AsyncExitStack() as stack:
            for st in studies:
                await stack.enter_async_context(st.app.router.lifespan_context(st.app))
            yield

    app = FastAPI(title="turinglab: studies", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.state.demo = False  # base.html asks

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # noqa: ANN001, ANN202
        resp = await call_next(request)
        for k, v in SECURITY_HEADERS.items():
            resp.headers.setdefault(k, v)
        return resp

    rows = [{"slug": st.slug, "title": st.title, "kind": st.kind, "link": f"{PREFIX}/{st.slug}/"} for st in studies]

    @app.get("/", response_class=HTMLResponse)
    async def index(request: Request) -> Response:
        return templates.TemplateResponse(request, "studies.html", {"study_name": "Studies", "studies": rows})

    @app.get("/healthz")
    async def healthz() -> Response:
        """Each study's own /healthz (up, database, Redis; no counts), asked in-process: 503 when one is down."""
        import httpx

        each = {}
        for st in studies:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=st.app), base_url="http://study") as c:
                r = await c.get("/healthz")
            each[st.slug] = r.json() if r.headers.get("content-type", "").startswith("application/json") \
                else {"ok": False, "status": r.status_code}
        ok = all(h.get("ok") for h in each.values())
        return JSONResponse({"ok": ok, "studies": each}, status_code=200 if ok else 503)

    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    for st in studies:
        app.mount(f"{PREFIX}/{st.slug}", Prefixed(st.app), name=st.slug)
    return app
