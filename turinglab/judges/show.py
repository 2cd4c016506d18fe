"""Terminal view of one judge's result (the CLI without --json)."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _ci(lo: float | None, hi: float | None) -> str:
    return "" if lo is None or hi is None else f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def render(console, res: dict[str, Any]) -> None:
    design = res.get("fold_design", "")
    folds = f", {res['folds']} folds" if res.get("folds") else ""
    console.print(f"[bold]{res['judge']}[/bold] on {res['n']} {res['task']} items ({res.get('source', '')}); "
                  f"{design}{folds}, seeds {res.get('seeds')}" + (" (cached)" if res.get("cached") else ""),
                  highlight=False)
    if res.get("judge_provenance"):
        console.print(f"judge: {res['judge_provenance']}", highlight=False, markup=False)
    if res.get("image_features"):
        console.print(f"image features: {res['image_features']}", highlight=False, markup=False)
    pr = res.get("protocol")
    if pr:
        lo, hi = pr["accuracy_ci_exact_binomial"]
        console.print(f"protocol zhang: the paper's judge for this task is {pr['paper_judge']} "
                      f"({'followed' if pr['judge_follows_paper'] else 'NOT followed: another judge was asked for'}); "
                      f"balancing: {pr['balancing']} ({pr['items_used']} of {pr['items_given']} items)\n"
                      f"  paper: {pr['paper']}\n  not stated / not available: {pr['not_stated_or_unavailable']}\n"
                      f"  paper's figure: {pr['paper_figure']}\n  this run: accuracy {100 * pr['accuracy']:.1f} % "
                      f"[{100 * lo:.1f}, {100 * hi:.1f}] (exact binomial)", highlight=False, markup=False)
    t = Table("judge", "n", "accuracy", "balanced accuracy", "AUROC", "TPR@5%FPR", "unparsed")
    t.add_row(res["judge"], str(res["n"]), f"{_pct(res['accuracy'])} {_ci(*res['accuracy_ci'])}",
              f"{_pct(res['balanced_accuracy'])} {_ci(*res['balanced_accuracy_ci'])}",
              "-" if res.get("auroc") is None else f"{res['auroc']:.3f}", _pct(res.get("tpr_at_5fpr")),
              str(res.get("unparsed", 0)))
    hj = res.get("human_judges")
    if hj:
        t.add_row(f"human judges ({hj['judges']})", str(hj["n"]), f"{_pct(hj['accuracy'])} {_ci(*hj['accuracy_ci'])}",
                  f"{_pct(hj['balanced_accuracy'])} {_ci(*hj['balanced_accuracy_ci'])}", "-", "-", "-")
    console.print(t)
    c = res["confusion"]
    cols = list(c["human"].keys())
    ct = Table("truth \\ verdict", *cols, title="confusion")
    for tr in ("human", "machine"):
        ct.add_row(tr, *(str(c[tr][k]) for k in cols))
    console.print(ct)
    at = Table("agent", "n", "detected", "judged human", "humans judged human", "p_m/p_h [CI]", "Giunti",
               title="per agent (the judge's own 'judged human' rate, Giunti two-player criteria)")
    for a in res["agents"]:
        g = a.get("giunti") or {}
        hu = g.get("humanness") or {}
        at.add_row(a["agent"], str(a["n"]), _pct(a["detected"]["rate"]), _pct(a["judged_human"]["rate"]),
                   _pct((g.get("threshold") or {}).get("estimate")),
                   "-" if hu.get("estimate") is None else f"{hu['estimate']:.2f} [{hu.get('low') or 0:.2f}, "
                   f"{hu['high'] if hu.get('high') is not None else float('inf'):.2f}]",
                   str(g.get("decision", "-")))
    console.print(at)
    mc = res.get("mcnemar_vs_humans")
    if mc and mc.get("pairs"):
        console.print(f"paired with {mc['pairs']} human-judge trials on {mc['items']} items: AI right/human wrong "
                      f"{mc['ai_right_human_wrong']}, AI wrong/human right {mc['ai_wrong_human_right']}; "
                      f"exact McNemar p = {mc['p_value']:.3g}", highlight=False)


def render_code(console, res: dict[str, Any]) -> None:
    """`--protocol zhang-code`: the authors' benchmark judge, one row per judged machine agent."""
    console.print(f"{res['judge']} as in {res['source_code']} on the {res['task']} items "
                  f"({res.get('source', '')}); KFold({res['folds']}, shuffle, random_state={res['fold_seed']}); "
                  f"features {','.join(res['features'])} ({res['n_features']})" + (" (cached)" if res.get("cached") else ""),
                  highlight=False, markup=False)
    console.print(f"stand-ins: {res['stand_ins']}\npaper's figure: {res['paper_figure']}", highlight=False, markup=False)
    t = Table("judged agent", "data sets", "scored items", "accuracy (mean of folds)", "sd over sets",
              "pooled [exact CI]", "human judged human", "agent judged machine")
    for a in res["agents"]:
        c = a["confusion"]
        nh = c["human"]["human"] + c["human"]["machine"]
        nm = c["machine"]["human"] + c["machine"]["machine"]
        t.add_row(a["agent"], str(a["data_sets"]), str(a["pooled_scored"]), _pct(a["accuracy"]), _pct(a["accuracy_sd"]),
                  f"{_pct(a['pooled_correct'] / a['pooled_scored'])} {_ci(*a['pooled_accuracy_ci_exact_binomial'])}",
                  _pct(c["human"]["human"] / nh if nh else None), _pct(c["machine"]["machine"] / nm if nm else None))
    console.print(t)
    console.print(f"mean over agents: {_pct(res['mean_accuracy'])}", highlight=False)
