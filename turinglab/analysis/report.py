"""The study report: one self-contained HTML file (figures inlined) or Markdown (+ figure files).

User text (reasons, tags) is untrusted: HTML goes through Jinja autoescape, Markdown
through `md_escape`.
"""

from __future__ import annotations

from collections.abc import Callable

import base64
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from turinglab.analysis import tables
from turinglab.analysis.core import Analysis
from turinglab.analysis.figures import Figure, all_figures, save

REASON_SAMPLE = 12


def _isnan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def f(x, digits: int = 3) -> str:
    return "–" if _isnan(x) else f"{float(x):.{digits}f}"


def p(x) -> str:
    if _isnan(x):
        return "–"
    x = float(x)
    return "< 0.001" if x < 0.001 else f"{x:.3f}"


def interval_text(row) -> str:
    pieces = row.get("pieces") if isinstance(row, dict) else None
    if pieces and len(pieces) > 1:
        return " ∪ ".join(f"[{a:.3f}, {b:.3f}]" for a, b in pieces)
    return f"[{f(row['low'])}, {f(row['high'])}]"


def ipw_text() -> str:
    return (
        "Thompson sampling gives better witnesses more games. Each AI game is weighted by 1/π, π being "
        "the recorded probability that matchmaking chose its witness (Hájek estimator: Σ Y/π ÷ Σ 1/π). "
        "Estimand: the success rate the witness would have had had it been chosen in every AI game of "
        "the study (the same interrogators at the same points in their sequence), rather than over the "
        "games it happened to get. Intervals: cluster bootstrap over interrogators, treating the recorded "
        "probabilities as fixed (approximate when allocation adapts strongly; very small π make the estimate unstable)."
    )


def blocked_text(a: Analysis) -> str:
    """How many AI outputs the content filter blocked in the analysed games."""
    j = a.judgements
    if j is None or "ai_outputs_blocked" not in j.columns:
        return "Blocked AI outputs: not recorded in this data."
    per_game = j.drop_duplicates("game_id")["ai_outputs_blocked"].fillna(0).astype(int)
    n, k = int(per_game.sum()), int((per_game > 0).sum())
    if n == 0:
        return "Blocked AI outputs: none (the content filter blocked no AI reply in the analysed games)."
    return (f"Blocked AI outputs: {n} in {k} game{'s' if k != 1 else ''} (the content filter blocked the reply; "
            "the model was asked again within the designed delay, then the fallback answered).")


def methods(a: Analysis, esc: Callable[[str], str] = str) -> list[str]:
    o, e = a.options, a.exclusions
    pct = int(round(100 * (1 - o.alpha)))
    if e.applied:
        ex = ", ".join(f"{name} ({e.games_flagged.get(name, 0)} games)" for name in e.applied)
        excl = (f"Exclusions applied: {ex}; {e.games_before} games before, {e.games_after} analysed. "
                "Flagged games are kept in the data and can be put back with --exclude none.")
    else:
        excl = f"No exclusions applied ({e.games_before} games analysed; flags available: {', '.join(e.available) or 'none'})."
    if a.format == "three-player":
        excl += " The three_previous_ai rule does not apply to three-player games (every game has an AI), so it flags none of them."
    excl += " " + blocked_text(a)
    reg = a.regressions
    if reg.get("mixed") is not None:
        sub = "; ".join(n for n in reg.get("notes", []) if "subsample" in n)
        mixed = ("a binomial generalised linear mixed model fitted by maximum likelihood (Laplace approximation, gpboost) "
                 "with a random intercept and a random games-played slope per interrogator, as Jones & Bergen fit, and a "
                 "games-played × witness-kind term; Wald SEs, p-values and intervals from the ML fit. Its coefficients are "
                 "conditional (for a given interrogator), while the GEE's are marginal (averaged over interrogators) and so "
                 "nearer zero when interrogators differ" + (f" ({sub})" if sub else ""))
    else:
        why = "; ".join(n for n in reg.get("notes", []) if "mixed" in n) or "not fitted"
        mixed = f"no mixed-effects model ({why})"
    gee = ("a GEE cross-check (binomial, exchangeable working correlation, groups = interrogator, robust SEs)"
           if reg.get("gee") is not None else "no GEE (" + ("; ".join(n for n in reg.get("notes", []) if "GEE" in n) or "not fitted") + ")")
    comp = ("No two-sample tests: in three-player games P(S_m) = 1 − P(S_h) (Giunti)."
            if a.format == "three-player" else
            f"Witnesses are compared with exact tests of two independent binomials (Boschloo if small, else Fisher; two-sided), Holm-adjusted. "
            f"Pass criteria: the machine's SR against the human witnesses' SR, two-sided exact (Boschloo) test, which gives the p-value and the decision, and the interval of their ratio.")
    return [
        f"Study “{esc(a.study)}”, {a.format} format: {a.n_games} games with a verdict, {a.n_interrogators} interrogators. "
        f"Significance level α = {o.alpha} ({pct}% intervals). {excl}",
        "Success rates use exact binomial inference (turinglab.stats): the two-tailed exact p-value sums the "
        "probabilities of all outcomes no more probable than the one observed, and Sterne's interval is the set of rates "
        "not rejected at α (shown as pieces if it has gaps). " + comp,
        "Interrogator accuracy: share of correct verdicts per game; d′ with rates smoothed (x+0.5)/(n+1) (Jones & Bergen). "
        "Calibration reads confidence c (0–100) as a stated probability 0.5 + c/200 of being right, and reports the Brier score "
        f"and accuracy within confidence bins. Accuracy against games played and demographics: {mixed}, and {gee}.",
        f"Games are not independent (interrogators play several), so pooled rates also get cluster-bootstrap intervals "
        f"({o.n_boot} resamples of interrogators, seed {o.seed}). " + ipw_text(),
    ]


def _records(df: pd.DataFrame) -> list[dict]:
    return df.to_dict("records") if df is not None and len(df) else []


def tag_summary(a: Analysis) -> list[dict]:
    if a.tags is None or a.tags.empty:
        return []
    from turinglab.analysis.taxonomy import names

    lookup = names()
    correct = a.games.set_index("game_id")["correct"] if a.games is not None else pd.Series(dtype=bool)
    rows = []
    for (tax, cat), g in a.tags.groupby(["taxonomy", "category"]):
        ids = g["game_id"].astype(str).unique()
        acc = correct.reindex(ids).dropna()
        rows.append({"taxonomy": tax, "category": cat, "name": lookup.get((tax, cat), "?"),
                     "games": len(ids), "accuracy": float(acc.mean()) if len(acc) else float("nan")})
    return rows


def reason_sample(a: Analysis, k: int = REASON_SAMPLE) -> list[dict]:
    g = a.games
    if g is None or "reason" not in g:
        return []
    r = g[g["reason"].fillna("").str.strip() != ""]
    if r.empty:
        return []
    r = r.sample(min(k, len(r)), random_state=a.options.seed)
    verdict = np.where(r["judged_human"].astype(bool), "human", "AI")
    if a.format == "three-player":
        verdict = np.where(r["judged_human"].astype(bool), "chose the machine", "chose the human")
    return [{"witness": w, "verdict": v, "reason": t} for w, v, t in zip(r["witness"], verdict, r["reason"])]


def context(a: Analysis) -> dict:
    from turinglab import __version__

    success = _records(a.success)
    for r in success:
        r["interval"] = interval_text(r)
    reg = a.regressions
    reg_tables = []
    if reg.get("mixed") is not None:
        reg_tables.append(("Binomial GLMM, ML (random intercept and games-played slope per interrogator)", _records(reg["mixed"])))
    if reg.get("gee") is not None:
        reg_tables.append(("GEE cross-check (exchangeable, groups = interrogator)", _records(reg["gee"])))
    return {
        "a": a, "version": __version__, "pct": int(round(100 * (1 - a.options.alpha))),
        "methods": methods(a), "success": success, "criteria": _records(a.criteria),
        "comparisons": _records(a.comparisons), "accuracy": _records(a.accuracy),
        "by_index": _records(a.by_index), "calibration": _records(a.calibration),
        "reg": reg, "reg_tables": reg_tables, "bootstrap": _records(a.bootstrap),
        "ipw": _records(a.ipw), "demographics": _records(a.demographics), "ipw_text": ipw_text(), "timing": _records(a.timing),
        "tags": tag_summary(a), "reasons": reason_sample(a), "boschloo_max": tables.BOSCHLOO_MAX_CELLS,
    }


def _env() -> Environment:
    env = Environment(loader=PackageLoader("turinglab.analysis", "templates"),
                      autoescape=select_autoescape(["html", "j2"], default=True))
    env.filters.update({"f1": lambda x: f(x, 1), "f2": lambda x: f(x, 2), "f3": lambda x: f(x, 3), "p": p})
    return env


def figure_html(fig: Figure) -> Markup:
    b64 = base64.b64encode(fig.png).decode()
    return Markup(
        f'<figure><img alt="{escape(fig.title)}" src="data:image/png;base64,{b64}">'
        f"<figcaption><b>{escape(fig.title)}.</b> {escape(fig.caption)}</figcaption></figure>"
    )


def render_html(a: Analysis, figs: list[Figure] | None = None) -> str:
    figs = all_figures(a) if figs is None else figs
    ctx = context(a)
    ctx["figs"] = {fg.name: figure_html(fg) for fg in figs}
    return _env().get_template("report.html.j2").render(**ctx)


MD_SPECIAL = str.maketrans({c: "\\" + c for c in "\\`*_{}[]()|~"})  # user text never starts a line


def md_escape(text) -> str:
    """Untrusted text for Markdown: HTML-escaped, Markdown punctuation backslashed, one line."""
    s = "" if text is None else str(text)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return " ".join(s.translate(MD_SPECIAL).split())


def _md_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render_markdown(a: Analysis, fig_dir_name: str, figs: list[Figure]) -> str:
    c = context(a)
    pct = c["pct"]
    e = md_escape
    parts = [f"# Turing test report: {e(a.study)}",
             f"*{a.format} format · {a.n_games} games · {a.n_interrogators} interrogators · α = {a.options.alpha} · turinglab {c['version']}*",
             "## Methods", *methods(a, md_escape),  # the study name is untrusted text
             "## Success rate per witness",
             _md_table(["witness", "kind", "SR", "n", f"{pct}% interval", "p (vs 50%)", "first-game SR", "n first"],
                       [[e(r["witness"]), r["kind"], f(r["sr"], 2), r["n"], r["interval"], p(r["p_value"]),
                         f(r["sr_first"], 2), r["n_first"]] for r in c["success"]])]
    figmap = {fg.name: fg for fg in figs}

    def fig(name: str) -> str:
        fg = figmap[name]
        return f"![{fg.title}]({fig_dir_name}/{name}.svg)\n\n*{fg.title}.* {fg.caption}"

    parts.append(fig("success_rates"))
    parts.append("## Pass criteria (Giunti)")
    if c["criteria"]:
        parts.append(_md_table(["witness", "machine SR", f"{pct}% interval", "threshold", "p", "decision", "humanness", f"{pct}% interval"],
                               [[e(r["witness"]), f(r["machine_success"]), f"[{f(r['ms_low'])}, {f(r['ms_high'])}]", f(r["threshold"]),
                                 p(r["p_value"]), f"**{r['decision']}**", f(r["humanness"], 2), f"[{f(r['hu_low'], 2)}, {f(r['hu_high'], 2)}]"]
                                for r in c["criteria"]]))
    else:
        parts.append("No criteria (no games to compare against).")
    parts.append("## Comparisons between witnesses")
    if a.format == "three-player":
        parts.append("None: in three-player games P(S_m) = 1 − P(S_h), so two-sample tests do not apply.")
    elif c["comparisons"]:
        parts.append(_md_table(["a", "b", "SR a − SR b", "test", "p", "p (Holm)"],
                               [[e(r["a"]), e(r["b"]), f(r["diff"]), r["method"], p(r["p_value"]), p(r["p_holm"])] for r in c["comparisons"]]))
    parts.append("## Interrogator accuracy")
    parts.append(_md_table(["games", "accuracy", "correct", "n", f"{pct}% interval"],
                           [[r["group"], f(r["rate"]), r["k"], r["n"], f"[{f(r['low'])}, {f(r['high'])}]"] for r in c["accuracy"]]))
    parts.append(f"d′ ({a.dprime['design']}) = {f(a.dprime['pooled'], 2)}")
    parts.append(fig("confusion"))
    parts.append(_md_table(["game number", "accuracy", "n", f"{pct}% interval"],
                           [[r["game_index"], f(r["rate"]), r["n"], f"[{f(r['low'])}, {f(r['high'])}]"] for r in c["by_index"]]))
    parts.append(fig("by_game_index"))
    if c["demographics"]:
        parts.append("### Accuracy by interrogator demographics (descriptive)")
        parts.append(_md_table(["variable", "group", "interrogators", "accuracy", "n", f"{pct}% interval"],
                               [[r["variable"], e(r["group"]), r["interrogators"], f(r["rate"]), r["n"],
                                 f"[{f(r['low'])}, {f(r['high'])}]"] for r in c["demographics"]]))
    parts.append("## Accuracy regressions")
    parts.append(f"Model: `{a.regressions['formula']}`, {a.regressions['n_games']} games.")
    parts += [f"*{n}*" for n in a.regressions.get("notes", [])]
    for title, t in c["reg_tables"]:
        parts.append(f"### {title}")
        parts.append(_md_table(["term", "estimate", "SE", "z", "p", "interval"],
                               [[e(r["term"]), f(r["estimate"]), f(r["se"]), f(r["z"], 2), p(r["p_value"]), f"[{f(r['low'])}, {f(r['high'])}]"] for r in t]))
    parts.append("## Confidence calibration")
    parts.append("Brier score: " + ", ".join(f"{k} {f(v)}" for k, v in a.brier.items()))
    parts.append(fig("calibration"))
    parts.append("## Intervals that respect repeated interrogators")
    parts.append(_md_table(["quantity", "estimate", "n", f"{pct}% interval", "note"],
                           [[e(r["quantity"]), f(r["estimate"]), r["n"], f"[{f(r['low'])}, {f(r['high'])}]",
                             e(r.get("note") or "")] for r in c["bootstrap"]]))
    parts.append("## Correction for adaptive allocation")
    if c["ipw"]:
        parts.append(c["ipw_text"])
        parts.append(_md_table(["witness", "n", "naive SR", "IPW SR", f"{pct}% interval", "note"],
                               [[e(r["witness"]), r["n"], f(r["naive"]), f(r["ipw"]), f"[{f(r['low'])}, {f(r['high'])}]",
                                 e(r.get("note") or "")] for r in c["ipw"]]))
    else:
        parts.append("No game recorded a selection probability, so no correction was made.")
    parts.append("## Timing-leak check")
    parts.append(_md_table(["witness kind", "games", "median length (s)", "median messages"],
                           [[r["kind"], r["n"], f(r["duration_median"], 1), f(r["messages_median"], 1)] for r in c["timing"]]))
    parts.append(fig("game_length"))
    if c["tags"]:
        parts.append("## Strategies and reasons (hand tags)")
        parts.append(_md_table(["taxonomy", "category", "name", "games", "accuracy"],
                               [[r["taxonomy"], e(r["category"]), e(r["name"]), r["games"], f(r["accuracy"], 2)] for r in c["tags"]]))
    if c["reasons"]:
        parts.append("## Reasons given (sample)")
        parts.append(_md_table(["witness", "verdict", "reason"],
                               [[e(r["witness"]), r["verdict"], e(r["reason"])] for r in c["reasons"]]))
    return "\n\n".join(parts) + "\n"


def settings(a: Analysis) -> dict:
    """The methods' settings (what the numbers depend on), as in the export's numbers.json."""
    return {"alpha": a.options.alpha, "exclude": list(a.options.exclude), "n_boot": a.options.n_boot,
            "seed": a.options.seed, "format": a.format, "study": a.study,
            "max_games_mixed": a.options.max_games_mixed, "max_games_gee": a.options.max_games_gee}


def _model_terms(t: pd.DataFrame | None) -> dict | None:
    if t is None:
        return None
    num = lambda v: None if _isnan(v) or not math.isfinite(float(v)) else float(v)  # noqa: E731
    return {"terms": [{"term": str(r["term"]), "estimate": num(r["estimate"]), "se": num(r["se"]),
                       "p": num(r["p_value"])} for r in _records(t)]}


def render_json(a: Analysis) -> str:
    """Every number the report shows, keyed like the export's rebuild numbers (``numbers``), plus
    each regression as {"terms": [{"term", "estimate", "se", "p"}]} and the methods' settings."""
    reg = a.regressions
    doc = {
        "meta": settings(a),
        "methods": methods(a),
        "numbers": a.numbers(),
        "models": {name: _model_terms(reg.get(name)) for name in ("mixed", "gee") if reg.get(name) is not None},
    }
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False)


def write_report(a: Analysis, out: str | Path, fmt: str = "html") -> list[Path]:
    """Write the report (and, for Markdown, its figure files next to it). Returns written paths."""
    out = Path(out)
    if fmt not in ("html", "md", "json"):
        raise ValueError(f"unknown report format {fmt!r}; use html, md or json")
    out.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "json":
        out.write_text(render_json(a), encoding="utf-8")
        return [out]
    figs = all_figures(a)
    if fmt == "html":
        out.write_text(render_html(a, figs), encoding="utf-8")
        return [out]
    fig_dir = out.with_name(out.stem + "_figures")
    paths = save(figs, fig_dir)
    out.write_text(render_markdown(a, fig_dir.name, figs), encoding="utf-8")
    return [out, *paths]


def write_numbers(a: Analysis, path: str | Path) -> Path:
    """Every reported number, keyed, as JSON (what the export's rebuild.py checks)."""
    path = Path(path)
    meta = settings(a)
    path.write_text(json.dumps({"meta": meta, "numbers": a.numbers()}, indent=1, sort_keys=True))
    return path
