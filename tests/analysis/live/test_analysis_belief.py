"""The belief analysis (issue 29) against cases computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from turinglab.analysis.live.belief import analyse_beliefs, km, p_correct


def judgement(gid, kind, witness, seat="A", fmt="two-player", ended=60_000):
    return {"game_id": gid, "format": fmt, "witness_kind": kind, "witness": witness, "seat": seat,
            "started_ms": 0, "ended_ms": ended}


def chat(gid, n_replies, texts=None):
    """Interrogator at odd seqs, the witness's replies at even seqs 2, 4, ..."""
    rows = []
    for k in range(n_replies):
        rows.append({"game_id": gid, "seq": 2 * k + 1, "t_ms": 0, "actor": "interrogator", "conversation": "A",
                     "text": f"q{k + 1}"})
        rows.append({"game_id": gid, "seq": 2 * k + 2, "t_ms": 0, "actor": "A", "conversation": "A",
                     "text": (texts or {}).get(k + 1, f"r{k + 1}")})
    return rows


def move(gid, seq, t_ms, value, after):
    return {"game_id": gid, "seq": seq, "t_ms": t_ms, "conversation": "A", "value": value, "after_seq": after}


@pytest.fixture
def case():
    j = pd.DataFrame([judgement("g1", "ai", "Eliza"), judgement("g2", "human", "Human", ended=40_000),
                      judgement("g3", "ai", "Eliza", ended=90_000), judgement("g4", "ai", "Sierra")])
    m = pd.DataFrame(chat("g1", 3) + chat("g2", 2, {1: "lol idk, raining here"}) + chat("g3", 4) + chat("g4", 3))
    b = pd.DataFrame([move("g1", 3, 10_000, 60, 2), move("g1", 6, 20_000, 80, 4),  # AI: p .6 then .8
                      move("g2", 3, 5_000, 10, 2),  # human: value 10 = p_correct .9
                      move("g3", 5, 30_000, 70, 4), move("g3", 6, 31_000, 30, 4),  # the later move counts: p .3
                      move("g4", 7, 40_000, 90, 6)])  # AI: p .9 after reply 3
    return j, m, b


def test_trajectories_detection_and_moves_by_hand(case):
    j, m, b = case
    r = analyse_beliefs(j, m, b, tags=pd.DataFrame({"game_id": ["g2"], "category": ["2a"], "taxonomy": ["reason"],
                                                    "tagger": ["x"]}))
    assert r is not None and r.n_games == 4 and r.n_moves == 6
    g = r.per_game.set_index("game_id")
    # g1: first p >= .75 is the move at 20 s after reply 2; g2 at 5 s after reply 1;
    # g3 reached .7 (value 70 = p .7 < .75) then .3: censored at its end (90 s, 4 replies)
    assert g.loc["g1", ["event", "time_s", "replies"]].tolist() == [1, 20.0, 2]
    assert g.loc["g2", ["event", "time_s", "replies"]].tolist() == [1, 5.0, 1]
    assert g.loc["g3", ["event", "time_s", "replies"]].tolist() == [0, 90.0, 4]
    assert g.loc["g4", ["event", "time_s", "replies"]].tolist() == [1, 40.0, 3]
    t = r.trajectories[r.trajectories["by"] == "kind"].set_index(["group", "k"])
    # AI games g1, g3, g4: after reply 1 (.6 + .5 + .5) / 3; after 2 (.8 + .3 + .5) / 3; after 3
    # (.8 + .3 + .9) / 3; after 4 only g3 (.3)
    assert t.loc[("ai", 1), "mean"] == pytest.approx(1.6 / 3)
    assert t.loc[("ai", 2), "mean"] == pytest.approx(1.6 / 3) and t.loc[("ai", 2), "n"] == 3
    assert t.loc[("ai", 3), "mean"] == pytest.approx(2.0 / 3)
    assert t.loc[("ai", 4), "mean"] == pytest.approx(0.3) and t.loc[("ai", 4), "n"] == 1
    assert t.loc[("human", 2), "mean"] == pytest.approx(0.9)
    # the t interval after reply 1: sd of (.6, .5, .5) = .057735, t(.975, 2) = 4.302653
    half = 4.302653 * 0.0577350 / math.sqrt(3)
    assert t.loc[("ai", 1), ["low", "high"]].tolist() == pytest.approx([1.6 / 3 - half, 1.6 / 3 + half], rel=1e-5)
    w = r.trajectories[r.trajectories["by"] == "witness"].set_index(["group", "k"])
    assert w.loc[("Sierra", 3), "mean"] == pytest.approx(0.9) and w.loc[("Eliza", 3), "mean"] == pytest.approx(0.55)
    d = r.detection.set_index(["by", "group"])
    # AI: 20 s (event), 40 s (event), 90 s (censored): S = 2/3 after 20, 1/3 after 40; the median is the
    # first time S falls below 1/2 (statsmodels' rule): 40 s; in replies 2, 3, 4+: 3 replies
    assert d.loc[("kind", "ai"), ["n", "events"]].tolist() == [3, 2]
    assert d.loc[("kind", "ai"), "median_s"] == pytest.approx(40.0)
    assert d.loc[("kind", "ai"), "median_k"] == pytest.approx(3.0)
    assert d.loc[("kind", "human"), "median_s"] == pytest.approx(5.0)
    assert d.loc[("witness", "Eliza"), ["n", "events"]].tolist() == [2, 1]
    # the cluster bootstrap (each game its own interrogator here): every draw's median is 20, 40 or
    # never (inf), so the interval's ends are among them
    assert d.loc[("kind", "ai"), "median_s_boot_low"] in (20.0, 40.0)
    assert d.loc[("kind", "ai"), "median_s_boot_high"] in (40.0, math.inf)
    curve = r.curves[("kind", "ai", "s")]
    assert curve["t"].tolist() == [0, 20, 40] and curve["surv"].tolist() == pytest.approx([1.0, 2 / 3, 1 / 3])
    # biggest moves: g2 +.4 (reply 1), g4 +.4 (reply 3), then g1's +.2 and g3's -.2 (reply 2), then g1's +.1
    mv = r.moves
    assert mv["change"].round(6).tolist() == [0.4, 0.4, 0.2, -0.2, 0.1]
    assert mv["game_id"].tolist() == ["g2", "g4", "g1", "g3", "g1"]
    assert mv.loc[0, "reply"] == "lol idk, raining here" and mv.loc[0, "question"] == "q1"
    assert mv.loc[0, "tags"] == "2a" and mv.loc[1, "question"] == "q3"


def test_kaplan_meier_and_greenwood_by_hand():
    # times 1, 2, 2+, 3, 4+: S(1) = 4/5, S(2) = .8 * 3/4 = .6, S(3) = .6 * 1/2 = .3
    curve, (med, lo, hi) = km([1, 2, 2, 3, 4], [1, 1, 0, 1, 0])
    assert curve["t"].tolist() == [0, 1, 2, 3]
    assert curve["surv"].tolist() == pytest.approx([1, 0.8, 0.6, 0.3])
    assert med == pytest.approx(3.0)
    # log-log interval at t = 1: Greenwood se = .8 * sqrt(1 / (5 * 4)) = .1789
    se = 0.8 * math.sqrt(1 / 20)
    d = 1.959964 * se / (0.8 * abs(math.log(0.8)))
    assert curve["low"][1] == pytest.approx(math.exp(-math.exp(math.log(-math.log(0.8)) + d)), rel=1e-4)
    assert curve["low"][1] < 0.8 < curve["high"][1] <= 1


def test_three_player_values_mean_which_seat_is_human():
    assert p_correct([0, 25, 100], [1, 1, 1]).tolist() == [0.0, 0.25, 1.0]
    assert p_correct([0, 25, 100], [-1, -1, -1]).tolist() == [1.0, 0.75, 0.0]
    j = pd.DataFrame([judgement("g", "human", "Human", seat="A", fmt="three-player"),
                      judgement("g", "ai", "Eliza", seat="B", fmt="three-player")])
    m = pd.DataFrame(chat("g", 1))
    # value 10: "A is the human", and A is the human: p_correct .9, detected after reply 1
    r = analyse_beliefs(j, m, pd.DataFrame([move("g", 3, 7_000, 10, 2)]))
    assert r.per_game[["witness", "event", "time_s", "replies"]].values.tolist() == [["Eliza", 1, 7.0, 1]]
    assert analyse_beliefs(j, m, pd.DataFrame(columns=["game_id", "seq", "t_ms", "conversation", "value",
                                                       "after_seq"])) is None


def test_demo_data_with_beliefs_reaches_the_export_and_the_report(sqlite_url, tmp_path):
    """`demo-data --beliefs`: belief events through the real engine and store, the export's beliefs
    table holds exactly them, and the report shows trajectories and time to detection (HTML, escaped)."""
    from typer.testing import CliRunner

    from turinglab.analysis.export.export import read_tables
    from turinglab.cli import app
    from turinglab.store import Store

    r = CliRunner().invoke(app, ["demo-data", "--db", sqlite_url, "--games", "60", "--beliefs", "--seed", "3"])
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as s:
        stored = sorted((e.payload["value"], e.payload["after_seq"], g.id) for g in s.games()
                        for e in s.events(g.id) if e.type == "belief")
        assert all(s.events(g.id)[0].payload["rules"]["belief_tracking"] for g in s.games())
    assert len(stored) > 60
    out = tmp_path / "export"
    r = CliRunner().invoke(app, ["export", "--db", sqlite_url, "--out", str(out)])
    assert r.exit_code == 0, r.output
    b = read_tables(out)["beliefs"]
    assert sorted(zip(b["value"].astype(int), b["after_seq"].astype(int), b["game_id"])) == stored
    assert "Belief tracking" in (out / "report.html").read_text()
    html = tmp_path / "r.html"
    r = CliRunner().invoke(app, ["report", "--db", sqlite_url, "--out", str(html), "--no-audit"])
    assert r.exit_code == 0, r.output
    text = html.read_text()
    for part in ("Belief trajectories", "Time to detection", "Time to the first correct confident belief",
                 "The replies after which belief moved most"):
        assert part in text, part
    # a study without belief tracking has no such section
    plain = f"sqlite:///{tmp_path / 'plain.db'}"
    assert CliRunner().invoke(app, ["demo-data", "--db", plain, "--games", "30"]).exit_code == 0
    assert CliRunner().invoke(app, ["report", "--db", plain, "--out", str(tmp_path / "p.html"), "--no-audit"]).exit_code == 0
    assert "Belief tracking" not in (tmp_path / "p.html").read_text()
