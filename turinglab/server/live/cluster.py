"""Several workers serving one study: Redis for the waiting room, relay and leases; the store
(PostgreSQL) for the games, as in one process.

- Every live game has one owning worker, which holds the lease `lease:<game>` (SET NX PX,
  renewed every second) and runs the game's `GameSession` exactly as one process does (clock,
  AI witnesses, writes).
- A participant connected to another worker: their frames go to the owner over the owner's
  channel `w:<worker>`; everything sent to a participant is published on `p:<participant>`,
  which the workers holding their connections subscribe to.
- The waiting room is one Redis hash. One worker at a time (the holder of the `mm` lock) runs
  the pure `WaitingRoom` rules over it; a match is claimed by one Lua script that checks every
  matched entry is unchanged, so two workers never claim the same person.
- A worker that dies stops renewing its leases; after `LEASE_MS` another worker takes each
  lease, rebuilds the game from the store (`Game.replay`) and resumes its timers and AI
  replies. The players' browsers reconnect to any worker and resend what was not acknowledged.
- Thompson tallies: each worker rebuilds them from the store at start and follows the
  verdicts of the other workers through the list `verdicts`.

Keys live under a prefix (default `turinglab:<study name>`). `ClusterHub` replaces `Hub` when
the app is given a Redis URL; without one nothing here is used.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from typing import Any

from starlette.websockets import WebSocket

from turinglab.game.events import judged_human
from turinglab.matchmaking import Match
from turinglab.server.live import protocol as proto
from turinglab.server.live.cluster_redis import (CLAIM, ENDED_MS, HOLD, RELEASE, RENEW, TAKE, match_from_json,
                                                  match_to_json, waiting_from_json, waiting_to_json)
from turinglab.server.live.cluster_outage import LEASE_MS, RENEW_S, RedisOutage
from turinglab.server.live.hub import Hub, lone_frame
from turinglab.server.live.resumed import ResumedSession
from turinglab.server.live.session import GameSession
from turinglab.store.api import UnknownId

log = logging.getLogger("turinglab.cluster")

ADOPT_EVERY = 30  # every this many renewals, look in the store for open games Redis does not know
GAME_FRAMES = {"message", "paste", "verdict", "belief", "report"}

class ClusterHub(RedisOutage, Hub):
    """A `Hub` whose waiting room, relay and game ownership are shared through Redis."""

    def __init__(self, *args: Any, redis_url: str, prefix: str, **kw: Any) -> None:
        import redis.asyncio as aioredis

        self.me = "w" + secrets.token_hex(6)
        self.prefix = prefix
        # a roomy pool: with 64 connections, a burst of joins and starts left some sends waiting
        # seconds for a connection (the stragglers of the start burst)
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.retry import Retry

        # one retry on a connection error: after a Redis restart a pooled connection is stale once
        pool = aioredis.BlockingConnectionPool.from_url(redis_url, decode_responses=True, max_connections=512,
                                                         timeout=20, retry=Retry(NoBackoff(), 1),
                                                         retry_on_error=[RedisConnectionError])
        self.r = aioredis.Redis(connection_pool=pool)
        self.claim = self.r.register_script(CLAIM)
        self.renew = self.r.register_script(RENEW)
        self.hold = self.r.register_script(HOLD)
        self.release = self.r.register_script(RELEASE)
        self.take = self.r.register_script(TAKE)
        self.pubsub = None
        self.leader = False
        self.verdict_cursor = 0
        self.counted: set[str] = set()  # games whose verdict is in the tallies
        self.pending: dict[str, Match] = {}  # games leased to me, not yet started
        self.local_only: set[str] = set()  # players of my games connected to no other worker
        self.plocks: dict[str, asyncio.Lock] = {}  # relayed frames of one participant run in order
        self.routes: dict[str, str] = {}  # participant -> the worker that ran their last game frame
        self._waking: asyncio.Task | None = None  # a publish of "wake" in flight
        self._wake_again = False
        self.redis_down_since: float | None = None  # time.monotonic() when the subscription failed
        self.waiting_here: dict[str, str] = {}  # participants who joined the room here: their entries
        self.unsynced: dict[str, GameSession] = {}  # games that ended here while Redis was away
        self.bg: list[asyncio.Task] = []
        super().__init__(*args, **kw)
        if self.room.capacity is not None and self.room.capacity.estimates:
            # games at once are counted per process; several workers would each count their own
            log.warning("capacity limits (allocation.capacity) are not enforced with several workers: "
                        "serve local models with one worker, or give the workers API models")
        self.room.capacity = None

    def k(self, name: str) -> str:
        return f"{self.prefix}:{name}"

    # ---- start and stop ------------------------------------------------------------
    def _close_orphans(self) -> None:
        """Open games are not ended here: their owners may be alive; `_adopt_open` below takes
        over the ones nobody holds."""

    def _load_stats(self) -> None:
        super()._load_stats()
        for g in self.store.games(self.study_id):
            if g.verdict is not None:
                self.counted.add(g.id)

    async def start(self) -> None:
        """Connect to Redis, subscribe, and start the background loops (before the first request)."""
        try:
            self.verdict_cursor = max(0, await self.r.llen(self.k("verdicts")) - 10_000)
        except Exception as exc:
            raise RuntimeError(f"Redis is not reachable ({exc}): start redis-server or fix --redis") from None
        if await self.r.set(self.k("played_init"), "1", nx=True):
            if self.played:  # a full restart: the tallies come back from the store
                await self.r.hset(self.k("played"), mapping=self.played)
            if self.room.interrogated:
                await self.r.hset(self.k("interrogated"), mapping=self.room.interrogated)
        self.pubsub = self.r.pubsub()
        await self.pubsub.subscribe(self.k(f"w:{self.me}"), self.k("wake"))
        await self.r.set(self.k(f"alive:{self.me}"), "1", px=LEASE_MS)
        await self._adopt_open()
        self.bg = [asyncio.create_task(self._listen()), asyncio.create_task(self._renew_loop()),
                   asyncio.create_task(self._takeover_loop())]
        log.info("worker %s joined the cluster %s", self.me, self.prefix)

    async def close(self) -> None:
        for t in self.bg:
            t.cancel()
        await super().close()
        try:
            if self.leader:
                await self.release(keys=[self.k("mm")], args=[self.me])
            if self.pubsub is not None:
                await self.pubsub.aclose()
            await self.r.aclose()
            await self.r.connection_pool.disconnect()
        except Exception:  # noqa: BLE001 - Redis gone at shutdown
            pass

    async def redis_ok(self) -> bool:
        """/healthz: does Redis answer (a worker without it can neither match nor relay)? At once
        False while the subscription is being restored."""
        if self.redis_down_since is not None:
            return False
        try:
            return bool(await asyncio.wait_for(self.r.ping(), 1.0))
        except Exception:  # noqa: BLE001
            return False

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

    # ---- relay ---------------------------------------------------------------------
    def _to_local(self, pid: str, data: str) -> None:
        origin, _, frame = data.partition("|")
        if origin == self.me:
            return
        for ws in list(self.conns.get(pid, ())):
            asyncio.create_task(self._ws_send(pid, ws, frame))

    async def _ws_send(self, pid: str, ws: WebSocket, data: str) -> None:
        try:
            await ws.send_text(data)
        except Exception:  # noqa: BLE001 - a closed socket: its handler cleans up
            self.conns.get(pid, {}).pop(ws, None)

    def _from_worker(self, m: dict[str, Any]) -> None:
        op = m["op"]
        if op == "start":
            asyncio.create_task(self._start_all([(gid, match_from_json(raw)) for gid, raw in m["games"]]))
            return
        pid = m["pid"]
        lock = self.plocks.setdefault(pid, asyncio.Lock())
        asyncio.create_task(self._in_order(lock, pid, m))

    async def _in_order(self, lock: asyncio.Lock, pid: str, m: dict[str, Any]) -> None:
        self.local_only.discard(pid)  # another worker has a connection of theirs
        async with lock:
            try:
                if m["op"] == "frame":
                    await self.handle(pid, m["raw"], relayed=True)
                elif m["op"] == "conn":
                    await self._remote_conn(pid, m["up"])
                elif m["op"] == "state":
                    await self.send_state(pid)
            except Exception:  # noqa: BLE001 - one bad frame must not stop the relay
                log.exception("worker %s: a relayed %s of %s failed", self.me, m["op"], pid)

    async def send(self, pid: str | None, frame: dict[str, Any]) -> None:
        if not pid:
            return
        data = json.dumps(frame)
        await self._send_here(pid, data)
        if pid in self.local_only:
            return
        try:
            n = await self.r.publish(self.k(f"p:{pid}"), f"{self.me}|{data}")
        except Exception:  # noqa: BLE001 - Redis away: the players' reconnect brings the state back
            log.warning("worker %s: could not relay a frame to %s (Redis)", self.me, pid)
            return
        # nobody else listens: stop publishing for this player of a game of mine until another worker
        # tells of a connection (a relayed frame or connection; it then gets the full state)
        if n <= (1 if self.conns.get(pid) else 0) and self._owns(pid) is not None:
            self.local_only.add(pid)

    async def _route(self, pid: str) -> tuple[str | None, str | None, bool]:
        """(game id, owning worker, is the game live) of the participant's current game."""
        gid = await self.r.get(self.k(f"game:{pid}"))
        if not gid:
            return None, None, False
        async with self.r.pipeline(transaction=False) as pipe:
            owner, live = await pipe.get(self.k(f"lease:{gid}")).sismember(self.k("games"), gid).execute()
        return gid, owner, bool(live)

    async def _to_owner(self, owner: str, msg: dict[str, Any]) -> bool:
        return bool(await self.r.publish(self.k(f"w:{owner}"), json.dumps(msg)))

    def _owns(self, pid: str) -> GameSession | None:
        s = self.session_of.get(pid)
        return s if s is not None and s.id in self.live else None

    # ---- connections ---------------------------------------------------------------
    async def connect(self, pid: str, ws: WebSocket) -> None:
        first = await self._add_connection(pid, ws)
        try:
            await self._connected(pid, ws, first)
        except Exception:  # Redis away and the game is not mine: the socket closes (no stale entry stays)
            if self._forget_socket(pid, ws):
                with contextlib.suppress(Exception):
                    await self.pubsub.unsubscribe(self.k(f"p:{pid}"))
            raise

    async def _connected(self, pid: str, ws: WebSocket, first: bool) -> None:
        try:
            if first:
                await self.pubsub.subscribe(self.k(f"p:{pid}"))
            await self.r.set(self.k(f"at:{pid}"), self.me, ex=86400)
        except Exception:  # noqa: BLE001 - Redis away: my own games go on; subscribed again when it is back
            if self._owns(pid) is None:
                raise
        s = self._owns(pid)
        if s is not None:
            await ws.send_text(json.dumps(self.state_frame(pid)))
            if first and s.game.connected.get(s.seat_of[pid]) is False:
                await s.on_connection(pid, True)
            return
        gid, owner, live = await self._route(pid)
        if owner and owner != self.me and await self._to_owner(owner, {"op": "conn", "pid": pid, "up": True}):
            return
        await ws.send_text(json.dumps(await self._shared_state(pid)))

    async def _remote_conn(self, pid: str, up: bool) -> None:
        s = self._owns(pid)
        if s is None:
            await self.send(pid, await self._shared_state(pid))
            return
        if up:
            await self.send_state(pid)
        if self.conns.get(pid):  # still connected here
            return
        if up == (s.game.connected.get(s.seat_of[pid]) is False):
            await s.on_connection(pid, up)

    async def disconnect(self, pid: str, ws: WebSocket) -> None:
        if not self._forget_socket(pid, ws):
            return
        try:
            await self.pubsub.unsubscribe(self.k(f"p:{pid}"))
        except Exception:  # noqa: BLE001
            pass
        s = self._owns(pid)
        if s is not None:
            await s.on_connection(pid, False)
        else:
            try:
                gid, owner, live = await self._route(pid)
                if owner and owner != self.me:
                    await self._to_owner(owner, {"op": "conn", "pid": pid, "up": False})
                elif await self.r.hexists(self.k("room"), pid):
                    asyncio.create_task(self._drop_if_gone(pid))
            except Exception:  # noqa: BLE001 - Redis away
                pass

    async def _drop_if_gone(self, pid: str) -> None:
        await asyncio.sleep(self.waiting_grace_s)
        if self.conns.get(pid) or await self.r.get(self.k(f"at:{pid}")) not in (None, self.me):
            return
        if await self.r.hdel(self.k("room"), pid):
            log.info("participant %s left the waiting room (no connection)", pid)
            await self.send_waiting_counts()

    # ---- state ----------------------------------------------------------------------
    async def send_state(self, pid: str) -> None:
        if pid not in self.people:
            await self.person(pid)
        if self._owns(pid) is not None or pid in self.starting:
            await self.send(pid, self.state_frame(pid))
            return
        gid, owner, live = await self._route(pid)
        if gid and not owner and not live:  # ended: the worker that ended it shows the reveal
            owner = await self.r.get(self.k(f"ended:{gid}"))
        if owner and owner != self.me and await self._to_owner(owner, {"op": "state", "pid": pid}):
            return
        await self.send(pid, await self._shared_state(pid))

    async def _shared_state(self, pid: str, known: tuple | None = None) -> dict[str, Any]:
        """The state of a participant without a game on this worker, from Redis (and the reveal
        of a game that ended here). `known`: (room entry, played, alone, game id) just read."""
        if pid not in self.people:
            await self.person(pid)
        p = self.people[pid]
        if known is not None:
            raw, played, alone, gid = known
        else:
            async with self.r.pipeline(transaction=False) as pipe:  # one round trip
                pipe.hget(self.k("room"), pid).hget(self.k("played"), pid)
                pipe.exists(self.k(f"alone:{pid}")).get(self.k(f"game:{pid}"))
                raw, played, alone, gid = await pipe.execute()
        p.games_played = int(played or p.games_played)
        s = self.session_of.get(pid)
        if s is not None and s.id == gid and raw is None:  # a game that ended here: its reveal
            return self.state_frame(pid)
        w = waiting_from_json(pid, raw) if raw else None
        lone = None
        if w is not None and self.study.format == "three-player":
            lone = lone_frame(self.study, w.joined_ms, await self.r.hlen(self.k("room")))
        starting = bool(gid) and not raw and await self.r.sismember(self.k("games"), gid)
        phase = "waiting" if (w is not None or starting) else ("alone" if alone else "idle")
        since = w.joined_ms if w else (p.joined_ms if starting else None)
        return self._state(p, phase, self.now(), since, lone, None)

    async def _unqueue(self, pid: str) -> None:
        if await self.r.hdel(self.k("room"), pid):
            await self.send_waiting_counts()

    async def send_waiting_counts(self) -> None:
        if self.study.format == "three-player":
            for pid in list(await self.r.hkeys(self.k("room"))):
                await self.send(pid, await self._shared_state(pid))

    # ---- frames in ---------------------------------------------------------------------
    async def handle(self, pid: str, raw: str, relayed: bool = False) -> None:
        try:
            f = proto.parse(raw)
        except proto.BadFrame as exc:
            await self.send(pid, proto.error(exc.code, str(exc), exc.client_id))
            return
        t = f.type  # type: ignore[attr-defined]
        cid = getattr(f, "client_id", None)
        if t == "ping":
            await self.send(pid, {"type": "pong"})
            return
        if t == "leave_queue":
            await self.r.hdel(self.k("room"), pid)
            await self.send_state(pid)
            await self.send_waiting_counts()
            return
        if self._owns(pid) is not None or pid in self.starting:
            await super().handle(pid, raw, f)  # parsed once
            return
        # not mine: to the lease holder (a relayed frame too, if its game moved meanwhile; the holder
        # never forwards further, so a frame makes at most two hops). Game frames go where the last
        # one went without asking Redis: a worker that no longer runs the game forwards it, a dead
        # one takes no message (then the route is asked again); a join forgets the route. A relayed
        # frame is routed by Redis alone (two stale routes must not send a frame back and forth).
        if t in GAME_FRAMES and not relayed and (owner := self.routes.get(pid)) is not None:
            if await self._to_owner(owner, {"op": "frame", "pid": pid, "raw": raw}):
                return
            self.routes.pop(pid, None)
        else:
            self.routes.pop(pid, None)
        gid, owner, live = await self._route(pid)
        if owner and owner != self.me and t in GAME_FRAMES and not relayed:
            self.routes[pid] = owner
        if owner and owner != self.me:
            if await self._to_owner(owner, {"op": "frame", "pid": pid, "raw": raw}):
                return
            live = True  # its owner just died: its game comes back after the takeover
        if live and t in GAME_FRAMES:
            await self.send(pid, proto.error("store_unavailable", proto.TEXTS["store_unavailable"], cid))
            return
        if live and t == "join":
            await self.send_state(pid)
            return
        if t == "join":
            async with self.join_turns:
                await self._join(pid)
        else:
            await self.send(pid, proto.error("not_in_game", proto.TEXTS["not_in_game"], cid))

    async def _join(self, pid: str) -> None:
        p = await self.person(pid)
        if p is None:
            return
        if not p.consented:  # consent may have been given on another worker
            info = await asyncio.to_thread(self.store.get_participant, pid)
            p.consented = info.consent_ms is not None
        if not await self._may_join(p):
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

    # ---- matchmaking (one worker at a time) -----------------------------------------------
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
        room = self.room  # from here to the claims nothing awaits: the pure rules see one snapshot
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
                args.append(self.prefix)
                keys = [self.k(x) for x in ("room", "games", f"lease:{gid}", "hwaits", "interrogated", f"match:{gid}")]
                await self.claim(keys=keys, args=args, client=pipe)
            claimed = await pipe.execute()
        per_owner: dict[str, list[tuple[str, Match]]] = {}
        for m, gid, owner, ok in zip(matches, gids, owners, claimed):
            if ok:
                log.info("worker %s: game %s for worker %s: %s", self.me, gid, owner, " ".join(m.participants))
                per_owner.setdefault(owner, []).append((gid, m))
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

    # ---- the end of a game ------------------------------------------------------------------
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

    # ---- leases and takeover ---------------------------------------------------------------
    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(RENEW_S)
            try:
                await self.r.set(self.k(f"alive:{self.me}"), "1", px=LEASE_MS)
                if self.unsynced and self.redis_down_since is None:  # left over by a rebuild that failed
                    await self._sync_ended()
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
