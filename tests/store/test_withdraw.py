"""Withdrawal (issue 38): after `participant withdraw` nothing the participant wrote or any id of
theirs is in any text column of any table or in a fresh export; every game still replays; the
analyses lose exactly the games they judged; a game still running is erased as it is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import inspect, text
from typer.testing import CliRunner

from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.cli import app
from turinglab.game.config import Study
from turinglab.game.engine import Game, GiveVerdict, Send
from turinglab.game.events import Identity
from turinglab.store import Store
from turinglab.store.withdraw import withdrawals

T0 = 1_700_100_000_000
MINE = ["quokka-lantern-7731", "my cousin lives at 12 Zephyr Lane", "marzipan-ostrich-4402",
        "ring me on 07700 900461"]
REASON = "gut feeling about xylophone-biscuit-5518"
THEIRS = ["counterpart-kiwi-1111", "counterpart-mango-2222", "counterpart reason papaya-3333"]


def _game(store, sid, seats, inter, t, lines, verdict=None, reason=REASON):
    gid = store.create_game(sid, "two-player", seats, inter, t)
    g = Game.start("two-player", Study(name="w").rules, t)
    for k, (who, line) in enumerate(lines):
        assert g.apply(Send(who, line, "A"), t + 1000 * (k + 1)).ok
    if verdict:
        assert g.apply(GiveVerdict("interrogator", verdict, 80, reason), t + 9000).ok
    store.append_events(gid, g.log)
    return gid, g


def _seed(url):
    """A demo study, plus a participant who judged two games and was the witness in two (one running)."""
    generate(url, DemoSpec(n_games=40, seed=3))
    with Store(url) as st:
        sid = st.studies()[0].id
        me = st.create_participant(label="x", prolific_pid="PROLIFICPID0042", prolific_study_id="STUDYID0042",
                                   prolific_session_id="SESSIONID0042", consent_ms=T0,
                                   demographics={"age": 33, "gender": "female", "education": "Hogwarts-Academy-99"})
        other = st.participants()[-2].id
        ai = Identity("ai", witness=next(g.seats["A"].witness for g in st.games(sid) if g.seats["A"].kind == "ai"),
                      selection_prob=0.5)
        judged = [_game(st, sid, {"A": ai}, me, T0, [("interrogator", MINE[0]), ("A", "hello there")], "ai")[0],
                  _game(st, sid, {"A": Identity("human", participant_id=other)}, me, T0 + 10**6,
                        [("interrogator", MINE[1]), ("A", THEIRS[0])], "human")[0]]
        witnessed = [_game(st, sid, {"A": Identity("human", participant_id=me)}, other, T0 + 2 * 10**6,
                           [("interrogator", THEIRS[1]), ("A", MINE[2])], "human", THEIRS[2])[0]]
        running, g = _game(st, sid, {"A": Identity("human", participant_id=me)}, other, T0 + 3 * 10**6,
                           [("interrogator", "still going?"), ("A", MINE[3])])
        witnessed.append(running)
    return me, judged, witnessed, (running, g)


def _dump_db(url) -> str:
    """Every text or JSON column of every table, as one string."""
    with Store(url) as st, st.engine.connect() as conn:
        parts = []
        for table in inspect(conn).get_table_names():
            cols = [c["name"] for c in inspect(conn).get_columns(table)]
            q = text("SELECT " + ", ".join(f'CAST("{c}" AS TEXT)' for c in cols) + f' FROM "{table}"')
            parts += [" ".join("" if v is None else str(v) for v in row) for row in conn.execute(q)]
        return "\n".join(parts)


def _dump_dir(d: Path) -> str:
    return "\n".join(f.read_text(errors="replace") for f in sorted(d.iterdir()) if f.suffix in (".csv", ".json", ".md", ".html"))


def _secrets(me):
    return [*MINE, REASON, me, "PROLIFICPID0042", "STUDYID0042", "SESSIONID0042", "Hogwarts-Academy-99"]


def test_withdrawal_erases_everywhere_and_games_replay(db_url, tmp_path):
    me, judged, witnessed, (running, g) = _seed(db_url)
    before = _dump_db(db_url)
    assert [s for s in _secrets(me) if s not in before] == []  # the search would find them
    out0 = tmp_path / "before"
    r = CliRunner().invoke(app, ["export", "--db", db_url, "--out", str(out0)])
    assert r.exit_code == 0, r.output
    n0 = json.loads((out0 / "report_numbers.json").read_text())["numbers"]
    with Store(db_url) as st:
        n_events = {gid: len(st.events(gid)) for gid in judged + witnessed}

    r = CliRunner().invoke(app, ["participant", "withdraw", "PROLIFICPID0042", "--reason", "asked by email",
                                 "--db", db_url, "--as", "dr-who"])
    assert r.exit_code == 0, r.output
    # the server that runs the game writes on after the withdrawal: its text is erased on the way in
    assert g.apply(Send("interrogator", "and now?", "A"), T0 + 3 * 10**6 + 20_000).ok
    assert g.apply(Send("A", "late-secret-velvet-9931", "A"), T0 + 3 * 10**6 + 21_000).ok
    with Store(db_url) as st:
        st.append_events(running, g.log[len(st.events(running)):])

    after = _dump_db(db_url)
    found = [s for s in [*_secrets(me), "late-secret-velvet-9931"] if s in after]
    assert found == []
    assert all(s in after for s in THEIRS)  # the counterpart's own messages stay
    assert "asked by email" in after and "dr-who" in after  # the log: who and why
    with Store(db_url) as st:
        for gid in judged + witnessed:  # every game replays, with its events in place
            events = st.events(gid)
            Game.replay(events)
            assert len(events) >= n_events[gid]
            marked = [e for e in events if e.payload.get("withdrawn")]
            assert marked and all(e.actor == ("interrogator" if gid in judged else "A") for e in marked)
            assert all(not e.payload.get("text") for e in marked)
        assert all(st.game(gid).flags.get("withdrawn") for gid in judged)
        assert all(st.game(gid).verdict.reason is None for gid in judged)
        assert all(st.game(gid).flags.get("witness_withdrawn") for gid in witnessed)
        log = withdrawals(st)
        assert [(w.who, w.reason, w.games) for w in log] == [("dr-who", "asked by email", 4)]

    out1 = tmp_path / "after"
    r = CliRunner().invoke(app, ["export", "--db", db_url, "--out", str(out1)])
    assert r.exit_code == 0, r.output
    dumped = _dump_dir(out1)
    assert [s for s in _secrets(me) if s in dumped] == []
    n1 = json.loads((out1 / "report_numbers.json").read_text())["numbers"]
    # the analysis leaves out exactly the two games they judged (one against an AI, one against a person)
    assert n1["n_games"] == n0["n_games"] - 2


def test_withdraw_unknown_and_without_reason(sqlite_url):
    generate(sqlite_url, DemoSpec(n_games=3, seed=1))
    r = CliRunner().invoke(app, ["participant", "withdraw", "nobody-here", "--reason", "x", "--db", sqlite_url])
    assert r.exit_code != 0 and "no participant" in r.output
    with Store(sqlite_url) as st:
        pid = st.participants()[0].id
    r = CliRunner().invoke(app, ["participant", "withdraw", pid, "--db", sqlite_url])
    assert r.exit_code != 0 and "reason" in r.output
    from turinglab.analysis.export.pseudonyms import export_key, keyed

    with Store(sqlite_url) as st:
        code = keyed(pid, export_key(st))  # the code on /admin, in the exports and on the done page
    r = CliRunner().invoke(app, ["participant", "withdraw", code, "--reason", "by code", "--db", sqlite_url])
    assert r.exit_code == 0 and "withdrawn:" in r.output, r.output
    with Store(sqlite_url) as st:
        assert pid not in {p.id for p in st.participants()}
        assert [w.reason for w in withdrawals(st)] == ["by code"]


def test_events_stay_append_only_but_for_erasure(db_url):
    """The triggers still refuse a DELETE and any change of an event's place or unmarked text."""
    generate(db_url, DemoSpec(n_games=2, seed=1))
    with Store(db_url) as st:
        for sql in ("DELETE FROM events", "UPDATE events SET t_ms = t_ms + 1",
                    "UPDATE events SET payload = '{\"text\": \"forged\"}' WHERE type = 'message'",
                    "UPDATE events SET seq = seq + 100, payload = '{\"withdrawn\": true}'"):
            with pytest.raises(Exception, match="append-only"), st.engine.begin() as conn:
                conn.execute(text(sql))


def test_a_study_may_leave_out_the_witness_games_too(sqlite_url):
    """`withdrawal: {witness_games: exclude}`: the games they were the witness in get `withdrawn` too."""
    from turinglab.game.config import Withdrawal
    from turinglab.store.withdraw import withdraw

    with Store(sqlite_url) as st:
        sid = st.register_study(Study(name="wx", withdrawal=Withdrawal(witness_games="exclude")))
        me, other = st.create_participant(label="me"), st.create_participant(label="other")
        gid, _ = _game(st, sid, {"A": Identity("human", participant_id=me)}, other, T0,
                       [("interrogator", "hi"), ("A", MINE[0])], "human", THEIRS[2])
        withdraw(st, me, "asked", "dr")
        flags = st.game(gid).flags
        assert flags["withdrawn"] is True and flags["witness_withdrawn"] is True
        assert st.game(gid).verdict.reason == THEIRS[2]  # the interrogator's own reason stays
