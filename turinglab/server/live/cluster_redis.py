"""The cluster's Redis side (cluster.py): the Lua scripts that claim matches and hold leases,
the JSON of matches and waiting entries, the shared form secret, and the database check."""

from __future__ import annotations

import json
import secrets
from typing import Any

from turinglab.matchmaking import Match
from turinglab.matchmaking.room import Slot, Waiting

# claim a match: every entry unchanged and (a limited AI witness: ARGV[10+2n] its limit) fewer of
# its places taken (KEYS[7], lapsed ones dropped at ARGV[12+2n], the time now) than its limit,
# then out of the room, into a game owned by ARGV[2], its place taken until ARGV[11+2n]
CLAIM = """
local n = tonumber(ARGV[8])
for i = 1, n do
  if redis.call('HGET', KEYS[1], ARGV[8 + 2*i - 1]) ~= ARGV[8 + 2*i] then return 0 end
end
local limit = ARGV[10 + 2*n]
if limit ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', ARGV[12 + 2*n])
  if redis.call('ZCARD', KEYS[7]) >= tonumber(limit) then return -1 end
  redis.call('ZADD', KEYS[7], ARGV[11 + 2*n], ARGV[1])
end
for i = 1, n do
  local pid = ARGV[8 + 2*i - 1]
  redis.call('HDEL', KEYS[1], pid)
  redis.call('SET', ARGV[9 + 2*n] .. ':game:' .. pid, ARGV[1])
end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SET', KEYS[3], ARGV[2], 'PX', ARGV[3])
redis.call('SET', KEYS[6], ARGV[7])
if ARGV[4] ~= '' then
  redis.call('RPUSH', KEYS[4], ARGV[4])
  redis.call('LTRIM', KEYS[4], -tonumber(ARGV[5]), -1)
end
if ARGV[6] ~= '' then redis.call('HINCRBY', KEYS[5], ARGV[6], 1) end
return 1
"""
# renew my leases (take back a lease whose key vanished, e.g. Redis restarted, unless the game
# ended meanwhile: its "ended" mark, set with the release at game over); return the lost ones
RENEW = """
local lost = {}
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  if not v and redis.call('EXISTS', ARGV[4 + #KEYS] .. ':ended:' .. ARGV[3 + i]) == 1 then
    -- ended since the list of my games was made: neither lost nor renewed
  elseif v == ARGV[1] or not v then
    redis.call('SET', k, ARGV[1], 'PX', ARGV[2])
    redis.call('SADD', ARGV[3], ARGV[3 + i])
  else
    table.insert(lost, ARGV[3 + i])
  end
end
return lost
"""
# publish to a worker's channel only while KEYS[1] says it is there (ARGV[2]): the game's lease is
# not another worker's (ARGV[3] '1': a lease gone with a Redis restart is rewritten by its owner within
# a second, so it still takes frames), or its `alive` key (renewed every second) is set. A host whose
# network was cut still counts as a subscriber for Redis (no FIN came): what is published to it is lost
RELAY = """
local v = redis.call('GET', KEYS[1])
if (v or (ARGV[3] == '1' and ARGV[2])) ~= ARGV[2] then return 0 end
return redis.call('PUBLISH', KEYS[2], ARGV[1])
"""
# hold a lock: take it when free, renew it when mine
HOLD = """
local v = redis.call('GET', KEYS[1])
if not v or v == ARGV[1] then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end
return 0
"""
# lease to ARGV[1] every open game that nobody holds (its owner died), in one step: a game that
# ended between a scan and a take (its release and its leaving KEYS[1] are one MULTI) is never taken
TAKE = """
local taken = {}
for _, gid in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  local lease = ARGV[3] .. ':lease:' .. gid
  if redis.call('EXISTS', lease) == 0 then
    if redis.call('EXISTS', ARGV[3] .. ':ended:' .. gid) == 1 then
      redis.call('SREM', KEYS[1], gid)
    else
      redis.call('SET', lease, ARGV[1], 'PX', ARGV[2])
      table.insert(taken, gid)
    end
  end
end
return taken
"""
ENDED_MS = 60_000  # how long a game's "ended" mark stays: far longer than a renewal round
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def match_to_json(m: Match) -> str:
    return json.dumps({"format": m.format, "interrogator": m.interrogator, "reason": m.reason,
                       "waited_ms": m.waited_ms, "seats": {k: s.identity() for k, s in m.seats.items()},
                       "allocation": m.allocation})


def match_from_json(raw: str) -> Match:
    d = json.loads(raw)
    seats = {k: Slot(v["kind"], v["participant_id"], v["witness"], v["selection_prob"]) for k, v in d["seats"].items()}
    return Match(d["format"], d["interrogator"], seats, d["waited_ms"], d["reason"], d.get("allocation"))


def waiting_to_json(w: Waiting) -> str:
    return json.dumps([w.joined_ms, w.assignment, w.due_ms])


def waiting_from_json(pid: str, raw: str) -> Waiting:
    j, a, d = json.loads(raw)
    return Waiting(pid, j, a, d)


def shared_secret(redis_url: str, prefix: str) -> str:
    """One form-token secret for every worker of a cluster (when $TURINGLAB_SECRET is not set):
    a page served by one worker posts to another."""
    import redis

    r = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        r.set(f"{prefix}:secret", secrets.token_hex(32), nx=True)
        return r.get(f"{prefix}:secret")
    finally:
        r.close()


def check_cluster_study(study: Any) -> None:
    """The sessions of rounds and the witness groups (jones-bergen-2025) are kept by one worker only."""
    a = study.allocation
    if a.session_rounds is not None or a.witness_policy == "groups":
        raise ValueError("allocation.session_rounds and witness_policy 'groups' (the jones-bergen-2025 sessions) "
                         "run on a single server process for now: serve without --workers/--redis, or set "
                         "session_rounds: null and another witness_policy in the study file")


def check_cluster_db(db_url: str) -> None:
    """Several workers need a database several processes can write: not SQLite."""
    if db_url.startswith("sqlite"):
        raise ValueError("several workers (--workers or --redis) need PostgreSQL: give --db "
                         "postgresql+psycopg://USER@HOST/DB (SQLite serves one process only)")
