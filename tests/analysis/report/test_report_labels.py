"""Each table's decision rule named beside it, saying what the code does (issue 42 items 2 and 5)."""

from __future__ import annotations

import pandas as pd
import pytest

from turinglab.analysis.demo.synth import SynthSpec, from_counts, simulate
from turinglab.analysis.live.core import Options, analyse
from turinglab.analysis.report.report import render_html, render_markdown
from turinglab.analysis.static.report import _tables, analyse_static

OLD_RULE = "the whole 95% set is at or above the threshold"


@pytest.fixture(scope="module")
def two_player():
    # M: 10 of 40 judged human, humans 17 of 40: M's own Sterne set lies wholly below 0.425 ...
    df = from_counts({"M": (10, 40), "N": (20, 40)}, human=(17, 40), seed=3)
    return analyse(df, None, Options(n_boot=50, max_games_mixed=0))


def test_two_player_header_says_the_test_decides(two_player):
    crit = two_player.criteria.set_index("witness")
    m = crit.loc["M"]
    # ... yet Boschloo does not reject, so the decision is inconclusive: the header must say why
    assert m["ms_high"] < m["threshold"] and m["decision"] == "inconclusive" and m["p_value"] > 0.05
    for text in (render_html(two_player), render_markdown(two_player, "f", {})):
        assert OLD_RULE not in text
        assert "the decision comes from the two-sided test of P(S_m) = P(S_h)" in text
        assert "a set wholly below the threshold can still be inconclusive" in text
        assert "p exact" not in text  # the comparisons' p may be the score test's
        assert "p (test, Holm)" in text
        assert "α/(m − r + 1)" in text and "α/(m − r)" not in text.replace("α/(m − r + 1)", "")
        assert "Each pass decision and each comparison between witnesses also gets a cluster-robust test" in text
        assert "d′ = Z(hit rate) − Z(false-alarm rate) with rates smoothed (x+0.5)/(n+1)" in text


def test_three_player_labels_match_the_code():
    df = from_counts({"M": (12, 30), "N": (20, 30)}, format="three-player", seed=1)
    a = analyse(df, None, Options(n_boot=50, max_games_mixed=0))
    assert a.dprime["design"] == "2AFC"
    for text in (render_html(a), render_markdown(a, "f", {})):
        assert "unsmoothed" in text and "smoothed (x+0.5)/(n+1) (Jones" not in text
        assert "comparison between witnesses also gets" not in text  # there are no comparisons
        assert "Each pass decision also gets a cluster-robust test" in text
        assert "exact 95% Sterne set (the rates the two-tailed exact test" in text


def test_gee_sentence_reads_whole():
    df, parts = simulate(SynthSpec(n_games=300, seed=4))
    html = render_html(analyse(df, parts, Options(n_boot=50, max_games_mixed=0)))
    assert "no mixed-effects model" in html
    assert "A GEE (binomial, exchangeable working correlation, groups = interrogator, robust SEs) gives marginal" in html
    assert ", and a GEE cross-check" not in html and "while the GEE's are marginal" not in html


def test_static_report_names_its_test_and_prints_small_p():
    rows = []
    for j in range(30):
        for i in range(20):
            machine = i % 2 == 1
            # humans judged human 9 times in 10, the agent 1 time in 10: p far below 0.001
            human_answer = "human" if (i // 2 + j) % 10 else "machine"
            bot_answer = "human" if (i // 2 + j) % 10 == 0 else "machine"
            rows.append({"judge_id": f"j{j}", "truth": "machine" if machine else "human", "agent": "bot" if machine else "human",
                         "answer": bot_answer if machine else human_answer})
    df = pd.DataFrame(rows)
    df["control"], df["control_correct"], df["length"], df["rt_ms"] = False, None, float("nan"), 2000
    df["judged_human"] = (df["answer"] == "human").astype(int)
    df["correct"] = (df["answer"] == df["truth"]).astype(int)
    a = analyse_static(df, None, study="t", task="word", n_boot=50)
    (_, intro, header, body), = [t for t in _tables(a) if t[0] == "Judged-human rate per agent"]
    assert a.agents.set_index("agent").loc["bot", "giunti_p"] < 0.001
    assert "Boschloo exact unconditional, two-sided" in intro and "interval of p_m / p_h against 1" not in intro
    bot = [r for r in body if r[0] == "bot"][0]
    assert bot[header.index("p")] == "< 0.001" and bot[header.index("Giunti")] == "fails"
