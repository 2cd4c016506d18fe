"""Figures of a study (matplotlib, Agg): each returned as PNG bytes and SVG text."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from turinglab.analysis.live.core import Analysis  # noqa: E402

AI_COLOR = "#3b6ea8"
HUMAN_COLOR = "#d08a2e"
GREY = "#777777"
plt.rcParams.update({"font.size": 10, "axes.spines.top": False, "axes.spines.right": False,
                     "svg.hashsalt": "turinglab", "svg.fonttype": "none"})


@dataclass
class Figure:
    name: str
    title: str
    caption: str
    png: bytes
    svg: str


_SVG = {"on": True}  # all_figures(svg=False) skips the SVGs (the HTML report inlines PNGs only)


def _render(fig, name: str, title: str, caption: str) -> Figure:
    png, svg = io.BytesIO(), io.StringIO()
    fig.savefig(png, format="png", dpi=130, bbox_inches="tight")
    if _SVG["on"]:
        fig.savefig(svg, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return Figure(name, title, caption, png.getvalue(), svg.getvalue())


def success_rates(a: Analysis) -> Figure:
    t = a.success.sort_values("sr", ascending=True).reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7, 0.42 * len(t) + 1.4))
    y = np.arange(len(t))
    colors = [HUMAN_COLOR if k == "human" else AI_COLOR for k in t["kind"]]
    ax.barh(y, t["sr"], color=colors, alpha=0.85, height=0.65)
    err = np.vstack([t["sr"] - t["low"], t["high"] - t["sr"]])
    ax.errorbar(t["sr"], y, xerr=err, fmt="none", ecolor="black", capsize=3, lw=1)
    ax.set_yticks(y, [f"{w}  (n={n})" for w, n in zip(t["witness"], t["n"])])
    ax.axvline(0.5, color="black", ls="--", lw=1, label="50% (chance)")
    hum = t[t["kind"] == "human"]
    if a.format == "two-player" and len(hum):
        ax.axvline(float(hum["sr"].iloc[0]), color=HUMAN_COLOR, ls=":", lw=1.5, label="human witnesses' SR")
    ax.set_xlim(0, 1)
    ax.set_xlabel("success rate (share of games judged human)")
    ax.legend(loc="lower right", frameon=False, fontsize=8)
    pct = int(round(100 * (1 - a.options.alpha)))
    return _render(fig, "success_rates", "Success rate per witness",
                   f"Bars: SR; whiskers: exact {pct}% Sterne interval (hull). Dashed: 50%.")


def confusion(a: Analysis) -> Figure:
    df = a.judgements
    m = np.zeros((2, 2), dtype=int)
    for i, kind in enumerate(("human", "ai")):
        d = df[df["witness_kind"] == kind]
        m[i, 0] = int(d["judged_human"].sum())
        m[i, 1] = len(d) - m[i, 0]
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    rows = m.sum(1, keepdims=True).clip(min=1)
    ax.imshow(m / rows, cmap="Blues", vmin=0, vmax=1)
    for i in range(2):
        for j in range(2):
            share = m[i, j] / rows[i, 0]
            ax.text(j, i, f"{m[i, j]}\n({share:.0%})", ha="center", va="center",
                    color="white" if share > 0.6 else "black")
    ax.set_xticks([0, 1], ["judged human", "judged AI"])
    ax.set_yticks([0, 1], ["human witness", "AI witness"])
    ax.set_title("Verdicts by true witness kind", fontsize=10)
    for s in ax.spines.values():
        s.set_visible(False)
    return _render(fig, "confusion", "Confusion matrix", "Rows: truth; columns: verdict; row shares in brackets.")


def calibration(a: Analysis) -> Figure:
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot([0.5, 1], [0.5, 1], color=GREY, ls="--", lw=1, label="perfect calibration")
    styles = {"all": ("black", "o"), "ai": (AI_COLOR, "s"), "human": (HUMAN_COLOR, "^")}
    dodge = {"all": 0.0, "ai": -0.007, "human": 0.007}  # keep overlapping error bars apart
    for kind, g in a.calibration.groupby("kind", sort=False):
        g = g[g["n"] > 0]
        if g.empty:
            continue
        c, mk = styles.get(kind, ("black", "o"))
        err = np.vstack([g["observed"] - g["low"], g["high"] - g["observed"]])
        label = {"all": "all games", "ai": "AI witnesses", "human": "human witnesses"}.get(kind, kind)
        ax.errorbar(g["stated"] + dodge.get(kind, 0.0), g["observed"], yerr=err, color=c, marker=mk, capsize=3, lw=1, label=label)
    ax.set_xlim(0.48, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("stated probability correct (0.5 + confidence/200)")
    ax.set_ylabel("observed accuracy")
    ax.legend(frameon=False, fontsize=8, loc="lower right")
    return _render(fig, "calibration", "Confidence calibration",
                   "Points: accuracy within confidence bins with exact intervals; dashed: perfect calibration.")


def by_game_index(a: Analysis) -> Figure:
    t = a.by_index
    fig, ax = plt.subplots(figsize=(5, 3.6))
    x = np.arange(len(t))
    err = np.vstack([t["rate"] - t["low"], t["high"] - t["rate"]])
    ax.errorbar(x, t["rate"], yerr=err, marker="o", color=AI_COLOR, capsize=3)
    for xi, n in zip(x, t["n"]):
        ax.annotate(f"n={n}", (xi, 0.03), ha="center", fontsize=7, color=GREY)
    ax.axhline(0.5, color="black", ls="--", lw=1)
    ax.set_xticks(x, t["game_index"])
    ax.set_ylim(0, 1)
    ax.set_xlabel("interrogator's game number")
    ax.set_ylabel("accuracy")
    return _render(fig, "by_game_index", "Accuracy by game number", "Share of correct verdicts with exact intervals.")


def _ecdf(v: np.ndarray, max_points: int = 600) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF, thinned to at most `max_points` steps (keeps big studies' SVGs small)."""
    v = np.sort(v)
    y = np.arange(1, len(v) + 1) / max(len(v), 1)
    if len(v) > max_points:
        keep = np.unique(np.r_[np.linspace(0, len(v) - 1, max_points).astype(int), len(v) - 1])
        v, y = v[keep], y[keep]
    return v, y


def game_length(a: Analysis) -> Figure:
    """Two-player: game length and messages per game by witness kind. Three-player: both
    conversations of a game last equally long, so the left panel shows reply latency instead."""
    three = a.format == "three-player"
    g = a.games if not three else a.judgements
    lat = a.extra.get("latency") if a.extra else None
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for kind, color in (("human", HUMAN_COLOR), ("ai", AI_COLOR)):
        d = g[g["witness_kind"] == kind]
        if d.empty:
            continue
        label = f"{'human' if kind == 'human' else 'AI'} witness (n={len(d)})"
        left = (lat.loc[lat["witness_kind"] == kind, "latency_s"] if three and lat is not None
                else d["duration_s"])
        for ax, col in ((axes[0], left), (axes[1], d["n_messages"])):
            x, y = _ecdf(col.dropna().to_numpy(dtype=float))
            ax.step(x, y, color=color, label=label, where="post")
    axes[0].set_xlabel("median reply latency per conversation (s)" if three else "game length (s)")
    axes[1].set_xlabel("messages in the conversation")
    axes[0].set_ylabel("cumulative share")
    axes[1].set_ylabel("cumulative share")
    axes[0].legend(frameon=False, fontsize=8, loc="lower right")
    tc = a.extra.get("timing_check", {}) if a.extra else {}
    key = "latency" if three else "duration"
    ks = (tc.get(key) or {}).get("p_value", a.timing.attrs.get("ks_p", float("nan")))
    test = "Wilcoxon signed-rank, paired within game" if three else "KS test of durations"
    fig.suptitle(f"Timing-leak check ({test}, p = {ks:.3f})", fontsize=10)
    return _render(fig, "game_length", "Game length and reply latency by witness kind" if three else "Game length by witness kind",
                   "Empirical CDFs; curves that differ would let timing reveal the witness kind.")


def all_figures(a: Analysis, svg: bool = True) -> list[Figure]:
    _SVG["on"] = svg
    try:
        return [success_rates(a), confusion(a), calibration(a), by_game_index(a), game_length(a), *further_figures(a)]
    finally:
        _SVG["on"] = True


def save(figs: list[Figure], out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in figs:
        (out / f"{f.name}.png").write_bytes(f.png)
        (out / f"{f.name}.svg").write_text(f.svg)
        paths += [out / f"{f.name}.png", out / f"{f.name}.svg"]
    return paths


# ---- further Jones & Bergen figures (data from Analysis.extra) ----

def _hbars(ax, labels, rate, low, high, colors=AI_COLOR) -> None:
    y = np.arange(len(labels))
    ax.barh(y, rate, color=colors, alpha=0.85, height=0.65)
    ax.errorbar(rate, y, xerr=np.vstack([np.asarray(rate) - np.asarray(low), np.asarray(high) - np.asarray(rate)]),
                fmt="none", ecolor="black", capsize=3, lw=1)
    ax.set_yticks(y, labels)


def first_games(a: Analysis) -> Figure:
    t = a.success.sort_values("sr_first", ascending=True, na_position="first").reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7, 0.42 * len(t) + 1.4))
    colors = [HUMAN_COLOR if k == "human" else AI_COLOR for k in t["kind"]]
    r = t["sr_first"].fillna(0)
    _hbars(ax, [f"{w}  (n={n})" for w, n in zip(t["witness"], t["n_first"])], r,
           t["low_first"].fillna(0), t["high_first"].fillna(0), colors)
    ax.axvline(0.5, color="black", ls="--", lw=1)
    ax.set_xlim(0, 1)
    ax.set_xlabel("success rate in interrogators' first games")
    pct = int(round(100 * (1 - a.options.alpha)))
    return _render(fig, "first_games", "Success rate in first games",
                   f"Only each interrogator's first game (no learning, no carry-over); exact {pct}% intervals. Dashed: 50%.")


def by_index_kind(a: Analysis) -> Figure:
    t = a.extra.get("by_index_kind")
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for kind, color, dx in (("ai", AI_COLOR, -0.06), ("human", HUMAN_COLOR, 0.06)):
        g = t[t["kind"] == kind] if t is not None and len(t) else None
        if g is None or g.empty:
            continue
        err = np.vstack([g["rate"] - g["low"], g["high"] - g["rate"]])
        ax.errorbar(g["i"] + dx, g["rate"], yerr=err, marker="o", color=color, capsize=3,
                    label="AI witness" if kind == "ai" else "human witness")
        ax.set_xticks(g["i"], g["game_index"])
    ax.axhline(0.5, color="black", ls="--", lw=1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("interrogator's game number")
    ax.set_ylabel("accuracy")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(frameon=False, fontsize=8)
    return _render(fig, "by_index_kind", "Accuracy by game number and witness kind",
                   "Share of correct verdicts with exact intervals, separately for games with an AI and with a human witness.")


def _small_multiples(t, value, low, high, xlabel, name, title, caption, xlim=(0, 1), ref=None):
    variables = list(dict.fromkeys(t["variable"])) if len(t) else []
    fig, axes = plt.subplots(1, max(len(variables), 1), figsize=(2.6 * max(len(variables), 1), 3.2), squeeze=False)
    for ax, var in zip(axes[0], variables):
        g = t[t["variable"] == var]
        y = np.arange(len(g))
        if low is None:
            ax.barh(y, g[value], color=AI_COLOR, alpha=0.85, height=0.65)
        else:
            ax.errorbar(g[value], y, xerr=np.vstack([g[value] - g[low], g[high] - g[value]]), fmt="o",
                        color=AI_COLOR, capsize=3)
        ax.set_yticks(y, [str(x) for x in g["group"]], fontsize=7)
        ax.set_title(str(var), fontsize=9)
        if xlim:
            ax.set_xlim(*xlim)
        if ref is not None:
            ax.axvline(ref, color="black", ls="--", lw=1)
        ax.set_xlabel(xlabel, fontsize=8)
    fig.tight_layout()
    return _render(fig, name, title, caption)


def demographics_accuracy(a: Analysis) -> Figure:
    from turinglab.analysis.live.jb import VARIABLE_LABELS, group_label

    t = a.demographics if a.demographics is not None else None
    if t is None or t.empty:
        t = __import__("pandas").DataFrame(columns=["variable", "group", "rate", "low", "high"])
    else:
        t = t.assign(group=[group_label(v, g) for v, g in zip(t["variable"], t["group"])],
                     variable=t["variable"].map(lambda v: VARIABLE_LABELS.get(v, v)))
    return _small_multiples(t, "rate", "low", "high", "accuracy", "demographics_accuracy",
                            "Accuracy by interrogator demographics",
                            "Share of correct verdicts per group with exact intervals (descriptive; Jones & Bergen fig. 5). Dashed: 50%.",
                            ref=0.5)


def demographics_distribution(a: Analysis) -> Figure:
    t = a.extra.get("distribution")
    return _small_multiples(t, "interrogators", None, None, "interrogators", "demographics_distribution",
                            "Interrogators' demographics", "Number of interrogators per group (Jones & Bergen fig. 14).",
                            xlim=None)


def dprime_regression(a: Analysis) -> Figure:
    reg = a.extra.get("dprime_reg") or {}
    t = reg.get("table")
    fig, ax = plt.subplots(figsize=(6, 0.4 * max(len(t) if t is not None else 0, 1) + 1.4))
    if t is not None and len(t):
        t = t[t["term"] != "Intercept"].iloc[::-1]
        y = np.arange(len(t))
        ax.errorbar(t["estimate"], y, xerr=np.vstack([t["estimate"] - t["low"], t["high"] - t["estimate"]]),
                    fmt="o", color=AI_COLOR, capsize=3)
        ax.set_yticks(y, t["label"], fontsize=8)
        ax.axvline(0, color="black", ls="--", lw=1)
    else:
        ax.text(0.5, 0.5, reg.get("note") or "not fitted", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("change in per-interrogator d′")
    pct = int(round(100 * (1 - a.options.alpha)))
    return _render(fig, "dprime_regression", "Per-interrogator d′ against demographics",
                   f"OLS coefficients with {pct}% intervals (Jones & Bergen appendix F, fig. 15). Dashed: no effect.")


def tag_top(a: Analysis, taxonomy: str) -> Figure:
    import textwrap

    t = a.extra.get(f"{taxonomy}_top")
    # each label whole, wrapped at word boundaries (it was cut at 50 characters, mid-word)
    labels = [textwrap.fill(f"{c} {n.split(' - ')[0]}", 42) for c, n in zip(t["category"], t["name"])][::-1] \
        if t is not None else []
    lines = sum(lab.count("\n") + 1 for lab in labels)
    fig, ax = plt.subplots(figsize=(8, 0.24 * max(lines, 1) + 0.2 * len(labels) + 1.4))
    if t is not None and len(t):
        t = t.iloc[::-1]
        _hbars(ax, labels, t["rate"], t["low"], t["high"])
        ax.set_xlim(0, 1)
    else:
        ax.text(0.5, 0.5, "no games tagged", ha="center", va="center", transform=ax.transAxes)
    ax.set_xlabel("share of tagged games")
    word = "strategies" if taxonomy == "strategy" else "reasons"
    return _render(fig, f"{taxonomy}_top", f"Most frequent {word}",
                   f"Top {word} (hand tags, any tagger) as a share of the games tagged in that taxonomy, exact intervals.")


def leaderboard(a: Analysis) -> Figure:
    t = (a.extra.get("leaderboard") or {}).get("table")
    fig, ax = plt.subplots(figsize=(7, 0.4 * max(len(t) if t is not None else 0, 1) + 1.4))
    if t is not None and len(t):
        t = t.iloc[::-1]
        labels = [f"{w} · {f}{' · bot' if b else ''}  (n={n})" for w, f, b, n in zip(t["witness"], t["format"], t["bot"], t["n"])]
        colors = [GREY if b else (HUMAN_COLOR if k == "human" else AI_COLOR) for k, b in zip(t["kind"], t["bot"])]
        _hbars(ax, labels, t["rate"], t["low"], t["high"], colors)
    ax.axvline(0.5, color="black", ls="--", lw=1)
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of games judged human")
    return _render(fig, "leaderboard", "Humanlikeness leaderboard",
                   "Judged-human rate per witness with exact intervals; grey bars are bot games (flag bot), shown apart.")


def further_figures(a: Analysis) -> list[Figure]:
    if not a.extra:
        return []
    figs = [first_games(a), demographics_accuracy(a), demographics_distribution(a), dprime_regression(a),
            tag_top(a, "strategy"), tag_top(a, "reason"), leaderboard(a)]
    if a.format == "two-player":
        figs.append(by_index_kind(a))
    return figs
