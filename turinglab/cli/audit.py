"""`turinglab audit blinding`: could the interrogator have told AI from human witnesses without
reading the text? (turinglab/analysis/audit/audit.py)"""

from __future__ import annotations

import typer

from turinglab.cli.common import console, fail

app = typer.Typer(no_args_is_help=True, help="Audits of stored studies.")


@app.command()
def blinding(
    study: str = typer.Option(None, "--study", help="Study id or name (needed when there are several)."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL or ./turinglab.db)."),
    as_json: bool = typer.Option(False, "--json", help="Print every number as one JSON object."),
    alpha: float = typer.Option(0.05, "--alpha", help="Significance level (and 1 - interval level)."),
    permutations: int = typer.Option(200, "--permutations", min=0, help="Permutations of the classifier test (0: none)."),
    boot: int = typer.Option(1000, "--boot", min=100, help="Cluster-bootstrap resamples for the intervals."),
    seed: int = typer.Option(0, "--seed", help="Random seed (folds, bootstrap, permutations)."),
    exclude_bots: bool = typer.Option(False, "--exclude-bots", help="Leave out games flagged bot (kept by default: a pilot with bots is worth auditing)."),
    strict: bool = typer.Option(False, "--strict", help="Exit with status 1 when the blinding leaks."),
    max_games: int = typer.Option(2000, "--max-games", min=0, help="Audit a seeded sample of whole interrogators up to this many games (0: every game)."),
) -> None:
    """From stored games, rebuild what the interrogator's browser received (frame types, times,
    typing indicator, reply delays, error codes; no text) and test whether a classifier grouped by
    interrogator tells AI from human witnesses; text length and typing speed are audited apart."""
    import json

    from turinglab.analysis.audit.audit import audit_blinding
    from turinglab.analysis.audit.audit_text import text_summary
    from turinglab.analysis.live.load import LoadError

    if not 0 < alpha < 1:
        fail(f"--alpha must be between 0 and 1 (e.g. 0.05), got {alpha}")
    try:
        res = audit_blinding(db, study, alpha=alpha, n_boot=boot, n_perm=permutations, seed=seed,
                             include_bots=not exclude_bots, max_games=max_games or None, sample_seed=seed)
    except (LoadError, ValueError) as exc:
        fail(str(exc))
    if as_json:
        print(json.dumps(res.to_dict(), allow_nan=False))
    else:
        console.print(text_summary(res), markup=False, highlight=False, soft_wrap=True)
    if strict and res.leaks:
        raise typer.Exit(1)
