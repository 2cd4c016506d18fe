"""`turinglab replicate`: what a study file must add to run a Jones & Bergen study as published,
and a study file's every deviation from the preset (the work is in turinglab/game/replicate.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from turinglab.cli.common import console, fail

app = typer.Typer()  # root command


@app.command()
def replicate(
    preset: str = typer.Argument(..., help="jones-bergen-2023 or jones-bergen-2025"),
    check: Path | None = typer.Option(None, "--check", help="a study file to compare with the preset"),
) -> None:
    """What a study file must add to run the published study; with --check, every deviation of a
    study file from the preset (exit status 1 when there is one)."""
    from turinglab.game import replicate as rep
    from turinglab.game.study_file import StudyFileError, load_study

    if preset not in rep.PRESETS:
        fail(f"unknown preset {preset!r}; use one of {', '.join(rep.PRESETS)}")
    console.print(f"To run {preset} as published, a study file (`preset: {preset}`) adds:", markup=False)
    for line in rep.guide(preset):
        console.print(f"  - {line}", markup=False, highlight=False)
    console.print("The preset's settings and the paper's, side by side: docs/protocol.md, \"Presets and the papers\".",
                  markup=False)
    if check is None:
        return
    try:
        study = load_study(check)
    except StudyFileError as exc:
        fail(str(exc).replace("\n", " "))
    found = rep.deviations(preset, study)
    if not found:
        console.print(f"{check}: no deviation from {preset}.", markup=False)
        return
    console.print(f"{check}: {len(found)} deviation(s) from {preset}:", markup=False)
    for line in found:
        console.print(f"  - {line}", markup=False, highlight=False)
    raise typer.Exit(1)
