"""`turinglab db` (the schema and the stored games) and `turinglab flag` (exclusion flags by hand)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

import typer

from turinglab.cli.common import DB_HELP, console, db_read_error, err_console, fail, read_store

app = typer.Typer(no_args_is_help=True, help="The database: upgrade the schema, list and inspect stored games.")
flag_app = typer.Typer(no_args_is_help=True, help="Exclusion flags set by hand: logged with the game, kept in exports, never deletions.")

_DB = typer.Option(None, "--db", help=DB_HELP)
_GAME_ID = typer.Argument(..., help="the game id (see `turinglab db games`)")


@contextlib.contextmanager
def _reading(db: str | None) -> Iterator:
    """The store of a command that only reads (see `read_store`); its errors as one line on stderr."""
    from sqlalchemy.exc import OperationalError

    from turinglab.store import StoreError, UnknownId

    try:
        with read_store(db) as store:
            yield store
    except UnknownId as exc:
        fail(f"{exc}; list the stored games with: turinglab db games")
    except StoreError as exc:
        fail(str(exc))
    except OperationalError as exc:
        fail(db_read_error(db, exc))


@app.command("upgrade")
def db_upgrade(db: str | None = _DB) -> None:
    """Create or upgrade the database schema to the latest migration."""
    from sqlalchemy.exc import DatabaseError

    from turinglab.store import StoreError, database_url, migrate

    try:
        url = database_url(db)
        migrate(url)
    except StoreError as exc:
        fail(str(exc))
    except DatabaseError:
        raise  # one line from the root group (e.g. a file that is not SQLite)
    except Exception as exc:  # noqa: BLE001 - other errors: say which database and why
        fail(f"cannot upgrade {db or url}: {type(exc).__name__}: {str(exc).strip().splitlines()[0]}", code=1)
    err_console.print(f"database at head: {database_url(db)}", markup=False, highlight=False)


@app.command("show")
def db_show(
    game_id: str = _GAME_ID,
    db: str | None = _DB,
    as_json: bool = typer.Option(False, "--json", help="print JSON (game, seats, verdict, every event)"),
) -> None:
    """Print a stored game: header (seats, verdict, flags) and every event."""
    import json

    from turinglab.store.inspect import game_json, game_table

    with _reading(db) as store:
        if as_json:
            print(json.dumps(game_json(store, game_id), ensure_ascii=False, indent=2))
            return
        head, table = game_table(store, game_id)
    console.print(head, markup=False, highlight=False)
    console.print(table)


@app.command("games")
def db_games(
    db: str | None = _DB,
    study_id: int | None = typer.Option(None, "--study-id", help="only this study's games"),
) -> None:
    """List the stored games."""
    from turinglab.store.inspect import games_table, games_tsv

    with _reading(db) as store:
        games = store.games(study_id)
    if console.is_terminal:
        console.print(games_table(games))
    else:  # piped or redirected: one tab-separated line per game, cells never folded
        sys.stdout.write(games_tsv(games))


def _flag_command(value: bool, flag_help: str, doc: str):  # noqa: ANN202 - a Typer command
    """`flag set` (value True) or `flag unset` (False): the same arguments, the flag set or cleared by hand."""

    def command(
        game_id: str = _GAME_ID,
        flag: str = typer.Argument(..., help=flag_help),
        reason: str | None = typer.Option(None, "--reason", help="why (kept in the log and the export)"),
        db: str | None = _DB,
    ) -> None:
        from turinglab.store.db import now_ms

        with _reading(db) as store:
            flags = store.flag_game(game_id, flag, value, reason, now_ms())
        shown = ", ".join(sorted(k for k, v in flags.items() if v is True)) or "none"
        err_console.print(f"game {game_id}: {flag} {'set' if value else 'cleared'} by hand (logged); flags now: {shown}",
                          markup=False, highlight=False)

    command.__doc__ = doc
    return command


flag_app.command("set")(_flag_command(
    True, "flag name, e.g. knows_witness (or one of your own: off_topic)",
    "Flag an ended game by hand (an exclusion the report can apply with --exclude FLAG)."))
flag_app.command("unset")(_flag_command(
    False, "flag name, e.g. knows_witness",
    "Clear a flag by hand; this overrides the rule that computes it (e.g. a knows_witness false alarm)."))


@app.command("purge")
def db_purge(yes: bool = typer.Option(False, "--yes", help="erase what is due (without it: a dry run that only "
                                      "prints what it would erase)"),
             db: str | None = _DB) -> None:
    """Apply the studies' `retention` settings: erase raw Prolific ids and redact raw chat that are past
    their time. A dry run unless --yes; safe to run from cron (it erases only what is due)."""
    from turinglab.store.retention import due, purge

    with _reading(db) as store:
        plan = due(store)
        if not plan:
            typer.echo("no study sets retention: nothing to erase")
            return
        verb = "erased" if yes else "would erase"
        for d in plan:
            ids = f"the raw Prolific ids of {len(d.participants)} participant(s) ({d.kept_ids} kept for now; " \
                  f"{d.payment_ids_days} days after their last game)" if d.payment_ids_days is not None else None
            chat = f"the raw chat of {len(d.games)} game(s) by redaction ({d.kept_chat} kept for now; " \
                   f"{d.raw_chat_days} days after the game ended)" if d.raw_chat_days is not None else None
            typer.echo(f"study {d.study}: {verb} " + "; ".join(x for x in (ids, chat) if x))
        if yes:
            n_ids, n_games = purge(store, plan)
            typer.echo(f"done: raw ids of {n_ids} participant(s) erased, chat of {n_games} game(s) redacted")
        else:
            typer.echo("dry run: nothing was erased; run again with --yes to erase it")
