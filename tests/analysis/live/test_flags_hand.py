"""Exclusion flags set by hand (`turinglab flag set|unset`), on SQLite and PostgreSQL: logged as
`flag` events in the game's log, followed by the game's flags, overriding the rule that computes the
same flag, and named with their origin (rule or hand) in the analysis table and the export."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.analysis.export.export import export, read_tables
from turinglab.analysis.live.flags import KNOWS_WITNESS_RE
from turinglab.analysis.live.load import load
from turinglab.cli import app
from turinglab.game.engine import Game
from turinglab.store import Store

runner = CliRunner()


def _games(url: str) -> list:
    generate(url, DemoSpec(n_games=12, seed=3))
    with Store(url) as st:
        return [g for g in st.games() if g.verdict is not None]


def test_set_and_unset_are_logged_and_override_the_rule(db_url, tmp_path):
    games = _games(db_url)
    a, b = games[0].id, games[1].id
    r = runner.invoke(app, ["flag", "set", a, "off_topic", "--reason", "talked about the study", "--db", db_url])
    assert r.exit_code == 0, r.output
    # b's interrogator wrote a reason the rule reads as knowing the witness; a researcher clears it
    with Store(db_url) as st:
        st.flag_game(b, "knows_witness", True, None, 1)  # as if a rule had fired: a hand decision first...
    r = runner.invoke(app, ["flag", "unset", b, "knows_witness", "--reason", "false alarm", "--db", db_url])
    assert r.exit_code == 0, r.output
    with Store(db_url) as st:
        log = st.events(a)
        assert log[-1].type == "flag" and log[-1].actor == "researcher"
        assert log[-1].payload == {"flag": "off_topic", "value": True, "reason": "talked about the study",
                                   "origin": "hand"}
        assert Game.replay(log).state == "ended"  # the annotation does not disturb the game
        assert st.game(a).flags["off_topic"] is True
        assert st.game(b).flags["knows_witness"] is False
        assert [e.payload["value"] for e in st.events(b) if e.type == "flag"] == [True, False]
    loaded = load(db_url)
    j = loaded.judgements.set_index("game_id")
    assert bool(j.loc[a, "flag_off_topic"]) and not bool(j.loc[b, "flag_knows_witness"])
    assert "off_topic=hand (talked about the study)" in j.loc[a, "exclusion_origins"]
    assert "knows_witness=cleared by hand (false alarm)" in j.loc[b, "exclusion_origins"]
    others = j.drop(index=[a, b])
    assert not others["flag_off_topic"].any()
    out = export(loaded, tmp_path / "exp")["out"]
    back = read_tables(out)["judgements"].set_index("game_id")
    assert "off_topic=hand" in back.loc[a, "exclusion_origins"]
    assert bool(back.loc[a, "flag_off_topic"])


def test_rule_flags_say_rule(sqlite_url):
    games = _games(sqlite_url)
    loaded = load(sqlite_url)
    j = loaded.judgements
    rule = j[j["flag_three_previous_ai"]]
    if len(rule):
        assert rule["exclusion_origins"].str.contains("three_previous_ai=rule").all()
    clean = j[~j[[c for c in j.columns if c.startswith("flag_")]].any(axis=1)]
    assert (clean["exclusion_origins"] == "").all()
    assert len(games) == len(j.drop_duplicates("game_id"))


def test_bad_flag_input_is_one_line(sqlite_url):
    g = _games(sqlite_url)[0].id
    for args, says in ((["flag", "set", g, "Bad Name"], "lower-case"),
                       (["flag", "set", "nope", "x"], "no game with id 'nope'"),
                       (["flag", "set", g, "x", "--reason", "r" * 501], "longer than 500"),
                       (["flag", "set", g, "origins"], "flag name")):
        r = runner.invoke(app, [*args, "--db", sqlite_url])
        assert r.exit_code == 2, (args, r.output)
        assert says in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("text,hit", [
    ("we sit in the same room", True), ("she's from my class", True), ("it's my mate", True),
    ("I know her, she's my sister", True), ("sounds like my friend lol", False), ("typos felt human", False),
])
def test_knows_witness_rule_on_the_papers_examples(text, hit):
    assert bool(KNOWS_WITNESS_RE.search(text)) is hit
