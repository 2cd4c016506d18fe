"""The static-test store (store/static.py) on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from sqlalchemy import text

from turinglab.game.static_config import parse_static_study, preset_study
from turinglab.store import Store, StoreError, StudyFrozen
from turinglab.store.static import ResponseIn, StimulusIn, TrialIn, plan_session

AGENTS = ["m1", "m2", "m3"]


def _fill(st: Store, sid: int, n_stim: int = 30) -> None:
    stimuli = [StimulusIn(f"cue{i}", text=f"cue {i}") for i in range(n_stim)]
    responses = []
    for i in range(n_stim):
        for k in range(3):
            responses.append(ResponseIn(f"cue{i}/h{k}", f"cue{i}", f"h{k}", "human", f"P{k}"))
        for a in AGENTS:
            responses.append(ResponseIn(f"cue{i}/{a}", f"cue{i}", a, "machine", a))
    st.add_items(sid, stimuli, responses)


def test_items_trials_append_only_and_frozen(db_url):
    with Store(db_url) as st:
        sid = st.register_static_study(preset_study("w", "word"))
        _fill(st, sid)
        items = st.items(sid)
        assert len(items) == 180 and Counter(i.truth for i in items) == {"human": 90, "machine": 90}
        judge = st.create_participant(label="j1", prolific_pid="PP1", consent_ms=1)
        assert st.append_trials(sid, [TrialIn(judge, items[0].id, 0, "machine", rt_ms=900),
                                      TrialIn(judge, items[1].id, 1, "human", rt_ms=1200)]) == 2
        # a gap in seq: nothing of the batch is stored
        with pytest.raises(StoreError, match="seq 5 .*expected 3"):
            st.append_trials(sid, [TrialIn(judge, items[2].id, 2, "human"), TrialIn(judge, items[3].id, 5, "human")])
        assert [t.answer for t in st.trials(sid)] == ["machine", "human"]
        with pytest.raises(StoreError, match="answer must be"):
            st.append_trials(sid, [TrialIn(judge, items[2].id, 2, "robot")])
        # append-only in the database itself
        with pytest.raises(Exception, match="append-only"):
            with st.engine.begin() as conn:
                conn.execute(text("UPDATE static_trials SET answer = 'human'"))
        with pytest.raises(Exception, match="append-only"):
            with st.engine.begin() as conn:
                conn.execute(text("DELETE FROM static_trials"))
        assert len(st.trials(sid)) == 2
        # frozen once it has trials; the same config finds the same row
        assert st.register_static_study(preset_study("w", "word")) == sid
        changed = parse_static_study("preset: zhang-2023\nname: w\nsession: {items: 10}\n")
        with pytest.raises(StudyFrozen, match="judge trial"):
            st.register_static_study(changed)
        assert st.static_study(st.register_static_study(changed, new_version=True)).version == 2
        # duplicate keys: all or nothing
        with pytest.raises(StoreError, match="nothing was stored"):
            st.add_items(sid, [StimulusIn("new")], [ResponseIn("cue0/h0", "new", "x", "human", "P0")])
        assert len(st.items(sid)) == 180


def test_judge_session_is_balanced_and_resumable(db_url):
    with Store(db_url) as st:
        study = parse_static_study("preset: zhang-2023\nname: s\nsession: {items: 20, feedback_items: 4}\n")
        sid = st.register_static_study(study)
        _fill(st, sid)
        judge = st.create_participant(label="j")
        sess = st.start_judge_session(sid, judge, seed=3)
        items = {i.id: i for i in st.items(sid)}
        test = [items[p.response_id] for p in sess.items if p.phase == "test"]
        assert len(test) == 20 and [p.phase for p in sess.items[:4]] == ["feedback"] * 4
        assert Counter(i.truth for i in test) == {"human": 10, "machine": 10}
        per_agent = Counter(i.agent for i in test if i.truth == "machine")
        assert max(per_agent.values()) - min(per_agent.values()) <= 1 and set(per_agent) == set(AGENTS)
        stimuli = [items[p.response_id].stimulus_id for p in sess.items]
        assert len(set(stimuli)) == len(stimuli)  # no stimulus twice
        # resuming: same plan, progress counted
        st.append_trials(sid, [TrialIn(judge, sess.items[0].response_id, 0, "human", session_id=sess.id)])
        again = st.start_judge_session(sid, judge, seed=99)
        assert again.id == sess.id and again.items == sess.items and again.done == 1


def test_plan_random_order_and_controls_and_shortage(sqlite_url):
    with Store(sqlite_url) as st:
        study = parse_static_study("preset: zhang-2023\nname: c\nsession: {items: 12, control_items: 2}\n")
        sid = st.register_static_study(study)
        _fill(st, sid, n_stim=12)
        st.add_items(sid, [StimulusIn("ctl")], [ResponseIn("ctl/1", "ctl", "obviously machine", "machine", "control", control=True),
                                                ResponseIn("ctl/2", "ctl", "obviously human", "human", "control", control=True)])
        items = st.items(sid)
        orders = {tuple(p.response_id for p in plan_session(items, study, random.Random(s))) for s in range(5)}
        assert len(orders) == 5
        plan = plan_session(items, study, random.Random(1))
        assert sum(p.control for p in plan) == 2 and len(plan) == 14
        judge = st.create_participant()
        ctl = [i for i in items if i.control]
        st.append_trials(sid, [TrialIn(judge, ctl[0].id, 0, "machine"), TrialIn(judge, ctl[1].id, 1, "machine")])
        assert [t.control_correct for t in st.trials(sid)] == [ctl[0].truth == "machine", ctl[1].truth == "machine"]
        big = parse_static_study("preset: zhang-2023\nname: c2\nsession: {items: 40}\n")
        with pytest.raises(StoreError, match="not enough"):
            plan_session(items, big, random.Random(0))


def test_topic_control_answer_is_scored(sqlite_url):
    with Store(sqlite_url) as st:
        sid = st.register_static_study(preset_study("conv", "conversation"))
        st.add_items(sid, [StimulusIn("t1", fields={"control_answer": "sports", "control_choices": ["sports", "food"]})],
                     [ResponseIn("t1/3", "t1", "A: hi", "machine", "bot", payload={"length": 3}),
                      ResponseIn("t1/6", "t1", "A: hi", "machine", "bot", payload={"length": 6})])
        a, b = (i.id for i in st.items(sid))
        j = st.create_participant()
        st.append_trials(sid, [TrialIn(j, a, 0, "human", answers={"control": "sports", "speakers": {"A": "human"}}),
                               TrialIn(j, b, 1, "human", answers={"control": "food"})])
        assert [t.control_correct for t in st.trials(sid)] == [True, False]


def _deal(url: str, sid: int, judges: list[str], go, out) -> None:  # noqa: ANN001 - a process of its own
    with Store(url) as st:
        go.wait()
        out.put({j: st.start_judge_session(sid, j, seed=random.getrandbits(32)).id for j in judges})


def test_one_judge_session_per_study_and_judge_across_processes(db_url):
    """Two processes deal the same judges at once: one session row each, both get the same id."""
    import multiprocessing as mp

    from sqlalchemy.exc import IntegrityError

    with Store(db_url) as st:
        sid = st.register_static_study(preset_study("w1s", "word"))
        _fill(st, sid, n_stim=60)
        judges = [st.create_participant(label=f"j{i}", consent_ms=1) for i in range(12)]
    ctx = mp.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_deal, args=(db_url, sid, judges, go, out)) for _ in range(2)]
    for p in procs:
        p.start()
    go.set()
    got = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert got[0] == got[1]  # the loser of each race got the winner's session
    with Store(db_url) as st:
        rows = st.judge_sessions(sid)
        assert sorted(r.judge_id for r in rows) == sorted(judges)
        # the database itself refuses a second session of a judge
        with pytest.raises(IntegrityError):
            with st.engine.begin() as conn:
                conn.execute(text("INSERT INTO static_sessions (id, study_id, judge_id, plan, created_ms) "
                                  "VALUES ('sdup', :s, :j, '{}', 1)"), {"s": sid, "j": judges[0]})


def test_sessions_complete_in_one_batch_without_scanning_the_trials(sqlite_url):
    """A batch of several judges' answers marks complete exactly the sessions it fills, and
    neither the write nor a session's progress reads the whole trials table (each answer did
    once, so its cost grew with every trial stored): SQLite's plan for each statement is checked."""
    from sqlalchemy import event

    with Store(sqlite_url) as st:
        study = parse_static_study("preset: zhang-2023\nname: c\nsession: {items: 4}\n")
        sid = st.register_static_study(study)
        _fill(st, sid)
        judges = [st.create_participant(label=f"j{k}") for k in range(3)]
        sess = {j: st.start_judge_session(sid, j, seed=k) for k, j in enumerate(judges)}
        # judges 0 and 1 answer 3 items, judge 2 answers one, in one batch
        first = [TrialIn(j, sess[j].items[q].response_id, q, "human", session_id=sess[j].id)
                 for j, n in zip(judges, (3, 3, 1)) for q in range(n)]
        st.append_trials(sid, first)
        assert [st.judge_session(sess[j].id).completed_ms for j in judges] == [None, None, None]
        seen: list[str] = []
        event.listen(st.engine, "before_cursor_execute", lambda *a: seen.append(a[2]))
        # the last item of judge 0 (its session completes) and the second of judge 2 (does not)
        st.append_trials(sid, [TrialIn(judges[0], sess[judges[0]].items[3].response_id, 3, "machine",
                                       session_id=sess[judges[0]].id),
                               TrialIn(judges[2], sess[judges[2]].items[1].response_id, 1, "machine",
                                       session_id=sess[judges[2]].id)])
        done = [st.judge_session(sess[j].id) for j in judges]
        assert [d.done for d in done] == [4, 3, 2]
        assert done[0].completed_ms is not None and done[1].completed_ms is None and done[2].completed_ms is None
        reads = [q for q in seen if "static_trials" in q and not q.lstrip().upper().startswith("INSERT")]
        assert reads  # the checks below looked at the statements that count and check trials
        with st.engine.connect() as conn:
            raw = conn.connection.driver_connection
            for q in reads:
                plan = " ".join(str(r[-1]) for r in raw.execute("EXPLAIN QUERY PLAN " + q, ["x"] * q.count("?")))
                assert "SCAN static_trials" not in plan, (q, plan)
