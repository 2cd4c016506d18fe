"""The AI-judges figure: balanced accuracy (Zhang's detectability) of each judge with its interval,
beside the human judges of the same items."""

from __future__ import annotations

from typing import Any

import numpy as np

from turinglab.analysis.report.figures import AI_COLOR, HUMAN_COLOR, Figure, _render, plt


def label(res: dict[str, Any]) -> str:
    if res.get("folds"):
        zhang = ", protocol zhang" if res.get("protocol") else ""
        return (f"{res['judge']} ({'stimulus-grouped' if res.get('group_by_stimulus') else 'plain'} "
                f"{res['folds']}-fold{zhang})")
    return f"{res['judge']} ({(res.get('model') or {}).get('model', 'zero-shot')})"


def detectability(results: list[dict[str, Any]]) -> Figure:
    """One bar per judge result, and one for the human judges (from the first result that has them)."""
    rows = [(label(r), r["balanced_accuracy"], *r["balanced_accuracy_ci"], r["n"], False) for r in results]
    hj = next((r["human_judges"] for r in results if r.get("human_judges")), None)
    if hj:
        rows.append((f"human judges ({hj['judges']})", hj["balanced_accuracy"], *hj["balanced_accuracy_ci"], hj["n"],
                     True))
    rows.sort(key=lambda r: r[1])
    fig, ax = plt.subplots(figsize=(7, 0.42 * len(rows) + 1.4))
    y = np.arange(len(rows))
    est = np.array([r[1] for r in rows], dtype=float)
    ax.barh(y, est, color=[HUMAN_COLOR if r[5] else AI_COLOR for r in rows], alpha=0.85, height=0.65)
    err = np.vstack([est - np.array([r[2] for r in rows], dtype=float),
                     np.array([r[3] for r in rows], dtype=float) - est])
    ax.errorbar(est, y, xerr=err, fmt="none", ecolor="black", capsize=3, lw=1)
    ax.set_yticks(y, [f"{r[0]}  (n={r[4]})" for r in rows])
    ax.axvline(0.5, color="black", ls="--", lw=1, label="chance")
    ax.set_xlim(0, 1)
    ax.set_xlabel("balanced accuracy (detecting the machine)")
    ax.legend(loc="lower right", frameon=False, fontsize=8)
    alpha = results[0].get("alpha", 0.05) if results else 0.05
    return _render(fig, "ai_judges", "AI judges beside human judges",
                   f"Bars: balanced accuracy; whiskers: exact {int(round(100 * (1 - alpha)))}% interval "
                   "(per-class Sterne intervals at alpha/2). Dashed: chance.")
