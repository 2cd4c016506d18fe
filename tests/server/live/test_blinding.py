"""Blinding: before the verdict, nothing the interrogator receives tells a human witness from an AI.

Records every frame the interrogator gets in a human game and in an AI (ELIZA) game and
compares frame types, key sets, value types, ids, error texts and reply timing.
"""

from __future__ import annotations

import json
import re
import time
from contextlib import contextmanager

import numpy as np
import pytest
from scipy import stats

from turinglab.game.config import Allocation, Rules, Study, Timing, WitnessSpec
from turinglab.server.app import create_app
from turinglab.server.testing import WsPlayer, serve_in_thread
from tests.server.live.test_cluster import prefix, redis_url  # noqa: F401 - the fixture of the two-worker variant

TIMING = Timing(base_s=0.15, s_per_char=0.004, gamma_shape=2.5, gamma_scale=0.04)
RULES = Rules(time_limit_s=30, typing_min_s=0.05, typing_jitter_s=0.05)
ELIZA = WitnessSpec(codename="Eliza", kind="eliza", fallback=None, timing=TIMING)
QUESTIONS = [f"question number {k}: how are you feeling today?" for k in range(10)]


def shape(x, path="", out=None) -> set:
    """Every (path, type) pair in a frame; list items share the path `[]`."""
    out = set() if out is None else out
    if isinstance(x, dict):
        out.add((path, "object:" + ",".join(sorted(x))))
        for k, v in x.items():
            shape(v, f"{path}.{k}", out)
    elif isinstance(x, list):
        out.add((path, "list"))
        for v in x:
            shape(v, path + "[]", out)
    else:
        out.add((path, type(x).__name__))
    return out


async def play(base: str, ai: bool, base2: str | None = None) -> tuple[WsPlayer, list[float], str]:
    """Play one scripted game; return the interrogator, reply delays, and the witness's secret.
    With `base2` (a second worker of a cluster) the second player connects there."""
    if ai:
        inter = await (await WsPlayer.create(base2 or base)).connect()
        await inter.send({"type": "join"})
        await inter.phase("game")
        witness = None
    else:
        a, b = [await (await WsPlayer.create(x)).connect() for x in (base, base2 or base)]
        for p in (a, b):
            await p.send({"type": "join"})
        sa = await a.phase("game")
        sb = await b.phase("game")
        assert {sa["game"]["role"], sb["game"]["role"]} == {"interrogator", "witness"}
        inter, witness = (a, b) if sa["game"]["role"] == "interrogator" else (b, a)
    # the same refusals in both games
    await inter.send("{oops")
    await inter.send({"type": "message", "conv": "A", "text": "x" * 400, "client_id": "long"})
    delays = []
    for k, q in enumerate(QUESTIONS):
        t0 = time.monotonic()
        await inter.send({"type": "message", "conv": "A", "text": q, "client_id": f"q{k}"})
        await inter.next("ack", client_id=f"q{k}")
        if k == 0:
            await inter.send({"type": "message", "conv": "A", "text": "again", "client_id": "twice"})
        if witness is not None:
            await witness.next("message", text=q)
            # a human types the same reply as ELIZA's length class: echo a fixed sentence
            await witness.send({"type": "message", "text": f"I am fine, thanks for asking ({k})",
                                "client_id": f"w{k}"})
        await _reply(inter)
        delays.append(time.monotonic() - t0)
    secret = witness.pid if witness else "Eliza"
    inter.witness = witness  # the human witness's player (None in an AI game)
    return inter, delays, secret


def shown_times(inter: WsPlayer) -> list[tuple[int, int, float]]:
    """For each question of `play`: the `t_ms` of its ack, the `t_ms` of the witness reply after it,
    and the seconds between the two frames' arrivals."""
    out, asked = [], None
    for f, r in zip(inter.frames, inter.recv_times):
        if f["type"] == "ack" and re.fullmatch(r"q\d+", f["client_id"]):
            asked = (f["t_ms"], r)
        elif f["type"] == "message" and f["from"] == "them" and asked is not None:
            out.append((asked[0], f["t_ms"], r - asked[1]))
            asked = None
    return out


async def _reply(p: WsPlayer) -> dict:
    while True:
        f = await p.next("message", timeout=10)
        if f["from"] == "them":
            return f


@pytest.fixture(params=["one process", "two workers"])
def servers(request, tmp_path):
    """Serve a study: one process on SQLite, or two workers sharing PostgreSQL and Redis (the
    players of a human game on different workers; the AI game's interrogator on the second)."""
    @contextmanager
    def serve(s: Study, n: int, **kw):
        if request.param == "one process":
            with serve_in_thread(create_app(s, f"sqlite:///{tmp_path}/b{n}.db", **kw)) as base:
                yield base, None
            return
        pg = request.getfixturevalue("postgres_url")  # one database (per test), two studies
        redis = request.getfixturevalue("redis_url")
        pre = prefix()
        a1, a2 = [create_app(s, pg, redis_url=redis, redis_prefix=pre, **kw) for _ in range(2)]
        with serve_in_thread(a1) as b1, serve_in_thread(a2) as b2:
            yield b1, b2
    return serve


async def test_interrogator_cannot_tell_human_from_ai(servers, tmp_path):
    recorded = {}
    for ai in (False, True):
        s = Study(name=f"blind-{ai}", rules=RULES, witnesses=(ELIZA,) if ai else (),
                  allocation=Allocation(human_ratio=0.0 if ai else 1.0))
        with servers(s, int(ai), rng_seed=3, human_timing=TIMING, initial_ai_wait_s=0.1) as (base, base2):
            inter, delays, secret = await play(base, ai, base2)
            before = list(inter.frames)  # everything before the verdict
            shown = shown_times(inter)
            if inter.witness is not None:  # the human wrote each reply before it was shown
                written = [f["t_ms"] for f in inter.witness.frames if f["type"] == "ack"]
                assert len(written) == len(shown) and all(w <= t for w, (_, t, _) in zip(written, shown))
                assert any(w < t for w, (_, t, _) in zip(written, shown))  # held, then shown
            await inter.send({"type": "verdict", "choice": "human", "confidence": 50})
            reveal = (await inter.phase("reveal"))["game"]["reveal"]
            # the reveal (and only the reveal) says which AI it was
            assert reveal["seats"] == ({"A": {"kind": "ai", "witness": "Eliza", "about": "ELIZA chatbot"}} if ai
                                       else {"A": {"kind": "human"}})
            recorded[ai] = (before, delays, secret)
            if base2 is None:  # the log (not the frames) says who wrote each reply
                from turinglab.store import Store

                store = Store(f"sqlite:///{tmp_path}/b{int(ai)}.db")
                try:
                    gid = store.games()[0].id
                    sources = {e.payload.get("source") for e in store.events(gid) if e.type == "message"
                               and e.actor == "A"}
                finally:
                    store.close()
                assert sources == {"model" if ai else "human"}
            # a reply's time (`t_ms`, shown beside it) is when it was shown, not when it was written:
            # at least the designed floor after the question was stored, as the interrogator saw it come
            for asked, t, seen_after in shown:
                assert t - asked >= TIMING.base_s * 1000, (ai, shown)
                assert abs((t - asked) / 1000 - seen_after) < 0.5, (ai, shown)
            await inter.close()

    (h_frames, h_delays, h_secret), (a_frames, a_delays, a_secret) = recorded[False], recorded[True]
    # 1. the same frame types, and for each type the same key sets and value types
    types = {f["type"] for f in h_frames}
    assert types == {f["type"] for f in a_frames} == {"state", "ack", "message", "error", "typing"}
    for t in types:
        hs = set().union(*(shape(f) for f in h_frames if f["type"] == t))
        as_ = set().union(*(shape(f) for f in a_frames if f["type"] == t))
        assert hs == as_, f"{t} frames differ: human-only {hs - as_}, AI-only {as_ - hs}"
    # 2. no identity anywhere: no codename, no witness participant id, no kind field
    for frames, secret in ((h_frames, h_secret), (a_frames, a_secret)):
        blob = json.dumps(frames)
        assert secret not in blob and "Eliza" not in blob and '"kind"' not in blob and '"about"' not in blob
        # nor who wrote a reply (issue 35.1: the log records it, the frames do not carry it)
        assert not {'"source"', '"model"', '"tries"', '"latency_ms"'} & set(re.findall(r'"[a-z_]+"', blob))
    # 3. ids are random 16-hex strings, never reused across games
    ids = [[f["id"] for f in frames if f["type"] in ("message", "ack")] for frames in (h_frames, a_frames)]
    for group in ids:
        assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in group)
    assert not set(ids[0]) & set(ids[1])
    gids = [next(f["game"]["game_id"] for f in fr if f["type"] == "state" and f["game"]) for fr in (h_frames, a_frames)]
    assert all(re.fullmatch(r"g[0-9a-f]{16}", g) for g in gids)
    # 4. the same error codes and texts
    errs = [[(f["code"], f["message"]) for f in fr if f["type"] == "error"] for fr in (h_frames, a_frames)]
    assert errs[0] == errs[1] and {c for c, _ in errs[0]} == {"bad_frame", "too_long", "not_your_turn"}
    # 5. timing: every reply is held at least the designed minimum, and the two kinds' delays
    #    are not distinguishable (exact two-sample Kolmogorov-Smirnov test)
    floor = TIMING.base_s
    assert min(h_delays) >= floor and min(a_delays) >= floor
    assert stats.ks_2samp(h_delays, a_delays).pvalue > 0.01, (np.round(h_delays, 3), np.round(a_delays, 3))
    # typing indicators came before every reply in both games
    for fr in (h_frames, a_frames):
        seq = [f["type"] for f in fr if f["type"] in ("typing", "message")]
        assert seq.count("typing") == len(QUESTIONS)


async def test_three_player_conversations_look_alike(sqlite_url):
    """In a three-player game the human's and the AI's conversations reach the interrogator alike."""
    s = Study(name="blind-three", format="three-player", rules=RULES, witnesses=(ELIZA,))
    app = create_app(s, sqlite_url, rng_seed=4, human_timing=TIMING)
    with serve_in_thread(app) as base:
        a, b = [await (await WsPlayer.create(base)).connect() for _ in range(2)]
        for p in (a, b):
            await p.send({"type": "join"})
        sa, sb = await a.phase("game"), await b.phase("game")
        inter, witness = (a, b) if sa["game"]["role"] == "interrogator" else (b, a)
        hseat = (sb if inter is a else sa)["game"]["seat"]
        for k in range(4):
            for conv in ("A", "B"):
                await inter.send({"type": "message", "conv": conv, "text": f"q{k} to {conv}, how are you?",
                                  "client_id": f"{conv}{k}"})
            await witness.next("message", text=f"q{k} to {hseat}, how are you?")
            await witness.send({"type": "message", "text": f"fine thanks ({k})", "client_id": f"w{k}"})
            got = set()
            while got != {"A", "B"}:
                f = await inter.next("message")
                if f["from"] == "them":
                    got.add(f["conv"])
        frames = list(inter.frames)
        await inter.close()
        await witness.close()
    blob = json.dumps(frames)
    assert "Eliza" not in blob and witness.pid not in blob and '"kind"' not in blob
    for t in ("message", "typing", "ack"):
        per_conv = {c: [f for f in frames if f["type"] == t and f.get("conv", c) == c] for c in "AB"}
        if t == "ack":  # acks carry no conv: compare all of them
            per_conv = {c: [f for f in frames if f["type"] == "ack"] for c in "AB"}
        shapes = {c: set().union(*(shape(f) for f in fs)) for c, fs in per_conv.items()}
        assert shapes["A"] == shapes["B"], t
        assert len(per_conv["A"]) == len(per_conv["B"]), t


async def test_ai_reply_is_released_by_the_human_rule_on_the_hub_clock(tmp_path):
    """An AI reply is shown at t_q + max(elapsed, designed) on the hub clock, as a human's is,
    not `designed` after the reply task started (which comes after the question's commit)."""
    import asyncio

    from turinglab.server.live.hub import wall_clock
    from turinglab.witnesses.base import Reply, Witness

    class Slow(Witness):
        codename, kind = "Slow", "llm"

        async def reply(self, history, ctx):
            await asyncio.sleep(0.5)
            return Reply("i am fine")

    slow_timing = Timing(base_s=6.0, s_per_char=0.0, gamma_shape=1.0, gamma_scale=0.01)
    spec = WitnessSpec(codename="Slow", kind="local", fallback=None, timing=slow_timing)
    offset = [0]
    s = Study(name="blind-clock", rules=RULES, witnesses=(spec,), allocation=Allocation(human_ratio=0.0))
    app = create_app(s, f"sqlite:///{tmp_path}/c.db", rng_seed=3, human_timing=TIMING, initial_ai_wait_s=0.1,
                     clock=lambda: wall_clock() + offset[0], witness_factory=lambda sp, seed: Slow())
    with serve_in_thread(app) as base:
        inter = await (await WsPlayer.create(base)).connect()
        await inter.send({"type": "join"})
        await inter.phase("game")
        await inter.send({"type": "message", "conv": "A", "text": "how are you?", "client_id": "q"})
        await inter.next("ack", client_id="q")
        offset[0] = 10_000  # on the hub clock the designed delay (>= 6 s) has now passed
        t0 = time.monotonic()
        reply = await _reply(inter)
        assert reply["text"] == "i am fine"
        # the model's 0.5 s and the guard's first call (0.2-1.1 s on a loaded machine), not a further 6 s
        assert time.monotonic() - t0 < 4.0
        await inter.close()


def typing_gaps(inter: WsPlayer) -> list[float]:
    """Seconds from each "typing…" to the witness reply after it, as the interrogator received them."""
    gaps, shown_at = [], None
    for f, t in zip(inter.frames, inter.recv_times):
        if f["type"] == "typing":
            shown_at = t
        elif f["type"] == "message" and f["from"] == "them":
            assert shown_at is not None, f"reply {len(gaps)} came before typing…"
            gaps.append(t - shown_at)
            shown_at = None
    return gaps


def typing_study(name: str, rules: Rules, ai: bool) -> Study:
    return Study(name=f"{name}-{ai}", rules=rules, witnesses=(ELIZA,) if ai else (),
                 allocation=Allocation(human_ratio=0.0 if ai else 1.0))


async def test_typing_shows_for_a_while_before_every_reply_human_and_ai(tmp_path):
    """Short replies designed to come before "typing…" would: both kinds still show the indicator
    first, for at least typing_min_s, before every reply (the same rule for human and AI)."""
    slow_typing = Rules(time_limit_s=60, typing_min_s=0.3, typing_jitter_s=0.1)  # after the designed reply
    for ai in (False, True):
        app = create_app(typing_study("typing", slow_typing, ai), f"sqlite:///{tmp_path}/t{int(ai)}.db", rng_seed=4, human_timing=TIMING,
                         initial_ai_wait_s=0.1)
        with serve_in_thread(app) as base:
            inter, _, _ = await play(base, ai)
            gaps = typing_gaps(inter)
            assert len(gaps) == len(QUESTIONS)
            # server-side the gap is >= typing_min_s; allow for frames delayed on a busy machine
            assert min(gaps) >= slow_typing.typing_min_s / 2, (ai, gaps)
            await inter.close()


async def test_a_late_typing_indicator_still_shows_for_typing_min_before_the_reply(tmp_path):
    """When the indicator's commit is slow (a loaded disk), the reply waits typing_min_s after
    the indicator really showed, not after when it was planned to; human and AI alike."""
    import asyncio

    from turinglab.game.events import TYPING

    rules = Rules(time_limit_s=60, typing_min_s=0.3, typing_jitter_s=0.0)
    for ai in (False, True):
        app = create_app(typing_study("slow-typing", rules, ai), f"sqlite:///{tmp_path}/s{int(ai)}.db", rng_seed=4, human_timing=TIMING,
                         initial_ai_wait_s=0.1)
        with serve_in_thread(app) as base:
            writer = app.state.hub.writer
            append = writer.append

            async def slow_typing(game_id, events, append=append):
                events = list(events)
                if any(e.type == TYPING for e in events):
                    await asyncio.sleep(1.0)  # past the reply's designed time
                return await append(game_id, events)

            writer.append = slow_typing
            inter, _, _ = await play(base, ai)
            gaps = typing_gaps(inter)
            assert len(gaps) == len(QUESTIONS)
            assert min(gaps) >= rules.typing_min_s * 0.8, (ai, gaps)
            await inter.close()
