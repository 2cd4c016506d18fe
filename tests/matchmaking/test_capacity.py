"""Capacity-aware allocation (issue: the local witness is never late): the estimate, and the
waiting room that never starts an AI game on a witness at its limit (another witness with room, the
overflow witness, or a longer masked wait), with the selection probability of the draw it made."""

from __future__ import annotations

import math

import numpy as np
import pytest
from pydantic import ValidationError

from turinglab.game.config import Allocation, Study, WitnessSpec
from turinglab.matchmaking import WaitingRoom, WitnessStats
from turinglab.matchmaking.capacity import Capacity, Estimate, shortest_delay_s
from turinglab.server.live.hub import build_capacity

ELIZA = WitnessSpec(codename="Eliza", kind="eliza")
LOCAL = WitnessSpec(codename="Sierra", kind="local")
LOCAL2 = WitnessSpec(codename="Tango", kind="local")


def make(witnesses, seed=1, **alloc) -> WaitingRoom:
    s = Study(name="t", witnesses=witnesses, allocation=Allocation(human_ratio=0.0, witness_policy="uniform", **alloc))
    r = WaitingRoom(s, np.random.default_rng(seed), WitnessStats.for_codenames([w.codename for w in witnesses]),
                    initial_ai_wait_ms=1000)
    r.capacity = build_capacity(s)
    return r


def test_estimate_follows_the_formula_and_live_timings():
    e = Estimate(t1_s=None, delay_s=4.0, headroom=0.7, fixed=None)
    assert e.limit == 1  # unmeasured: one game at a time
    cap = Capacity(estimates={"m": e}, alpha=0.5)
    cap.observe("m", 0.5, 1)
    assert e.t1_s == 0.5 and e.limit == math.floor(0.7 * 4.0 / 0.5) == 5
    cap.observe("m", 3.0, 2)  # two at once took 3 s: 1.5 s each alone
    assert e.t1_s == pytest.approx(0.5 * 0.5 + 0.5 * 1.5) and e.limit == math.floor(2.8 / 1.0)
    assert Estimate(t1_s=0.01, delay_s=4, headroom=0.7, fixed=2).limit == 2  # the study file's number wins
    assert shortest_delay_s(1.0, 0.3, 2.5, 0.25) > 1.0 + 0.3 * 10


def test_a_streamed_witness_is_limited_by_its_first_words():
    """With deadline-aware generation only the first words can be late: the limit follows the
    time to the first words once it is measured, per reply alone (divided by the concurrency)."""
    e = Estimate(t1_s=None, delay_s=4.0, headroom=0.7, fixed=None)
    cap = Capacity(estimates={"m": e}, alpha=0.5)
    cap.observe("m", 3.0, 1)  # a whole reply: 3 s, no first-words timing (not streamed)
    assert e.first_s is None and e.limit == 1
    cap.observe("m", 3.0, 1, first_s=0.8)
    assert e.first_s == 0.8 and e.limit == math.floor(0.7 * 4.0 / 0.8) == 3
    cap.observe("m", 4.0, 2, first_s=2.4, cut=True)  # two at once: 1.2 s each alone
    assert e.first_s == pytest.approx(0.5 * 0.8 + 0.5 * 1.2) and e.limit == 2 and e.cut == 1
    assert e.to_dict()["first_s"] == 1.0 and e.to_dict()["cut"] == 1
    e.ceiling = 1  # the local model's slots: one game's prompt cache each
    assert e.limit == 1


def test_default_rules_and_validation():
    s = Study(name="t", witnesses=[ELIZA, LOCAL])
    assert s.capacity_of("Sierra") == "auto" and s.capacity_of("Eliza") == "unlimited"
    assert set(build_capacity(s).estimates) == {"Sierra"}
    with pytest.raises(ValidationError, match="names no witness 'Nope'"):
        Study(name="t", witnesses=[LOCAL], allocation=Allocation(capacity={"Nope": 2}))
    with pytest.raises(ValidationError, match="has a capacity limit"):
        Study(name="t", witnesses=[LOCAL], allocation=Allocation(overflow_witness="Sierra"))
    with pytest.raises(ValidationError, match="is not one of this study's witnesses"):
        Study(name="t", witnesses=[LOCAL], allocation=Allocation(overflow_witness="Eliza"))


def test_full_witness_is_not_drawn_and_the_participant_waits_until_a_game_ends():
    r = make([LOCAL, LOCAL2], capacity={"Sierra": 1, "Tango": 1})
    for i in range(3):
        r.join(f"p{i}", 0)
    got = r.poll(1000)
    assert len(got) == 2  # one game per witness; the third participant waits
    names = sorted(m.seats["A"].witness for m in got)
    assert names == ["Sierra", "Tango"]
    second = got[1].seats["A"]
    assert second.selection_prob == 1.0  # drawn among the one witness with room: probability recorded as 1
    assert got[0].seats["A"].selection_prob == pytest.approx(0.5)
    assert "p2" in r.waiting and r.next_wakeup() is None  # stalled: no busy wake-ups
    assert r.capacity.deferred == 1 and r.capacity.reallocated == 1
    assert r.poll(5000) == []
    r.release(got[0].seats["A"].witness)
    m = r.poll(6000)
    assert len(m) == 1 and m[0].interrogator == "p2" and m[0].seats["A"].witness == got[0].seats["A"].witness
    assert m[0].waited_ms["p2"] == 6000
    assert r.capacity.in_use == {"Sierra": 1, "Tango": 1}


def test_overflow_witness_plays_only_when_the_others_are_full():
    r = make([LOCAL, ELIZA], capacity={"Sierra": 1}, overflow_witness="Eliza")
    for i in range(4):
        r.join(f"p{i}", 0)
    got = r.poll(1000)
    assert [m.seats["A"].witness for m in got] == ["Sierra", "Eliza", "Eliza", "Eliza"]
    assert r.capacity.overflowed == 3 and r.capacity.deferred == 0
    r.release("Sierra")
    r.join("p9", 2000)
    assert [m.seats["A"].witness for m in r.poll(10_000)] == ["Sierra"]


def test_three_player_waits_for_an_ai_with_room():
    s = Study(name="t", format="three-player", witnesses=[LOCAL], allocation=Allocation(capacity={"Sierra": 1}))
    r = WaitingRoom(s, np.random.default_rng(0), WitnessStats.for_codenames(["Sierra"]))
    r.capacity = build_capacity(s)
    for i in range(4):
        r.join(f"p{i}", 0)
    assert len(r.poll(0)) == 1  # the second pair waits: the only AI witness is busy
    assert set(r.waiting) == {"p2", "p3"} and r.capacity.deferred == 2
    r.release("Sierra")
    m = r.poll(100)
    assert len(m) == 1 and set(m[0].participants) == {"p2", "p3"}


def test_unlimited_witnesses_are_unchanged():
    """Without limits the room draws exactly as before (same seed, same witnesses and probabilities)."""
    a = make([ELIZA, WitnessSpec(codename="E2", kind="eliza")], seed=5)
    b = make([ELIZA, WitnessSpec(codename="E2", kind="eliza")], seed=5)
    b.capacity = None
    for r in (a, b):
        for i in range(30):
            r.join(f"p{i}", i)
    ga, gb = a.poll(10_000), b.poll(10_000)
    assert [(m.interrogator, m.seats["A"].witness, m.seats["A"].selection_prob) for m in ga] == \
           [(m.interrogator, m.seats["A"].witness, m.seats["A"].selection_prob) for m in gb]


def _phase(p) -> str | None:  # noqa: ANN001 - the player's latest phase
    states = [f for f in p.frames if f.get("type") == "state"]
    return states[-1].get("phase") if states else None


async def test_server_starts_no_game_past_the_limit_and_the_next_when_one_ends(sqlite_url):
    """Three participants, all assigned AI games, one witness that may play one game at a time:
    one game starts, two wait (masked wait), and the end of the game starts the next."""
    import asyncio

    from turinglab.game.config import Rules, Timing
    from turinglab.server.app import create_app
    from turinglab.server.testing import WsPlayer, serve_in_thread

    fast = Timing(base_s=0.05, s_per_char=0.002, gamma_shape=1.0, gamma_scale=0.01)
    eliza = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=fast)
    s = Study(name="cap", rules=Rules(time_limit_s=20, typing_min_s=0.1, typing_jitter_s=0.1), witnesses=[eliza],
              allocation=Allocation(human_ratio=0.0, capacity={"Eliza": 1}))
    app = create_app(s, sqlite_url, rng_seed=3, human_timing=fast, initial_ai_wait_s=0.1)
    with serve_in_thread(app) as base:
        ps = [await (await WsPlayer.create(base)).connect() for _ in range(3)]
        for p in ps:
            await p.phase("idle")
            await p.send({"type": "join"})
        await asyncio.sleep(1.5)
        playing = [p for p in ps if _phase(p) == "game"]
        assert len(playing) == 1, [_phase(p) for p in ps]
        assert sum(_phase(p) == "waiting" for p in ps) == 2
        hub = app.state.hub
        assert hub.room.capacity.in_use == {"Eliza": 1} and hub.room.capacity.deferred == 2
        first = playing[0]
        cid = "c1"
        await first.send({"type": "message", "conv": "A", "text": "hello there", "client_id": cid})
        await first.next("ack", client_id=cid)
        await first.next("message", timeout=10)
        await first.send({"type": "verdict", "choice": "ai", "confidence": 80, "reason": "eliza"})
        await first.phase("reveal")
        await asyncio.sleep(1.0)
        assert sum(_phase(p) == "game" for p in ps if p is not first) == 1
        assert hub.room.capacity.in_use == {"Eliza": 1}
        for p in ps:
            await p.close()


def test_every_change_of_a_limit_keeps_its_reason():
    """Capacity honesty (issue 23): the reason names the timing that moved the limit, alone and
    at how many replies at once, and the load the caller measured; a timing that leaves the
    limit where it was is no change; a study file's number is never explained away."""
    e = Estimate(t1_s=None, delay_s=4.0, headroom=0.7, fixed=None, ceiling=4)
    cap = Capacity(estimates={"m": e}, alpha=0.5)
    assert "warming up" in e.why and e.basis == "1 until a reply is timed"
    cap.observe("m", 2.0, 1, first_s=0.5, load=1.2, calibration=True, at_ms=5)
    assert e.why == "timed at start, after the model's warm-up: first words in 0.50 s alone; machine load average 1.2"
    assert e.changes == [{"at_ms": 5, "from": 1, "to": 4, "why": e.why}]
    assert e.basis == "floor(0.7 × 4.00 s ÷ 0.50 s) = 5, at most 4 (the model's slots)"
    cap.observe("m", 2.0, 1, first_s=0.6)  # 0.55 s: still 4 (5 capped): no change, the reason stays
    assert len(e.changes) == 1 and e.why.startswith("timed at start")
    cap.observe("m", 12.0, 3, first_s=6.6, load=7.9)  # 3 at once, 2.2 s each alone: the mean is 1.375 s
    assert e.limit == 2 and e.why == ("measured reply latency rose: first words in 1.38 s alone (was 0.55 s), "
                                      "3 replies generating at once; machine load average 7.9")
    assert [(c["from"], c["to"]) for c in e.changes] == [(1, 4), (4, 2)]
    for _ in range(6):
        cap.observe("m", 0.1, 1, first_s=0.1)
    assert [(c["from"], c["to"]) for c in e.changes][2:] == [(2, 3), (3, 4)] and e.limit == 4
    assert all("measured reply latency fell" in c["why"] for c in e.changes[2:])
    cap.alpha = 1.0  # each timing alone: the limit swings 1 <-> 4
    for i in range(30):  # only the last few are kept
        cap.observe("m", 1.0, 1, first_s=5.0 if i % 2 else 0.1)
    assert len(e.changes) == 10
    fixed = Estimate(t1_s=None, delay_s=4.0, headroom=0.7, fixed=3)
    Capacity(estimates={"m": fixed}).observe("m", 9.0, 1, load=9.0)
    assert fixed.changes == [] and fixed.basis == "3, set in the study file"


def test_a_witness_too_slow_even_alone_is_withheld_until_a_new_timing_says_it_can_serve():
    """Issue 35.3: first words slower alone than the designed delay's short end: limit 0, never
    drawn; the study's rule then holds (the overflow witness, else the masked wait), and the
    match records what was withheld and why. A faster timing brings it back."""
    e = Estimate(t1_s=None, delay_s=4.0, headroom=0.7, fixed=None)
    e.first_s = 3.5  # 0.7 × 4 / 3.5 rounds down to 0, but alone it is in time: one game
    assert e.limit == 1 and "3.50 s alone ≤ 4.00 s designed: 1" in e.basis
    e.first_s = 4.5
    assert e.limit == 0 and "too slow even alone" in e.basis

    r = make([LOCAL, ELIZA], capacity={"Sierra": "auto"}, overflow_witness="Eliza")
    cap = r.capacity
    cap.observe("Sierra", 30.0, 1, first_s=25.0, load=9.5)  # 25 s to its first words, alone
    why = cap.why_withheld("Sierra")
    assert cap.limit("Sierra") == 0 and why.startswith("cannot answer in time even alone: first words take 25.00 s")
    assert cap.to_retime() == ["Sierra"]
    for i in range(3):
        r.join(f"p{i}", 0)
    got = r.poll(1000)
    assert [m.seats["A"].witness for m in got] == ["Eliza"] * 3
    assert all(m.allocation == {"withheld": {"Sierra": why}, "overflow": True, "waited": False} for m in got)
    assert cap.withheld_draws == {"Sierra": 3} and cap.overflowed == 3

    alone = make([LOCAL], capacity={"Sierra": "auto"})  # no overflow witness: the participant waits
    alone.capacity.observe("Sierra", 9.0, 1, first_s=9.0)
    alone.join("q", 0)
    assert alone.poll(5000) == [] and "q" in alone.stalled and alone.capacity.deferred == 1
    alone.capacity.observe("Sierra", 0.5, 1, first_s=0.5, retimed=True)  # re-timed: replaces the mean
    assert alone.capacity.limit("Sierra") >= 1 and "re-timed while withheld" in alone.capacity.estimates["Sierra"].why
    assert alone.poll(6000) == []  # stalled until told to retry
    alone.retry()
    m = alone.poll(7000)
    assert [x.seats["A"].witness for x in m] == ["Sierra"] and m[0].allocation is None


def test_a_reply_that_gave_up_teaches_the_estimate_a_lower_bound():
    """A model with no words in time (the fallback wrote the reply) is slow, not broken: its give-up
    time counts as a timing, so the estimate learns what the fallback share shows."""
    e = Estimate(t1_s=None, delay_s=4.0, headroom=0.7, fixed=None)
    cap = Capacity(estimates={"m": e}, alpha=0.5)
    cap.observe("m", 6.0, 1, first_s=6.0, gave_up=True, load=11.0)
    assert e.limit == 0 and e.why.startswith("a reply had no words in time (the fallback wrote it): first words in "
                                             "at least 6.00 s alone")
    assert cap.generating.get("m", 0) == 0
