"""A report checked against its pre-registration (issue 42 item 7): what the report ran, read off
its analysis (`live_analyses`, `static_analyses`: the same functions make the plan's list, from a
synthetic study of the design), and every deviation (`deviations`), shown at the top of the
report in HTML, Markdown and JSON (`block`). Pure functions; no user text is trusted.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from markupsafe import escape


def _formula(text: str) -> str:
    """A model formula without the data's reference levels: C(gender, Treatment(reference='x')) -> gender."""
    return re.sub(r"C\((\w+)(?:,\s*Treatment\(reference=[^)]*\))?\)", r"\1", text or "")


def _tests(values) -> str:  # noqa: ANN001 - a column of test names
    # the test's name only: not the sizes that chose it ("; chosen because ... at 200 x 1000 games")
    names = sorted({re.sub(r",? two-sided$", "", str(t).split(";")[0]) for t in values
                    if t is not None and str(t) not in ("", "nan")})
    return " / ".join(names) or "none"


def live_analyses(a: Any, *, audit: bool | None = None, beliefs: bool | None = None) -> list[dict[str, Any]]:
    """The analyses a live report holds (a: analysis.live.core.Analysis), each {"id", "what",
    "method", ...}: the tests, models and corrections that ran. `audit`/`beliefs` override whether
    the blinding audit and the belief analysis are part of it (the plan's dry run has neither)."""
    o, fmt = a.options, a.format
    out: list[dict[str, Any]] = []

    def add(id_: str, what: str, method: str, **more: Any) -> None:
        out.append({"id": id_, "what": what, "method": method, **more})

    add("success", "Success rate per witness", "exact two-tailed binomial test against 0.5 (Sterne) and Sterne's set")
    if len(a.criteria):
        if fmt == "three-player":
            add("criteria", "Pass criteria (Giunti)", "machine SR against 0.5: exact test and the decision from the "
                "Sterne set", set="closed" if o.closed_criterion else "open", correction=o.pass_decisions)
        else:
            add("criteria", "Pass criteria (Giunti)", "two-sample test of P(S_m) = P(S_h): " + _tests(a.criteria["test"]),
                correction=o.pass_decisions)
        if "p_cluster" in a.criteria and a.criteria["p_cluster"].notna().any():
            add("criteria.cluster", "Cluster-robust companion of each pass decision",
                "SR against the threshold, sandwich SE over interrogators, t with G−1 df")
    if len(a.comparisons):
        add("comparisons", "Comparisons between witnesses", _tests(a.comparisons["test"]), correction="holm")
        if "p_cluster" in a.comparisons and a.comparisons["p_cluster"].notna().any():
            add("comparisons.cluster", "Cluster-robust comparisons", "difference of SRs, sandwich SE over "
                "interrogators, t with G−1 df", correction="holm")
    add("accuracy", "Interrogator accuracy", "exact binomial intervals overall, by witness kind and game number; "
        + ("d′ of the two-alternative choice" if fmt == "three-player" else "d′ with smoothed rates")
        + "; calibration and Brier score")
    reg = a.regressions or {}
    if reg.get("mixed") is not None:
        add("mixed", "Accuracy regression, mixed model", "binomial GLMM, Laplace ML (gpboost), random intercept and "
            "games-played slope per interrogator: " + _formula(reg.get("formula", "")),
            subsample=o.max_games_mixed)
    if reg.get("gee") is not None:
        add("gee", "Accuracy regression, GEE", "binomial GEE, exchangeable, groups = interrogator, robust SEs: "
            + _formula(reg.get("formula", "")), cap=o.max_games_gee)
    ext = a.extra or {}
    dreg = ext.get("dprime_reg") or {}
    if dreg.get("table") is not None and len(dreg["table"]):
        add("dprime_reg", "Per-interrogator d′ against demographics", "OLS of each interrogator's d′ on demographics")
    if a.demographics is not None and len(a.demographics):
        add("demographics", "Accuracy by interrogator demographics", "descriptive, exact binomial intervals")
    board = ext.get("leaderboard") or {}
    if board.get("table") is not None and len(board["table"]):
        add("leaderboard", "Humanlikeness leaderboard", "judged-human rate per witness, exact intervals")
    if board.get("bradley_terry") is not None and len(board["bradley_terry"]):
        add("bradley_terry", "Bradley–Terry strengths", "maximum likelihood, human witnesses fixed at 0, Wald intervals")
    if any(ext.get(k) is not None and len(ext[k]) for k in ("strategy_top", "reason_top")):
        add("tags", "Strategies and reasons (hand tags)", "shares with exact intervals; accuracy in tagged games"
            + ("; Cohen's κ between taggers" if ext.get("kappa") is not None and len(ext["kappa"]) else ""))
    if len(a.bootstrap):
        add("bootstrap", "Cluster-bootstrap intervals", "interrogators resampled", n_boot=o.n_boot, seed=o.seed)
    if len(a.ipw):
        add("ipw", "Correction for adaptive allocation", "inverse-probability weights (Hájek), cluster bootstrap",
            n_boot=o.n_boot, seed=o.seed + 1)
    tc = ext.get("timing_check") or {}
    if tc:
        add("timing", "Timing-leak check", str(tc.get("design", "")))
    if ext.get("first_criteria") is not None and len(ext["first_criteria"]):
        add("first_criteria", "Pass criteria on interrogators' first games", "as the pass criteria")
    if audit if audit is not None else a.audit is not None:
        add("audit", "Blinding audit", "classifiers of witness kind from what the interrogator saw")
    if beliefs if beliefs is not None else a.beliefs is not None:
        add("beliefs", "Belief trajectories and time to detection", "Kaplan–Meier medians, trajectories")
    return out


def static_analyses(a: Any) -> list[dict[str, Any]]:
    """The analyses a static report holds (a: analysis.static.report.StaticAnalysis)."""
    out = [{"id": "confusion", "what": "Confusion matrices", "method": "counts: overall, per agent, per group"},
           {"id": "agents", "what": "Judged-human rate per agent", "method": "exact Clopper-Pearson interval and a "
            "judge-clustered bootstrap interval; Zhang's band 0.45–0.55"}]
    ag = a.agents
    if "giunti_test" in ag and ag["giunti_test"].notna().any():
        out.append({"id": "criteria", "what": "Giunti's two-player criteria per agent",
                    "method": "two-sample test of P(S_m) = P(S_h): " + _tests(ag["giunti_test"]),
                    "correction": "none (per agent)"})
    out.append({"id": "detectability", "what": "Detectability", "method": "balanced accuracy, judge-clustered bootstrap"})
    out.append({"id": "flags", "what": "Judge exclusion flags and sensitivity",
                "method": "results without flagged judges beside all"})
    if getattr(a, "topic", None):
        out.append({"id": "topic", "what": "Zhang's topic-control rule", "method": "results with and without flags"})
    if getattr(a, "failed_controls", None):
        out.append({"id": "failed_controls", "what": "Zhang's control rule", "method": "summaries with and without"})
    return out


def _flat(d: Any, prefix: str = "") -> dict[str, Any]:
    """Nested settings as dotted paths; a list of witnesses by codename (witnesses.ELIZA.timing.base_s)."""
    if isinstance(d, list) and d and all(isinstance(x, dict) and "codename" in x for x in d):
        d = {str(x["codename"]): x for x in d}
    if isinstance(d, dict):
        out: dict[str, Any] = {}
        for k, v in d.items():
            out.update(_flat(v, f"{prefix}.{k}" if prefix else str(k)))
        return out if out or not prefix else {prefix: {}}
    return {prefix: d}


def _dev(kind: str, what: str, planned: Any = None, actual: Any = None) -> dict[str, Any]:
    return {"kind": kind, "what": what, "planned": planned, "actual": actual}


def deviations(plan: dict[str, Any], *, config_hash: str, config: dict[str, Any], settings: dict[str, Any],
               analyses: list[dict[str, Any]], sample: dict[str, Any]) -> list[dict[str, Any]]:
    """Every deviation of a report from its plan: each changed study setting (when the hash differs),
    each changed analysis setting, each missing, extra or changed analysis, and a sample short of
    plan (`sample`: {"games": n, "per_witness": {name: n}}, or for a static study judges and items)."""
    out = []
    if config_hash != plan["study"]["hash"]:
        a, b = _flat(plan["config"]), _flat(config)
        diff = [k for k in sorted(set(a) | set(b)) if a.get(k, "(unset)") != b.get(k, "(unset)")]
        out += [_dev("setting", f"study setting {k}", a.get(k, "(unset)"), b.get(k, "(unset)")) for k in diff]
        if not diff:
            out.append(_dev("setting", "study hash", plan["study"]["hash"], config_hash))
    ps = plan["settings"]
    for k in sorted(set(ps) | set(settings)):
        if ps.get(k) != settings.get(k):
            out.append(_dev("analysis setting", f"analysis setting {k}", ps.get(k), settings.get(k)))
    planned = {x["id"]: x for x in plan["analyses"]}
    ran = {x["id"]: x for x in analyses}
    for k in planned:
        if k not in ran:
            out.append(_dev("missing analysis", f"analysis {k} ({planned[k]['what']}) was not run", planned[k]["method"]))
        elif planned[k] != ran[k]:
            keys = sorted(x for x in set(planned[k]) | set(ran[k]) if planned[k].get(x) != ran[k].get(x))
            out.append(_dev("changed analysis", f"analysis {k} ({planned[k]['what']}): {', '.join(keys)} changed",
                            {x: planned[k].get(x) for x in keys}, {x: ran[k].get(x) for x in keys}))
    out += [_dev("extra analysis", f"analysis {k} ({ran[k]['what']}) was not pre-registered", None, ran[k]["method"])
            for k in ran if k not in planned]
    short = _short(plan, sample)
    if short:
        out.append(_dev("sample", "sample short of plan: " + "; ".join(short),
                        {k: v for k, v in plan["sample"].items() if k in ("games", "per_witness", "judges")}, sample))
    return out


def _short(plan: dict[str, Any], sample: dict[str, Any]) -> list[str]:
    s, out = plan["sample"], []
    if plan["kind"] == "static":
        if sample.get("judges", 0) < s["judges"]:
            out.append(f"{sample.get('judges', 0)} judges, {s['judges']} planned")
        unit = "items"
    else:
        if sample.get("games", 0) < s["games"]:
            out.append(f"{sample.get('games', 0)} games analysed, {s['games']} planned")
        unit = "games"
    for w in s.get("witnesses", []):
        n = sample.get("per_witness", {}).get(w, 0)
        if n < s["per_witness"]:
            out.append(f"{w}: {n} {unit}, {s['per_witness']} planned")
    return out


def _text(v: Any) -> str:
    if isinstance(v, dict):
        return ", ".join(f"{k} {_text(x)}" for k, x in v.items())
    return "–" if v is None else str(v)


HEAD = "Deviations from the pre-registration"


def block(check: dict[str, Any] | None, fmt: str, esc: Callable[[Any], str] = str) -> str:
    """The deviations block at the top of a report ("html" or "md"; `esc`: the Markdown escape),
    or "" when the report was not checked against a pre-registration."""
    if not check:
        return ""
    devs, src = check["deviations"], check["prereg"]
    intro = (f"Checked against the pre-registration {src['file']} (study hash {src['hash'][:12]}…): "
             + (f"{len(devs)} deviation{'s' if len(devs) != 1 else ''}." if devs else "no deviation."))
    rows = [[d["kind"], d["what"], _text(d["planned"]), _text(d["actual"])] for d in devs]
    head = ["kind", "deviation", "pre-registered", "in this report"]
    if fmt == "md":
        lines = [f"## {HEAD}", "", esc(intro)]
        if rows:
            lines += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
            lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
        return "\n".join(lines)
    table = ""
    if rows:
        table = ("<table class=\"deviations\"><tr>" + "".join(f"<th class=\"l\">{escape(h)}</th>" for h in head)
                 + "</tr>" + "".join("<tr>" + "".join(f"<td class=\"l\">{escape(c)}</td>" for c in r) + "</tr>"
                                     for r in rows) + "</table>")
    return f'<h2 id="deviations">{escape(HEAD)}</h2>\n<p>{escape(intro)}</p>\n{table}'


def _result(plan: dict[str, Any], file: str, devs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"prereg": {"file": file, "hash": plan["study"]["hash"], "study": plan["study"]["name"]},
            "deviations": devs}


def _kind(plan: dict[str, Any], kind: str, file: str) -> None:
    if plan.get("kind") != kind:
        raise ValueError(f"{file} pre-registers a {plan.get('kind')} study, but this report is of a {kind} study")


def live_check(plan: dict[str, Any], file: str, a: Any, study: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """The check of a live report (a: Analysis; study: the stored game.config.Study; settings: the
    report's, as analysis/demo/prereg_dry.live_settings gives them)."""
    import json

    from turinglab.game.config import canonical_json, config_hash

    _kind(plan, "live", file)
    sample = {"games": int(a.n_games),
              "per_witness": {str(r["witness"]): int(r["n"]) for r in a.success.to_dict("records") if r["kind"] == "ai"}}
    devs = deviations(plan, config_hash=config_hash(study), config=json.loads(canonical_json(study)),
                      settings=settings, analyses=live_analyses(a), sample=sample)
    return _result(plan, file, devs)


def static_check(plan: dict[str, Any], file: str, a: Any, study: Any, settings: dict[str, Any]) -> dict[str, Any]:
    """The check of a static report (a: StaticAnalysis; study: the stored StaticStudy)."""
    import json

    from turinglab.game.static_config import static_hash

    _kind(plan, "static", file)
    ag = a.agents[a.agents["truth"] == "machine"]
    per = {str(r["agent"]): int(r["n"]) for r in ag.to_dict("records")}
    named = plan["sample"].get("witnesses", [])
    if named == ["each agent"]:  # the plan named no agents: every agent against the plan
        per = {"each agent": min(per.values(), default=0)}
    devs = deviations(plan, config_hash=static_hash(study), config=json.loads(json.dumps(study.model_dump(mode="json"))),
                      settings=settings, analyses=static_analyses(a),
                      sample={"judges": int(a.n_judges), "per_witness": per})
    return _result(plan, file, devs)
