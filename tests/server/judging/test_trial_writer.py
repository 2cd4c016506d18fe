"""Group commit of judge answers (server/judging/trial_writer.py), on SQLite and PostgreSQL: concurrent
answers are stored exactly once and acknowledged only after their batch is committed, a failing
answer fails only its own request, and stopping writes what is queued."""

from __future__ import annotations

import asyncio
import re
import sys
from collections import Counter
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[2]))
from static_judge_data import make_study  # noqa: E402

from turinglab.server.judging.pages import create_static_app  # noqa: E402
from turinglab.server.judging.trial_writer import TrialWriter  # noqa: E402
from turinglab.store.api import Store  # noqa: E402
from turinglab.store.db import UnknownId  # noqa: E402
from turinglab.store.static import TrialIn  # noqa: E402


def field(html: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([\w.]+)"', html).group(1)


def test_concurrent_answers_over_http_are_stored_exactly_once(db_url, tmp_path):
    n_judges, rounds = 24, 3
    with Store(db_url) as st:
        sid = make_study(st, "word", None, items=rounds, n_stimuli=8, min_rt_ms=0)
        study = st.static_study(sid).study
    app = create_static_app(study, db_url, rng_seed=1)

    async def run() -> tuple[list[int], int]:
        statuses: list[int] = []
        async with app.router.lifespan_context(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                async def new_judge() -> tuple[str, str]:
                    pid = (await c.post("/start")).headers["location"].rsplit("/", 1)[1]
                    tok = field((await c.get(f"/p/{pid}")).text, "csrf")
                    await c.post(f"/p/{pid}/consent", data={"agree": "yes", "csrf": tok})
                    return pid, tok

                judges = [await new_judge() for _ in range(n_judges)]

                async def answer(pid: str, tok: str, twice: bool) -> list[int]:
                    html = (await c.get(f"/p/{pid}")).text
                    data = {"csrf": tok, "n": field(html, "n"), "shown": field(html, "shown"), "answer": "human"}
                    posts = [c.post(f"/p/{pid}/answer", data=data) for _ in range(2 if twice else 1)]
                    return [r.status_code for r in await asyncio.gather(*posts)]

                for _ in range(rounds):  # every judge answers at once; every 3rd sends the same answer twice
                    got = await asyncio.gather(*(answer(p, t, i % 3 == 0) for i, (p, t) in enumerate(judges)))
                    statuses += [s for g in got for s in g]
        return statuses, app.state.trial_writer.batches

    statuses, batches = asyncio.run(run())
    assert set(statuses) == {303}, Counter(statuses)  # the repeated POST is acknowledged, not refused
    assert batches >= 1  # answers really shared a transaction
    with Store(db_url) as st:
        trials = st.trials(sid)
        sessions = st.judge_sessions(sid)
    assert len(trials) == n_judges * rounds
    assert Counter((t.judge_id, t.seq) for t in trials) == {(s.judge_id, q): 1 for s in sessions for q in range(rounds)}
    assert all(s.done == rounds and s.completed_ms is not None for s in sessions)


def _setup(url: str, n: int) -> tuple[Store, int, list[str], list[int]]:
    st = Store(url)
    sid = make_study(st, "word", None, items=2, n_stimuli=8, min_rt_ms=0)
    judges = [st.create_participant(consent_ms=1) for _ in range(n)]
    return st, sid, judges, [i.id for i in st.items(sid)]


def test_a_failing_answer_does_not_lose_the_others(db_url):
    st, sid, judges, items = _setup(db_url, 20)
    good = [TrialIn(j, items[k % len(items)], seq=0, answer="machine") for k, j in enumerate(judges)]
    bad = [TrialIn(judges[0], 10**9, seq=1, answer="human"),  # no such item
           TrialIn(judges[1], items[0], seq=0, answer="human")]  # judges[1]'s seq 0 is also in `good`
    writer = TrialWriter(st, sid)

    async def run() -> list:
        writer.start()
        out = await asyncio.gather(*(writer.append(t) for t in [*good[:10], *bad, *good[10:]]),
                                   return_exceptions=True)
        await writer.stop()
        return out

    try:
        out = asyncio.run(run())
        assert out[:10] + out[12:] == [None] * 20
        assert isinstance(out[10], UnknownId)
        assert "seq 0" in str(out[11])  # the second answer of an item is refused, the first is kept
        stored = st.trials(sid)
        assert Counter((t.judge_id, t.seq) for t in stored) == {(j, 0): 1 for j in judges}
        assert {t.judge_id: t.answer for t in stored}[judges[1]] == "machine"
    finally:
        st.close()


def test_answers_share_one_transaction_and_stop_writes_what_is_queued(db_url):
    st, sid, judges, items = _setup(db_url, 50)
    writer = TrialWriter(st, sid)

    async def run() -> None:
        writer.start()
        tasks = [asyncio.create_task(writer.append(TrialIn(j, items[0], seq=0, answer="human"))) for j in judges]
        await asyncio.sleep(0)  # queued, not yet written
        await writer.stop()  # writes them all before it returns
        assert sorted(t.judge_id for t in st.trials(sid)) == sorted(judges)
        assert await asyncio.gather(*tasks) == [None] * len(judges)  # each acknowledged

    try:
        asyncio.run(run())
        assert writer.batches == 1  # 50 answers, one append_trials call
    finally:
        st.close()
