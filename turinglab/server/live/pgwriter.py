"""The server's event writer on PostgreSQL: group commit on the event loop, over a pool of
async psycopg connections (SQLAlchemy's async engine), so no commit blocks the loop.

One task per lane takes everything queued for it (game starts and events of every game), writes
it in one transaction with the store's own checks and derived rows (`Store.create_in`,
`Store.append_in`) and only then resolves each caller's future. A game always goes to the same
lane, and a lane writes its queue in order, so each game's log keeps its order. A batch that
fails is rolled back as a whole (nothing of it is acknowledged) and split in two, each half
written again, so a bad item fails alone; a database that is away fails every item of the batch
at once (the sessions roll back and rebuild from the stored log, see `GameSession._commit`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterable
from typing import Any

import psycopg
from sqlalchemy.exc import DataError, IntegrityError, ProgrammingError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from turinglab.game.events import Event
from turinglab.server.live.drain import drain
from turinglab.store.api import Store
from turinglab.store.db import StoreError
from turinglab.store.rows import GameState, NewGame, duplicate_error, group_batches

log = logging.getLogger("turinglab.server")

MAX_BATCH = 2000  # items per transaction
_STOP = object()
# the item's own fault: the others of its batch are written without it
ITEM_ERRORS = (StoreError, IntegrityError, DataError, ProgrammingError, psycopg.IntegrityError, psycopg.DataError,
               psycopg.ProgrammingError)
# the append path's SQL (PostgreSQL): rows travel as one JSON document, ids as one array
_LOCK = ("SELECT g.id, g.format, g.study_hash, g.status, g.flags, g.ended_ms, g.end_reason, "
         "(SELECT max(e.seq) FROM events e WHERE e.game_id = g.id) "
         "FROM games g WHERE g.id = ANY(%s) ORDER BY g.id FOR UPDATE OF g")
_SEATS = ("SELECT game_id, seat, kind, witness, participant_id, selection_prob FROM game_seats "
          "WHERE game_id = ANY(%s)")
_EVENT_COLS = "game_id, seq, t_ms, type, actor, conversation, payload, identity, study_hash"
_INSERT_EVENTS = (f"INSERT INTO events ({_EVENT_COLS}) SELECT {_EVENT_COLS} "
                  "FROM json_populate_recordset(NULL::events, %s::json)")
_UPDATE_GAMES = ("UPDATE games g SET status = r.status, flags = r.flags, ended_ms = r.ended_ms, "
                 "end_reason = r.end_reason FROM json_to_recordset(%s::json) "
                 "AS r(gid text, status text, flags json, ended_ms bigint, end_reason text) WHERE g.id = r.gid")
_VERDICT_COLS = "game_id, choice, confidence, reason, correct, forced, t_ms"
_INSERT_VERDICTS = (f"INSERT INTO verdicts ({_VERDICT_COLS}) SELECT {_VERDICT_COLS} "
                    "FROM json_populate_recordset(NULL::verdicts, %s::json)")


class PgWriter:
    """The `Writer` interface (`append`, `create`, `run`, `stop`) for PostgreSQL, on the loop."""

    def __init__(self, url: str, lanes: int = 1) -> None:
        self.store = Store(url, upgrade=False)  # checks, seat cache; `run` jobs get it in a thread
        self.engine: AsyncEngine = create_async_engine(self.store.url, pool_size=lanes + 1, max_overflow=2)
        self.queues: list[asyncio.Queue] = [asyncio.Queue() for _ in range(lanes)]
        self.tasks = [asyncio.create_task(self._run(q)) for q in self.queues]
        self.stopped = False
        self.batches = 0  # transactions committed (tests and benchmarks read it)

    def _put(self, game_id: str, what: Any) -> asyncio.Future:
        if self.stopped:
            raise RuntimeError("the writer is stopped")
        fut = asyncio.get_running_loop().create_future()
        self.queues[hash(game_id) % len(self.queues)].put_nowait((game_id, what, fut))
        return fut

    # each call queues at once (in call order) and returns a future to await
    def append(self, game_id: str, events: Iterable[Event]) -> asyncio.Future:
        """Append the game's events after its earlier items; the future is done once they are committed."""
        return self._put(game_id, list(events))

    def create(self, game: NewGame) -> asyncio.Future:
        """Create the game (batched with other games' starts and events); done once committed."""
        assert game.game_id, "the writer needs the game's id to keep its items in order"
        return self._put(game.game_id, game)

    def run(self, game_id: str, job: Callable[[Store], Any]) -> asyncio.Future:
        """Run `job(store)` in a thread after the game's earlier items (e.g. reading its log back)."""
        return self._put(game_id, job)

    async def _run(self, q: asyncio.Queue) -> None:
        while True:
            item = await q.get()
            if item is _STOP:
                return
            batch, stop = [item], False
            while not q.empty() and len(batch) < MAX_BATCH:
                item = q.get_nowait()
                if item is _STOP:  # everything queued before it is in this batch
                    stop = True
                    break
                batch.append(item)
            i = 0
            while i < len(batch):  # runs of writes in one transaction; a job runs between them
                if callable(batch[i][1]):
                    await self._job(*batch[i])
                    i += 1
                    continue
                j = i
                while j < len(batch) and not callable(batch[j][1]):
                    j += 1
                await self._write(batch[i:j])
                i = j
            if stop:
                return

    async def _job(self, game_id: str, job: Callable[[Store], Any], fut: asyncio.Future) -> None:
        try:
            _resolve(fut, await asyncio.to_thread(job, self.store))
        except Exception as exc:  # noqa: BLE001 - handed to the awaiting caller
            log.exception("a store job of game %s failed", game_id)
            _fail(fut, exc)

    async def _write(self, items: list) -> None:
        """Write `items` in one transaction, then resolve their futures; split it when it fails."""
        try:
            await self._commit(items)
        except ITEM_ERRORS as exc:
            if len(items) == 1:
                log.error("storing game %s failed: %s", items[0][0], exc)
                _fail(items[0][2], exc)
                return
            log.warning("a group commit of %d items failed (%s); writing its halves apart",
                        len(items), str(exc).splitlines()[0])
            half = len(items) // 2
            await self._write(items[:half])  # the first half first: each game's order is kept
            await self._write(items[half:])
            return
        except Exception as exc:  # noqa: BLE001 - the database is away: nothing of the batch is stored
            log.error("a group commit of %d items failed (%s: %s)", len(items), type(exc).__name__,
                      str(exc).splitlines()[0] if str(exc) else "")
            for _, _, fut in items:
                _fail(fut, exc)
            return
        self.batches += 1
        for _, _, fut in items:
            _resolve(fut, None)

    async def _commit(self, items: list) -> None:
        creates = [what for _, what, _ in items if isinstance(what, NewGame)]
        appends = [(gid, what) for gid, what, _ in items if not isinstance(what, NewGame)]
        async with self.engine.connect() as conn:  # rolled back on leaving unless committed
            await conn.begin()  # the commit below then commits the driver's transaction, whoever used it
            db = (await conn.get_raw_connection()).driver_connection
            try:
                if creates:  # a game's start is queued before its events, and no event precedes a start
                    await conn.run_sync(lambda c: self.store.create_in(c, creates))
                if appends:  # the hot path: straight on the driver's connection, in the same transaction
                    await self._append(db, group_batches(appends))
                await conn.commit()
            except BaseException:
                if db.broken:  # not back into the pool (no ping on checkout: it would cost a round trip)
                    await conn.invalidate()
                raise

    async def _append(self, db: Any, per_game: dict[str, list[Event]]) -> None:
        """`Store.append_in` in as few round trips as it takes: lock the games and read their
        last seq (one query), their seats if not cached, one insert, and the derived rows."""
        ids = sorted(per_game)  # lock game rows in one order (no deadlock between writers)
        async with db.cursor() as cur:
            await cur.execute(_LOCK, (ids,))
            games, last = {}, {}
            for r in await cur.fetchall():
                games[r[0]] = GameState(*r[:7])
                last[r[0]] = r[7]
            missing = self.store.uncached_seats([g for g in ids if g in games])
            if missing:
                await cur.execute(_SEATS, (missing,))
                self.store.cache_seat_rows(await cur.fetchall(), games)
            rows, verdicts = self.store.plan_append(per_game, games, last)
            try:
                await cur.execute(_INSERT_EVENTS, (json.dumps(rows),))
            except psycopg.errors.UniqueViolation as exc:
                raise duplicate_error(ids, exc) from None
            changed = [g.row() for g in games.values() if g.changed()]
            if changed:
                await cur.execute(_UPDATE_GAMES, (json.dumps(changed),))
            if verdicts:  # a verdict replaces the game's verdict row, if it had one
                await cur.execute("DELETE FROM verdicts WHERE game_id = ANY(%s)", ([v["game_id"] for v in verdicts],))
                await cur.execute(_INSERT_VERDICTS, (json.dumps(verdicts),))

    async def stop(self, timeout_s: float = 30.0) -> None:
        """Shut down: write everything already queued, then close the pool. Only after `timeout_s`
        (a hung database) are the lanes cancelled."""
        if self.stopped:
            return
        self.stopped = True
        await drain(self.queues, self.tasks, _STOP, timeout_s)
        await self.engine.dispose()
        self.store.close()


def _resolve(fut: asyncio.Future, value: Any) -> None:
    if not fut.done():
        fut.set_result(value)


def _fail(fut: asyncio.Future, exc: BaseException) -> None:
    if not fut.done():
        fut.set_exception(exc)
