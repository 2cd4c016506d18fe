"""`turinglab preregister`: a pre-registration written from a frozen study file (issue 42 item 7);
`turinglab report --prereg` checks a report against it (see docs/preregistration.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from turinglab.cli.common import console, fail, read_study

app = typer.Typer()  # root command


@app.command()
def preregister(
    study: str = typer.Option(..., "--study", help="The study file (live or static) to pre-register."),
    out: str = typer.Option(..., "--out", help="Where to write the pre-registration (Markdown, e.g. prereg.md)."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level of the pass criteria."),
    rate: float = typer.Option(0.6, "--rate", help="The machine's success rate the study should detect (power analysis)."),
    threshold: float = typer.Option(0.5, "--threshold", help="The threshold it is told from: 0.5 in three-player "
                                    "games; two-player and static: the assumed human success rate P(S_h)."),
    power: float = typer.Option(0.8, "--power", help="Target power of each pass decision."),
    agents: list[str] = typer.Option(None, "--agent", help="Static studies: a machine agent whose items the study "
                                     "shows (repeatable; the study file does not name them; default: one plan for each agent)."),
    audit: bool = typer.Option(True, "--audit/--no-audit", help="Live studies: the report will include the blinding audit."),
) -> None:
    """Write a pre-registration (OSF template sections) from a study file: its hash, hypotheses,
    planned sample (exact power analysis), exclusions and the analyses the report will run."""
    from turinglab.analysis.demo.prereg_dry import live_plan, static_plan
    from turinglab.analysis.report.prereg import render
    from turinglab.game.static_config import load_if_static
    from turinglab.game.study_file import load_study

    for name, v in (("--alpha", alpha), ("--rate", rate), ("--threshold", threshold), ("--power", power)):
        if not 0 < v < 1:
            fail(f"{name} must be between 0 and 1, got {v}")
    if rate == threshold:
        fail(f"--rate equals --threshold ({rate}): there is no difference to power the study for")
    path = Path(study)
    if not path.is_file():
        fail(f"no study file at {study}")
    static = read_study(load_if_static, path)
    try:
        if static is not None:
            names = [a.strip() for a in agents if a.strip()] or None
            plan = static_plan(static, agents=names, alpha=alpha, rate=rate, threshold=threshold, target=power)
        else:
            if agents:
                fail("--agent is for static studies; a live study's witnesses come from its file")
            plan = live_plan(read_study(load_study, path), alpha=alpha, rate=rate, threshold=threshold,
                             target=power, audit=audit)
    except ValueError as exc:
        fail(str(exc))
    Path(out).write_text(render(plan), encoding="utf-8")
    s = plan["sample"]
    planned = (f"{s['judges']} judges" if plan["kind"] == "static" else f"{s['games']} games") + \
        f", {s['per_witness']} per {'agent' if plan['kind'] == 'static' else 'AI witness'}"
    console.print(f"wrote {out}: study {plan['study']['name']} (hash {plan['study']['hash'][:12]}), "
                  f"{len(plan['hypotheses'])} hypotheses, {planned}, {len(plan['analyses'])} analyses",
                  markup=False, highlight=False, soft_wrap=True)
