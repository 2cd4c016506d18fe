"""A game taken over from a dead worker (server/live/resumed.py): a witness's resend of its held
reply, arriving while the new owner is storing that reply's release, is acknowledged with the
reply's id. (Found by the chaos test: the resend was checked outside the game's lock, saw the
released message before its id was set, and answered `server_error`; the witness, still waiting
for its ack, wrote nothing more and the game ran out of time without a verdict.)"""

from __future__ import annotations

import asyncio
import json
import threading

from tests.server.live.test_server import study
from turinglab.game.config import Timing
from turinglab.server.live.hub import Hub
from turinglab.server.live.resumed import ResumedSession
from turinglab.store.api import Store

SLOW = Timing(base_s=1.0, s_per_char=0.0, gamma_shape=1.0, gamma_scale=0.001)  # a held reply: ~1 s


async def until(cond, timeout: float = 10.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"not within {timeout} s")


async def test_a_resend_during_the_release_of_a_held_reply_is_acknowledged(sqlite_url):
    store = Store(sqlite_url)
    hub = Hub(study(ratio=1.0), store, rng_seed=3, human_timing=SLOW, initial_ai_wait_s=0.0)
    sent: list[tuple[str, dict]] = []
    real_send = hub.send

    async def send(pid, frame):
        sent.append((pid, frame))
        await real_send(pid, frame)
    hub.send = send
    pids = []
    for _ in range(2):
        pid = await hub.new_person({})
        await hub.consent(pid)
        await hub.person(pid)
        await hub.handle(pid, json.dumps({"type": "join"}))
        pids.append(pid)
    await until(lambda: all(p in hub.session_of for p in pids))
    s = hub.session_of[pids[0]]
    i = s.interrogator
    w = next(p for p in pids if p != i)
    await hub.handle(i, json.dumps({"type": "message", "conv": "A", "text": "hi there", "client_id": "q0"}))
    await until(lambda: any(f.get("type") == "message" for p, f in sent if p == w))
    await hub.handle(w, json.dumps({"type": "message", "text": "hey, fine", "client_id": "r0"}))
    await until(lambda: "A" in s.held)
    held = s.held["A"]

    # the owner dies: its tasks stop; the game is rebuilt from its stored log on a new owner
    for t in list(s.tasks):
        t.cancel()
    hub.live.pop(s.id, None)
    gate = threading.Event()
    blocker = asyncio.create_task(hub.writer.run(s.id, lambda st: gate.wait(10)))  # the store is slow
    r = await ResumedSession.restore(hub, store.game(s.id), s.seats, store.events(s.id), 5)
    for p in pids:
        hub.session_of[p] = r
    hub.live[r.id] = r
    n = len(r.game.log)
    await until(lambda: len(r.game.log) > n)  # the held reply's release: applied, its write waiting
    assert r.lock.locked()
    sent.clear()
    resend = asyncio.create_task(hub.handle(w, json.dumps({"type": "message", "text": "hey, fine", "client_id": "r0"})))
    await asyncio.sleep(0.2)
    gate.set()
    await blocker
    await asyncio.wait_for(resend, 10)
    to_w = [f for p, f in sent if p == w]
    assert not [f for f in to_w if f.get("type") == "error"], to_w
    acks = [f for f in to_w if f.get("type") == "ack" and f["client_id"] == "r0"]
    assert len(acks) == 1 and acks[0]["id"] == r.ids[n], (to_w, r.ids)
    shown = [f for p, f in sent if p == i and f.get("type") == "message"]
    assert [f["text"] for f in shown] == ["hey, fine"] and shown[0]["id"] == acks[0]["id"]
    assert held.text == "hey, fine"
    for t in list(r.tasks):
        t.cancel()
    await hub.close()
    store.close()
