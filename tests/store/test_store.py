"""The store on SQLite and PostgreSQL: studies, participants, games, the event log, derived rows."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from turinglab.game.config import Rules, Study, config_hash
from turinglab.game.engine import Game, GiveVerdict, ReportAbuse, Send, Tick
from turinglab.game.events import Event, Identity
from turinglab.store import Store, StoreError, StudyFrozen, UnknownId, database_url

T0 = 1_700_000_000_000
I = "interrogator"
AI = {"kind": "ai", "witness": "Dragon", "selection_prob": 0.25}


@pytest.fixture
def store(db_url):
    s = Store(db_url)
    yield s
    s.close()


def study(**kw) -> Study:
    return Study.model_validate({"name": "s", "witnesses": [{"codename": "Dragon", "kind": "eliza"}], **kw})


def new_game(store: Store, fmt: str = "two-player", seats=None) -> tuple[str, Game]:
    sid = store.register_study(study(format=fmt))
    pid = store.create_participant(label="x")
    gid = store.create_game(sid, fmt, seats or {"A": AI}, pid, T0)
    return gid, Game.start(fmt, Rules(), T0)


def test_database_url_resolution(monkeypatch):
    monkeypatch.delenv("DATABASE_URL", raising=False)
    assert database_url() == "sqlite:///./turinglab.db"
    monkeypatch.setenv("DATABASE_URL", "postgresql://u@h/db")
    assert database_url() == "postgresql+psycopg://u@h/db"
    assert database_url("sqlite:///x.db") == "sqlite:///x.db"
    with pytest.raises(StoreError, match="unsupported database 'mysql'"):
        database_url("mysql://u@h/db")
    with pytest.raises(StoreError, match="cannot read database URL"):
        database_url("not a url")


def test_sqlite_durability_settings(sqlite_url):
    s = Store(sqlite_url)
    with s.engine.connect() as c:
        assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert c.exec_driver_sql("PRAGMA synchronous").scalar() == 2  # FULL
        assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    s.close()


def test_missing_sqlite_folder_is_a_clear_error(tmp_path):
    with pytest.raises(StoreError, match="does not exist"):
        Store(f"sqlite:///{tmp_path}/nope/x.db")


def test_register_study_freezes_once_it_has_games(store):
    a = study()
    sid = store.register_study(a)
    assert store.register_study(a) == sid
    assert store.get_study(sid).config_hash == config_hash(a)
    # no games yet: the config may still change in place
    b = study(rules={"time_limit_s": 120})
    assert store.register_study(b) == sid
    assert store.get_study(sid).study.rules.time_limit_s == 120
    store.create_game(sid, "two-player", {"A": AI}, None, T0)
    c = study(rules={"time_limit_s": 60})
    with pytest.raises(StudyFrozen, match="version 1 already has 1 game") as err:
        store.register_study(c)
    assert "version:" in str(err.value)
    sid2 = store.register_study(c, new_version=True)
    info = store.get_study(sid2)
    assert sid2 != sid and info.version == 2 and info.study.rules.time_limit_s == 60
    assert info.config_hash == config_hash(info.study)
    assert store.register_study(c, new_version=True) == sid2  # same config again: same version
    assert store.get_study(sid).study.rules.time_limit_s == 120  # the old one is untouched
    with pytest.raises(UnknownId):
        store.get_study(99999)


def test_participants(store):
    pid = store.create_participant(prolific_pid="PRO1", demographics={"age": 30})
    store.update_participant(pid, consent_ms=T0, demographics={"llm_knowledge": "some"})
    p = store.get_participant(pid)
    assert p.consent_ms == T0 and p.demographics == {"age": 30, "llm_knowledge": "some"}
    assert store.find_participant(prolific_pid="PRO1").id == pid
    assert store.find_participant(prolific_pid="nobody") is None
    other = store.create_participant(label="terminal user", t_ms=4_000_000_000_000)
    assert [x.id for x in store.participants()][-1] == other and len(store.participants()) == 2
    assert store.find_participant(label="terminal user").id == other
    with pytest.raises(StoreError, match="exactly one"):
        store.find_participant()
    with pytest.raises(StoreError, match="cannot update participant field"):
        store.update_participant(pid, nmae="x")
    with pytest.raises(UnknownId, match="no participant"):
        store.get_participant("p-missing")


def test_create_game_validates(store):
    sid = store.register_study(study())
    with pytest.raises(StoreError, match="witness seats A"):
        store.create_game(sid, "two-player", {"A": AI, "B": AI}, None, T0)
    with pytest.raises(StoreError, match="needs its witness codename"):
        store.create_game(sid, "two-player", {"A": {"kind": "ai"}}, None, T0)
    with pytest.raises(StoreError, match="is two-player, not three-player"):
        store.create_game(sid, "three-player", {"A": AI, "B": {"kind": "human"}}, None, T0)
    with pytest.raises(UnknownId, match="no participant"):
        store.create_game(sid, "two-player", {"A": AI}, "p-missing", T0)
    sid3 = store.register_study(study(name="t", format="three-player"))
    with pytest.raises(StoreError, match="one human and one AI"):
        store.create_game(sid3, "three-player", {"A": AI, "B": AI}, None, T0)
    assert store.games() == []


def test_has_games_says_which_study_has_any(store):
    empty = store.register_study(study(name="empty"))
    gid, _ = new_game(store)
    played = store.game(gid).study_id
    assert store.has_games(played) and not store.has_games(empty) and not store.has_games(10_000)


def test_events_round_trip_with_identity_and_hash(store):
    gid, g = new_game(store)
    store.append_events(gid, g.log)
    out = g.apply(Send(I, "héllo <b>&"), T0 + 5)
    out2 = g.apply(Send("A", "hi"), T0 + 900)
    store.append_events(gid, out.events + out2.events)
    rows = store.event_rows(gid)
    assert [r.event for r in rows] == g.log
    info = store.game(gid)
    assert all(r.identity == {"A": Identity(**AI).to_dict()} for r in rows)
    assert all(r.study_hash == info.study_hash for r in rows)
    assert info.seats == {"A": Identity(**AI)}
    assert Game.replay(store.events(gid)).state_dict() == g.state_dict()


def test_append_is_atomic_and_checks_sequence(store):
    gid, g = new_game(store)
    store.append_events(gid, g.log)
    g.apply(Send(I, "a"), T0 + 1)
    g.apply(Send("A", "b"), T0 + 2)
    with pytest.raises(StoreError, match="expected 1"):
        store.append_events(gid, g.log[2:])
    bad = [g.log[1], Event(99, T0, "message", I, "A", {"text": "x"})]
    with pytest.raises(StoreError, match="seq 99"):
        store.append_events(gid, bad)
    assert len(store.events(gid)) == 1  # nothing of the failed batches was stored
    with pytest.raises(StoreError):
        store.append_events(gid, g.log[0:1])  # appended twice
    with pytest.raises(UnknownId):
        store.append_events("g-missing", g.log[1:])


def test_events_are_append_only(store):
    gid, g = new_game(store)
    store.append_events(gid, g.log)
    for sql in ("update events set type = 'x'", "delete from events"):
        with pytest.raises(Exception, match="append-only"):
            with store.engine.begin() as c:
                c.execute(text(sql))
    assert store.events(gid) == g.log


@pytest.mark.parametrize("choice,correct", [("ai", True), ("human", False)])
def test_verdict_row_and_status_derived_from_events(store, choice, correct):
    gid, g = new_game(store)
    g.apply(Send(I, "hi"), T0 + 1)
    g.apply(Tick(), T0 + 300_000)
    store.append_events(gid, g.log)
    assert store.game(gid).status == "awaiting_verdict"
    g.apply(GiveVerdict(I, choice, 70, "reason"), T0 + 301_000)
    store.append_events(gid, g.log[-2:])
    info = store.game(gid)
    assert (info.status, info.end_reason, info.ended_ms) == ("ended", "verdict", T0 + 301_000)
    assert info.verdict.choice == choice and info.verdict.correct is correct and info.verdict.forced


@pytest.mark.parametrize("choice,correct", [("A", False), ("B", True)])
def test_three_player_correctness(store, choice, correct):
    gid, g = new_game(store, "three-player", {"A": AI, "B": {"kind": "human"}})
    g.apply(GiveVerdict(I, choice, 55), T0 + 10)
    store.append_events(gid, g.log)
    assert store.game(gid).verdict.correct is correct


def test_abuse_flag_set_flag_and_filters(store):
    gid, g = new_game(store)
    g.apply(ReportAbuse("A", "rude"), T0 + 1)
    store.append_events(gid, g.log)
    assert store.game(gid).flags == {"abuse_reported": True}
    store.set_flag(gid, "knows_witness", True)
    assert store.set_flag(gid, "abuse_reported", None) == {"knows_witness": True}
    info = store.game(gid)
    assert info.status == "ended" and info.end_reason == "abuse_report"
    other = store.create_game(info.study_id, "two-player", {"A": AI}, None, T0 + 5)
    assert [x.id for x in store.games(info.study_id)] == [gid, other]
    assert [x.id for x in store.games(interrogator_id=info.interrogator_id)] == [gid]
    assert [x.id for x in store.games(status="in_progress")] == [other]


def test_tags(store):
    gid, _ = new_game(store)
    t1 = store.add_tag(gid, "coder1", "reasons", "linguistic_style")
    assert store.add_tag(gid, "coder1", "reasons", "linguistic_style") == t1
    store.add_tag(gid, "coder2", "strategies", "small_talk")
    assert [(t.tagger, t.category) for t in store.tags(gid)] == [("coder1", "linguistic_style"),
                                                                ("coder2", "small_talk")]
    assert len(store.tags(taxonomy="reasons")) == 1
    with pytest.raises(UnknownId):
        store.add_tag("g-missing", "c", "reasons", "meta")


def test_record_verdict_for_imports(store):
    gid, _ = new_game(store)
    v = store.record_verdict(gid, "human", 90, None, T0)
    assert v.correct is False and store.game(gid).verdict == v


def test_concurrent_appends_from_threads(store):
    from concurrent.futures import ThreadPoolExecutor

    sid = store.register_study(study())
    games = {store.create_game(sid, "two-player", {"A": AI}, None, T0): Game.start("two-player", Rules(), T0)
             for _ in range(4)}

    def play(gid: str) -> int:
        g = games[gid]
        store.append_events(gid, g.log)
        for k in range(15):
            out = g.apply(Send(I if k % 2 == 0 else "A", f"m{k}"), T0 + k + 1)
            store.append_events(gid, out.events)
        return len(g.log)

    with ThreadPoolExecutor(4) as pool:
        counts = list(pool.map(play, list(games)))
    assert counts == [16] * 4
    for gid, g in games.items():
        assert store.events(gid) == g.log


def test_append_many_one_transaction_in_order(db_url):
    store = Store(db_url)
    sid = store.register_study(Study(name="append-many"))
    games = {}
    for k in range(3):
        i, w = store.create_participant(), store.create_participant()
        gid = store.create_game(sid, "two-player", {"A": {"kind": "human", "participant_id": w}}, i, 1000)
        games[gid] = Game.start("two-player", Rules(), 1000)
    g1, g2, g3 = games
    batches = [(g, list(games[g].log)) for g in games]
    out = games[g1].apply(Send("interrogator", "hi", "A"), 1001)
    batches.append((g1, out.events))  # a second batch of the same game, after its first
    out = games[g2].apply(GiveVerdict("interrogator", "ai", 70), 1002)
    batches.append((g2, out.events))
    store.append_many(batches)
    for gid, g in games.items():
        assert [e.to_dict() for e in store.events(gid)] == [e.to_dict() for e in g.log]
    assert store.game(g2).status == "ended" and store.game(g2).verdict.correct is False  # derived rows
    assert store.game(g1).status == "in_progress"
    # all or nothing: a bad batch (a gap in g3's log) stores nothing of the good one
    more = games[g1].apply(Send("A", "hello", "A"), 1003).events
    bad = [Event(5, 1004, "typing", "A", "A", {})]
    with pytest.raises(StoreError, match=f"game {g3}: event seq 5 does not continue the log"):
        store.append_many([(g1, more), (g3, bad)])
    assert len(store.events(g1)) == len(games[g1].log) - len(more)
    with pytest.raises(UnknownId, match="no game with id 'gnope'"):
        store.append_many([(g1, more), ("gnope", bad)])
    store.append_many([])  # nothing to do
    store.append_many([(g1, more)])
    assert [e.to_dict() for e in store.events(g1)] == [e.to_dict() for e in games[g1].log]
    store.close()


def test_existing_database_refuses_a_missing_sqlite_file(tmp_path, sqlite_url):
    from turinglab.store.db import existing_database

    missing = tmp_path / "nope.db"
    with pytest.raises(StoreError, match="no database at .*nope.db; run `turinglab db upgrade --db"):
        existing_database(f"sqlite:///{missing}")
    assert not missing.exists()
    Store(sqlite_url).close()
    assert existing_database(sqlite_url) == database_url(sqlite_url)
    assert existing_database("sqlite://") == "sqlite://"


def test_open_game_of_says_who_is_still_playing(store):
    """What a cluster asks when Redis lost its routes: a player still in a game may not join another."""
    sid = store.register_study(Study(name="open-game-of"))
    i, w, other = store.create_participant(), store.create_participant(), store.create_participant()
    gid = store.create_game(sid, "two-player", {"A": {"kind": "human", "participant_id": w}}, i, T0)
    g = Game.start("two-player", Rules(), T0)
    g.apply(Send(I, "hi", "A"), T0 + 1)
    store.append_events(gid, g.log)
    assert store.open_game_of(sid, i) == gid and store.open_game_of(sid, w) == gid
    assert store.open_game_of(sid, other) is None
    assert store.open_game_of(store.register_study(Study(name="another")), i) is None  # per study
    g.apply(Tick(), T0 + 300_000)  # time up: the witness may go on, the interrogator still judges
    store.append_events(gid, g.log[-1:])
    assert store.game(gid).status == "awaiting_verdict"
    assert store.open_game_of(sid, w) is None and store.open_game_of(sid, i) == gid
    g.apply(GiveVerdict(I, "human", 70, "r"), T0 + 301_000)
    store.append_events(gid, g.log[-2:])
    assert store.open_game_of(sid, i) is None
    assert store.open_game_of(sid, i, since_ms=T0) == gid and store.open_game_of(sid, w, since_ms=T0) == gid  # played since
    assert store.open_game_of(sid, i, since_ms=T0 + 1) is None
