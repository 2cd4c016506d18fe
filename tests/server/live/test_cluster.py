"""Several workers on one study (Redis + PostgreSQL, both real): relay, shared waiting room, takeover."""

from __future__ import annotations

import asyncio
import os
import time
import uuid
import warnings

import pytest

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec
from turinglab.server.app import create_app
from turinglab.server.testing import WsPlayer, serve_in_thread

REDIS = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
RULES = Rules(time_limit_s=60, typing_min_s=0.05, typing_jitter_s=0.05)
FAST = Timing(base_s=0.05, s_per_char=0.001, gamma_shape=1.0, gamma_scale=0.01)


@pytest.fixture
def redis_url():  # noqa: ANN201 - Iterator[str]
    import redis

    try:
        redis.Redis.from_url(REDIS).ping()
    except Exception as exc:  # noqa: BLE001
        reason = f"Redis not reachable at {REDIS} ({type(exc).__name__}): apt-get install redis-server (CI does)"
        warnings.warn(reason)
        print(f"\n!!! SKIPPED: {reason}\n")
        pytest.skip(reason)
    yield REDIS
    r = redis.Redis.from_url(REDIS)
    while PREFIXES:  # the test's keys go with it
        for k in r.scan_iter(f"{PREFIXES.pop()}:*", count=1000):
            r.delete(k)
    r.close()


PREFIXES: list[str] = []


def prefix() -> str:
    """A key prefix of one test's own (parallel runs share the Redis server)."""
    PREFIXES.append(f"tltest:{uuid.uuid4().hex[:10]}")
    return PREFIXES[-1]


def apps(study: Study, db: str, redis_url: str, n: int = 2, **kw):
    pre = prefix()
    return [create_app(study, db, rng_seed=i, redis_url=redis_url, redis_prefix=pre, **kw) for i in range(n)]


def test_sqlite_is_refused_for_several_workers(sqlite_url, redis_url):
    with pytest.raises(ValueError, match="need PostgreSQL"):
        create_app(Study(name="x"), sqlite_url, redis_url=redis_url)


async def test_players_on_two_workers_play_one_game(postgres_url, redis_url):
    s = Study(name="cl-human", rules=RULES, allocation=Allocation(human_ratio=1.0))
    a1, a2 = apps(s, postgres_url, redis_url, human_timing=FAST)
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        p = await (await WsPlayer.create(b1)).connect()
        q = await (await WsPlayer.create(b2)).connect()
        for x in (p, q):
            await x.send({"type": "join"})
        sp, sq = await p.phase("game"), await q.phase("game")
        assert sp["game"]["game_id"] == sq["game"]["game_id"]
        inter, wit = (p, q) if sp["game"]["role"] == "interrogator" else (q, p)
        for k in range(3):
            await inter.send({"type": "message", "conv": "A", "text": f"hello {k}", "client_id": f"q{k}"})
            await inter.next("ack", client_id=f"q{k}")
            await wit.next("message", text=f"hello {k}")
            await wit.send({"type": "message", "text": f"hi back {k}", "client_id": f"w{k}"})
            await wit.next("ack", client_id=f"w{k}")
            await inter.next("message", text=f"hi back {k}")
        await inter.send({"type": "verdict", "choice": "human", "confidence": 80})
        r1, r2 = await inter.phase("reveal"), await wit.phase("reveal")
        assert r1["game"]["reveal"]["correct"] is True and r2["game"]["verdict"]["choice"] == "human"
        for x in (p, q):
            await x.close()
        import redis.asyncio as aioredis

        r = aioredis.Redis.from_url(redis_url, decode_responses=True)
        gid, pre = sp["game"]["game_id"], PREFIXES[-1]
        try:  # the game is over: its lease is free and it is no longer a live game
            assert not await r.exists(f"{pre}:lease:{gid}", f"{pre}:match:{gid}")
            assert not await r.sismember(f"{pre}:games", gid)
            assert await r.hget(f"{pre}:played", p.pid) == "1"
        finally:
            await r.aclose()
    from turinglab.store.api import Store

    with Store(postgres_url) as st:
        g = st.games()[0]
        texts = [e.payload["text"] for e in st.events(g.id) if e.type == "message"]
    assert texts == [t for k in range(3) for t in (f"hello {k}", f"hi back {k}")]


def test_a_person_is_claimed_once_under_races(redis_url):
    """The claim script: of many workers claiming matches that share a person, exactly one wins."""
    import threading

    import redis

    from turinglab.server.live.cluster_redis import CLAIM

    r = redis.Redis.from_url(redis_url, decode_responses=True)
    pre = prefix()
    entry = '[1, "human", null]'
    r.hset(f"{pre}:room", mapping={"alice": entry, "bob": entry, "carol": entry})
    script = r.register_script(CLAIM)
    wins: list[tuple[str, str]] = []

    def claim(gid: str, partner: str) -> None:
        keys = [f"{pre}:{x}" for x in ("room", "games", f"lease:{gid}", "hwaits", "interrogated", f"match:{gid}",
                                        "cap:none")]
        args = [gid, "w1", 4000, "[0, 0]", 5, "", "{}", 2, "alice", entry, partner, entry, pre, "", 0, 0]  # no limit
        if script(keys=keys, args=args) == 1:
            wins.append((gid, partner))

    threads = [threading.Thread(target=claim, args=(f"g{i}", "bob" if i % 2 else "carol")) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    gid, partner = wins[0]
    assert r.get(f"{pre}:game:alice") == r.get(f"{pre}:game:{partner}") == gid
    assert r.smembers(f"{pre}:games") == {gid} and not r.hexists(f"{pre}:room", "alice")
    other = "carol" if partner == "bob" else "bob"
    assert r.hget(f"{pre}:room", other) == entry  # the one left out still waits


async def test_many_players_on_two_workers_each_matched_once(postgres_url, redis_url):
    s = Study(name="cl-many", rules=RULES, allocation=Allocation(human_ratio=1.0))
    a1, a2 = apps(s, postgres_url, redis_url, human_timing=FAST)
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        players = [await (await WsPlayer.create(b1 if i % 2 else b2)).connect() for i in range(30)]
        await asyncio.gather(*(p.send({"type": "join"}) for p in players))
        states = await asyncio.gather(*(p.phase("game", timeout=30) for p in players))
        by_game: dict[str, list[str]] = {}
        for p, st in zip(players, states):
            by_game.setdefault(st["game"]["game_id"], []).append(st["game"]["role"])
        assert len(by_game) == 15 and all(sorted(r) == ["interrogator", "witness"] for r in by_game.values())
        for p in players:
            await p.close()
    from turinglab.store.api import Store

    with Store(postgres_url) as st:
        games = st.games()
    seen = [pid for g in games for pid in (g.interrogator_id, g.seats["A"].participant_id)]
    assert len(games) == 15 and len(seen) == len(set(seen)) == 30


async def test_ai_game_on_the_other_worker_and_thompson_tallies_shared(postgres_url, redis_url):
    eliza = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=FAST)
    s = Study(name="cl-ai", rules=RULES, witnesses=(eliza,), allocation=Allocation(human_ratio=0.0))
    a1, a2 = apps(s, postgres_url, redis_url, human_timing=FAST, initial_ai_wait_s=0.1)
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        for base in (b1, b2):
            p = await (await WsPlayer.create(base)).connect()
            await p.send({"type": "join"})
            await p.phase("game", timeout=20)
            await p.send({"type": "message", "conv": "A", "text": "how are you?", "client_id": "q"})
            await p.next("ack", client_id="q")
            reply = await p.next("message", timeout=10)
            while reply["from"] != "them":
                reply = await p.next("message", timeout=10)
            await p.send({"type": "verdict", "choice": "human", "confidence": 100})
            await p.phase("reveal")
            await p.close()
        await asyncio.sleep(2.5)  # each worker's matchmaking loop follows the shared verdict list
        tallies = [a.state.hub.room.stats.tallies["Eliza"] for a in (a1, a2)]
        assert [t.games for t in tallies] == [2, 2] and [t.judged_human for t in tallies] == [2, 2]


async def test_open_games_redis_does_not_know_are_taken_over_and_ended_ones_left(postgres_url, redis_url):
    """After Redis lost its keys (or a full restart), a worker puts the store's open games up for
    takeover and resumes them; a game that has ended stays ended, and one started long ago ends
    by its rules (time up, then no verdict in the grace period)."""
    import redis.asyncio as aioredis

    from turinglab.game.engine import End, Game
    from turinglab.store.api import Store

    s = Study(name="cl-adopt", rules=RULES, allocation=Allocation(human_ratio=1.0))
    now = int(time.time() * 1000)  # started now: a game started long ago would end on resuming (time up)
    with Store(postgres_url) as st:
        sid = st.register_study(s)
        ids = []
        for ended, t0 in ((False, now), (True, now), (False, 1000)):
            i, w = st.create_participant(consent_ms=1), st.create_participant(consent_ms=1)
            gid = st.create_game(sid, "two-player", {"A": {"kind": "human", "participant_id": w}}, i, t0)
            g = Game.start("two-player", s.rules, t0)
            if ended:
                g.apply(End("server_restart"), t0 + 1000)
            st.append_events(gid, g.log)
            ids.append(gid)
    open_gid, ended_gid, overdue_gid = ids
    [app] = apps(s, postgres_url, redis_url, n=1, human_timing=FAST)
    pre = PREFIXES[-1]
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        with serve_in_thread(app):
            for _ in range(200):  # taken over: leased by the worker
                if await r.get(f"{pre}:lease:{open_gid}"):
                    break
                await asyncio.sleep(0.05)
            assert await r.get(f"{pre}:lease:{open_gid}")
            assert await r.sismember(f"{pre}:games", open_gid)
            assert not await r.sismember(f"{pre}:games", ended_gid)
            assert not await r.exists(f"{pre}:lease:{ended_gid}")
            for _ in range(200):  # started long ago: resumed, its time and verdict grace are over
                with Store(postgres_url) as st:
                    if st.game(overdue_gid).status == "ended":
                        break
                await asyncio.sleep(0.05)
            with Store(postgres_url) as st:
                kinds = [(e.type, e.payload.get("reason")) for e in st.events(overdue_gid)]
            assert kinds[-2:] == [("time_up", None), ("game_ended", "verdict_timeout")]
            assert not await r.sismember(f"{pre}:games", overdue_gid)
    finally:
        await r.aclose()


def test_an_ended_game_is_never_taken_over_nor_renewed(redis_url):
    """The lease scripts on real Redis: a game whose owner released it at game over (its "ended"
    mark set in the same MULTI) is neither taken by a scan nor leased again by a renewal that
    began before it ended; an unheld open game is taken, a held one is not."""
    import redis

    from turinglab.server.live.cluster_redis import ENDED_MS, RENEW, TAKE

    pre = prefix()
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    take, renew = r.register_script(TAKE), r.register_script(RENEW)
    r.sadd(f"{pre}:games", "gEnded", "gOrphan", "gHeld")
    r.set(f"{pre}:ended:gEnded", "1", px=ENDED_MS)
    r.set(f"{pre}:lease:gHeld", "wOther", px=4000)
    assert take(keys=[f"{pre}:games"], args=["wMe", 4000, pre]) == ["gOrphan"]
    assert r.get(f"{pre}:lease:gOrphan") == "wMe" and r.get(f"{pre}:lease:gHeld") == "wOther"
    assert r.get(f"{pre}:lease:gEnded") is None
    assert r.smembers(f"{pre}:games") == {"gOrphan", "gHeld"}  # the ended one left the set
    # a renewal whose list was made before gEnded ended: not renewed, not put back, not lost;
    # gVanished (no mark: Redis lost its lease) is taken back, gHeld is lost to its holder
    gids = ["gEnded", "gVanished", "gHeld"]
    lost = renew(keys=[f"{pre}:lease:{g}" for g in gids], args=["wMe", 4000, f"{pre}:games", *gids, pre])
    assert lost == ["gHeld"]
    assert r.get(f"{pre}:lease:gEnded") is None and r.get(f"{pre}:lease:gVanished") == "wMe"
    assert r.smembers(f"{pre}:games") == {"gOrphan", "gHeld", "gVanished"}
    r.close()


async def test_a_game_that_never_started_is_not_leased_again_nor_taken_over_twice(postgres_url, redis_url):
    """A taken-over game its dead owner never stored is forgotten (its players start again). A
    renewal made from a list that still had it must not lease it again: it would be taken over a
    second time 4 s later, and its `start_failed` would pull the players out of their new game."""
    from turinglab.matchmaking import Match
    from turinglab.matchmaking.room import Slot

    s = Study(name="cl-forget", rules=RULES, allocation=Allocation(human_ratio=1.0))
    [app] = apps(s, postgres_url, redis_url, n=1, human_timing=FAST)
    pre = PREFIXES[-1]
    async with app.router.lifespan_context(app):  # the worker started in this test's loop
        hub = app.state.hub
        m = Match("two-player", "pI", {"A": Slot("human", "pW", None, None)}, {"pI": 0, "pW": 0}, "human")
        await hub.r.sadd(f"{pre}:games", "gX")
        await hub.r.set(f"{pre}:lease:gX", hub.me, px=4000)
        await hub.r.set(f"{pre}:game:pI", "gX")
        await hub.r.set(f"{pre}:game:pW", "gNext")  # already matched into another game
        still = await hub._forget("gX", m.participants)
        assert still == ["pI"]
        assert await hub.r.get(f"{pre}:game:pW") == "gNext" and await hub.r.get(f"{pre}:game:pI") is None
        lost = await hub.renew(keys=[f"{pre}:lease:gX"], args=[hub.me, 4000, f"{pre}:games", "gX", pre])
        assert lost == [] and await hub.r.get(f"{pre}:lease:gX") is None
        assert not await hub.r.sismember(f"{pre}:games", "gX")
        assert await hub.take(keys=[f"{pre}:games"], args=[hub.me, 4000, pre]) == []


async def test_a_player_whose_relay_was_lost_gets_the_state_again(postgres_url, redis_url):
    """Issue 43: the owner believes nobody else listens to the witness (`local_only`, as after a publish
    that reached no subscriber during an outage), so the interrogator's message is not relayed. The
    witness's own worker notices the silence (watchdog, longer than the expected reply time) and asks
    for the state, which carries the message; with the watchdog slow, the owner's re-check of its
    local-only players (PUBSUB NUMSUB, every 5 s) heals it too."""
    s = Study(name="cl-heal", rules=RULES, allocation=Allocation(human_ratio=1.0))
    a1, a2 = apps(s, postgres_url, redis_url, human_timing=FAST)
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        p = await (await WsPlayer.create(b1)).connect()
        q = await (await WsPlayer.create(b2)).connect()
        for x in (p, q):
            await x.send({"type": "join"})
        sp, sq = await p.phase("game"), await q.phase("game")
        inter, wit = (p, q) if sp["game"]["role"] == "interrogator" else (q, p)
        owner = next(a.state.hub for a in (a1, a2) if sp["game"]["game_id"] in a.state.hub.live)
        other = next(a.state.hub for a in (a1, a2) if a.state.hub is not owner)
        assert inter.pid in owner.session_of and wit.pid not in other.session_of
        rechecks = owner._recheck_local_only

        async def no_recheck() -> None:
            return None
        for k, (wait_s, recheck) in enumerate([(1.0, no_recheck), (600.0, rechecks)]):
            other.reply_wait_s = wait_s
            owner._recheck_local_only = recheck
            owner.local_only.add(wit.pid)  # the relay to the witness is lost
            t0 = time.monotonic()
            await inter.send({"type": "message", "conv": "A", "text": f"lost {k}", "client_id": f"q{k}"})
            await inter.next("ack", client_id=f"q{k}")
            while True:  # the states until one carries the message
                st = await wit.next("state", timeout=max(0.1, t0 + 8 - time.monotonic()), phase="game")
                if f"lost {k}" in [m["text"] for m in st["game"]["messages"]]:
                    break
            healed = time.monotonic() - t0
            assert healed < (3.0 if k == 0 else 8.0), healed
            await wit.send({"type": "message", "text": f"found {k}", "client_id": f"w{k}"})
            await inter.next("message", text=f"found {k}")
        for x in (p, q):
            await x.close()
