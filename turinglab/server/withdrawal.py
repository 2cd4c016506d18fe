"""Withdrawal from the web (issue 38): POST /admin/withdraw (a researcher, with the admin form's
token) and POST /p/{token}/withdraw (the participant, from the done page, unless the study's
`withdrawal.on_done_page` is off). Both call turinglab/store/withdraw.py; the running servers
then end the participant's game and forget their link (turinglab/server/live/recruitment.py)."""

from __future__ import annotations

import asyncio
import logging
from typing import Annotated, Any

from fastapi import FastAPI, Form, Request
from fastapi.responses import Response

from turinglab.store.db import StoreError
from turinglab.store.withdraw import withdraw

log = logging.getLogger("turinglab.server")
PARTICIPANT = "participant"  # `who` of a withdrawal asked from the done page
DONE_REASON = "asked from the done page"


def rights_rows(store: Any, study: Any) -> dict[str, Any]:
    """The /admin figures of issue 38: withdrawals, and what the retention settings keep and erase."""
    from turinglab.store.retention import due
    from turinglab.store.withdraw import withdrawals

    mine = [w for w in withdrawals(store) if w.study in (None, f"live:{study.name}")]
    ret = study.retention
    d = next((x for x in due(store) if x.study == study.name), None)
    lines = []
    if ret is None or (ret.payment_ids_days is None and ret.raw_chat_days is None):
        lines.append("no retention set in the study file: raw Prolific ids and raw chat are kept until you erase them")
    if d is not None and ret.payment_ids_days is not None:
        lines.append(f"raw Prolific ids: kept {ret.payment_ids_days} days after a participant's last game; "
                     f"{d.kept_ids} participant(s) kept, {len(d.participants)} due for `turinglab db purge`")
    if d is not None and ret.raw_chat_days is not None:
        lines.append(f"raw chat: redacted {ret.raw_chat_days} days after a game ended; {d.kept_chat} game(s) kept, "
                     f"{len(d.games)} due for `turinglab db purge`")
    return {"withdrawals": len(mine), "last_withdrawal_ms": mine[-1].t_ms if mine else None, "retention": lines}


def offered(study: Any) -> bool:
    return study.withdrawal is None or study.withdrawal.on_done_page


def going_on(study: Any, link: str | None, offer: dict[str, str] | None) -> dict[str, Any]:
    """How a page that ends the participant's part sends them on to `link`: a refresh after a few
    seconds, or, on a page that offers withdrawal, the study's `withdrawal.redirect_after_s` counted
    down on the page (a button stops it; 0: no redirect, the participant follows the link)."""
    if not link:
        return {}
    if offer is None:
        return {"redirect": link}
    from turinglab.game.config import REDIRECT_AFTER_S

    return {"countdown": REDIRECT_AFTER_S if study.withdrawal is None else study.withdrawal.redirect_after_s}


def done_offer(app: FastAPI, study: Any, pid: str, code: str) -> dict[str, str] | None:
    """What the done page shows: the participant's code and the form that withdraws (None: off)."""
    if not offered(study):
        return None
    return {"action": f"/p/{pid}/withdraw", "csrf": app.state.csrf.token(pid), "code": code}


async def _applied(request: Request) -> None:
    try:
        await request.app.state.hub.admin.sync()  # here at once; other workers within their poll
    except Exception:  # noqa: BLE001 - stored: every server applies it at its next read
        log.exception("applying a withdrawal here failed; the next read applies it")


def add_withdrawal_routes(app: FastAPI, guard, message, export_key, posted, study: Any) -> None:  # noqa: ANN001
    @app.post("/admin/withdraw")
    async def admin_withdraw(request: Request) -> Response:
        from turinglab.server.admin_actions import ActionError, admin_form, find_participant

        f, refused = await admin_form(app, guard, message, request)
        if refused is not None:
            return refused

        store = request.app.state.store
        try:
            key = await export_key(request)
            pid = await asyncio.to_thread(find_participant, store, f.get("target", ""), key,
                                          f"live:{study.name}")
            w = await asyncio.to_thread(withdraw, store, pid, f.get("reason", ""), request.state.admin)
        except (ActionError, StoreError) as exc:
            return message(request, "Not withdrawn", str(exc), 400, link="/admin", link_text="Back")
        log.info("admin: %r withdrew a participant (withdrawal %s)", request.state.admin, w.id)
        await _applied(request)
        return message(request, "Withdrawn", f"The participant's messages, verdict reasons, survey answers and ids "
                       f"are erased from {w.games} game(s) (withdrawal {w.id}); their games keep their place.",
                       link="/admin", link_text="Back to admin")

    def live_ending(request: Request, pid: str) -> tuple[str | None, str | None]:
        outcome = request.app.state.hub.outcome(pid)
        code = study.completion_code(outcome) if outcome else None
        return code, study.completion_link(outcome) if code else (study.completion_url if outcome == "completed" else None)

    async def live_applied(request: Request, pid: str) -> None:
        await _applied(request)

    add_done_withdrawal(app, study, message, posted, live_ending, live_applied)


def add_done_withdrawal(app: FastAPI, study: Any, message, posted, ending, applied) -> None:  # noqa: ANN001
    """POST /p/{token}/withdraw, the done page's form (live and judge pages): `ending(request, pid)`
    gives the participant's completion code and link (read before the withdrawal: still theirs, e.g.
    to be paid), `applied(request, pid)` runs after it (the server forgets them)."""
    _ = app.state.gettext  # this study's language

    @app.post("/p/{token}/withdraw")
    async def participant_withdraw(request: Request, token: str, confirm: Annotated[str | None, Form()] = None,
                                   csrf_field: Annotated[str | None, Form(alias="csrf")] = None) -> Response:
        if not offered(study):
            return message(request, _("Not available"), _("This study does not offer withdrawal here: write to the "
                           "researchers with the code shown on your last page."), 404)
        p, refused = await posted(request, token, csrf_field)
        if refused:
            return refused
        if confirm != "yes":
            return message(request, _("Not withdrawn"), _("Confirm with the button to withdraw your data."), 400,
                           link=f"/p/{p.id}/done", link_text=_("Back"))
        code, link = ending(request, p.id)
        try:
            await asyncio.to_thread(withdraw, request.app.state.store, p.id, DONE_REASON, PARTICIPANT)
        except StoreError as exc:
            log.error("withdrawal of a participant failed: %s", exc)
            return message(request, _("Not withdrawn"), _("Your data could not be withdrawn just now; try again or "
                           "write to the researchers."), 503)
        await applied(request, p.id)
        return message(request, _("Your data is withdrawn"), _("Your messages, answers and ids are erased from the study. "
                       "Thank you for your time. You can close this page."), code=code, link=link,
                       link_text=_("Continue to the study site"))
