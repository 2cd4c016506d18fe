"""A cluster worker through a Redis outage: its games go on from memory and the store; the
subscription is restored with backoff (never a busy loop: `listen()` returns at once when nothing
is subscribed), then what Redis lost is rebuilt: leases, open games, the waiting room of the
participants connected here. /healthz says `degraded` meanwhile (`redis_down_since`).

Healing (issue 43): a worker subscribed again says so on the channel `back`, and every owner then
sends the full state to the players of its games, so a worker that came back last still gets
them; Redis losing its keys while it stays up (FLUSHALL) is noticed by the renewal (the worker's
`mark` gone) and rebuilt the same way; a player marked local-only is re-checked every few seconds; and
a watchdog sends a player waiting in a game (not their turn) the full state when nothing reached
them for longer than a reply is expected to take."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

log = logging.getLogger("turinglab.cluster")

LEASE_MS = 4000  # a dead worker's games are taken over after this long
RENEW_S = 1.0  # leases, the matchmaker lock and the worker's heartbeat are renewed this often
RECONNECT_MAX_S = 5.0  # the longest wait between tries to reach Redis again
HEAL_S = 30.0  # after a rebuild, how long joins ask the store too (the other workers' back-off and rebuild)
RECHECK_EVERY = 5  # every this many renewals, ask Redis whether a local-only player is listened to elsewhere


async def hold_for_test() -> None:
    """A test hook ($TURINGLAB_TEST_HOLD_START, a folder): the first worker to start goes on; any
    later one says so (a file `held-<pid>`) and waits in its start-up, before it touches the database
    or Redis, for the file `go` (turinglab/server/worker_start.py awaits it first)."""
    import os
    from pathlib import Path

    folder = os.environ.get("TURINGLAB_TEST_HOLD_START")
    if not folder:
        return
    try:
        os.close(os.open(Path(folder) / "first", os.O_CREAT | os.O_EXCL))
        return
    except FileExistsError:
        pass
    (Path(folder) / f"held-{os.getpid()}").touch()
    while not (Path(folder) / "go").exists():
        await asyncio.sleep(0.1)


def expected_reply_s(study: Any, human_timing: Any) -> float:
    """How long a reply is expected to take in this study: the slowest witness timing (AI or human)
    for a 100-character reply with a large random part, after "typing…"; at least 5 s (30 s when the
    study has no delays, a human relay)."""
    timings = [w.timing for w in study.witnesses if getattr(w, "timing", None) is not None]
    timings += [human_timing] if human_timing is not None else []
    if not timings:
        return 30.0
    r = study.rules
    longest = 0.0
    for t in timings:
        d = t.base_s + 100 * t.s_per_char + 3 * t.gamma_shape * t.gamma_scale
        longest = max(longest, d if t.max_s is None else min(d, t.max_s))
    return max(5.0, longest + r.typing_min_s + r.typing_jitter_s)


class RedisOutage:
    """Mixin of `ClusterHub`: the relay's listener and its recovery from a lost Redis."""

    async def _listen(self) -> None:
        while True:
            try:
                async for msg in self.pubsub.listen():
                    if msg["type"] != "message":
                        continue
                    ch = msg["channel"][len(self.prefix) + 1:]
                    if ch == "wake":
                        self.wake.set()
                    elif ch == "back":
                        self._worker_back(msg["data"])
                    elif ch.startswith("p:"):
                        self._to_local(ch[2:], msg["data"])
                    else:
                        self._from_worker(json.loads(msg["data"]))
                # listen() returns at once when nothing is subscribed: never loop on it
                raise ConnectionError("the Redis subscription ended")
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis went away: reconnect when it is back
                if self.redis_down_since is None:
                    self.redis_down_since = time.monotonic()
                    log.warning("worker %s: Redis lost (%s: %s); my games go on, reconnecting", self.me,
                                type(exc).__name__, exc)
            await self._reconnect()

    async def _reconnect(self) -> None:
        """Subscribe again once Redis answers (waits of 0.5 s doubling to 5 s), then rebuild what
        Redis lost: leases, open games, the waiting room of the participants connected here."""
        wait = 0.5
        while True:
            await asyncio.sleep(wait)
            ps = self.r.pubsub()
            try:
                await asyncio.wait_for(ps.subscribe(*self._channels()), 5)
                await asyncio.wait_for(self.r.ping(), 5)  # a subscribe may pass on a half-open connection
                await asyncio.wait_for(ps.ping(), 5)
                break
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - still away
                with contextlib.suppress(Exception):
                    await ps.aclose()
                wait = min(RECONNECT_MAX_S, wait * 2)
        old, self.pubsub = self.pubsub, ps
        with contextlib.suppress(Exception):
            await old.aclose()
        with contextlib.suppress(Exception):  # the pool's connections to the lost server are stale
            await self.r.connection_pool.disconnect(inuse_connections=False)
        try:
            await self._rebuild()
        except Exception:  # noqa: BLE001 - the periodic loops finish it
            log.exception("worker %s: rebuilding after Redis came back failed", self.me)
        took = time.monotonic() - (self.redis_down_since or time.monotonic())
        self.redis_down_since = None
        log.warning("worker %s: Redis is back after %.1f s: subscribed again, leases and room rebuilt", self.me, took)

    def _channels(self) -> list[str]:
        """What a worker listens to: its own channel, the matchmaker's wake, the workers coming back,
        and the players connected here."""
        return [self.k(f"w:{self.me}"), self.k("wake"), self.k("back"),
                *(self.k(f"p:{p}") for p in self.conns if self.conns[p])]

    async def _seed(self) -> None:
        """The tallies kept in Redis, from memory, when Redis has none (a first start, a full restart,
        or Redis lost its keys); `played_init` marks that they are there."""
        if await self.r.set(self.k("played_init"), "1", nx=True):
            if self.played:
                await self.r.hset(self.k("played"), mapping=self.played)
            if self.room.interrogated:
                await self.r.hset(self.k("interrogated"), mapping=self.room.interrogated)

    async def _keys_lost(self) -> None:
        """Redis answers but lost its keys (FLUSHALL, a restart between two renewals): rebuilt as
        after an outage, while the subscriptions, which a flush keeps, go on."""
        log.warning("worker %s: Redis lost its keys; rebuilding leases, players' games and the room", self.me)
        await self._seed()
        await self._rebuild()

    def _worker_back(self, who: str) -> None:
        """Another worker listens again (after an outage): the players of my games get the full state
        from me again, wherever they are connected."""
        if who == self.me:
            return
        self.local_only.clear()
        mine = {pid for s in list(self.live.values()) for pid in s.participants()}
        if mine:
            asyncio.create_task(self._states_to(mine))

    async def _states_to(self, pids: set[str]) -> None:
        for pid in pids:
            try:
                await self.send_state(pid)
            except Exception:  # noqa: BLE001 - Redis away again: the next "back" brings it
                return

    async def _recheck_local_only(self) -> None:
        """A player marked local-only (their frames published to nobody) who is listened to on
        another worker now: published to again, from the full state."""
        pids = list(self.local_only)
        if not pids:
            return
        counts = dict(await self.r.pubsub_numsub(*(self.k(f"p:{p}") for p in pids)))
        for pid in pids:
            if int(counts.get(self.k(f"p:{pid}"), 0)) > (1 if self.conns.get(pid) else 0):
                self.local_only.discard(pid)
                await self.send_state(pid)

    def _sent(self, pid: str, data: str) -> None:
        """Note that a frame reached the player's connections here, and whether they now wait for
        something (for the watchdog): in a game and not their turn (they asked, or wait to be asked),
        or a witness waiting for the verdict. Never while they may type: a state redraws the page."""
        self.last_out[pid] = time.monotonic()
        if data.startswith('{"type": "state"'):
            st = json.loads(data)
            g = st.get("game") or {}
            if (st["phase"] == "game" and g and not any(g["your_turn"].values())) or (
                    st["phase"] == "verdict" and g.get("role") == "witness"):
                self.in_game.add(pid)
            else:
                self.in_game.discard(pid)
        elif data.startswith('{"type": "ack"'):  # they sent a message: now they wait for its reply
            self.in_game.add(pid)
        elif data.startswith('{"type": "message"') and '"from": "them"' in data:  # their turn (JSON text escapes quotes)
            self.in_game.discard(pid)

    async def _watchdog(self) -> None:
        """Every player connected here who waits for something in a game gets the full state when
        nothing reached them for longer than a reply is expected to take (a relay lost in an outage
        heals by itself)."""
        while True:
            await asyncio.sleep(1.0)
            now = time.monotonic()
            for pid in list(self.in_game):
                if not self.conns.get(pid):
                    self.in_game.discard(pid)
                    self.last_out.pop(pid, None)
                elif now - self.last_out.get(pid, now) > self.reply_wait_s:
                    self.last_out[pid] = now
                    asyncio.create_task(self._states_to({pid}))

    def routes_uncertain(self) -> bool:
        """Redis is away, or came back empty lately: a player's game may be missing from it."""
        return self.redis_down_since is not None or time.monotonic() < self.heal_until

    async def _rebuild(self) -> None:
        self.heal_until = time.monotonic() + HEAL_S
        await self.r.set(self.k(f"alive:{self.me}"), "1", px=LEASE_MS)
        await self.r.set(self.k(f"mark:{self.me}"), "1", ex=86400)
        await self._seed()
        # the verdicts list may have been lost: read it from where it now ends, at most
        self.verdict_cursor = min(self.verdict_cursor, await self.r.llen(self.k("verdicts")))
        self.obs_cursor = min(self.obs_cursor, await self.r.llen(self.k("cap:obs")))  # the timings alike
        gids = list(self.live)
        if gids:  # my leases first, before any worker puts my games up for takeover
            for gid in await self.renew(keys=[self.k(f"lease:{g}") for g in gids],
                                        args=[self.me, LEASE_MS, self.k("games"), *gids, self.prefix]):
                self._drop(gid)
            for gid in gids:
                s = self.live.get(gid)
                for pid in s.participants() if s is not None else ():
                    await self.r.set(self.k(f"game:{pid}"), gid)
        ended = list(self.unsynced.values())
        for s in ended:  # games that ended here meanwhile: tallies, played counts, their players' game
            await self._record_end(s, late=True)
            self.unsynced.pop(s.id, None)
        await asyncio.sleep(1.5 * RENEW_S)  # every live owner has renewed its leases by now
        await self._adopt_open()  # open games nobody holds (their owner died meanwhile) resume
        for pid, entry in list(self.waiting_here.items()):  # the waiting room, as far as it waits here
            if (not self.conns.get(pid) or pid in self.session_of or await self.r.exists(self.k(f"game:{pid}"))
                    or await asyncio.to_thread(self.store.open_game_of, self.study_id, pid, json.loads(entry)[0])):
                self.waiting_here.pop(pid, None)  # matched since it joined, maybe on a worker not yet rebuilt
                continue
            await self.r.hsetnx(self.k("room"), pid, entry)
        self.heal_until = time.monotonic() + HEAL_S
        self._wake_leader()
        # every state again: the players of my games wherever they are connected (what they sent
        # meanwhile to another worker was refused; the browser resends on a state), the reveal of
        # the games that ended here meanwhile, and everyone connected here
        for s in ended:
            for pid in s.participants():
                if self.session_of.get(pid) is s:
                    await self.send(pid, self.state_frame(pid))
        mine = {pid for s in list(self.live.values()) for pid in s.participants()}
        self.local_only.clear()  # re-checked: publishing finds out again who listens elsewhere
        for pid in mine | {p for p in self.conns if self.conns[p]}:
            await self.send_state(pid)
        await self.r.publish(self.k("back"), self.me)  # the owners send their players' states again
