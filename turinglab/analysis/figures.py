"""Figures of a study (matplotlib, Agg): each returned as PNG bytes and SVG text."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from turinglab.analysis.core import Analysis  # noqa: E402

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


def _render(fig, name: str, title: str, caption: str) -> Figure:
    png, svg = io.BytesIO(), io.StringIO()
    fig.savefig(png, format="png", dpi=130, bbox_inches="tight")
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
    g = a.games if a.format == "two-player" else a.judgements
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.4))
    for kind, color in (("human", HUMAN_COLOR), ("ai", AI_COLOR)):
        d = g[g["witness_kind"] == kind]
        if d.empty:
            continue
        label = f"{'human' if kind == 'human' else 'AI'} witness (n={len(d)})"
        for ax, col in ((axes[0], "duration_s"), (axes[1], "n_messages")):
            x, y = _ecdf(d[col].dropna().to_numpy(dtype=float))
            ax.step(x, y, color=color, label=label, where="post")
    axes[0].set_xlabel("game length (s)")
    axes[1].set_xlabel("messages in the conversation")
    axes[0].set_ylabel("cumulative share of games")
    axes[0].legend(frameon=False, fontsize=8, loc="lower right")
    ks = a.timing.attrs.get("ks_p", float("nan"))
    fig.suptitle(f"Timing-leak check (KS test of durations, p = {ks:.3g})", fontsize=10)
    return _render(fig, "game_length", "Game length by witness kind",
                   "Empirical CDFs; curves that differ would let timing reveal the witness kind.")


def all_figures(a: Analysis) -> list[Figure]:
    return [success_rates(a), confusion(a), calibration(a), by_game_index(a), game_length(a)]


def save(figs: list[Figure], out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in figs:
        (out / f"{f.name}.png").write_bytes(f.png)
        (out / f"{f.name}.svg").write_text(f.svg)
        paths += [out / f"{f.name}.png", out / f"{f.name}.svg"]
    return paths
