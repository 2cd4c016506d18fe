"""The further Jones & Bergen analyses in the report, from games stored through the real store:
tags and kappa, first-game criteria, unplayed witnesses, bot games kept apart, the three-player
timing check, numbered tables and figures, and the same numbers in the JSON report."""

from __future__ import annotations

import json
import re

import pytest

from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.demo.live import TAG_SHARE, DemoSpec, generate
from turinglab.analysis.live.load import load
from turinglab.analysis.report.report import render_html, render_json, render_markdown
from turinglab.game.config import WitnessSpec


def run(loaded, witnesses=None, **kw):
    opt = Options(n_boot=50, max_games_mixed=0, **kw)
    return analyse(loaded.judgements, loaded.participants, opt, tags=loaded.tags,
                   witnesses=loaded.witness_specs if witnesses is None else witnesses, messages=loaded.messages)


@pytest.fixture(scope="module")
def two_player(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('jb')}/two.db"
    generate(url, DemoSpec(n_games=240, seed=4, tag_share=TAG_SHARE))
    from turinglab.store import Store

    st = Store(url)
    try:
        ids = [g.id for g in st.games(st.studies()[0].id)][:30]
        for gid in ids:
            st.set_flag(gid, "bot", True)
    finally:
        st.close()
    return load(url), ids


def test_bot_games_are_only_in_the_leaderboard(two_player):
    loaded, bot_ids = two_player
    a = run(loaded)
    assert not set(bot_ids) & set(a.judgements["game_id"])
    assert a.exclusions.games_before == loaded.judgements["game_id"].nunique() - len(bot_ids)
    board = a.extra["leaderboard"]["table"]
    assert board["bot"].any() and int(board.loc[board["bot"], "n"].sum()) == len(bot_ids)
    assert a.extra_numbers()["bot_games"] == len(bot_ids)
    everything = run(loaded, include_bots=True)
    assert set(bot_ids) <= set(everything.judgements["game_id"])


def test_report_shows_every_further_analysis_numbered(two_player):
    loaded, _ = two_player
    assert {w.codename for w in loaded.witness_specs} == {"Dragon", "Sierra", "November", "ELIZA"}
    unplayed = WitnessSpec(codename="Quebec", kind="llm", model="some-model")
    a = run(loaded, witnesses=(*loaded.witness_specs, unplayed))
    html = render_html(a)
    titles = re.findall(r'<p class="caption">Table (\d+)\. ([^<]+)</p>', html)
    assert [int(n) for n, _ in titles] == list(range(1, len(titles) + 1))  # numbered in order
    names = {t for _, t in titles}
    for needed in ("Accuracy by game number and witness kind", "Interrogators&#39; demographics",
                   "Per-interrogator d′ regressed on demographics", "Pass criteria, interrogators&#39; first games only",
                   "Agreement between taggers (Cohen&#39;s κ)", "Most frequent strategies (share of tagged games)",
                   "Most frequent reasons (share of tagged games)", "Top reasons by verdict and witness kind",
                   "Top strategies by game number", "Game length, messages and words by witness kind",
                   "Participation: games per participant", "Humanlikeness leaderboard",
                   "Comparisons between witnesses: two-sample and cluster-robust tests"):
        assert needed in names, needed
    figs = re.findall(r"<b>Figure (\d+)\. ([^<]+)\.</b>", html)
    assert [int(n) for n, _ in figs] == list(range(1, len(figs) + 1))
    assert {"Accuracy by interrogator demographics", "Interrogators&#39; demographics", "Success rate in first games",
            "Per-interrogator d′ against demographics", "Most frequent strategies", "Humanlikeness leaderboard"} <= {t for _, t in figs}
    # the configured witness that never played is a row with n = 0, its type and model shown
    assert re.search(r'Quebec</td><td class="l">ai</td><td class="l">llm</td><td class="l">some-model</td><td>–</td><td>0</td><td>no games</td>', html)
    assert re.search(r'Dragon</td><td class="l">ai</td><td class="l">local</td>', html)
    # coded answers with labels, not bare codes
    assert "daily (3)" in html and "I research them (4)" in html
    # kappa of the two demo taggers: real numbers, and the same in the JSON
    k = a.extra["kappa"].set_index(["taxonomy", "level"])
    assert 0.3 < k.loc[("strategy", "sub"), "kappa"] < 1
    nums = json.loads(render_json(a))["numbers"]
    assert nums["kappa.strategy.sub.kappa"] == pytest.approx(k.loc[("strategy", "sub"), "kappa"])
    assert nums["roster.Quebec.n"] == 0
    md = render_markdown(a, "figs", __import__("turinglab.analysis.report.figures", fromlist=["all_figures"]).all_figures(a))
    assert md.count("**Table ") == len(titles) and "*Figure 1. " in md


def test_words_and_sd_in_the_length_table_come_from_the_messages(two_player):
    loaded, _ = two_player
    a = run(loaded)
    t = a.extra["length"].set_index("kind")
    games = a.games
    m = loaded.messages[loaded.messages["game_id"].isin(games["game_id"])]
    wit = m[m["actor"] != "interrogator"].assign(w=lambda d: d["text"].str.split().str.len())
    per = wit.groupby("game_id")["w"].sum()
    ai_ids = games.loc[games["witness_kind"] == "ai", "game_id"]
    assert t.loc["ai", "words_witness_mean"] == pytest.approx(per.reindex(ai_ids).fillna(0).mean())
    assert t.loc["ai", "duration_sd"] == pytest.approx(games.loc[games["witness_kind"] == "ai", "duration_s"].std())


def test_three_player_timing_check_pairs_the_seats_of_a_game(tmp_path):
    url = f"sqlite:///{tmp_path}/three.db"
    generate(url, DemoSpec(n_games=80, seed=2, format="three-player"))
    a = run(load(url))
    tc = a.extra["timing_check"]
    assert tc["design"].startswith("paired")
    assert "duration" not in tc  # both conversations of a game last equally long: nothing to compare
    assert tc["latency"]["n_ai"] == tc["latency"]["n_human"] > 50
    html = render_html(a)
    assert "Wilcoxon" in html and "both conversations of a three-player game last exactly as long" in html
    bt = a.extra["leaderboard"]["bradley_terry"]
    notes = " ".join(a.extra["leaderboard"]["notes"])
    players = set(a.success["witness"])
    # every witness is ranked, or named as left out (won all or none: infinite MLE)
    assert all(p in set(bt["player"]) or (p in notes and "Left out" in notes) for p in players), (players, notes)
    assert len(bt) >= 3
    assert bt.loc[bt["player"] == "Human", "beta"].item() == 0.0
    assert "Bradley–Terry strengths against human witnesses" in html


def test_a_missing_witness_kind_is_stated(two_player):
    loaded, _ = two_player
    j = loaded.judgements[loaded.judgements["witness_kind"] == "ai"]
    a = analyse(j, loaded.participants, Options(n_boot=20, max_games_mixed=0))
    html = render_html(a)
    assert "No games with a human witness" in html
    assert "No games with an AI witness" not in html
