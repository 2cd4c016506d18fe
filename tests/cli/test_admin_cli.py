"""`turinglab admin ...` (issue 27) on a real SQLite database: each action is stored with the
researcher and the reason, bad input gets one line saying what to do, and the bonus file is
Prolific's bulk-bonus format."""

from __future__ import annotations

from typer.testing import CliRunner

from turinglab.cli import app
from turinglab.game.config import Prolific, Study
from turinglab.game.events import Identity
from turinglab.store import admin_log
from turinglab.store.api import Store


PA, PB = "5f0c1a2b3c4d5e6f70819a2b", "60aa1b2c3d4e5f60718293a4"  # Prolific's shape: 24 hex


def run(*args: str):  # noqa: ANN201 - click Result
    return CliRunner().invoke(app, ["admin", *args])


def test_actions_are_stored_and_bad_input_is_explained(sqlite_url, tmp_path):
    with Store(sqlite_url) as store:
        sid = store.register_study(Study(name="cli-admin", prolific=Prolific(bonus_per_game=0.3, bonus_per_correct=0.2)))
        a = store.create_participant(t_ms=1, prolific_pid=PA)
        b = store.create_participant(t_ms=1, prolific_pid=PB)
        gid = store.create_game(sid, "two-player", {"A": Identity("human", None, b, 1.0)}, a, 10)
    r = run("pause", "--reason", "pilot over", "--as", "ana", "--db", sqlite_url)
    assert r.exit_code == 0 and "paused" in r.output
    r = run("block", PB, "--db", sqlite_url)
    assert r.exit_code == 2 and "needs a reason" in r.output
    r = run("block", "nobody-like-this", "--reason", "x", "--db", sqlite_url)
    assert r.exit_code == 2 and "no participant 'nobody-like-this'" in r.output
    r = run("block", PB, "--reason", "abuse", "--as", "ana", "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    r = run("end-game", "gnothere", "--reason", "x", "--db", sqlite_url)
    assert r.exit_code == 2 and "no game 'gnothere'" in r.output
    r = run("end-game", gid, "--reason", "stuck", "--wait", "0.2", "--db", sqlite_url)
    assert r.exit_code == 1 and "no running server ended it" in r.output  # nobody runs this game
    with Store(sqlite_url, upgrade=False) as store:
        rows = admin_log.actions(store, sid)
    assert [(x.action, x.researcher, x.target, x.reason) for x in rows] == [
        ("pause", "ana", None, "pilot over"), ("block", "ana", b, "abuse"), ("end_game", rows[2].researcher, gid, "stuck")]
    assert rows[2].researcher.startswith("cli:")
    listed = run("actions", "--db", sqlite_url)
    assert listed.exit_code == 0 and b not in listed.output  # a participant id is their link: pseudonyms only
    assert "\tblock\tP" in listed.output
    # the bonus file: the one game is still in progress and PB is blocked, so nobody is paid yet;
    # the games table beside it says why
    out = tmp_path / "b.csv"
    r = run("bonus", str(out), "--db", sqlite_url)
    assert r.exit_code == 0, r.output
    assert "0 bonuses, 0.00 in total" in r.output and "2 lines not paid" in r.output
    assert out.read_text() == ""
    table = (tmp_path / "b.csv.games.csv").read_text().splitlines()
    assert table[1:] == [f"{PA},not paid: game in progress,0.30,1,0,{gid}", f"{PB},not paid: blocked,0.30,1,0,{gid}"]
    r = run("bonus", str(out), "--db", sqlite_url)
    assert r.exit_code == 2 and "exists" in r.output
