"""demo-data: games played through the real engine, stored through the real store, known truth."""

from __future__ import annotations

from typer.testing import CliRunner

from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.demo.live import HUMAN_RATE, TRUE_RATES, DemoSpec, generate
from turinglab.analysis.live.load import load
from turinglab.cli import app
from turinglab.game.engine import Game
from turinglab.store import Store


def test_demo_games_are_complete_stored_games(db_url):
    r = CliRunner().invoke(app, ["demo-data", "--db", db_url, "--games", "25", "--seed", "7"])
    assert r.exit_code == 0, r.output
    assert "Dragon 0.50" in r.output
    with Store(db_url) as s:
        games = s.games()
        assert len(games) == 25
        for g in games:
            assert g.status == "ended" and g.verdict is not None
            rows = s.event_rows(g.id)
            types = [e.event.type for e in rows]
            assert types[0] == "game_started" and "message" in types and types[-1] == "game_ended"
            assert all(e.identity and e.study_hash == g.study_hash for e in rows)
            assert Game.replay([e.event for e in rows]).state == "ended"
            if g.seats["A"].kind == "ai":
                assert 0 < g.seats["A"].selection_prob <= 1
    loaded = load(db_url)
    j = loaded.judgements
    assert len(j) == 25 and j["n_messages"].min() >= 4
    assert len(loaded.games) == 25 and len(loaded.verdicts) == 25
    assert (loaded.games["status"] == "ended").all()
    # messages come from the event log: per game they add up to n_messages
    assert loaded.messages.groupby("game_id").size().sort_index().tolist() == j.set_index("game_id")["n_messages"].sort_index().tolist()
    by_id = {g.id: g for g in games}
    for row in j.itertuples():
        assert row.judged_human == (by_id[row.game_id].verdict.choice == "human")
        assert row.correct == by_id[row.game_id].verdict.correct


def test_three_player_demo(sqlite_url):
    generate(sqlite_url, DemoSpec(n_games=12, seed=1, format="three-player"))
    j = load(sqlite_url).judgements
    assert len(j) == 24 and set(j["format"]) == {"three-player"}
    per_game = j.groupby("game_id")
    assert (per_game["judged_human"].sum() == 1).all()  # forced choice: exactly one seat judged human
    assert (per_game["witness_kind"].apply(sorted).map(tuple) == ("ai", "human")).all()


def test_report_numbers_recover_the_true_rates(sqlite_url):
    generate(sqlite_url, DemoSpec(n_games=300, seed=11))
    loaded = load(sqlite_url)
    a = analyse(loaded.judgements, loaded.participants, Options(alpha=0.01, exclude=(), n_boot=100, max_games_mixed=0))
    sr = a.success.set_index("witness")
    truth = {**TRUE_RATES, "Human": HUMAN_RATE}
    for w, p in truth.items():
        if w in sr.index:
            assert sr.loc[w, "low"] <= p <= sr.loc[w, "high"], (w, sr.loc[w].to_dict())
    assert sr.loc["Human", "n"] > 100
    # Thompson sampling recorded its probabilities: every AI game has one
    assert a.ipw["n_with_prob"].sum() == (loaded.judgements["witness_kind"] == "ai").sum()
