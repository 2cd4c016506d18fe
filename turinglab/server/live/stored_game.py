"""A running game whose memory never runs ahead of its store: every change is committed before
anyone is told; a failed write is undone in memory (`StoreAway`) and the game rebuilt from its
stored log before the next change. The base of `GameSession` (session.py), which relays."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from typing import Any

from turinglab.game.engine import Game
from turinglab.game.events import Event
from turinglab.server.live import protocol as proto
from turinglab.server.live.host import Held, StoreAway

log = logging.getLogger("turinglab.server")

RETRY_S = (0.5, 1.0, 2.0, 5.0)  # waits between retries of a timer's write while the store is away


class StoredGame:
    """The commit, rollback and rebuild of one game. The session sets `hub`, `id`, `game`, `ids`,
    `held`, `lock`, `tasks`, `store_away` and gives `_release` (a held reply's timer),
    `_after_change` and `participants`."""

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
            self.hub.write_health.wrote()
        except Exception as exc:  # noqa: BLE001 - any failed write: undo, tell the players, retry later
            self.hub.write_health.wrote(exc)
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
