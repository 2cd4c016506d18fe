"""Demo mode (`turinglab serve --demo`): one person opens every role in one browser.

`/demo` makes a set of three demo participants (labelled `demo`, consent given): an interrogator
and a human witness pinned to meet each other (a human game), and an interrogator who gets an AI
game at once. `/demo/ai/<game>` shows an AI game from the AI witness's side: its instructions and
what it is sent and replies, and once the game has ended (the view is opened beside the
interrogator's: blinding) who wrote each reply (the model, or a regenerated reply, a brush-off,
the fallback, the last resort: the event's `source`, as on /admin). Every game of the server is flagged `demo` (the hub does it), and
analyses and exports leave such games out. These routes exist only in demo mode: they show who is
who, which a real study must never do.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import RedirectResponse, Response

from turinglab.game.events import INTERROGATOR, source_of
from turinglab.i18n import N_
from turinglab.server.live.hub import DEMO_LABEL
from turinglab.store.api import UnknownId

ROLES = ("interrogator", "witness", "ai")
# who wrote an AI reply, by its event's source (witnesses/ai_seat.py SOURCES; "unknown": not recorded)
SOURCE_TEXTS = {"model": N_("the model"), "regenerated": N_("the model, asked again after a refused reply"),
                "brush_off": N_("the persona's brush-off (after a task or an accusation)"),
                "fallback": N_("the fallback witness"), "last_resort": N_("the last-resort line"),
                "unknown": N_("not recorded")}


def reply_author(payload: dict[str, Any]) -> dict[str, Any]:
    """Who wrote an AI witness's reply: its source's text and the model named in the event."""
    src = source_of(payload, "ai")
    return {"source": src, "text": SOURCE_TEXTS.get(src, SOURCE_TEXTS["unknown"]), "model": payload.get("model")}


def _prompt(witness: Any) -> list[dict[str, str]]:
    """The messages an LLM witness starts from (its system prompt and examples), or [] (e.g. ELIZA)."""
    from turinglab.witnesses.llm import to_messages

    system = getattr(witness, "_system", None)  # filled when the game starts
    if system is None:
        return []
    return to_messages(system, [], getattr(witness, "_shots", None), getattr(witness, "_after", None))


def add_demo(app: FastAPI, page, message, forged) -> None:  # noqa: ANN001
    sets: dict[str, dict[str, str]] = {}  # the interrogator's id -> the set's ids by role (this process)

    def hub(request: Request) -> Any:
        return request.app.state.hub

    def ai_games(request: Request) -> list[dict[str, Any]]:
        h = hub(request)
        return [{"id": g.id, "status": g.status, "witness": g.seats["A"].witness}
                for g in h.store.games(h.study_id) if (g.flags or {}).get("demo")
                and any(s.kind == "ai" for s in g.seats.values())][-10:][::-1]

    @app.get("/demo")
    async def demo_home(request: Request) -> Response:
        return page(request, "demo.html", roles=None, ai_games=await asyncio.to_thread(ai_games, request))

    @app.post("/demo/start")
    async def demo_start(request: Request) -> Response:
        refused = forged(request)
        if refused:
            return refused
        h = hub(request)
        now = int(time.time() * 1000)
        ids = {}
        for role in ROLES:
            ids[role] = await asyncio.to_thread(h.store.create_participant, label=DEMO_LABEL, consent_ms=now, t_ms=now,
                                                study=h.study_key)
            h.room.pinned[ids[role]] = role
        sets[ids["interrogator"]] = ids
        return RedirectResponse(f"/demo/set/{ids['interrogator']}", status_code=303)

    @app.get("/demo/set/{token}")
    async def demo_set(request: Request, token: str) -> Response:
        roles = sets.get(token)
        if roles is None:
            return message(request, "Demo not found", "This demo set is not known to this server (it was "
                           "started before a restart?). Start a new one.", 404, link="/demo", link_text="Demo")
        return page(request, "demo.html", roles=roles, ai_games=await asyncio.to_thread(ai_games, request))

    @app.get("/demo/ai/{gid}")
    async def demo_ai(request: Request, gid: str) -> Response:
        h = hub(request)
        try:
            info = await asyncio.to_thread(h.store.game, gid)
        except (UnknownId, ValueError):
            info = None
        if info is None or not (info.flags or {}).get("demo"):
            return message(request, "Game not found", "No demo game has this id.", 404, link="/demo",
                           link_text="Demo")
        s = h.live.get(gid)
        if s is not None:  # running: its witness object holds the prompt it was given
            game, seats = s.game, s.seats
        else:
            from turinglab.game.engine import Game

            game, seats = Game.replay(await asyncio.to_thread(h.store.events, gid)), {}
        convs = []
        ended = game.state == "ended"  # the reply sources only after the verdict (blinding)
        for conv, ident in info.seats.items():
            if ident.kind != "ai" or conv not in game.conversations:
                continue
            seat = seats.get(conv)
            convs.append({"seat": conv, "witness": ident.witness,
                          "prompt": _prompt(seat.witness) if seat is not None and seat.witness else [],
                          "turns": [{"sent": m.sender == INTERROGATOR, "text": m.text,
                                     "author": reply_author(game.log[m.seq].payload)
                                     if ended and m.sender != INTERROGATOR else None}
                                    for m in game.conversations[conv].messages]})
        return page(request, "demo_ai.html", gid=gid, convs=convs, game_state=game.state,
                    live=game.state != "ended")
