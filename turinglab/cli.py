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


# === analysis: report / export / demo-data / tag ===


# === end ===


def main() -> None:  # pragma: no cover - entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
