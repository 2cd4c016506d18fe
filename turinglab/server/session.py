"""One running game on the server: the engine, its timers and its witnesses.

Every change goes: engine (`Game.apply`) -> store (awaited, in a thread, in order) -> frames.
One asyncio lock per game. Timers are asyncio tasks, so they fire whether or not any
browser is connected. Human and AI witness replies follow one timing rule (docs/protocol.md):
shown at t_q + max(elapsed, reply_delay(n), typing_delay + typing_min_s), the typing indicator
at t_q + typing_delay: so "typing…" always shows for at least typing_min_s before a reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from turinglab.game import events as ev
from turinglab.game.config import WitnessSpec
from turinglab.game.engine import Disconnect, Game, GiveVerdict, Hold, Paste, Reconnect, ReportAbuse, Send, Tick, Typing
from turinglab.game.events import INTERROGATOR, Event, Identity
from turinglab.server import protocol as proto
from turinglab.witnesses import timing
from turinglab.witnesses.base import GameContext, Turn, Witness

if TYPE_CHECKING:
    from turinglab.server.hub import Hub

log = logging.getLogger("turinglab.server")

LATE_TOLERANCE_MS = 100  # a reply this much past its designed time counts as late (scheduling jitter)
AI_REGENERATE_TRIES = 2  # a blocked AI reply is asked for again at most this often (within its delay)
END_REASONS = {"verdict": "verdict", "abuse_report": "report", "interrogator_left": "left"}
RETRY_S = (0.5, 1.0, 2.0, 5.0)  # waits between retries of a timer's write while the store is away


class StoreAway(RuntimeError):
    """The game's write failed: nothing of it was kept in memory; the action may be retried."""


@dataclass
class SeatInfo:
    identity: Identity
    witness: Witness | None = None  # AI seats
    spec: WitnessSpec | None = None
    persona: dict[str, Any] | None = None  # drawn for this game (stored, never sent to a player)


@dataclass
class Held:
    """A human witness's reply waiting for its release time."""

    id: str
    text: str
    t_ms: int
    release_ms: int


def _dt(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


class GameSession:
    def __init__(self, hub: "Hub", game_id: str, fmt: str, interrogator: str,
                 seats: dict[str, SeatInfo], now_ms: int, seed: int) -> None:
        self.hub = hub
        self.id = game_id
        personas = {k: s.persona for k, s in seats.items() if s.persona is not None}
        self.game = Game.start(fmt, hub.study.rules, now_ms, personas=personas or None)
        self.seats = seats
        self.interrogator = interrogator
        self.seat_of = {interrogator: INTERROGATOR}
        for name, s in seats.items():
            if s.identity.participant_id:
                self.seat_of[s.identity.participant_id] = name
        self.lock = asyncio.Lock()
        self.rng = np.random.default_rng(seed)
        self.ids: dict[int, str] = {}  # engine seq of a message -> its public id
        # (participant, client_id) -> (id, t_ms, text) of an acknowledged message
        self.acks: dict[tuple[str, str], tuple[str, int, str]] = {}
        self.held: dict[str, Held] = {}
        self.typing_on: set[str] = set()
        self.typing_ms: dict[int, int] = {}  # question seq -> when its typing indicator shows (ms after it)
        self.typing_shown: dict[int, int] = {}  # question seq -> when it really showed (hub ms; a slow commit delays it)
        self.tasks: set[asyncio.Task] = set()
        self.identity = {k: s.identity.to_dict() for k, s in seats.items()}
        self.stats_recorded = False
        self.store_away = False  # a write failed; memory is rebuilt from the stored log before the next

    # ---- helpers -----------------------------------------------------------
    @property
    def rules(self):
        return self.game.rules

    def participants(self) -> list[str]:
        return list(self.seat_of)

    def _spawn(self, coro) -> None:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("game %s: task failed", self.id, exc_info=task.exception())

    async def _commit(self, events: list[Event]) -> None:
        """Store `events` (the tail of the engine's log), or undo them in memory and raise StoreAway.

        Memory never runs ahead of the store: after a failed write the game is rolled back to
        the events stored before it, and rebuilt from the stored log (`_resync`) before anything
        else is applied (the failed write may have been committed after all)."""
        if not events:
            return
        try:
            await self.hub.writer.append(self.id, events)
        except Exception as exc:  # noqa: BLE001 - any failed write: undo, tell the players, retry later
            kept = len(self.game.log) - len(events)
            assert self.game.log[kept:] == events, "a commit is always the tail of the log"
            if kept == 0:  # the game's start: it fails as a whole
                raise
            self._rebuild(self.game.log[:kept])
            if not self.store_away:
                self.store_away = True
                log.error("game %s: a write failed (%s); the game waits for the store", self.id, exc)
                await self._tell_all(proto.error("store_unavailable", proto.TEXTS["store_unavailable"]))
            raise StoreAway(str(exc)) from exc

    def _rebuild(self, events: list[Event]) -> None:
        self.game = Game.replay(events)
        n = len(self.game.log)
        for seq in [q for q in self.ids if q >= n]:
            del self.ids[seq]
        for conv, c in self.game.conversations.items():
            for m in c.messages:
                self.ids.setdefault(m.seq, self._new_id())
            h = self.held.get(conv)
            if c.held is None:
                self.held.pop(conv, None)
            elif h is None or h.t_ms != self.game.log[c.held].t_ms:  # stored, though its write seemed to fail
                e = self.game.log[c.held]
                h = self.held[conv] = Held(self._new_id(), e.payload["text"], e.t_ms, e.payload["release_ms"])
                self._spawn(self._release(conv, h))

    @contextlib.asynccontextmanager
    async def locked(self):
        """The game's lock; after a failed write, the game is first rebuilt from its stored log
        (StoreAway while the store is still away)."""
        async with self.lock:
            if self.store_away:
                await self._resync()
            yield

    async def _resync(self) -> None:
        """Rebuild the game from its stored log (raises StoreAway while the store is away)."""
        try:
            stored = await self.hub.writer.run(self.id, lambda st: st.events(self.id))
        except Exception as exc:  # noqa: BLE001
            raise StoreAway(str(exc)) from exc
        self._rebuild(stored)
        self.store_away = False
        log.warning("game %s: the store is back; the game continues from its %d stored events", self.id, len(stored))
        self._spawn(self._after_change())

    async def _tell_all(self, frame: dict[str, Any]) -> None:
        for pid in self.participants():
            await self._send(pid, frame)

    async def _retrying(self, step) -> Any:
        """Run `step()` (under the lock: apply an action and commit it) until the store takes it.
        For timers, which nobody can press again."""
        for n in range(10**9):
            try:
                async with self.locked():
                    return await step()
            except StoreAway:
                await asyncio.sleep(RETRY_S[min(n, len(RETRY_S) - 1)])

    def _new_id(self) -> str:
        return secrets.token_hex(8)

    def _ctx(self, seat: str, now_ms: int) -> GameContext:
        return GameContext(self.id, _dt(self.game.started_ms), _dt(now_ms), self.rules.time_limit_s,
                           self.rules.max_chars, seat)

    async def _send(self, pid: str, frame: dict[str, Any]) -> None:
        await self.hub.send(pid, frame)

    async def _broadcast_state(self) -> None:
        for pid in self.participants():
            await self.hub.send_state(pid)

    # ---- start ---------------------------------------------------------------
    async def start(self, stored: bool = False) -> None:
        """Start the witnesses and the clock (after storing the first events, unless `stored`)."""
        if not stored:
            await self._commit(self.game.log)
        for name, s in self.seats.items():
            if s.witness is not None:
                try:
                    await s.witness.start(self._ctx(name, self.game.started_ms))
                except Exception:  # noqa: BLE001 - a witness failure must not stop the game
                    log.exception("game %s: witness %s failed to start", self.id, name)
        self._spawn(self._clock_task())

    async def _clock_task(self) -> None:
        """Fire the time limit (and a verdict deadline, if the study has one)."""
        await asyncio.sleep(max(0.0, (self.game.deadline_ms - self.hub.now()) / 1000))

        async def tick() -> None:
            await self._commit(self.game.apply(Tick(), max(self.hub.now(), self.game.deadline_ms)).events)
        await self._retrying(tick)
        await self._after_change()
        grace = self.rules.verdict_grace_s
        if grace is not None and self.game.state == "awaiting_verdict":
            due = self.game.closed_ms + round(grace * 1000)
            await asyncio.sleep(max(0.0, (due - self.hub.now()) / 1000))

            async def tick2() -> None:  # a timer may wake a little early: the deadline has come
                await self._commit(self.game.apply(Tick(), max(self.hub.now(), due)).events)
            await self._retrying(tick2)
            await self._after_change()

    async def _after_change(self) -> None:
        if self.game.state == "ended":
            await self.finish()
        else:
            await self._broadcast_state()

    # ---- what one participant sees ---------------------------------------------
    def view(self, pid: str, now_ms: int) -> dict[str, Any]:
        seat = self.seat_of[pid]
        g = self.game
        convs = list(g.seats) if seat == INTERROGATOR else [seat]
        mine = "interrogator" if seat == INTERROGATOR else "witness"
        messages = []
        for c in convs:
            for m in g.conversations[c].messages:
                if m.seq not in self.ids:  # applied, its write not yet committed: not shown yet
                    continue
                frm = "you" if (m.sender == INTERROGATOR) == (mine == "interrogator") else "them"
                messages.append({"type": "message", "id": self.ids[m.seq], "conv": c, "from": frm,
                                 "text": m.text, "t_ms": m.t_ms})
            h = self.held.get(c)
            if h is not None and seat != INTERROGATOR:
                messages.append({"type": "message", "id": h.id, "conv": c, "from": "you", "text": h.text,
                                 "t_ms": h.t_ms})
        messages.sort(key=lambda m: m["t_ms"])
        your_turn = {c: bool(g.may_send(seat, c) and (seat == INTERROGATOR or c not in self.held)) for c in convs}
        ended = g.state == "ended"
        verdict = None
        if g.verdict is not None and ended:
            verdict = {k: g.verdict[k] for k in ("choice", "confidence", "reason")}
        reveal = None
        if ended:
            reveal = {"seats": {k: {"kind": s.identity.kind} for k, s in self.seats.items()},
                      "correct": self.correct()}
        return {
            "game_id": self.id,
            "format": g.format,
            "role": "interrogator" if seat == INTERROGATOR else "witness",
            "seat": seat,
            "convs": convs,
            "messages": messages,
            "typing": sorted(self.typing_on) if seat == INTERROGATOR else [],
            "your_turn": your_turn,
            "started_ms": g.started_ms,
            "ends_ms": g.deadline_ms,
            "max_chars": self.rules.max_chars,
            "block_paste": self.rules.block_paste,
            "end_reason": END_REASONS.get(g.end_reason, g.end_reason) if ended else None,
            "verdict": verdict,
            "reveal": reveal,
            "store_away": self.store_away,
        }

    def phase(self) -> str:
        return {"in_progress": "game", "awaiting_verdict": "verdict", "ended": "reveal"}[self.game.state]

    def correct(self) -> bool | None:
        v = self.game.verdict
        if v is None:
            return None
        return ev.verdict_correct(self.game.format, v["choice"], {k: s.identity.kind for k, s in self.seats.items()})

    # ---- actions -----------------------------------------------------------------
    async def on_message(self, pid: str, f: proto.MessageIn) -> None:
        async with self.locked():
            seat = self.seat_of[pid]
            key = (pid, f.client_id)
            if key in self.acks:  # a resend after a reconnect: acknowledge again, relay nothing
                mid, t, text = self.acks[key]
                if text != f.text:  # not a resend: another message under a used id
                    await self._send(pid, proto.error("client_id_reused", proto.TEXTS["client_id_reused"],
                                                      f.client_id))
                    return
                await self._send(pid, {"type": "ack", "client_id": f.client_id, "id": mid, "t_ms": t})
                return
            conv = (f.conv or "A") if seat == INTERROGATOR else seat
            now = self.hub.now()
            if seat != INTERROGATOR and conv in self.held and self.game.chat_open:
                await self._send(pid, proto.error("not_your_turn", proto.TEXTS["not_your_turn"], f.client_id))
                return
            blocked = await self.hub.filter.check(f.text)
            if blocked:
                await self._commit(self.game.refuse(Send(seat, f.text, conv), "blocked", blocked, now).events)
                await self._send(pid, proto.error("blocked", proto.TEXTS["blocked"], f.client_id))
                return
            if seat == INTERROGATOR:
                await self._interrogator_message(pid, conv, f, now)
            else:
                await self._witness_message(pid, conv, f, now)

    async def _apply_send(self, pid: str, seat: str, conv: str, text: str, client_id: str | None,
                          now: int, msg_id: str | None = None) -> Event | None:
        out = self.game.apply(Send(seat, text, conv), now)
        await self._commit(out.events)
        if not out.ok:
            if pid:
                await self._send(pid, proto.error(out.code or "refused", out.detail or "refused", client_id))
            return None
        e = next(x for x in out.events if x.type == ev.MESSAGE)
        self.ids[e.seq] = msg_id or self._new_id()
        return e

    async def _interrogator_message(self, pid: str, conv: str, f: proto.MessageIn, now: int) -> None:
        e = await self._apply_send(pid, INTERROGATOR, conv, f.text, f.client_id, now)
        if e is None:
            return
        mid = self.ids[e.seq]
        self.acks[(pid, f.client_id)] = (mid, e.t_ms, f.text)
        self.typing_on.discard(conv)
        await self._send(pid, {"type": "ack", "client_id": f.client_id, "id": mid, "t_ms": e.t_ms})
        seat = self.seats[conv]
        if seat.identity.kind == "human":
            await self._send(seat.identity.participant_id, {"type": "message", "id": mid, "conv": conv,
                                                            "from": "them", "text": e.payload["text"], "t_ms": e.t_ms})
        else:
            self._spawn(self._ai_reply(conv, e))
        self.typing_ms[e.seq] = round(1000 * timing.typing_delay(self.rules, self.rng))
        self._spawn(self._typing(conv, e))

    def _designed_ms(self, conv: str, n_chars: int, q: Event) -> int:
        return self._designed_fn(conv, q)(n_chars)

    def _designed_fn(self, conv: str, q: Event) -> Callable[[int], int]:
        """The designed delay (ms after the question) of a reply of n characters, its random
        part drawn now: known before the reply is written, for deadline-aware generation."""
        spec = self.seats[conv].spec
        t = spec.timing if spec is not None else self.hub.human_timing
        if t is None:  # delays off (benchmarks)
            return lambda n: 0
        delay = timing.delay_for(t, self.rng, prev_chars=len(q.payload["text"]))
        # never before "typing…" has shown for a plausible time (the same rule for every witness)
        floor = self.typing_ms.get(q.seq, 0) + round(1000 * self.rules.typing_min_s)
        return lambda n: max(round(1000 * delay(n)), floor)

    def _not_before(self, q: Event | None) -> int:
        """Hub ms before which no reply to `q` shows: typing_min_s after its indicator really
        showed (later than planned when its commit was slow), so the rule holds under load."""
        shown = None if q is None else self.typing_shown.get(q.seq)
        return 0 if shown is None else shown + round(1000 * self.rules.typing_min_s)

    async def _after_typing(self, q: Event | None, step) -> None:
        """`_retrying(step)` once a reply to `q` may show (`_not_before`), checked under the lock
        so that an indicator still being stored is waited for."""
        async def when_due() -> bool:
            if self.hub.now() < self._not_before(q):
                return False
            await step()
            return True
        while not await self._retrying(when_due):
            await asyncio.sleep(max(0.0, (self._not_before(q) - self.hub.now()) / 1000))

    def _last_question(self, conv: str) -> Event | None:
        msgs = self.game.conversations[conv].messages
        for m in reversed(msgs):
            if m.sender == INTERROGATOR:
                return self.game.log[m.seq]
        return None

    async def _witness_message(self, pid: str, conv: str, f: proto.MessageIn, now: int) -> None:
        q = self._last_question(conv)
        relay = self.hub.human_relay and self.seats[conv].spec is None  # shown as typed (the presets)
        release = now if q is None or relay else max(q.t_ms + max(now - q.t_ms, self._designed_ms(conv, len(f.text), q)),
                                            self._not_before(q))
        if release <= now:
            e = await self._apply_send(pid, conv, conv, f.text, f.client_id, now)
            if e is not None:
                await self._acked_and_delivered(pid, conv, f.client_id, e)
            return
        # stored (as `held`) before it is acknowledged: a verdict or a crash before its release
        # leaves it in the log, recorded as undelivered when the game ends
        out = self.game.apply(Hold(conv, f.text, conv, release), now)
        await self._commit(out.events)
        if not out.ok:
            await self._send(pid, proto.error(out.code or "refused", out.detail or "refused", f.client_id))
            return
        h = Held(self._new_id(), f.text, out.events[-1].t_ms, release)
        self.held[conv] = h
        self.acks[(pid, f.client_id)] = (h.id, h.t_ms, f.text)
        await self._send(pid, {"type": "ack", "client_id": f.client_id, "id": h.id, "t_ms": h.t_ms})
        self._spawn(self._release(conv, h))

    async def _acked_and_delivered(self, pid: str, conv: str, client_id: str, e: Event) -> None:
        mid = self.ids[e.seq]
        self.acks[(pid, client_id)] = (mid, e.t_ms, e.payload["text"])
        await self._send(pid, {"type": "ack", "client_id": client_id, "id": mid, "t_ms": e.t_ms})
        await self._deliver(conv, e)

    async def _deliver(self, conv: str, e: Event) -> None:
        """Show a witness message to the interrogator (one path for human and AI)."""
        self.typing_on.discard(conv)
        await self._send(self.interrogator, {"type": "message", "id": self.ids[e.seq], "conv": conv,
                                             "from": "them", "text": e.payload["text"], "t_ms": e.t_ms})

    async def _release(self, conv: str, h: Held) -> None:
        await asyncio.sleep(max(0.0, (h.release_ms - self.hub.now()) / 1000))

        async def release() -> None:
            c = self.game.conversations[conv]
            if self.held.get(conv) is not h or c.held is None:  # gone: recorded as undelivered
                if self.held.get(conv) is h:
                    del self.held[conv]
                return
            e = await self._apply_send("", conv, conv, h.text, None, self.hub.now(), msg_id=h.id)
            del self.held[conv]
            if e is not None:
                await self._deliver(conv, e)
        await self._after_typing(self._last_question(conv), release)

    async def _typing(self, conv: str, q: Event) -> None:
        await asyncio.sleep(max(0.0, (q.t_ms + self.typing_ms.get(q.seq, 0) - self.hub.now()) / 1000))
        try:
            async with self.locked():
                if not self.game.chat_open or self._last_question(conv) != q:
                    return
                msgs = self.game.conversations[conv].messages
                if msgs and msgs[-1].seq != q.seq:  # the reply is already shown
                    return
                out = self.game.apply(Typing(conv, conv), self.hub.now())
                await self._commit(out.events)
                self.typing_on.add(conv)
                self.typing_shown[q.seq] = self.hub.now()
                await self._send(self.interrogator, {"type": "typing", "conv": conv})
        except StoreAway:  # a typing indicator is not worth a retry
            return

    async def _generate(self, seat: SeatInfo, conv: str, history: list[Turn], ctx: GameContext,
                        timeout_s: float, trace: dict | None = None, again: bool = False) -> str:
        """One reply from the witness's model, "" when it fails (never shown). `trace` collects
        the model's timings for the reply's timing record; `again`: the guard refused the last
        one (the witness's `regenerate`, steered back into persona)."""
        assert seat.witness is not None
        cap, name = self.hub.room.capacity, seat.identity.witness or ""
        n = cap.started_generating(name) if cap is not None else 0
        t0 = time.monotonic()
        try:
            ask = seat.witness.regenerate if again else seat.witness.reply
            reply = await asyncio.wait_for(ask(history, ctx), timeout=max(0.05, timeout_s))
            if trace is not None:  # one entry per model call (llama.cpp's timings when it gives them)
                tm, meta = reply.meta.get("timings") or {}, reply.meta
                for key, value in (("model_s", round(time.monotonic() - t0, 3)), ("prompt_n", tm.get("prompt_n")),
                                   ("prompt_ms", tm.get("prompt_ms")), ("gen_n", tm.get("predicted_n")),
                                   ("gen_ms", tm.get("predicted_ms")), ("cache_n", tm.get("cache_n")),
                                   ("first_s", meta.get("first_s")), ("usable_s", meta.get("usable_s")),
                                   ("deadline", meta.get("deadline"))):
                    trace.setdefault(key, []).append(value)
                if reply.fallback:
                    trace["witness_fallback"] = reply.error
            if cap is not None and not reply.error:  # the model's real speed, for its capacity estimate
                cap.observe(name, time.monotonic() - t0, max(n, cap.generating.get(name, 0)),
                            first_s=reply.meta.get("usable_s"), cut=reply.meta.get("deadline") == "cut")
                n = 0
            if reply.error:
                log.warning("game %s seat %s: %s (fallback=%s)", self.id, conv, reply.error, reply.fallback)
            return (reply.text or "").strip()
        except Exception as exc:  # noqa: BLE001 - never show a model failure
            log.warning("game %s seat %s: witness failed (%s); ELIZA answers", self.id, conv, exc)
            return ""
        finally:
            if cap is not None and n:  # failed: no timing, but it no longer generates
                cap.generating[name] = max(0, cap.generating.get(name, 1) - 1)

    def _budget_ms(self, conv: str, n_chars: int, q: Event) -> int:
        """When a reply of `n_chars` is due on average (no random part): the time a blocked reply
        may be regenerated in without the delay showing it."""
        t = self.seats[conv].spec.timing  # type: ignore[union-attr]
        return q.t_ms + round(1000 * timing.mean_delay(n_chars, t, len(q.payload["text"])))

    async def _guard(self, seat: SeatInfo, text: str, question: str | None = None) -> tuple[str, str] | None:
        """("blocked", word) for a reply the content filter blocks, ("persona_break", why) for
        an LLM reply that admits being an AI (read after the interrogator's `question`); None
        when it may be shown."""
        if blocked := await self.hub.filter.check(text):
            return "blocked", blocked
        if seat.spec is not None and seat.spec.kind != "eliza":
            from turinglab.witnesses.guard import classify

            broke, why = await asyncio.to_thread(classify, text, question)  # the first call trains (~1 s)
            if broke:
                return "persona_break", why
        return None

    async def _timed_guard(self, seat: SeatInfo, text: str, trace: dict, question: str) -> tuple[str, str] | None:
        t0 = time.monotonic()
        try:
            return await self._guard(seat, text, question)
        finally:
            trace.setdefault("guard_s", []).append(round(time.monotonic() - t0, 3))

    async def _ai_reply(self, conv: str, q: Event) -> None:
        seat = self.seats[conv]
        assert seat.witness is not None and seat.spec is not None
        history = [Turn("interrogator" if m.sender == INTERROGATOR else "witness", m.text, m.t_ms)
                   for m in self.game.conversations[conv].messages]
        ctx = self._ctx(conv, self.hub.now())
        designed_ms = self._designed_fn(conv, q)
        # an LLM witness streams and stops when its next words would come later than designed
        ctx = dataclasses.replace(ctx, reply_due=lambda n: (q.t_ms + designed_ms(n) - self.hub.now()) / 1000)
        left = max(1.0, (self.game.deadline_ms - self.hub.now()) / 1000)
        trace: dict[str, Any] = {"game": self.id, "seat": conv, "start_ms": self.hub.now() - q.t_ms}
        text = await self._generate(seat, conv, history, ctx, left, trace)
        if not text:
            trace["eliza"] = True
            text = await self.hub.fallback_text(history, ctx)
        text = text[: self.rules.max_chars]
        # the filter binds AI witnesses too: a blocked reply is recorded and counted, and the
        # model asked again while the designed delay of the first reply still hides it (ELIZA
        # would only say the same again); after that the fallback answers
        budget = self._budget_ms(conv, len(text), q)
        tries = 0
        # the persona guard: a reply that admits being an AI is recorded (code persona_break,
        # never shown) and regenerated the same way as a blocked one
        while blocked := await self._timed_guard(seat, text, trace, q.payload["text"]):
            code, detail = blocked
            trace.setdefault("refused", []).append(code)
            async def refuse(text=text, code=code, detail=detail) -> None:
                await self._commit(self.game.refuse(Send(conv, text, conv), code, detail, self.hub.now()).events)
            await self._retrying(refuse)
            log.warning("game %s seat %s: the AI reply was refused (%s: %s)", self.id, conv, code, detail)
            now = self.hub.now()
            if seat.spec.kind != "eliza" and tries < AI_REGENERATE_TRIES and now < budget:
                tries += 1
                text = (await self._generate(seat, conv, history, ctx, (budget - now) / 1000, trace, again=True))[: self.rules.max_chars]
                if text:
                    continue
            trace["eliza"] = True
            text = (await self.hub.fallback_text(history, ctx))[: self.rules.max_chars]
            if await self._guard(seat, text, q.payload["text"]):
                text = "sorry, what do you mean?"
            break
        # the human rule: shown at t_q + max(elapsed, designed), on the hub clock (not from when
        # this task started, which is after the question's commit)
        designed = designed_ms(len(text))
        cap = self.hub.room.capacity
        ready = self.hub.now() - q.t_ms
        late = ready > designed + LATE_TOLERANCE_MS
        trace.update(chars=len(text), ready_ms=ready, designed_ms=designed, typing_ms=self.typing_ms.get(q.seq, 0),
                     late_ms=max(0, ready - designed))
        log.log(logging.WARNING if late else logging.INFO, "game %s seat %s: AI reply %s: %s", self.id, conv,
                "LATE" if late else "on time", trace, extra={"reply_timing": trace})
        if cap is not None:  # later than designed: a tell the capacity limit is there to prevent
            cap.delivered(seat.identity.witness or "", late)
        await asyncio.sleep(max(0.0, (q.t_ms + designed - self.hub.now()) / 1000))
        async def send_reply() -> None:
            e = await self._apply_send("", conv, conv, text, None, self.hub.now())
            if e is not None:
                await self._deliver(conv, e)
        await self._after_typing(q, send_reply)

    async def on_paste(self, pid: str, f: proto.PasteIn) -> None:
        async with self.locked():
            seat = self.seat_of[pid]
            conv = (f.conv or "A") if seat == INTERROGATOR else seat
            out = self.game.apply(Paste(seat, f.length, conv), self.hub.now())
            await self._commit(out.events)
        if not out.ok:  # paste_blocked (recorded), or a paste out of the game's time
            await self._send(pid, proto.error(out.code or "refused", out.detail or "refused"))

    async def on_verdict(self, pid: str, f: proto.VerdictIn) -> None:
        async with self.locked():
            seat = self.seat_of[pid]
            out = self.game.apply(GiveVerdict(seat, f.choice, f.confidence, f.reason), self.hub.now())
            await self._commit(out.events)
        if not out.ok:
            await self._send(pid, proto.error(out.code or "bad_verdict", out.detail or "refused"))
            return
        await self.finish()

    async def on_report(self, pid: str, f: proto.ReportIn) -> None:
        async with self.locked():
            seat = self.seat_of[pid]
            conv = seat if seat != INTERROGATOR else None
            out = self.game.apply(ReportAbuse(seat, f.reason, conv), self.hub.now())
            await self._commit(out.events)
        if not out.ok:
            await self._send(pid, proto.error(out.code or "refused", out.detail or "refused"))
            return
        await self.finish()

    async def on_connection(self, pid: str, connected: bool) -> None:
        if self.game.state == "ended":
            return
        try:
            async with self.locked():
                seat = self.seat_of[pid]
                out = self.game.apply(Reconnect(seat) if connected else Disconnect(seat), self.hub.now())
                await self._commit(out.events)
        except StoreAway:  # not recorded (and not kept in memory): nobody was told it was
            pass

    # ---- the end ---------------------------------------------------------------
    async def finish(self) -> None:
        """After the game ended: stats, everyone sees the reveal, timers stop."""
        async with self.lock:
            if self.stats_recorded:
                return
            self.stats_recorded = True
            self.held.clear()
            self.typing_on.clear()
        v = self.game.verdict
        if v is not None:
            for name, s in self.seats.items():
                if s.identity.kind == "ai":
                    judged = ev.judged_human(self.game.format, v["choice"], name)
                    self.hub.room.stats.record(s.identity.witness, judged, v["confidence"], self.hub.confidence_scale)
        await self.hub.game_over(self)
        current = asyncio.current_task()
        for t in list(self.tasks):
            if t is not current:
                t.cancel()
        for s in self.seats.values():
            if s.witness is not None:
                try:
                    await s.witness.close()
                except Exception:  # noqa: BLE001
                    log.exception("game %s: witness close failed", self.id)
