"""The server's live state: connections, participants, the waiting room and running games.

Everything here runs on the event loop; game writes go through a writer that keeps each game's
events in order (`Writer`, worker threads, for SQLite; `PgWriter`, async, for PostgreSQL), other
store calls run in worker threads. The hub is created by `create_app` and driven by websocket
frames and the matchmaking task.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import logging
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from starlette.websockets import WebSocket

from turinglab.game.config import Study, Timing, WitnessSpec
from turinglab.game.events import Identity, judged_human
from turinglab.matchmaking import Match, WaitingRoom, WitnessStats
from turinglab.server.live import protocol as proto
from turinglab.witnesses.ai_seat import ElizaFallback
from turinglab.server.content_filter import ComposedFilter
from turinglab.server.guards import WriteHealth
from turinglab.server.live.capacity_live import Timed, build_capacity
from turinglab.server.live.host import SeatInfo, StoreAway
from turinglab.server.live.recruitment import Recruitment
from turinglab.server.live.session import GameSession
from turinglab.store import admin_log
from turinglab.server.live.pgwriter import PgWriter
from turinglab.server.live.sqlwriter import Writer
from turinglab.store.api import NewGame, Store, UnknownId
from turinglab.witnesses import persona_draw
from turinglab.witnesses.base import GameContext, Turn, Witness

log = logging.getLogger("turinglab.server")

Clock = Callable[[], int]
WitnessFactory = Callable[[WitnessSpec, int], Witness]
DUPLICATE_PID = "duplicate_prolific_pid"  # label of a participant whose Prolific id was already in use
BOT_LABEL = "bot"  # label of a bot participant (`turinglab bots`); its games get flags["bot"] = True
DEMO_LABEL = "demo"  # label of a demo participant (`turinglab serve --demo`); every demo game gets flags["demo"] = True
MAX_CONNECTIONS = 4  # open websockets per participant (tabs); a fifth closes the oldest
CLOSE_TOO_MANY = 4008  # websocket close code of a connection replaced by a newer one beyond the cap
# joins and game starts in progress at once (per process); the rest wait their turn, so a burst of
# them (a class or a crowd arriving together) does not hold up the messages of running games
JOINS_AT_ONCE = 8
STARTS_AT_ONCE = 8


def wall_clock() -> int:
    return time.time_ns() // 1_000_000


def default_witness_factory(spec: WitnessSpec, seed: int) -> Witness:
    from turinglab.witnesses.registry import build_witness

    return build_witness(spec, seed=seed)


def lone_frame(study: Study, joined_ms: int, here: int) -> dict[str, Any]:
    """Three-player waiting: `here` people of the two a game needs, and when the study's rule ends
    the wait of one who joined at `joined_ms` (None: it does not)."""
    a = study.allocation
    return {"here": here, "needed": 2,
            "ends_ms": joined_ms + round(a.lone_wait_s * 1000) if a.lone_then == "end" else None}


@dataclass
class Person:
    id: str
    consented: bool
    games_played: int
    survey_done: bool
    alone: bool = False  # three-player: waited alone until the study's lone_wait_s ended the wait
    joined_ms: int | None = None  # when they last joined the waiting room (shown while their game starts)


class Hub(Timed):
    def __init__(self, study: Study, store: Store, *, clock: Clock | None = None, rng_seed: int | None = None,
                 human_timing: Timing | None | str = "study", witness_factory: WitnessFactory | None = None,
                 content_filter: ComposedFilter | None = None, waiting_grace_s: float = 15.0,
                 demo: bool = False,
                 initial_ai_wait_s: float = 10.0, writers: int | None = None,
                 study_id: int | None = None, admin_poll_s: float = 1.0) -> None:
        self.study = study
        self.study_key = f"live:{study.name}"  # participants belong to the study whose link made them
        self.demo = demo  # `serve --demo`: every game is flagged demo (never part of a study's data)
        self.store = store
        self.now: Clock = clock or wall_clock
        seed = rng_seed if rng_seed is not None else secrets.randbits(32)
        self.seeds = np.random.default_rng(seed)
        # human witnesses' replies: relayed as typed, or ("equalised") held to the study's delay;
        # a Timing given here replaces that delay (tests, benchmarks), None turns it off
        rules = study.rules
        self.human_relay = rules.human_witness_timing == "relay"
        self.human_timing = None if self.human_relay else (
            rules.human_witness_delay if human_timing == "study" else human_timing)
        self.confidence_scale = (rules.confidence_min, rules.confidence_max)
        self.witness_factory = witness_factory or default_witness_factory
        self.filter = content_filter or ComposedFilter(study.content_filter)
        self.waiting_grace_s = waiting_grace_s
        self.study_id = study_id if study_id is not None else store.register_study(study)
        self.room = WaitingRoom(study, np.random.default_rng(self.seeds.integers(2**32)),
                                WitnessStats.for_codenames([w.codename for w in study.witnesses]),
                                initial_ai_wait_ms=round(initial_ai_wait_s * 1000))
        self.room.capacity = build_capacity(study)
        self.played: dict[str, int] = {}  # participant -> games played in this study (every seat)
        self._load_stats()
        self._close_orphans()
        self.people: dict[str, Person] = {}
        self.bots: set[str] = set()  # participants labelled BOT_LABEL (known bots of this process)
        self.conns: dict[str, dict[WebSocket, None]] = {}  # per participant, oldest first
        self.buckets: dict[str, Any] = {}  # per participant: the flood guard of all their connections
        self.session_of: dict[str, GameSession] = {}
        self.live: dict[str, GameSession] = {}
        self.starting: set[str] = set()  # matched, their game not yet stored
        self.join_turns = asyncio.Semaphore(JOINS_AT_ONCE)
        self.start_turns = asyncio.Semaphore(STARTS_AT_ONCE)
        self.finished = 0
        if store.url.startswith("sqlite"):
            self.writer: Writer | PgWriter = Writer(store.url, writers or 1)
        else:  # group commit on the event loop, over async connections
            self.writer = PgWriter(store.url, writers or 1)
        self.write_health = WriteHealth(store.url)  # the last write's outcome (/healthz, /admin)
        self.wake = asyncio.Event()
        self.task = asyncio.create_task(self._matchmaker())
        self._lone_tasks: set[asyncio.Task] = set()
        self._fallback = ElizaFallback(self._build_eliza)
        self._warm_task: asyncio.Task | None = None
        self._retime_task = asyncio.create_task(self._retime_loop()) if self.room.capacity.estimates else None
        self.admin = Recruitment(self, admin_poll_s)  # pause, blocks, quotas, researchers' requests

    def _close_orphans(self) -> None:
        """Games left open by a previous run of the server (its timers died with it) are ended
        in the log with reason `server_restart`, so no game stays in progress forever."""
        from turinglab.game.engine import End, Game

        for status in ("in_progress", "awaiting_verdict"):
            for g in self.store.games(self.study_id, status=status):
                try:
                    game = Game.replay(self.store.events(g.id))
                    out = game.apply(End("server_restart"), self.now())
                    self.store.append_events(g.id, out.events)
                    log.warning("game %s was left open by a previous run: ended (server_restart)", g.id)
                except Exception:  # noqa: BLE001 - a damaged log must not stop the server
                    log.exception("could not close game %s left open by a previous run", g.id)

    def _load_stats(self) -> None:
        """After a restart, continue from what is stored for this study: Thompson sampling from the
        verdicts, the games each participant has played (in any seat), and the three-player role
        rotation (how often each participant has been the interrogator)."""
        for g in self.store.games(self.study_id):
            if (g.flags or {}).get("demo") and not self.demo:  # `serve --demo` games are not the study's
                continue
            for pid in {g.interrogator_id, *(i.participant_id for i in g.seats.values())} - {None}:
                self.played[pid] = self.played.get(pid, 0) + 1
            if g.format == "three-player" and g.interrogator_id:
                rot = self.room.interrogated
                rot[g.interrogator_id] = rot.get(g.interrogator_id, 0) + 1
            for ident in g.seats.values():  # witness groups: which group each interrogator met
                if ident.kind == "ai" and ident.witness and g.interrogator_id:
                    self.room.note_faced(g.interrogator_id, ident.witness)
            if g.verdict is None:
                continue
            for seat, ident in g.seats.items():
                if ident.kind == "ai" and ident.witness:
                    judged = judged_human(g.format, g.verdict.choice, seat)
                    self.room.stats.record(ident.witness, judged, g.verdict.confidence, self.confidence_scale)

    def warm_up(self) -> None:
        """Load the local model now (in the background), so the first game's replies are not
        slowed by the model's start: a slow first reply would tell an AI witness apart. Any LLM
        witness: the OpenAI client's import and the persona guard's training too (the guard
        runs after a reply is written, inside its designed delay)."""
        if any(spec.kind in ("llm", "local") for spec in self.study.witnesses):
            self._warm_task = asyncio.create_task(self._warm())

    async def _warm(self) -> None:
        from turinglab.witnesses import guard, registry

        try:  # first uses that take seconds, in a thread, not during the first game's reply: the
            # OpenAI client's import (~2 s, which would block the event loop) and the persona guard's training
            await asyncio.to_thread(importlib.import_module, "openai")
            await asyncio.to_thread(guard.model)
        except Exception:  # noqa: BLE001 - they happen again at first use
            log.exception("preparing the AI witnesses failed")
        from turinglab.witnesses.llm import LLMWitness

        local = []
        for spec in self.study.witnesses:
            if spec.kind != "local":
                continue
            if self.study.draws_persona(spec):  # warm the prompt the games share: a drawn persona's country
                spec = spec.model_copy(update={"persona": {**spec.persona,
                                                           **persona_draw.draw(0, age=spec.persona.get("age"))}})
            try:  # a witness that cannot be built (e.g. a bad prompt) must not keep the others cold
                LLMWitness(spec)
                local.append(spec)
            except Exception:  # noqa: BLE001
                log.exception("warming up witness %s failed", spec.codename)
        if not local:
            return
        try:  # every slot of the model server pre-reads a local witness's prompt
            t0 = time.monotonic()
            await registry.warm_up(local)
            log.info("local witnesses %s warmed up in %.1f s", ", ".join(s.codename for s in local),
                     time.monotonic() - t0)
        except Exception:  # noqa: BLE001 - a failed warm-up only costs time (registry.warm_up may raise)
            log.exception("warming up the local witnesses failed")
        for spec in local:
            try:  # each witness alone: one failure must not keep the others unmeasured
                await self._calibrate(spec)
            except Exception:  # noqa: BLE001
                log.exception("calibrating witness %s failed", spec.codename)

    async def close(self) -> None:
        self.task.cancel()
        self.admin.close()
        if self._retime_task is not None:
            self._retime_task.cancel()
        if self._warm_task is not None:
            self._warm_task.cancel()
        for t in list(self._lone_tasks):
            t.cancel()
        for s in list(self.live.values()):
            for t in list(s.tasks):
                t.cancel()
        await asyncio.sleep(0)
        await self.writer.stop()

    # ---- participants ------------------------------------------------------------
    async def person(self, token: str) -> Person | None:
        if token in self.people:
            return self.people[token]
        if not (1 <= len(token) <= 40 and token.isascii() and token.isalnum()):  # ids are letters and digits
            return None
        try:
            info = await asyncio.to_thread(self.store.get_participant, token)
        except UnknownId:
            return None
        if not admin_log.belongs(info, self.study_key):  # another study's link opens nothing here
            return None
        return self._known(info)

    async def people_of(self, pids: Iterable[str]) -> None:
        """Load the participants not yet known here, in one store call (e.g. the players of many
        games starting at once on a worker they are not connected to)."""
        new = [p for p in set(pids) if p and p not in self.people]
        if new:
            for info in await asyncio.to_thread(self.store.get_participants, new):
                self._known(info)

    def _known(self, info: Any) -> Person:
        if info.id in self.people:  # loaded meanwhile
            return self.people[info.id]
        p = Person(info.id, info.consent_ms is not None, self.played.get(info.id, 0), bool(info.demographics))
        if info.label == BOT_LABEL:
            self.bots.add(info.id)
        self.people[info.id] = p
        return p

    async def new_person(self, prolific: dict[str, str], cookie: str | None = None, *, bot: bool = False) -> str:
        """A participant id (the link token). A Prolific id is not a credential: it returns to its
        participant only from the browser holding that participant's cookie. From any other client
        a Prolific id already in use gets a new participant, labelled `DUPLICATE_PID` (kept for
        payment and for the analysis to exclude), never the existing participant's token."""
        if bot:  # the caller checked the study's bot token; a bot never takes over a participant
            pid = await asyncio.to_thread(self.store.create_participant, t_ms=self.now(), label=BOT_LABEL,
                                          study=self.study_key)
            self.bots.add(pid)
            return pid
        pp = prolific.get("prolific_pid")
        label = None
        if pp:
            if cookie and 1 <= len(cookie) <= 40 and cookie.isascii() and cookie.isalnum():
                try:
                    mine = await asyncio.to_thread(self.store.get_participant, cookie)
                except UnknownId:
                    mine = None
                if mine is not None and mine.prolific_pid == pp and admin_log.belongs(mine, self.study_key):
                    return mine.id
            found = await asyncio.to_thread(admin_log.same_prolific_id, self.store, pp, self.study_key)
            if found:
                label = DUPLICATE_PID
                log.warning("Prolific id seen again from a client without its participant's cookie: "
                            "a new participant, labelled %s", DUPLICATE_PID)
        return await asyncio.to_thread(self.store.create_participant, t_ms=self.now(), label=label,
                                       study=self.study_key, **prolific)

    async def consent(self, pid: str, version: str | None = None) -> None:
        """Record consent now; `version`: the hash of the consent text shown (game.config.consent_version)."""
        await asyncio.to_thread(self.store.update_participant, pid, consent_ms=self.now(), consent_hash=version)
        p = await self.person(pid)
        if p:
            p.consented = True

    async def survey(self, pid: str, answers: dict[str, Any]) -> None:
        await asyncio.to_thread(self.store.update_participant, pid, demographics=answers)
        p = await self.person(pid)
        if p:
            p.survey_done = True

    # ---- frames out ----------------------------------------------------------------
    async def send(self, pid: str | None, frame: dict[str, Any]) -> None:
        if pid:
            await self._send_here(pid, json.dumps(frame))

    async def _send_here(self, pid: str, data: str) -> None:
        """To the participant's connections on this process."""
        for ws in list(self.conns.get(pid, ())):
            try:
                await ws.send_text(data)
            except Exception:  # noqa: BLE001 - a closed socket: its handler cleans up
                self.conns.get(pid, {}).pop(ws, None)

    def phase(self, pid: str) -> str:
        s = self.session_of.get(pid)
        if s is not None:
            return s.phase()
        if pid in self.room.waiting or pid in self.starting:
            return "waiting"
        if self.session_complete(pid):
            return "done"
        p = self.people.get(pid)
        return "alone" if p is not None and p.alone else "idle"

    def session_complete(self, pid: str) -> bool:
        """The participant has played the study's `allocation.session_rounds` games (every seat)."""
        n = self.study.allocation.session_rounds
        return n is not None and self.played.get(pid, 0) >= n

    def lone_info(self, pid: str) -> dict[str, Any] | None:
        """Three-player waiting: how many people are here of the two a game needs, and when the
        study's rule ends the wait (None: it does not). Every three-player game has one human and
        one AI witness, so the count says nothing about who a partner is."""
        w = self.room.waiting.get(pid)
        if w is None or self.study.format != "three-player":
            return None
        return lone_frame(self.study, w.joined_ms, len(self.room.waiting))

    async def send_waiting_counts(self) -> None:
        if self.study.format == "three-player":
            for pid in list(self.room.waiting):
                await self.send_state(pid)

    async def _lone_timeout(self, pid: str, joined_ms: int) -> None:
        await asyncio.sleep(self.study.allocation.lone_wait_s)
        w = self.room.waiting.get(pid)
        if w is None or w.joined_ms != joined_ms:  # matched, left, or joined again since
            return
        self.room.leave(pid)
        if pid in self.people:
            self.people[pid].alone = True
        log.info("participant %s waited alone for %.0f s: their wait ended", pid, self.study.allocation.lone_wait_s)
        await self.send_state(pid)

    def state_frame(self, pid: str) -> dict[str, Any]:
        p = self.people[pid]
        s = self.session_of.get(pid)
        now = self.now()
        w = self.room.waiting.get(pid)
        # matched and starting: still "waiting", since the same moment (both kinds of game alike)
        since = w.joined_ms if w else (p.joined_ms if pid in self.starting else None)
        game = s.view(pid, now) if s is not None else None
        return self._state(p, self.phase(pid), now, since, self.lone_info(pid), game)

    def _state(self, p: Person, phase: str, now: int, waiting_since_ms: int | None, lone: dict | None,
               game: dict | None) -> dict[str, Any]:
        if phase == "idle":  # not in a game nor waiting: blocked, or the study is paused or full
            phase = self.admin.gate(p.id) or phase
        return {"type": "state", "phase": phase, "server_now_ms": now,
                "participant": {"games_played": p.games_played, "survey_done": p.survey_done,
                                "completion_url": self.study.completion_link("completed")},
                "waiting_since_ms": waiting_since_ms, "lone": lone, "game": game}

    async def send_state(self, pid: str) -> None:
        await self.send(pid, self.state_frame(pid))

    # ---- connections ---------------------------------------------------------------
    async def _add_connection(self, pid: str, ws: WebSocket) -> bool:
        """Keep `ws` among the participant's connections (True: their first)."""
        conns = self.conns.setdefault(pid, {})
        first = not conns
        while len(conns) >= MAX_CONNECTIONS:  # a new tab wins over the oldest one
            old = next(iter(conns))
            conns.pop(old)
            try:
                await old.close(code=CLOSE_TOO_MANY, reason="too many connections for this participant")
            except Exception:  # noqa: BLE001 - already closed
                pass
        conns[ws] = None
        return first

    async def connect(self, pid: str, ws: WebSocket) -> None:
        first = await self._add_connection(pid, ws)
        await ws.send_text(json.dumps(self.state_frame(pid)))
        s = self.session_of.get(pid)
        if first and s is not None and s.game.connected.get(s.seat_of[pid]) is False:
            await s.on_connection(pid, True)

    def _forget_socket(self, pid: str, ws: WebSocket) -> bool:
        """Forget one socket of `pid`: True when it was their last one here."""
        conns = self.conns.get(pid, {})
        conns.pop(ws, None)
        return not conns

    async def disconnect(self, pid: str, ws: WebSocket) -> None:
        if not self._forget_socket(pid, ws):
            return
        s = self.session_of.get(pid)
        if s is not None:
            await s.on_connection(pid, False)
        if pid in self.room.waiting:
            asyncio.create_task(self._drop_if_gone(pid))

    async def _drop_if_gone(self, pid: str) -> None:
        await asyncio.sleep(self.waiting_grace_s)
        if not self.conns.get(pid) and self.room.leave(pid):
            log.info("participant %s left the waiting room (no connection)", pid)
            await self.send_waiting_counts()

    # ---- frames in -------------------------------------------------------------------
    async def handle(self, pid: str, raw: str, parsed: Any = None) -> None:
        """One frame of a participant; `parsed`: the frame already parsed from `raw` (by a cluster worker)."""
        try:
            f = parsed if parsed is not None else proto.parse(raw)
        except proto.BadFrame as exc:
            await self.send(pid, proto.error(exc.code, str(exc), exc.client_id))
            return
        t = f.type  # type: ignore[attr-defined]
        if t == "ping":
            await self.send(pid, {"type": "pong"})
        elif t == "join":
            async with self.join_turns:
                await self._join(pid)
        elif t == "leave_queue":
            self.room.leave(pid)
            await self.send_state(pid)
            await self.send_waiting_counts()
        else:
            s = self.session_of.get(pid)
            if s is None or (s.game.state == "ended" and t != "verdict"):
                cid = getattr(f, "client_id", None)
                await self.send(pid, proto.error("not_in_game", proto.TEXTS["not_in_game"], cid))
                return
            handler = {"message": s.on_message, "paste": s.on_paste, "verdict": s.on_verdict,
                       "belief": s.on_belief, "report": s.on_report}[t]
            try:
                await handler(pid, f)
            except StoreAway:  # nothing of it was kept: the sender may try again
                await self.send(pid, proto.error("store_unavailable", proto.TEXTS["store_unavailable"],
                                                 getattr(f, "client_id", None)))

    async def _may_join(self, p: Person) -> bool:
        """Whether `p` may join the waiting room now (else they are told why); their last game is
        then forgotten."""
        pid = p.id
        if not p.consented:
            await self.send(pid, proto.error("no_consent", proto.TEXTS["no_consent"]))
            return False
        if pid in self.starting:  # matched: the game is being set up
            await self.send_state(pid)
            return False
        s = self.session_of.get(pid)
        # a witness whose chat is over may move on while the interrogator decides
        done_witness = s is not None and s.game.state == "awaiting_verdict" and s.seat_of[pid] != "interrogator"
        if s is not None and s.game.state != "ended" and not done_witness:
            await self.send(pid, proto.error("in_game", proto.TEXTS["in_game"]))
            await self.send_state(pid)
            return False
        self.session_of.pop(pid, None)
        if self.admin.gate(pid) is not None:  # the state says why (blocked, full, paused)
            await self.send_state(pid)
            return False
        return True

    async def _unqueue(self, pid: str) -> None:
        """Take `pid` out of the waiting room (a researcher's action, a pause, a quota)."""
        if self.room.leave(pid):
            await self.send_waiting_counts()

    def outcome(self, pid: str) -> str | None:
        """How the participant's part ends when they finish now (the study's completion codes):
        completed, timed_out (waited alone), returned (paused or full before any game), or None (blocked)."""
        gate = self.admin.gate(pid)
        if gate == "blocked":
            return None
        if self.session_complete(pid):
            return "completed"
        p = self.people.get(pid)
        if p is not None and p.alone:
            return "timed_out"
        if self.played.get(pid, 0) and (self.study.allocation.session_rounds is None or gate is not None):
            return "completed"
        return "returned"

    async def _join(self, pid: str) -> None:
        p = self.people[pid]
        if not await self._may_join(p):
            return
        if self.session_complete(pid):  # every round played: the state says `done` (completion link)
            await self.send_state(pid)
            return
        p.alone = False
        fresh = pid not in self.room.waiting
        entry = self.room.join(pid, self.now())
        p.joined_ms = entry.joined_ms
        if fresh and self.study.format == "three-player" and self.study.allocation.lone_then == "end":
            task = asyncio.create_task(self._lone_timeout(pid, entry.joined_ms))
            self._lone_tasks.add(task)
            task.add_done_callback(self._lone_tasks.discard)
        self.wake.set()
        await self.send_state(pid)
        await self.send_waiting_counts()

    # ---- matchmaking --------------------------------------------------------------------
    async def _matchmaker(self) -> None:
        while True:
            self.wake.clear()
            matches = self.room.poll(self.now())
            if matches:
                results = await asyncio.gather(*(self._start_in_turn(m) for m in matches), return_exceptions=True)
                for m, r in zip(matches, results):
                    if isinstance(r, BaseException):  # one bad start must not stop matchmaking
                        log.error("starting a game failed", exc_info=r)
                        await self._start_failed(m)
                await self.send_waiting_counts()
            nxt = self.room.next_wakeup()
            timeout = None if nxt is None else max(0.0, (nxt - self.now()) / 1000)
            try:
                await asyncio.wait_for(self.wake.wait(), timeout)
            except TimeoutError:
                pass

    async def _start_in_turn(self, m: Match, gid: str | None = None) -> None:
        async with self.start_turns:
            await self._start(m, gid)

    async def _start(self, m: Match, gid: str | None = None) -> None:
        # matched people have left the waiting room but have no session until the game is stored:
        # mark them as starting meanwhile, so they cannot join (and be matched) again
        pids = set(m.participants)
        self.starting |= pids
        seats: dict[str, SeatInfo] = {}
        s: GameSession | None = None
        try:
            for name, slot in m.seats.items():
                seats[name] = self._seat(Identity(slot.kind, slot.witness, slot.participant_id, slot.selection_prob))
            gid = gid or "g" + secrets.token_hex(8)  # a cluster's matchmaker names the game
            s = GameSession(self, gid, m.format, m.interrogator, seats, self.now(), int(self.seeds.integers(2**31)))
            identities = {k: v.identity for k, v in seats.items()}
            # a bot played: flagged, so the game is kept apart from the study's data (analyses exclude it)
            flags = {"bot": True} if pids & self.bots else {}
            if self.demo:
                flags["demo"] = True
            if m.allocation:  # the draw withheld a witness that could not serve (never shown to a participant)
                flags["allocation"] = m.allocation
            # the game and its first events, queued together (one transaction on PostgreSQL)
            await asyncio.gather(self.writer.create(NewGame(self.study_id, m.format, identities, m.interrogator,
                                                            s.game.started_ms, gid, flags)),
                                 self.writer.append(gid, s.game.log))
            self.live[gid] = s
            for pid in s.participants():
                self.session_of[pid] = s
            self.starting -= pids
            self.admin.started({p for p in pids if p}, bool(flags))
            await s.start(stored=True)
        except BaseException:
            self.starting -= pids
            self._release(Identity(sl.kind, sl.witness, sl.participant_id, sl.selection_prob) for sl in m.seats.values())
            if s is not None:
                self.live.pop(s.id, None)
                for pid in s.participants():
                    if self.session_of.get(pid) is s:
                        self.session_of.pop(pid, None)
                for t in list(s.tasks):
                    t.cancel()
            await self._close_witnesses(seats.values())
            raise
        for pid in s.participants():
            await self.send_state(pid)

    def _seat(self, ident: Identity) -> SeatInfo:
        """A seat of a new or resumed game; an AI seat gets its own witness (seeded from the hub)."""
        if ident.kind != "ai":
            return SeatInfo(ident)
        spec = next(w for w in self.study.witnesses if w.codename == ident.witness)
        seed = int(self.seeds.integers(2**31))
        persona = None
        if self.study.draws_persona(spec):  # a persona drawn from the seat's seed (Jones & Bergen)
            persona = persona_draw.draw(seed, age=spec.persona.get("age"), **persona_draw.files_for(self.study.language))
            spec = spec.model_copy(update={"persona": {**spec.persona, **persona}})
        return SeatInfo(ident, self.witness_factory(spec, seed), spec, persona)

    async def _close_witnesses(self, seats: Iterable[SeatInfo]) -> None:
        for seat in seats:
            if seat.witness is not None:
                try:
                    await seat.witness.close()
                except Exception:  # noqa: BLE001 - closing is best effort after a failed start
                    log.exception("closing a witness of a failed start failed")

    async def _start_failed(self, m: Match, gid: str | None = None, pids: list[str] | None = None) -> None:
        """Tell the players of a match whose game `gid` did not start (only `pids`, those not yet
        moved on, when given); a session of another game of theirs is left alone."""
        for pid in m.participants if pids is None else pids:
            s = self.session_of.get(pid)
            if s is not None and s.game.state != "ended" and (gid is None or s.id == gid):
                self.session_of.pop(pid, None)
            await self.send(pid, proto.error("start_failed", proto.TEXTS["start_failed"]))
            await self._send_fresh_state(pid)

    async def _send_fresh_state(self, pid: str) -> None:
        """The state of a participant whose game did not start (a cluster reads it from Redis)."""
        await self.send_state(pid)

    def _release(self, seats: Iterable[Any]) -> None:
        for ident in seats:
            if ident.kind == "ai" and ident.witness:
                self.room.release(ident.witness)
        self.wake.set()

    async def game_over(self, s: GameSession) -> None:
        if self.live.pop(s.id, None) is not None:
            self._release(seat.identity for seat in s.seats.values())
        self.finished += 1
        await self.admin.ended(s)
        for pid in s.participants():
            self.played[pid] = self.played.get(pid, 0) + 1
            if pid in self.people:
                self.people[pid].games_played = self.played[pid]
            await self.send_state(pid)

    def _build_eliza(self) -> Witness:
        from turinglab.witnesses.registry import available

        return self.witness_factory(available()["eliza"], 0)

    async def fallback_text(self, history: list[Turn], ctx: GameContext) -> str:
        """ELIZA answers when a model fails (through the same path and timing)."""
        return await self._fallback(history, ctx)
