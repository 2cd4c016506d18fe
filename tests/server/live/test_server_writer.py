"""The server's event writer: group commit keeps each game's order, and one bad job fails alone."""

from __future__ import annotations

import asyncio

import pytest

from turinglab.game.config import Rules, Study
from turinglab.game.engine import Game, Send
from turinglab.server.live.sqlwriter import Writer
from turinglab.store.api import Store
from turinglab.store.db import StoreError


async def _create_games(store, writer, sid, n: int) -> list:
    """Create n two-player games through the writer; [(game id, the started Game not yet stored)]."""
    games = []
    for k in range(n):
        g = Game.start("two-player", Rules(), 1000)
        i, w = store.create_participant(), store.create_participant()
        gid = f"g{k:04d}"
        await writer.run(gid, lambda st, gid=gid, i=i, w=w: st.create_game(
            sid, "two-player", {"A": {"kind": "human", "participant_id": w}}, i, 1000, game_id=gid))
        games.append((gid, g))
    return games


async def test_group_commit_order_and_isolation(db_url):
    store = Store(db_url)
    sid = store.register_study(Study(name="writer"))
    writer = Writer(store.url, workers=2)
    try:
        games = await _create_games(store, writer, sid, 30)

        async def play(gid: str, g: Game) -> None:
            await writer.append(gid, g.log)
            for n in range(6):
                out = g.apply(Send("interrogator" if n % 2 == 0 else "A", f"{gid}-{n}", "A"), 1001 + n)
                await writer.append(gid, out.events)

        # a job that cannot be stored (its seq does not continue the log) runs in the same batches
        bad_gid, bad_game = games[0]

        async def bad() -> None:
            await asyncio.sleep(0)
            await writer.append(bad_gid, bad_game.log)  # game_started a second time

        results = await asyncio.gather(*(play(gid, g) for gid, g in games), bad(), return_exceptions=True)
        assert all(r is None for r in results[:-1])
        assert isinstance(results[-1], StoreError) and "does not continue the log" in str(results[-1])
        for gid, g in games:
            stored = store.events(gid)
            assert [e.to_dict() for e in stored] == [e.to_dict() for e in g.log]
            assert Game.replay(stored).state_dict() == g.state_dict()
    finally:
        await writer.stop()
        store.close()


async def test_writer_reports_unknown_game(sqlite_url):
    store = Store(sqlite_url)
    writer = Writer(store.url, workers=1)
    try:
        g = Game.start("two-player", Rules(), 0)
        with pytest.raises(StoreError, match="no game"):
            await writer.append("nope", g.log)
    finally:
        await writer.stop()
        store.close()


async def test_stop_writes_what_is_queued_and_in_flight(sqlite_url):
    """Shutting down drains the queues and lets the write in progress finish before closing."""
    store = Store(sqlite_url)
    sid = store.register_study(Study(name="writer-stop"))
    writer = Writer(store.url, workers=1)
    games = await _create_games(store, writer, sid, 20)
    pending = [asyncio.create_task(writer.append(gid, g.log)) for gid, g in games]
    await asyncio.sleep(0)  # queued; the worker has taken the first batch into its thread
    await writer.stop()
    assert all(t.done() and t.exception() is None for t in pending)
    for gid, g in games:
        assert [e.to_dict() for e in store.events(gid)] == [e.to_dict() for e in g.log]
    with pytest.raises(RuntimeError, match="stopped"):
        await writer.append(games[0][0], games[0][1].log)
    store.close()
