"""What a researcher does to a running study (issue 27): end a game, remove or block a
participant, pause and resume recruitment. The same functions serve /admin (forms with a
per-account CSRF token) and `turinglab admin` (turinglab/cli/admin.py); each action is one row
of `admin_actions` (turinglab/store/admin_log.py) with the researcher and the reason, and the
server that runs the game applies it (turinglab/server/live/recruitment.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response

from turinglab.store import admin_log
from turinglab.store.api import Store, UnknownId
from turinglab.store.db import StoreError

log = logging.getLogger("turinglab.server")
PARTICIPANT_ACTIONS = ("remove", "block", "unblock")
BLOCKED_FLAG = "participant_blocked"  # exclusion flag of the games of a participant a researcher blocked


class ActionError(ValueError):
    """An action that cannot be taken; the message says what to change."""


def find_participant(store: Store, text: str, key: bytes | None = None, study: str | None = None) -> str:
    """The participant id named by `text`: their pseudonym (P…, as on /admin and in the exports;
    needs the database's export `key`), their id, or a Prolific id that only one participant has
    (a Prolific id seen from several browsers names several participants: the pseudonym says which;
    `study`: only that study's participants count, e.g. "live:NAME")."""
    text = (text or "").strip()
    if not text or len(text) > 64:
        raise ActionError("name the participant: their pseudonym (P…, as on /admin), Prolific id or participant id")
    if key is not None and text.startswith("P"):
        from turinglab.analysis.export.pseudonyms import keyed

        for p in store.participants():
            if keyed(p.id, key) == text:
                return p.id
    if text.isascii() and text.isalnum() and len(text) <= 40:
        try:
            return store.get_participant(text).id
        except UnknownId:
            pass
    found = admin_log.same_prolific_id(store, text, study)
    if len(found) == 1:
        return found[0]
    if found:
        from turinglab.analysis.export.pseudonyms import keyed

        names = ", ".join(keyed(p, key) for p in found) if key is not None else f"{len(found)} participants"
        raise ActionError(f"that Prolific id came from {len(found)} browsers ({names}): name the one you mean by "
                          "its pseudonym as shown on /admin")
    raise ActionError(f"no participant {text!r}: give a pseudonym shown on /admin, a Prolific id or a participant id")


def take(store: Store, study_id: int, researcher: str, action: str, target: str | None, reason: str | None,
         key: bytes | None = None) -> admin_log.AdminAction:
    """Check and store one action (the server applies it); ActionError says what was wrong."""
    if action == "end_game":
        try:
            g = store.game(target or "")
        except UnknownId:
            raise ActionError(f"no game {target!r}; the games in progress are listed on /admin") from None
        if g.study_id != study_id:
            raise ActionError(f"game {target} belongs to another study (id {g.study_id})")
        if g.status == "ended":
            raise ActionError(f"game {target} has already ended ({g.end_reason})")
    elif action in PARTICIPANT_ACTIONS:
        target = find_participant(store, target or "", key, f"live:{store.get_study(study_id).name}")
    elif action not in ("pause", "resume"):
        raise ActionError(f"unknown action {action!r}: use end_game, remove, block, unblock, pause or resume")
    now = time.time_ns() // 1_000_000
    try:
        row = admin_log.record(store, study_id, researcher, action, target, reason, now)
    except StoreError as exc:
        raise ActionError(str(exc)) from None
    if action == "block":  # their ended games get an exclusion flag (a game in progress: when it has ended)
        for g in store.games(study_id):
            if g.status == "ended" and target in {g.interrogator_id, *(i.participant_id for i in g.seats.values())}:
                store.flag_game(g.id, BLOCKED_FLAG, True, f"{researcher}: {reason}", now)
    return row


def wait_ended(store: Store, game_id: str, timeout_s: float) -> bool:
    """Whether the game's log says it ended within `timeout_s` (its server applies the request)."""
    deadline = time.monotonic() + timeout_s
    while True:
        if store.game(game_id).status == "ended":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def status_rows(hub: Any) -> dict[str, Any]:
    """The recruitment state for the admin page."""
    rec, stop = hub.admin, hub.study.stop_after
    quota = []
    if stop is not None and stop.games is not None:
        quota.append(f"games {rec.games} of {stop.games}")
    if stop is not None and stop.participants is not None:
        quota.append(f"participants {len(rec.people)} of {stop.participants}")
    state = "full" if rec.full() else ("paused" if rec.paused else "open")
    return {"recruitment": state, "quota": ", ".join(quota) or "none set (study file stop_after)",
            "n_blocked": len(rec.blocked)}


def shown_actions(store: Store, study_id: int, key: bytes) -> list[dict[str, Any]]:
    """The study's actions, newest first, a participant named by their pseudonym (an id is their link)."""
    from turinglab.analysis.export.pseudonyms import keyed

    out = []
    for r in reversed(admin_log.actions(store, study_id)):
        d = dict(r.__dict__)
        if r.action in PARTICIPANT_ACTIONS and r.target:
            d["target"] = keyed(r.target, key)
        out.append(d)
    return out



async def admin_form(app: FastAPI, guard, message, request: Request, what: str = "request") -> tuple[dict, Any]:  # noqa: ANN001
    """The fields of a logged-in admin's POST, or the response that refuses it (not logged in, sent
    from another site, or without the account's form token): ({}, response) then."""
    refused = await guard(request)
    if refused is not None:
        return {}, refused
    if app.state.csrf.cross_site(request.headers):
        return {}, message(request, "Request refused", f"This {what} was sent from another site.", 403,
                           link="/admin", link_text="Back to admin")
    data = await request.form()
    f = {k: v if isinstance(v, str) else "" for k, v in data.items()}
    if not app.state.csrf.token_ok("admin:" + request.state.admin, f.get("csrf")):
        return {}, message(request, "Request refused", "The form's token is missing or out of date (the server may "
                           "have restarted): reload the admin page and try again.", 403, link="/admin",
                           link_text="Back to admin")
    return f, None

def add_action_routes(app: FastAPI, guard, message, export_key, spreadsheet_safe) -> None:  # noqa: ANN001
    """POST /admin/action (the forms of /admin and /admin/game/{id}) and GET /admin/actions."""

    def token(request: Request) -> str:
        return app.state.csrf.token("admin:" + request.state.admin)

    app.state.admin_form_token = token

    @app.post("/admin/action")
    async def act(request: Request) -> Response:
        f, refused = await admin_form(app, guard, message, request, "action")
        if refused is not None:
            return refused
        hub = request.app.state.hub
        action, target, reason = f.get("action", ""), f.get("target") or None, f.get("reason") or None
        back = f"/admin/game/{target}" if action == "end_game" and target else "/admin"
        try:
            key = await export_key(request)
            row = await asyncio.to_thread(take, request.app.state.store, hub.study_id, request.state.admin,
                                          action, target, reason, key)
        except ActionError as exc:
            return message(request, "Action not taken", str(exc), 400, link=back, link_text="Back")
        except Exception as exc:  # noqa: BLE001 - the store away, say: nothing was taken
            log.exception("admin: storing action %s failed", action)
            return message(request, "Action not completed", f"The action could not be completed ({type(exc).__name__}): "
                           "see /admin/actions for whether it was stored, then try again.", 503, link=back,
                           link_text="Back")
        log.info("admin: %r took action %s", request.state.admin, row.action)
        try:
            await hub.admin.sync()  # here at once; other workers within their poll
        except Exception as exc:  # noqa: BLE001 - stored: every server applies it at its next read
            log.exception("admin: applying action %s failed", row.id)
            hub.admin.outcomes[row.id] = f"stored, not yet applied here ({type(exc).__name__}): the server " \
                                         "applies it at its next read of the actions"
        said = hub.admin.outcomes.pop(row.id, None)
        if said is not None:
            return message(request, "Action stored", f"Action {row.id} ({row.action}) is stored: {said}.", 200,
                           link=back, link_text="Back")
        if action == "end_game" and not await asyncio.to_thread(wait_ended, request.app.state.store, row.target, 5.0):
            return message(request, "End requested", f"Game {row.target} runs on another worker (or on no running "
                           "server): it ends when that worker reads the request, within a few seconds; a game "
                           "no server runs is ended when the server starts again.", 202, link=back, link_text="Back")
        return RedirectResponse(back, status_code=303)

    @app.get("/admin/actions")
    async def actions_csv(request: Request) -> Response:
        refused = await guard(request)
        if refused is not None:
            return refused
        import pandas as pd

        hub = request.app.state.hub
        rows = await asyncio.to_thread(shown_actions, request.app.state.store, hub.study_id, await export_key(request))
        df = pd.DataFrame(rows, columns=["id", "study_id", "t_ms", "researcher", "action",
                                                               "target", "reason"])
        return Response(spreadsheet_safe(df).to_csv(index=False), media_type="text/csv",
                        headers={"Content-Disposition": 'attachment; filename="admin_actions.csv"'})

    @app.get("/admin/bonus.csv")
    @app.get("/admin/bonus_games.csv")
    async def bonus_file(request: Request) -> Response:
        """Prolific's bulk-bonus lines (raw Prolific ids: for payment only), from the study file's
        rates; `bonus_games.csv`: the games each line pays for and the lines not paid, with why."""
        refused = await guard(request)
        if refused is not None:
            return refused
        from turinglab.store.payments import games_csv, payments, prolific_csv

        hub = request.app.state.hub
        p = hub.study.prolific
        if p is None or p.bonus_per_game + p.bonus_per_correct == 0:
            return message(request, "No bonus set", "Set prolific.bonus_per_game or prolific.bonus_per_correct in the "
                           "study file (or use `turinglab admin bonus --per-game ... --per-correct ...`).", 404,
                           link="/admin", link_text="Back to admin")
        pay = await asyncio.to_thread(payments, request.app.state.store, hub.study_id, p.bonus_per_game,
                                      p.bonus_per_correct, hub.study)
        games = request.url.path.endswith("bonus_games.csv")
        log.info("admin: %r downloaded the Prolific bonus %s (%d lines, %s in total)", request.state.admin,
                 "games table" if games else "file", len(pay.paid), pay.total)
        name = "prolific_bonus_RAW.games.csv" if games else "prolific_bonus_RAW.csv"
        return Response(games_csv(pay) if games else prolific_csv(pay), media_type="text/csv",
                        headers={"Content-Disposition": f'attachment; filename="{name}"',
                                 "X-Bonus-Total": pay.total, "X-Bonus-Lines": str(len(pay.paid))})
