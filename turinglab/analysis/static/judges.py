"""The static report's "AI judges" section: every AI judge evaluated on the study's items
(`turinglab judges evaluate --study NAME`, results cached by item set and configuration), beside
the human judges of the same items. Numbers are the judges' own results, not recomputed here.
"""

from __future__ import annotations

import math
from typing import Any

from turinglab.analysis.pformat import p_text

HOW_TO = ("No AI judge has been evaluated on these items yet. Run, for example, "
          "`turinglab judges evaluate --study {study} --judge svm` (also rf, tfidf-lr, or llm with the "
          "embedded model), then write this report again.")


def _f(x: Any, d: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{float(x):.{d}f}"


def _p(p: Any) -> str:
    return p_text(p)


def _ci(pair: Any) -> str:
    if not pair or pair[0] is None:
        return "–"
    return f"[{_f(pair[0])}, {_f(pair[1])}]"


def label(res: dict[str, Any]) -> str:
    from turinglab.analysis.static.judges_figure import label as fig_label

    return fig_label(res)


def sections(results: list[dict[str, Any]], study: str, alpha: float) -> list[tuple[str, str, list[str], list[list]]]:
    """(title, intro, header, rows) of the AI-judges tables (the first one always present)."""
    pct = int(round(100 * (1 - alpha)))
    if not results:
        return [("AI judges", HOW_TO.format(study=study), [], [])]
    hj = next((r["human_judges"] for r in results if r.get("human_judges")), None)
    rows = []
    for r in results:
        mc = r.get("mcnemar_vs_humans") or {}
        rows.append([label(r), r["n"], _f(r["accuracy"]), _f(r["balanced_accuracy"]), _ci(r["balanced_accuracy_ci"]),
                     _f(r.get("auroc")), _f(r.get("tpr_at_5fpr")), r.get("unparsed", 0),
                     f"{mc['ai_right_human_wrong']} / {mc['ai_wrong_human_right']}" if mc.get("pairs") else "–",
                     _p(mc.get("p_value")) if mc.get("pairs") else "–"])
    if hj:
        rows.append([f"human judges ({hj['judges']})", hj["n"], _f(hj["accuracy"]), _f(hj["balanced_accuracy"]),
                     _ci(hj["balanced_accuracy_ci"]), "–", "–", "–", "–", "–"])
    intro = ("Each AI judge saw what a human judge sees (stimulus and response). Trained judges: cross-validated "
             "verdicts (each item judged by a model that did not train on it); plain folds can share a stimulus "
             "between training and test, stimulus-grouped folds cannot. Balanced accuracy is Zhang's detectability, "
             f"with an exact {pct}% interval; AUROC and the true-positive rate at 5% false positives use the judge's "
             "score (zero-shot judges: their confidence). McNemar: exact test on the human-judge trials paired with "
             "the AI judge's verdict on the same item (b = AI right and human wrong, c = the reverse).")
    out = [("AI judges", intro,
            ["judge", "items", "accuracy", "balanced accuracy", f"{pct}% exact", "AUROC", "TPR at 5% FPR",
             "unparsed", "McNemar b / c", "McNemar p"], rows)]
    out.append(("AI judges: the paper's or the project's own",
                "Which judge follows Zhang et al. (their linear SVM, or the judge `--protocol zhang` picks for the "
                "task, as far as the paper states it) and which is this project's own.",
                ["judge", "whose", "protocol"],
                [[label(r), r.get("judge_provenance", "the project's own"),
                  (r.get("protocol") or {}).get("name", "–")] for r in results]))
    per_agent = []
    for r in results:
        for a in r.get("agents", []):
            jh = a["judged_human"]
            g = a.get("giunti") or {}
            per_agent.append([label(r), a["agent"], a["n"], jh["k"] if "k" in jh else "–", _f(jh["rate"]),
                              f"[{_f(jh['low'])}, {_f(jh['high'])}]", g.get("decision", "–"), _p(g.get("p_value"))])
    if per_agent:
        out.append(("AI judges: judged-human rate per agent",
                    "How often each AI judge called an agent's responses human, with its exact interval, and "
                    "Giunti's two-player criteria (the agent's items against the human items, judged by the same "
                    "AI judge) as for the human judges above.",
                    ["judge", "agent", "items", "judged human", "rate", f"{pct}% exact", "Giunti", "p"], per_agent))
    return out


def figure(results: list[dict[str, Any]]) -> Any:
    from turinglab.analysis.static.judges_figure import detectability

    return detectability(results) if results else None
