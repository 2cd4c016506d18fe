"""The PostgreSQL writer (group commit on the event loop): acknowledged only after the commit, one
bad item fails alone, each game's order kept, game starts batched with events. Real PostgreSQL."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from sqlalchemy import create_engine, text

from turinglab.game.config import Rules, Study
from turinglab.game.engine import Game, Send
from turinglab.game.events import Event
from turinglab.server.live.pgwriter import PgWriter
from turinglab.store.api import NewGame, Store
from turinglab.store.db import StoreError


@pytest.fixture
def store(postgres_url):
    """A store on this test's PostgreSQL database, closed after the test."""
    s = Store(postgres_url)
    yield s
    s.close()


def _games(store: Store, n: int, prefix: str = "g") -> list[tuple[NewGame, Game]]:
    sid = store.register_study(Study(name="pgwriter"))
    out = []
    for k in range(n):
        i, w = store.create_participant(), store.create_participant()
        out.append((NewGame(sid, "two-player", {"A": {"kind": "human", "participant_id": w}}, i, 1000,
                            f"{prefix}{k:04d}"), Game.start("two-player", Rules(), 1000)))
    return out


def _say(g: Game, n: int, gid: str) -> list[Event]:
    return g.apply(Send("interrogator" if n % 2 == 0 else "A", f"{gid}-{n}", "A"), 1001 + n).events


async def test_starts_and_events_of_many_games_share_transactions_in_order(store):
    games = _games(store, 40)
    writer = PgWriter(store.url)
    try:
        pending = []
        for new, g in games:  # all queued before the writer runs: a start, its first events, then three more
            pending.append(asyncio.ensure_future(writer.create(new)))
            pending.append(asyncio.ensure_future(writer.append(new.game_id, g.log)))
            for n in range(3):
                pending.append(asyncio.ensure_future(writer.append(new.game_id, _say(g, n, new.game_id))))
        assert all(r is None for r in await asyncio.gather(*pending))
        assert writer.batches < len(pending) // 10, "the items were not grouped"
        for new, g in games:
            stored = store.events(new.game_id)
            assert [e.to_dict() for e in stored] == [e.to_dict() for e in g.log]
            assert Game.replay(stored).state_dict() == g.state_dict()
            assert store.game(new.game_id).seats["A"].participant_id == new.seats["A"]["participant_id"]
    finally:
        await writer.stop()


async def test_acknowledged_only_after_the_commit(store):
    [(new, g)] = _games(store, 1)
    writer = PgWriter(store.url)
    other = create_engine(store.url)
    seen: list[tuple[bool, int, int]] = []
    original = writer._append

    async def spy(db, per_game):  # the INSERT has run, the transaction is still open
        await original(db, per_game)
        async with await db.cursor().execute("select count(*) from events where game_id = %s", (new.game_id,)) as c:
            mine = (await c.fetchone())[0]  # this transaction sees its rows
        with other.connect() as c:  # another connection: nothing of the open transaction shows
            n = c.execute(text("select count(*) from events where game_id = :g"), {"g": new.game_id}).scalar()
        seen.append((ack.done(), mine, n))

    try:
        await writer.create(new)
        writer._append = spy
        ack = asyncio.ensure_future(writer.append(new.game_id, g.log))
        await ack
        n = len(g.log)
        assert seen == [(False, n, 0)]  # inside the transaction: not acknowledged, not visible elsewhere
        assert [e.seq for e in store.events(new.game_id)] == [e.seq for e in g.log]
    finally:
        await writer.stop()
        other.dispose()


async def test_a_constraint_error_in_one_event_fails_it_alone(postgres_url):
    """One event the database refuses (a conversation name longer than its column) rolls back its
    whole batch; the batch is written again without it: the others are stored and acknowledged,
    the bad one is not, and every game's stored log is what was acknowledged, in order."""
    store = Store(postgres_url)
    games = _games(store, 30)
    writer = PgWriter(store.url)
    try:
        await asyncio.gather(*(writer.create(new) for new, _ in games))
        await asyncio.gather(*(writer.append(new.game_id, g.log) for new, g in games))
        bad_new, bad_game = games[7]
        ok_events = {new.game_id: [_say(g, n, new.game_id) for n in range(2)] for new, g in games}
        last = len(bad_game.log)
        bad = Event(last, 2000, "message", "A", "X" * 40, {"text": "too long a conversation name"})
        tasks, expect = [], []
        for new, g in games:
            for events in ok_events[new.game_id]:
                tasks.append(asyncio.ensure_future(writer.append(new.game_id, events)))
                expect.append(new.game_id)
            if new is bad_new:
                tasks.append(asyncio.ensure_future(writer.append(new.game_id, [bad])))
                expect.append("bad")
        before = writer.batches
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for who, r in zip(expect, results):
            if who == "bad":
                assert isinstance(r, Exception) and "too long" in str(r), r
            else:
                assert r is None, (who, r)
        assert writer.batches - before < len(tasks) // 4, "the good items were not written in groups"
        for new, g in games:
            stored = store.events(new.game_id)
            assert [e.to_dict() for e in stored] == [e.to_dict() for e in g.log]  # the bad event is not there
            assert Game.replay(stored).state_dict() == g.state_dict()
        # the bad game goes on from its stored log
        await writer.append(bad_new.game_id, _say(bad_game, 2, bad_new.game_id))
        assert len(store.events(bad_new.game_id)) == len(bad_game.log)
    finally:
        await writer.stop()
        store.close()


async def test_sequence_gap_and_unknown_game_fail_alone(store):
    games = _games(store, 5)
    writer = PgWriter(store.url)
    try:
        await asyncio.gather(*(writer.create(new) for new, _ in games))
        first = [asyncio.ensure_future(writer.append(new.game_id, g.log)) for new, g in games]
        again = asyncio.ensure_future(writer.append(games[2][0].game_id, games[2][1].log))  # game_started twice
        unknown = asyncio.ensure_future(writer.append("nope", games[0][1].log))
        dup = asyncio.ensure_future(writer.create(games[3][0]))  # the same game id a second time
        assert await asyncio.gather(*first) == [None] * 5
        with pytest.raises(StoreError, match="does not continue the log"):
            await again
        with pytest.raises(StoreError, match="no game"):
            await unknown
        with pytest.raises(StoreError, match="game id used twice"):
            await dup
        for new, g in games:
            assert len(store.events(new.game_id)) == len(g.log)
    finally:
        await writer.stop()


async def test_a_database_that_is_away_fails_the_batch_without_storing(store):
    [(new, g)] = _games(store, 1)
    away = store.url.replace("127.0.0.1:5432", "127.0.0.1:9")  # nothing listens there
    assert away != store.url
    writer = PgWriter(away)
    try:
        results = await asyncio.gather(writer.create(new), writer.append(new.game_id, g.log),
                                       return_exceptions=True)
        assert all(isinstance(r, Exception) for r in results), results
        assert writer.batches == 0
    finally:
        await writer.stop()
    assert store.games() == []  # nothing was stored
    good = PgWriter(store.url)
    try:  # the same items, written once the database is there
        await good.create(dataclasses.replace(new))
        await good.append(new.game_id, g.log)
        assert len(store.events(new.game_id)) == len(g.log)
    finally:
        await good.stop()


async def test_a_game_created_elsewhere_gets_its_seats_and_derived_rows(postgres_url):
    """A game the writer did not create (e.g. taken over from another worker): its seats are read
    back for the identity of every event, and a verdict ends it with the same derived rows as the
    synchronous store writes."""
    from turinglab.game.engine import GiveVerdict

    store = Store(postgres_url)
    [(new, g)] = _games(store, 1)
    store.create_game(new.study_id, new.format, new.seats, new.interrogator_id, new.t_ms, game_id=new.game_id)
    writer = PgWriter(store.url)  # its own store: nothing cached
    try:
        await writer.append(new.game_id, g.log)
        for n in range(2):
            await writer.append(new.game_id, _say(g, n, new.game_id))
        out = g.apply(GiveVerdict("interrogator", "human", 80, "fast replies"), 1100)
        assert out.ok
        await writer.append(new.game_id, out.events)
    finally:
        await writer.stop()
    info = store.game(new.game_id)
    assert info.status == "ended" and info.ended_ms == g.log[-1].t_ms
    assert info.verdict is not None and info.verdict.choice == "human" and info.verdict.correct is True
    rows = store.event_rows(new.game_id)
    assert [r.event.to_dict() for r in rows] == [e.to_dict() for e in g.log]
    assert all(r.identity["A"]["participant_id"] == new.seats["A"]["participant_id"] for r in rows)
    store.close()
