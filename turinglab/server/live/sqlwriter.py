"""The server's event writer on SQLite: worker threads with group commit (`Writer`)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import Any

from turinglab.game.events import Event
from turinglab.server.live.drain import drain, settle
from turinglab.store.api import NewGame, Store

log = logging.getLogger("turinglab.server")

_STOP = object()  # queued by Writer.stop after the work to finish


class Writer:
    """Appends events in worker threads: per game in order; a caller awaits the commit.

    Group commit: the event batches that queued up while a worker was busy are written in one
    transaction with `Store.append_many` (so the store's checks and derived rows stay the
    store's); other jobs (`create_game`) run in their own transaction, in queue order. If a group
    fails, each of its batches is retried alone, so one bad batch cannot fail the others. Each
    worker has its own Store.
    """

    def __init__(self, url: str, workers: int) -> None:
        self.stores = [Store(url, upgrade=False) for _ in range(workers)]
        self.queues: list[asyncio.Queue] = [asyncio.Queue() for _ in range(workers)]
        self.tasks = [asyncio.create_task(self._run(q, st)) for q, st in zip(self.queues, self.stores)]
        self.stopped = False

    def _queue(self, game_id: str) -> asyncio.Queue:
        return self.queues[hash(game_id) % len(self.queues)]

    async def append(self, game_id: str, events: Iterable[Event]) -> None:
        """Append the game's events after its earlier jobs; return once they are committed."""
        if self.stopped:
            raise RuntimeError("the writer is stopped")
        fut = asyncio.get_running_loop().create_future()
        self._queue(game_id).put_nowait((game_id, list(events), fut))
        return await fut

    async def create(self, game: NewGame) -> None:
        """Create the game (in its own transaction, after the game's earlier jobs); await its commit."""
        return await self.run(game.game_id or "", lambda st: st.create_in_own(game))

    async def run(self, game_id: str, job: Callable[[Store], Any]) -> Any:
        """Run `job(store)` in the game's worker, after the game's earlier jobs; await its commit."""
        if self.stopped:
            raise RuntimeError("the writer is stopped")
        fut = asyncio.get_running_loop().create_future()
        self._queue(game_id).put_nowait((game_id, job, fut))
        return await fut

    async def _run(self, q: asyncio.Queue, store: Store) -> None:
        while True:
            item = await q.get()
            if item is _STOP:
                return
            batch, stop = [item], False
            while not q.empty() and len(batch) < 1000:
                item = q.get_nowait()
                if item is _STOP:  # everything queued before it is in this batch
                    stop = True
                    break
                batch.append(item)
            results = await asyncio.to_thread(self._write, store, batch)
            for (_, _, fut), (value, exc) in zip(batch, results):
                settle(fut, value, exc)
            if stop:
                return

    @staticmethod
    def _write(store: Store, batch: list) -> list[tuple[Any, BaseException | None]]:
        out: list[tuple[Any, BaseException | None]] = []
        i = 0
        while i < len(batch):
            if callable(batch[i][1]):  # a job of its own
                game_id, job, _ = batch[i]
                out.append(Writer._one(game_id, lambda: job(store)))
                i += 1
                continue
            j = i
            while j < len(batch) and not callable(batch[j][1]):
                j += 1
            group = [(gid, events) for gid, events, _ in batch[i:j]]
            try:
                store.append_many(group)
                out.extend((None, None) for _ in group)
            except Exception as exc:  # noqa: BLE001 - retry each batch alone, so one bad batch fails alone
                if len(group) == 1:
                    log.exception("storing game %s failed", group[0][0])
                    out.append((None, exc))
                    i = j
                    continue
                log.warning("group commit of %d batches failed; storing them one by one", len(group))
                for gid, events in group:
                    out.append(Writer._one(gid, lambda gid=gid, events=events: store.append_events(gid, events)))
            i = j
        return out

    @staticmethod
    def _one(game_id: str, call: Callable[[], Any]) -> tuple[Any, BaseException | None]:
        try:
            return call(), None
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting caller
            log.exception("storing game %s failed", game_id)
            return None, exc

    async def stop(self, timeout_s: float = 30.0) -> None:
        """Shut down: write everything already queued (the write in progress finishes), then close
        the stores. Only after `timeout_s` (a hung database) are the workers cancelled."""
        if self.stopped:
            return
        self.stopped = True
        await drain(self.queues, self.tasks, _STOP, timeout_s)
        for st in self.stores:
            st.close()
