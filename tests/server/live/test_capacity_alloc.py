"""Allocation does not draw a witness it cannot serve (issue 35.3), on one process (SQLite) and
across two workers (PostgreSQL + Redis): at a load where the capacity estimate says the witness
cannot answer in time, no game draws it; the study's overflow witness plays instead, the game
records why, /admin names the withheld witness, and no participant is told.

The slow witness is a test double beside the real parts (the real server, store, Redis, ELIZA):
its replies take `base` seconds per reply generating at once, as a model sharing the cores does.
The last test uses the real local model."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec
from turinglab.server.app import create_app
from turinglab.server.testing import AdminLogin, WsPlayer, serve_in_thread
from turinglab.witnesses.base import Reply, Witness
from tests.server.live.test_cluster import apps, redis_url  # noqa: F401 - the fixture

FAST = Timing(base_s=0.05, s_per_char=0.002, gamma_shape=1.0, gamma_scale=0.01)
RULES = Rules(time_limit_s=30, typing_min_s=0.1, typing_jitter_s=0.1)
ELIZA = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=FAST)
# designed delay about 1 s: a witness whose first words take 0.3 s alone serves floor(0.7 × 1 / 0.3) = 2 at once
SLOW = WitnessSpec(codename="Slow", kind="local", fallback=None,
                   timing=Timing(base_s=1.0, s_per_char=0.0, gamma_shape=1.0, gamma_scale=0.001))
HIDDEN = ("withheld", "allocation", "cannot answer", "in progress", "capacity", "overflow")


class Cores:
    """The test double's machine: a reply takes `base` s for each reply generating at once."""

    def __init__(self, base: float) -> None:
        self.base, self.busy = base, 0


class Shared(Witness):
    codename, kind = "Slow", "local"

    def __init__(self, cores: Cores) -> None:
        self.cores = cores

    async def reply(self, history, ctx):  # noqa: ANN001, ANN201
        self.cores.busy += 1
        t0 = time.monotonic()
        try:
            await asyncio.sleep(self.cores.base * self.cores.busy)
        finally:
            self.cores.busy -= 1
        return Reply("oh not much, just got home", meta={"usable_s": time.monotonic() - t0})


def study(name: str) -> Study:
    return Study(name=name, rules=RULES, witnesses=[SLOW, ELIZA], allocation=Allocation(
        human_ratio=0.0, capacity={"Slow": "auto"}, overflow_witness="Eliza"))


def factory(cores: Cores):  # noqa: ANN201
    from turinglab.server.live.hub import default_witness_factory

    return lambda spec, seed: Shared(cores) if spec.codename == "Slow" else default_witness_factory(spec, seed)


def on_hub(hub, coro):  # noqa: ANN001, ANN201 - run a coroutine on the server's own event loop
    return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, hub.task.get_loop()))


async def joined(bases: list[str], n: int) -> list[WsPlayer]:
    ps = [await (await WsPlayer.create(bases[i % len(bases)])).connect() for i in range(n)]
    for p in ps:
        await p.phase("idle")
        await p.send({"type": "join"})
    for p in ps:
        await p.phase("game", timeout=20)
    return ps


async def finish(ps: list[WsPlayer]) -> None:
    for i, p in enumerate(ps):
        await p.send({"type": "message", "conv": "A", "text": "hi, what are you up to?", "client_id": f"m{i}"})
        await p.next("ack", client_id=f"m{i}")
    for p in ps:
        await p.next("message", timeout=20)
        await p.send({"type": "verdict", "choice": "ai", "confidence": 70, "reason": "test"})
        await p.phase("reveal", timeout=20)


def most_at_once(games, witness: str) -> int:  # noqa: ANN001
    """The most games of `witness` in progress at the same moment (from the stored start and end)."""
    marks = sorted((t, d) for g in games if any(i.witness == witness for i in g.seats.values())
                   for t, d in ((g.started_ms, 1), (g.ended_ms or 2**62, -1)))
    n = best = 0
    for _, d in marks:
        n += d
        best = max(best, n)
    return best


def assert_blind(ps: list[WsPlayer]) -> None:
    seen = json.dumps([p.frames for p in ps]).lower()
    for word in HIDDEN:
        assert word not in seen, word


async def test_one_process_never_draws_a_witness_past_what_it_serves_in_time(sqlite_url):
    cores = Cores(0.3)
    app = create_app(study("cap-one"), sqlite_url, rng_seed=4, human_timing=FAST, initial_ai_wait_s=0.1,
                     admin_password="pw", witness_factory=factory(cores))
    with serve_in_thread(app) as base:
        hub = app.state.hub
        cap = hub.room.capacity
        await on_hub(hub, hub._calibrate(SLOW))  # one timed reply alone: 0.3 s
        assert cap.limit("Slow") == 2, cap.estimates["Slow"].to_dict()

        ps = await joined([base], 5)  # five games due at once: two fit
        await finish(ps)
        games = hub.store.games(hub.study_id)
        slow = [g for g in games if g.seats["A"].witness == "Slow"]
        spare = [g for g in games if g.seats["A"].witness == "Eliza"]
        assert len(games) == 5 and most_at_once(games, "Slow") == 2 and len(slow) == 2
        for g in spare:  # each overflow game keeps why the slow witness was not drawn
            why = g.flags["allocation"]["withheld"]["Slow"]
            assert why.startswith("full: 2 games in progress, it serves 2 at once in time") and g.flags["allocation"]["overflow"]
        assert all("allocation" not in g.flags for g in slow)
        assert cap.withheld_draws["Slow"] == 3 and cap.overflowed == 3

        cores.base = 3.0  # the machine got busy: alone, its first words now come after the delay
        await on_hub(hub, hub._calibrate(SLOW, retimed=True))
        assert cap.limit("Slow") == 0
        async with httpx.AsyncClient(base_url=base) as c:
            admin = (await c.get("/admin", auth=AdminLogin("pw"))).text
        assert "Withheld from the draw now: Slow, cannot answer in time even alone: first words take 3.0" in admin
        late = await joined([base], 2)
        assert all(hub.session_of[p.pid].seats["A"].identity.witness == "Eliza" for p in late)
        assert cap.why_withheld("Slow").startswith("cannot answer in time even alone")

        cores.base = 0.1  # fast again: the server's own re-timing brings it back
        hub.retime_s = 0.2
        deadline = time.monotonic() + 15
        while cap.limit("Slow") == 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.2)
        assert cap.limit("Slow") > 0 and "re-timed while withheld" in cap.estimates["Slow"].why
        back = await joined([base], 1)
        assert hub.session_of[back[0].pid].seats["A"].identity.witness == "Slow"
        await finish(late + back)
        assert_blind(ps + late + back)
        for p in ps + late + back:
            await p.close()


async def test_two_workers_share_the_count_through_redis(postgres_url, redis_url):  # noqa: F811
    cores = Cores(0.3)
    a1, a2 = apps(study("cap-two"), postgres_url, redis_url, human_timing=FAST, initial_ai_wait_s=0.1,
                  admin_password="pw", witness_factory=factory(cores))
    with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
        h1, h2 = a1.state.hub, a2.state.hub
        await on_hub(h1, h1._calibrate(SLOW))  # timed on worker 1: worker 2 learns it through Redis
        deadline = time.monotonic() + 10
        while h2.room.capacity.limit("Slow") != 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert h1.room.capacity.limit("Slow") == h2.room.capacity.limit("Slow") == 2

        ps = await joined([b1, b2], 6)  # six games due at once on two workers: two fit
        places = await on_hub(h1, h1.r.zcard(h1.place_key("Slow")))
        assert places == 2
        await finish(ps)
        games = h1.store.games(h1.study_id)
        assert len(games) == 6 and most_at_once(games, "Slow") == 2
        spare = [g for g in games if g.seats["A"].witness == "Eliza"]
        assert len(spare) == 4 and all(g.flags["allocation"]["withheld"]["Slow"].startswith("full: 2 games")
                                       for g in spare)
        deadline = time.monotonic() + 5  # every game ended: its place is free on both workers
        while (h1.room.capacity.in_use or h2.room.capacity.in_use) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert await on_hub(h1, h1.r.zcard(h1.place_key("Slow"))) == 0 and h2.room.capacity.in_use == {}

        # a worker killed mid-game never releases its places: they lapse when nobody renews them
        now = time.time_ns() // 1_000_000
        await on_hub(h1, h1.r.zadd(h1.place_key("Slow"), {"gdead1": now + 4000, "gdead2": now + 4000}))
        await asyncio.sleep(1.2)  # a renewal: both workers count the dead worker's places
        assert h2.room.capacity.why_withheld("Slow").startswith("full: 2 games in progress")
        async with httpx.AsyncClient(base_url=b2) as c:
            admin = (await c.get("/admin", auth=AdminLogin("pw"))).text
        assert "Withheld from the draw now: Slow, full: 2 games in progress" in admin, admin[admin.find("Model cap"):][:3000]
        await asyncio.sleep(max(0.0, (now + 5200) / 1000 - time.time()))
        assert await on_hub(h1, h1.r.zcard(h1.place_key("Slow"))) == 0 and h2.room.capacity.why_withheld("Slow") is None

        cores.base = 3.0  # too slow even alone: re-timed by the matchmaker, withheld on both workers
        leader = h1 if h1.leader else h2
        other = h2 if leader is h1 else h1
        await on_hub(leader, leader._calibrate(SLOW, retimed=True))
        deadline = time.monotonic() + 10
        while other.room.capacity.limit("Slow") != 0 and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert other.room.capacity.why_withheld("Slow").startswith("cannot answer in time even alone")
        late = await joined([b1, b2], 2)
        await finish(late)
        newest = sorted(h1.store.games(h1.study_id), key=lambda g: g.started_ms)[-2:]
        assert all(g.seats["A"].witness == "Eliza" and "cannot answer" in g.flags["allocation"]["withheld"]["Slow"]
                   for g in newest)
        assert_blind(ps + late)
        for p in ps + late:
            await p.close()


@pytest.mark.parametrize("error, limit", [("TimeoutError: no answer within 1.2 s", 0), ("ConnectError: refused", 1)])
async def test_a_timed_reply_that_times_out_counts_as_at_least_that_slow(sqlite_url, error, limit):
    """A timed reply that timed out says the model is at least that slow (withheld); one that failed
    for another reason says nothing of its speed (the estimate stays: one game until timed)."""
    class Stuck(Witness):
        codename, kind = "Slow", "local"

        async def reply(self, history, ctx):  # noqa: ANN001, ANN201
            await asyncio.sleep(1.2)
            return Reply("sorry, say again?", fallback=True, error=error)

    app = create_app(study("cap-stuck"), sqlite_url, rng_seed=4, human_timing=FAST,
                     witness_factory=lambda spec, seed: Stuck())
    with serve_in_thread(app):
        hub = app.state.hub
        await on_hub(hub, hub._calibrate(SLOW))
        est = hub.room.capacity.estimates["Slow"]
        assert est.limit == limit and hub.room.capacity.generating.get("Slow", 0) == 0
        if limit == 0:
            assert est.why.startswith("timed at start, after the model's warm-up: first words in at least 1.2")
        else:
            assert est.samples == 0 and "not measured yet" in est.why


def test_the_claim_script_gives_no_witness_more_places_than_its_limit_under_races(redis_url):  # noqa: F811
    """Forty matchmakers claiming games of one witness with a limit of 2 at once (a stale
    matchmaker's snapshot): two claims win; a lapsed place does not count."""
    import threading

    import redis

    from tests.server.live.test_cluster import prefix
    from turinglab.server.live.cluster_redis import CLAIM

    r = redis.Redis.from_url(redis_url, decode_responses=True)
    pre = prefix()
    entry = '[1, "ai", 2]'
    r.hset(f"{pre}:room", mapping={f"p{i}": entry for i in range(40)})
    now = time.time_ns() // 1_000_000
    r.zadd(f"{pre}:cap:use:Slow", {"glapsed": now - 1})  # a dead worker's place, lapsed
    script = r.register_script(CLAIM)
    out: list[int] = []

    def claim(i: int) -> None:
        gid = f"g{i}"
        keys = [f"{pre}:{x}" for x in ("room", "games", f"lease:{gid}", "hwaits", "interrogated", f"match:{gid}",
                                        "cap:use:Slow")]
        out.append(script(keys=keys, args=[gid, "w1", 4000, "", 5, "", "{}", 1, f"p{i}", entry, pre, 2, now + 12000, now]))

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(out) == [-1] * 38 + [1, 1]
    won = r.zrange(f"{pre}:cap:use:Slow", 0, -1)
    assert len(won) == 2 and "glapsed" not in won and r.smembers(f"{pre}:games") == set(won)
    assert r.hlen(f"{pre}:room") == 38  # the others still wait
    r.close()


@pytest.mark.localmodel
async def test_the_local_model_with_its_one_slot_busy_is_not_drawn_for_a_second_game(sqlite_url, monkeypatch):
    """The real local model, one slot: its game holds the slot, so the next due game goes to the
    overflow witness (with why). Its designed delay is long, so alone it is in time at any load."""
    from turinglab.witnesses.local import server
    from turinglab.witnesses.registry import resolve

    monkeypatch.setenv("TURINGLAB_LOCAL_SLOTS", "1")
    monkeypatch.setattr(server, "_shared", None, raising=False)
    local = resolve("local").model_copy(update={"codename": "Local", "timing": Timing(
        base_s=60.0, s_per_char=0.0, gamma_shape=1.0, gamma_scale=0.01)})
    s = Study(name="cap-local", rules=RULES, witnesses=[local, ELIZA], allocation=Allocation(
        human_ratio=0.0, capacity={"Local": "auto"}, overflow_witness="Eliza"))
    app = create_app(s, sqlite_url, rng_seed=1, human_timing=FAST, initial_ai_wait_s=0.1)
    with serve_in_thread(app) as base:
        hub = app.state.hub
        await on_hub(hub, hub._warm())  # as `serve` starts: the model loads, its slot reads the prompt, a reply is timed
        est = hub.room.capacity.estimates["Local"]
        # timed (or, if that reply failed on a busy machine, not yet: one game at a time either way)
        assert est.ceiling == 1 and est.limit == 1, est.to_dict()
        first = await joined([base], 1)
        assert hub.session_of[first[0].pid].seats["A"].identity.witness == "Local"
        second = await joined([base], 1)
        s2 = hub.session_of[second[0].pid]
        assert s2.seats["A"].identity.witness == "Eliza"
        g = hub.store.game(s2.id)
        assert g.flags["allocation"]["withheld"]["Local"].startswith("full: 1 games in progress, it serves 1")
        assert_blind(first + second)
        for p in first + second:
            await p.close()
