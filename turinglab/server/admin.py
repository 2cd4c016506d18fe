"""Admin pages: live monitor, studies, witnesses with success rates, flags, exports.

HTTP Basic auth with any user name and the password from $TURINGLAB_ADMIN_PASSWORD
(or `create_app(admin_password=...)`). Without a password, admin is disabled.
"""

from __future__ import annotations

import asyncio
import io
import os
import secrets
from typing import Any

import pandas as pd
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.security import HTTPBasic
from fastapi.templating import Jinja2Templates

from turinglab.game.events import MESSAGE
from turinglab.store.api import Store

TABLES = ("games", "messages", "verdicts", "participants", "events")
_basic = HTTPBasic(auto_error=False)


def tables(store: Store, study_id: int | None = None) -> dict[str, pd.DataFrame]:
    """Exportable tables (one row per game / message / verdict / participant / event)."""
    games = store.games(study_id)
    g_rows, v_rows, m_rows, e_rows = [], [], [], []
    for g in games:
        row: dict[str, Any] = {"game_id": g.id, "study_id": g.study_id, "study_hash": g.study_hash,
                               "format": g.format, "interrogator_id": g.interrogator_id, "status": g.status,
                               "started_ms": g.started_ms, "ended_ms": g.ended_ms, "end_reason": g.end_reason,
                               "flags": ",".join(sorted(k for k, v in g.flags.items() if v))}
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
                               "conversation": e.conversation, "text": e.payload.get("text")})
    pids = {g.interrogator_id for g in games} | {i.participant_id for g in games for i in g.seats.values()}
    p_rows = []
    for pid in sorted(p for p in pids if p):
        p = store.get_participant(pid)
        p_rows.append({"participant_id": p.id, "prolific_pid": p.prolific_pid,
                       "prolific_study_id": p.prolific_study_id, "prolific_session_id": p.prolific_session_id,
                       "consent_ms": p.consent_ms, "created_ms": p.created_ms,
                       **{f"demo_{k}": v for k, v in p.demographics.items()}})
    return {"games": pd.DataFrame(g_rows), "messages": pd.DataFrame(m_rows), "verdicts": pd.DataFrame(v_rows),
            "participants": pd.DataFrame(p_rows), "events": pd.DataFrame(e_rows)}


def add_admin(app: FastAPI, password: str | None, page, message) -> None:  # noqa: ANN001
    templates = Jinja2Templates(directory=str(__import__("pathlib").Path(__file__).parent / "templates"))

    def secret() -> str | None:
        return password if password is not None else os.environ.get("TURINGLAB_ADMIN_PASSWORD") or None

    async def guard(request: Request) -> Response | None:
        pw = secret()
        if not pw:
            return message(request, "Admin is disabled",
                           "Set the environment variable TURINGLAB_ADMIN_PASSWORD and restart the server "
                           "to enable the admin pages.", 503)
        creds = await _basic(request)
        if creds is None or not secrets.compare_digest(creds.password.encode(), pw.encode()):
            return Response("admin: wrong or missing password (any user name, the admin password)",
                            status_code=401, headers={"WWW-Authenticate": 'Basic realm="turinglab admin"'})
        return None

    @app.get("/admin", response_class=HTMLResponse)
    async def admin(request: Request) -> Response:
        denied = await guard(request)
        if denied:
            return denied
        hub = request.app.state.hub
        store: Store = request.app.state.store
        now = hub.now()
        waiting = [{"participant": w.participant_id, "assignment": w.assignment,
                    "waited_s": round((now - w.joined_ms) / 1000)} for w in hub.room.waiting.values()]
        live = []
        for s in hub.live.values():
            live.append({"game_id": s.id, "format": s.game.format, "state": s.game.state,
                         "seats": ", ".join(f"{k}: {v.identity.witness or 'human'}" for k, v in s.seats.items()),
                         "messages": sum(len(c.messages) for c in s.game.conversations.values()),
                         "left_s": round(s.game.time_left_ms(now) / 1000)})
        studies = await asyncio.to_thread(store.studies)
        games = await asyncio.to_thread(store.games, hub.study_id)
        witnesses = [{"codename": c, "games": t.games, "judged_human": t.judged_human,
                      "success_rate": "–" if t.success_rate is None else f"{t.success_rate:.2f}",
                      "weighted": f"{t.wins:.1f} / {t.losses:.1f}"}
                     for c, t in hub.room.stats.tallies.items()]
        humans = [g for g in games if g.verdict and g.format == "two-player" and g.seats["A"].kind == "human"]
        human_sr = sum(g.verdict.choice == "human" for g in humans) / len(humans) if humans else None
        flagged = [{"game_id": g.id, "flags": ", ".join(k for k, v in g.flags.items() if v), "status": g.status}
                   for g in games if any(g.flags.values())]
        return templates.TemplateResponse(request, "admin.html", {
            "study_name": hub.study.name, "waiting": waiting, "live": live, "studies": studies,
            "witnesses": witnesses, "human_sr": human_sr, "n_human": len(humans), "flagged": flagged,
            "n_games": len(games), "tables": TABLES})

    @app.get("/admin/export/{name}")
    async def export(request: Request, name: str) -> Response:
        denied = await guard(request)
        if denied:
            return denied
        table, _, fmt = name.partition(".")
        if table not in TABLES or fmt not in ("csv", "parquet"):
            return Response(f"unknown export {name!r}: use one of "
                            + ", ".join(f"{t}.csv / {t}.parquet" for t in TABLES), status_code=404)
        hub = request.app.state.hub
        df = (await asyncio.to_thread(tables, request.app.state.store, hub.study_id))[table]
        if fmt == "csv":
            body, media = df.to_csv(index=False).encode(), "text/csv"
        else:
            buf = io.BytesIO()
            df.to_parquet(buf, index=False)
            body, media = buf.getvalue(), "application/vnd.apache.parquet"
        return Response(body, media_type=media,
                         headers={"Content-Disposition": f'attachment; filename="{table}.{fmt}"'})
