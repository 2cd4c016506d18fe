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

from turinglab.analysis.live import passes, tables
from turinglab.analysis.live.jb import KAPPA_NOTE
from turinglab.analysis.live.core import Analysis
from turinglab.analysis.report.figures import Figure, all_figures, save
from turinglab.analysis.report import belief_report
from turinglab.analysis.pformat import RULE as P_RULE, p_text
from turinglab.analysis.report import rules
from turinglab.analysis.report.prereg_check import block as prereg_block

REASON_SAMPLE = 12


def _isnan(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def f(x, digits: int = 3) -> str:
    return "–" if _isnan(x) else f"{float(x):.{digits}f}"


def p(x) -> str:
    return p_text(x)


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


def language_text(lang: str) -> str:
    """The study's language, as the methods state it (issue 39)."""
    from turinglab.i18n import language_name

    name = f"{language_name(lang)} ({lang})"
    if lang.split("-")[0] == "en":
        return f"Language: {name}: the participant pages and the AI witnesses' chat."
    return (f"Language: {name}: the participant pages were shown in it and the LLM witnesses were told to chat in it; "
            "ELIZA's DOCTOR script is English, so an ELIZA witness answered in English.")


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
        re = reg.get("random_effects") or {}
        inter = " and a games-played × witness-kind term" if "game_index:ai_witness" in reg.get("formula", "") else ""
        sv = re.get("slope_var")
        mixed = ("a binomial generalised linear mixed model fitted by maximum likelihood (Laplace approximation: lme4's deviance, minimised from gpboost's fit) "
                 "with a random intercept and a random games-played slope per interrogator, uncorrelated (their "
                 "correlation is fixed at 0, lme4's (1 + games || interrogator); Jones & Bergen's glmer default "
                 f"estimates it), games played centred at its mean ({f(reg.get('game_index_centre'), 2)})" + inter +
                 "; Wald SEs (the Hessian of the deviance, as lme4's vcov), p-values and intervals from the ML fit. Random-effect variances (logit scale): "
                 f"intercept {f(re.get('intercept_var'))}, slope {f(sv) if sv is not None else 'not fitted'}"
                 + ("; singular fit (a variance at 0)" if re.get("singular") else "") +
                 (f" ({sub})" if sub else ""))
        fb = "; ".join(n for n in reg.get("notes", []) if "undefined SEs" in n)
        if fb:
            mixed += f" ({fb})"
    else:
        why = "; ".join(n for n in reg.get("notes", []) if "mixed" in n) or "not fitted"
        mixed = f"no mixed-effects model ({why})"
    if reg.get("gee") is not None:
        gee = ("Beside it, a GEE (binomial, exchangeable working correlation, groups = interrogator, robust SEs) as a "
               "cross-check. The mixed model's coefficients are conditional (for a given interrogator), the GEE's "
               "marginal (averaged over interrogators), so the GEE's are nearer zero when interrogators differ."
               if reg.get("mixed") is not None else
               "A GEE (binomial, exchangeable working correlation, groups = interrogator, robust SEs) gives marginal "
               "effects (averaged over interrogators).")
    else:
        gee = "No GEE (" + ("; ".join(n for n in reg.get("notes", []) if "GEE" in n) or "not fitted") + ")."
    comp = ("No two-sample tests: in three-player games P(S_m) = 1 − P(S_h) (Giunti). "
            "Pass criteria: the machine's SR against 0.5, the two-sided exact binomial test (Sterne) and the decision "
            "from the Sterne set."
            if a.format == "three-player" else
            "Pass criteria and comparisons between witnesses use one test of two independent binomials "
            f"(turinglab.stats.two_sample_test, two-sided): {tests_used(a)}. In the criteria it gives the p-value and "
            "the decision; the interval of the ratio of SRs is descriptive. Comparisons are Holm-adjusted over their family.")
    comp += " " + family_text(a)
    if a.format == "three-player":
        comp += " " + passes.closed_text(a.criteria, pct, o.alpha, o.closed_criterion)
    return [
        f"Study “{esc(a.study)}”, {a.format} format: {a.n_games} games with a verdict, {a.n_interrogators} interrogators. "
        f"Significance level α = {o.alpha} ({pct}% intervals). {language_text(o.language)} {excl}",
        "Success rates use exact binomial inference (turinglab.stats): the two-tailed exact p-value sums the "
        "probabilities of all outcomes no more probable than the one observed, and Sterne's interval is the set of rates "
        "not rejected at α (shown as pieces if it has gaps). " + comp,
        "Interrogator accuracy: share of correct verdicts per game; " + dprime_words(a.format) + " "
        "Calibration reads confidence c (0–100) as a stated probability 0.5 + c/200 of being right, and reports the Brier score "
        f"and accuracy within confidence bins. Accuracy against games played and demographics: {mixed}. {gee}",
        f"Games are not independent (interrogators play several), so pooled rates also get cluster-bootstrap intervals "
        f"({o.n_boot} resamples of interrogators, seed {o.seed}). " + clustered_words(a) +
        "Adaptive allocation is corrected by inverse-probability weighting (section “Correction for adaptive allocation”). "
        "An AI witness with a capacity limit (games at once, the study file's allocation.capacity) was never given a game "
        "past it, nor while its estimate said it could not answer within its designed delay even alone: the draw was made "
        "among the witnesses that could serve, and the probability of that draw is the one recorded and used for the "
        "weights (or the overflow witness played, or the participant waited; each such game keeps why). "
        f"Games flagged bot are left out of every analysis and shown apart in the leaderboard ({a.extra.get('bot_games', 0)} such games). "
        "Precision: rates, proportions and their intervals to 3 decimals; coefficients, d′, κ, z and ratios to 2; "
        f"{P_RULE}; seconds to 1.",
    ]


def dprime_words(fmt: str) -> str:
    if fmt == "three-player":
        return ("d′ of the two-alternative choice, √2·Z(proportion correct), unsmoothed (no (x+0.5)/(n+1): it is "
                "infinite when every verdict is right or every one wrong).")
    return "d′ = Z(hit rate) − Z(false-alarm rate) with rates smoothed (x+0.5)/(n+1) (Jones & Bergen)."


def clustered_words(a: Analysis) -> str:
    """Which cluster-robust tests the report holds (none is claimed that is not there)."""
    has_crit = "p_cluster" in a.criteria and a.criteria["p_cluster"].notna().any()
    has_comp = "p_cluster" in a.comparisons and a.comparisons["p_cluster"].notna().any()
    what = [w for w, ok in (("each pass decision", has_crit), ("each comparison between witnesses", has_comp)) if ok]
    if not what:
        return "No cluster-robust test could be computed (fewer than two interrogators). "
    return (" and ".join(what).capitalize() + " also gets a cluster-robust test (sandwich standard error over "
            "interrogators, t with G−1 df) beside the exact one. ")


def few_games_text(dp: dict) -> str:
    """The flag on per-interrogator d′ when many interrogators met a witness kind only once or twice."""
    from turinglab.analysis.live.accuracy import FEW_GAMES

    few, n = dp.get("n_few_games", 0), dp.get("n_interrogators", 0)
    if not few:
        return ""
    return (f" Caution: {few} of these {n} interrogators met a witness kind fewer than {FEW_GAMES} times, so their d′ "
            "rests on 1–2 games per class and mostly reflects the (x+0.5)/(n+1) smoothing; read the per-interrogator "
            "mean and median as rough.")


def tests_used(a: Analysis) -> str:
    """Which two-sample test each row got: Boschloo below the cell limit, the score test above it."""
    from turinglab.stats.criteria import BOSCHLOO_MAX_CELLS

    names = list(a.criteria.get("test", pd.Series(dtype=str))) + list(a.comparisons.get("test", pd.Series(dtype=str)))
    n_score = sum(str(t).startswith("score") for t in names)
    text = f"Boschloo's exact unconditional test up to {BOSCHLOO_MAX_CELLS:,} cells (n_a × n_b)"
    if n_score:
        text += (f"; above that, for {n_score} of the {len(names)} rows (named in each table), the score test "
                 "(Miettinen–Nurminen), because Boschloo's would take more than a few seconds")
    return text


def family_text(a: Analysis) -> str:
    m = len(a.criteria)
    companion = (" Each pass decision also gets a cluster-robust companion: the machine's SR against the threshold with "
                 "a sandwich SE over interrogators (t with G−1 df), since the exact tests treat an interrogator's games "
                 "as independent; both are shown.")
    if a.options.pass_decisions == "per-witness":
        return (f"The {m} pass decisions are per-witness confirmatory, as the study file declares (pass_decisions: "
                "per-witness): each is made at α and none is adjusted for the others (Holm-adjusted p shown for "
                "reference)." + companion)
    return (f"The {m} pass decisions form one family, adjusted by {rules.holm_words(m)} (column "
            "“decision (Holm)”)." + companion)


class Numbering:
    """Tables and figures numbered in the order they appear (the same in HTML and Markdown)."""

    def __init__(self, figs: dict | None = None) -> None:
        self.tables, self.figures, self.figs = [], [], figs or {}

    def table(self, title: str) -> str:
        self.tables.append(title)
        return f"Table {len(self.tables)}. {title}"

    def figure(self, fg: Figure) -> str:
        self.figures.append(fg.title)
        return f"Figure {len(self.figures)}. {fg.title}"

    def tab(self, title: str) -> Markup:
        return Markup('<p class="caption">') + escape(self.table(title)) + Markup("</p>")

    def fig(self, name: str) -> Markup:
        fg = self.figs.get(name)
        return figure_html(fg, self.figure(fg)) if fg is not None else Markup("")


def term_label(term: str, a: Analysis) -> str:
    """Regression terms in words, categorical levels with their reference level."""
    from turinglab.analysis.live.jb import VARIABLE_LABELS, group_label

    fixed = {"Intercept": "intercept (reference levels)", "game_index": "game number (per game)",
             "ai_witness": "AI witness (vs human witness)", "age": "age (per year)", "age10": "age (per 10 years)", "age_decades": "age (per 10 years)",
             "chatbot_freq": "chatbot use (per step: never < monthly < weekly < daily)",
             "llm_knowledge": "LLM knowledge (per step: nothing < a little < some < a lot < I research them)"}
    if term in fixed:
        return fixed[term]
    if ":" in term:  # an interaction: its parts in words
        short = {"game_index": "game number", "ai_witness": "AI witness"}
        return " × ".join(short.get(t, term_label(t, a)) for t in term.split(":")) + " (interaction)"
    import re

    m = re.match(r"C\((\w+)(?:,.*)?\)\[T\.(.+)\]$", term) or re.match(r"(\w+)\[T\.(.+)\]$", term)
    if not m:
        return term
    var, level = m.group(1), m.group(2)
    ref = None
    mref = re.search(r"reference=['\"]?([^'\")]+)", term)
    if mref:
        ref = mref.group(1)
    elif a.demographics is not None and len(a.demographics):
        levels = sorted(str(g) for g in a.demographics.loc[a.demographics["variable"] == var, "group"])
        present = set()
        for t in (a.regressions.get("mixed"), a.regressions.get("gee")):
            if t is not None:
                present |= {str(x) for x in t["term"]}
        missing = [lv for lv in levels if not any(x.endswith(f"[T.{lv}]") and var in x for x in present)]
        ref = missing[0] if len(missing) == 1 else None
    name = VARIABLE_LABELS.get(var, var)
    lev = group_label(var, level)
    return f"{name}: {lev} (vs {group_label(var, ref)})" if ref is not None else f"{name}: {lev}"


def missing_kind_notes(a: Analysis) -> list[str]:
    """What cannot be computed because a kind of witness has no games."""
    kinds = set(a.judgements["witness_kind"]) if a.judgements is not None else set()
    notes = []
    if "human" not in kinds:
        notes.append("No games with a human witness: the human witnesses' SR, the two-player pass criteria, "
                     "the AI-vs-human comparisons, d′ and the timing-leak check are undefined and left out.")
    if "ai" not in kinds:
        notes.append("No games with an AI witness: no AI success rates, pass criteria, d′ or timing-leak check.")
    return notes


def _records(df: pd.DataFrame) -> list[dict]:
    return df.to_dict("records") if df is not None and len(df) else []


def tag_summary(a: Analysis) -> list[dict]:
    if a.tags is None or a.tags.empty:
        return []
    from turinglab.analysis.live.taxonomy import names

    from turinglab.analysis.live.taxonomy import tag_accuracy

    lookup = names()
    t = tag_accuracy(a.tags, a.games)
    return [{"taxonomy": r["taxonomy"], "category": r["category"], "name": lookup.get((r["taxonomy"], r["category"]), "?"),
             "games": int(r["games"]), "accuracy": r["accuracy"]} for r in t.to_dict("records")]


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
    roster = {r["witness"]: r for r in _records(a.extra.get("roster"))}
    for r in success:
        r["interval"] = interval_text(r)
        r["type"] = roster.get(r["witness"], {}).get("type", "")
        r["model"] = roster.get(r["witness"], {}).get("model", "")
    for r in roster.values():
        if not r["played"]:  # configured but never played: listed, not dropped
            success.append({"witness": r["witness"], "kind": "ai", "type": r["type"], "model": r["model"], "sr": np.nan,
                            "n": 0, "interval": "no games", "p_value": np.nan, "sr_first": np.nan, "n_first": 0,
                            "low_first": np.nan, "high_first": np.nan})
    reg = a.regressions
    reg_tables = []
    for name, title in (("mixed", "Binomial GLMM, ML (random intercept and games-played slope per interrogator)"),
                        ("gee", "GEE cross-check (exchangeable, groups = interrogator)")):
        if reg.get(name) is not None:
            rows = _records(reg[name])
            for r in rows:
                r["label"] = term_label(str(r["term"]), a)
            reg_tables.append((title, rows))
    return {
        "a": a, "version": __version__, "pct": int(round(100 * (1 - a.options.alpha))),
        "methods": methods(a), "success": success, "criteria": _records(a.criteria),
        "comparisons": _records(a.comparisons), "accuracy": _records(a.accuracy),
        "by_index": _records(a.by_index), "calibration": _records(a.calibration),
        "reg": reg, "reg_tables": reg_tables, "bootstrap": _records(a.bootstrap),
        "ipw": _records(a.ipw), "demographics": _records(a.demographics), "ipw_text": ipw_text(), "timing": _records(a.timing),
        "tags": tag_summary(a), "reasons": reason_sample(a), "boschloo_max": f"{tables.BOSCHLOO_MAX_CELLS:,}",
        "few_games": few_games_text(a.dprime),
        "closed_note": passes.closed_text(a.criteria, int(round(100 * (1 - a.options.alpha))), a.options.alpha,
                                          a.options.closed_criterion)
        if a.format == "three-player" else "",
        "family_text": family_text(a),
        "criteria_rule": rules.criteria_rule(a.format, int(round(100 * (1 - a.options.alpha))), a.options.alpha),
        "comparisons_rule": rules.comparisons_rule(len(a.comparisons)), "comparisons_header": rules.COMPARISONS_HEADER,
        "x": further(a), "missing_notes": missing_kind_notes(a),
    }


def further(a: Analysis) -> dict:
    """The `extra` tables as records for the templates (coded answers with their labels)."""
    from turinglab.analysis.live.jb import VARIABLE_LABELS, group_label

    e = a.extra or {}
    demo = _records(a.demographics)
    for r in demo:
        r["group"] = group_label(r["variable"], r["group"])
        r["variable"] = VARIABLE_LABELS.get(r["variable"], r["variable"])
    reg = e.get("dprime_reg") or {}
    tc = e.get("timing_check") or {}
    timing_rows = [{"quantity": {"duration": "game length (s)", "latency": "median reply latency (s)",
                                 "messages": "messages per conversation"}[k], **v}
                   for k, v in tc.items() if isinstance(v, dict)]
    board = e.get("leaderboard") or {}
    bt = _records(board.get("bradley_terry"))
    for r in bt:
        if r["player"] == "Human":
            r["player"] = "Human witnesses (reference, β = 0)"
    return {
        "by_index_kind": _records(e.get("by_index_kind")), "distribution": _records(e.get("distribution")),
        "demographics": demo, "dprime_reg": _records(reg.get("table")), "dprime_reg_meta": reg,
        "first_criteria": _records(e.get("first_criteria")), "participation": _records(e.get("participation")),
        "length": _records(e.get("length")), "timing_design": tc.get("design", ""), "timing_check": timing_rows,
        "strategy_top": _records(e.get("strategy_top")), "reason_top": _records(e.get("reason_top")),
        "reason_by_verdict": _records(e.get("reason_by_verdict")), "strategy_by_index": _records(e.get("strategy_by_index")),
        "kappa": _records(e.get("kappa")), "board": _records(board.get("table")),
        "bt": bt, "board_notes": board.get("notes", []),
        "bot_games": e.get("bot_games", 0), "kappa_note": KAPPA_NOTE,
    }


def plugin_sections(a: Analysis, fmt: str) -> list[str]:
    """The fragments of the registered report sections ("html" or "md"), in registration order."""
    from turinglab.plugins.manager import report_sections

    return [frag for sec in report_sections().values() if (frag := sec.render(a, fmt))]


def _env() -> Environment:
    env = Environment(loader=PackageLoader("turinglab.analysis.report", "templates"),
                      autoescape=select_autoescape(["html", "j2"], default=True))
    env.filters.update({"f1": lambda x: f(x, 1), "f2": lambda x: f(x, 2), "f3": lambda x: f(x, 3), "p": p})
    return env


def figure_html(fig: Figure, label: str | None = None) -> Markup:
    b64 = base64.b64encode(fig.png).decode()
    label = label or fig.title
    return Markup(
        f'<figure><img alt="{escape(fig.title)}" src="data:image/png;base64,{b64}">'
        f"<figcaption><b>{escape(label)}.</b> {escape(fig.caption)}</figcaption></figure>"
    )


def report_figures(a: Analysis, svg: bool = True) -> list[Figure]:
    """Every figure of the report: the study's and, when it tracked beliefs, the belief section's."""
    return [*all_figures(a, svg=svg), *belief_report.figures(a.beliefs)]  # type: ignore[arg-type]


def render_html(a: Analysis, figs: list[Figure] | None = None) -> str:
    figs = report_figures(a, svg=False) if figs is None else figs
    ctx = context(a)
    num = Numbering({fg.name: fg for fg in figs})
    ctx.update(figs={fg.name: figure_html(fg) for fg in figs}, tab=num.tab, fig=num.fig)
    ctx["prereg"] = Markup(prereg_block(a.prereg, "html"))  # escaped inside; "" without --prereg
    ctx["sections"] = [Markup(s) for s in plugin_sections(a, "html")]  # the blinding audit and plugins' sections
    if a.beliefs is not None:
        ctx["beliefs"] = belief_report.rows(a.beliefs)  # type: ignore[arg-type]
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
    x = c["x"]
    pct = c["pct"]
    e = md_escape
    num = Numbering({fg.name: fg for fg in figs})
    iv = lambda r, lo="low", hi="high", d=3: f"[{f(r[lo], d)}, {f(r[hi], d)}]"  # noqa: E731

    def table(title: str, header: list[str], rows: list[list]) -> str:
        return f"**{num.table(title)}**\n\n" + _md_table(header, rows)

    def fig(name: str) -> str:
        fg = num.figs.get(name)
        if fg is None:
            return ""
        label = num.figure(fg)
        return f"![{fg.title}]({fig_dir_name}/{name}.svg)\n\n*{label}.* {fg.caption}"

    def rates(title, first_col, key, rows):
        return table(title, [first_col, "accuracy", "correct", "n", f"{pct}% interval"],
                     [[e(r[key]), f(r["rate"]), r["k"], r["n"], iv(r)] for r in rows])

    crit_header = ["witness", "machine SR", "n", f"{pct}% interval (SR)", "threshold", "test", "p", "decision", "p (Holm)",
                   "decision (Holm)", "p cluster-robust", "decision cluster-robust", "humanness",
                   f"{pct}% interval (humanness)"]

    def crit_rows(rows):
        return [[e(r["witness"]), f(r["machine_success"]), r["n"], iv(r, "ms_low", "ms_high"), f(r["threshold"]),
                 e(r.get("test", "")), p(r["p_value"]), f"**{r['decision']}**", p(r.get("p_holm")),
                 r.get("decision_family", ""), p(r.get("p_cluster")), r.get("decision_cluster", ""),
                 f(r["humanness"], 2), iv(r, "hu_low", "hu_high", 2)] for r in rows]

    parts = [f"# Turing test report: {e(a.study)}",
             f"*{a.format} format · {a.n_games} games · {a.n_interrogators} interrogators · α = {a.options.alpha} · turinglab {c['version']}*",
             prereg_block(a.prereg, "md", e), *[f"**{n}**" for n in c["missing_notes"]],
             "## Methods", *methods(a, md_escape),  # the study name is untrusted text
             "## Success rate per witness",
             table("Success rate per witness (all games and first games)",
                   ["witness", "kind", "type", "model", "SR", "n", f"{pct}% interval (SR)", "p (SR vs 50%)", "first-game SR",
                    "n first", f"{pct}% interval (first-game SR)"],
                   [[e(r["witness"]), r["kind"], e(r.get("type", "")), e(r.get("model", "")), f(r["sr"]), r["n"], r["interval"],
                     p(r["p_value"]), f(r["sr_first"]), r["n_first"], iv(r, "low_first", "high_first")] for r in c["success"]]),
             "A witness in the study file that was never chosen is listed with n = 0 (“no games”).",
             fig("success_rates"), fig("first_games"), "## Pass criteria (Giunti)"]
    if c["criteria"]:
        parts.append(rules.criteria_rule(a.format, pct, a.options.alpha))
        parts.append(table("Pass criteria, all games", crit_header, crit_rows(c["criteria"])))
        if a.format == "three-player":
            parts.append(passes.closed_text(a.criteria, pct, a.options.alpha, a.options.closed_criterion))
        if x["first_criteria"]:
            parts.append(table("Pass criteria, interrogators' first games only", crit_header, crit_rows(x["first_criteria"])))
    else:
        parts.append("No criteria (no games to compare against).")
    parts.append("## Comparisons between witnesses")
    if a.format == "three-player":
        parts.append("None: in three-player games P(S_m) = 1 − P(S_h), so two-sample tests do not apply.")
    elif c["comparisons"]:
        parts.append(rules.comparisons_rule(len(c["comparisons"])))
        parts.append(table("Comparisons between witnesses: two-sample and cluster-robust tests", rules.COMPARISONS_HEADER,
                           [[e(r["a"]), e(r["b"]), f(r["diff"]), e(r.get("test") or r["method"]), p(r["p_value"]), p(r["p_holm"]),
                             f(r.get("se_cluster")), p(r.get("p_cluster")), p(r.get("p_cluster_holm"))] for r in c["comparisons"]]))
    parts.append("## Interrogator accuracy")
    parts.append(rates("Interrogator accuracy overall and by witness kind", "games", "group", c["accuracy"]))
    dp = a.dprime
    parts.append(f"d′ (2AFC) = {f(dp['pooled'], 2)}." if dp.get("design") == "2AFC" else
                 f"d′ (pooled) = {f(dp['pooled'], 2)}; per interrogator who met both kinds (n = {dp.get('n_interrogators')}): "
                 f"mean {f(dp.get('per_interrogator_mean'), 2)}, median {f(dp.get('per_interrogator_median'), 2)}."
                 + few_games_text(dp))
    parts.append(fig("confusion"))
    parts.append(rates("Accuracy by the interrogator's game number", "game number", "game_index", c["by_index"]))
    parts.append(fig("by_game_index"))
    if x["by_index_kind"]:
        parts.append(table("Accuracy by game number and witness kind",
                           ["witness kind", "game number", "accuracy", "correct", "n", f"{pct}% interval"],
                           [[r["kind"], r["game_index"], f(r["rate"]), r["k"], r["n"], iv(r)] for r in x["by_index_kind"]]))
        parts.append(fig("by_index_kind"))
    if x["distribution"]:
        parts.append("### Participants")
        parts.append(table("Interrogators' demographics", ["variable", "group", "interrogators", "share"],
                           [[r["variable"], e(r["group"]), r["interrogators"], f(r["share"])] for r in x["distribution"]]))
        parts.append(fig("demographics_distribution"))
    if x["participation"]:
        parts.append(table("Participation: games per participant",
                           ["role", "participants", "games", "mean games", "SD", "median", "most", "with 1 game", "with 2–4", "with 5 or more"],
                           [[r["role"], r["participants"], r["games"], f(r["mean"], 2), f(r["sd"], 2), f(r["median"], 1), r["max"],
                             r["one"], r["two_to_four"], r["five_plus"]] for r in x["participation"]]))
    if x["demographics"]:
        parts.append("### Accuracy by interrogator demographics (descriptive)")
        parts.append(table("Accuracy by interrogator demographics",
                           ["variable", "group", "interrogators", "accuracy", "n", f"{pct}% interval"],
                           [[r["variable"], e(r["group"]), r["interrogators"], f(r["rate"]), r["n"], iv(r)] for r in x["demographics"]]))
        parts.append(fig("demographics_accuracy"))
    parts.append("### Per-interrogator d′ against demographics")
    meta = x["dprime_reg_meta"]
    if x["dprime_reg"]:
        refs = " ".join(f"Reference level of {k}: {e(v)}." for k, v in meta.get("references", {}).items())
        parts.append(f"OLS of each interrogator's d′ (n = {meta['n']}, mean {f(meta['mean'], 2)}, SD {f(meta['sd'], 2)}; "
                     f"R² = {f(meta['r2'])}) on demographics (Jones & Bergen appendix F). {refs}")
        parts.append(table("Per-interrogator d′ regressed on demographics", ["term", "estimate", "SE", "p", f"{pct}% interval"],
                           [[e(r["label"]), f(r["estimate"], 2), f(r["se"], 2), p(r["p_value"]), iv(r, d=2)] for r in x["dprime_reg"]]))
        parts.append(fig("dprime_regression"))
    else:
        parts.append(meta.get("note") or "not fitted")
    parts.append("## Accuracy regressions")
    parts.append(f"Model: `{a.regressions['formula']}`, {a.regressions['n_games']} games. Coefficients are log-odds of a correct verdict.")
    parts += [f"*{n}*" for n in a.regressions.get("notes", [])]
    for title, t in c["reg_tables"]:
        parts.append(table(title, ["term", "estimate", "SE", "z", "p", f"{pct}% interval"],
                           [[e(r["label"]), f(r["estimate"], 2), f(r["se"], 2), f(r["z"], 2), p(r["p_value"]), iv(r, d=2)] for r in t]))
    parts.append("## Confidence calibration")
    parts.append("Brier score: " + ", ".join(f"{k} {f(v)}" for k, v in a.brier.items()))
    parts.append(fig("calibration"))
    parts.append(table("Confidence calibration", ["witnesses", "confidence", "n", "stated", "observed", f"{pct}% interval"],
                       [[r["kind"], r["bin"], r["n"], f(r["stated"]), f(r["observed"]), iv(r)] for r in c["calibration"]]))
    parts.append("## Intervals that respect repeated interrogators")
    parts.append(table("Cluster-bootstrap intervals", ["quantity", "estimate", "n", f"{pct}% interval", "note"],
                       [[e(r["quantity"]), f(r["estimate"]), r["n"], iv(r), e(r.get("note") or "")] for r in c["bootstrap"]]))
    parts.append("## Correction for adaptive allocation")
    if c["ipw"]:
        parts.append(c["ipw_text"])
        parts.append(table("Success rates corrected for adaptive allocation (IPW)",
                           ["witness", "n", "naive SR", "IPW SR", f"{pct}% interval", "note"],
                           [[e(r["witness"]), r["n"], f(r["naive"]), f(r["ipw"]), iv(r), e(r.get("note") or "")] for r in c["ipw"]]))
    else:
        parts.append("No game recorded a selection probability, so no correction was made.")
    parts.append("## Game length and the timing-leak check")
    parts.append(table("Game length, messages and words by witness kind",
                       ["witness kind", "conversations" if a.format == "three-player" else "games", "mean length (s)",
                        "SD length (s)", "median length (s)", "mean messages", "SD messages", "mean interrogator words",
                        "mean witness words", "SD witness words"],
                       [[r["kind"], r["n"], f(r["duration_mean"], 1), f(r["duration_sd"], 1), f(r["duration_median"], 1),
                         f(r["messages_mean"], 1), f(r["messages_sd"], 1), f(r["words_interrogator_mean"], 1),
                         f(r["words_witness_mean"], 1), f(r["words_witness_sd"], 1)] for r in x["length"]]))
    parts.append(f"Timing-leak check ({x['timing_design']})" + (
        ": both conversations of a three-player game last equally long, so the AI's and the human's reply latency "
        "and message count are compared within each game." if a.format == "three-player" else
        ": games with an AI and with a human witness compared by length and the witness's median reply latency."))
    parts.append(table("Timing-leak check", ["quantity", "median, AI witness", "median, human witness", "n AI", "n human", "p"],
                       [[r["quantity"], f(r["ai_median"], 1), f(r["human_median"], 1), r["n_ai"], r["n_human"], p(r["p_value"])]
                        for r in x["timing_check"]]))
    parts.append(fig("game_length"))
    parts.append("## Strategies and reasons (hand tags)")
    if c["tags"]:
        if x["kappa"]:
            parts.append(table("Agreement between taggers (Cohen's κ)",
                               ["taxonomy", "level", "taggers", "games both tagged", "raw agreement", "κ", "note"],
                               [[r["taxonomy"], r["level"], e(f"{r['tagger_a']} / {r['tagger_b']}" if r["tagger_b"] else ""),
                                 r["games"], f(r["agreement"]), f(r["kappa"], 2), e(r["note"])] for r in x["kappa"]]))
            parts.append(KAPPA_NOTE)
        for key, word in (("strategy_top", "strategies"), ("reason_top", "reasons")):
            if x[key]:
                parts.append(table(f"Most frequent {word} (share of tagged games)",
                                   ["code", "category", "games", "of tagged", "share", f"{pct}% interval", "mean game number"],
                                   [[e(r["category"]), e(r["name"]), r["k"], r["n"], f(r["rate"]), iv(r),
                                     f(r.get("mean_game_index"), 1)] for r in x[key]]))
        parts += [fig("strategy_top"), fig("reason_top")]
        for key, title, col in (("reason_by_verdict", "Top reasons by verdict and witness kind", "verdict · witness"),
                                ("strategy_by_index", "Top strategies by game number", "game number")):
            if x[key]:
                parts.append(table(title, [col, "code", "category", "games", "of tagged in group", "share", f"{pct}% interval"],
                                   [[e(r["group"]), e(r["category"]), e(r["name"]), r["k"], r["n"], f(r["rate"]), iv(r)] for r in x[key]]))
        parts.append(table("Accuracy in games with each tag", ["taxonomy", "code", "category", "games", "accuracy in those games"],
                           [[r["taxonomy"], e(r["category"]), e(r["name"]), r["games"], f(r["accuracy"])] for r in c["tags"]]))
    else:
        parts.append("No game has been tagged yet.")
    parts.append("## Humanlikeness leaderboard")
    parts.append(f"Judged-human rate per witness and format with exact {pct}% intervals; bot games (flag bot) listed apart"
                 f" and in no other analysis ({x['bot_games']} bot games).")
    parts.append(table("Humanlikeness leaderboard", ["rank", "witness", "kind", "format", "games", "judged human", "n", "rate", f"{pct}% interval"],
                       [[r["rank"], e(r["witness"]), r["kind"], r["format"], "bot" if r["bot"] else "played", r["k"], r["n"],
                         f(r["rate"]), iv(r)] for r in x["board"]]))
    parts.append(fig("leaderboard"))
    if x["bt"]:
        parts.append("Bradley–Terry from three-player games (the witness judged human wins), maximum likelihood, human witnesses "
                     "(pooled) fixed at 0; Wald intervals.")
        parts.append(table("Bradley–Terry strengths against human witnesses",
                           ["witness", "strength β (log-odds vs human)", "SE", f"{pct}% interval (β)", "P(judged human over the human)",
                            f"{pct}% interval (P)", "wins", "comparisons"],
                           [[e(r["player"]), f(r["beta"], 2), f(r["se"], 2), iv(r, d=2), f(r["p_beats_ref"]),
                             iv(r, "p_low", "p_high"), r["wins"], r["comparisons"]] for r in x["bt"]]))
    parts += [f"*{e(n)}.*" for n in x["board_notes"]]
    if c["reasons"]:
        parts.append("## Reasons given (sample)")
        parts.append(table("A sample of the reasons given", ["witness", "verdict", "reason"],
                           [[e(r["witness"]), r["verdict"], e(r["reason"])] for r in c["reasons"]]))
    parts += plugin_sections(a, "md")  # the blinding audit and plugins' sections
    if a.beliefs is not None:
        parts.append(belief_report.markdown(a.beliefs, e))  # type: ignore[arg-type]
        parts += [fig("belief_trajectories"), fig("belief_detection")]
    return "\n\n".join(q for q in parts if q) + "\n"


def settings(a: Analysis) -> dict:
    """The methods' settings (what the numbers depend on), as in the export's numbers.json."""
    return {"alpha": a.options.alpha, "exclude": list(a.options.exclude), "n_boot": a.options.n_boot,
            "seed": a.options.seed, "format": a.format, "study": a.study,
            "max_games_mixed": a.options.max_games_mixed, "max_games_gee": a.options.max_games_gee,
            "pass_decisions": a.options.pass_decisions, "include_bots": a.options.include_bots,
            "closed_criterion": a.options.closed_criterion}


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
        "numbers": {**a.numbers(), **a.extra_numbers()},  # the further analyses' numbers are report-only
        "models": {name: _model_terms(reg.get(name)) for name in ("mixed", "gee") if reg.get(name) is not None},
        **({"prereg": a.prereg} if a.prereg is not None else {}),  # deviations from the pre-registration
    }
    if a.audit is not None:
        doc["blinding_audit"] = a.audit.to_dict()
    if a.beliefs is not None:
        doc["beliefs"] = a.beliefs.records()  # type: ignore[attr-defined]
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
    if fmt == "html":
        out.write_text(render_html(a, report_figures(a, svg=False)), encoding="utf-8")
        return [out]
    figs = report_figures(a)
    fig_dir = out.with_name(out.stem + "_figures")
    paths = save(figs, fig_dir)
    out.write_text(render_markdown(a, fig_dir.name, figs), encoding="utf-8")
    return [out, *paths]


def write_numbers(a: Analysis, path: str | Path) -> Path:
    """Every reported number, keyed, as JSON (what the export's rebuild.py checks)."""
    path = Path(path)
    meta = settings(a)
    path.write_text(json.dumps({"meta": meta, "numbers": {**a.numbers(), **a.extra_numbers()}}, indent=1, sort_keys=True))
    return path
