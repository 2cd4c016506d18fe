"""The turinglab command line: one Typer app.

Each area owns one section below (marked `# === area ===`); keep commands thin and
put the work in the area's package.
"""

from __future__ import annotations

import sys
from typing import NoReturn

import typer
from rich.console import Console

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Run Turing tests (live imitation games and static tests) and analyse them correctly.",
)
console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line on stderr and exit (2 = bad input)."""
    err_console.print(f"error: {message}", markup=False, highlight=False)
    raise typer.Exit(code)


@app.callback()
def _root() -> None:
    """turinglab."""


@app.command()
def version() -> None:
    """Print the turinglab version."""
    from turinglab import __version__

    console.print(__version__)


# === stats ===


# === chat / witness ===


# === serve ===


@app.command()
def serve(
    study: str = typer.Option(None, "--study", help="Study YAML file (default: two-player, ELIZA + the local model)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8000, "--port", help="Port to listen on."),
    db: str = typer.Option(None, "--db", help="Database URL (default: $DATABASE_URL, else sqlite:///./turinglab.db)."),
) -> None:
    """Run the live imitation game in the browser (participant pages, websockets, /admin)."""
    import uvicorn

    from turinglab.server.defaults import default_study
    from turinglab.store.db import StoreError

    if study:
        from turinglab.game.study_file import StudyFileError, load_study

        try:
            chosen = load_study(study)
        except StudyFileError as exc:
            fail(str(exc))
    else:
        chosen = default_study()
    from turinglab.server.app import create_app

    try:
        web = create_app(chosen, db)
    except StoreError as exc:
        fail(str(exc))
    console.print(f"turinglab: study [bold]{chosen.name}[/bold] ({chosen.format}) on http://{host}:{port}/"
                  f"  (admin: /admin)", highlight=False)
    uvicorn.run(web, host=host, port=port, log_level="info")



# === analysis: report / export / demo-data / tag ===


# === end ===


def main() -> None:  # pragma: no cover - entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
