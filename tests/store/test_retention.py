"""Retention (issue 38.2): `turinglab db purge` prints what a study's `retention` settings say
must go (dry run), erases it with --yes (raw Prolific ids; raw chat redacted, games still replay)
and erases nothing more when run again (cron)."""

from __future__ import annotations

from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.game.config import Retention, Study
from turinglab.game.engine import Game, GiveVerdict, Send
from turinglab.game.events import Identity
from turinglab.store import Store
from turinglab.store.db import now_ms
from turinglab.store.retention import DAY_MS, due

SECRET = "mail me at old.timer@gmail.com"


def _seed(url):
    with Store(url) as st:
        sid = st.register_study(Study(name="ret", retention=Retention(payment_ids_days=30, raw_chat_days=7)))
        st.register_study(Study(name="other"))  # no retention: untouched
        now = now_ms()
        out = {}
        for label, age_days in (("old", 40), ("new", 1)):
            pid = st.create_participant(label=label, prolific_pid=f"PID{label}", prolific_study_id="S",
                                        prolific_session_id="N", consent_ms=now, study="live:ret")
            t = now - age_days * DAY_MS
            gid = st.create_game(sid, "two-player", {"A": Identity("ai", witness="E", selection_prob=1.0)}, pid, t)
            g = Game.start("two-player", Study(name="ret").rules, t)
            assert g.apply(Send("interrogator", f"{SECRET} ({label})", "A"), t + 1000).ok
            assert g.apply(Send("A", "hi", "A"), t + 2000).ok
            assert g.apply(GiveVerdict("interrogator", "ai", 60, "phone 07700 900461"), t + 3000).ok
            st.append_events(gid, g.log)
            out[label] = (pid, gid)
    return out


def test_purge_dry_run_then_real_then_nothing_more(db_url):
    made = _seed(db_url)
    run = CliRunner().invoke(app, ["db", "purge", "--db", db_url])
    assert run.exit_code == 0, run.output
    assert "would erase the raw Prolific ids of 1 participant(s) (1 kept for now" in run.output
    assert "the raw chat of 1 game(s) by redaction (1 kept for now" in run.output and "dry run" in run.output
    with Store(db_url) as st:
        assert st.get_participant(made["old"][0]).prolific_pid == "PIDold"  # a dry run erases nothing
    run = CliRunner().invoke(app, ["db", "purge", "--yes", "--db", db_url])
    assert run.exit_code == 0 and "raw ids of 1 participant(s) erased, chat of 1 game(s) redacted" in run.output
    with Store(db_url) as st:
        old, new = st.get_participant(made["old"][0]), st.get_participant(made["new"][0])
        assert (old.prolific_pid, old.prolific_study_id, old.prolific_session_id) == (None, None, None)
        assert new.prolific_pid == "PIDnew"
        events = st.events(made["old"][1])
        Game.replay(events)  # still replays
        texts = [e.payload.get("text") for e in events if e.type == "message"]
        assert texts == ["mail me at [EMAIL] (old)", "hi"]
        assert st.game(made["old"][1]).verdict.reason == "phone [PHONE]"
        assert any("old.timer@gmail.com" in (e.payload.get("text") or "") for e in st.events(made["new"][1]))
        assert [(d.study, d.participants, d.games) for d in due(st)] == [("ret", [], [])]
    run = CliRunner().invoke(app, ["db", "purge", "--yes", "--db", db_url])
    assert run.exit_code == 0 and "raw ids of 0 participant(s) erased, chat of 0 game(s) redacted" in run.output
