"""Judge pages of a static Turing test (Zhang et al.): `create_static_app`, served by `turinglab serve`.

One judge = one participant (consent, Prolific ids, demographics as in the live game). Their link
`/p/{id}` resumes their session: the store deals them a balanced sample once
(`Store.start_judge_session`), and the page shows item number `done` (trials stored so far), so a
refresh shows the same item and a repeated answer for an item already stored is not stored again.
Each answer is a form POST with the item's position and a signed time the server showed it: the
trial is appended to the store (group commit: answers arriving together share one transaction,
`trial_writer.TrialWriter`), then the browser is redirected (the acknowledgement). Answers faster
than the study's `session.min_rt_ms` (by the server's clock too) are refused.

Blinding: the page never carries the item's truth, agent, key or id; an image is fetched by the
item's position in the judge's session. The truth (human/machine, not the agent) is shown only
after the answer, on the feedback page, and only for items of the feedback phase.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import random
import time
import weakref
from dataclasses import replace
from functools import lru_cache
from collections import Counter
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response

from turinglab import i18n
from turinglab.i18n import N_, NP_
from turinglab.server.web import (
    COOKIE, CSRF_FIELD, PROLIFIC, Csrf, _db_ping, add_consent_routes, add_survey_route, csrf_refusal,
    page_renderers,
    templates,
)
from turinglab.plugins.manager import static_tasks
from turinglab.server.guards import HealthLog, PerAddress, returning, too_many_starts
from turinglab.server.judging.trial_writer import TrialWriter
from turinglab.server.withdrawal import add_done_withdrawal
from turinglab.game.config import consent_version
from turinglab.game.static_config import StaticStudy
from turinglab.statictests.fill import dealable, fill_problem
from turinglab.statictests.images import IMAGE_TYPES, safe_image
from turinglab.statictests.speakers import speaker_truths
from turinglab.store import admin_log
from turinglab.store.api import Store
from turinglab.store.db import StoreError, UnknownId
from turinglab.store.static import ItemInfo, JudgeSessionInfo, TrialIn

log = logging.getLogger("turinglab.server")
DUPLICATE_PID = "duplicate_prolific_pid"


class NotReady(StoreError):
    """The study's items cannot deal a judge a session (statictests/fill.py says why at start)."""


GENDERS = ("female", "male")  # Zhang et al. asked "male or female" for each speaker
KINDS = (NP_("kind", "human"), NP_("kind", "machine"))  # the feedback page's truth and answer, translated
DEFAULT_DISPLAY_NAME = N_("Human or machine? A short study")
DEFAULT_CONSENT = N_(
    "This is a research study about how people tell human responses from machine responses.\n\n"
    "You will see a series of short items (words, pictures with descriptions, or conversations) and decide "
    "for each whether a human or a machine produced it. Your answers, response times and optional answers "
    "about yourself are stored under a random identifier and used for research.\n\n"
    "Taking part is voluntary: you can stop at any time by closing the page, and come back later with "
    "your personal link."
)


def public_item(item: ItemInfo, task: str, order_seed: str) -> dict[str, Any]:
    """What the page may show of an item: the stimulus and the response, never truth/agent/keys
    (plus what the task plugin's `show` adds). Choice lists are shuffled per judge and item so
    the correct one has no fixed place."""
    f, p = item.stimulus_fields, item.payload
    spec = static_tasks()[task]
    out: dict[str, Any] = {"task": task, "cue": item.stimulus_text, "text": item.text,
                           "image": bool(item.stimulus_image)}
    if spec.show is not None:
        out.update(spec.show(p, item.text))
    word = object_word(f, order_seed) if task in ("color", "object") else None
    if word is not None:
        out["object_word"] = word[0]
    choices = f.get("control_choices") or f.get("topic_choices")
    if isinstance(choices, list) and choices:
        choices = [str(c) for c in choices]
        random.Random(order_seed).shuffle(choices)
        out["control_choices"] = choices
        out["control_question"] = str(f.get("control_question") or spec.control_question)  # translated on the page
    return out


@lru_cache(maxsize=64)
def task_fragment(task: str):
    """The task plugin's part of the judge page, compiled once (autoescaped as every page)."""
    return templates.env.from_string(static_tasks()[task].fragment)


def _words(v: Any) -> list[str]:
    return [v] if isinstance(v, str) and v.strip() else [str(w) for w in v if str(w).strip()] if isinstance(v, list) else []


def object_word(fields: dict[str, Any], seed: str) -> tuple[str, str] | None:
    """Zhang's true/false control of the colour and object tasks: "Does this image contain the
    following - <word>?", the word being an object in the image (`fields["object_present"]`) or
    one that is not (`fields["object_absent"]`), half of the time each, fixed per judge and item.
    Returns (word, "yes"|"no": the right answer), or None when the stimulus gives no words."""
    present, absent = _words(fields.get("object_present")), _words(fields.get("object_absent"))
    if not present and not absent:
        return None
    rng = random.Random(seed + ":object")
    side = present if not absent or (present and rng.random() < 0.5) else absent
    return rng.choice(side), "yes" if side is present else "no"


def conversation_answer(labels: dict[str, str], item: ItemInfo) -> str:
    """The trial's human|machine answer for a conversation item: the judge's label of the speaker
    the item's truth is about (`payload.witness_speaker`, as from-games sets it); without it,
    machine when the judge called any speaker a machine (the item's truth is machine when any is)."""
    who = item.payload.get("witness_speaker")
    if who in labels:
        return labels[who]
    return "machine" if "machine" in labels.values() else "human"


class Signer:
    """Signed 'shown at' stamps: the server's own clock for the minimum-reaction-time check,
    carried by the form (nothing in memory to lose on a restart)."""

    def __init__(self, secret: bytes) -> None:
        self.key = hmac.new(secret, b"judge-shown", hashlib.sha256).digest()

    def sign(self, pid: str, n: int, t_ms: int) -> str:
        mac = hmac.new(self.key, f"{pid}:{n}:{t_ms}".encode(), hashlib.sha256).hexdigest()[:24]
        return f"{t_ms}.{mac}"

    def shown_ms(self, pid: str, n: int, stamp: str | None) -> int | None:
        t, _, mac = (stamp or "").partition(".")
        if not t.isdigit():
            return None
        return int(t) if hmac.compare_digest(self.sign(pid, n, int(t)), stamp or "") else None


def create_static_app(study: StaticStudy, db_url: str | None = None, *, admin_password: str | None = None,
                      admin_accounts: str | None = None,
                      secret: str | None = None, trusted_origins: tuple[str, ...] = (),
                      rng_seed: int | None = None, clock_ms=None) -> FastAPI:  # noqa: ANN001
    """The judge pages for one static study (its items must be in the store: `turinglab static import`).

    `study` is registered like `Store.register_static_study` (frozen once it has trials).
    `rng_seed` makes the judges' samples reproducible (tests); `clock_ms` replaces the clock (tests)."""
    store = Store(db_url)  # migrates
    study_id = store.register_static_study(study)
    info = store.static_study(study_id)
    study = info.study
    all_items = store.items(study_id)  # cached: items do not change while the pages run
    by_id = {i.id: i for i in all_items}
    n_items = len(all_items)
    if n_items == 0:
        store.close()
        raise StoreError(f"static study {study.name!r} has no items yet; add them first with "
                         "`turinglab static import --study NAME ...` (or `turinglab demo-data --static`)")
    study_key = f"static:{study.name}"  # judges belong to the study whose link made them
    dealt, left_out = dealable(all_items, study.task)  # a picture task never deals an item without one
    if left_out:
        log.warning("static study %r: %s", study.name, left_out)
    not_ready = fill_problem(dealt, study) if dealt else (left_out or "no items to deal")
    if not_ready:  # one line at start; each judge then sees "not ready", no traceback
        log.error("static study %r is not ready: %s", study.name, not_ready)
    now = clock_ms or (lambda: int(time.time() * 1000))
    image_dir = Path(study.image_dir).expanduser().resolve() if study.image_dir else None
    seeds = random.Random(rng_seed)
    session_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
    # in-memory caches (the store stays the source of truth): a judge's session with its count of
    # committed trials, updated only after a commit; consented judges (read again after the survey)
    sessions: dict[str, JudgeSessionInfo] = {}
    consented: dict[str, Any] = {}
    inflight: dict[tuple[str, int], asyncio.Future] = {}  # answers being written, by (judge, position)
    writer = TrialWriter(store, study_id)  # group commit of the answers (one transaction per batch)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        writer.start()
        try:
            yield
        finally:
            try:
                await writer.stop()  # what is queued is written before the store closes
            finally:
                store.close()

    app = FastAPI(title=f"turinglab: {study.name}", lifespan=lifespan, docs_url=None, redoc_url=None)
    app.state.study, app.state.store, app.state.static_study_id = study, store, study_id
    app.state.not_ready, app.state.left_out = not_ready, left_out

    @app.exception_handler(NotReady)
    async def unready(request: Request, exc: NotReady) -> Response:
        log.error("cannot deal a judge a session: %s", exc)
        return message(request, _("The study is not ready"), _("This study cannot show items right now. "
                       "Please try again later."), 503)
    app.state.trial_writer = writer
    csrf = app.state.csrf = Csrf(secret, trusted_origins)
    signer = Signer(csrf.secret)
    from turinglab.server.logs import install

    install()  # participant tokens out of the logs, every kind of line at a bounded rate
    health = app.state.health_log = HealthLog()
    starts = app.state.start_limit = PerAddress()
    page, message = page_renderers(app, study.display_name or DEFAULT_DISPLAY_NAME, study.language)
    _ = app.state.gettext  # this study's language

    def not_found(request: Request) -> HTMLResponse:
        return message(request, _("Link not found"), _("This personal link is not valid. Check that you copied "
                       "all of it, or start again."), 404, link="/", link_text=_("Start again"))

    def forged(request: Request, pid: str | None, field: str | None = None, json: bool = False) -> Response | None:
        return csrf_refusal(csrf, message, request, pid, field, json)

    async def judge(token: str):  # noqa: ANN202 - ParticipantInfo | None
        if not 1 <= len(token) <= 40:
            return None
        if token in consented:
            return consented[token]
        try:
            p = await asyncio.to_thread(store.get_participant, token)
        except UnknownId:
            return None
        if not admin_log.belongs(p, study_key):  # another study's link opens nothing here
            return None
        if p.consent_ms is not None:
            consented[token] = p  # only the survey changes it from here (it drops the cached copy)
        return p

    async def new_judge(request: Request) -> str:
        """As the live game's `Hub.new_person`: a Prolific id returns to its judge only from the
        browser holding that judge's cookie; from elsewhere it gets a new judge labelled duplicate."""
        pro = {k: request.query_params[q][:64] for q, k in PROLIFIC.items() if request.query_params.get(q)}
        pp, label = pro.get("prolific_pid"), None
        if pp:
            mine = await judge(request.cookies.get(COOKIE) or "")
            if mine is not None and mine.prolific_pid == pp:
                return mine.id
            if await asyncio.to_thread(admin_log.same_prolific_id, store, pp, study_key):
                label = DUPLICATE_PID
        return await asyncio.to_thread(store.create_participant, t_ms=now(), label=label, study=study_key, **pro)

    def to_judge(pid: str) -> RedirectResponse:
        r = RedirectResponse(f"/p/{pid}", status_code=303)
        r.set_cookie(COOKIE, pid, max_age=60 * 60 * 24 * 90, httponly=True, samesite="lax")
        return r

    async def session(pid: str, *, fresh: bool = False) -> JudgeSessionInfo:
        if not fresh and pid in sessions:
            return sessions[pid]
        lock = session_locks.get(pid)
        if lock is None:
            lock = session_locks[pid] = asyncio.Lock()
        async with lock:  # one session per judge even when two tabs open the link at once
            if fresh or pid not in sessions:
                try:
                    sess = await asyncio.to_thread(store.start_judge_session, study_id, pid,
                                                   seed=seeds.getrandbits(64), items=dealt, study=study)
                except StoreError as exc:
                    raise NotReady(str(exc)) from None
                if fresh:  # the stored count, read again (e.g. another process stored an answer)
                    sess = await asyncio.to_thread(store.judge_session, sess.id)
                sessions[pid] = sess
            return sessions[pid]

    def committed(pid: str, sess: JudgeSessionInfo, done: int) -> None:
        cur = sessions.get(pid)
        if cur is not None and cur.id == sess.id and cur.done < done:
            sessions[pid] = replace(cur, done=done)

    async def item_at(sess: JudgeSessionInfo, n: int) -> ItemInfo:
        rid = sess.items[n].response_id
        if rid in by_id:
            return by_id[rid]
        return (await asyncio.to_thread(store.items, study_id, ids=[rid]))[0]

    @app.get("/", response_class=HTMLResponse)
    async def landing(request: Request) -> Response:
        q = request.url.query
        pp = request.query_params.get("PROLIFIC_PID")
        if pp:  # a GET (a link on any site) creates nobody and sets no cookie: the page's button POSTs
            mine = await returning(store, pp[:64], request.cookies.get(COOKIE), study_key)
            if mine is not None:
                return RedirectResponse(f"/p/{mine}", status_code=303)
            return page(request, "judge_landing.html", query=f"?{q}", intro=_(static_tasks()[study.task].intro))
        cookie = request.cookies.get(COOKIE)
        if cookie and await judge(cookie):
            return RedirectResponse(f"/p/{cookie}", status_code=303)
        return page(request, "judge_landing.html", query=f"?{q}" if q else "", intro=_(static_tasks()[study.task].intro))

    @app.post("/start")
    async def start(request: Request) -> Response:
        refused = forged(request, None)
        if refused:
            return refused
        wait = starts.wait(request.client.host if request.client else "?")
        return too_many_starts(request, message, wait) if wait else to_judge(await new_judge(request))

    @app.get("/p/{token}", response_class=HTMLResponse)
    async def show(request: Request, token: str) -> Response:
        p = await judge(token)
        if p is None:
            return not_found(request)
        if p.consent_ms is None:
            resp = page(request, "consent.html", token=p.id, csrf=csrf.token(p.id),
                        consent_text=study.consent_text or _(DEFAULT_CONSENT), no_consent=bool(study.no_consent_url))
        else:
            sess = await session(p.id)  # NotReady: the "not ready" page (unready)
            if sess.done < len(sess.items):
                resp = await item_page(request, p.id, sess, sess.done)
            elif not p.demographics:
                resp = page(request, "judge_survey.html", token=p.id, csrf=csrf.token(p.id), n=len(sess.items))
            else:
                resp = page(request, "message.html", heading=_("Thank you!"),
                            text=_("You have answered all %(n)s items. Your answers are saved.", n=len(sess.items)),
                            link=f"/p/{p.id}/done", link_text=_("Finish the study"))
        resp.set_cookie(COOKIE, p.id, max_age=60 * 60 * 24 * 90, httponly=True, samesite="lax")
        resp.headers["Cache-Control"] = "no-store"
        return resp

    async def item_page(request: Request, pid: str, sess: JudgeSessionInfo, n: int) -> HTMLResponse:
        item = await item_at(sess, n)
        shown = public_item(item, study.task, f"{sess.id}:{n}")
        feedback_phase = sess.items[n].phase == "feedback"
        n_feedback = sum(1 for i in sess.items if i.phase == "feedback")
        return page(request, "judge.html", token=pid, csrf=csrf.token(pid), n=n, total=len(sess.items),
                    item=shown, task=study.task, question=_(q) if (q := static_tasks()[study.task].question) else "", genders=GENDERS,
                    task_fragment=task_fragment(study.task),
                    ask_gender=study.ask_gender,
                    stamp=signer.sign(pid, n, now()), min_rt_ms=study.session.min_rt_ms,
                    feedback_phase=feedback_phase, n_feedback=n_feedback,
                    first_test=(n == n_feedback and n_feedback > 0))

    async def posted(request: Request, token: str, csrf_field: str | None) -> tuple[Any, Response | None]:
        """The judge of a form POST, and its refusal (unknown link, forged) or None."""
        p = await judge(token)
        if p is None:
            return None, not_found(request)
        return p, forged(request, p.id, csrf_field)

    async def record_consent(p: Any) -> None:
        if p.consent_ms is None:
            await asyncio.to_thread(store.update_participant, p.id, consent_ms=now(),
                                    consent_hash=consent_version(study.consent_text or DEFAULT_CONSENT))

    add_consent_routes(
        app, posted, message, consented=record_consent, no_consent_url=study.no_consent_url,
        declined_text=N_("Thank you for considering the study. You have not taken part, and no answers of yours "
                         "were recorded. You can close this page."))

    @app.post("/p/{token}/answer")
    async def answer(request: Request, token: str) -> Response:
        p = await judge(token)
        if p is None or p.consent_ms is None:
            return not_found(request)
        form = await request.form()
        get = lambda k: (v if isinstance(v := form.get(k), str) else None)  # noqa: E731
        refused = forged(request, p.id, get(CSRF_FIELD))
        if refused:
            return refused
        sess = await session(p.id)
        raw_n = get("n") or ""
        n = int(raw_n) if raw_n.isdigit() else -1
        if n != sess.done:  # the cache may be behind the store (another server process): read it again
            sess = await session(p.id, fresh=True)
        if 0 <= n < sess.done:  # stored already (a repeated POST, e.g. the back button): never twice
            return next_page(p.id, sess, n)
        if n != sess.done or n >= len(sess.items):
            return message(request, _("Out of step"), _("That answer does not belong to the item you are on "
                           "(perhaps it was answered in another tab). Continue from your link."), 409,
                           link=f"/p/{p.id}", link_text=_("Continue"))
        item = await item_at(sess, n)
        shown_ms = signer.shown_ms(p.id, n, get("shown"))
        if shown_ms is None:
            return message(request, _("Please answer again"), _("The page was out of date; here it is again."), 400,
                           link=f"/p/{p.id}", link_text=_("Continue"))
        elapsed = now() - shown_ms
        min_rt = study.session.min_rt_ms
        raw_rt = get("rt_ms") or ""
        rt = int(raw_rt) if raw_rt.isdigit() and 0 < int(raw_rt) <= elapsed + 2000 else elapsed
        if elapsed < min_rt or rt < min_rt:
            return message(request, _("Too fast"), _("Please look at each item for at least %(seconds)s "
                           "seconds before you answer. Nothing was saved; the item is shown again.",
                           seconds=i18n.number(min_rt / 1000, study.language)), 400,
                           link=f"/p/{p.id}", link_text=_("Back to the item"))
        answers: dict[str, Any] = {}
        problems: list[str] = []
        shown = public_item(item, study.task, f"{sess.id}:{n}")
        if study.task == "conversation":
            labels = {}
            for i, sp in enumerate(shown["speakers"]):
                lab, gen = get(f"speaker_{i}"), get(f"gender_{i}")
                if lab not in ("human", "machine"):
                    problems.append(_("say whether speaker %(speaker)s is a human or a machine", speaker=sp))
                if study.ask_gender is not False:
                    if gen not in GENDERS:
                        problems.append(_("choose the gender of speaker %(speaker)s", speaker=sp))
                    answers.setdefault("genders", {})[sp] = gen
                labels[sp] = lab
            answers["speakers"] = labels
            verdict = conversation_answer(labels, item) if not problems else None
        else:
            verdict = get("answer")
            if verdict not in ("human", "machine"):
                problems.append(_("choose human or machine"))
            if study.ask_gender:
                answers["gender"] = get("gender")
                if answers["gender"] not in GENDERS:
                    problems.append(_("choose whether the speaker was male or female"))
        if "object_word" in shown:
            word, right = object_word(item.stimulus_fields, f"{sess.id}:{n}")
            said = get("object")
            if said not in ("yes", "no"):
                problems.append(_("say whether the picture contains “%(word)s” (yes or no)", word=word))
            answers.update(object_word=word, object_answer=said, object_truth=right)
        if "control_choices" in shown:
            ctl = get("control")
            if ctl not in shown["control_choices"]:
                problems.append(_("answer the question about the topic") if study.task == "conversation"
                                else _("answer the question about the picture"))
            answers["control"] = ctl
        if problems:
            return message(request, _("Answer incomplete"), _("Nothing was saved: %(problems)s.", problems="; ".join(problems)),
                           400, link=f"/p/{p.id}", link_text=_("Back to the item"))
        phase = sess.items[n].phase
        trial = TrialIn(p.id, item.id, seq=n, answer=verdict, rt_ms=rt, phase=phase,
                        feedback_shown=phase == "feedback", answers=answers, t_ms=now(), session_id=sess.id)
        key = (p.id, n)
        if key in inflight:  # the same answer sent twice at once: wait for the first one's commit
            try:
                await asyncio.shield(inflight[key])
            except Exception:  # noqa: BLE001 - read below what the store holds
                pass
            again = await session(p.id, fresh=True)
            if again.done > n:
                return next_page(p.id, again, n)
        inflight[key] = write = asyncio.ensure_future(writer.append(trial))
        try:
            await asyncio.shield(write)  # returns once the trial's batch is committed
        except StoreError:
            again = await session(p.id, fresh=True)
            if again.done > n:  # the same answer arrived twice at once: the first one is stored
                return next_page(p.id, again, n)
            raise
        finally:
            if inflight.get(key) is write:
                del inflight[key]
        committed(p.id, sess, n + 1)  # only after the commit
        return next_page(p.id, sess, n)

    def next_page(pid: str, sess: JudgeSessionInfo, n: int) -> RedirectResponse:
        if sess.items[n].phase == "feedback":
            return RedirectResponse(f"/p/{pid}/feedback/{n}", status_code=303)
        return RedirectResponse(f"/p/{pid}", status_code=303)

    @app.get("/p/{token}/feedback/{n}", response_class=HTMLResponse)
    async def feedback(request: Request, token: str, n: int) -> Response:
        """The truth of a feedback-phase item, only after its answer is stored."""
        p = await judge(token)
        if p is None or p.consent_ms is None:
            return not_found(request)
        sess = await session(p.id)
        if not (0 <= n < sess.done) or sess.items[n].phase != "feedback":
            return RedirectResponse(f"/p/{p.id}", status_code=303)
        item = await item_at(sess, n)
        mine = (await asyncio.to_thread(store.trials, study_id, judge_id=p.id))[n]
        if study.task == "conversation":
            truth = {sp: t for sp, (t, _agent) in speaker_truths(item.payload).items()}  # never the agent's name
            said = mine.answers.get("speakers", {})
            rows = [{"who": _("Speaker %(speaker)s", speaker=sp), "truth": truth.get(sp, "?"), "said": said.get(sp, "?")}
                    for sp in sorted(set(truth) | set(said))]
        else:
            rows = [{"who": _("This response"), "truth": item.truth, "said": mine.answer}]
        return page(request, "judge_feedback.html", token=p.id, rows=rows, n=n, total=len(sess.items))

    @app.get("/p/{token}/image/{n}")
    async def image(request: Request, token: str, n: int) -> Response:
        """The picture of item n of this judge's session (the current one or one already answered)."""
        p = await judge(token)
        if p is None or p.consent_ms is None or image_dir is None:
            return Response("no such image", status_code=404)
        sess = await session(p.id)
        if not (0 <= n <= sess.done and n < len(sess.items)):
            return Response("no such image", status_code=404)
        item = await item_at(sess, n)
        path = safe_image(image_dir, item.stimulus_image)
        if path is None:
            return Response("no such image", status_code=404)
        return FileResponse(path, media_type=IMAGE_TYPES[path.suffix.lower()],
                            headers={"Cache-Control": "private, max-age=3600"})

    async def save_survey(p: Any, answers: dict[str, Any]) -> None:
        await asyncio.to_thread(store.update_participant, p.id, demographics=answers)
        consented.pop(p.id, None)

    add_survey_route(app, judge, forged, save_survey)

    @app.get("/p/{token}/done", response_class=HTMLResponse)
    async def done(request: Request, token: str) -> Response:
        p = await judge(token)
        if p is None:
            return not_found(request)
        sess = await session(p.id) if p.consent_ms is not None else None
        if sess is None or sess.done < len(sess.items):
            return RedirectResponse(f"/p/{p.id}", status_code=303)
        from turinglab.server.withdrawal import done_offer, going_on

        offer = done_offer(app, study, p.id, await judge_code(p.id))
        link = study.completion_url
        if link and offer is None:
            return RedirectResponse(link, status_code=303)
        text = _("Thank you for taking part.") if link else _("Thank you for taking part. You can close this page.")
        return message(request, _("Thank you!"), text, link=link, link_text=_("Continue to the study site"),
                       withdraw=offer, **going_on(study, link, offer))

    async def judge_code(pid: str) -> str:
        """The judge's pseudonym (as in the static export), which the researchers can withdraw by."""
        from turinglab.analysis.export.pseudonyms import export_key, keyed

        if not export_keys:
            export_keys.append(await asyncio.to_thread(export_key, store))
        return keyed(pid, export_keys[0])

    async def forget(request: Request, pid: str) -> None:  # withdrawn: this process forgets the judge
        consented.pop(pid, None)
        sessions.pop(pid, None)

    export_keys: list[bytes] = []
    add_done_withdrawal(app, study, message, posted, lambda request, pid: (None, study.completion_url), forget)

    @app.get("/favicon.ico")
    async def favicon() -> Response:
        return RedirectResponse("/static/favicon.svg", status_code=301)

    @app.get("/healthz")
    async def healthz(request: Request) -> Response:
        try:
            await asyncio.to_thread(_db_ping, store)
        except Exception as exc:  # noqa: BLE001 - any failure means the database is down for us
            health.failed(exc)
            return JSONResponse({"ok": False, "database": "down"}, status_code=503)
        health.ok()
        return JSONResponse({"ok": True, "database": "ok"})

    add_static_admin(app, admin_password, message, admin_accounts)
    return app


def add_static_admin(app: FastAPI, password: str | None, message, accounts_file: str | None = None) -> None:  # noqa: ANN001
    """/admin for a static study: judges in progress and done, trials per phase and agent, controls."""
    from turinglab.server.admin import admin_guard, guarded

    guard = admin_guard(app, password, message, accounts_file)

    @app.get("/admin", response_class=HTMLResponse)
    @guarded(guard)
    async def admin(request: Request) -> Response:
        store: Store = request.app.state.store
        sid = request.app.state.static_study_id
        info = await asyncio.to_thread(store.static_study, sid)
        trials = await asyncio.to_thread(store.trials, sid)
        items = {i.id: i for i in await asyncio.to_thread(store.items, sid)}
        sessions = await asyncio.to_thread(store.judge_sessions, sid)
        from turinglab.analysis.export.pseudonyms import export_key, keyed

        key = await asyncio.to_thread(export_key, store)  # pseudonyms, never the judges' link tokens
        judges = []
        for s in sorted(sessions, key=lambda s: s.created_ms, reverse=True)[:50]:
            mine = [t for t in trials if t.session_id == s.id]
            ctl = [t.control_correct for t in mine if t.control_correct is not None]
            judges.append({"judge": keyed(s.judge_id, key), "done": s.done, "of": len(s.items),
                           "status": "complete" if s.completed_ms else "in progress",
                           "controls": f"{sum(ctl)}/{len(ctl)}" if ctl else "–",
                           "fast": sum(1 for t in mine if (t.rt_ms or 0) < info.study.exclusions.fast_rt_ms)})
        per_agent: dict[str, Counter] = {}
        for t in trials:
            it = items.get(t.response_id)
            if it is None or it.control:
                continue
            c = per_agent.setdefault(it.agent if it.truth == "machine" else "human", Counter())
            c["n"] += 1
            c["judged_human"] += t.answer == "human"
        agents = [{"agent": a, "n": c["n"], "judged_human": c["judged_human"],
                   "rate": f"{c['judged_human'] / c['n']:.2f}"} for a, c in sorted(per_agent.items())]
        phases = Counter(t.phase for t in trials)
        return templates.TemplateResponse(request, "admin_static.html", {
            "study_name": info.study.display_name or info.name, "info": info, "n_items": len(items),
            "n_trials": len(trials), "phases": dict(phases), "judges": judges, "agents": agents,
            "n_sessions": len(sessions), "n_complete": sum(1 for s in sessions if s.completed_ms),
            "logout_token": app.state.admin_logout_token(request.state.admin),
            "language_notes": i18n.admin_notes(info.study.language)})
