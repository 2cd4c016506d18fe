"""The blinding audit as text: the terminal summary, and the report section (Markdown and the rows
the HTML template shows)."""

from __future__ import annotations

import math

from turinglab.analysis.audit.audit import BlindingAudit, FamilyResult
from turinglab.analysis.pformat import p_text

METHOD = (
    "What the interrogator's browser received before the verdict is rebuilt from the event log (state, ack, "
    "typing, message and error frames: their types, key sets, times, error codes; no text) and turned into "
    "features per witness conversation: reply delays from the question and typing-indicator durations (both at "
    "equal reply length: less a straight line on the reply's characters fitted to all replies, since the designed "
    "delay grows with length), typing-indicator onset, "
    "replies without an indicator, unanswered questions, state frames and when the chat closed, error codes. "
    "A logistic regression and a gradient-boosting classifier, cross-validated with folds grouped by "
    "interrogator, try to tell AI from human witnesses from these features alone. AUROC of the out-of-fold "
    "scores with a cluster-bootstrap interval over interrogators; a permutation test permutes the witness "
    "kinds within interrogators (three-player: within games) and refits (statistic: the larger AUROC). "
    "Per feature: its own AUROC (above 0.5: larger for AI witnesses), the standardised difference and a "
    "permutation p, Holm-adjusted. Text content is audited apart: reply length and apparent typing speed "
    "(characters per second of delay), which the designed delay equalises only at equal length. The audit "
    "covers every stored game of the study with a witness of each known kind, whether or not an exclusion "
    "flag leaves it out of the other analyses: blinding is about what was sent."
)


def _f(x, d: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def _p(x) -> str:
    return p_text(x)


def classifier_lines(r: FamilyResult, pct: int) -> list[str]:
    out = [f"  {c.name}: AUROC {_f(c.auroc)} [{_f(c.low)}, {_f(c.high)}] ({pct}% interval)" for c in r.classifiers]
    out.append(f"  permutation p ({r.classifiers[0].name}, {r.permutations} permutations within interrogators"
               f" or games): {_p(r.p_value)}")
    return out


def feature_rows(r: FamilyResult) -> list[dict]:
    """The per-feature table, leaking features first (then by |AUROC − 0.5|)."""
    t = r.per_feature.copy()
    if t.empty:
        return []
    t["leaks"] = t["feature"].isin(r.leaking)
    t["effect"] = (t["auroc"] - 0.5).abs()
    t = t.sort_values(["leaks", "effect"], ascending=[False, False], kind="stable")
    return t.to_dict("records")


def text_summary(a: BlindingAudit) -> str:
    pct = int(round(100 * (1 - a.alpha)))
    lines = [f"blinding audit of study {a.study} ({a.format}): {a.n_games} games, {a.n_ai} AI and {a.n_human} human "
             f"witness conversations, {a.n_interrogators} interrogators" + (" (bot games included)" if a.bots else ""),
             a.verdict(), "", "what the interrogator's browser received (no text):"]
    lines += classifier_lines(a.channel, pct)
    lines += _features(a.channel)
    lines += ["", "text content, audited apart (reply length, apparent typing speed):"]
    lines += classifier_lines(a.content, pct)
    lines += _features(a.content)
    if a.content.leaking:
        lines.append("  differs: " + ", ".join(a.content.leaking) + " (the text shows these; typing speed "
                     "follows length under the designed delay: at equal length, see the delays above)")
    lines += [f"note: {n}" for n in a.notes]
    return "\n".join(lines)


def _features(r: FamilyResult) -> list[str]:
    out = ["  feature                      AUROC  interval          std.diff  median AI  median human  p (Holm)"]
    for row in feature_rows(r):
        mark = ("  <- leaks" if r.family == "channel" else "  <- differs") if row["leaks"] else ""
        out.append(f"  {row['feature']:28} {_f(row['auroc'], 2):>5}  [{_f(row['low'], 2)}, {_f(row['high'], 2)}]"
                   f"      {_f(row['std_diff'], 2):>6}  {_f(row['median_ai'], 2):>9}  {_f(row['median_human'], 2):>12}"
                   f"  {_p(row['p_holm']):>8}{mark}")
    if r.constant:
        out.append("  the same in every conversation (cannot tell anything): " + ", ".join(r.constant))
    return out


def markdown(a: BlindingAudit, esc=str) -> str:
    """The report's section in Markdown (`esc` escapes the study name)."""
    pct = int(round(100 * (1 - a.alpha)))
    parts = ["## Blinding audit", "", METHOD, "", f"**{esc(a.verdict())}**", ""]
    for title, r in (("What the browser received (no text)", a.channel), ("Text content (audited apart)", a.content)):
        parts.append(f"{title}:")
        parts.append("")
        parts += [f"- {line.strip()}" for line in classifier_lines(r, pct)]
        parts.append("")
        parts.append("| feature | what | AUROC | interval | std. diff | median AI | median human | p (Holm) | |")
        parts.append("|---|---|---|---|---|---|---|---|---|")
        for row in feature_rows(r):
            parts.append(f"| {row['feature']} | {row['what']} | {_f(row['auroc'], 2)} | [{_f(row['low'], 2)}, "
                         f"{_f(row['high'], 2)}] | {_f(row['std_diff'], 2)} | {_f(row['median_ai'], 2)} | "
                         f"{_f(row['median_human'], 2)} | {_p(row['p_holm'])} | {'leaks' if row['leaks'] else ''} |")
        if r.constant:
            parts.append("")
            parts.append("The same in every conversation: " + ", ".join(r.constant) + ".")
        parts.append("")
    parts += [f"Note: {esc(n)}" for n in a.notes]
    return "\n".join(parts)


def html_context(a: BlindingAudit) -> dict:
    """What the report template's blinding-audit section shows (it escapes every string)."""
    pct = int(round(100 * (1 - a.alpha)))

    def fam(title: str, r: FamilyResult) -> dict:
        return {"title": title, "classifiers": [line.strip() for line in classifier_lines(r, pct)],
                "rows": feature_rows(r), "constant": ", ".join(r.constant),
                "mark": "leaks" if r.family == "channel" else "differs"}

    return {"method": METHOD, "verdict": a.verdict(), "leaks": a.leaks, "notes": a.notes,
            "families": [fam("What the interrogator's browser received (no text)", a.channel),
                         fam("Text content, audited apart", a.content)]}
