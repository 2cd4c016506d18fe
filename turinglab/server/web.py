"""What the live game's pages (app.py) and the static judge pages (judging/pages.py) share: the
templates and static files, page rendering, the participant cookie and Prolific ids, the CSRF
guard and security headers, the survey form and the database ping."""

from __future__ import annotations

import hashlib
import logging
import hmac
import os
import secrets
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from fastapi import FastAPI, Form, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from jinja2 import pass_context
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from turinglab import i18n
from turinglab.game import survey
from turinglab.store.api import Store

HERE = Path(__file__).parent
COOKIE = "turinglab_p"
PROLIFIC = {"PROLIFIC_PID": "prolific_pid", "STUDY_ID": "prolific_study_id", "SESSION_ID": "prolific_session_id"}
DEFAULT_DISPLAY_NAME = i18n.N_("Human or AI? A chat study")  # the header when the study sets no display_name


def mount_root(request: Request) -> dict[str, str]:
    """`root`: the path the app is mounted under ("" when it is the whole server; "/s/<slug>" for
    one study of several, turinglab/server/studies.py): every page's own links start with it."""
    return {"root": request.scope.get("root_path", "")}


templates = Jinja2Templates(directory=str(HERE / "templates"),  # autoescape is on for .html
                            context_processors=[mount_root])
templates.env.globals["survey"] = survey  # the survey form lists the answers from one place
# the pages' text in the study's language (issue 39): `_()` / {% trans %} look up the catalogue of
# the page's `lang` (page_renderers puts the study's language in every page's context)
templates.env.add_extension("jinja2.ext.i18n")
templates.env.policies["ext.i18n.trimmed"] = True


@pass_context
def _gettext(ctx: Any, message: str) -> str:
    return i18n.translations(ctx.get("lang")).gettext(message)


@pass_context
def _ngettext(ctx: Any, singular: str, plural: str, n: int) -> str:
    return i18n.translations(ctx.get("lang")).ngettext(singular, plural, n)


@pass_context
def _pgettext(ctx: Any, context: str, message: str) -> str:
    return i18n.translations(ctx.get("lang")).pgettext(context, message)


templates.env.install_gettext_callables(_gettext, _ngettext, newstyle=True, pgettext=_pgettext)  # type: ignore[attr-defined]




class Survey(BaseModel):
    """The optional demographic survey (every answer may be left out)."""

    model_config = ConfigDict(extra="forbid", strict=True)  # age true or "yes" is not an answer
    age: Annotated[int | None, Field(ge=survey.AGE_RANGE[0], le=survey.AGE_RANGE[1])] = None
    gender: Literal[survey.GENDERS] | None = None  # type: ignore[valid-type]
    education: Literal[survey.EDUCATION] | None = None  # type: ignore[valid-type]
    chatbot_use: Literal[survey.CHATBOT_USE] | None = None  # type: ignore[valid-type]
    llm_knowledge: Literal[survey.LLM_KNOWLEDGE] | None = None  # type: ignore[valid-type]
    prior_visits: Literal[survey.PRIOR_VISITS] | None = None  # type: ignore[valid-type]
    # Zhang et al. asked judges their native language and country (static judge pages)
    native_language: Annotated[str | None, Field(min_length=1, max_length=60)] = None
    country: Annotated[str | None, Field(min_length=1, max_length=60)] = None
    skipped: bool = False

    @field_validator("*", mode="before")
    @classmethod
    def _blank_is_none(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = " ".join(v.split())  # free text: spaces and line breaks folded
        return None if v == "" else v

    @field_validator("age", mode="before")
    @classmethod
    def _age_from_form(cls, v: Any) -> Any:  # the form sends digits as text
        return int(v) if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) <= 3 else v


CSRF_FIELD, CSRF_HEADER = "csrf", "X-CSRF-Token"
CsrfForm = Annotated[str | None, Form(alias=CSRF_FIELD)]  # the CSRF token of a posted form
# every response: no inline script or style, no framing (clickjacking), no referrer to other sites
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"),
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}


class Csrf:
    """Cross-site request forgery guard for POSTs (and the websocket handshake).

    Two checks: (1) a request that a browser marks as coming from another site (`Sec-Fetch-Site:
    cross-site`, or an `Origin`/`Referer` whose host is not this server's `Host` nor one of the
    trusted origins) is refused; a request with none of these headers is not a browser's form
    post and passes this check. (2) Participant POSTs (consent, survey) must also carry the
    participant's token: an HMAC of the participant id under the server's secret
    (`$TURINGLAB_SECRET`, else random per process: a page loaded before a restart must be reloaded).
    """

    def __init__(self, secret: str | None = None, trusted_origins: tuple[str, ...] = ()) -> None:
        self.secret = (secret or os.environ.get("TURINGLAB_SECRET") or secrets.token_hex(32)).encode()
        env = tuple(o for o in os.environ.get("TURINGLAB_TRUSTED_ORIGINS", "").split(",") if o.strip())
        self.trusted = {urlsplit(o.strip()).netloc.lower() or o.strip().lower() for o in (*trusted_origins, *env)}

    def token(self, pid: str) -> str:
        return hmac.new(self.secret, b"csrf:" + pid.encode(), hashlib.sha256).hexdigest()[:32]

    def token_ok(self, pid: str, given: str | None) -> bool:
        return isinstance(given, str) and hmac.compare_digest(given.encode(), self.token(pid).encode())

    def cross_site(self, headers: Any) -> bool:
        if headers.get("sec-fetch-site") == "cross-site":
            return True
        origin = headers.get("origin") or headers.get("referer")
        if origin is None:
            return False
        host = urlsplit(origin).netloc.lower()
        return not host or host not in {headers.get("host", "").lower(), *self.trusted}


def _db_ping(store: Store) -> None:
    from sqlalchemy import text

    with store.engine.connect() as conn:
        conn.execute(text("SELECT 1"))


async def read_survey(request: Request) -> dict[str, Any] | JSONResponse:
    """The survey answers of a JSON body, or the 422 that says what was wrong (live and static pages)."""
    try:
        answers = Survey.model_validate(await request.json())
    except ValidationError as exc:
        msg = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
        _ = request.app.state.gettext  # the field and the problem stay as pydantic says them
        return JSONResponse({"detail": _("survey not saved: %(problem)s", problem=msg)}, status_code=422)
    except ValueError:
        return JSONResponse({"detail": request.app.state.gettext(
            "survey not saved: the body must be a JSON object")}, status_code=422)
    return answers.model_dump(exclude_none=True)


def page_renderers(app: FastAPI, study_name: str, lang: str = i18n.SOURCE):  # noqa: ANN201 - two functions
    """Mount /static on `app` and return `page(request, template, status, **ctx)` and
    `message(request, heading, text, status, **kw)` for its pages (headed `study_name`, in `lang`:
    the templates' text and the scripts' JSON catalogue)."""
    app.mount("/static", StaticFiles(directory=str(HERE / "static")), name="static")
    app.state.gettext = i18n.gettext_for(lang)  # the routes' own texts (request.app.state.gettext)
    base = {"study_name": app.state.gettext(study_name), "lang": lang, "i18n_js": i18n.js_catalogue(lang)}

    def page(request: Request, name: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return templates.TemplateResponse(request, name, {**base, **ctx}, status_code=status)

    def message(request: Request, heading: str, text: str, status: int = 200, **kw: Any) -> HTMLResponse:
        return page(request, "message.html", status, heading=heading, text=text, **kw)

    return page, message


def add_consent_routes(app: FastAPI, posted, message, *, consented, no_consent_url: str | None,  # noqa: ANN001
                       declined_text: str, on_decline=None, declined_page=None) -> None:  # noqa: ANN001
    """POST /p/{token}/consent and /p/{token}/decline, the same for live and judge pages.
    `posted(request, token, csrf)` gives the participant and a refusal; `consented(p)` records
    the consent; a decline goes to `no_consent_url` (e.g. Prolific's code) or says `declined_text`."""
    @app.post("/p/{token}/consent")
    async def consent(request: Request, token: str, agree: Annotated[str | None, Form()] = None,
                      csrf_field: CsrfForm = None) -> Response:
        p, refused = await posted(request, token, csrf_field)
        if refused:
            return refused
        _ = request.app.state.gettext
        if agree != "yes":
            return message(request, _("Consent needed"), _("Tick the box to agree before you continue."), 400,
                           link=f"/p/{p.id}", link_text=_("Back to the consent form"))
        await consented(p)
        return RedirectResponse(f"/p/{p.id}", status_code=303)

    @app.post("/p/{token}/decline")
    async def decline(request: Request, token: str, csrf_field: CsrfForm = None) -> Response:
        """ "I do not agree": nothing is played or judged."""
        p, refused = await posted(request, token, csrf_field)
        if refused:
            return refused
        if on_decline is not None:
            on_decline(p)
        if declined_page is not None:  # the study's own page (e.g. a Prolific completion code)
            return declined_page(request, p)
        if no_consent_url:
            return RedirectResponse(no_consent_url, status_code=303)
        _ = request.app.state.gettext
        return message(request, _("You did not consent"), _(declined_text))


def add_survey_route(app: FastAPI, find, forged, save) -> None:  # noqa: ANN001
    """POST /p/{token}/survey (JSON), the same for live and judge pages: `find(token)` gives the
    participant or None, `forged(request, pid, json=True)` a refusal or None, `save(p, answers)` stores."""

    @app.post("/p/{token}/survey")
    async def survey(request: Request, token: str) -> Response:
        p = await find(token)
        if p is None:
            return JSONResponse({"detail": request.app.state.gettext("unknown participant link")}, status_code=404)
        refused = forged(request, p.id, json=True)
        if refused:
            return refused
        answers = await read_survey(request)
        if isinstance(answers, JSONResponse):
            return answers
        await save(p, answers)
        return JSONResponse({"ok": True})


def csrf_refusal(csrf: Csrf, message, request: Request, pid: str | None, field: str | None = None,  # noqa: ANN001
                 json: bool = False) -> Response | None:
    """A refusal if this POST came from another site or lacks the participant's token (from the
    header or the form `field`), else None: a JSON 403 for scripts, a page for browsers."""
    if csrf.cross_site(request.headers):
        why = i18n.N_("it was sent from another site")
    elif pid is not None and not csrf.token_ok(pid, request.headers.get(CSRF_HEADER) or field):
        why = i18n.N_("its form token is missing or out of date (for example, the server restarted)")
    else:
        return None
    logging.getLogger("turinglab.server").warning("refused a POST to %s: %s", request.url.path, why)
    _ = getattr(request.app.state, "gettext", None) or i18n.gettext_for(None)
    if json:
        return JSONResponse({"detail": _("not saved: %(why)s; reload the page and try again", why=_(why))},
                            status_code=403)
    return message(request, _("Request refused"), _("This request was refused because %(why)s. Open your "
                   "personal link again and repeat the step.", why=_(why)), 403, link=f"/p/{pid}" if pid else "/",
                   link_text=_("Reload"))
