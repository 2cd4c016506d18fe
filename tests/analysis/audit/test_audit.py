"""The blinding audit: frames rebuilt from the log, the classifier's AUROC, its interval and its
permutation test (checked by small simulations), and demo studies honest and leaking on purpose."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from typer.testing import CliRunner

from turinglab.analysis.audit import audit as A
from turinglab.analysis.demo.live import DemoSpec, generate
from turinglab.analysis.audit.frames import conversation_features, interrogator_frames
from turinglab.cli import app
from turinglab.game.config import Rules
from turinglab.game.engine import Game, GiveVerdict, Hold, Send, Typing

T0 = 1_700_000_000_000


def _game() -> Game:
    g = Game.start("three-player", Rules(time_limit_s=60, max_chars=20), T0)
    g.apply(Send("interrogator", "hi A", "A"), T0 + 1_000)
    g.apply(Typing("A", "A"), T0 + 3_000)
    g.apply(Send("interrogator", "x" * 30, "B"), T0 + 3_500)  # too long: error frame about B
    g.apply(Send("interrogator", "hi B", "B"), T0 + 4_000)
    g.refuse(Send("B", "a blocked word", "B"), "blocked", "content filter", T0 + 5_000)  # not shown
    g.apply(Send("A", "hello", "A"), T0 + 7_000)
    g.apply(Send("B", "hey there you", "B"), T0 + 9_000)  # no typing indicator before it
    g.apply(Send("interrogator", "how are you", "A"), T0 + 10_000)
    g.apply(Typing("A", "A"), T0 + 12_000)
    g.apply(Hold("A", "fine", "A", release_ms=T0 + 70_000), T0 + 13_000)  # held past the end: never shown
    g.apply(GiveVerdict("interrogator", "A", 80), T0 + 61_000)  # after time_up (T0 + 60 s)
    return g


def test_frames_are_what_the_interrogator_received():
    g = _game()
    frames = interrogator_frames(g.log)
    assert [(f.type, f.conv) for f in frames] == [
        ("state", None), ("ack", "A"), ("typing", "A"), ("error", "B"), ("ack", "B"), ("message", "A"),
        ("message", "B"), ("ack", "A"), ("typing", "A"), ("state", None)]
    assert frames[3].values == {"code": "too_long"} and frames[-1].values["closed"] == "time_up"
    assert frames[-1].t_ms == T0 + 60_000 and set(frames[5].keys) == {"type", "id", "conv", "from", "text", "t_ms"}
    a = conversation_features(frames, "A", T0)
    assert a["replies"] == 1 and a["delay_first_s"] == 6.0 and a["typing_onset_median_s"] == 2.0
    assert a["typing_onset_max_s"] == 2.0 and a["typing_shown_median_s"] == 4.0  # the second question's typing: no reply
    assert a["unanswered_at_close"] == 1 and a["typing_without_reply"] == 1 and a["replies_without_typing"] == 0
    assert a["chat_closed_s"] == 60.0 and a["state_frames"] == 2 and a["errors"] == 0
    assert a["reply_chars_mean"] == 5 and a["chars_per_s_median"] == pytest.approx(5 / 6)
    b = conversation_features(frames, "B", T0)
    assert b["delay_first_s"] == 5.0 and b["replies_without_typing"] == 1 and np.isnan(b["typing_onset_median_s"])
    assert b["unanswered_at_close"] == 0 and b["errors"] == 1 and b["error_too_long"] == 1
    assert b["reply_words_mean"] == 3


def test_weighted_bootstrap_auroc_equals_the_auroc_of_the_resample():
    rng = np.random.default_rng(0)
    y = rng.random(60) < 0.5
    s = np.round(rng.normal(size=60) + y, 1)  # ties too
    groups = rng.integers(0, 20, 60)
    W = A.cluster_boot(groups, 30, 1)
    uniq, inv = np.unique(groups, return_inverse=True)
    for w, fast in zip(W, A.weighted_aurocs(y, s, W)):
        idx = np.repeat(np.arange(60), w.astype(int))
        assert fast == pytest.approx(A.auroc(y[idx], s[idx]))


def test_permutation_keeps_every_stratum_s_labels():
    rng = np.random.default_rng(0)
    strat = rng.integers(0, 7, 50)
    y = rng.random(50) < 0.4
    cells = A.stratum_index(strat)
    moved = 0
    for _ in range(20):
        yp = A.permute_within(y, cells, rng)
        for k in range(7):
            assert sorted(yp[strat == k]) == sorted(y[strat == k])
        moved += int((yp != y).sum())
    assert moved > 0


def synthetic(rng: np.random.Generator, n_inter: int = 40, per: int = 3, shift: float = 0.0) -> pd.DataFrame:
    """A feature table: interrogators with a random effect on every feature; `shift` SDs more
    delay for AI witnesses (0: honest)."""
    rows = []
    for i in range(n_inter):
        u = rng.normal(0, 0.5, 4)
        for k in range(per):
            ai = bool(rng.random() < 0.5)
            x = np.exp(1.5 + 0.3 * (u + rng.normal(size=4)))
            x[0] *= np.exp(0.3 * shift * ai)
            rows.append({"game_id": f"g{i}-{k}", "format": "two-player", "interrogator_id": f"p{i}", "seat": "A",
                         "witness_kind": "ai" if ai else "human", "witness": "X" if ai else "Human", "bot": False,
                         "delay_median_s": x[0], "delay_max_s": x[1], "typing_onset_median_s": x[2],
                         "typing_shown_median_s": x[3], "replies": float(rng.integers(2, 7))})
    return pd.DataFrame(rows)


COLS = ["delay_median_s", "delay_max_s", "typing_onset_median_s", "typing_shown_median_s", "replies"]


@pytest.fixture(scope="module")
def null_runs() -> np.ndarray:
    """40 honest synthetic studies: (AUROC, low, high, permutation p) of the primary classifier."""
    rng = np.random.default_rng(1)
    out = []
    for s in range(40):
        r = A.audit_family(synthetic(rng), COLS, "channel", n_boot=300, n_perm=39, n_feature_perm=0, seed=s)
        out.append((r.primary.auroc, r.primary.low, r.primary.high, r.p_value))
    return np.array(out)


def test_classifier_interval_covers_half_under_the_null_in_most_simulations(null_runs):
    cover = np.mean((null_runs[:, 1] <= 0.5) & (0.5 <= null_runs[:, 2]))
    assert cover >= 0.88, cover  # nominal 95% (the plain bootstrap of the out-of-fold scores gave 0.87)
    assert abs(null_runs[:, 0].mean() - 0.5) < 0.03  # no intercept in the scores: no CV bias below 0.5


def test_permutation_p_is_roughly_uniform_under_the_null(null_runs):
    ps = null_runs[:, 3]
    assert stats.kstest(ps, "uniform").pvalue > 0.01, sorted(ps)
    assert np.mean(ps <= 0.1) <= 0.25 and np.mean(ps > 0.5) >= 0.3


def test_feature_interval_covers_the_true_auroc():
    # one feature, AI shifted by d SDs of a normal: true AUROC = Phi(d / sqrt 2); independent rows
    rng = np.random.default_rng(2)
    d, cover, sims = 0.8, 0, 150
    truth = stats.norm.cdf(d / np.sqrt(2))
    for s in range(sims):
        y = rng.random(120) < 0.5
        df = pd.DataFrame({"x": rng.normal(size=120) + d * y})
        W = A.cluster_boot(np.arange(120), 500, s)
        lo, hi = A.boot_interval(y, df["x"].to_numpy(), W, 0.05)
        cover += lo <= truth <= hi
    assert 0.88 <= cover / sims <= 0.99, cover


def test_a_shifted_feature_is_caught_and_named():
    res = A.audit_table(synthetic(np.random.default_rng(4), n_inter=60, shift=2.5), n_boot=300, n_perm=99)
    assert res.leaks and res.channel.primary.low > 0.5 and res.channel.p_value <= 0.02
    assert res.channel.leaking[0] == "delay_median_s"
    assert "delay_median_s" in res.verdict() and "LEAKS" in res.verdict()


def test_honest_demo_study_does_not_leak(sqlite_url):
    generate(sqlite_url, DemoSpec(n_games=160, seed=5))
    res = A.audit_blinding(sqlite_url, None, n_boot=500, n_perm=99)
    c = res.channel
    assert c.primary.low <= 0.5 <= c.primary.high and not res.leaks and c.p_value > 0.05
    assert res.n_games == 160 and res.n_ai + res.n_human == 160
    assert "typing_onset_median_s" in c.features  # the demo shows typing indicators
    assert "chars_per_s_median" not in res.content.leaking  # the same canned lines and delays


@pytest.mark.parametrize("leak,feature", [("late-fallback", "delay"), ("no-typing", "replies_without_typing")])
def test_a_demo_study_that_leaks_on_purpose_is_caught(sqlite_url, leak, feature):
    generate(sqlite_url, DemoSpec(n_games=160, seed=6, leak=leak))
    res = A.audit_blinding(sqlite_url, None, n_boot=500, n_perm=99)
    c = res.channel
    assert res.leaks and c.primary.auroc > 0.8 and c.p_value <= 0.02
    assert c.leaking and c.leaking[0].startswith(feature)
    assert feature in res.verdict()


def test_three_player_demo_permutes_within_games(sqlite_url):
    generate(sqlite_url, DemoSpec(n_games=60, seed=7, format="three-player", leak="late-fallback"))
    res = A.audit_blinding(sqlite_url, None, n_boot=300, n_perm=49)
    assert res.format == "three-player" and res.n_ai == res.n_human == 60
    assert res.leaks and res.channel.leaking[0].startswith("delay")


def test_cli_audit_blinding(sqlite_url, tmp_path):
    run = CliRunner().invoke
    r = run(app, ["demo-data", "--db", sqlite_url, "--games", "80", "--seed", "8", "--leak", "late-fallback"])
    assert r.exit_code == 0 and "leaks on purpose" in " ".join(r.output.split()), r.output
    r = run(app, ["audit", "blinding", "--db", sqlite_url, "--json", "--permutations", "49", "--boot", "200"])
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["leaks"] is True and d["channel"]["classifiers"][0]["auroc"] > 0.8
    assert d["channel"]["leaking"][0].startswith("delay") and d["games"] == 80
    r = run(app, ["audit", "blinding", "--db", sqlite_url, "--permutations", "39", "--boot", "200", "--strict"])
    assert r.exit_code == 1 and "LEAKS" in r.output and "delay_" in r.output
    r = run(app, ["audit", "blinding", "--db", sqlite_url, "--study", "nope"])
    assert r.exit_code == 2 and "no study 'nope'" in " ".join(r.output.split())
    r = run(app, ["audit", "blinding", "--db", f"sqlite:///{tmp_path / 'none.db'}"])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1
    r = run(app, ["demo-data", "--db", sqlite_url, "--games", "5", "--leak", "slow"])
    assert r.exit_code == 2 and "--leak must be one of late-fallback, no-typing" in " ".join(r.output.split())
