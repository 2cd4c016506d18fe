"""A pre-registration written from a frozen study (issue 42 item 7), in the sections of OSF's
preregistration template, with a machine-readable JSON block that `turinglab report --prereg`
checks the report against (`prereg_check.py`).

Pure functions: `plan` builds the plan (a dict) from the study config, the analysis settings,
the exact power analysis and the list of analyses the report runs (the caller gets that list by
running the report's own analysis on a synthetic study of this design: analysis/demo/prereg_dry.py);
`render` writes it as Markdown; `read_plan` reads the block back.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from turinglab.analysis.report import rules

FORMAT_VERSION = 1
BLOCK_START = "```json turinglab-prereg"
BLOCK_RE = re.compile(r"^```json turinglab-prereg\n(.*?)\n```$", re.S | re.M)

# the exclusion flags in words (a flag is never a deletion: flagged games stay in the data)
FLAG_RULES = {
    "three_previous_ai": "the interrogator's previous three games were all against AI witnesses",
    "three_previous_ai_interrogated": "the same rule counted over the games the participant interrogated only",
    "knows_witness": "the interrogator says they know the witness personally (flag set by hand or read from the "
                     "verdict's reason)",
    "withdrawn": "a participant of the game withdrew their data",
    "fallback_wrote_reply": "the fallback (not the witness's model) wrote one of the AI witness's replies",
    "bot": "a game played by `turinglab bots` (kept apart: only in the leaderboard)",
}


def planned_sample(*, fmt: str, witnesses: list[str], human_ratio: float, rate: float,
                   threshold: float, target: float, alpha: float, family: str) -> dict[str, Any]:
    """The planned games from the exact power analysis (turinglab.stats.power).

    Each AI witness gets the n from which the exact two-sided test of its success rate against
    `threshold` rejects with probability >= `target` when the true rate is `rate` (`stable_n`: the
    power stays above target from there on). With Holm's family of m decisions the first step is
    at alpha/m, so the plan uses alpha/m; per-witness decisions use alpha."""
    m = max(1, len(witnesses))
    a = alpha / m if family == "holm" and m > 1 else alpha
    from turinglab.stats.power import power

    res = power(rate, vs=threshold, alpha=a, target=target, method="sterne")
    n = res.stable_n or res.first_n
    if n is None:
        raise ValueError(f"the power analysis found no n up to {res.n_max} reaching power {target} for a rate of "
                         f"{rate} against {threshold}; assume a rate further from the threshold")
    ai_games = n * m
    if fmt == "three-player":  # every game has one AI witness and one human
        human = 0
    else:
        human = math.ceil(ai_games * human_ratio / (1 - human_ratio)) if human_ratio < 1 else 0
    return {"assumed_rate": rate, "threshold": threshold, "power": target, "method": "sterne",
            "alpha_per_test": a, "per_witness": int(n), "power_at_n": res.power_at_stable_n or res.power_at_first_n,
            "first_n": res.first_n, "ai_games": int(ai_games), "human_games": int(human),
            "games": int(ai_games + human), "witnesses": list(witnesses)}


def hypotheses(fmt: str, witnesses: list[str], alpha: float, family: str, closed: bool) -> list[dict[str, Any]]:
    """One pass criterion per AI witness (Giunti), with its threshold, α and decision rule; the
    rule's words are the report's own (`rules.criteria_rule`)."""
    pct = int(round(100 * (1 - alpha)))
    rule = rules.criteria_rule(fmt, pct, alpha)
    out = []
    for w in witnesses:
        if fmt == "three-player":
            h = {"criterion": "passes when P(S_m) ≥ 0.5 (absolute criterion, three-player)",
                 "threshold": 0.5, "set": "closed" if closed else "open"}
        elif fmt == "static":
            h = {"criterion": "passes when its judged-human rate P(S_m) ≥ P(S_h), the human items' rate "
                              "(Giunti's two-player criterion); Zhang's band: the rate within 0.45–0.55",
                 "threshold": "P(S_h)"}
        else:
            h = {"criterion": "passes when P(S_m) ≥ P(S_h), the human witnesses' success rate "
                              "(absolute criterion, two-player)", "threshold": "P(S_h)"}
        out.append({"id": f"pass.{w}", "witness": w, **h, "alpha": alpha,
                    "family": family if fmt != "static" else "per-agent", "decision": rule})
    return out


def exclusion_rules(flags: list[str]) -> list[dict[str, str]]:
    return [{"flag": f, "rule": FLAG_RULES.get(f, f"flag {f} (set by the analysis or by hand)")} for f in flags]


def plan(*, kind: str, name: str, version: int, config_hash: str, config: dict[str, Any], fmt: str,
         witnesses: list[str], settings: dict[str, Any], sample: dict[str, Any], exclusions: list[dict[str, Any]],
         analyses: list[dict[str, Any]], closed: bool = True) -> dict[str, Any]:
    """The pre-registration as one JSON-able dict (what the block holds)."""
    if kind not in ("live", "static"):
        raise ValueError(f"kind must be live or static, got {kind!r}")
    family = settings.get("pass_decisions", "holm")
    return {"turinglab_prereg": FORMAT_VERSION, "kind": kind,
            "study": {"name": name, "version": version, "hash": config_hash, "format": fmt},
            "config": config, "settings": settings,
            "hypotheses": hypotheses(fmt, witnesses, settings["alpha"], family, closed),
            "sample": sample, "exclusions": exclusions, "analyses": analyses}


# --- Markdown ---

def _md(text: Any) -> str:
    """Text from the study file (names, codenames) for Markdown: escaped, one line."""
    from turinglab.analysis.report.report import md_escape

    return md_escape(text)


def _sample_lines(p: dict[str, Any]) -> list[str]:
    s, fmt = p["sample"], p["study"]["format"]
    unit = "items per agent" if p["kind"] == "static" else "games per AI witness"
    lines = [f"- Exact power analysis (turinglab.stats.power, two-sided exact test, Sterne): a true success rate of "
             f"{s['assumed_rate']} against the threshold {s['threshold']} at α = {s['alpha_per_test']:.4g} per test "
             f"reaches power {s['power']} from n = {s['per_witness']} {unit} on (exact power there "
             f"{s['power_at_n']:.3f}; it first reaches the target at n = {s['first_n']}).",
             ]
    if p["kind"] == "static":
        lines.append(f"- Planned: {s['per_witness']} judged items per machine agent and as many human items, from "
                     f"at least {s['judges']} judges ({s['items_per_judge']} rated items each).")
    else:
        lines.append(f"- Planned: {s['games']} games with a verdict after exclusions: {s['ai_games']} with an AI "
                     f"witness" + (f" and {s['human_games']} with a human witness" if fmt == "two-player" else
                                   " (every three-player game has one AI and one human witness)") + ".")
    if fmt != "three-player":
        lines.append("- The threshold P(S_h) is itself estimated, and the decision comes from a two-sample test; "
                     "the one-sample power above takes P(S_h) as known, so this n is a lower bound.")
    lines.append("- Stopping rule: recruitment stops when the planned sample is reached (the study's "
                 "`stop_after`, if set, is in the configuration below); a smaller sample is a deviation.")
    return lines


def render(p: dict[str, Any]) -> str:
    """The pre-registration document: OSF's template sections, then the JSON block."""
    st, s = p["study"], p["settings"]
    kind_words = "a static Turing test (Zhang et al.)" if p["kind"] == "static" else f"a live {st['format']} imitation game"
    out = [f"# Pre-registration: {_md(st['name'])} (version {st['version']})", "",
           f"Written by `turinglab preregister` from the frozen study. Study hash (sha256 of its canonical "
           f"configuration): `{st['hash']}`. Any change to the configuration changes the hash; "
           "`turinglab report --prereg` lists every deviation from this document.", "",
           "## Study information", "",
           f"- Design: {kind_words}" + (f", task {_md(st['format'])}" if p["kind"] == "static" else "") + ".",
           "", "### Hypotheses", ""]
    for h in p["hypotheses"]:
        thr = h["threshold"]
        out.append(f"- **{_md(h['id'])}**: {_md(h['witness'])} {h['criterion']}; threshold {thr}, α = {h['alpha']}"
                   + (f", set {h['set']}" if "set" in h else "") + f", family: {h['family']}.")
    if p["hypotheses"]:
        out += ["", "Decision rule (the report's own words): " + p["hypotheses"][0]["decision"]]
    else:
        out.append("- No AI witness in the study: no pass criterion.")
    out += ["", "## Design plan", "",
            f"- Format: {_md(st['format'])}; the full configuration is in the block below (its hash above).",
            "- Blinding: witnesses are relayed through one path and schema; nothing about a witness's identity "
            "reaches the interrogator (or judge) before the verdict." if p["kind"] == "live" else
            "- Blinding: items are shown without their source; truth and agent never reach the judge page.",
            "", "## Sampling plan", "", *_sample_lines(p), "", "## Variables", ""]
    if p["kind"] == "static":
        out.append("- Measured: each judge's answer (human or machine) per item; response time; control answers; "
                   "demographics when asked.")
    else:
        out.append("- Manipulated: the witness (human or one of the AI witnesses: "
                   + ", ".join(_md(w) for w in p["sample"]["witnesses"]) + ").")
        out.append("- Measured: the verdict (judged human or not), its confidence, the reason; messages and their "
                   "timing; the demographic survey.")
    out += ["", "### Exclusions (flags, never deletions)", ""]
    out += [f"- {_md(e['flag'])}: {_md(e['rule'])}" for e in p["exclusions"]] or ["- none"]
    out += ["", "## Analysis plan", "",
            "Settings: " + _md(", ".join(f"{k} = {json.dumps(v)}" for k, v in sorted(s.items()))) + ".", "",
            "The analyses the report runs (read off the report's own analysis of a synthetic study of this design):", ""]
    for a in p["analyses"]:
        extra = "".join(f"; {k}: {_md(v)}" for k, v in a.items() if k not in ("id", "what", "method"))
        out.append(f"- **{_md(a['what'])}** (`{a['id']}`): {_md(a['method'])}{extra}")
    out += ["", "## Other", "",
            "The block below is what `turinglab report --prereg` reads: do not edit it by hand.", "",
            # a backtick in a study's text must not close the fence: JSON's own escape for it
            BLOCK_START, json.dumps(p, indent=1, sort_keys=True, ensure_ascii=False).replace("`", "\\u0060"), "```", ""]
    return "\n".join(out)


def read_plan(path: str | Path) -> dict[str, Any]:
    """The JSON block of a pre-registration written by `render` (ValueError saying what is wrong)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"cannot read the pre-registration {path}: {exc.strerror or exc}") from None
    found = BLOCK_RE.findall(text)
    if len(found) != 1:
        raise ValueError(f"{path} holds {len(found)} turinglab-prereg blocks, expected 1 (a file written by "
                         "`turinglab preregister`)")
    try:
        data = json.loads(found[0])
    except json.JSONDecodeError as exc:
        raise ValueError(f"the turinglab-prereg block of {path} is not valid JSON: {exc}") from None
    missing = [k for k in ("kind", "study", "config", "settings", "hypotheses", "sample", "analyses")
               if k not in data]
    if not isinstance(data, dict) or data.get("turinglab_prereg") != FORMAT_VERSION or missing:
        raise ValueError(f"the turinglab-prereg block of {path} is not a version-{FORMAT_VERSION} plan"
                         + (f" (missing {', '.join(missing)})" if missing else ""))
    return data
