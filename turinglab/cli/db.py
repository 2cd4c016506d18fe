"""`turinglab db` (the schema and the stored games) and `turinglab flag` (exclusion flags by hand)."""

from __future__ import annotations

import sys

import typer

from turinglab.cli.common import DB_HELP, console, db_read_error, err_console, fail, read_store


app = typer.Typer(no_args_is_help=True, help="The database: upgrade the schema, list and inspect stored games.")


@app.command("upgrade")
def db_upgrade(db: str | None = typer.Option(None, "--db", help=DB_HELP)) -> None:
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
    game_id: str = typer.Argument(..., help="the game id (see `turinglab db games`)"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    as_json: bool = typer.Option(False, "--json", help="print JSON (game, seats, verdict, every event)"),
) -> None:
    """Print a stored game: header (seats, verdict, flags) and every event."""
    import json

    from sqlalchemy.exc import OperationalError

    from turinglab.store import StoreError, UnknownId
    from turinglab.store.inspect import game_json, game_table

    try:
        with read_store(db) as store:
            if as_json:
                print(json.dumps(game_json(store, game_id), ensure_ascii=False, indent=2))
                return
            head, table = game_table(store, game_id)
    except UnknownId as exc:
        fail(f"{exc}; list the stored games with: turinglab db games")
    except StoreError as exc:
        fail(str(exc))
    except OperationalError as exc:
        fail(db_read_error(db, exc))
    console.print(head, markup=False, highlight=False)
    console.print(table)


@app.command("games")
def db_games(
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
    study_id: int | None = typer.Option(None, "--study-id", help="only this study's games"),
) -> None:
    """List the stored games."""
    from sqlalchemy.exc import OperationalError

    from turinglab.store import StoreError
    from turinglab.store.inspect import games_table, games_tsv

    try:
        with read_store(db) as store:
            games = store.games(study_id)
    except StoreError as exc:
        fail(str(exc))
    except OperationalError as exc:
        fail(db_read_error(db, exc))
    if console.is_terminal:
        console.print(games_table(games))
    else:  # piped or redirected: one tab-separated line per game, cells never folded
        sys.stdout.write(games_tsv(games))


flag_app = typer.Typer(no_args_is_help=True, help="Exclusion flags set by hand: logged with the game, kept in exports, never deletions.")


def _flag(game_id: str, flag: str, value: bool, reason: str | None, db: str | None) -> None:
    from sqlalchemy.exc import OperationalError

    from turinglab.store import StoreError, UnknownId
    from turinglab.store.db import now_ms

    try:
        with read_store(db) as store:
            flags = store.flag_game(game_id, flag, value, reason, now_ms())
    except UnknownId as exc:
        fail(f"{exc}; list the stored games with: turinglab db games")
    except StoreError as exc:
        fail(str(exc))
    except OperationalError as exc:
        fail(db_read_error(db, exc))
    shown = ", ".join(sorted(k for k, v in flags.items() if v is True)) or "none"
    err_console.print(f"game {game_id}: {flag} {'set' if value else 'cleared'} by hand (logged); flags now: {shown}",
                      markup=False, highlight=False)


@flag_app.command("set")
def flag_set(
    game_id: str = typer.Argument(..., help="the game id (see `turinglab db games`)"),
    flag: str = typer.Argument(..., help="flag name, e.g. knows_witness (or one of your own: off_topic)"),
    reason: str | None = typer.Option(None, "--reason", help="why (kept in the log and the export)"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Flag an ended game by hand (an exclusion the report can apply with --exclude FLAG)."""
    _flag(game_id, flag, True, reason, db)


@flag_app.command("unset")
def flag_unset(
    game_id: str = typer.Argument(..., help="the game id (see `turinglab db games`)"),
    flag: str = typer.Argument(..., help="flag name, e.g. knows_witness"),
    reason: str | None = typer.Option(None, "--reason", help="why (kept in the log and the export)"),
    db: str | None = typer.Option(None, "--db", help=DB_HELP),
) -> None:
    """Clear a flag by hand; this overrides the rule that computes it (e.g. a knows_witness false alarm)."""
    _flag(game_id, flag, False, reason, db)
