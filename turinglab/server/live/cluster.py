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
import time
from typing import Any

from redis.exceptions import RedisError

from starlette.websockets import WebSocket

from turinglab.matchmaking import Match
from turinglab.server.live import protocol as proto
from turinglab.server.live.capacity_live import build_capacity
from turinglab.server.live.cluster_capacity import ClusterCapacity, SharedCapacity
from turinglab.server.live.cluster_leases import Leases
from turinglab.server.live.cluster_outage import LEASE_MS, RECONNECT_MAX_S, RedisOutage, expected_reply_s
from turinglab.server.live.cluster_redis import (
    CLAIM, HOLD, RELAY, RELEASE, RENEW, TAKE, match_from_json, waiting_from_json,
)
from turinglab.server.live.cluster_room import SharedRoom
from turinglab.server.live.hub import Hub, lone_frame
from turinglab.server.live.session import GameSession

log = logging.getLogger("turinglab.cluster")

GAME_FRAMES = {"message", "paste", "verdict", "belief", "report"}
REDIS_POOL = 128  # Redis connections per worker, at most
REDIS_POOL_WAIT_S = 10.0  # how long a command waits for a free connection of the pool

class ClusterHub(RedisOutage, Leases, SharedRoom, SharedCapacity, Hub):
    """A `Hub` whose waiting room, relay and game ownership are shared through Redis."""

    def __init__(self, *args: Any, redis_url: str, prefix: str, **kw: Any) -> None:
        import redis.asyncio as aioredis

        self.me = "w" + secrets.token_hex(6)
        self.prefix = prefix
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as RedisConnectionError
        from redis.retry import Retry

        # one bounded pool per worker: at most REDIS_POOL connections (the subscription's among them);
        # a command waits up to REDIS_POOL_WAIT_S for one, then the handshake answers "busy, retrying".
        # One retry on a connection error: after a Redis restart a pooled connection is stale once
        pool = aioredis.BlockingConnectionPool.from_url(redis_url, decode_responses=True, max_connections=REDIS_POOL,
                                                         timeout=REDIS_POOL_WAIT_S, retry=Retry(NoBackoff(), 1),
                                                         retry_on_error=[RedisConnectionError])
        self.r = aioredis.Redis(connection_pool=pool)
        self.claim = self.r.register_script(CLAIM)
        self.renew = self.r.register_script(RENEW)
        self.hold = self.r.register_script(HOLD)
        self.release = self.r.register_script(RELEASE)
        self.take = self.r.register_script(TAKE)
        self.relay = self.r.register_script(RELAY)
        self.pubsub = None
        self.leader = False
        self.verdict_cursor = 0
        self.counted: set[str] = set()  # games whose verdict is in the tallies
        self.pending: dict[str, Match] = {}  # games leased to me, not yet started
        self.local_only: set[str] = set()  # players of my games connected to no other worker
        self.plocks: dict[str, asyncio.Lock] = {}  # relayed frames of one participant run in order
        self.routes: dict[str, tuple[str, str]] = {}  # participant -> (game, worker) of their last game frame
        self._waking: asyncio.Task | None = None  # a publish of "wake" in flight
        self._wake_again = False
        self.redis_down_since: float | None = None  # time.monotonic() when the subscription failed
        self.heal_until = 0.0  # time.monotonic() until which other workers may still be rebuilding their routes
        self.waiting_here: dict[str, str] = {}  # participants who joined the room here: their entries
        self.unsynced: dict[str, GameSession] = {}  # games that ended here while Redis was away
        self.bg: list[asyncio.Task] = []
        self.joined = False  # `start` is done: subscribed, loops running
        self.busy_refused = 0  # handshakes and frames answered "busy, retrying"
        self._busy_logged = 0.0
        self.last_out: dict[str, float] = {}  # participant -> when a frame last reached them here (monotonic)
        self.in_game: set[str] = set()  # participants connected here waiting for something in a game (watchdog)
        super().__init__(*args, **kw)
        self.reply_wait_s = expected_reply_s(self.study, self.human_timing)  # the watchdog's silence
        # the same estimates, their places and timings shared through Redis (cluster_capacity.py)
        self.room.capacity = build_capacity(self.study, ClusterCapacity(estimates={}))

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
        """Join the cluster (before the first request). Redis away at start: the worker serves
        anyway, `degraded` on /healthz and "busy" to websockets, and joins with back-off (0.5 s
        doubling to 5 s) once Redis answers: never a failed start that stops the other workers."""
        try:
            await self._join_cluster()
        except Exception as exc:  # noqa: BLE001 - Redis away: retried in the background
            log.warning("worker %s: Redis is not reachable at start (%s: %s); serving as degraded and "
                        "retrying", self.me, type(exc).__name__, exc)
            self.bg.append(asyncio.create_task(self._join_later()))

    async def _join_later(self) -> None:
        wait = 0.5
        while True:
            await asyncio.sleep(wait)
            try:
                await self._join_cluster()
            except Exception:  # noqa: BLE001 - still away
                wait = min(RECONNECT_MAX_S, wait * 2)
                continue
            log.warning("worker %s: Redis answers: joined the cluster %s late", self.me, self.prefix)
            return

    async def _join_cluster(self) -> None:
        """Connect to Redis, subscribe, and start the background loops."""
        self.verdict_cursor = max(0, await self.r.llen(self.k("verdicts")) - 10_000)
        await self._seed()
        await self._cap_join()
        ps = self.r.pubsub()
        try:
            await ps.subscribe(*self._channels())
        except Exception:
            with contextlib.suppress(Exception):
                await ps.aclose()
            raise
        self.pubsub = ps
        await self.r.set(self.k(f"alive:{self.me}"), "1", px=LEASE_MS)
        await self.r.set(self.k(f"mark:{self.me}"), "1", ex=86400)  # gone: Redis lost its keys (the renewal looks)
        await self._adopt_open()
        self.bg += [asyncio.create_task(self._listen()), asyncio.create_task(self._renew_loop()),
                    asyncio.create_task(self._takeover_loop()), asyncio.create_task(self._watchdog())]
        self.joined = True
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
        if self.redis_down_since is not None or not self.joined:
            return False
        try:
            return bool(await asyncio.wait_for(self.r.ping(), 1.0))
        except Exception:  # noqa: BLE001
            return False

    # ---- relay ---------------------------------------------------------------------
    def _to_local(self, pid: str, data: str) -> None:
        origin, _, frame = data.partition("|")
        if origin == self.me:
            return
        if self.conns.get(pid):
            self._sent(pid, frame)
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
        if self.conns.get(pid):
            self._sent(pid, data)
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

    async def _to_owner(self, owner: str, msg: dict[str, Any], gid: str | None = None) -> bool:
        """Published to `owner` unless game `gid`'s lease is another worker's (no `gid`: while the owner
        is alive); False: nothing was published (it lost the game, or is gone or cut off)."""
        key, value, missing_ok = (f"lease:{gid}", owner, "1") if gid else (f"alive:{owner}", "1", "0")
        return bool(await self.relay(keys=[self.k(key), self.k(f"w:{owner}")],
                                     args=[json.dumps(msg), value, missing_ok]))

    def _owns(self, pid: str) -> GameSession | None:
        s = self.session_of.get(pid)
        return s if s is not None and s.id in self.live else None

    # ---- connections ---------------------------------------------------------------
    async def connect(self, pid: str, ws: WebSocket) -> None:
        """Raises `proto.Busy` (the client is told and retries) when the worker has not joined its
        cluster yet, Redis is away and the game is not mine, or no pooled connection came in time."""
        if not self.joined:
            self._busy(pid, "still joining the cluster")
        first = await self._add_connection(pid, ws)
        try:
            await self._connected(pid, ws, first)
        except Exception as exc:  # the socket closes (no stale entry stays)
            if self._forget_socket(pid, ws):
                with contextlib.suppress(Exception):
                    await self.pubsub.unsubscribe(self.k(f"p:{pid}"))
            if isinstance(exc, (RedisError, OSError, asyncio.TimeoutError)):
                self._busy(pid, f"{type(exc).__name__}: {exc}")
            raise

    def _busy(self, pid: str, why: str) -> None:
        """Refuse a handshake or a frame with "busy, retrying"; logged in one line at most every 10 s."""
        self.busy_refused += 1
        now = time.monotonic()
        if now - self._busy_logged > 10:
            self._busy_logged = now
            log.warning("worker %s: %d handshakes or frames answered busy so far (last: %s)", self.me, self.busy_refused, why)
        raise proto.Busy(why)

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
            data = json.dumps(self.state_frame(pid))
            self._sent(pid, data)
            await ws.send_text(data)
            if first and s.game.connected.get(s.seat_of[pid]) is False:
                await s.on_connection(pid, True)
            return
        gid, owner, live = await self._route(pid)
        if owner and owner != self.me and await self._to_owner(owner, {"op": "conn", "pid": pid, "up": True}, gid):
            return
        data = json.dumps(await self._shared_state(pid))
        self._sent(pid, data)
        await ws.send_text(data)

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
                    await self._to_owner(owner, {"op": "conn", "pid": pid, "up": False}, gid)
                elif await self.r.hexists(self.k("room"), pid):
                    asyncio.create_task(self._drop_if_gone(pid))
            except Exception:  # noqa: BLE001 - Redis away
                pass

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
        if owner and owner != self.me and await self._to_owner(owner, {"op": "state", "pid": pid}, gid):
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

    # ---- frames in ---------------------------------------------------------------------
    async def handle(self, pid: str, raw: str, relayed: bool = False) -> None:
        """A frame in; `proto.Busy` when Redis is away or no pooled connection came in time (the
        sender is told "busy, retrying", no traceback)."""
        try:
            await self._handle(pid, raw, relayed)
        except (RedisError, asyncio.TimeoutError) as exc:
            self._busy(pid, f"a frame: {type(exc).__name__}: {exc}")

    async def _handle(self, pid: str, raw: str, relayed: bool) -> None:
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
        # one went without a second round trip: published unless the game's lease is another worker's
        # now (RELAY), else the route is asked again (a cut-off owner whose game was taken over takes
        # nothing, though Redis may still count its subscription); a join forgets the route. A relayed
        # frame is routed by Redis alone (two stale routes must not send a frame back and forth).
        if t in GAME_FRAMES and not relayed and (route := self.routes.get(pid)) is not None:
            if await self._to_owner(route[1], {"op": "frame", "pid": pid, "raw": raw}, route[0]):
                return
            self.routes.pop(pid, None)
        else:
            self.routes.pop(pid, None)
        gid, owner, live = await self._route(pid)
        if owner and owner != self.me and t in GAME_FRAMES and not relayed:
            self.routes[pid] = (gid, owner)
        if owner and owner != self.me:
            if await self._to_owner(owner, {"op": "frame", "pid": pid, "raw": raw}, gid):
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
