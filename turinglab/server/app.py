"""The FastAPI app: participant pages, the game websocket, admin. Build it with `create_app`."""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request, WebSocket
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.websockets import WebSocketDisconnect

from turinglab import i18n
from turinglab.game.config import Study, Timing, consent_version
from turinglab.i18n import N_
from turinglab.server.live import protocol as proto
from turinglab.server.content_filter import ComposedFilter, ModerationHook
from turinglab.server.live.hub import Clock, Hub, WitnessFactory
from turinglab.server.web import (
    COOKIE, DEFAULT_DISPLAY_NAME, PROLIFIC, SECURITY_HEADERS, Csrf, _db_ping,
    add_consent_routes, add_survey_route, csrf_refusal, page_renderers,
)
from turinglab.store import admin_log
from turinglab.store.api import Store
from turinglab.store.payments import verified
from turinglab.server.guards import HealthLog, PerAddress, TokenBucket, returning, too_many_starts

BOT_HEADER = "X-Turinglab-Bot"
DEFAULT_CONSENT = N_(
    "This is a research study about how people tell humans from AI systems in conversation.\n\n"
    "You will chat with other participants or with AI programs for a few minutes per game, and judge "
    "whether your partner is a human or an AI. Your messages, verdicts and optional survey answers are "
    "stored under a random identifier and used for research; do not share personal information in the chat.\n\n"
    "Taking part is voluntary: you can stop at any time by closing the page. Abusive messages are blocked, "
    "and you can report abuse at any time."
)
log = logging.getLogger("turinglab.server")
# what a new arrival (or the personal page) says while they may not start a game (issue 27)
GATE_PAGES = {
    # paused is for a while: come back with the same link, so no completion code and no redirect
    "paused": (N_("The study is paused"), N_("New games are not starting at the moment. Please try again a little "
               "later with the same link; nothing has been recorded for you yet.")),
    # full is for good: the `returned` code, and the browser goes back to the study site
    "full": (N_("The study is full"), N_("Enough people have taken part, so no new games start. Thank you for your interest.")),
    "blocked": (N_("You can no longer take part"), N_("The researchers have ended your part in this study. You can close this page.")),
}
DONE_TEXTS = {"completed": N_("Thank you for taking part."),
              "timed_out": N_("Nobody else arrived in time for a game. Thank you for waiting."),
              "returned": N_("No game could start for you. Thank you for your time.")}


RATE_BURST, RATE_PER_S = 20, 5.0  # frames a participant may send at once / per second after that (all connections)


class WitnessSetupError(ValueError):
    """An AI witness of the study cannot be built (bad prompt, persona, events file, script, key)."""


def check_witnesses(study: Study, witness_factory: WitnessFactory | None = None) -> None:
    """Build every AI witness of the study once, so a bad prompt/persona/events file/script
    stops the server at start with `WitnessSetupError` (one line: which witness, what is wrong,
    what to do) instead of failing a game later."""
    from turinglab.server.live.hub import default_witness_factory

    factory = witness_factory or default_witness_factory
    for spec in study.witnesses:
        try:
            factory(spec, 0)  # nothing is opened yet (clients connect on first use)
        except Exception as exc:  # noqa: BLE001 - any failure here is the study's configuration
            why = " ".join(str(exc).split()) or type(exc).__name__
            raise WitnessSetupError(
                f"witness {spec.codename!r} ({spec.kind}) cannot be built: {why} -- fix this witness in the "
                f"study file (or remove it), then start the server again") from None


def create_app(study: Study, db_url: str | None = None, *, clock: Clock | None = None,
               rng_seed: int | None = None, human_timing: Timing | None | str = "study",
               witness_factory: WitnessFactory | None = None, moderation: ModerationHook | None = None,
               admin_password: str | None = None, admin_accounts: str | None = None, waiting_grace_s: float = 15.0,
               initial_ai_wait_s: float = 10.0, warm_up: bool = False, secret: str | None = None,
               trusted_origins: tuple[str, ...] = (), openapi: bool | None = None,
               demo: bool = False,
               bot_token: str | None = None, redis_url: str | None = None,
               redis_prefix: str | None = None, admin_poll_s: float = 1.0) -> FastAPI:
    """The turinglab web app for one study. `db_url` None: $DATABASE_URL or ./turinglab.db.

    Migrations run when the app starts. Human witnesses' replies follow the study's
    `rules.human_witness_timing` ("relay": as typed; "equalised": held to `rules.human_witness_delay`);
    under "equalised" a `human_timing` Timing replaces that delay and None turns it off (benchmarks
    only: it breaks the blinding of timing).
    `admin_password` None: read $TURINGLAB_ADMIN_PASSWORD (the account `admin`); `admin_accounts`
    None: $TURINGLAB_ADMIN_ACCOUNTS (a file of named accounts, turinglab/server/admin_auth.py). `warm_up` loads the local model at start.
    `secret` signs the participants' form tokens (None: $TURINGLAB_SECRET, else random per process);
    `trusted_origins` (and $TURINGLAB_TRUSTED_ORIGINS, comma-separated) are origins besides the
    request's own `Host` whose POSTs are accepted (e.g. the public URL behind a proxy that rewrites Host).
    `openapi` serves /openapi.json (None: only when $TURINGLAB_OPENAPI=1; off by default).
    `bot_token` (None: $TURINGLAB_BOT_TOKEN; unset: no bots) lets `turinglab bots` mark its
    participants as bots: a POST /start with header `X-Turinglab-Bot: <token>`. A wrong or missing
    token gets an ordinary participant and the same response, so nobody learns anything from trying.
    `redis_url`: one worker of several serving the study together (PostgreSQL only; see
    turinglab/server/live/cluster.py and docs/deploy.md); `redis_prefix` names its keys (default
    `turinglab:<study name>`).
    `demo` (`turinglab serve --demo`): every page says so, every game is flagged `demo` (left out of
    analyses and exports), and /demo opens every role in one browser (turinglab/server/demo.py).
    """
    bot_secret = bot_token if bot_token is not None else os.environ.get("TURINGLAB_BOT_TOKEN") or None
    check_witnesses(study, witness_factory)  # WitnessSetupError before anything is stored
    store = Store(db_url)  # migrates
    study_id = store.register_study(study)  # StudyFrozen if its config changed after games were played
    hub_kw: dict[str, Any] = {}
    hub_class = Hub
    if redis_url:
        from turinglab.server.live.cluster import ClusterHub
        from turinglab.server.live.cluster_redis import check_cluster_db, check_cluster_study, shared_secret

        check_cluster_study(study)
        check_cluster_db(store.url)
        hub_class = ClusterHub
        hub_kw = {"redis_url": redis_url, "prefix": redis_prefix or f"turinglab:{study.name}"}
        if not (secret or os.environ.get("TURINGLAB_SECRET")):
            secret = shared_secret(redis_url, hub_kw["prefix"])

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        app.state.hub = hub_class(study, store, clock=clock, rng_seed=rng_seed, human_timing=human_timing,
                            witness_factory=witness_factory,
                            content_filter=ComposedFilter(study.content_filter, hook=moderation, language=study.language),
                            demo=demo,
                            waiting_grace_s=waiting_grace_s, initial_ai_wait_s=initial_ai_wait_s,
                            study_id=study_id, admin_poll_s=admin_poll_s, **hub_kw)
        if redis_url:
            await app.state.hub.start()
        if warm_up:
            app.state.hub.warm_up()
        try:
            yield
        finally:
            await app.state.hub.close()
            store.close()

    if openapi is None:
        openapi = os.environ.get("TURINGLAB_OPENAPI") == "1"
    app = FastAPI(title=f"turinglab: {study.name}", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url="/openapi.json" if openapi else None)

    @app.middleware("http")
    async def security_headers(request: Request, call_next):  # noqa: ANN001, ANN202
        resp = await call_next(request)
        for k, v in SECURITY_HEADERS.items():
            resp.headers.setdefault(k, v)
        if request.url.scheme == "https":
            resp.headers.setdefault("Strict-Transport-Security", "max-age=31536000")
        return resp
    app.state.study = study
    app.state.store = store
    from turinglab.server.logs import install

    install()  # participant tokens out of the logs, every kind of line at a bounded rate
    health = app.state.health_log = HealthLog()
    starts = app.state.start_limit = PerAddress()
    csrf = app.state.csrf = Csrf(secret, trusted_origins)
    page, message = page_renderers(app, study.display_name or DEFAULT_DISPLAY_NAME, study.language)
    _ = app.state.gettext  # this study's language
    app.state.demo = demo  # base.html: the demo banner on every page, admin's too

    def hub(request: Request) -> Hub:
        return request.app.state.hub

    def prolific(request: Request) -> dict[str, str] | Response:
        """The Prolific ids of the link, or a 400 page when one is not text the store can hold."""
        ids = {k: request.query_params[q][:64] for q, k in PROLIFIC.items() if request.query_params.get(q)}
        bad = [q for q, k in PROLIFIC.items() if k in ids and not proto.storable(ids[k])]
        if bad:
            return message(request, _("Link not valid"), _("The link's %(fields)s contains characters that are "
                           "not allowed. Please open the study again from Prolific.", fields=", ".join(bad)), 400)
        if ids.get("prolific_pid") and not verified(ids["prolific_pid"]):  # kept, shown on /admin, never paid
            log.warning("a link's PROLIFIC_PID is not a Prolific id (24 lowercase hex characters): kept as an "
                        "unverified id, never paid automatically")
        return ids

    def forged(request: Request, pid: str | None = None, json: bool = False) -> Response | None:
        """A refusal if this POST came from another site or lacks the participant's token, else None."""
        return csrf_refusal(csrf, message, request, pid, getattr(request.state, "csrf_field", None), json)

    async def posted(request: Request, token: str, csrf_field: str | None) -> tuple[Any, Response | None]:
        """The participant of a form POST, and its refusal (unknown link, forged) or None."""
        p = await hub(request).person(token)
        if p is None:
            return None, message(request, _("Link not found"), _("This personal link is not valid."), 404)
        request.state.csrf_field = csrf_field
        return p, forged(request, p.id)

    def ending(request: Request, outcome: str | None, heading: str, text: str, status: int = 200,
               withdraw: dict[str, str] | None = None) -> Response:
        """A page that ends the participant's part: the study's completion code of `outcome`
        (study file `prolific.completion_codes`), shown, then the browser goes on to its link."""
        from turinglab.server.withdrawal import going_on

        code = study.completion_code(outcome) if outcome else None
        link = study.completion_link(outcome) if code else None
        return message(request, _(heading), _(text), status, code=code, link=link,
                       link_text=_("Continue to the study site"), withdraw=withdraw, **going_on(study, link, withdraw))

    def turned_away(request: Request, gate: str) -> Response:
        heading, text = GATE_PAGES[gate]
        if gate == "paused":
            q = request.url.query  # the Prolific ids of the link, kept for the next try
            return message(request, heading, text, link="/" + (f"?{q}" if q else ""), link_text="Try again")
        return ending(request, None if gate == "blocked" else "returned", heading, text)

    async def arrival_refused(request: Request, ids: dict[str, str]) -> Response | None:
        """A new arrival's refusal: the study paused or full, a blocked or (when the study says so)
        repeated Prolific id; None: welcome."""
        pp = ids.get("prolific_pid")
        if pp:
            store = request.app.state.store
            same = await asyncio.to_thread(admin_log.same_prolific_id, store, pp, hub(request).study_key)
            if hub(request).admin.blocked.intersection(same):  # a blocked person with a fresh browser
                return turned_away(request, "blocked")
            others = tuple(f"{kind}:{n}" for n in study.exclude_participants_of for kind in ("live", "static"))
            before = others and await asyncio.to_thread(admin_log.same_prolific_id, store, pp, None, others)
            if (same and study.prolific is not None and study.prolific.block_repeat) or before:
                return ending(request, "screened_out", N_("You have taken part already"),
                              N_("This study takes each person once, and you have started it before. Thank you for your interest."))
        gate = hub(request).admin.gate(None)
        return turned_away(request, gate) if gate else None

    def to_player(pid: str, request: Request) -> RedirectResponse:
        r = RedirectResponse(f"/p/{pid}", status_code=303)
        r.set_cookie(COOKIE, pid, max_age=60 * 60 * 24 * 90, httponly=True, samesite="lax",
                     secure=request.url.scheme == "https")
        return r

    @app.get("/", response_class=HTMLResponse)
    async def landing(request: Request) -> Response:
        if request.query_params.get("PROLIFIC_PID"):  # Prolific sends participants here with GET
            ids = prolific(request)
            if isinstance(ids, Response):
                return ids
            # a GET (a link on any site) creates nobody and sets no cookie: the page's button POSTs
            mine = await returning(request.app.state.store, ids["prolific_pid"], request.cookies.get(COOKIE),
                                   hub(request).study_key)
            if mine is not None:
                return RedirectResponse(f"/p/{mine}", status_code=303)
            refused = await arrival_refused(request, ids)
            return refused or page(request, "landing.html", query=f"?{request.url.query}")
        cookie = request.cookies.get(COOKIE)
        if cookie and await hub(request).person(cookie):
            return RedirectResponse(f"/p/{cookie}", status_code=303)
        gate = hub(request).admin.gate(None)
        if gate:
            return turned_away(request, gate)
        q = request.url.query
        return page(request, "landing.html", query=f"?{q}" if q else "")

    @app.post("/start")
    async def start(request: Request) -> Response:
        refused = forged(request)
        if refused:
            return refused
        ids = prolific(request)
        if isinstance(ids, Response):
            return ids
        sent = request.headers.get(BOT_HEADER)
        bot = bool(bot_secret and sent and hmac.compare_digest(sent.encode(), bot_secret.encode()))
        wait = 0.0 if bot else starts.wait(request.client.host if request.client else "?")
        if wait:
            return too_many_starts(request, message, wait)
        if not bot:
            mine = await returning(request.app.state.store, ids.get("prolific_pid"), request.cookies.get(COOKIE),
                                   hub(request).study_key) \
                if ids.get("prolific_pid") else None
            refused = None if mine is not None else await arrival_refused(request, ids)
            if refused is not None:
                return refused
        return to_player(await hub(request).new_person(ids, request.cookies.get(COOKIE), bot=bot), request)

    @app.get("/p/{token}", response_class=HTMLResponse)
    async def play(request: Request, token: str) -> Response:
        p = await hub(request).person(token)
        if p is None:
            return message(request, _("Link not found"),
                           _("This personal link is not valid. Check that you copied all of it, or start again."),
                           404, link="/", link_text=_("Start again"))
        if not p.consented:
            resp = page(request, "consent.html", token=p.id, csrf=csrf.token(p.id),
                        consent_text=study.consent_text or _(DEFAULT_CONSENT),
                        no_consent=bool(study.no_consent_url))
        else:
            r = study.rules
            resp = page(request, "play.html", token=p.id, csrf=csrf.token(p.id), format=study.format,
                        max_chars=r.max_chars, conf_min=r.confidence_min, conf_max=r.confidence_max,
                        rounds=study.allocation.session_rounds, survey_after=study.survey_after,
                        duration=i18n.duration(r.time_limit_s, study.language), block_paste=r.block_paste,
                        lone_then=study.allocation.lone_then,
                        lone_wait=i18n.duration(study.allocation.lone_wait_s, study.language),
                        completion=bool(study.completion_url))
        resp.set_cookie(COOKIE, p.id, max_age=60 * 60 * 24 * 90, httponly=True, samesite="lax",
                        secure=request.url.scheme == "https")
        return resp

    async def record_consent(p: Any) -> None:
        await app.state.hub.consent(p.id, consent_version(study.consent_text or DEFAULT_CONSENT))

    add_consent_routes(
        app, posted, message, consented=record_consent, no_consent_url=study.no_consent_url,
        declined_text=N_("Thank you for considering the study. You have not taken part, and no chat or answers "
                         "of yours were recorded. You can close this page."),
        on_decline=lambda p: log.info("participant %s declined consent", p.id),  # logged as a short hash
        declined_page=(lambda request, p: ending(
            request, "no_consent", N_("You did not consent"), N_("Thank you for considering the study. You have not "
            "taken part, and no chat or answers of yours were recorded."))) if study.completion_code("no_consent") else None)

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return RedirectResponse("/static/favicon.svg", status_code=301)

    async def save_survey(p: Any, answers: dict[str, Any]) -> None:
        await app.state.hub.survey(p.id, answers)

    add_survey_route(app, lambda token: app.state.hub.person(token), forged, save_survey)

    @app.get("/p/{token}/done", response_class=HTMLResponse)
    async def done(request: Request, token: str) -> Response:
        p = await hub(request).person(token)
        if p is None:
            return message(request, _("Link not found"), _("This personal link is not valid."), 404)
        outcome = hub(request).outcome(p.id)
        if outcome is None:
            return turned_away(request, "blocked")
        from turinglab.analysis.export.pseudonyms import keyed
        from turinglab.server.withdrawal import done_offer

        offer = done_offer(app, study, p.id, keyed(p.id, await app.state.export_key_of(request)))
        if study.completion_code(outcome):
            return ending(request, outcome, N_("Thank you!"), DONE_TEXTS[outcome], withdraw=offer)
        if study.completion_url and offer is None:  # no code for this outcome: the study's one completion link
            return RedirectResponse(study.completion_url, status_code=303)
        if study.completion_url:  # the same, after the page offered withdrawal (withdrawal.redirect_after_s)
            from turinglab.server.withdrawal import going_on

            return message(request, _("Thank you!"), _(DONE_TEXTS["completed"]), link=study.completion_url,
                           link_text=_("Continue to the study site"), withdraw=offer,
                           **going_on(study, study.completion_url, offer))
        return message(request, _("Thank you!"), _("Thank you for taking part. You can close this page."),
                       link=f"/p/{p.id}", link_text=_("Play another game"), withdraw=offer)

    @app.get("/healthz")
    async def healthz(request: Request) -> Response:
        """Public: up/down, whether the database answers, whether the last write of a game went
        through and the disk has room, and (a cluster worker) whether Redis answers; `degraded` when
        one of the last three is not so. No counts (how many people wait would tell a lone
        participant whether their partner is a human) and no time of a write: those are on /admin."""
        try:
            await asyncio.to_thread(_db_ping, request.app.state.store)
        except Exception as exc:  # noqa: BLE001 - any failure means the database is down for us
            health.failed(exc)
            return JSONResponse({"ok": False, "database": "down"}, status_code=503)
        health.ok()
        hub = request.app.state.hub
        writes = hub.write_health
        body: dict[str, Any] = {"ok": True, "database": "ok", **writes.public()}
        redis_ping = getattr(hub, "redis_ok", None)  # a cluster worker: Redis too
        if redis_ping is not None:  # away: my games go on; no matching or relay
            body["redis"] = "ok" if await redis_ping() else "down"
        if writes.degraded() or body.get("redis") == "down":
            body["status"] = "degraded"
        return JSONResponse(body)

    @app.websocket("/ws/{token}")
    async def ws(websocket: WebSocket, token: str) -> None:
        h: Hub = websocket.app.state.hub
        if csrf.cross_site(websocket.headers):  # a page of another site opening a participant's socket
            await websocket.close(code=4403, reason="cross-site websocket refused")
            return
        p = await h.person(token)
        if p is None:  # accepted first, so the browser sees the documented close code
            await websocket.accept()
            await websocket.close(code=4404, reason="unknown participant link")
            return
        await websocket.accept()
        try:
            await h.connect(p.id, websocket)
        except proto.Busy:  # back-pressure: the browser reconnects after the close (1013: try again later)
            with contextlib.suppress(Exception):
                await websocket.send_text(json.dumps(proto.error("busy", proto.TEXTS["busy"])))
                await websocket.close(code=1013, reason="busy, retrying")
            return
        bucket = h.buckets.setdefault(p.id, TokenBucket(RATE_BURST, RATE_PER_S))
        try:
            while True:
                msg = await websocket.receive()
                if msg["type"] == "websocket.disconnect":
                    break
                raw = msg.get("text")
                if raw is None:
                    raw = (msg.get("bytes") or b"").decode("utf-8", "replace")
                if not bucket.take():
                    await h.send(p.id, {"type": "error", "code": "rate_limited", "client_id": proto.client_id_of(raw),
                                        "message": _("Too many messages at once: wait a moment, then try again.")})
                    continue
                try:
                    await h.handle(p.id, raw)
                except proto.Busy:  # back-pressure: the sender may send it again
                    await h.send(p.id, proto.error("busy", proto.TEXTS["busy"], proto.client_id_of(raw)))
                except Exception:  # noqa: BLE001 - keep the connection; tell the sender
                    log.exception("handling a frame from %s failed", p.id)
                    await h.send(p.id, {"type": "error", "code": "server_error", "client_id": proto.client_id_of(raw),
                                        "message": _("The server could not process that; please try again.")})
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            await h.disconnect(p.id, websocket)

    if demo:
        from turinglab.server.demo import add_demo

        add_demo(app, page, message, forged)
    from turinglab.server.admin import add_admin

    add_admin(app, admin_password, page, message, admin_accounts)
    from turinglab.server.withdrawal import add_withdrawal_routes

    add_withdrawal_routes(app, app.state.admin_guard, message, app.state.export_key_of, posted, study)
    return app
