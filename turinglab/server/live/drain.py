"""The writers' shutdown, shared by the SQLite writer (sqlwriter.py) and the PostgreSQL one (pgwriter.py)."""

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
