"""The report's belief-tracking section (issue 29): figures, table rows and the Markdown text."""

from __future__ import annotations

import math
from collections.abc import Callable

import matplotlib.pyplot as plt

from turinglab.analysis.live.belief import BeliefAnalysis
from turinglab.analysis.report.figures import AI_COLOR, GREY, HUMAN_COLOR, Figure, _render

PALETTE = [AI_COLOR, HUMAN_COLOR, "#5a9e5a", "#9a5fb0", "#b5504a", GREY]


def _by(b: BeliefAnalysis) -> str:
    """Two-player curves by witness kind; three-player (every game has both kinds) by AI witness."""
    kinds = set(b.per_game["kind"])
    return "kind" if kinds <= {"ai", "human"} and len(kinds) > 1 else "witness"


def _color(group: str, i: int) -> str:
    return {"ai": AI_COLOR, "human": HUMAN_COLOR}.get(group, PALETTE[i % len(PALETTE)])


def trajectory_figure(b: BeliefAnalysis) -> Figure:
    by = _by(b)
    t = b.trajectories[b.trajectories["by"] == by]
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    for i, (group, g) in enumerate(t.groupby("group", sort=True)):
        c = _color(str(group), i)
        ax.plot(g["k"], g["mean"], marker="o", color=c, label=f"{group}")
        ax.fill_between(g["k"], g["low"].fillna(g["mean"]), g["high"].fillna(g["mean"]), color=c, alpha=0.15)
    ax.axhline(0.5, color=GREY, lw=0.8, ls=":")
    ax.axhline(b.confident, color=GREY, lw=0.8, ls="--")
    ax.set_ylim(0, 1)
    ax.set_xlabel("witness replies so far")
    ax.set_ylabel("belief in the truth")
    ax.legend(frameon=False, fontsize=8)
    return _render(fig, "belief_trajectories", "Belief trajectories",
                   f"Mean belief in the truth after each witness reply, by {'witness kind' if by == 'kind' else 'AI witness'}, "
                   f"with {int(round(100 * (1 - b.alpha)))}% t intervals over games (0.5: undecided, the slider's start; "
                   f"dashed: the confident threshold {b.confident:.2f}).")


def detection_figure(b: BeliefAnalysis) -> Figure:
    by = _by(b)
    groups = sorted({g for (x, g, _) in b.curves if x == by})
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), sharey=True)
    for ax, scale, label in ((axes[0], "s", "seconds from the start"), (axes[1], "k", "witness replies")):
        for i, group in enumerate(groups):
            c, curve = _color(group, i), b.curves[(by, group, scale)]
            ax.step(curve["t"], curve["surv"], where="post", color=c, label=group)
            ax.fill_between(curve["t"], curve["low"], curve["high"], step="post", color=c, alpha=0.15)
        ax.set_xlabel(label)
        ax.set_ylim(0, 1.02)
    axes[0].set_ylabel("share not yet detected")
    axes[0].legend(frameon=False, fontsize=8)
    return _render(fig, "belief_detection", "Time to detection",
                   f"Kaplan–Meier curves of the time to the first correct confident belief (belief in the truth ≥ "
                   f"{b.confident:.2f}); games without one are censored at their end; log-log pointwise intervals.")


def figures(b: BeliefAnalysis | None) -> list[Figure]:
    return [] if b is None else [trajectory_figure(b), detection_figure(b)]


def method(b: BeliefAnalysis) -> str:
    return (f"Belief tracking: {b.n_moves} slider moves in {b.n_games} games. A move's value becomes the belief in the "
            "truth (two-player: value/100 for an AI witness, 1 − value/100 for a human; three-player: value/100 when "
            "B is the human, else 1 − value/100); after each witness reply a game's belief is its last move so far, "
            f"0.5 before any. Time to detection is the first move with belief in the truth ≥ {b.confident:.2f}, in seconds "
            "and in replies; games without one are censored at their end (Kaplan–Meier, statsmodels; the median is the "
            "first time the curve falls below 1/2, its interval statsmodels' quantile_ci, which treats games as "
            "independent; since interrogators play several games, a cluster bootstrap interval resampling "
            "interrogators is given beside it (percentile, 400 draws; ∞: the curve did not fall below 1/2 in enough draws)")


def _num(x, d: int = 1) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def _iv(r: dict, key: str, d: int = 1) -> str:
    lo, hi = r.get(f"{key}_low"), r.get(f"{key}_high")
    if lo is None or (isinstance(lo, float) and math.isnan(lo)):
        return "–"
    return f"[{_num(lo, d)}, {'∞' if hi is None or not math.isfinite(hi) else _num(hi, d)}]"


def rows(b: BeliefAnalysis) -> dict:
    """Table rows as plain strings and numbers (the templates escape them)."""
    r = b.records()
    det = [{"by": "witness kind" if x["by"] == "kind" else "witness", "group": x["group"], "n": x["n"],
            "events": x["events"], "median_s": _num(x["median_s"]), "iv_s": _iv(x, "median_s"),
            "median_k": _num(x["median_k"], 0), "iv_k": _iv(x, "median_k", 0),
            "boot_s": _iv(x, "median_s_boot"), "boot_k": _iv(x, "median_k_boot", 0)} for x in r["detection"]]
    moves = [{**x, "change": f"{x['change']:+.2f}"} for x in r["moves"]]
    return {"method": method(b), "detection": det, "moves": moves, "pct": int(round(100 * (1 - b.alpha)))}


def markdown(b: BeliefAnalysis, esc: Callable[[str], str]) -> str:
    c = rows(b)
    out = ["## Belief tracking", "", esc(c["method"]) + ".", "",
           f"Table: Time to the first correct confident belief (medians with {c['pct']}% intervals)", "",
           "| by | group | games | detected | median s | interval | bootstrap | median replies | interval | bootstrap |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    out += [f"| {r['by']} | {esc(r['group'])} | {r['n']} | {r['events']} | {r['median_s']} | {r['iv_s']} | {r['boot_s']} "
            f"| {r['median_k']} | {r['iv_k']} | {r['boot_k']} |" for r in c["detection"]]
    out += ["", "Table: The replies after which belief moved most", "",
            "| witness | reply | change | question | reply text | tags |", "|---|---|---|---|---|---|"]
    out += [f"| {esc(r['witness'])} | {r['k']} | {r['change']} | {esc(r['question'])} | {esc(r['reply'])} | {esc(r['tags'])} |"
            for r in c["moves"]]
    return "\n".join(out)
