"""The AI witnesses' capacity across the workers of a cluster (cluster.py), shared through Redis
so that every worker draws by the same count and the same estimate:

- the games in progress of each limited witness: one sorted set `cap:use:<codename>` of game
  ids, each scored by when its place lapses. The matchmaker's CLAIM script checks the count
  against the limit and adds the game in the same step; the owner of the game renews its place
  with its lease (every RENEW_S) and removes it at game over. A killed worker's places lapse
  after PLACE_MS unless the worker that takes its games over renews them (the game goes on
  there, so its place is still taken). A plain counter could not tell whose places to give back.
- the replies generating on each worker (`cap:gen`, fields `<worker>|<codename>` = "n|until_ms",
  lapsing the same way): the workers share the machine's cores, so a timing is divided by the
  replies generating on all of them.
- every timing (`cap:obs`, a list every worker appends to and reads on): the estimate of each
  worker follows all replies, and the matchmaker re-times a withheld witness for all.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from turinglab.matchmaking.capacity import Capacity
from turinglab.server.live.cluster_outage import LEASE_MS

log = logging.getLogger("turinglab.cluster")

PLACE_MS = 3 * LEASE_MS  # a place nobody renews lapses after this long
OBS_REPLAYED = 50  # timings a joining worker reads from before it joined


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class ClusterCapacity(Capacity):
    """A worker's `Capacity`: its timings are queued for the others (`outbox`), and replies
    generating on the other workers (`elsewhere`) count as generating at once."""

    outbox: list = field(default_factory=list)
    elsewhere: dict[str, int] = field(default_factory=dict)

    def started_generating(self, codename: str) -> int:
        return super().started_generating(codename) + self.elsewhere.get(codename, 0)

    def learn(self, codename: str, compute_s: float, concurrent: int, *args: Any, **kw: Any) -> None:
        shared = kw.pop("shared", False)  # another worker's timing, read from Redis
        super().learn(codename, compute_s, concurrent, *args, **kw)
        if codename in self.estimates and not shared:
            self.outbox.append([codename, compute_s, concurrent, *args, kw])


class SharedCapacity:
    """Mixin of `ClusterHub`: places, generating replies and timings in Redis."""

    obs_cursor = 0

    def place_key(self, codename: str) -> str:
        return self.k(f"cap:use:{codename}")

    def may_retime(self) -> bool:
        return self.leader  # one timed reply for the cluster, shared as every timing is

    def _places(self) -> list[tuple[str, str]]:
        """(game id, witness) of each place this worker holds: its live and starting games'."""
        est = self.room.capacity.estimates
        out = [(gid, seat.identity.witness) for gid, s in self.live.items() for seat in s.seats.values()
               if seat.identity.kind == "ai" and seat.identity.witness in est]
        out += [(gid, slot.witness) for gid, m in self.pending.items() if m is not None
                for slot in m.seats.values() if slot.kind == "ai" and slot.witness in est]
        return out

    def claim_place(self, m: Any) -> tuple[str, str]:
        """The CLAIM script's place of a match: (key, limit), or a key and '' for no limited witness."""
        cap = self.room.capacity
        for slot in m.seats.values():
            if slot.kind == "ai" and cap.limit(slot.witness) is not None:
                return self.place_key(slot.witness), str(cap.limit(slot.witness))
        return self.k("cap:none"), ""

    async def _cap_join(self) -> None:
        self.obs_cursor = max(0, await self.r.llen(self.k("cap:obs")) - OBS_REPLAYED)
        await self._cap_sync()

    async def _cap_counts(self) -> None:
        """The games in progress of each limited witness, from Redis (lapsed places dropped)."""
        cap, now = self.room.capacity, wall_ms()
        names = list(cap.estimates)
        async with self.r.pipeline(transaction=False) as p:
            for c in names:
                p.zremrangebyscore(self.place_key(c), "-inf", now)
                p.zcard(self.place_key(c))
            out = await p.execute()
        cap.in_use = {c: int(n) for c, n in zip(names, out[1::2]) if int(n)}

    async def _cap_sync(self) -> None:
        """Every renewal: my places renewed, my generating replies and timings shared, the others'
        read, and the counts of games in progress."""
        cap = self.room.capacity
        if not cap.estimates:
            return
        now = wall_ms()
        sent, cap.outbox = cap.outbox, []
        async with self.r.pipeline(transaction=False) as p:
            for gid, codename in self._places():
                p.zadd(self.place_key(codename), {gid: now + PLACE_MS})
            p.hset(self.k("cap:gen"), mapping={f"{self.me}|{c}": f"{cap.generating.get(c, 0)}|{now + PLACE_MS}"
                                               for c in cap.estimates})
            for o in sent:
                p.rpush(self.k("cap:obs"), json.dumps([self.me, *o]))
            p.hgetall(self.k("cap:gen"))
            p.lrange(self.k("cap:obs"), self.obs_cursor, -1)
            out = await p.execute()
        gen, obs = out[-2], out[-1]
        self.obs_cursor += len(obs)
        elsewhere: dict[str, int] = {}
        lapsed = []
        for key, val in gen.items():
            worker, _, codename = key.partition("|")
            n, _, until = val.partition("|")
            if int(until) < now:
                lapsed.append(key)
            elif worker != self.me:
                elsewhere[codename] = elsewhere.get(codename, 0) + int(n)
        if lapsed:
            await self.r.hdel(self.k("cap:gen"), *lapsed)
        cap.elsewhere = elsewhere
        before = {c: e.limit for c, e in cap.estimates.items()}
        for raw in obs:
            worker, codename, *args, kw = json.loads(raw)
            if worker != self.me:
                cap.learn(codename, *args, **kw, shared=True)
        await self._cap_counts()
        if any(e.limit != before[c] for c, e in cap.estimates.items()):
            self.wake.set()  # a witness may be drawn again (the matchmaker retries every poll)
