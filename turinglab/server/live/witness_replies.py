"""When and how a witness's reply shows in a live game: the typing indicator, a human witness's
held reply released on time, and an AI witness's reply (written by the AI seat, witnesses/ai_seat.py),
all by one timing rule (reply_timing.py). A part of GameSession (session.py)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, Callable

from turinglab.game.engine import Send, Typing
from turinglab.game.events import INTERROGATOR, Event
from turinglab.server.live.host import Held, StoreAway
from turinglab.server.live.reply_timing import designed_delay, not_before
from turinglab.witnesses.ai_seat import AISeat, Refusal
from turinglab.witnesses.base import Turn

HUMAN = {"source": "human"}  # the author of a person's witness message (the AI seat names its own)


class WitnessReplies:
    """Mixed into GameSession, which gives `game`, `seats`, `rules`, `hub`, `rng`, `id`, `held`,
    `typing_ms`, `typing_shown`, `typing_on`, `interrogator`, `locked`, `_commit`, `_retrying`,
    `_apply_send`, `_deliver`, `_ctx`, `_send` and `_last_question`."""

    def _designed_fn(self, conv: str, q: Event) -> Callable[[int], int]:
        spec = self.seats[conv].spec
        return designed_delay(spec.timing if spec is not None else self.hub.human_timing, self.rng,
                              q.payload["text"], self.typing_ms.get(q.seq, 0), self.rules.typing_min_s)

    def _not_before(self, q: Event | None) -> int:
        return not_before(None if q is None else self.typing_shown.get(q.seq), self.rules.typing_min_s)

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

    async def _release(self, conv: str, h: Held) -> None:
        await asyncio.sleep(max(0.0, (h.release_ms - self.hub.now()) / 1000))

        async def release() -> None:
            c = self.game.conversations[conv]
            if self.held.get(conv) is not h or c.held is None:  # gone: recorded as undelivered
                if self.held.get(conv) is h:
                    del self.held[conv]
                return
            e = await self._apply_send("", conv, conv, h.text, None, self.hub.now(), msg_id=h.id, author=HUMAN)
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

    async def _ai_reply(self, conv: str, q: Event) -> None:
        """The AI seat answers `q` (witnesses/ai_seat.py: model, guard, regeneration, fallback); its refused
        replies are committed as they come, its reply shown by the human rule."""
        seat = self.seats[conv]
        assert seat.witness is not None and seat.spec is not None
        history = [Turn("interrogator" if m.sender == INTERROGATOR else "witness", m.text, m.t_ms)
                   for m in self.game.conversations[conv].messages]
        ctx = self._ctx(conv, self.hub.now())
        designed_ms = self._designed_fn(conv, q)
        # an LLM witness streams and stops when its next words would come later than designed
        ctx = dataclasses.replace(ctx, reply_due=lambda n: (q.t_ms + designed_ms(n) - self.hub.now()) / 1000)
        trace: dict[str, Any] = {"game": self.id, "seat": conv, "start_ms": self.hub.now() - q.t_ms}
        ai = AISeat(seat.witness, seat.spec, content_filter=self.hub.filter, max_chars=self.rules.max_chars,
                    fallback=self.hub.fallback_text, capacity=self.hub.room.capacity, now=self.hub.now,
                    game=self.id, seat=conv)

        async def record(r: Refusal) -> None:
            async def refuse() -> None:
                await self._commit(self.game.refuse(Send(conv, r.text, conv), r.code, r.detail, self.hub.now()).events)
            await self._retrying(refuse)
        answer = await ai.answer(history, ctx, question=q.payload["text"], asked_ms=q.t_ms,
                                 deadline_ms=self.game.deadline_ms, on_refusal=record, trace=trace)
        text = answer.text
        # the human rule: shown at t_q + max(elapsed, designed), on the hub clock (not from when
        # this task started, which is after the question's commit)
        designed = designed_ms(len(text))
        ai.timing_record(trace, len(text), self.hub.now() - q.t_ms, designed, self.typing_ms.get(q.seq, 0))
        await asyncio.sleep(max(0.0, (q.t_ms + designed - self.hub.now()) / 1000))
        async def send_reply() -> None:
            e = await self._apply_send("", conv, conv, text, None, self.hub.now(), author=answer.author())
            if e is not None:
                await self._deliver(conv, e)
        await self._after_typing(q, send_reply)
