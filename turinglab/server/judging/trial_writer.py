"""Group commit of judge trials (static studies): one store transaction for every answer that
arrives while the previous batch is being written, instead of one transaction (and fsync) each.

`await writer.append(trial)` returns only once the trial's batch is committed (memory never runs
ahead of the store), or raises that trial's own error. A batch is one `Store.append_trials` call
(all or nothing); when it fails, its trials are stored one by one, so one bad answer (a repeated
POST, an unknown item) fails only its own request. `stop()` writes what is queued, then ends.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from turinglab.server.live.drain import settle
from turinglab.store.static import TrialIn

log = logging.getLogger("turinglab.server")


class TrialWriter:
    def __init__(self, store: Any, study_id: int, *, max_batch: int = 1000) -> None:
        self.store, self.study_id, self.max_batch = store, study_id, max_batch
        self.queue: asyncio.Queue[tuple[TrialIn, asyncio.Future] | None] | None = None
        self.task: asyncio.Task | None = None
        self.batches = 0  # committed append_trials calls that held more than one trial (for tests, /admin)

    def start(self) -> None:
        self.queue = asyncio.Queue()
        self.task = asyncio.create_task(self._run(), name="judge-trial-writer")

    async def append(self, trial: TrialIn) -> None:
        """Store `trial`; returns when it is committed, raises its error otherwise."""
        if self.task is None or self.task.done() or self.queue is None:
            # not running (an app used without its lifespan, or stopping): one transaction of its own
            await asyncio.to_thread(self.store.append_trials, self.study_id, [trial])
            return
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((trial, fut))
        # shield: a client that goes away does not cancel the write of its answer
        await asyncio.shield(fut)

    async def stop(self) -> None:
        """Write everything queued, then end the task."""
        if self.task is None or self.queue is None:
            return
        self.queue.put_nowait(None)
        await self.task
        self.task = None

    async def _run(self) -> None:
        assert self.queue is not None
        stopping = False
        while not stopping:
            first = await self.queue.get()
            batch = [] if first is None else [first]
            stopping = first is None
            while len(batch) < self.max_batch and not self.queue.empty():
                nxt = self.queue.get_nowait()
                if nxt is None:
                    stopping = True
                    continue
                batch.append(nxt)
            if not batch:
                continue
            try:
                outcomes = await asyncio.to_thread(self._write, [t for t, _ in batch])
            except BaseException as exc:  # never leave a request waiting forever
                outcomes = [exc if isinstance(exc, Exception) else RuntimeError("trial writer stopped")] * len(batch)
                for (_, fut), err in zip(batch, outcomes):
                    if not fut.done():
                        fut.set_exception(err)
                raise
            for (_, fut), err in zip(batch, outcomes):
                settle(fut, None, err)

    def _write(self, trials: list[TrialIn]) -> list[BaseException | None]:
        """Runs in a worker thread: the batch in one transaction, else each trial in its own."""
        try:
            self.store.append_trials(self.study_id, trials)
            if len(trials) > 1:
                self.batches += 1
            return [None] * len(trials)
        except Exception as exc:  # noqa: BLE001 - every trial gets its own outcome below
            if len(trials) == 1:
                return [exc]
            log.info("a batch of %d judge trials failed (%s); storing them one by one", len(trials), exc)
        out: list[BaseException | None] = []
        for t in trials:
            try:
                self.store.append_trials(self.study_id, [t])
                out.append(None)
            except Exception as exc:  # noqa: BLE001
                out.append(exc)
        return out
