"""Admin pages: live monitor, studies, witnesses with success rates, flags, exports.

A login form and a session cookie (turinglab/server/admin_auth.py): named accounts from
$TURINGLAB_ADMIN_ACCOUNTS, and the password of $TURINGLAB_ADMIN_PASSWORD (or
`create_app(admin_password=...)`) as the account `admin`. Without any, admin is disabled.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import hmac
import io
import logging
import re
from typing import Any

import pandas as pd
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response

from turinglab.game.events import MESSAGE, source_of
from turinglab.i18n import admin_notes
from turinglab.server.admin_sources import FALLBACK_WARN, FALLBACK_WINDOW, fallback_warnings, reply_source
from turinglab.store.api import Store, UnknownId
from turinglab.store.counting import min_rule, not_counting
from turinglab.store.payments import verified

log = logging.getLogger("turinglab.server")

TABLES = ("games", "messages", "verdicts", "participants", "events")
ID_COLUMNS = ("interrogator_id", "participant_id", "A_participant_id", "B_participant_id")
RAW_ID_COLUMNS = ("prolific_pid", "prolific_study_id", "prolific_session_id")
PAYMENT_EXPORT = "payment_ids_RAW.csv"  # the one admin export with raw external ids (for payment)


def spreadsheet_safe(df: pd.DataFrame) -> pd.DataFrame:
    """Text cells a spreadsheet would run as a formula (starting with = + - @, tab or CR) get a
    leading apostrophe, so opening the CSV in Excel/LibreOffice/Sheets shows them as text."""
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == object or pd.api.types.is_string_dtype(out[c]):
            out[c] = out[c].map(lambda v: "'" + v if isinstance(v, str) and v[:1] in FORMULA_START else v)
    return out


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe_csv(body: bytes) -> bytes:
    return spreadsheet_safe(pd.read_csv(io.BytesIO(body), dtype=str, keep_default_na=False)).to_csv(index=False).encode()


def pseudonymous(t: dict[str, pd.DataFrame], key: bytes) -> dict[str, pd.DataFrame]:
    """The tables with every external id replaced by a keyed hash, as `turinglab export` does
    (turinglab/analysis/export/pseudonyms.py): participant ids (the participants' login tokens) and the
    Prolific participant, study and session ids; an id has the same pseudonym in every table."""
    from turinglab.analysis.export.pseudonyms import PREFIX, keyed

    ids: set[str] = set()
    for df in t.values():
        for c in ID_COLUMNS:
            if c in df.columns:
                ids |= {v for v in df[c].dropna() if isinstance(v, str)}
    alias = {i: keyed(i, key, PREFIX["participant"]) for i in ids}
    out = {}
    for name, df in t.items():
        df = df.copy()
        for c in ID_COLUMNS:
            if c in df.columns:
                df[c] = df[c].map(lambda v: alias.get(v, v))
        for c in RAW_ID_COLUMNS:
            if c in df.columns:
                df[c] = df[c].map(lambda v, c=c: keyed(v, key, PREFIX[c]) if isinstance(v, str) else v)
        if "payload" in df.columns and alias:  # no id is expected in a payload; make sure
            pat = re.compile("|".join(map(re.escape, sorted(alias, key=len, reverse=True))))
            df["payload"] = df["payload"].map(lambda v: pat.sub(lambda m: alias[m.group(0)], v)
                                              if isinstance(v, str) else v)
        out[name] = df
    return out


def tables(store: Store, study_id: int | None = None, demo: bool = False) -> dict[str, pd.DataFrame]:
    """Exportable tables (one row per game / message / verdict / participant / event); demo games
    (`serve --demo`) only when `demo` (a demo server's own admin)."""
    games = [g for g in store.games(study_id) if demo or not (g.flags or {}).get("demo")]
    skip = not_counting(store, study_id, min_rule(store.get_study(study_id).study)) if study_id is not None else {}
    g_rows, v_rows, m_rows, e_rows = [], [], [], []
    for g in games:
        row: dict[str, Any] = {"game_id": g.id, "study_id": g.study_id, "study_hash": g.study_hash,
                               "format": g.format, "interrogator_id": g.interrogator_id, "status": g.status,
                               "started_ms": g.started_ms, "ended_ms": g.ended_ms, "end_reason": g.end_reason,
                               "flags": ",".join(sorted(k for k, v in g.flags.items() if v)),
                               "does_not_count": skip.get(g.id, "")}  # store/counting.py: why, or empty
        for seat, ident in g.seats.items():
            row[f"{seat}_kind"] = ident.kind
            row[f"{seat}_witness"] = ident.witness
            row[f"{seat}_participant_id"] = ident.participant_id
            row[f"{seat}_selection_prob"] = ident.selection_prob
        g_rows.append(row)
        if g.verdict is not None:
            v = g.verdict
            v_rows.append({"game_id": g.id, "interrogator_id": g.interrogator_id, "choice": v.choice,
                           "confidence": v.confidence, "reason": v.reason, "correct": v.correct,
                           "forced": v.forced, "t_ms": v.t_ms})
        for e in store.events(g.id):
            e_rows.append({"game_id": g.id, "seq": e.seq, "t_ms": e.t_ms, "type": e.type, "actor": e.actor,
                           "conversation": e.conversation, "payload": str(e.payload)})
            if e.type == MESSAGE:
                m_rows.append({"game_id": g.id, "seq": e.seq, "t_ms": e.t_ms, "sender": e.actor,
                               "conversation": e.conversation, "text": e.payload.get("text"),
                               "source": "interrogator" if e.actor not in g.seats else  # who wrote it
                               source_of(e.payload, g.seats[e.actor].kind)})
    pids = {g.interrogator_id for g in games} | {i.participant_id for g in games for i in g.seats.values()}
    p_rows = []
    for pid in sorted(p for p in pids if p):
        p = store.get_participant(pid)
        p_rows.append({"participant_id": p.id, "duplicate_prolific_pid": p.label == "duplicate_prolific_pid",
                       "prolific_pid": p.prolific_pid,
                       "prolific_pid_unverified": bool(p.prolific_pid) and not verified(p.prolific_pid),
                       "prolific_study_id": p.prolific_study_id, "prolific_session_id": p.prolific_session_id,
                       "consent_ms": p.consent_ms, "created_ms": p.created_ms,
                       **{f"demo_{k}": v for k, v in p.demographics.items()}})
    return {"games": pd.DataFrame(g_rows), "messages": pd.DataFrame(m_rows), "verdicts": pd.DataFrame(v_rows),
            "participants": pd.DataFrame(p_rows), "events": pd.DataFrame(e_rows)}


def guarded(guard):  # noqa: ANN001, ANN201
    """Decorate an admin route (under @app.get): the guard's refusal, the login form or 503, answers first."""
    def wrap(fn):  # noqa: ANN001, ANN202
        @functools.wraps(fn)
        async def route(request: Request, **params: Any) -> Response:
            return await guard(request) or await fn(request, **params)
        return route
    return wrap


def admin_guard(app: FastAPI, password: str | None, message, accounts_file: str | None = None):  # noqa: ANN001, ANN201
    """The admin pages' check: `await guard(request)` is a refusal Response (the login form, or
    503 when no account is set), or None when the request carries a valid session cookie. Adds
    /admin/login and /admin/logout (turinglab/server/admin_auth.py). Shared by the live and static admin."""
    from urllib.parse import quote

    from fastapi.responses import RedirectResponse

    import secrets

    from turinglab.server.admin_auth import (DEVICE_COOKIE, DEVICE_S, SESSION_COOKIE, SESSION_S, Accounts,
                                             LoginThrottle, Signer, generation_key)
    from turinglab.store.settings import read_setting, set_setting

    accounts = app.state.admin_accounts = Accounts(accounts_file, password)
    throttle = app.state.login_throttle = LoginThrottle()
    signer = app.state.admin_signer = Signer(hmac.new(app.state.csrf.secret, b"admin-cookies", hashlib.sha256).digest())
    from turinglab.server.web import templates

    def disabled(request: Request) -> Response:
        return message(request, "Admin is disabled",
                       "Set TURINGLAB_ADMIN_ACCOUNTS (an accounts file: `turinglab admin add-account NAME`) or "
                       "TURINGLAB_ADMIN_PASSWORD and restart the server to enable the admin pages.", 503)

    def form(request: Request, status: int = 200, problem: str = "", name: str = "", nxt: str = "/admin",
             headers: dict | None = None) -> Response:
        return templates.TemplateResponse(request, "admin_login.html", {
            "study_name": "turinglab admin", "problem": problem, "name": name, "next": nxt},
            status_code=status, headers=headers)

    def safe_next(nxt: str | None) -> str:
        nxt = nxt or "/admin"
        return nxt if nxt.startswith("/admin") and "//" not in nxt and "\\" not in nxt else "/admin"

    async def bound(request: Request, name: str | None) -> str:
        """What a session cookie of `name` is bound to: the account's session generation (a logout
        writes a new one) and its password fingerprint (a new password, a removed account: void)."""
        if not name or not accounts.exists(name):
            return "void"
        gen = await asyncio.to_thread(read_setting, request.app.state.store, generation_key(name))
        return f"{gen or '0'}:{accounts.fingerprint(name)}"

    async def guard(request: Request) -> Response | None:
        if not accounts.any():
            return disabled(request)
        value = request.cookies.get(SESSION_COOKIE)
        claimed = signer.name_of(value)
        name = signer.read("session", value, await bound(request, claimed)) if claimed else None
        if name is not None and accounts.exists(name):
            request.state.admin = name
            return None
        root = request.scope.get("root_path", "")  # one study of several: the path inside its mount
        path = request.url.path[len(root):] if root and request.url.path.startswith(root) else request.url.path
        target = path + (f"?{request.url.query}" if request.url.query else "")
        return RedirectResponse(f"/admin/login?next={quote(target, safe='/')}", status_code=303)

    if getattr(app.state, "admin_login_routes", False):
        return guard
    app.state.admin_login_routes = True

    @app.get("/admin/login", response_class=HTMLResponse)
    async def login_page(request: Request) -> Response:
        if not accounts.any():
            return disabled(request)
        return form(request, nxt=safe_next(request.query_params.get("next")))

    @app.post("/admin/login")
    async def login(request: Request) -> Response:
        if not accounts.any():
            return disabled(request)
        if app.state.csrf.cross_site(request.headers):
            return message(request, "Request refused", "This login was sent from another site.", 403)
        data = await request.form()
        name, pw, nxt = (data.get("name") or ""), (data.get("password") or ""), safe_next(data.get("next"))
        if not isinstance(name, str) or not isinstance(pw, str) or len(name) > 64 or len(pw) > 1024:
            return form(request, 400, "Enter an account name (at most 64 characters) and a password.")
        device = signer.read("device", request.cookies.get(DEVICE_COOKIE)) == name
        wait = throttle.wait(name, device)
        if wait:
            secs = max(1, round(wait))
            return form(request, 429, f"Too many failed logins for this account just now: try again in {secs} s.",
                        name, nxt, headers={"Retry-After": str(secs)})
        if not await asyncio.to_thread(accounts.verify, name, pw):
            throttle.failed(name, device)
            log.warning("admin: failed login for account %r", name[:64])
            return form(request, 401, "Wrong account name or password.", name, nxt)
        log.info("admin: %r logged in", name)
        r = RedirectResponse(nxt, status_code=303)
        secure = request.url.scheme == "https"
        r.set_cookie(SESSION_COOKIE, signer.make("session", name, SESSION_S, await bound(request, name)),
                     max_age=SESSION_S, httponly=True,
                     samesite="strict", secure=secure, path="/")
        r.set_cookie(DEVICE_COOKIE, signer.make("device", name, DEVICE_S), max_age=DEVICE_S, httponly=True,
                     samesite="strict", secure=secure, path="/admin/login")
        return r

    def logout_token(name: str) -> str:
        return app.state.csrf.token("admin:" + name)

    app.state.admin_logout_token = logout_token

    @app.post("/admin/logout")
    async def logout(request: Request) -> Response:
        """Ends every session of the account (on every worker): a copied cookie is void too. Needs
        the form token of the admin pages, and a same-site POST."""
        refused = await guard(request)
        if refused is not None:
            return refused
        data = await request.form()
        token = data.get("csrf")
        if app.state.csrf.cross_site(request.headers) or not isinstance(token, str) \
                or not app.state.csrf.token_ok("admin:" + request.state.admin, token):
            return message(request, "Request refused", "The logout form's token is missing or out of date: "
                           "reload the admin page and press Log out again.", 403)
        await asyncio.to_thread(set_setting, request.app.state.store, generation_key(request.state.admin),
                                secrets.token_hex(8))
        log.info("admin: %r logged out (every session of the account ended)", request.state.admin)
        r = RedirectResponse("/admin/login", status_code=303)
        r.delete_cookie(SESSION_COOKIE, path="/")
        return r

    return guard


def _clock(ms: int | None) -> str:
    """A time of day (UTC) for the admin page ("—" when none was recorded)."""
    from datetime import datetime, timezone

    return "—" if ms is None else datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%H:%M:%S UTC")


def leaderboard_rows(games) -> dict:  # noqa: ANN001
    """The humanlikeness leaderboard of the stored games, as display strings (bot games marked)."""
    from turinglab.analysis.live.leaderboard import from_games, leaderboard

    res = leaderboard(from_games(games))
    num = lambda v, d=3: "–" if v is None or v != v else f"{v:.{d}f}"  # noqa: E731
    board = [{"rank": r["rank"], "witness": r["witness"], "format": r["format"], "bot": r["bot"], "k": r["k"], "n": r["n"],
              "rate": num(r["rate"]), "interval": f"[{num(r['low'])}, {num(r['high'])}]"}
             for r in res["table"].to_dict("records")]
    bt = [{"player": r["player"], "beta": num(r["beta"], 2), "interval": f"[{num(r['low'], 2)}, {num(r['high'], 2)}]",
           "p": num(r["p_beats_ref"]), "p_interval": f"[{num(r['p_low'])}, {num(r['p_high'])}]",
           "comparisons": r["comparisons"]} for r in res["bradley_terry"].to_dict("records")]
    return {"board": board, "bt": bt, "board_notes": res["notes"]}


def add_admin(app: FastAPI, password: str | None, page, message, accounts_file: str | None = None) -> None:  # noqa: ANN001
    from turinglab.server.web import templates
    # the database's export key (turinglab/analysis/export/pseudonyms.py): pseudonyms agree across the
    # tables, the restarts and `turinglab export`, and cannot be turned back into participant links
    keys: list[bytes] = []

    async def export_key(request: Request) -> bytes:
        if not keys:
            from turinglab.analysis.export.pseudonyms import export_key as make

            keys.append(await asyncio.to_thread(make, request.app.state.store))
        return keys[0]
    guard = admin_guard(app, password, message, accounts_file)
    app.state.admin_guard, app.state.export_key_of = guard, export_key  # for the withdrawal routes
    from turinglab.server.admin_actions import add_action_routes, shown_actions, status_rows

    add_action_routes(app, guard, message, export_key, spreadsheet_safe)

    @app.get("/admin", response_class=HTMLResponse)
    @guarded(guard)
    async def admin(request: Request) -> Response:
        hub = request.app.state.hub
        store: Store = request.app.state.store
        now = hub.now()
        key = await export_key(request)
        from turinglab.analysis.export.pseudonyms import keyed

        waiting = [{"participant": keyed(w.participant_id, key), "assignment": w.assignment,
                    "waited_s": round((now - w.joined_ms) / 1000)} for w in hub.room.waiting.values()]
        live = []
        for s in hub.live.values():
            live.append({"game_id": s.id, "format": s.game.format, "state": s.game.state,
                         "seats": ", ".join(f"{k}: {v.identity.witness or 'human'}" for k, v in s.seats.items()),
                         "messages": sum(len(c.messages) for c in s.game.conversations.values()),
                         "left_s": round(s.game.time_left_ms(now) / 1000)})
        studies = await asyncio.to_thread(store.studies)
        games = [g for g in await asyncio.to_thread(store.games, hub.study_id)
                 if request.app.state.demo or not (g.flags or {}).get("demo")]  # demo games: not the study's
        witnesses = [{"codename": c, "games": t.games, "judged_human": t.judged_human,
                      "success_rate": "–" if t.success_rate is None else f"{t.success_rate:.2f}",
                      "weighted": f"{t.wins:.1f} / {t.losses:.1f}"}
                     for c, t in hub.room.stats.tallies.items()]
        humans = [g for g in games if g.verdict and g.format == "two-player" and g.seats["A"].kind == "human"]
        human_sr = sum(g.verdict.choice == "human" for g in humans) / len(humans) if humans else None
        blocked_ai = sum(int(g.flags.get("ai_output_blocked", 0) or 0) for g in games)
        recent = [{"game_id": g.id, "status": g.status, "end_reason": g.end_reason or "",
                   "seats": ", ".join(f"{k}: {v.witness if v.kind == 'ai' else 'human'}" for k, v in g.seats.items()),
                   "verdict": f"{g.verdict.choice} ({g.verdict.confidence})" if g.verdict else ""}
                  for g in sorted(games, key=lambda g: g.started_ms, reverse=True)[:20]]
        def set_flags(g) -> list[str]:  # noqa: ANN001 - "origins" records who set a flag, it is not one
            return [k for k, v in g.flags.items() if v and k not in ("origins", "withdrawn_seats", "allocation")]

        flagged = [{"game_id": g.id, "flags": ", ".join(set_flags(g)), "status": g.status}
                   for g in games if set_flags(g)]
        cap = hub.room.capacity
        capacity = [] if cap is None else [
            {"codename": c, **e.to_dict(), "in_use": cap.in_use.get(c, 0), "withheld": cap.why_withheld(c),
             "withheld_draws": cap.withheld_draws.get(c, 0),
             "t1": "not measured yet" if e.t1_s is None else f"{e.t1_s:.2f} s",
             "first": "not measured yet" if e.first_s is None else f"{e.first_s:.2f} s",
             "source": "study file" if e.fixed is not None else "estimated",
             "changed": [{**ch, "at": _clock(ch["at_ms"])} for ch in reversed(e.changes)]}
            for c, e in cap.estimates.items()]
        cap_counts = {} if cap is None else {"deferred": cap.deferred, "reallocated": cap.reallocated,
                                             "overflowed": cap.overflowed}
        health = hub.write_health.admin()  # the same as /healthz, with the last write's age and error
        if hasattr(hub, "redis_ok"):
            health["redis"] = "ok" if await hub.redis_ok() else "down"
        health["status"] = "degraded" if hub.write_health.degraded() or health.get("redis") == "down" else "ok"
        board = await asyncio.to_thread(leaderboard_rows, games)
        fell_back = await asyncio.to_thread(fallback_warnings, store, games)
        acts = (await asyncio.to_thread(shown_actions, store, hub.study_id, key))[:20]
        from turinglab.server.withdrawal import rights_rows

        rights = await asyncio.to_thread(rights_rows, store, hub.study)
        return templates.TemplateResponse(request, "admin.html", {
            "study_name": hub.study.name, "waiting": waiting, "live": live, "studies": studies,
            "witnesses": witnesses, "human_sr": human_sr, "n_human": len(humans), "flagged": flagged,
            "n_games": len(games), "tables": TABLES, "blocked_ai": blocked_ai, "recent": recent,
            "capacity": capacity, "cap_counts": cap_counts, "retime_s": f"{hub.retime_s:g}", **board, "fell_back": fell_back,
            "fallback_window": FALLBACK_WINDOW, "fallback_warn": f"{FALLBACK_WARN:.0%}", **status_rows(hub), "actions": acts,
            "health": health, "rights": rights,
            "form_token": request.app.state.admin_form_token(request),
            "logout_token": request.app.state.admin_logout_token(request.state.admin),
            "language_notes": admin_notes(hub.study.language, hub.study.witnesses, getattr(hub.filter, "lists", None))})

    @app.get("/admin/game/{game_id}", response_class=HTMLResponse)
    @guarded(guard)
    async def game_page(request: Request, game_id: str) -> Response:
        """One game's transcript: every event in order, who sat where, the verdict."""
        store: Store = request.app.state.store
        try:
            g = await asyncio.to_thread(store.game, game_id)
            events = await asyncio.to_thread(store.events, game_id)
        except UnknownId:
            g = None
        if g is None or g.study_id != request.app.state.hub.study_id:  # another study's game: nothing of it
            return message(request, "No such game", f"There is no game {game_id!r} in this study.", 404,
                           link="/admin", link_text="Back to admin")
        seats = {k: (v.witness if v.kind == "ai" else "human") for k, v in g.seats.items()}
        t0 = g.started_ms
        rows = []
        for e in events:
            p = e.payload or {}
            who = "interrogator" if e.actor == "interrogator" else (
                f"{e.actor} ({seats[e.actor]})" if e.actor in seats else e.actor)
            src = ""
            if e.type == MESSAGE:
                what = p.get("text", "")
                src = reply_source(p, g.seats[e.actor].kind) if e.actor in g.seats else ""
            elif e.type == "refused":
                what = f"refused ({p.get('code')}): {p.get('text', '')}".strip()
            else:
                what = ", ".join(f"{k}={v}" for k, v in p.items() if k != "rules")
            rows.append({"t": f"{(e.t_ms - t0) / 1000:.1f}", "type": e.type, "who": who,
                         "conv": e.conversation or "", "what": what, "message": e.type == MESSAGE, "source": src})
        live = game_id in request.app.state.hub.live
        return templates.TemplateResponse(request, "admin_game.html", {
            "study_name": request.app.state.hub.study.name, "g": g, "seats": seats, "rows": rows, "live": live,
            "form_token": request.app.state.admin_form_token(request)})

    @app.get("/admin/export/{name}")
    @guarded(guard)
    async def export(request: Request, name: str) -> Response:
        hub = request.app.state.hub
        if name == PAYMENT_EXPORT:  # raw Prolific ids beside the pseudonyms, for payment only
            import tempfile

            from turinglab.analysis.export.export import payment_ids

            with tempfile.TemporaryDirectory() as d:
                await asyncio.to_thread(payment_ids, request.app.state.store, f"{d}/p.csv", hub.study_id)
                body = open(f"{d}/p.csv", "rb").read()  # noqa: SIM115, ASYNC230 - a small file
            log.info("admin: %r downloaded the raw payment ids", getattr(request.state, "admin", "?"))
            return Response(spreadsheet_safe_csv(body), media_type="text/csv",
                            headers={"Content-Disposition": f'attachment; filename="{PAYMENT_EXPORT}"'})
        table, _, fmt = name.partition(".")
        if table not in TABLES or fmt not in ("csv", "parquet"):
            return Response(f"unknown export {name!r}: use one of "
                            + ", ".join(f"{t}.csv / {t}.parquet" for t in TABLES) + f", {PAYMENT_EXPORT}", status_code=404)
        all_tables = await asyncio.to_thread(tables, request.app.state.store, hub.study_id, request.app.state.demo)
        df = pseudonymous(all_tables, await export_key(request))[table]
        if fmt == "csv":
            body, media = spreadsheet_safe(df).to_csv(index=False).encode(), "text/csv"
        else:
            buf = io.BytesIO()
            df.to_parquet(buf, index=False)
            body, media = buf.getvalue(), "application/vnd.apache.parquet"
        return Response(body, media_type=media,
                         headers={"Content-Disposition": f'attachment; filename="{table}.{fmt}"'})
