"""What the writers share: their shutdown (the SQLite writer, sqlwriter.py, and the PostgreSQL one,
pgwriter.py) and how a written job's waiting future gets its outcome (also the judge pages' trial writer)."""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger("turinglab.server")


async def drain(queues: list[asyncio.Queue], tasks: list[asyncio.Task], stop: object, timeout_s: float) -> None:
    """Queue `stop` after the work in every lane and wait for the lanes to finish it; after
    `timeout_s` (a hung database) cancel them."""
    for q in queues:
        q.put_nowait(stop)
    _, pending = await asyncio.wait(tasks, timeout=timeout_s)
    if pending:
        log.error("the writer did not finish its queued work within %.0f s; dropping it", timeout_s)
        for t in pending:
            t.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def settle(fut: asyncio.Future, value: object, exc: BaseException | None) -> None:
    """Give a job's waiting future its outcome, unless its caller has given up on it already."""
    if fut.done():
        return
    if exc is None:
        fut.set_result(value)
    else:
        fut.set_exception(exc)
