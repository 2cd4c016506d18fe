"""The turinglab command line: the root Typer app, one module per command group.

Keep commands thin and put the work in the area's package. The group modules import only
typer and rich at load; each command imports what it needs when it runs, so a command that
needs no database (`stats binom`) starts fast.
"""

from __future__ import annotations

import sys

import typer
import typer.core

from turinglab.cli import (
    admin, audit, data, db, i18n, judges, participant, plugins, prereg, replicate, report, security, serve, static, stats,
    witness,
)
from turinglab.cli.common import console, err_console, fail

__all__ = ["app", "console", "err_console", "fail", "main"]


class _Group(typer.core.TyperGroup):
    """The root group: a database problem in any command is one line on stderr (exit 2), not a traceback."""

    def invoke(self, ctx):  # noqa: ANN001, ANN201 - click.Context
        try:
            return super().invoke(ctx)
        except Exception as exc:
            # only a command that used the database can raise these: import them only then, so a
            # command that needs no database (`stats binom`) starts fast
            store_db = sys.modules.get("turinglab.store.db")
            sa_exc = sys.modules.get("sqlalchemy.exc")
            if store_db is not None and isinstance(exc, store_db.StoreError):  # bad URL, missing folder, ...
                fail(str(exc))
            if sa_exc is None or not isinstance(exc, sa_exc.DatabaseError):
                raise
            # a file that is not SQLite, a schema that is not there, no server
            orig = getattr(exc, "orig", None) or exc
            first = (str(orig).strip().splitlines() or [type(orig).__name__])[0]
            fail(f"cannot use the database: {first}; is the URL right (--db or $DATABASE_URL), the file a "
                 "turinglab database and its schema current (`turinglab db upgrade`)?")


app = typer.Typer(
    cls=_Group,
    no_args_is_help=True,
    add_completion=False,
    help="Run Turing tests (live imitation games and static tests) and analyse them correctly.",
)


@app.callback()
def _root() -> None:
    """turinglab."""


@app.command()
def version() -> None:
    """Print the turinglab version."""
    from turinglab import __version__

    console.print(__version__)


# the root commands (a Typer added without a name gives its commands to the root), then the groups;
# this order is the order of `turinglab --help`
app.add_typer(witness.chat_app)  # chat
app.add_typer(serve.app)  # serve
app.add_typer(witness.bots_app)  # bots
app.add_typer(report.app)  # report, export, demo-data, tag
app.add_typer(prereg.app)  # preregister
app.add_typer(replicate.app)  # replicate
app.add_typer(plugins.app)  # plugins
app.add_typer(stats.app, name="stats")
app.add_typer(db.app, name="db")
app.add_typer(db.flag_app, name="flag")
app.add_typer(witness.app, name="witness")
app.add_typer(judges.app, name="judges")
app.add_typer(static.app, name="static")
app.add_typer(data.app, name="data")
app.add_typer(security.filter_app, name="filter")
app.add_typer(admin.app, name="admin")  # accounts (security.py) and actions (admin.py)
app.add_typer(participant.app, name="participant")  # withdrawal (issue 38)
app.add_typer(audit.app, name="audit")
app.add_typer(i18n.app, name="i18n")


def main() -> None:  # pragma: no cover - entry point
    app()
