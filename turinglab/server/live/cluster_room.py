"""The cluster's shared waiting room (cluster.py): a join into the Redis hash, the matchmaker run
by one worker at a time (the holder of the `mm` lock), each match claimed by one Lua script
(cluster_redis.py) and started by the worker of its interrogator."""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from typing import Any

from turinglab.matchmaking import Match
from turinglab.server.live import protocol as proto
from turinglab.server.live.cluster_capacity import PLACE_MS, wall_ms
from turinglab.server.live.cluster_outage import LEASE_MS, RENEW_S
from turinglab.server.live.cluster_redis import ENDED_MS, waiting_from_json, waiting_to_json, match_to_json

log = logging.getLogger("turinglab.cluster")


class SharedRoom:
    """Mixin of `ClusterHub`: the waiting room over Redis and the start of the games it matches."""

    async def _drop_if_gone(self, pid: str) -> None:
        await asyncio.sleep(self.waiting_grace_s)
        if self.conns.get(pid) or await self.r.get(self.k(f"at:{pid}")) not in (None, self.me):
            return
        if await self.r.hdel(self.k("room"), pid):
            log.info("participant %s left the waiting room (no connection)", pid)
            await self.send_waiting_counts()

    async def _unqueue(self, pid: str) -> None:
        if await self.r.hdel(self.k("room"), pid):
            await self.send_waiting_counts()

    async def send_waiting_counts(self) -> None:
        if self.study.format == "three-player":
            for pid in list(await self.r.hkeys(self.k("room"))):
                await self.send(pid, await self._shared_state(pid))

    async def _join(self, pid: str) -> None:
        p = await self.person(pid)
        if p is None:
            return
        if not p.consented:  # consent may have been given on another worker
            info = await asyncio.to_thread(self.store.get_participant, pid)
            p.consented = info.consent_ms is not None
        if not await self._may_join(p):
            return
        if self.routes_uncertain() and await asyncio.to_thread(self.store.open_game_of, self.study_id, pid):
            # its game's route was lost with Redis and is not rebuilt yet: never a second game at once;
            # its owner sends the state when it has rebuilt the routes (the store is asked only then)
            await self.send(pid, proto.error("store_unavailable", proto.TEXTS["store_unavailable"], None))
            return
        self.routes.pop(pid, None)
        async with self.r.pipeline(transaction=False) as pipe:
            pipe.delete(self.k(f"game:{pid}"), self.k(f"alone:{pid}")).lrange(self.k("hwaits"), 0, -1)
            pipe.hget(self.k("played"), pid)
            _, waits, played = await pipe.execute()
        self.room.human_waits.clear()
        self.room.human_waits.extend(json.loads(w) for w in waits)
        self.room.waiting.pop(pid, None)
        entry = self.room.join(pid, self.now())
        p.joined_ms = entry.joined_ms
        self.room.waiting.pop(pid, None)  # the shared room is the only room
        fresh = await self.r.hsetnx(self.k("room"), pid, waiting_to_json(entry))
        if fresh:
            self.waiting_here[pid] = waiting_to_json(entry)
        if fresh and self.study.format == "three-player" and self.study.allocation.lone_then == "end":
            task = asyncio.create_task(self._lone_timeout_shared(pid, waiting_to_json(entry)))
            self._lone_tasks.add(task)
            task.add_done_callback(self._lone_tasks.discard)
        self._wake_leader()
        known = (waiting_to_json(entry), played, 0, None) if fresh else None  # in the room, no game, not alone
        await self.send(pid, await self._shared_state(pid, known))
        await self.send_waiting_counts()

    def _wake_leader(self) -> None:
        """Tell the matchmaker that the room changed. Many joins at once make one publish at a time
        (one more after it, if joins came meanwhile): the leader polls the whole room anyway."""
        self.wake.set()
        if self._waking is not None:
            self._wake_again = True
            return
        self._waking = asyncio.create_task(self._publish_wake())

    async def _publish_wake(self) -> None:
        try:
            while True:
                self._wake_again = False
                try:
                    await self.r.publish(self.k("wake"), "1")
                except Exception:  # noqa: BLE001 - Redis away: the leader polls every RENEW_S anyway
                    log.warning("worker %s: could not wake the matchmaker (Redis)", self.me)
                if not self._wake_again:
                    return
        finally:
            self._waking = None

    async def _lone_timeout_shared(self, pid: str, entry: str) -> None:
        await asyncio.sleep(self.study.allocation.lone_wait_s)
        if await self.r.hget(self.k("room"), pid) != entry:
            return
        if await self.r.hdel(self.k("room"), pid):
            await self.r.set(self.k(f"alone:{pid}"), "1", ex=86400)
            log.info("participant %s waited alone: their wait ended", pid)
            await self.send_state(pid)

    async def _matchmaker(self) -> None:
        while self.pubsub is None:  # `start` has not run yet
            await asyncio.sleep(0.05)
        while True:
            self.wake.clear()
            timeout = RENEW_S
            try:
                self.leader = bool(await self.hold(keys=[self.k("mm")], args=[self.me, round(3 * RENEW_S * 1000)]))
                await self._tail_verdicts()
                if self.leader:
                    nxt = await self._poll_shared()
                    if nxt is not None:
                        timeout = min(timeout, max(0.0, (nxt - self.now()) / 1000))
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis away: try again
                log.exception("worker %s: matchmaking failed", self.me)
            try:
                await asyncio.wait_for(self.wake.wait(), timeout)
            except TimeoutError:
                pass

    async def _poll_shared(self) -> int | None:
        entries = await self.r.hgetall(self.k("room"))
        waits = await self.r.lrange(self.k("hwaits"), 0, -1)
        rot = await self.r.hgetall(self.k("interrogated")) if self.study.format == "three-player" else None
        await self._cap_counts()  # the cluster's games in progress per limited witness
        room = self.room  # from here to the claims nothing awaits: the pure rules see one snapshot
        room.retry()  # stalled participants are tried at every poll: places free up on any worker
        room.waiting = {pid: waiting_from_json(pid, raw) for pid, raw in entries.items()}
        room.human_waits.clear()
        room.human_waits.extend(json.loads(w) for w in waits)
        if rot is not None:
            room.interrogated = {k: int(v) for k, v in rot.items()}
        matches = room.poll(self.now())
        nxt = room.next_wakeup()
        room.waiting = {}
        if matches:
            # each game goes to its interrogator's worker, if alive; the claims run side by side
            at = await self.r.mget([self.k(f"at:{m.interrogator}") for m in matches])
            workers = sorted({w for w in at if w})
            alive = dict(zip(workers, await self.r.mget([self.k(f"alive:{w}") for w in workers]))) if workers else {}
            owners = [w if w and alive.get(w) else self.me for w in at]
            await self._claim(matches, entries, owners)
            await self.send_waiting_counts()
        return nxt

    async def _claim(self, matches: list[Match], entries: dict[str, str], owners: list[str]) -> None:
        """Claim every match in one round trip (each by the CLAIM script), then send each owning
        worker all its new games in one message."""
        gids = ["g" + secrets.token_hex(8) for _ in matches]
        async with self.r.pipeline(transaction=False) as pipe:
            for m, gid, owner in zip(matches, gids, owners):
                pids = list(m.waited_ms)
                hw = json.dumps(list(m.waited_ms.values())) if m.reason == "human" else ""
                inter = m.interrogator if m.format == "three-player" else ""
                args: list[Any] = [gid, owner, LEASE_MS, hw, self.study.allocation.wait_match_window, inter,
                                   match_to_json(m), len(pids)]
                for pid in pids:
                    args += [pid, entries[pid]]
                place, limit = self.claim_place(m)
                args += [self.prefix, limit, wall_ms() + PLACE_MS, wall_ms()]
                keys = [self.k(x) for x in ("room", "games", f"lease:{gid}", "hwaits", "interrogated", f"match:{gid}")]
                keys.append(place)
                await self.claim(keys=keys, args=args, client=pipe)
            claimed = await pipe.execute()
        per_owner: dict[str, list[tuple[str, Match]]] = {}
        for m, gid, owner, ok in zip(matches, gids, owners, claimed):
            if ok == 1:
                log.info("worker %s: game %s for worker %s: %s", self.me, gid, owner, " ".join(m.participants))
                per_owner.setdefault(owner, []).append((gid, m))
            elif ok == -1:
                log.info("a match was not claimed: its witness has no place left (another matchmaker took it)")
                self.wake.set()
            else:
                log.info("a match was not claimed (someone left meanwhile); the room is polled again")
                self.wake.set()
        for owner, games in per_owner.items():
            if owner != self.me:
                msg = {"op": "start", "games": [[gid, match_to_json(m)] for gid, m in games]}
                if await self._to_owner(owner, msg):
                    continue
                for gid, _ in games:  # the owner died meanwhile: its games start here
                    await self.r.set(self.k(f"lease:{gid}"), self.me, px=LEASE_MS)
            asyncio.create_task(self._start_all(games))

    async def _start_all(self, games: list[tuple[str, Match]]) -> None:
        """Start the games leased to me, their players loaded from the store in one call."""
        for gid, m in games:
            self.pending[gid] = m  # renewed from now on
        try:
            await self.people_of(pid for _, m in games for pid in m.participants)
        except Exception:  # noqa: BLE001 - each game's start loads what it needs again
            log.exception("worker %s: loading the players of %d new games failed", self.me, len(games))
        for gid, m in games:
            asyncio.create_task(self._start_leased(gid, m))

    async def _start_leased(self, gid: str, m: Match) -> None:
        self.pending[gid] = m
        try:
            await self._start_in_turn(m, gid)
        except BaseException as exc:  # noqa: BLE001 - one bad start must not stop the worker
            if getattr(self.writer, "stopped", False):  # shutting down: its players start again elsewhere
                log.warning("game %s was not started: this worker is stopping", gid)
            else:
                log.error("starting game %s failed", gid, exc_info=exc)
            await self._start_failed(m, gid, await self._forget(gid, m.participants))
        finally:
            self.pending.pop(gid, None)

    async def _forget(self, gid: str, pids: list[str]) -> list[str]:
        """A game that never started: out of the games and its lease released, marked ended in the
        same step (as at game over), so a renewal already under way does not lease it again and a
        later scan take it over a second time. Returns the players still on it (not moved on)."""
        async with self.r.pipeline(transaction=True) as pipe:
            pipe.srem(self.k("games"), gid)
            for codename in self.room.capacity.estimates:  # its place, if it took one
                pipe.zrem(self.place_key(codename), gid)
            pipe.set(self.k(f"ended:{gid}"), "1", px=ENDED_MS)
            await self.release(keys=[self.k(f"lease:{gid}")], args=[self.me], client=pipe)
            await pipe.execute()
        still = []
        for pid in pids:
            if await self.r.get(self.k(f"game:{pid}")) == gid:
                await self.r.delete(self.k(f"game:{pid}"))
                still.append(pid)
        return still

    async def _send_fresh_state(self, pid: str) -> None:
        await self.send(pid, await self._shared_state(pid))
