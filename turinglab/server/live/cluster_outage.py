"""A cluster worker through a Redis outage: its games go on from memory and the store; the
subscription is restored with backoff (never a busy loop: `listen()` returns at once when nothing
is subscribed), then what Redis lost is rebuilt: leases, open games, the waiting room of the
participants connected here. /healthz says `degraded` meanwhile (`redis_down_since`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time

log = logging.getLogger("turinglab.cluster")

LEASE_MS = 4000  # a dead worker's games are taken over after this long
RENEW_S = 1.0  # leases, the matchmaker lock and the worker's heartbeat are renewed this often
RECONNECT_MAX_S = 5.0  # the longest wait between tries to reach Redis again


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
                await asyncio.wait_for(ps.subscribe(self.k(f"w:{self.me}"), self.k("wake"),
                                                    *(self.k(f"p:{p}") for p in self.conns if self.conns[p])), 5)
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

    async def _rebuild(self) -> None:
        await self.r.set(self.k(f"alive:{self.me}"), "1", px=LEASE_MS)
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
            if not self.conns.get(pid) or pid in self.session_of or await self.r.exists(self.k(f"game:{pid}")):
                self.waiting_here.pop(pid, None)
                continue
            await self.r.hsetnx(self.k("room"), pid, entry)
        self._wake_leader()
        # every state again: the players of my games wherever they are connected (what they sent
        # meanwhile to another worker was refused; the browser resends on a state), the reveal of
        # the games that ended here meanwhile, and everyone connected here
        for s in ended:
            for pid in s.participants():
                if self.session_of.get(pid) is s:
                    await self.send(pid, self.state_frame(pid))
        mine = {pid for s in list(self.live.values()) for pid in s.participants()}
        for pid in mine | {p for p in self.conns if self.conns[p]}:
            await self.send_state(pid)
