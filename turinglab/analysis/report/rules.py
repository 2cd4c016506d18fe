"""The decision rule of each table, in words, the same in the HTML and the Markdown report.

One rule per question: three-player pass criteria decide from the machine's exact Sterne set
against 0.5 (the dual of the exact test whose p is shown); two-player pass criteria and
comparisons between witnesses decide from one two-sample test of P(S_m) = P(S_h) (Boschloo, or
the score test above the cell limit, named per row). In the two-player format the threshold
P(S_h) is itself estimated, so Giunti's rule ("every value compatible with the data is at or
above the threshold") is a statement about the difference P(S_m) - P(S_h), which is what the
two-sample test checks; the machine's own interval against the point estimate of P(S_h) would
ignore the threshold's uncertainty and is shown as a description only.
"""

from __future__ import annotations


def criteria_rule(fmt: str, pct: int, alpha: float, closed_size: str = "") -> str:
    """The decision rule of the pass-criteria tables (plain text; no user text)."""
    if fmt == "three-player":
        return (f"Absolute criterion: the machine passes when P(S_m) ≥ 0.5. Decision from the machine's exact {pct}% "
                "Sterne set (the rates the two-tailed exact test of the column “p” does not reject at "
                f"α = {alpha:g}): passes when the whole set is at or above 0.5, fails when it is all below, "
                "inconclusive when it straddles 0.5. Degree of humanness = P(S_m) / 0.5." + closed_size)
    return ("Absolute criterion: the machine passes when P(S_m) ≥ P(S_h), the human witnesses' SR. P(S_h) is "
            "estimated too, so the decision comes from the two-sided test of P(S_m) = P(S_h) named in the column "
            f"“test” (the column “p”), not from the machine's {pct}% set: passes when the test rejects at "
            f"α = {alpha:g} with the machine's SR above the humans', fails when it rejects with it below, "
            f"inconclusive otherwise. The machine's {pct}% set and the interval of the degree of humanness "
            "P(S_m) / P(S_h) are descriptive: a set wholly below the threshold can still be inconclusive when "
            "the humans' SR is uncertain.")


COMPARISONS_HEADER = ["a", "b", "SR a − SR b", "test", "p (test)", "p (test, Holm)", "SE cluster-robust",
                      "p cluster-robust", "p cluster-robust (Holm)"]


def comparisons_rule(n: int) -> str:
    return ("Each pair of witnesses by the test of two independent binomials that the pass criteria use "
            "(Boschloo's exact unconditional test, or the score test above the cell limit: named in the column "
            f"“test”, whose p is “p (test)”), two-sided, Holm-adjusted over all {n} comparisons. These tests "
            "treat games as independent; games are clustered in interrogators, so the cluster-robust test "
            "(difference of SRs with a sandwich SE over interrogators, t with G−1 df; Holm-adjusted likewise) is "
            "shown beside it. Where they disagree, trust the cluster-robust one.")


def holm_words(m: int) -> str:
    return (f"Holm's step-down over the {m}: the p-values are ordered from the smallest, the r-th smallest "
            "(r = 1, …, m) is decided at α/(m − r + 1) by the same rule, and once one is inconclusive so are all after it")
