"""One running game on the server: the engine, its timers and its witnesses.

Every change goes: engine (`Game.apply`) -> store (awaited, in a thread, in order) -> frames.
One asyncio lock per game. Timers are asyncio tasks, so they fire whether or not any
browser is connected. Human and AI witness replies follow one timing rule (docs/protocol.md):
shown at t_q + max(elapsed, reply_delay(n), typing_delay + typing_min_s), the typing indicator
at t_q + typing_delay: so "typing…" always shows for at least typing_min_s before a reply.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import numpy as np

from turinglab.game import events as ev
from turinglab.game.engine import MAX_REFUSED_TEXT, Belief, Game, GiveVerdict, Hold, Paste, ReportAbuse, Send, Tick
from turinglab.game.events import INTERROGATOR, Event
from turinglab.server.live import protocol as proto
from turinglab.server.live.host import Held, Host, SeatInfo, _dt
from turinglab.server.live.presence import Presence
from turinglab.server.live.stored_game import StoredGame
from turinglab.server.live.view import participant_view, verdict_correct
from turinglab.server.live.witness_replies import HUMAN, WitnessReplies
from turinglab.witnesses import personal_data, timing
from turinglab.witnesses.base import GameContext

MASK_AT_MOST = 2 * MAX_REFUSED_TEXT  # characters of a too-long message masked (the engine keeps MAX_REFUSED_TEXT)
log = logging.getLogger("turinglab.server")



class GameSession(StoredGame, Presence, WitnessReplies):
    """One live game: relays frames, runs its timers and seats, commits every change
    (stored_game.py); its witnesses' replies show by one rule (witness_replies.py)."""

    def __init__(self, hub: Host, game_id: str, fmt: str, interrogator: str,
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
        self.masked: set[tuple[str, str]] = set()  # (participant, client_id) whose text had personal data masked
        self.held: dict[str, Held] = {}
        self.typing_on: set[str] = set()
        self.typing_ms: dict[int, int] = {}  # question seq -> when its typing indicator shows (ms after it)
        self.typing_shown: dict[int, int] = {}  # question seq -> when it really showed (hub ms; a slow commit delays it)
        self.tasks: set[asyncio.Task] = set()
        self.identity = {k: s.identity.to_dict() for k, s in seats.items()}
        self.stats_recorded = False
        self.store_away = False  # a write failed; memory is rebuilt from the stored log before the next
        self.away_since: int | None = None  # when the interrogator left (None: connected)

    # ---- helpers -----------------------------------------------------------
    @property
    def rules(self):
        return self.game.rules

    def participants(self) -> list[str]:
        return list(self.seat_of)

    def _ctx(self, seat: str, now_ms: int) -> GameContext:
        return GameContext(self.id, _dt(self.game.started_ms), _dt(now_ms), self.rules.time_limit_s,
                           self.rules.max_chars, seat, language=self.hub.study.language)

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
        await self._start_witnesses()
        self._spawn(self._clock_task())

    async def _start_witnesses(self) -> None:
        """Each AI seat's witness gets the game's context (a taken-over game starts them too)."""
        for name, s in self.seats.items():
            if s.witness is not None:
                try:
                    await s.witness.start(self._ctx(name, self.game.started_ms))
                except Exception:  # noqa: BLE001 - a witness failure must not stop the game
                    log.exception("game %s: witness %s failed to start", self.id, name)

    async def _clock_task(self) -> None:
        """Fire the time limit (and a verdict deadline, if the study has one)."""
        await self._tick_at(self.game.deadline_ms)
        await self._verdict_deadline()

    async def _verdict_deadline(self) -> None:
        grace = self.rules.verdict_grace_s
        if grace is not None and self.game.state == "awaiting_verdict":
            await self._tick_at(self.game.closed_ms + round(grace * 1000))

    async def _tick_at(self, due: int) -> None:
        await asyncio.sleep(max(0.0, (due - self.hub.now()) / 1000))

        async def tick() -> None:  # a timer may wake a little early: the deadline has come
            await self._commit(self.game.apply(Tick(), max(self.hub.now(), due)).events)
        await self._retrying(tick)
        await self._after_change()

    async def _after_change(self) -> None:
        if self.game.state == "ended":
            await self.finish()
        else:
            await self._broadcast_state()

    # ---- what one participant sees ---------------------------------------------
    def view(self, pid: str, now_ms: int) -> dict[str, Any]:
        return participant_view(self, pid, now_ms)

    def phase(self) -> str:
        return {"in_progress": "game", "awaiting_verdict": "verdict", "ended": "reveal"}[self.game.state]

    def correct(self) -> bool | None:
        return verdict_correct(self)

    # ---- actions -----------------------------------------------------------------
    def _known_resend(self, pid: str, f: proto.MessageIn) -> None:
        """Called under the game's lock before a message is handled: a resumed game (resumed.py)
        acknowledges again here what its dead owner had stored."""

    def _mask(self, text: str) -> str | None:
        """`text` with its personal data masked, or None: the filter's own `mask` (a filter
        object without one still gets the shipped rules, so no wrapper turns masking off)."""
        mask = getattr(self.hub.filter, "mask", None)
        return mask(text) if callable(mask) else personal_data.mask(text)[0]

    def _ack(self, pid: str, client_id: str, mid: str, t_ms: int, text: str) -> dict[str, Any]:
        """The sender's `ack`; with `masked` (the text as stored and relayed) when personal data
        was masked, so the page shows the sender what the other side got."""
        frame: dict[str, Any] = {"type": "ack", "client_id": client_id, "id": mid, "t_ms": t_ms}
        if (pid, client_id) in self.masked:
            frame["masked"] = text
        return frame

    async def on_message(self, pid: str, f: proto.MessageIn) -> None:
        async with self.locked():
            seat = self.seat_of[pid]
            key = (pid, f.client_id)
            seen = f.seen  # the filter judges what was typed; the rest of the server sees the masked text
            # a text over the study's limit is refused by the engine (too_long), which keeps only its
            # start: only that start is masked, and the word filter does not read it (bounded work)
            too_long = len(f.text) > self.rules.max_chars
            head = f.text[:MASK_AT_MOST] if too_long else f.text
            if (masked := self._mask(head)) is not None:  # personal data: masked, not refused
                f = f.model_copy(update={"text": masked + f.text[len(head):]})
                f._seen = None
                self.masked.add(key)
            self._known_resend(pid, f)
            if key in self.acks:  # a resend after a reconnect: acknowledge again, relay nothing
                mid, t, text = self.acks[key]
                if text != f.text:  # not a resend: another message under a used id
                    await self._send(pid, proto.error("client_id_reused", proto.TEXTS["client_id_reused"],
                                                      f.client_id))
                    return
                await self._send(pid, self._ack(pid, f.client_id, mid, t, text))
                return
            conv = (f.conv or "A") if seat == INTERROGATOR else seat
            now = self.hub.now()
            if seat != INTERROGATOR and conv in self.held and self.game.chat_open:
                await self._send(pid, proto.error("not_your_turn", proto.TEXTS["not_your_turn"], f.client_id))
                return
            blocked = None if too_long else await self.hub.filter.check(seen)
            if blocked:
                await self._commit(self.game.refuse(Send(seat, f.text, conv), "blocked", blocked, now).events)
                await self._send(pid, proto.error("blocked", proto.TEXTS["blocked"], f.client_id))
                return
            if seat == INTERROGATOR:
                await self._interrogator_message(pid, conv, f, now)
            else:
                await self._witness_message(pid, conv, f, now)

    async def _apply_send(self, pid: str, seat: str, conv: str, text: str, client_id: str | None,
                          now: int, msg_id: str | None = None, author: dict | None = None) -> Event | None:
        out = self.game.apply(Send(seat, text, conv, author), now)
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
        await self._send(pid, self._ack(pid, f.client_id, mid, e.t_ms, f.text))
        seat = self.seats[conv]
        if seat.identity.kind == "human":
            await self._send(seat.identity.participant_id, {"type": "message", "id": mid, "conv": conv,
                                                            "from": "them", "text": e.payload["text"], "t_ms": e.t_ms})
        else:
            self._spawn(self._ai_reply(conv, e))
        self.typing_ms[e.seq] = round(1000 * timing.typing_delay(self.rules, self.rng))
        self._spawn(self._typing(conv, e))

    def _last_question(self, conv: str) -> Event | None:
        msgs = self.game.conversations[conv].messages
        for m in reversed(msgs):
            if m.sender == INTERROGATOR:
                return self.game.log[m.seq]
        return None

    async def _witness_message(self, pid: str, conv: str, f: proto.MessageIn, now: int) -> None:
        q = self._last_question(conv)
        relay = self.hub.human_relay and self.seats[conv].spec is None  # shown as typed (the presets)
        release = now if q is None or relay else max(q.t_ms + max(now - q.t_ms, self._designed_fn(conv, q)(len(f.text))),
                                            self._not_before(q))
        if release <= now:
            e = await self._apply_send(pid, conv, conv, f.text, f.client_id, now, author=HUMAN)
            if e is not None:
                await self._acked_and_delivered(pid, conv, f.client_id, e)
            return
        # stored (as `held`) before it is acknowledged: a verdict or a crash before its release
        # leaves it in the log, recorded as undelivered when the game ends
        out = self.game.apply(Hold(conv, f.text, conv, release, HUMAN), now)
        await self._commit(out.events)
        if not out.ok:
            await self._send(pid, proto.error(out.code or "refused", out.detail or "refused", f.client_id))
            return
        h = Held(self._new_id(), f.text, out.events[-1].t_ms, release)
        self.held[conv] = h
        self.acks[(pid, f.client_id)] = (h.id, h.t_ms, f.text)
        await self._send(pid, self._ack(pid, f.client_id, h.id, h.t_ms, f.text))
        self._spawn(self._release(conv, h))

    async def _acked_and_delivered(self, pid: str, conv: str, client_id: str, e: Event) -> None:
        mid = self.ids[e.seq]
        self.acks[(pid, client_id)] = (mid, e.t_ms, e.payload["text"])
        await self._send(pid, self._ack(pid, client_id, mid, e.t_ms, e.payload["text"]))
        await self._deliver(conv, e)

    async def _deliver(self, conv: str, e: Event) -> None:
        """Show a witness message to the interrogator (one path for human and AI)."""
        self.typing_on.discard(conv)
        await self._send(self.interrogator, {"type": "message", "id": self.ids[e.seq], "conv": conv,
                                             "from": "them", "text": e.payload["text"], "t_ms": e.t_ms})

    async def on_paste(self, pid: str, f: proto.PasteIn) -> None:
        async with self.locked():
            seat = self.seat_of[pid]
            conv = (f.conv or "A") if seat == INTERROGATOR else seat
            out = self.game.apply(Paste(seat, f.length, conv), self.hub.now())
            await self._commit(out.events)
        if not out.ok:  # paste_blocked (recorded), or a paste out of the game's time
            await self._send(pid, proto.error(out.code or "refused", out.detail or "refused"))

    async def on_belief(self, pid: str, f: proto.BeliefIn) -> None:
        """A belief move: stored, nothing sent to anyone but a refusal to its sender (blinding:
        no frame to a witness, no timer touched)."""
        after = next((seq for seq, mid in self.ids.items() if mid == f.after), -1)
        async with self.locked():
            out = self.game.apply(Belief(self.seat_of[pid], f.value, after), self.hub.now())
            await self._commit(out.events)
        if not out.ok:
            await self._send(pid, proto.error(out.code or "bad_belief", out.detail or "refused"))

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
