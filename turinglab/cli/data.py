"""`turinglab data`: Zhang et al.'s public data, shipped or fetched from the authors' repository."""

from __future__ import annotations

from pathlib import Path

import typer

from turinglab.cli.common import console, fail

app = typer.Typer(no_args_is_help=True, help="Zhang et al.'s data: list the shipped files, get them or the larger public ones.")


@app.command("list")
def list_() -> None:
    """The data files: shipped with turinglab (a copy is instant) or fetched from the authors' repository."""
    from turinglab.statictests.datafiles import CATALOGUE, SHIPPED_DIR

    for f in CATALOGUE.values():
        where = "shipped" if f.shipped else "fetched"
        size = (SHIPPED_DIR / f.name).stat().st_size if f.shipped else f.chars
        console.print(f"{f.name:44} {where:8} {size:>10,}  {f.what}", markup=False, highlight=False, soft_wrap=True)
    console.print(f"shipped files are in {SHIPPED_DIR} (MIT, see LICENSE there)", markup=False, highlight=False, soft_wrap=True)


@app.command()
def get(
    name: str = typer.Argument(..., help="a name from `turinglab data list`"),
    out: Path = typer.Option(Path("."), "--out", help="the folder to write into (made if missing)"),
    base: str = typer.Option("https://raw.githubusercontent.com", "--base", help="where the repository's raw files are (a mirror)"),
) -> None:
    """Write one data file into --out: a copy of a shipped file, or a download checked against its pin."""
    from turinglab.statictests.datafiles import DataError
    from turinglab.statictests.datafiles import get as fetch

    try:
        dest, note = fetch(name, out, base)
    except DataError as exc:
        fail(str(exc))
    console.print(f"{dest}: {note}", markup=False, highlight=False, soft_wrap=True)
