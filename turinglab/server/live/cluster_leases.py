"""Who runs each game of the cluster (cluster.py): the leases an owner renews every second, the
takeover of a dead worker's games from the store, and a game's end in Redis (tallies, played
counts, its lease released), also when it ended while Redis was away."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from turinglab.game.events import judged_human
from turinglab.server.live.cluster_outage import LEASE_MS, RECHECK_EVERY, RENEW_S
from turinglab.server.live.cluster_redis import ENDED_MS, match_from_json
from turinglab.server.live.resumed import ResumedSession
from turinglab.server.live.session import GameSession
from turinglab.store.api import UnknownId

log = logging.getLogger("turinglab.cluster")

ADOPT_EVERY = 30  # every this many renewals, look in the store for open games Redis does not know


class Leases:
    """Mixin of `ClusterHub`: leases, takeover, and the Redis side of a game's end."""

    async def _adopt_open(self) -> None:
        """Games open in the store that Redis does not know (Redis lost, or a full restart) are
        put up for takeover, so they resume from the log instead of hanging. Only their ids are
        read (every ADOPT_EVERY renewals), then each candidate again: it may have ended meanwhile."""
        ids = await asyncio.to_thread(self.store.open_game_ids, self.study_id)
        known = await self.r.smembers(self.k("games"))  # after the store: a game started meanwhile is known
        for gid in ids:
            if gid in known or await self.r.exists(self.k(f"lease:{gid}")):
                continue
            g = await asyncio.to_thread(self.store.game, gid)
            if g.status == "ended":  # ended (and left Redis) since the store was read
                continue
            await self.r.sadd(self.k("games"), g.id)
            for pid in {g.interrogator_id, *(i.participant_id for i in g.seats.values())} - {None}:
                await self.r.set(self.k(f"game:{pid}"), g.id)

    async def game_over(self, s: GameSession) -> None:
        """The game ended here: its Redis bookkeeping (tallies, played counts, lease), then everyone's
        reveal. With Redis away the bookkeeping waits for `_rebuild`; the reveal goes out at once to
        the players connected here, and to the others when Redis is back."""
        self.live.pop(s.id, None)
        self.finished += 1
        await self.admin.ended(s)
        if s.game.verdict is not None:
            self.counted.add(s.id)
        try:
            await self._record_end(s)
        except Exception as exc:  # noqa: BLE001 - Redis away: the game has ended in the store all the same
            log.warning("worker %s: game %s ended while Redis is away (%s); its bookkeeping waits for Redis",
                        self.me, s.id, type(exc).__name__)
            self.unsynced[s.id] = s
            for pid in s.participants():
                self._set_played(pid, self.played.get(pid, 0) + 1)
        for pid in s.participants():
            if self.session_of.get(pid) is s:
                await self.send(pid, self.state_frame(pid))

    async def _record_end(self, s: GameSession, late: bool = False) -> None:
        """One round trip, all or nothing. `late`: after a Redis outage, when the game's players
        may be known to Redis no more: their game is set again (unless they moved on meanwhile)."""
        v = s.game.verdict
        pids = s.participants()
        async with self.r.pipeline(transaction=True) as pipe:
            if v is not None:
                for name, seat in s.seats.items():
                    if seat.identity.kind == "ai":
                        rec = [s.id, seat.identity.witness, judged_human(s.game.format, v["choice"], name),
                               v["confidence"]]
                        pipe.rpush(self.k("verdicts"), json.dumps(rec))
            first = len(pipe.command_stack)
            for pid in pids:
                pipe.hincrby(self.k("played"), pid, 1)
            pipe.srem(self.k("games"), s.id)
            for seat in s.seats.values():  # its witness's place comes free
                if seat.identity.kind == "ai" and seat.identity.witness in self.room.capacity.estimates:
                    pipe.zrem(self.place_key(seat.identity.witness), s.id)
            # who ended it: a renewal already under way skips it; a worker asked for a player's state forwards here
            pipe.set(self.k(f"ended:{s.id}"), self.me, px=ENDED_MS)
            await self.release(keys=[self.k(f"lease:{s.id}")], args=[self.me], client=pipe)
            pipe.delete(self.k(f"match:{s.id}"))
            if late:
                for pid in pids:
                    pipe.set(self.k(f"game:{pid}"), s.id, nx=True)
            out = await pipe.execute()
        for pid, n in zip(pids, out[first:first + len(pids)]):
            self._set_played(pid, max(int(n), self.played.get(pid, 0)) if late else int(n))

    async def _sync_ended(self) -> None:
        """The games that ended here while Redis was away: their bookkeeping, then their reveal."""
        for s in list(self.unsynced.values()):
            await self._record_end(s, late=True)
            self.unsynced.pop(s.id, None)
            for pid in s.participants():
                if self.session_of.get(pid) is s:
                    await self.send(pid, self.state_frame(pid))

    def _set_played(self, pid: str, n: int) -> None:
        self.played[pid] = n
        if pid in self.people:
            self.people[pid].games_played = n

    async def _tail_verdicts(self) -> None:
        """Add the other workers' verdicts to this worker's Thompson tallies."""
        new = await self.r.lrange(self.k("verdicts"), self.verdict_cursor, -1)
        self.verdict_cursor += len(new)
        for raw in new:
            gid, witness, judged, conf = json.loads(raw)
            if gid in self.counted:
                continue
            self.room.stats.record(witness, judged, conf, self.confidence_scale)
        self.counted.update(json.loads(raw)[0] for raw in new)

    async def _renew_loop(self) -> None:
        n = 0
        while True:
            await asyncio.sleep(RENEW_S)
            n += 1
            try:
                async with self.r.pipeline(transaction=False) as pipe:  # my mark, set at join: gone if Redis lost its keys
                    pipe.set(self.k(f"alive:{self.me}"), "1", px=LEASE_MS)
                    pipe.set(self.k(f"mark:{self.me}"), "1", ex=86400, get=True)
                    _, mark = await pipe.execute()
                if mark is None and self.redis_down_since is None:
                    await self._keys_lost()  # Redis lost its keys while it stayed up (FLUSHALL)
                if n % RECHECK_EVERY == 0 and self.redis_down_since is None:
                    await self._recheck_local_only()
                if self.unsynced and self.redis_down_since is None:  # left over by a rebuild that failed
                    await self._sync_ended()
                if self.redis_down_since is None:  # places renewed, timings and counts shared
                    await self._cap_sync()
                gids = list(self.live) + list(self.pending)
                if not gids:
                    continue
                lost = await self.renew(keys=[self.k(f"lease:{g}") for g in gids],
                                        args=[self.me, LEASE_MS, self.k("games"), *gids, self.prefix])
                for gid in lost:
                    self._drop(gid)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis away: the games go on here; renewed when it is back
                log.exception("worker %s: renewing leases failed", self.me)

    def _drop(self, gid: str) -> None:
        """Another worker holds this game's lease now: stop running it here."""
        s = self.live.pop(gid, None)
        if s is None:
            return
        log.warning("worker %s: lost the lease of game %s; it runs elsewhere now", self.me, gid)
        for pid in s.participants():
            if self.session_of.get(pid) is s:
                self.session_of.pop(pid, None)
        for t in list(s.tasks):
            t.cancel()

    async def _takeover_loop(self) -> None:
        n = 0
        while True:
            await asyncio.sleep(RENEW_S)
            n += 1
            if self.redis_down_since is not None:  # until the rebuild is done: every live owner renews first,
                continue  # so a lease Redis lost meanwhile is taken back by its owner, not taken over
            try:
                if n % ADOPT_EVERY == 0:  # Redis lost meanwhile: open games nobody holds come back from the log
                    await self._adopt_open()
                # one script in Redis: no list of every game crosses the wire each second
                for gid in await self.take(keys=[self.k("games")], args=[self.me, LEASE_MS, self.prefix]):
                    if gid not in self.live and gid not in self.pending:  # else: my own lease, back
                        asyncio.create_task(self._take_over(gid))
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001
                log.exception("worker %s: the takeover scan failed", self.me)

    async def _take_over(self, gid: str) -> None:
        self.pending[gid] = None  # type: ignore[assignment] - renewed meanwhile
        try:
            try:
                info = await asyncio.to_thread(self.store.game, gid)
            except UnknownId:  # its owner died before storing it: its players start again
                raw = await self.r.get(self.k(f"match:{gid}"))
                m = match_from_json(raw) if raw else None
                log.warning("worker %s: game %s was never stored (its owner died first); its players (%s) "
                            "start again", self.me, gid, ", ".join(m.participants) if m else "unknown")
                still = await self._forget(gid, m.participants if m else [])
                if m is not None:
                    await self._start_failed(m, gid, still)
                return
            events = await asyncio.to_thread(self.store.events, gid)
            await self._resume(info, events)
        except Exception:  # noqa: BLE001 - leave it for another try
            log.exception("worker %s: taking over game %s failed", self.me, gid)
            await self.release(keys=[self.k(f"lease:{gid}")], args=[self.me])
        finally:
            self.pending.pop(gid, None)

    async def _resume(self, info: Any, events: list) -> None:
        """Run a stored game here from its log: timers, held replies and AI replies in flight."""
        seats = {name: self._seat(ident) for name, ident in info.seats.items()}
        s = await ResumedSession.restore(self, info, seats, events, int(self.seeds.integers(2**31)))
        for pid in s.participants():
            await self.person(pid)
            self.session_of[pid] = s
            await self.r.set(self.k(f"game:{pid}"), s.id)
        self.live[s.id] = s
        log.warning("worker %s: took over game %s (%d events, %s)", self.me, s.id, len(events), s.game.state)
        if s.game.state == "ended":
            await s.finish()
            return
        await s.resume()
        for pid in s.participants():
            await self.send_state(pid)
